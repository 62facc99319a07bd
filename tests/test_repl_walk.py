"""The REPL never strands the user (issue 24 item 2), driven through a real
pseudo-terminal on three real traces recorded with a private daemon: the
bundled demo stuck on the CPU (`--stuck run`) and yielding (`--stuck
yield`), and tests/drivers/split_server.py (a weak program-order step).

  - from the spinning vertex, `follow` 10 times takes the walk's steps in
    `path` order and `back` 10 times retraces them; from every step of the
    path (the vertex after the wait, baselines, culprits, slices) `vertex`
    names the next step and `follow` / `back` go there and back: never "no
    incoming causal edge" while `path` shows a step after the cursor;
  - `vertex` shows, for every vertex on the path and every root cause, the
    block type the diagnosis gave it;
  - `export FILE --answers` keeps every answer of the hang's diagnosis
    (typos and retries, a "not causal" answer that makes a rule, the hang
    diagnosed three times, a `diagnose V` of another vertex after), and `argus
    debug --answers FILE` (in the same store, where the rule now exists,
    and in a fresh one) and `--resume` reproduce its JSON exactly (all but
    metrics.mode and the kernel's frame names in profiles) with the same
    answers."""
import json
import os
import sqlite3
import subprocess
import sys

import pytest

pytest.importorskip("pexpect")

from conftest import ArgusRunner, require_tracing  # noqa: E402
from test_repl import Repl, record_demo  # noqa: E402

NO_EDGE = "no incoming causal edge"


