"""Issue 22, item 1: fd numbers are no objects.  A Python parent forks a
child that computes for 3 s and reads the pipe the child will write; before
that it idles in select() timeouts, and the pipe's read end reuses an fd the
interpreter used for its own files at start-up.  An earlier quick wait "on
fd 3" is no baseline of this one; the hung read's own waker, the child, is
the root cause."""
import subprocess

from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth

SCENARIO = Scenario(
    name="py_fork_pipe_child",
    summary="a Python parent reads a pipe its forked child writes after 3 s on the CPU",
    hung="the parent's main thread, in read() on the pipe",
    spinning_type=LONG_WAIT,
    root="the forked child, on the CPU (it ends the read with its write)",
    root_type=LONG_RUNNING,
    cross_process=True,
    fast=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    app, ids = ctx.driver("fork_pipe_child.py", 3.0, stdin=subprocess.DEVNULL)
    ctx.finish(app)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["child"], None)])
