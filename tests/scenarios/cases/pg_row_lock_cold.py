"""pg_row_lock without brief contention before it: session A opens a
transaction on row 1 and keeps it 3.5 s; session B, whose earlier UPDATEs
touched other rows and never waited on a lock, updates row 1 and waits. The
first lock wait of B's backend has no baseline of its own kind."""
from harness import LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="pg_row_lock_cold",
    summary="UPDATE waits 3.5 s on a row lock; no earlier lock wait to serve as a baseline",
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
    holder, a = ctx.driver("pg_client.py", port, "hold", 3.5)
    assert "locked" in holder.stdout.readline()
    waiter, b = ctx.driver("pg_client.py", port, "update_other", 40)
    ctx.finish(waiter)
    ctx.finish(holder)
    return Truth(b["pid"], b["tid"], roots=[(a["backend"], None), (a["pid"], a["tid"])],
                 extra={"backend_a": a["backend"], "backend_b": b["backend"]})
