"""`argus export` and `argus report --html` as a user runs them (a child
`python -m argus.cli` on the golden trace): the files are 0600 and hold the
formats asked for; bad input is one line on stderr and a non-zero exit."""
import json
import os
import pathlib
import stat
import subprocess
import sys

import pytest

GOLDEN = str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus")
PICK = ["--buffer", GOLDEN, "--pid", "11628", "--threshold", "0.03", "--at", "0.05"]


def argus(tmp_path, *args):
    env = dict(os.environ, ARGUS_RUN_DIR=str(tmp_path / "run"), ARGUS_STATE_DIR=str(tmp_path / "state"),
               ARGUS_SESSION_DB=str(tmp_path / "sessions.db"))       # no user's rules, no session left behind
    return subprocess.run([sys.executable, "-m", "argus.cli", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def one_line(p):
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("argus: "), p.stderr
    return lines[0]


def test_every_format_is_written_0600(tmp_path):
    out = {k: tmp_path / f"d.{k}" for k in ("pftrace", "json", "dot", "svg", "html")}
    os.umask(0o022)
    p = argus(tmp_path, "export", *PICK, "--perfetto", str(out["pftrace"]), "--chrome-json", str(out["json"]),
              "--dot", str(out["dot"]), "--svg", str(out["svg"]))
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and "exported the diagnosis" in p.stderr
    p = argus(tmp_path, "report", "--html", str(out["html"]), *PICK)
    assert p.returncode == 0, p.stderr
    for path in out.values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    assert json.loads(out["json"].read_text())["traceEvents"]
    assert out["dot"].read_text().startswith("digraph")
    assert "<svg" in out["svg"].read_text()
    assert out["html"].read_text().startswith("<!DOCTYPE html>")
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    t = pb.Trace()
    t.ParseFromString(out["pftrace"].read_bytes())
    assert any(p.HasField("track_descriptor") and p.track_descriptor.thread.tid == 11628 for p in t.packet)
    assert not list(tmp_path.glob(".*.tmp"))            # no temporary file left behind


@pytest.mark.parametrize("case", ["no-output", "missing-dir", "is-dir", "no-trace", "bad-trace", "no-hang"])
def test_bad_input_is_one_line(tmp_path, case):
    junk = tmp_path / "junk.argus"
    junk.write_bytes(b"not a trace" * 100)
    junk.chmod(0o600)
    args = {
        "no-output": ["export", *PICK],
        "missing-dir": ["export", *PICK, "--perfetto", str(tmp_path / "nope" / "x.pftrace")],
        "is-dir": ["report", "--html", str(tmp_path), *PICK],
        "no-trace": ["export", "--buffer", str(tmp_path / "missing.argus"), "--dot", str(tmp_path / "x.dot")],
        "bad-trace": ["report", "--html", str(tmp_path / "x.html"), "--buffer", str(junk)],
        "no-hang": ["export", "--buffer", GOLDEN, "--pid", "11628", "--threshold", "60", "--svg",
                    str(tmp_path / "x.svg")],
    }[case]
    line = one_line(argus(tmp_path, *args))
    assert not (tmp_path / "x.dot").exists() and not (tmp_path / "x.html").exists()
    if case == "no-output":
        assert "--perfetto" in line
