"""A Perl script forks a worker and waits for it with waitpid(); the worker
computes 3 s.  The parent's wait4() has no fd and no lock: the kernel ends it
when the child exits, so the child is the root cause (a new language runtime,
a wait on a process rather than on an object)."""
import json
import os
import subprocess

from harness import DRIVERS, LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Truth

SCENARIO = Scenario(
    name="perl_fork_waitpid",
    summary="a Perl script waits in waitpid() for a forked worker computing 3 s",
    hung="the Perl script's main thread, in wait4() for its child",
    spinning_type=LONG_WAIT,
    root="the forked worker, on the CPU until it exits (LongRunning)",
    root_type=LONG_RUNNING,
    apt=(("perl", "perl"),),
    cross_process=True,
    fast=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    app = ctx.spawn(["perl", os.path.join(DRIVERS, "perl_fork_wait.pl"), "3"], stdout=subprocess.PIPE, text=True)
    line = app.stdout.readline()
    if not line:
        raise ScenarioError(f"perl exited ({app.wait()}) before reporting its pids")
    ids = json.loads(line)
    out = app.stdout.read()
    if app.wait(timeout=60) != 0 or '"status": 0' not in out:
        raise ScenarioError(f"the Perl script failed: {out.strip()[-200:]}")
    return Truth(ids["pid"], ids["tid"], roots=[(ids["child"], None)])
