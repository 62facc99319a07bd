"""psql behind a row lock: session A (a pg8000 application) updates row 1 in
a transaction and sleeps 3.5 s before COMMIT; psql then updates row 1 and
waits. libpq waits for the result in poll() on its one socket while its
backend waits for the lock (in epoll_wait on its latch's own wait set)."""
import subprocess

from harness import LONG_WAIT, Scenario, Truth
from cases.pg_row_lock_cold import setup  # noqa: F401  (the same cluster and table)

SCENARIO = Scenario(
    name="pg_psql_row_lock",
    summary="psql's UPDATE waits (in poll()) 3.5 s on a row lock another session holds",
    hung="psql's main thread, in poll() on its backend's socket",
    spinning_type=LONG_WAIT,
    root="session A: its backend (idle in transaction, holding the row lock) or its client "
         "(sleeping before COMMIT); both are LongWait",
    root_type=LONG_WAIT,
    apt=(("postgresql", "/usr/lib/postgresql"),),
    pip=(("pg8000", "pg8000"),),
    cross_process=True,
)


def reproduce(ctx):
    port = ctx.state["port"]
    holder, a = ctx.driver("pg_client.py", port, "hold", 3.5)
    assert "locked" in holder.stdout.readline()
    psql = ctx.spawn(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-Atq"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    psql.stdin.write("SELECT pg_backend_pid();\nUPDATE t SET v = v + 1 WHERE id = 1;\n")
    psql.stdin.close()
    backend = int(psql.stdout.readline())
    psql.stdout.read()
    psql.wait(timeout=60)
    ctx.finish(holder)
    return Truth(psql.pid, psql.pid, roots=[(a["backend"], None), (a["pid"], a["tid"])],
                 extra={"backend_a": a["backend"], "backend_b": backend})
