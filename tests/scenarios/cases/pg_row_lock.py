"""PostgreSQL row-lock wait across backends: session A updates row 1 in short
transactions (B's updates of the row wait on it briefly: the baselines), then
keeps one open 3.5 s; session B's UPDATE of the same row waits
for A's transaction lock. B's client waits on its backend, B's backend waits
on the lock, A's backend waits for its client, which is the one sitting on
the open transaction. The lock release that ends the hang is a mutual
exclusion wakeup between two postgres backends."""
from harness import LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="pg_row_lock",
    summary="UPDATE waits 3.5 s on a row lock held by another session's open transaction",
    hung="session B's client main thread, blocked in recv() on its backend's socket",
    spinning_type=LONG_WAIT,
    root="session A: its backend (idle in transaction, holding the row lock) or its client "
         "(sleeping before COMMIT); both are LongWait",
    root_type=LONG_WAIT,
    apt=(("postgresql", "/usr/lib/postgresql"),),
    pip=(("pg8000", "pg8000"),),
    cross_process=True,
)


def setup(ctx):
    ctx.state["server"], ctx.state["port"], _ = servers.postgres(ctx)
    ctx.finish(ctx.driver("pg_client.py", ctx.state["port"], "setup")[0])


def reproduce(ctx):
    port = ctx.state["port"]
    holder, a = ctx.driver("pg_client.py", port, "pulse", 25, 3.5)
    waiter, b = ctx.driver("pg_client.py", port, "update")
    ctx.finish(waiter)
    ctx.finish(holder)
    return Truth(b["pid"], b["tid"], roots=[(a["backend"], None), (a["pid"], a["tid"])],
                 extra={"backend_a": a["backend"], "backend_b": b["backend"]})
