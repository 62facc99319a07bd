"""psql, PostgreSQL's own client, waits for a query that keeps its backend on
the CPU for 3.5 s. libpq waits for the result in poll() on the one socket:
a synchronous wait made with an event-loop syscall."""
import os
import subprocess

from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="pg_psql_long_query",
    summary="psql waits (in poll()) on a 3.5 s CPU-bound query in its backend",
    hung="psql's main thread, in poll() on its backend's socket",
    spinning_type=LONG_WAIT,
    root="the postgres backend process serving psql, running the query",
    root_type=LONG_RUNNING,
    apt=(("postgresql", "/usr/lib/postgresql"),),
    pip=(("pg8000", "pg8000"),),
    cross_process=True,
)


def setup(ctx):
    ctx.state["server"], ctx.state["port"], ctx.state["sock"] = servers.postgres(ctx)
    ctx.finish(ctx.driver("pg_client.py", ctx.state["port"], "setup")[0])


def reproduce(ctx):
    import time
    # Calibrate the CPU-bound join (as pg_client.py's query mode) here.
    query = "SELECT count(*) FROM t a, t b, t c, (SELECT generate_series(1, {})) g;"
    def timed(k):
        t0 = time.monotonic()
        subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(ctx.state["port"]), "-U", "postgres", "-Atqc",
                        "SET jit = off; " + query.format(k)], check=True, capture_output=True)
        return time.monotonic() - t0
    # the difference of two sizes leaves psql's start and connection out of the per-unit cost
    per_k = max(timed(8) - timed(2), 1e-3) / 6
    script = "".join(f"SELECT count(*) FROM t WHERE v >= {i};\n\\! sleep 0.02\n" for i in range(20))
    script = "SELECT pg_backend_pid();\nSET jit = off;\n" + script + \
        query.format(max(1, round(3.5 / per_k))) + "\n"
    psql = ctx.spawn(["psql", "-h", "127.0.0.1", "-p", str(ctx.state["port"]), "-U", "postgres", "-Atq"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    psql.stdin.write(script)
    psql.stdin.close()
    backend = int(psql.stdout.readline())
    psql.stdout.read()
    psql.wait(timeout=60)
    return Truth(psql.pid, psql.pid, roots=[(backend, backend)], extra={"backend": backend})