def record_split(tmp):
    runner = ArgusRunner(tmp)
    runner.buffer = str(tmp / "split.argus")
    runner.start(size="256M")
    try:
        driver = os.path.join(os.path.dirname(__file__), "drivers", "split_server.py")
        p = subprocess.run([sys.executable, driver, "60", "40", "2"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        runner.wait_drained()
    finally:
        runner.stop()
    return runner, json.loads(p.stdout.splitlines()[0])["client_pid"]


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """name -> (runner, pid of the hung process)."""
    require_tracing()
    tmp = tmp_path_factory.mktemp("walk")
    out = {}
    for stuck in ("run", "yield"):
        runner, info = record_demo(tmp, stuck)
        out[stuck] = (runner, info["app_pid"])
    out["split"] = record_split(tmp_path_factory.mktemp("split"))
    return out


def args_of(runner, pid):
    return ["--buffer", runner.buffer, "--pid", str(pid), "--threshold", "1"]


def report_of(r, path):
    assert "wrote" in r.cmd(f"export {path}")
    return json.loads(path.read_text())


def first_place(path, v):
    return next(i for i, p in enumerate(path) if p["vertex"] == v)


def block_line(i, p):
    """What `vertex` says of path step i's block type."""
    return f"  block type (path step {i}, {p['role']}, over ", f"): {p['block_type']};"


@pytest.mark.parametrize("name", ["run", "yield", "split"])
def test_follow_and_back_from_every_step(traces, tmp_path, name):
    runner, pid = traces[name]
    r = Repl(runner, tmp_path / "s.db", *args_of(runner, pid))
    r.answer_all()
    j = report_of(r, tmp_path / "r.json")
    path = j["path"]
    assert len(path) > 3, path
    # from the spinning vertex: follow 10 times along the path, then back 10 times
    k, moves = 0, 0
    for _ in range(10):
        out = r.cmd("follow")
        if k + 1 < len(path):          # the path goes on: the walk's next step, never stranded
            assert NO_EDGE not in out, (k, out)
            k += 1
            moves += 1
            assert f"the walk's step {k} " in out and f"vertex {path[k]['vertex']}:" in out, (k, out)
            head, tail = block_line(k, path[k])
            assert head in out and tail in out, (k, out)
    for _ in range(10):
        out = r.cmd("back")
        assert NO_EDGE not in out, out
        if moves:
            moves -= 1
            k -= 1
            assert f"vertex {path[k]['vertex']}:" in out, (k, out)
        else:
            assert "already at the start" in out
    assert k == 0
    # from every step the walk took: vertex names the next step; follow goes there, back returns
    for i, p in enumerate(path):
        v = p["vertex"]
        f = first_place(path, v)
        out = r.cmd(f"vertex {v}")
        head, tail = block_line(f, path[f])
        assert head in out and tail in out and "block type over that window" not in out, (i, out)
        if f + 1 >= len(path):
            continue
        assert NO_EDGE not in out, (i, out)
        assert f"the walk's next step (follow): #{f + 1} vertex {path[f + 1]['vertex']}," in out, (i, out)
        out = r.cmd("follow")
        assert NO_EDGE not in out and f"vertex {path[f + 1]['vertex']}:" in out, (i, out)
        out = r.cmd("back")
        assert f"vertex {v}:" in out, (i, out)
    # every root cause: the block type the diagnosis gave it
    for c in j["root_causes"]:
        out = r.cmd(f"vertex {c['vertex']}")
        assert any(line.startswith("  block type (") and line.split("): ", 1)[1].startswith(c["block_type"] + ";")
                   for line in out.splitlines() if "): " in line), (c, out)
    assert r.finish() == 0


def _comparable(j):
    """j without metrics.mode (interactive / replay) and with each profile's
    kernel frames left out: the kernel's and BPF programs' names are read
    from this machine's live /proc/kallsyms when the report is made, and
    BPF programs come and go (other tracers, a stopped daemon) between the
    session and its replay; the samples and every user-space frame stay."""
    j = json.loads(json.dumps(j))
    j["metrics"].pop("mode")
    for c in j["root_causes"]:
        p = c.get("profile")
        if p:
            c["profile"] = {k: v for k, v in p.items() if not isinstance(v, (list, dict))}
            c["profile"]["user"] = sorted((f["function"], f["dso"], f["self"], f["total"]) for f in p["bottom_up"]
                                          if not f["dso"].startswith("["))
    return j


def _same(a, b):
    return _comparable(a) == _comparable(b)


def _debug(runner, db, *args):
    p = subprocess.run([sys.executable, "-m", "argus.cli", "debug", *args],
                       env=dict(runner.env, ARGUS_SESSION_DB=str(db)), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    return json.loads(p.stdout)


def typos_then(answers):
    """Each question answered with a typo first, then answers[kind] (Enter
    when none): the retry is the same question asked again."""
    prompts = []

    def answer(kind):
        prompts.append(kind)
        return "zz" if len(prompts) % 2 else answers.get(kind, "")
    return answer


def second_thoughts():
    """weak: not causal (a rule); go-on: yes, then no."""
    seen = {}

    def answer(kind):
        seen[kind] = seen.get(kind, 0) + 1
        return {"weak": "n", "go_on": "y" if seen[kind] == 1 else "n"}.get(kind, "")
    return answer


@pytest.mark.parametrize("name", ["yield", "split"])
def test_answers_round_trip(traces, tmp_path, name):
    """Every question answered after a typo; a second `diagnose` with Enter
    after one typo; a third answered otherwise (a weak edge not causal: a
    rule; go on, then stop); `diagnose
    V` of a root cause in between; `export --answers` keeps the hang's
    answers and replays to the same JSON in the same store (where the rule
    now exists), in a fresh store, and by --resume."""
    runner, pid = traces[name]
    db = tmp_path / "s.db"
    args = args_of(runner, pid)
    r = Repl(runner, db, *args)
    r.answer_all(typos_then({"weak": "f", "go_on": "y"}))
    first = list(r.questions)
    assert first and len(first) % 2 == 0 and first[::2] == first[1::2], first      # each asked again after its typo
    assert r.text().count("invalid input 'zz'") == len(first) // 2
    again = []
    r.cmd("diagnose", answer=lambda kind: again.append(kind) or ("zz" if len(again) == 1 else ""))
    r.cmd("diagnose", answer=second_thoughts())
    interactive = report_of(r, tmp_path / "r.json")
    r.cmd(f"export {tmp_path / 'a1.json'} --answers")
    other = next(c["vertex"] for c in interactive["root_causes"] if c["vertex"] != interactive["spinning"]["vertex"])
    r.cmd(f"diagnose {other}", answer=lambda kind: "")
    out = r.cmd(f"export {tmp_path / 'a.json'} --answers")
    assert r.finish() == 0
    recorded = json.loads((tmp_path / "a.json").read_text())
    assert recorded == json.loads((tmp_path / "a1.json").read_text())      # diagnose V left them alone
    answers = [(a["kind"], a["answer"]) for a in recorded["answers"]]
    assert answers and len(answers) == interactive["queries"] and f"wrote {len(answers)} answers" in out
    assert len(first) // 2 + len(again) - 1 + len(answers) >= 3, (first, again, answers)   # three diagnoses
    if ("weak", "n") in answers:
        assert len(recorded["rules_made"]) == 1 and interactive["rules_fired"], interactive["rules_fired"]
    assert name != "split" or ("weak", "n") in answers, answers
    con = sqlite3.connect(str(db))
    sid = con.execute("SELECT MAX(id) FROM sessions").fetchone()[0]
    con.close()
    for store in (db, tmp_path / "fresh.db"):           # the rule now exists in db; fresh has none
        replay = _debug(runner, store, *args, "--answers", str(tmp_path / "a.json"), "--json")
        assert replay["metrics"]["mode"] == "replay" and not any("did not fit" in n for n in replay["notes"])
        assert _same(replay, interactive), (store, json.dumps(replay)[:3000], json.dumps(interactive)[:3000])
        con = sqlite3.connect(str(store))
        last = con.execute("SELECT MAX(id) FROM sessions").fetchone()[0]
        rows = con.execute("SELECT kind, answer, source FROM answers WHERE session = ? ORDER BY seq",
                           (last,)).fetchall()
        con.close()
        assert [(k, a) for k, a, _ in rows] == answers and {s for *_, s in rows} == {"replay"}
    resumed = _debug(runner, db, "--resume", str(sid), "--json")
    assert _same(resumed, interactive)
