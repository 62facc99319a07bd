"""One answer per question, on real recorded traces (issue 15 items 5, 6, 10, 11).

  - rules apply in every mode: `--auto`, `--json` and the REPL answered
    with Enter everywhere walk the same path to the same root causes on the
    same buffer with the same rules, over the demo hang in its three modes;
    each report lists the rules that fired; `argus rules list|rm`,
    `--no-rules`, and the build-id scope read from the demo's executable;
  - a typo at a question is answered "invalid input" and asked again;
  - a spinning thread single-stepped by a real tracer (ptrace) while traced
    stays LongRunning;
  - user stacks recorded by the tracer reach `argus debug`: `stack` shows
    them and a RepeatedYield's bp_watch line names IMAGE and SYMBOL.
"""
import json
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import ArgusRunner, native, require_tracing
from support.programs import program
from test_repl import Repl, record_demo

pytest.importorskip("pexpect")

MODES = ("run", "sleep", "yield")


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    require_tracing()
    tmp = tmp_path_factory.mktemp("trust")
    return {k: record_demo(tmp, k) for k in MODES}


def debug(runner, db, *args):
    p = subprocess.run([sys.executable, "-m", "argus.cli", *args], env=dict(runner.env, ARGUS_SESSION_DB=str(db)),
                       capture_output=True, text=True, timeout=300)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def demo_args(runner, info):
    return ["--buffer", runner.buffer, "--pid", str(info["app_pid"]), "--threshold", "1"]


def helper_rule(db):
    """The rule a user makes by marking the helper's wakeup of the daemon
    (a mutex handed over) not causal, as `not-causal` in the REPL does."""
    from argus.cli.session import Store
    st = Store(str(db))
    try:
        return st.add_rule({"kind": "not_causal", "value": None, "scope": {},
                            "key": {"src_process": "demo-daemon", "src_thread": "demo-helper",
                                    "dst_process": "demo-daemon", "dst_thread": "demo-daemon",
                                    "edge_type": "wakeup", "wait": "futex"}})
    finally:
        st.close()


def chain(j):
    return [(p["vertex"], p["role"], p["depth"]) for p in j["path"]], j["root_causes"]


@pytest.mark.parametrize("mode", MODES)
def test_auto_json_and_enter_everywhere_agree_with_the_same_rules(demos, tmp_path, mode):
    runner, info = demos[mode]
    db = tmp_path / "sessions.db"
    rid = helper_rule(db)
    args = ["debug", *demo_args(runner, info)]
    auto = json.loads(debug(runner, db, *args, "--auto", "--json").stdout)
    plain = json.loads(debug(runner, db, *args, "--json").stdout)
    r = Repl(runner, db, *demo_args(runner, info))
    r.answer_all()
    report = tmp_path / "interactive.json"
    r.cmd(f"export {report}")
    path_out = r.cmd("path")
    text = r.text()
    assert r.finish() == 0
    inter = json.loads(report.read_text())
    assert chain(auto) == chain(plain) == chain(inter)
    # the rule decided something, every report says so, and the counts agree
    assert auto["rules_fired"] and auto["rules_fired"] == plain["rules_fired"] == inter["rules_fired"]
    assert {f["id"] for f in auto["rules_fired"]} == {rid}
    for j in (auto, plain, inter):
        assert j["metrics"]["saved_by_rules"] == len(j["rules_fired"])
        assert j["metrics"]["auto_path_len"] == len(auto["path"])
    # the REPL showed the rule firing, with how to undo it, and `path` lists it
    assert f"rule {rid} applies" in text and f"argus rules rm {rid}" in text
    assert f"rule {rid} applied" in path_out
    assert f"argus rules rm {rid}" in debug(runner, db, *args, "--auto").stdout
    # without rules the walk goes on through the helper's wakeup
    free = json.loads(debug(runner, db, *args, "--auto", "--json", "--no-rules").stdout)
    assert free["rules_fired"] == [] and len(free["path"]) > len(auto["path"])


