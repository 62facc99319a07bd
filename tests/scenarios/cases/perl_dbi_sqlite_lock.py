"""SQLite write-lock contention between two Perl programs (DBI, DBD::SQLite):
a batch job holds the write lock (BEGIN IMMEDIATE) while it computes 3.5 s;
an application's INSERT polls the lock in SQLite's busy handler (sleeps of
1, 2, 5, ... 100 ms between tries).  Nothing wakes the poller; the file
locks on the database (fcntl) lead to the holder, which is busy on the CPU,
not idle."""
import json
import os
import subprocess

from harness import DRIVERS, LONG_RUNNING, REPEATED_YIELD, Scenario, ScenarioError, Truth

SCENARIO = Scenario(
    name="perl_dbi_sqlite_lock",
    summary="a Perl DBI INSERT polls SQLite's write lock while a Perl batch job holds it, computing 3.5 s",
    hung="the application's main thread, sleeping and retrying in SQLite's busy handler",
    spinning_type=REPEATED_YIELD,
    root="the batch job holding the write lock while it computes (LongRunning)",
    root_type=LONG_RUNNING,
    features=("ownership",),
    apt=(("perl", "perl"), ("libdbd-sqlite3-perl", None)),
    cross_process=True,
    fast=True,
)

SCRIPT = os.path.join(DRIVERS, "perl_dbi_sqlite.pl")


def _ids(proc, what):
    line = proc.stdout.readline()
    if not line:
        raise ScenarioError(f"the {what} exited ({proc.wait()}) before reporting its pid")
    return json.loads(line)


def setup(ctx):
    ctx.state["db"] = ctx.path("app.db")
    subprocess.run(["perl", SCRIPT, ctx.state["db"], "init"], check=True)


def reproduce(ctx):
    db = ctx.state["db"]
    app = ctx.spawn(["perl", SCRIPT, db, "write"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    a = _ids(app, "application")
    batch = ctx.spawn(["perl", SCRIPT, db, "hold", "3.5"], stdout=subprocess.PIPE, text=True)
    b = _ids(batch, "batch job")          # it holds the lock from here
    app.stdin.write("go\n")
    app.stdin.flush()
    out = app.stdout.read()
    if app.wait(timeout=60) != 0 or "inserted" not in out:
        raise ScenarioError(f"the application's INSERT failed: {out.strip()[-200:]}")
    if batch.wait(timeout=60) != 0:
        raise ScenarioError(f"the batch job exited with {batch.returncode}")
    return Truth(a["pid"], a["tid"], roots=[(b["pid"], None)])
