"""A Ruby (CRuby 3, MRI) program: the main thread pops a Thread::Queue that a
producer thread feeds after computing 3 s.  Ruby's threads are OS threads
under one lock (the GVL); the consumer sleeps in Queue#pop on its own
condition variable, released from the GVL, and the producer's push wakes it.
The root cause is the producer thread, not the process's other threads (the
GVL's timer thread)."""
import json
import os
import subprocess

from harness import DRIVERS, LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Truth

SCENARIO = Scenario(
    name="ruby_queue_producer",
    summary="a Ruby main thread waits in Queue#pop for a producer thread computing 3 s",
    hung="the Ruby main thread, asleep in Queue#pop (a futex wait)",
    spinning_type=LONG_WAIT,
    root="the producer thread, on the CPU with the GVL before it pushes (LongRunning)",
    root_type=LONG_RUNNING,
    apt=(("ruby", "ruby"),),
    fast=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    app = ctx.spawn(["ruby", os.path.join(DRIVERS, "ruby_queue_consumer.rb"), "3"],
                    stdout=subprocess.PIPE, text=True)
    line = app.stdout.readline()
    if not line:
        raise ScenarioError(f"ruby exited ({app.wait()}) before reporting its thread ids")
    ids = json.loads(line)
    out = app.stdout.read()
    if app.wait(timeout=60) != 0 or "popped" not in out:
        raise ScenarioError(f"the Ruby program failed: {out.strip()[-200:]}")
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["producer_tid"])])
