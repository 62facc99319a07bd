"""Issue 22, item 1, second variant: fork-per-request on one pipe.  20 quick
children each answer through the same pipe, then one computes for 3 s.  The
earlier waits are on the same object and were woken by earlier children: a
walk along such a baseline examines a child that is long gone.  The hung
read's own waker, the child busy now, is the root cause."""
import json
import os
import subprocess

from harness import LONG_RUNNING, LONG_WAIT, HERE, Scenario, ScenarioError, Truth

SCENARIO = Scenario(
    name="c_fork_per_request",
    summary="a C server forks a child per request on one pipe; the 21st computes 3 s",
    hung="the parent's main thread, in read() on the pipe",
    spinning_type=LONG_WAIT,
    root="the 21st child, on the CPU",
    root_type=LONG_RUNNING,
    cross_process=True,
    fast=True,
)


def setup(ctx):
    exe = ctx.path("fork_per_request")
    src = os.path.join(HERE, "drivers", "fork_per_request.c")
    r = subprocess.run(["cc", "-O1", "-o", exe, src], capture_output=True, text=True)
    if r.returncode != 0:
        raise ScenarioError(f"cc failed: {r.stderr.strip()[-300:]}")
    ctx.state["exe"] = exe


def reproduce(ctx):
    app = ctx.spawn([ctx.state["exe"]], stdout=subprocess.PIPE, text=True)
    ids = json.loads(app.stdout.readline())
    app.wait(timeout=60)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["child"], None)])
