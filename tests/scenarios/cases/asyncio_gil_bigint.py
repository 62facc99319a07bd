"""CPython GIL starvation of an asyncio event loop: the service offloads a
job with run_in_executor, but the job (int() of a huge decimal string,
quadratic C code) never releases the GIL for about 3.5 s or more; the
loop's thread returns from epoll_wait every 10 ms and starves in
take_gil(): timed 5 ms condition waits on the GIL's condition variable,
which the pool thread woke before (GIL hand-overs while the service ran)."""
from harness import LONG_RUNNING, REPEATED_YIELD, Scenario, Truth

SCENARIO = Scenario(
    name="asyncio_gil_bigint",
    summary="asyncio loop starves for the GIL while its thread pool parses a huge int 3.5 s",
    hung="the event loop's thread, in take_gil(): timed 5 ms condition waits (RepeatedYield)",
    spinning_type=REPEATED_YIELD,
    root="the thread-pool worker in int(str), on the CPU holding the GIL (LongRunning)",
    root_type=LONG_RUNNING,
    features=("ownership",),
)


def setup(ctx):
    pass


def reproduce(ctx):
    app, ids = ctx.driver("asyncio_bigint.py", 3.5)
    ctx.finish(app)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["worker_tid"])])
