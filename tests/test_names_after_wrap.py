"""Names after a wrap (issue 16, item 9).

A named process waits silently while a load wraps the buffer several times:
every record that named it (EXEC, THREAD_NAME, the start-up snapshot) is
overwritten.  Then its main thread hangs for a few seconds.  `argus hangs`
and `argus events` must still show its name: argusd re-emits a PROC_SNAPSHOT
for a thread that runs again once its last name record is half a lap old
(tracer/daemon/thread_names.c).  The buffer is 64 MiB, and tracing stops right
after the hang: this machine's background alone fills 16 MiB in a few
seconds, which would overwrite the hang itself.
"""
import json
import subprocess
import sys
import time

from conftest import require_tracing

NAME = "argus-namewait"
WORKLOAD = f"""
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, b"{NAME}", 0, 0, 0)
print("ready", flush=True)
sys.stdin.readline()          # silent while the buffer wraps
time.sleep(3)                 # the hang, recorded after the wraps
print("done", flush=True)
sys.stdin.readline()
"""


def _wrap(argus_cli, laps):
    """Loads the system until `laps` buffers' worth of records were overwritten."""
    st = argus_cli.status()
    per_lap = st["size"] / max(st["bytes_per_event"], 1.0)
    goal = st["overwritten"] + laps * per_lap
    deadline = time.monotonic() + 300
    while argus_cli.status()["overwritten"] < goal:
        assert time.monotonic() < deadline, "the load did not wrap the buffer"
        subprocess.run(["dd", "if=/dev/zero", "of=/dev/null", "bs=64", "count=200000"], capture_output=True)
    return argus_cli.status()


def test_names_survive_several_wraps(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    w = subprocess.Popen([sys.executable, "-c", WORKLOAD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert w.stdout.readline().strip() == "ready"
        argus_cli.wait_drained()
        _wrap(argus_cli, 3)
        w.stdin.write("go\n")
        w.stdin.flush()
        assert w.stdout.readline().strip() == "done"
        argus_cli.wait_drained()
        argus_cli.stop()          # freeze the buffer: the background would soon overwrite the hang too
        events = [json.loads(l) for l in argus_cli.run("events", "--buffer", argus_cli.buffer, "--pid", str(w.pid),
                                                       "--json").stdout.splitlines()]
        # the original naming records are gone: only re-emitted snapshots can name it
        assert not [e for e in events if e.get("type") in ("exec", "thread_name")], "the buffer did not wrap"
        assert any(e.get("type") == "proc_snapshot" and e.get("comm") == NAME for e in events), events[:5]
        out = argus_cli.run("hangs", "--buffer", argus_cli.buffer, "--pid", str(w.pid), "--threshold", "1").stdout
        assert f"{NAME}/{w.pid} main" in out, out
        out = argus_cli.run("hangs", "--buffer", argus_cli.buffer, "--all", "--threshold", "1", "--top", "1000").stdout
        rows = [l.split() for l in out.splitlines()]
        assert any(r[:3] == [f"{NAME}/{w.pid}", f"{NAME}/{w.pid}", "main"] for r in rows), out
    finally:
        w.kill()
        w.wait()
