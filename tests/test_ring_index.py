"""The ring index against the full decode (issue 24): with a real daemon and
the demo's hang, `argus hangs` answered from the index (no decode) lists the
demo's hangs as `argus hangs --window 0` (a decode of the whole buffer) does,
and `argus debug --auto` without --pid names the same hang from the index
before it decodes the window around it.  Not timed (bench/first_question.py
measures)."""
import json
import os
import re
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="tracing needs root")


def argus(env, *args, check=True):
    p = subprocess.run([sys.executable, "-m", "argus.cli", *args], env=env, capture_output=True, text=True,
                       timeout=600)
    assert not check or p.returncode == 0, p.stderr
    return p


def test_index_lists_the_demo_hangs_as_the_full_decode(tmp_path):
    import argus as A
    env = dict(os.environ, ARGUS_RUN_DIR=str(tmp_path / "run"), ARGUS_STATE_DIR=str(tmp_path / "state"),
               ARGUS_SESSION_DB=str(tmp_path / "s.db"))
    buf = str(tmp_path / "t.argus")
    argus(env, "start", "--buffer", buf, "--size", "256M")
    try:
        demo = subprocess.run([os.path.join(A.NATIVE_DIR, "argus-demo-hang"), "--requests", "40", "--hang-at", "30",
                               "--hang-ms", "3000", "--interval-ms", "20", "--stuck", "run"],
                              capture_output=True, text=True, timeout=120)
        info = json.loads(demo.stdout.splitlines()[0])
        time.sleep(1.5)
    finally:
        argus(env, "stop", check=False)
    demo_pids = {info["app_pid"], info["daemon_pid"]}

    fast = argus(env, "hangs", "--buffer", buf, "--json")
    assert "listed from the ring index" in fast.stderr          # the index answered: nothing decoded
    full = argus(env, "hangs", "--buffer", buf, "--json", "--window", "0")
    assert "ring index" not in full.stderr

    def demo_hangs(out):
        return sorted((h["pid"], h["tid"], h["block_type"], h["kind"], h["start_ns"], h["end_ns"])
                      for h in json.loads(out)["hangs"] if h["pid"] in demo_pids)

    got, want = demo_hangs(fast.stdout), demo_hangs(full.stdout)
    assert [g[:4] for g in got] == [w[:4] for w in want] and want, (got, want)
    for g, w in zip(got, want):          # the same wait: the records' own timestamps, at most a switch apart
        assert abs(g[4] - w[4]) < 5_000_000 and abs(g[5] - w[5]) < 5_000_000, (got, want)

    # debug names its hang at once, from the index, and explains that one.  On a machine shared with
    # other programs their hangs may rank first (event loops blocked at the buffer's end): then the
    # demo's is among the likely hangs it lists.
    dbg = argus(env, "debug", "--buffer", buf, "--auto", "--json")
    first = [ln for ln in dbg.stderr.splitlines() if ln.startswith("argus: the hang of")]
    assert first, dbg.stderr
    picked = int(re.search(r"the hang of .*?/(\d+) \(thread", first[0]).group(1))
    assert picked == info["app_pid"] or f"demo-app/{info['app_pid']}" in dbg.stderr, dbg.stderr
    report = json.loads(dbg.stdout)
    assert report["spinning"]["pid"] == picked

    # the window around the demo hang decoded focused (tracer/focus.py; forced here, the buffer is
    # not busy enough to need it): the same spinning thread and root causes as a decode of everything
    forced = subprocess.run([sys.executable, "-c", "import sys; from argus.cli import cmd_debug, index_answer, main; "
                             "from argus.diagnose import indexed; rank = indexed.rank; "
                             f"indexed.rank = lambda hs, at=None: [h for h in rank(hs, at) if h.pid == {info['app_pid']}]; "
                             "cmd_debug.FOCUS_MIN_EVENTS = 10; sys.argv = ['argus'] + sys.argv[1:]; main.main()",
                             "debug", "--buffer", buf, "--auto", "--json"], env=env, capture_output=True, text=True,
                            timeout=600)
    assert forced.returncode == 0, forced.stderr
    focused = json.loads(forced.stdout)
    full = json.loads(argus(env, "debug", "--buffer", buf, "--pid", str(info["app_pid"]), "--window", "0", "--auto",
                            "--json").stdout)
    assert any("only the" in n for n in focused["notes"])

    def causes(d):
        return [(c["tid"], c["block_type"], c["depth"]) for c in d["root_causes"]]
    assert focused["spinning"]["tid"] == full["spinning"]["tid"] == info["app_pid"]
    assert causes(focused) == causes(full) and causes(full), (causes(focused), causes(full))
