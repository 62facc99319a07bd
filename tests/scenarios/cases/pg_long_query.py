"""A PostgreSQL client waits for a query that keeps its backend process on
the CPU for 3.5 s (an unindexed aggregate over generated rows)."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="pg_long_query",
    summary="client waits on a 3.5 s CPU-bound query in its postgres backend",
    hung="the client's main thread, blocked in recv() on its backend's socket",
    spinning_type=LONG_WAIT,
    root="the postgres backend process serving that connection, running the query",
    root_type=LONG_RUNNING,
    apt=(("postgresql", "/usr/lib/postgresql"),),
    pip=(("pg8000", "pg8000"),),
    cross_process=True,
)


def setup(ctx):
    ctx.state["server"], ctx.state["port"], _ = servers.postgres(ctx)
    ctx.finish(ctx.driver("pg_client.py", ctx.state["port"], "setup")[0])


def reproduce(ctx):
    client, c = ctx.driver("pg_client.py", ctx.state["port"], "query", 40, 3.5)
    ctx.finish(client)
    return Truth(c["pid"], c["tid"], roots=[(c["backend"], c["backend"])], extra={"backend": c["backend"]})
