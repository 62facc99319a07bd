"""Issue 22, item 8 (stable answers): a multiprocessing pool's caller
waits for a map whose one job computes 3.5 s in one worker process.  The
pool's bookkeeping threads (task handler, result handler, worker handler)
and the parent are relays or bystanders; the same hang recorded again
must name the slow worker every time."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth

SCENARIO = Scenario(
    name="py_process_pool_slow_worker",
    summary="a multiprocessing.Pool caller waits for map() while one worker computes 3.5 s",
    hung="the caller's main thread, waiting for the map's result (LongWait)",
    spinning_type=LONG_WAIT,
    root="the pool worker process that runs the slow job, on the CPU",
    root_type=LONG_RUNNING,
    cross_process=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    app, ids = ctx.driver("process_pool_slow.py", 3.5)
    done = ctx.finish(app)
    return Truth(ids["pid"], ids["tid"], roots=[(done["slow"], None)])
