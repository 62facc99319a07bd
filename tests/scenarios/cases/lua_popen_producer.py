"""A Lua 5.4 program reads a producer's output through io.popen (popen(3):
/bin/sh, then the producer exec'd in its place); the producer computes 3 s of
CPU time before it writes.  The reader's read() of the pipe is ended by the
producer's write: the producer is the root cause, the shell that started it
is gone (exec), and the reader never forked by itself (libc did)."""
import json
import os
import subprocess

from harness import DRIVERS, LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Truth

SCENARIO = Scenario(
    name="lua_popen_producer",
    summary="a Lua 5.4 program reads io.popen output from a producer computing 3 s",
    hung="the Lua program's main thread, in read() of the popen pipe",
    spinning_type=LONG_WAIT,
    root="the producer (lua5.4 -e, exec'd by popen's shell), on the CPU before it writes (LongRunning)",
    root_type=LONG_RUNNING,
    apt=(("lua5.4", "lua5.4"),),
    cross_process=True,
    fast=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    app = ctx.spawn(["lua5.4", os.path.join(DRIVERS, "lua_popen_reader.lua"), "3"],
                    stdout=subprocess.PIPE, text=True)
    line = app.stdout.readline()
    if not line:
        raise ScenarioError(f"lua5.4 exited ({app.wait()}) before reporting its pids")
    ids = json.loads(line)
    out = app.stdout.read()
    if app.wait(timeout=60) != 0 or '"ok": true' not in out:
        raise ScenarioError(f"the Lua program failed: {out.strip()[-200:]}")
    return Truth(ids["pid"], ids["tid"], roots=[(ids["child"], None)])
