"""Issue 22, item 6: a hang still in progress.  A client waits in recv() for
a TCP server (loopback, a thread per connection) whose handler computes for
60 s; the user runs Argus 4 s into it.  No wakeup has ended the wait; the
socket's other end, seen from the server's side (FD_INFO: the same
connection with both ends swapped), names the handler thread."""
import time

from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth

SCENARIO = Scenario(
    name="py_tcp_client_server_busy",
    summary="a client waits on a TCP server whose handler thread computes 60 s (still hung at trace end)",
    hung="the client's main thread, in recv() (still waiting at trace end)",
    spinning_type=LONG_WAIT,
    root="the server's handler thread, on the CPU (the other end of the client's socket)",
    root_type=LONG_RUNNING,
    cross_process=True,
    fast=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    server, s = ctx.driver("busy_tcp_server.py", 60)
    client, c = ctx.driver("tcp_request_client.py", s["port"])
    time.sleep(4.0)                    # the user runs argus while the client is still hung
    return Truth(c["pid"], c["tid"], roots=[(s["pid"], None)])
