"""Issue 22, item 7: bystanders.  `bash -c 'server & sleep .5; timeout 60
client | cat'`: a TCP server (a thread per connection) whose handler
computes 3.5 s, and a client started through timeout and piped into cat.
bash waits in wait4, timeout in rt_sigsuspend, cat reads its pipe, and
the server's main thread sits in an idle accept(): none of them is a root
cause or the hang.  argus debug gets only the client's --pid and must
find its hung thread itself; the root cause is the server's handler."""
import json
import os
import time

from harness import DRIVERS, LONG_RUNNING, LONG_WAIT, PY, Scenario, ScenarioError, Truth
import subprocess

SCENARIO = Scenario(
    name="shell_launched_client",
    summary="bash starts a busy TCP server and a client (through timeout, piped into cat); the client waits",
    hung="the client's main thread, in recv() on its connection (LongWait)",
    spinning_type=LONG_WAIT,
    root="the server's handler thread, on the CPU (any thread of the server)",
    root_type=LONG_RUNNING,
    cross_process=True,
    by_pid=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    info = ctx.path("server.json")
    server, client = os.path.join(DRIVERS, "busy_tcp_server.py"), os.path.join(DRIVERS, "tcp_request_client.py")
    script = (f"{PY} {server} 3.5 > {info} & sleep .5; "
              f"port=$(sed -n 's/.*\"port\": \\([0-9]*\\).*/\\1/p' {info}); "
              f"timeout 60 {PY} {client} \"$port\" | cat; kill %1")
    sh = ctx.spawn(["bash", "-c", script], stdout=subprocess.PIPE, text=True)
    line = sh.stdout.readline()
    if not line:
        raise ScenarioError("the client did not report its pid")
    c = json.loads(line)
    if sh.wait(timeout=120) != 0:
        raise ScenarioError(f"bash exited with {sh.returncode}")
    with open(info) as f:
        s = json.loads(f.readline())
    time.sleep(0.1)
    return Truth(c["pid"], c["tid"], roots=[(s["pid"], None)])
