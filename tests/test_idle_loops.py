"""End to end: idle event loops are not hangs, a synchronous call in poll() is.

A GTK 3 app under Xvfb, redis-server and an nginx worker are left idle for
10 s under tracing; meanwhile a plain HTTP client (CPython's http.client
with a socket timeout, so it waits in poll() like libpq) waits 3 s for a
slow application server.  `argus hangs` must list none of the idle loops
and must list the client's poll() as a synchronous LongWait (which the old
"every poll is idle" rule missed)."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import IN_CI

HERE = os.path.dirname(os.path.abspath(__file__))
SCEN = os.path.join(HERE, "scenarios")
sys.path.insert(0, SCEN)
import servers  # noqa: E402
from harness import Context, free_port, wait_port  # noqa: E402

SYSTEM_PY = "/usr/bin/python3"
IDLE_S = 10
GTK_IDLE_APP = """
import json, os, threading, gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
win = Gtk.Window(title="idle")
win.add(Gtk.Label(label="nothing to do"))
win.show_all()
print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
Gtk.main()
"""
CLIENT = """
import http.client, json, os, sys
print(json.dumps({"pid": os.getpid()}), flush=True)
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
c.request("GET", "/slow")
c.getresponse().read()
"""


def _need(*exes):
    for exe in exes:
        if not (shutil.which(exe) or os.path.exists(exe)):
            if IN_CI:
                pytest.fail(f"{exe} missing")
            pytest.skip(f"{exe} not installed")
    if subprocess.run([SYSTEM_PY, "-c", "import gi; gi.require_version('Gtk', '3.0')"],
                      capture_output=True).returncode != 0:
        pytest.skip("python3-gi with GTK 3 not installed")


@pytest.fixture
def idle_programs(tmp_path):
    _need("Xvfb", "redis-server", "nginx", SYSTEM_PY)
    ctx = Context(str(tmp_path / "progs"))
    os.makedirs(ctx.tmp, exist_ok=True)
    try:
        env = dict(os.environ, DISPLAY=servers.xvfb(ctx), NO_AT_BRIDGE="1")
        gtk = ctx.spawn([SYSTEM_PY, "-c", GTK_IDLE_APP], stdout=subprocess.PIPE, text=True, env=env)
        gtk_ids = json.loads(gtk.stdout.readline())
        redis = servers.redis(ctx)
        up_port = free_port()
        up, _ = ctx.driver("http_upstream.py", up_port, 3.0)
        wait_port(up_port)
        nginx, _ = servers.nginx(ctx, up_port)
        time.sleep(2)            # startup done: everything idles from here
        workers = [int(p) for p in open(f"/proc/{nginx.pid}/task/{nginx.pid}/children").read().split()]
        yield {"gtk": gtk_ids["pid"], "redis": redis[0].pid if isinstance(redis, tuple) else redis.pid,
               "nginx": workers, "upstream": up_port}
    finally:
        ctx.close()


def test_idle_loops_are_not_hangs(idle_programs, tracing):
    p = idle_programs
    time.sleep(3)
    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(p["upstream"])], stdout=subprocess.PIPE, text=True)
    cpid = json.loads(client.stdout.readline())["pid"]
    assert client.wait(timeout=60) == 0
    time.sleep(max(0, IDLE_S - 3 - 3.5))
    tracing.wait_drained()
    tracing.stop()
    idle = {"gtk": [p["gtk"]], "redis": [p["redis"]], "nginx worker": p["nginx"]}
    listed = tracing.json("hangs", "--buffer", tracing.buffer, "--json", "--all", "--top", "100000")["hangs"]
    for name, pids in idle.items():
        assert pids
        assert not [h for h in listed if h["pid"] in pids], f"idle {name} listed: {listed}"
        for pid in pids:
            own = tracing.json("hangs", "--buffer", tracing.buffer, "--json", "--pid", str(pid))["hangs"]
            assert own == [], f"idle {name} ({pid}) has hangs: {own}"
    mine = [h for h in listed if h["pid"] == cpid]
    assert mine, f"the client's synchronous poll() is not listed: {listed}"
    assert mine[0]["kind"] == "wait" and mine[0]["block_type"] == "LongWait"
    assert mine[0]["evidence"]["wait_model"]["kind"] in ("sync", "nested")
