"""A Python web application (http.server) whose background indexing thread
runs a backtracking regex that never releases the GIL; a client's request
arrives meanwhile and the serving thread starves for the GIL (take_gil():
timed 5 ms condition waits). The client waits on a server thread that is
RepeatedYield; the GIL's holder, the indexer, is found through ownership
(the GIL mutex's owner field, or the thread that released the GIL's
condition)."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth, free_port, wait_port

SCENARIO = Scenario(
    name="py_web_gil",
    summary="HTTP client waits on a Python server thread starving for the GIL (indexer runs a regex 3.5 s)",
    hung="the HTTP client's main thread, blocked in recv() on its connection",
    spinning_type=LONG_WAIT,
    root="the server's indexer thread running the regex with the GIL (LongRunning), reached through the "
         "serving thread starving in take_gil() (RepeatedYield)",
    root_type=LONG_RUNNING,
    features=("ownership",),
    cross_process=True,
)


def setup(ctx):
    port = free_port()
    ctx.state["server"], ctx.state["ids"] = ctx.driver("py_web_app.py", port, "gil", 3.5)
    wait_port(port)
    ctx.state["port"] = port


def reproduce(ctx):
    client, c = ctx.driver("http_client.py", ctx.state["port"], 40, "/index", "/report")
    assert "ready" in client.stdout.readline()
    ctx.finish(client)
    ids = ctx.state["ids"]
    return Truth(c["pid"], c["tid"], roots=[(ids["pid"], ids["indexer_tid"])], extra={"server_tid": ids["tid"]})
