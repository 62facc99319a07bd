import io
import itertools

from rich.console import Console

from argus.cli import progress as P


def run(monkeypatch, durations, fail=False, terminal=False):
    clock = itertools.chain(durations, itertools.repeat(durations[-1]))   # rich's own thread may read it too
    monkeypatch.setattr(P.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    p = P.Progress(Console(file=out, force_terminal=terminal, width=200))
    p.stage("decoding x")
    p.finished("decoded", 3_000_000)
    p.stage("building")
    p.finished("built a graph of", 3_000_000)
    p.close(summary=not fail)
    return out.getvalue()


def test_off_a_terminal_one_line_per_stage_after_a_second(monkeypatch):
    # t0=0, decode 0..1.5, build 1.5..2.0, close at 2.0
    text = run(monkeypatch, [0.0, 0.0, 1.5, 1.5, 2.0, 2.0, 2.0])
    assert text.splitlines() == ["argus: decoded 3.0M events in 1.5 s (2.0M events/s)",
                                 "argus: built a graph of 3.0M events in 0.5 s (6.0M events/s)"]
    # quick first stage, slow second: both lines
    text = run(monkeypatch, [0.0, 0.0, 0.2, 0.2, 1.7, 1.7, 1.7])
    assert text.splitlines() == ["argus: decoded 3.0M events in 0.2 s (15.0M events/s)",
                                 "argus: built a graph of 3.0M events in 1.5 s (2.0M events/s)"]
    assert run(monkeypatch, [0.0, 0.0, 0.2, 0.2, 0.4, 0.4]) == ""          # quick: quiet
    assert run(monkeypatch, [0.0, 0.0, 1.5, 1.5, 2.0, 2.0], fail=True) == ""   # a failure: its one line only


def test_terminal_shows_the_stage(monkeypatch):
    text = run(monkeypatch, [0.0, 0.1], terminal=True)
    assert "decoding x" in text or "building" in text


def test_terminal_summary_is_one_line(monkeypatch):
    import re
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", run(monkeypatch, [0.0, 0.0, 1.5, 1.5, 2.0, 2.0, 2.0], terminal=True))
    assert text.count("argus:") == 1 and ("argus: decoded 3.0M events in 1.5 s (2.0M events/s), "
                                          "built a graph of 3.0M events in 0.5 s (6.0M events/s)") in text
