"""A file lock polled by one process and held by another: an application
using py-filelock (flock(LOCK_EX | LOCK_NB), then sleep 50 ms, again and
again) while util-linux `flock LOCKFILE sleep 3.5` holds the lock (a cron
job or an admin's script).  Nothing wakes the poller: its tries fail with
EWOULDBLOCK and it sleeps, so no wakeup edge leads to the holder; the
kernel's file-lock table does (the holder took the lock on the same inode)."""
import subprocess
import time

from harness import LONG_WAIT, REPEATED_YIELD, Scenario, Truth, children_of

SCENARIO = Scenario(
    name="filelock_poll",
    summary="py-filelock polls a flock() lock that util-linux flock holds for 3.5 s around `sleep`",
    hung="the application's main thread, flock(LOCK_NB) tries and 50 ms sleeps (RepeatedYield)",
    spinning_type=REPEATED_YIELD,
    root="the `flock` command holding the lock, waiting for its `sleep` child (LongWait)",
    root_type=LONG_WAIT,
    features=("ownership",),
    apt=(("util-linux", "flock"),),
    pip=(("filelock", "filelock"),),
    cross_process=True,
)


def setup(ctx):
    ctx.state["lock"] = ctx.path("resource.lock")


def reproduce(ctx):
    app, a = ctx.driver("filelock_app.py", ctx.state["lock"], 30, stdin=subprocess.PIPE)
    assert "ready" in app.stdout.readline()
    holder = ctx.spawn(["flock", ctx.state["lock"], "sleep", "3.5"])
    time.sleep(0.3)
    kids = children_of(holder.pid)
    app.stdin.write("go\n")
    app.stdin.flush()
    ctx.finish(app)
    holder.wait(timeout=30)
    return Truth(a["pid"], a["tid"], roots=[(holder.pid, None)] + [(k, None) for k in kids])
