"""Issue 22, item 3: a server that moves work between OS threads.  curl
asks a Go net/http server three quick questions and then a slow one on
the same keep-alive connection.  The handler goroutine hands the slow job
to a worker goroutine over a channel, which computes 3.5 s; Go's
scheduler runs these goroutines on whichever of its threads is free, so
no OS thread is the handler.  The request sent on curl's connection makes
the wait for its reply synchronous, whatever the server does inside: the
root cause is the Go process, on the CPU, not curl's poll() taken for an
idle loop."""
import json
import os
import shutil
import subprocess

from harness import DRIVERS, LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Skip, Truth, wait_port

GO = os.environ.get("HANGZOO_GO") or shutil.which("go") or "/usr/local/go/bin/go"

SCENARIO = Scenario(
    name="go_http_pool_compute",
    summary="curl waits on a Go net/http server whose worker goroutine computes 3.5 s",
    hung="curl's main thread, in poll() on its connection (LongWait)",
    spinning_type=LONG_WAIT,
    root="the Go server, on the CPU in a worker goroutine (any of its threads)",
    root_type=LONG_RUNNING,
    apt=(("curl", "curl"),),
    cross_process=True,
)


def setup(ctx):
    if not os.path.exists(GO):
        raise Skip("no Go toolchain (go)")
    exe = ctx.path("go_http_server")
    env = dict(os.environ, GOPROXY="off", GO111MODULE="off", GOTOOLCHAIN="local")
    r = subprocess.run([GO, "build", "-o", exe, os.path.join(DRIVERS, "go_http_server.go")],
                       capture_output=True, text=True, env=env, cwd=ctx.tmp, timeout=600)
    if r.returncode != 0:
        raise ScenarioError(f"go build go_http_server.go failed: {r.stderr.strip()[-300:]}")
    ctx.state["exe"] = exe


def reproduce(ctx):
    server = ctx.spawn([ctx.state["exe"], "3.5"], stdout=subprocess.PIPE, text=True)
    s = json.loads(server.stdout.readline() or "{}")
    if "port" not in s:
        raise ScenarioError("go_http_server did not report its port")
    wait_port(s["port"], proc=server)
    base = f"http://127.0.0.1:{s['port']}"
    curl = ctx.spawn(["curl", "-s", "--max-time", "60", "-o", "/dev/null", f"{base}/fast", "-o", "/dev/null",
                      f"{base}/fast", "-o", "/dev/null", f"{base}/fast", "-o", "/dev/null", f"{base}/slow"])
    if curl.wait(timeout=120) != 0:
        raise ScenarioError(f"curl exited with {curl.returncode}")
    return Truth(curl.pid, curl.pid, roots=[(s["pid"], None)])
