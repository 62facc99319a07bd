"""A worker blocks in BLPOP on a Redis list until a producer pushes the next
job; the producer spends 3.5 s computing it. Meanwhile two other clients
pipeline SETs, so redis-server's event loop replies to one client and reads
the next request back to back (the batching pattern of paper §3.1): only a
graph that splits that loop per peer walks from the worker through Redis to
the producer rather than to a pipelining client."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="redis_queue_producer",
    summary="BLPOP consumer waits on a producer that computes 3.5 s; pipelining clients share the server loop",
    hung="the consumer's main thread, blocked in BLPOP (recv on its Redis socket)",
    spinning_type=LONG_WAIT,
    root="the producer's main thread, computing the job before its LPUSH (through redis-server)",
    root_type=LONG_RUNNING,
    apt=(("redis-server", "redis-server"),),
    cross_process=True,
    features=("batching_split",),
)


def setup(ctx):
    ctx.state["server"], ctx.state["port"] = servers.redis(ctx)


def reproduce(ctx):
    port = ctx.state["port"]
    pipes = [ctx.driver("redis_client.py", port, "pipeline", 6.0)[0] for _ in range(2)]
    consumer, cids = ctx.driver("redis_client.py", port, "consume", 40)
    producer, pids = ctx.driver("redis_client.py", port, "produce", 40, 3.5)
    ctx.finish(producer)
    ctx.finish(consumer)
    for p in pipes:
        ctx.finish(p)
    return Truth(cids["pid"], cids["tid"], roots=[(pids["pid"], pids["tid"])],
                 extra={"split_pids": [ctx.state["server"].pid]})