def test_rules_list_rm_and_build_id_scope(demos, tmp_path):
    from argus.diagnose.rules import elf_build_id
    runner, info = demos["run"]
    db = tmp_path / "sessions.db"
    r = Repl(runner, db, *demo_args(runner, info))
    r.answer_all()
    out = r.cmd("flag --image argus-demo-hang --symbol release_flag")     # on the cursor: the demo app
    assert "undo: argus rules rm" in out, out
    assert r.finish() == 0
    (rule,) = json.loads(debug(runner, db, "rules", "list", "--json").stdout)["rules"]
    assert rule["kind"] == "data_flag" and rule["key"]["process"] == "demo-app"
    # scoped to the build of the demo's executable (read from the trace's mappings)
    want = elf_build_id(native("argus-demo-hang"))
    assert want and rule["scope"] == {"build_id": want}
    text = debug(runner, db, "rules", "list").stdout
    assert f"{rule['id']:>4}  data_flag" in text and "release_flag" in text and want[:12] in text
    bad = debug(runner, db, "rules", "rm", "999")
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "no rule 999" in bad.stderr
    assert debug(runner, db, "rules", "list", "--json").stdout.count('"id"') == 1
    assert debug(runner, db, "rules", "rm", str(rule["id"])).returncode == 0
    assert json.loads(debug(runner, db, "rules", "list", "--json").stdout)["rules"] == []


def test_typo_is_asked_again_and_the_walk_goes_on(demos, tmp_path):
    runner, info = demos["run"]
    db = tmp_path / "sessions.db"
    r = Repl(runner, db, *demo_args(runner, info))
    typed = []

    def answer(kind):
        typed.append("maybe" if len(typed) % 2 == 0 else "")
        return typed[-1]
    r.answer_all(answer)
    report = tmp_path / "typo.json"
    r.cmd(f"export {report}")
    text = r.text()
    assert r.finish() == 0
    assert len(r.questions) >= 2 and text.count("invalid input 'maybe'") == len(r.questions) // 2
    auto = json.loads(debug(runner, tmp_path / "other.db", "debug", *demo_args(runner, info), "--auto",
                            "--json").stdout)
    assert chain(json.loads(report.read_text())) == chain(auto)


def test_stack_shows_the_recorded_frames(demos, tmp_path):
    runner, info = demos["sleep"]
    r = Repl(runner, tmp_path / "sessions.db", *demo_args(runner, info))
    r.answer_all()
    out = r.cmd("stack")
    assert "no call stacks" not in out and re.search(r"^#0 +\S*read", out, re.M), out
    assert r.finish() == 0


def record(tmp_path_factory, name, argv, size="256M"):
    """(runner, the program's first output line as JSON): argv run to its end
    under a private daemon."""
    require_tracing()
    runner = ArgusRunner(tmp_path_factory.mktemp(name))
    runner.start(size=size)
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        runner.wait_drained()
    finally:
        runner.stop()
    return runner, json.loads(p.stdout.splitlines()[0])


@pytest.fixture(scope="module")
def flag_poller(tmp_path_factory):
    """argus-flag-handshake: the main thread polls a global flag with
    sched_yield + usleep(1 ms) for 3 s (a RepeatedYield with user stacks)."""
    return record(tmp_path_factory, "flag", [program("argus-flag-handshake"), "200", "3000", "300"])


def test_repeated_yield_advice_names_image_and_symbol_from_the_stack(flag_poller, tmp_path):
    runner, info = flag_poller
    j = json.loads(debug(runner, tmp_path / "s.db", "debug", "--buffer", runner.buffer, "--pid", str(info["pid"]),
                         "--threshold", "1", "--auto", "--json").stdout)
    (rc,) = [c for c in j["root_causes"] if c["primary"]]
    assert (rc["tid"], rc["block_type"]) == (info["main_tid"], "RepeatedYield")
    assert rc["advice"] == f"bp_watch {info['pid']} argus-flag-handshake handshake_flag", rc
    assert "loop stack" in rc["why"] and "handshake_wait" in rc["why"]


