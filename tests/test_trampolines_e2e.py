"""`argus run -- CMD` end to end: a real daemon, the LD_PRELOAD agent in a
real program, hooks from the shipped hook spec, per-thread rings drained into
the trace file, read back with `argus events --json`."""
import json
import os
import subprocess
import sys

from conftest import require_tracing
from support.programs import program


GLIB_SCRIPT = """
import ctypes
g = ctypes.CDLL('libglib-2.0.so.0')     # dlopen, RTLD_LOCAL: hooks go in after it
g.g_main_context_wakeup(None)
for _ in range(50):
    g.g_main_context_iteration(None, 0)
import os
print(os.getpid())
"""


def _run(argus_cli, *cmd):
    return subprocess.run([sys.executable, "-m", "argus.cli", "run", "--verbose", "--", *cmd],
                          env=argus_cli.env, capture_output=True, text=True, timeout=120)


def _events(argus_cli, pid):
    argus_cli.wait_drained()
    argus_cli.stop()
    out = argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(pid)).stdout
    return [json.loads(line) for line in out.splitlines()]


def _check_time_line(events):
    """Probe records (TSC converted by argusd) sit on the kernel's time line:
    inside the process's life as its own kernel records bound it."""
    kernel = [e["ts_ns"] for e in events if e["cpu"] != 0xFFFF]
    probes = [e["ts_ns"] for e in events if e["cpu"] == 0xFFFF]
    assert probes and kernel
    assert min(kernel) - 1_000_000 <= min(probes) and max(probes) <= max(kernel) + 1_000_000


def test_run_without_daemon_is_one_line(argus_cli):
    proc = _run(argus_cli, "true")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "argus start" in proc.stderr


def test_mutex_hooks_in_a_real_program(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    proc = _run(argus_cli, program("argus-mutex-holder"), "sleep", "0.2", "1.0")
    assert proc.returncode == 0, proc.stderr
    assert "argus-agent: pthread_mutex_lock hooked" in proc.stderr
    assert "argus-agent: pthread_mutex_unlock hooked" in proc.stderr
    ids = json.loads(proc.stdout.splitlines()[0])
    events = _events(argus_cli, ids["pid"])
    locks = [e for e in events if e["type"] == "mutex_lock"]
    unlocks = [e for e in events if e["type"] == "mutex_unlock"]
    returns = [e for e in events if e["type"] == "probe_return"]
    # the main loop locks every 20 ms and the worker every 50 ms for 1 s
    # (then 0.2 s of the worker holding it): about 70 of each
    assert len(locks) >= 40 and len(unlocks) >= 40 and len(returns) >= 40, (len(locks), len(unlocks))
    # both threads lock the same mutex (state_lock): one obj, seen from both tids
    by_obj = {}
    for e in locks:
        by_obj.setdefault(e["obj"], set()).add(e["tid"])
    assert any({ids["tid"], ids["worker_tid"]} <= tids for tids in by_obj.values())
    assert {e["fn"] for e in locks} and len({e["fn"] for e in locks}) == 1
    _check_time_line(events)
    # every thread closed its ring and the daemon forgot it
    assert os.listdir(os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings")) == []


def test_glib_hooks_after_dlopen(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    proc = _run(argus_cli, "/usr/bin/python3", "-c", GLIB_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    assert "argus-agent: g_main_context_dispatch hooked" in proc.stderr
    assert "argus-agent: g_main_context_wakeup hooked" in proc.stderr
    pid = int(proc.stdout.split()[-1])
    events = _events(argus_cli, pid)
    count = {t: sum(e["type"] == t for e in events) for t in ("callback_begin", "callback_end", "enqueue")}
    # one dispatch (begin and end) per iteration, one wakeup
    assert count["callback_begin"] == 50 and count["callback_end"] == 50, count
    assert count["enqueue"] >= 1, count
    _check_time_line(events)


def test_exit_status_is_the_programs(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    assert _run(argus_cli, "/bin/sh", "-c", "exit 7").returncode == 7


def test_hooks_come_out_when_tracing_stops(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    # the main loop keeps locking every 20 ms for 4 s: records follow the stop
    cmd = [sys.executable, "-m", "argus.cli", "run", "--verbose", "--", program("argus-mutex-holder"), "sleep", "0.1", "4"]
    proc = subprocess.Popen(cmd, env=argus_cli.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ids = json.loads(proc.stdout.readline())
    argus_cli.stop()                        # while the program runs
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "argus-agent: tracing stopped: hooks removed" in err
    # the daemon took its rings away
    assert not any(n.startswith(f"{ids['pid']}-") for n in os.listdir(os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings")))


FORK_SCRIPT = """
import ctypes, os, sys
g = ctypes.CDLL('libglib-2.0.so.0')
g.g_main_context_iteration(None, 0)          # the parent's ring exists before the fork
child = os.fork()
for _ in range(20):
    g.g_main_context_iteration(None, 0)
if child == 0:
    print(os.getpid(), flush=True)
    os._exit(0)
os.waitpid(child, 0)
print(os.getpid(), flush=True)
"""


def test_a_forked_child_records_into_its_own_ring(argus_cli):
    # the child inherits the hooks and the parent's mapping of its ring; it
    # must start a ring of its own (one producer per ring), under its own pid
    require_tracing()
    argus_cli.start(size="64M")
    proc = _run(argus_cli, "/usr/bin/python3", "-c", FORK_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    child_pid, parent_pid = (int(x) for x in proc.stdout.split())
    argus_cli.wait_drained()
    argus_cli.stop()
    for pid, want in ((parent_pid, 21), (child_pid, 20)):
        out = argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(pid),
                            "--type", "callback_begin").stdout
        events = [json.loads(line) for line in out.splitlines()]
        assert len(events) == want, (pid, len(events))
        assert {e["tid"] for e in events} == {pid}


NODE_WORKER = """
const { Worker } = require('worker_threads');
const w = new Worker(`const { parentPort } = require('worker_threads');
for (let i = 0; i < 20; i++) parentPort.postMessage(i);`, { eval: true });
let n = 0;
w.on('message', () => { n++; });
w.on('exit', () => { console.log(process.pid, n); });
"""


def test_libuv_async_send_in_node(argus_cli):
    """libuv.json on node (which links libuv in and exports it): a worker
    thread's postMessage wakes the main loop with uv_async_send, an enqueue
    recorded from a thread that is not the main one."""
    import shutil
    import pytest
    from argus.hooks import hookspec
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed")
    require_tracing()
    argus_cli.start(size="64M")
    proc = _run(argus_cli, node, "-e", NODE_WORKER)
    assert proc.returncode == 0, proc.stderr
    assert "argus-agent: uv_async_send hooked" in proc.stderr
    pid, received = map(int, proc.stdout.split())
    assert received == 20
    probe = {h.symbol: i for i, h in enumerate(hookspec.load())}["uv_async_send"]
    sends = [e for e in _events(argus_cli, pid) if e["type"] == "enqueue" and e["probe_id"] == probe]
    assert any(e["tid"] != pid for e in sends), sends
    assert all(e["obj"] for e in sends)     # the uv_async_t
