"""The flight recorder (issue 12 items 1-2, docs/flight-recorder.md).

A real daemon traces into a 64 MiB buffer with the hang detector on.  The
bundled demo hang (an event loop blocked 3 s on a synchronous request) is
recorded as a snapshot; then a load overwrites the whole buffer several
times.  `argus hangs --recorded` still lists the hang, and `argus debug
--snapshot ID --auto --json` names the root cause a diagnosis of the ring
named before the wrap.  Bad ids and damaged snapshots: one line, exit != 0.
"""
import json
import os
import stat
import subprocess
import sys
import time

from conftest import no_traceback, require_tracing, run_demo
from test_names_after_wrap import _wrap


def _recorded(argus_cli, pid, timeout=30):
    """The snapshot of pid's hang, once the daemon has written it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snaps = argus_cli.json("hangs", "--recorded", "--json")["snapshots"]
        mine = [s for s in snaps if s.get("pid") == pid]
        if mine:
            return mine, snaps
        time.sleep(0.5)
    raise AssertionError(f"no snapshot of pid {pid}: {argus_cli.run('hangs', '--recorded').stdout}")


def _causes(report):
    return {(c["pid"], c["tid"], c["block_type"]) for c in report["root_causes"]}


def test_hang_survives_the_wrap_in_a_snapshot(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    info, rc = run_demo("--requests", "40", "--hang-at", "30", "--hang-ms", "3000", "--interval-ms", "20",
                        "--stuck", "sleep")
    assert rc == 0
    argus_cli.wait_drained()
    # the diagnosis taken before the wrap (this machine's background fills 64 MiB in tens of seconds)
    before = argus_cli.json("debug", "--buffer", argus_cli.buffer, "--pid", str(info["app_pid"]), "--auto",
                            "--json")
    assert before["spinning"]["tid"] == info["app_tid"]
    assert (info["daemon_pid"], info["helper_tid"], "LongWait") in _causes(before)

    mine, _ = _recorded(argus_cli, info["app_pid"])
    assert len(mine) == 1, mine
    snap = mine[0]
    assert snap["tid"] == info["app_tid"] and snap["process"] == "demo-app" and not snap["ongoing"]
    assert snap["block_type_guess"] == "LongWait" and snap["wait_reason"] == "read"
    # the detector's hang is the demo's: about 3 s, and it was only opened past the threshold
    assert 2_500_000_000 <= snap["dur_ns"] <= 4_000_000_000
    assert abs(snap["start_ns"] - before["spinning"]["start_ns"]) < 100_000_000
    path = snap["path"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path[:-len(".argus")] + ".json").st_mode) == 0o600

    st = _wrap(argus_cli, 3)
    assert st["overwritten"] > 0
    gone = argus_cli.run("debug", "--buffer", argus_cli.buffer, "--pid", str(info["app_pid"]), "--auto",
                         "--json", check=False)
    assert gone.returncode != 0, "the ring still holds the hang: the load did not wrap it"

    listed = argus_cli.run("hangs", "--recorded").stdout
    assert snap["id"] in listed and "demo-app" in listed, listed
    after = argus_cli.json("debug", "--snapshot", snap["id"], "--auto", "--json")
    assert after["spinning"]["pid"] == info["app_pid"] and after["spinning"]["tid"] == info["app_tid"]
    assert after["spinning"]["block_type"] == before["spinning"]["block_type"]
    assert _causes(after) == _causes(before)


def test_watched_pid_without_a_loop(argus_cli):
    """A process the user names is watched though it runs no event loop: one
    wait of 3 s is a hang (the name sent to the running daemon)."""
    require_tracing()
    argus_cli.start(size="64M")
    sleeper = subprocess.Popen([sys.executable, "-c", "import sys, time\nsys.stdin.readline()\ntime.sleep(3)\n"],
                               stdin=subprocess.PIPE, text=True)
    try:
        out = argus_cli.run("start", "--buffer", argus_cli.buffer, "--watch-pid", str(sleeper.pid)).stdout
        assert "already tracing" in out
        sleeper.stdin.write("go\n")
        sleeper.stdin.flush()
        sleeper.wait(timeout=30)
        mine, _ = _recorded(argus_cli, sleeper.pid)
        assert any(s["block_type_guess"] == "LongWait" and s["wait_reason"] == "sleep" for s in mine), mine
    finally:
        sleeper.kill()
        sleeper.wait()


def test_bad_snapshots_are_one_line(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    for bad in ("no-such-id", "../../etc/passwd", ""):
        proc = argus_cli.run("debug", "--snapshot", bad, "--auto", "--json", check=False)
        assert proc.returncode != 0
        no_traceback(proc)
    info, rc = run_demo("--requests", "20", "--hang-at", "10", "--hang-ms", "2500", "--interval-ms", "20",
                        "--stuck", "run")
    assert rc == 0
    snap = _recorded(argus_cli, info["app_pid"])[0][0]
    path = snap["path"]
    with open(path, "r+b") as f:            # a damaged snapshot: the loader's header checks refuse it
        f.write(b"NOTARING")
    proc = argus_cli.run("debug", "--snapshot", snap["id"], "--auto", "--json", check=False)
    assert proc.returncode != 0 and "bad magic" in no_traceback(proc)
    meta = path[:-len(".argus")] + ".json"
    with open(meta, "w") as f:              # damaged metadata: listed as damaged, never trusted
        f.write('{"schema": "argus.snapshot/1", "id": "x", "pid": "__import__(\'os\')"}')
    listed = argus_cli.json("hangs", "--recorded", "--json")["snapshots"]
    assert {"id": snap["id"], "damaged": True} in listed
    proc = argus_cli.run("debug", "--snapshot", snap["id"], "--auto", check=False)
    assert proc.returncode != 0 and "damaged" in no_traceback(proc)
