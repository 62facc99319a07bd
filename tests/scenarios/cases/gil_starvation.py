"""CPython GIL starvation: a worker thread runs a catastrophically
backtracking regular expression (the regex engine never releases the GIL)
for about 3.5 s or more; the main thread wakes every 20 ms from its event-loop wait (select) and then
cannot get the GIL back: take_gil() waits 5 ms on a condition, times out,
checks the GIL's `locked` flag, asks for a drop, and waits again.  No
bp_watch: the holder is found without the flag, by ownership (the worker
releases the GIL's condition variable the main thread polled)."""
from harness import LONG_RUNNING, REPEATED_YIELD, Scenario, Truth

SCENARIO = Scenario(
    name="gil_starvation",
    summary="main thread starves for the GIL while a worker runs a backtracking regex 3.5 s",
    hung="the main thread, in take_gil(): timed 5 ms condition waits that time out",
    spinning_type=REPEATED_YIELD,
    root="the regex worker thread, on the CPU holding the GIL",
    root_type=LONG_RUNNING,
    features=("ownership",),
    fast=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    app, ids = ctx.driver("gil_threads.py", 3.5)
    ctx.finish(app)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["worker_tid"])])
