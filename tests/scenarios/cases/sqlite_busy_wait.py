"""SQLite write-lock contention across processes: the sqlite3 shell holds the
database's write lock in an open transaction for 3.5 s; an application's
INSERT (Python's sqlite3 module, busy timeout 30 s) polls the lock: SQLite's
busy handler sleeps 1, 2, 5, 10, ... 100 ms between tries. The lock is a
POSIX advisory lock on the file: nothing wakes the poller, so no wakeup edge
leads to the holder; the failed fcntl(F_SETLK) tries and the kernel's lock
table do (file-lock ownership edges)."""
import os
import subprocess

from harness import LONG_WAIT, PY, REPEATED_YIELD, DRIVERS, Scenario, Truth

SCENARIO = Scenario(
    name="sqlite_busy_wait",
    summary="INSERT polls SQLite's write lock (busy handler sleeps) while the sqlite3 shell holds it 3.5 s",
    hung="the application's main thread, sleeping and retrying in SQLite's busy handler",
    spinning_type=REPEATED_YIELD,
    root="the sqlite3 shell holding the write lock (waiting on its input with the transaction open)",
    root_type=LONG_WAIT,
    features=("ownership",),
    apt=(("sqlite3", "sqlite3"),),
    cross_process=True,
)


def setup(ctx):
    ctx.state["db"] = ctx.path("app.db")
    subprocess.run([PY, os.path.join(DRIVERS, "sqlite_writer.py"), ctx.state["db"], "init"], check=True)


def reproduce(ctx):
    import time
    db = ctx.state["db"]
    writer, w = ctx.driver("sqlite_writer.py", db, "write", 40, stdin=subprocess.PIPE)
    assert "ready" in writer.stdout.readline()
    holder, h = ctx.driver("sqlite_writer.py", db, "hold", 3.5)
    time.sleep(0.3)
    writer.stdin.write("go\n")
    writer.stdin.flush()
    ctx.finish(writer)
    ctx.finish(holder)
    return Truth(w["pid"], w["tid"], roots=[(h["pid"], None)])
