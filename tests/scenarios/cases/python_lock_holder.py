"""A threaded Python service: three threads share a threading.Lock for short
critical sections (the lock's futex is waited on and woken from every side:
mutual exclusion). One worker takes the lock and, while holding it, calls
Redis, whose main thread is in DEBUG SLEEP for 3.5 s; the main thread blocks
on the lock. The wakeups between the threads through that lock are
mutual-exclusion wakeups and must be weak edges; the hang's real chain is
main -> lock holder -> redis-server."""
from harness import LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="python_lock_holder",
    summary="main thread waits on a threading.Lock held by a worker that waits 3.5 s on Redis",
    hung="the main thread, blocked on the lock (futex)",
    spinning_type=LONG_WAIT,
    root="redis-server's main thread, sleeping in DEBUG SLEEP (via the worker holding the lock, also LongWait)",
    root_type=LONG_WAIT,
    apt=(("redis-server", "redis-server"),),
    cross_process=True,
    features=("weak_mutex_edge",),
    fast=True,
)


def setup(ctx):
    ctx.state["server"], ctx.state["port"] = servers.redis(ctx, "--enable-debug-command", "yes")


def reproduce(ctx):
    app, ids = ctx.driver("lock_worker.py", ctx.state["port"], 3.5)
    ctx.finish(app)
    server = ctx.state["server"]
    return Truth(ids["pid"], ids["tid"], roots=[(server.pid, server.pid)],
                 extra={"holder_tid": ids.get("holder_tid")})
