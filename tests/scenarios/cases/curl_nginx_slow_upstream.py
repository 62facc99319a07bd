"""curl behind nginx behind a slow application server: curl's GET /slow
waits (in poll(), curl's multi interface) while nginx's worker waits (in
epoll_wait) for the upstream, Python's http.server computing the response
for 3.5 s. Two synchronous waits made with event-loop syscalls, one inside
an event-loop server."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth, children_of
from cases.nginx_slow_upstream import setup  # noqa: F401  (the same upstream and nginx)

SCENARIO = Scenario(
    name="curl_nginx_slow_upstream",
    summary="curl waits (in poll()) on nginx, which waits on an upstream that computes 3.5 s",
    hung="curl's main thread, in poll() on its nginx connection",
    spinning_type=LONG_WAIT,
    root="the upstream application server's main thread, computing the response (through nginx's worker)",
    root_type=LONG_RUNNING,
    apt=(("nginx-light", "nginx"), ("curl", "curl")),
    cross_process=True,
)


def reproduce(ctx):
    import subprocess
    url = f"http://127.0.0.1:{ctx.state['port']}"
    for _ in range(5):
        subprocess.run(["curl", "-sf", "-o", "/dev/null", url + "/quick"], check=True)
    curl = ctx.spawn(["curl", "-sf", "-o", "/dev/null", url + "/slow"])
    if curl.wait(timeout=60) != 0:
        raise ValueError(f"curl exited with {curl.returncode}")
    up = ctx.state["up_ids"]
    return Truth(curl.pid, curl.pid, roots=[(up["pid"], up["tid"])],
                 extra={"split_pids": children_of(ctx.state["nginx"].pid)})
