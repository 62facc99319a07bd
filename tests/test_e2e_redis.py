"""End to end on a real program no one here wrote: a Redis client hangs while
redis-server's main thread runs a long Lua script.  `argus debug` must name
redis-server's main thread, LongRunning, as the root cause."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import IN_CI

DRIVER = os.path.join(os.path.dirname(__file__), "drivers", "redis_busy_script.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def redis_server(tmp_path):
    exe = shutil.which("redis-server")
    if not exe:
        if IN_CI:
            pytest.fail("redis-server missing: scripts/setup.sh installs it")
        pytest.skip("redis-server not installed")
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(tmp_path), "--busy-reply-threshold", "60000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield proc, port
    proc.terminate()
    proc.wait(timeout=10)


def test_redis_busy_script(tracing, redis_server):
    server, port = redis_server
    client = subprocess.Popen([sys.executable, DRIVER, str(port), "3"], stdout=subprocess.PIPE, text=True)
    info = json.loads(client.stdout.readline())
    client.stdout.read()
    assert client.wait(timeout=60) == 0
    tracing.wait_drained()
    report = tracing.json("debug", "--buffer", tracing.buffer, "--pid", str(info["client_pid"]),
                          "--auto", "--json", "--threshold", "1")
    spinning = report["spinning"]
    assert spinning["tid"] == info["client_tid"]
    assert spinning["block_type"] == "LongWait"
    causes = [c for c in report["root_causes"] if c["pid"] == server.pid]
    assert causes, f"redis-server not named: {report['root_causes']}"
    main = [c for c in causes if c["tid"] == server.pid]
    assert main and main[0]["block_type"] == "LongRunning"
    assert main[0]["comm"].startswith("redis-server")
