"""A Node.js HTTP server whose event loop stalls: a request handler derives a
key with crypto.pbkdf2Sync on the main thread for 3.5 s. The hung process is
the server itself; the slice should reach back to the client whose request
started the work."""
from harness import LONG_RUNNING, Scenario, Truth, free_port, wait_port, PY
import os

SCENARIO = Scenario(
    name="node_event_loop",
    summary="node's main thread runs pbkdf2Sync 3.5 s inside a request handler",
    hung="node's main thread (the event loop), out of epoll for 3.5 s",
    spinning_type=LONG_RUNNING,
    root="node's main thread itself, in the handler (the request came from the client)",
    root_type=LONG_RUNNING,
    apt=(("nodejs", "node"),),
    cross_process=True,
    features=("trigger",),
)


def setup(ctx):
    import json
    import subprocess
    from harness import DRIVERS
    port = free_port()
    proc = ctx.spawn(["node", os.path.join(DRIVERS, "node_server.js"), str(port), "3.5"],
                     stdout=subprocess.PIPE, text=True)
    ctx.state["ids"] = json.loads(proc.stdout.readline())
    wait_port(port, proc=proc)
    ctx.state["port"] = port


def reproduce(ctx):
    client, c = ctx.driver("http_client.py", ctx.state["port"], 40, "/hash")
    ctx.finish(client)
    ids = ctx.state["ids"]
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["tid"])], extra={"trigger_pid": c["pid"]})