@pytest.fixture(scope="module")
def stepped(tmp_path_factory):
    """The demo hang with its helper spinning (LongRunning), single-stepped
    by a real tracer (argus-ptrace-step: PTRACE_SINGLESTEP) for 2 s of it."""
    require_tracing()
    tmp = tmp_path_factory.mktemp("stepped")
    runner = ArgusRunner(tmp)
    runner.start(size="1G")
    try:
        demo = subprocess.Popen([native("argus-demo-hang"), "--requests", "40", "--hang-at", "30", "--hang-ms",
                                 "4000", "--interval-ms", "20", "--stuck", "run"], stdout=subprocess.PIPE, text=True)
        info = json.loads(demo.stdout.readline())
        time.sleep(1.2)                      # 30 requests 20 ms apart: the helper spins by now
        st = subprocess.run([program("argus-ptrace-step"), str(info["helper_tid"]), "2000"], capture_output=True,
                            text=True, timeout=60)
        assert st.returncode == 0, st.stderr
        demo.stdout.read()
        assert demo.wait(timeout=60) == 0
        runner.wait_drained()
    finally:
        runner.stop()
    return runner, info, json.loads(st.stdout)


def test_single_stepped_spinner_stays_long_running(stepped, tmp_path):
    runner, info, steps = stepped
    assert steps["steps"] > 1000
    ev = runner.run("events", "--buffer", runner.buffer, "--tid", str(info["helper_tid"])).stdout
    assert ev.count("state=traced") >= steps["steps"] // 2      # the tracer's stops are recorded as such
    j = json.loads(debug(runner, tmp_path / "s.db", "debug", *demo_args(runner, info), "--auto", "--json").stdout)
    helper = [c for c in j["root_causes"] if c["tid"] == info["helper_tid"]]
    assert helper and all(c["block_type"] == "LongRunning" for c in helper), j["root_causes"]
    assert helper[0]["primary"] and helper[0]["evidence"]["stopped_ns"] > 500_000_000


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """tests/drivers/split_server.py: the server's request handling starts at
    an event_loop split, so the walk from the client's hang crosses a weak
    program-order edge."""
    driver = os.path.join(os.path.dirname(__file__), "drivers", "split_server.py")
    return record(tmp_path_factory, "split", [sys.executable, driver, "60", "40", "2"])


def test_weak_split_edge_is_asked_and_follow_takes_it(split, tmp_path):
    runner, info = split
    db = tmp_path / "sessions.db"
    args = ["--buffer", runner.buffer, "--pid", str(info["client_pid"]), "--threshold", "1"]
    auto = json.loads(debug(runner, db, "debug", *args, "--auto", "--json").stdout)
    # the first weak program-order step (a slice's first step is a strong pseudo one: the
    # hang's own wake-up path starts at the vertex after the wait)
    steps = [i for i, p in enumerate(auto["path"]) if (p["edge_in"] or {}).get("type") == "program_order"
             and p["edge_in"]["weak"]]
    assert steps, auto["path"]
    k = steps[0]
    # the REPL asks about it (a weak question naming the split); Enter follows it, as --auto does
    r = Repl(runner, db, *args)
    r.answer_all()
    text = r.text()
    assert "weak" in r.questions and "weak program-order edge (the event_loop heuristic" in text
    report = tmp_path / "r.json"
    r.cmd(f"export {report}")
    assert chain(json.loads(report.read_text())) == chain(auto)
    # follow offers the edge the walk took: from the vertex after the split to the one before it
    listing = r.cmd(f"vertex {auto['path'][k - 1]['vertex']}")
    assert "program_order (weak)" in listing and "no incoming causal edge" not in listing, listing
    out = r.cmd("follow")
    assert f"vertex {auto['path'][k]['vertex']}:" in out, out
    # "s" stops the walk there
    r.cmd("diagnose", answer=lambda kind: "s" if kind == "weak" else "")
    stopped = tmp_path / "s.json"
    r.cmd(f"export {stopped}")
    assert r.finish() == 0
    j = json.loads(stopped.read_text())
    assert [p["vertex"] for p in j["path"]][:k] == [p["vertex"] for p in auto["path"]][:k]
    assert auto["path"][k]["vertex"] not in [p["vertex"] for p in j["path"][:k + 1]]
