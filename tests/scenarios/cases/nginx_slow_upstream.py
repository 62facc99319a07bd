"""nginx as a reverse proxy in front of a slow application server: a client's
request for /slow waits while the upstream (Python's http.server) computes
for 3.5 s. nginx's worker is not hung (its event loop goes on): the chain
runs client -> nginx worker -> upstream."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth, children_of, free_port, wait_port
import servers

SCENARIO = Scenario(
    name="nginx_slow_upstream",
    summary="HTTP client waits on nginx, which waits on an upstream that computes 3.5 s",
    hung="the HTTP client's main thread, blocked in recv() on its nginx connection",
    spinning_type=LONG_WAIT,
    root="the upstream application server's main thread, computing the response (through nginx's worker)",
    root_type=LONG_RUNNING,
    apt=(("nginx-light", "nginx"),),
    cross_process=True,
    features=("batching_split",),
)


def setup(ctx):
    up_port = free_port()
    ctx.state["upstream"], ctx.state["up_ids"] = ctx.driver("http_upstream.py", up_port, 3.5)
    wait_port(up_port)
    ctx.state["nginx"], ctx.state["port"] = servers.nginx(ctx, up_port)


def reproduce(ctx):
    client, c = ctx.driver("http_client.py", ctx.state["port"], 40, "/slow")
    ctx.finish(client)
    up = ctx.state["up_ids"]
    return Truth(c["pid"], c["tid"], roots=[(up["pid"], up["tid"])],
                 extra={"split_pids": children_of(ctx.state["nginx"].pid)})
