"""A Python web application (http.server) that logs each request into SQLite;
an admin's sqlite3 shell holds the database's write lock for 3.5 s, and the
request handler's INSERT polls the lock in SQLite's busy handler (sleeps of
1..100 ms between tries). The client waits on a server thread that is
RepeatedYield, and that thread's failed fcntl(F_SETLK) tries point to the
shell holding the lock (file-lock ownership)."""
import os
import subprocess
import time

from harness import DRIVERS, LONG_WAIT, PY, Scenario, Truth, free_port, wait_port

SCENARIO = Scenario(
    name="py_web_sqlite",
    summary="HTTP client waits on a Python server polling SQLite's write lock held 3.5 s by the sqlite3 shell",
    hung="the HTTP client's main thread, blocked in recv() on its connection",
    spinning_type=LONG_WAIT,
    root="the sqlite3 shell holding the write lock, waiting on its input (LongWait), reached through the "
         "server's serving thread polling the lock in SQLite's busy handler (RepeatedYield)",
    root_type=LONG_WAIT,
    features=("ownership",),
    apt=(("sqlite3", "sqlite3"),),
    cross_process=True,
)


def setup(ctx):
    db = ctx.state["db"] = ctx.path("app.db")
    subprocess.run([PY, os.path.join(DRIVERS, "sqlite_writer.py"), db, "init"], check=True)
    port = free_port()
    ctx.state["server"], ctx.state["ids"] = ctx.driver("py_web_app.py", port, "sqlite", db)
    wait_port(port)
    ctx.state["port"] = port


def reproduce(ctx):
    client, c = ctx.driver("http_client.py", ctx.state["port"], 40, "/quick", "/report", "--gate",
                           stdin=subprocess.PIPE)
    assert "ready" in client.stdout.readline()
    holder, h = ctx.driver("sqlite_writer.py", ctx.state["db"], "hold", 3.5)
    time.sleep(0.3)
    client.stdin.write("go\n")
    client.stdin.flush()
    ctx.finish(holder)
    ctx.finish(client)
    ids = ctx.state["ids"]
    return Truth(c["pid"], c["tid"], roots=[(h["pid"], None)], extra={"server_tid": ids["tid"]})
