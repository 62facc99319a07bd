"""The graph uses the user-space tracepoints (issue 10, item 5) end to end:
real programs under `argus run` with the shipped hook specs, a real daemon,
the trace built into the event graph.

  mutex     argus-mutex-holder: the worker holds state_lock 0.3 s while the
            main thread blocks in pthread_mutex_lock; its unlock -> the main
            thread's lock return is an ownership edge (owner_kind mutex).
  glib      a GLib main loop blocks in g_main_context_iteration; a worker
            thread wakes the context (g_main_context_wakeup): the enqueue ->
            the dispatch it caused is a message edge, and every dispatch is
            cut into its own segment (split kind callback).
  hang      a GLib idle callback (added from a worker thread) computes 1.5 s:
            `argus debug --auto --json` names the dispatch the hang sits in.
"""
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from argus.graphbuild import graph as G
from argus.graphbuild.builder import build_graph_from_trace
from argus.tracer import reader
from conftest import require_tracing
from support.programs import program

GLIB_LOOP = """
import ctypes, os, threading, time
g = ctypes.CDLL('libglib-2.0.so.0')
g.g_main_context_default.restype = ctypes.c_void_p
g.g_main_context_wakeup.argtypes = [ctypes.c_void_p]
g.g_main_context_iteration.argtypes = [ctypes.c_void_p, ctypes.c_int]
ctx = g.g_main_context_default()
g.g_main_context_iteration(ctx, 0)          # the loop owns its context
def worker():
    for _ in range(5):
        time.sleep(0.05)
        g.g_main_context_wakeup(ctx)
    print(threading.get_native_id(), flush=True)
w = threading.Thread(target=worker)
w.start()
for _ in range(5):
    g.g_main_context_iteration(ctx, 1)      # blocks in poll until the worker wakes it
w.join()
print(os.getpid(), hex(ctx), flush=True)
"""


def _run(argus_cli, *cmd):
    proc = subprocess.run([sys.executable, "-m", "argus.cli", "run", "--", *cmd],
                          env=argus_cli.env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _graph(argus_cli):
    argus_cli.wait_drained()
    argus_cli.stop()
    return build_graph_from_trace(reader.decode_file(argus_cli.buffer, strict=False))


def test_mutex_unlock_to_the_waiting_lock_is_an_ownership_edge(argus_cli):
    require_tracing()
    argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
    out = _run(argus_cli, program("argus-mutex-holder"), "sleep", "0.3", "0.3")
    ids = json.loads(out.splitlines()[0])
    g = _graph(argus_cli)
    assert g.stats["probe_rows"] > 0 and g.stats["mutex_edges"] >= 1
    tid = g.threads.tid[g.seg.utid]
    e = g.edges
    mutex = np.flatnonzero((e.type == G.EDGE_OWNERSHIP) & (e.owner_kind == G.OWNER_MUTEX))
    pairs = {(int(tid[e.src[k]]), int(tid[e.dst[k]])) for k in mutex.tolist()}
    # the long hold: the worker's unlock hands the mutex to the main thread
    assert (ids["worker_tid"], ids["tid"]) in pairs, pairs
    # ... to the segment that ends the main thread's 0.3 s wait in pthread_mutex_lock
    long_wait = [k for k in mutex.tolist() if (tid[e.src[k]], tid[e.dst[k]]) == (ids["worker_tid"], ids["tid"])
                 and e.ts[k] - g.seg.end[e.dst[k] - 1] >= 250_000_000]
    assert long_wait, "no edge to the lock return that waited 0.3 s"
    for k in mutex.tolist():
        assert e.weak[k] == 0 and e.src_ts[k] <= e.ts[k]
        assert g.seg.start[e.src[k]] <= e.src_ts[k] <= g.seg.end[e.src[k]]
        assert g.seg.start[e.dst[k]] <= e.ts[k] <= g.seg.end[e.dst[k]]


def test_glib_enqueue_to_dispatch_edge_and_callback_segments(argus_cli):
    require_tracing()
    argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
    out = _run(argus_cli, "/usr/bin/python3", "-c", GLIB_LOOP).split()
    worker_tid, pid, ctx = int(out[0]), int(out[1]), int(out[2], 16)
    g = _graph(argus_cli)
    tid = g.threads.tid[g.seg.utid]
    main = (tid == pid)
    callback = np.flatnonzero(main & (g.seg.split_kind == G.SPLIT_CALLBACK))
    # 6 dispatches, each cut at its begin and its end (a begin right after a
    # blocking wait's wakeup needs no cut: the wakeup began the segment)
    assert len(callback) >= 6, len(callback)
    for v in callback.tolist():
        assert g.seg.start_kind[v] == G.START_SPLIT and g.seg.end[v - 1] == g.seg.start[v]
    e = g.edges
    msg = np.flatnonzero((e.type == G.EDGE_MESSAGE) & (e.obj == ctx))
    pairs = [(int(tid[e.src[k]]), int(tid[e.dst[k]])) for k in msg.tolist()]
    assert pairs and all(p == (worker_tid, pid) for p in pairs), pairs
    assert g.stats["enqueue_edges"] == len(msg) and len(msg) >= 3
    for k in msg.tolist():
        assert e.src_ts[k] <= e.ts[k]
        assert g.seg.start[e.dst[k]] == e.ts[k]          # the dispatch opens its segment


GLIB_HANG = """
import ctypes, os, threading, time
g = ctypes.CDLL('libglib-2.0.so.0')
g.g_main_context_default.restype = ctypes.c_void_p
g.g_main_context_wakeup.argtypes = [ctypes.c_void_p]
g.g_main_context_iteration.argtypes = [ctypes.c_void_p, ctypes.c_int]
SourceFunc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
g.g_idle_add.argtypes = [SourceFunc, ctypes.c_void_p]
ctx = g.g_main_context_default()
g.g_main_context_iteration(ctx, 0)
def slow(_):
    end = time.time() + 1.5             # the hang: 1.5 s of CPU in one callback
    while time.time() < end:
        pass
    return 0                            # G_SOURCE_REMOVE
cb = SourceFunc(slow)
def worker():
    time.sleep(0.2)
    g.g_idle_add(cb, None)
    g.g_main_context_wakeup(ctx)
w = threading.Thread(target=worker)
w.start()
deadline = time.time() + 3
while time.time() < deadline and (w.is_alive() or g.g_main_context_iteration(ctx, 0)):
    g.g_main_context_iteration(ctx, 1)
w.join()
print(os.getpid(), hex(ctx), flush=True)
"""


def test_debug_names_the_dispatch_a_glib_hang_sits_in(argus_cli):
    require_tracing()
    argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
    out = _run(argus_cli, "/usr/bin/python3", "-c", GLIB_HANG).split()
    pid, ctx = int(out[0]), int(out[1], 16)
    argus_cli.wait_drained()
    argus_cli.stop()
    report = argus_cli.json("debug", "--buffer", argus_cli.buffer, "--pid", str(pid), "--auto", "--json",
                            "--threshold", "1")
    s = report["spinning"]
    assert s["tid"] == pid and s["block_type"] == "LongRunning"
    d = s["dispatch"]
    assert d["obj"] == ctx and not d["ongoing"]
    assert 1_400_000_000 <= d["dur_ns"] and d["window_share"] >= 0.9
    assert s["start_ns"] <= d["start_ns"] + 50_000_000 and d["end_ns"] <= s["end_ns"]
    text = argus_cli.run("debug", "--buffer", argus_cli.buffer, "--pid", str(pid), "--auto",
                         "--threshold", "1").stdout
    assert "in a dispatch: callback began at" in text


GLIB_IDLE_FROM_WORKER = """
import ctypes, os, threading, time
g = ctypes.CDLL('libglib-2.0.so.0')
g.g_main_context_default.restype = ctypes.c_void_p
g.g_main_context_iteration.argtypes = [ctypes.c_void_p, ctypes.c_int]
SourceFunc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
g.g_idle_add.argtypes = [SourceFunc, ctypes.c_void_p]
ctx = g.g_main_context_default()
g.g_main_context_iteration(ctx, 0)          # the loop owns its context
ran = []
cb = SourceFunc(lambda _: ran.append(1) or 0)   # G_SOURCE_REMOVE
def worker():
    time.sleep(0.2)
    g.g_idle_add(cb, None)                  # attach to the default context (NULL): no explicit wakeup
    print(threading.get_native_id(), flush=True)
w = threading.Thread(target=worker)
w.start()
while not ran:
    g.g_main_context_iteration(ctx, 1)      # blocks in poll until the attach wakes it
w.join()
print(os.getpid(), hex(ctx), flush=True)
"""


def test_glib_idle_added_from_a_worker_is_a_message_edge_to_its_dispatch(argus_cli):
    """g_idle_add from a worker: g_source_attach(source, NULL) records the
    default context (obj_arg 1, null_obj), the dispatch records it too: the
    two pair into a message edge from the worker to the main thread."""
    require_tracing()
    argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
    out = _run(argus_cli, "/usr/bin/python3", "-c", GLIB_IDLE_FROM_WORKER).split()
    worker_tid, pid, ctx = int(out[0]), int(out[1]), int(out[2], 16)
    g = _graph(argus_cli)
    tid = g.threads.tid[g.seg.utid]
    e = g.edges
    msg = np.flatnonzero((e.type == G.EDGE_MESSAGE) & (e.obj == ctx))
    pairs = [(int(tid[e.src[k]]), int(tid[e.dst[k]])) for k in msg.tolist()]
    assert (worker_tid, pid) in pairs, pairs
    for k in msg.tolist():
        assert e.src_ts[k] <= e.ts[k]
        assert g.seg.start[e.dst[k]] == e.ts[k]          # the dispatch opens its segment


def test_cond_signal_to_the_waiters_wake_is_a_message_edge(argus_cli):
    """argus-cond-handoff: per round the consumer waits on item_cond (its
    entry releases the lock), then the producer signals it: the records of
    the cond hooks (pthread.json) and, in the graph, the signal -> the
    wait's return as a message edge on the cond, every round."""
    require_tracing()
    argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
    out = _run(argus_cli, program("argus-cond-handoff"), "20")
    ids = json.loads(out.splitlines()[0])
    pid, consumer, producer, rounds = ids["pid"], ids["consumer_tid"], ids["producer_tid"], ids["rounds"]
    argus_cli.wait_drained()
    argus_cli.stop()
    events = [json.loads(line) for line in
              argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(pid)).stdout.splitlines()]

    def count(kind, tid, obj):
        return sum(1 for e in events if e["type"] == kind and e["tid"] == tid and e["obj"] == obj)
    # the producer's signal, the consumer's broadcast: enqueue on their cond
    assert count("enqueue", producer, ids["item_cond"]) == rounds
    assert count("enqueue", consumer, ids["ack_cond"]) == rounds
    # every round the consumer waits: the lock released at entry, the cond named at return
    assert count("mutex_unlock", consumer, ids["lock"]) >= 2 * rounds     # wait entries + its own unlocks
    assert count("probe_return", consumer, ids["item_cond"]) >= rounds
    wait_fns = {e["fn"] for e in events if e["type"] == "probe_return" and e["obj"] == ids["item_cond"]}
    assert len(wait_fns) == 2                                             # pthread_cond_wait and _timedwait

    g = build_graph_from_trace(reader.decode_file(argus_cli.buffer, strict=False))
    tid = g.threads.tid[g.seg.utid]
    e = g.edges
    cond = np.flatnonzero((e.type == G.EDGE_MESSAGE) & (e.obj == ids["item_cond"]))
    pairs = {(int(tid[e.src[k]]), int(tid[e.dst[k]])) for k in cond.tolist()}
    assert pairs == {(producer, consumer)}, pairs
    assert len(cond) == rounds and g.stats["cond_edges"] >= rounds
    for k in cond.tolist():
        assert e.src_ts[k] < e.ts[k]
        assert g.seg.start[e.dst[k]] <= e.ts[k] <= g.seg.end[e.dst[k]]
    # the lock the wait took back: the producer's unlock after its signal
    back = np.flatnonzero((e.type == G.EDGE_OWNERSHIP) & (e.owner_kind == G.OWNER_MUTEX) & (e.obj == ids["lock"])
                          & (tid[e.dst] == consumer))
    assert len(back) >= 1


GIL_CONTENTION = """
import ctypes, json, os, sys, threading
sys.setswitchinterval(1000)     # no forced switch: the GIL changes hands only where a thread drops it
libc = ctypes.CDLL(None)        # a foreign call drops the GIL (PyEval_SaveThread) and takes it back
held = ctypes.PyDLL(None)       # ... these keep it
ROUNDS = 5
r, w = os.pipe()
main_tid = threading.get_native_id()
syscall = f"/proc/self/task/{main_tid}/syscall".encode()
buf = ctypes.create_string_buffer(64)

def main_blocked_in(nr):
    # the main thread's system call (/proc: "running" while it runs); 0 read, 202 futex
    fd = held.open(syscall, 0)
    n = held.read(fd, buf, 63)
    held.close(fd)
    return n > 0 and buf.raw[:n].startswith(nr)

tids = {}
def worker():
    tids["worker"] = threading.get_native_id()
    for _ in range(ROUNDS):
        while not main_blocked_in(b"0 "):   # the main thread is in its read, the GIL dropped
            libc.usleep(1000)               # (the GIL dropped here too: the main thread gets there)
        held.write(w, b"x", 1)              # wakes the read; the worker keeps the GIL
        while not main_blocked_in(b"202 "): # ... until the main thread waits for it in PyEval_RestoreThread
            pass
        libc.usleep(1000)                   # drops the GIL: the main thread takes it
t = threading.Thread(target=worker)
t.start()
one = ctypes.create_string_buffer(1)
for _ in range(ROUNDS):
    libc.read(r, one, 1)                    # drops the GIL, blocks until the worker writes, asks for the GIL back
t.join()
print(json.dumps({"pid": os.getpid(), "main": main_tid, "worker": tids["worker"]}), flush=True)
"""


def _shared_libpython_python():
    """This interpreter, when it loads libpython3.X.so (pyenv, Fedora) rather
    than linking it in: this process maps the library then."""
    with open("/proc/self/maps") as f:
        return os.path.realpath(sys.executable) if any("/libpython3" in line for line in f) else None


# Both ways a CPython carries its API: Debian's program links libpython in;
# a shared build's program loads libpython3.X.so.1.0 (cpython.json has both).
GIL_PYTHONS = [pytest.param("/usr/bin/python3", id="program"), pytest.param("shared", id="libpython")]


def gil_python(which):
    if which != "shared":
        return which
    python = _shared_libpython_python()
    if python is None:
        pytest.skip(f"{sys.executable} links libpython in: no shared-libpython interpreter here")
    return python


@pytest.mark.parametrize("python", GIL_PYTHONS)
def test_gil_drop_to_the_waiting_take_is_an_ownership_edge(argus_cli, python):
    """CPython's GIL through cpython.json ("obj": "process"): the main thread
    blocks in a ctypes read (the GIL dropped); the worker, holding the GIL
    (PyDLL calls keep it, no forced switch), wakes it and waits until the
    kernel shows it blocked on the GIL, then drops it: an ownership edge
    (owner_kind mutex, obj = the process key) from the worker's drop to the
    main thread's take, every round, with no timing assumption.  Only
    cpython.json: with pthread.json too (the GIL's own mutex and cond nest
    inside, see the graph core's unit tests) a busy machine can fill the
    main thread's ring before the daemon drains it."""
    from argus.hooks import hookspec
    require_tracing()
    argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
    spec = os.path.join(hookspec.default_spec_dir(), "cpython.json")
    proc = subprocess.run([sys.executable, "-m", "argus.cli", "run", "--hooks", spec, "--", gil_python(python), "-c",
                           GIL_CONTENTION], env=argus_cli.env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ids = json.loads(proc.stdout.splitlines()[-1])
    argus_cli.wait_drained()
    argus_cli.stop()
    events = [json.loads(line) for line in
              argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(ids["pid"])).stdout.splitlines()]
    gil = [e for e in events if e.get("obj") == 1 and e["type"] in ("mutex_lock", "mutex_unlock", "probe_return")]
    for tid in (ids["main"], ids["worker"]):
        kinds = {e["type"] for e in gil if e["tid"] == tid}
        assert kinds == {"mutex_lock", "mutex_unlock", "probe_return"}, (tid, kinds)
    g = build_graph_from_trace(reader.decode_file(argus_cli.buffer, strict=False))
    tid = g.threads.tid[g.seg.utid]
    pid = g.threads.pid[g.seg.utid]
    e = g.edges
    handover = np.flatnonzero((e.type == G.EDGE_OWNERSHIP) & (e.owner_kind == G.OWNER_MUTEX) & (e.obj == 1)
                              & (pid[e.dst] == ids["pid"]))
    pairs = [(int(tid[e.src[k]]), int(tid[e.dst[k]])) for k in handover.tolist()]
    # each of the 5 rounds: the main thread waits ~150 ms in PyEval_RestoreThread for the worker's drop
    long_waits = [k for k, p in zip(handover.tolist(), pairs) if p == (ids["worker"], ids["main"])]
    assert len(long_waits) >= 5, pairs
    for k in handover.tolist():
        assert e.weak[k] == 0 and e.src_ts[k] <= e.ts[k]
        assert g.seg.start[e.dst[k]] <= e.ts[k] <= g.seg.end[e.dst[k]]


DBUS_CLIENT = """
import json, os, sys, threading
from gi.repository import Gio, GLib
conn = Gio.DBusConnection.new_for_address_sync(
    sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
    None, None)
for _ in range(int(sys.argv[2])):
    conn.call_sync("org.argus.Ledger", "/org/argus/Ledger", "org.argus.Ledger", "Recalculate",
                   GLib.Variant("(d)", (0.05,)), GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 10000, None)
print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
"""


def test_gdbus_call_serial_pairs_with_its_reply(argus_cli, tmp_path):
    """A real session bus (dbus-daemon), the scenario suite's Gio service and
    a Gio client making 4 call_sync, both under `argus run`: the client's
    main thread numbers each call (ipc_send, g_dbus_message_set_serial), its
    GDBus worker reads the reply serial of each reply (ipc_recv,
    g_dbus_message_get_reply_serial): the graph pairs them (message edge,
    obj = the serial).  Only the GDBus and GLib specs: a Python program's
    pthread and GIL records come by the thousand and, on a busy machine,
    can fill a thread's ring before the daemon drains it."""
    import shutil
    from argus.hooks import hookspec
    import time
    import pytest
    require_tracing()
    if not shutil.which("dbus-daemon"):
        pytest.skip("dbus-daemon not installed")
    bus_path = tmp_path / "bus"
    address = f"unix:path={bus_path}"
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address={address}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    svc = None
    try:
        deadline = time.monotonic() + 10
        while not bus_path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
        driver = os.path.join(os.path.dirname(__file__), "scenarios", "drivers", "dbus_service.py")
        hooks = [a for n in ("gdbus.json", "glib.json") for a in ("--hooks", os.path.join(hookspec.default_spec_dir(), n))]
        run = [sys.executable, "-m", "argus.cli", "run", *hooks, "--", "/usr/bin/python3"]
        # a session of its own: `argus run` starts the service as its child,
        # and the whole group is ended below (a terminate of argus run alone
        # left the service running after the test)
        svc = subprocess.Popen(run + [driver, address], env=argus_cli.env, stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
        service = json.loads(svc.stdout.readline())
        proc = subprocess.run(run + ["-c", DBUS_CLIENT, address, "4"], env=argus_cli.env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        client = json.loads(proc.stdout.splitlines()[-1])
        argus_cli.wait_drained()
    finally:
        if svc is not None:
            try:
                os.killpg(svc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            svc.wait(timeout=30)
        bus.terminate()
        bus.wait(timeout=30)
    argus_cli.stop()
    events = [json.loads(line) for line in
              argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(client["pid"])).stdout.splitlines()]
    assert not [e for e in events if e["type"] == "lost"]
    sends = {e["obj"]: e for e in events if e["type"] == "ipc_send" and e["tid"] == client["tid"]}
    recvs = [e for e in events if e["type"] == "ipc_recv" and e["obj"] in sends and e["tid"] != client["tid"]]
    # Hello + the 4 calls: each reply's serial names a call of the main thread, read by another (GDBus's worker)
    assert len(recvs) >= 5, (sends.keys(), recvs)
    for e in recvs:
        assert sends[e["obj"]]["ts_ns"] < e["ts_ns"]
    g = build_graph_from_trace(reader.decode_file(argus_cli.buffer, strict=False))
    tid, pid = g.threads.tid[g.seg.utid], g.threads.pid[g.seg.utid]
    e = g.edges
    ipc = np.flatnonzero((e.type == G.EDGE_MESSAGE) & (pid[e.src] == client["pid"]) & np.isin(e.obj, list(sends)))
    ipc = [k for k in ipc.tolist() if tid[e.src[k]] == client["tid"] and tid[e.dst[k]] != client["tid"]]
    assert len(ipc) >= 5 and g.stats["ipc_edges"] >= 5
    for k in ipc:
        assert e.src_ts[k] < e.ts[k]
        assert g.seg.start[e.dst[k]] <= e.ts[k] <= g.seg.end[e.dst[k]]
    # the service answered on its main thread: it numbered its replies there
    assert any(ev["type"] == "ipc_send" and ev["tid"] == service["tid"] for ev in
               (json.loads(line) for line in argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid",
                                                          str(service["pid"])).stdout.splitlines()))


NODE_LOOP = """
const fs = require('fs');
let n = 0;
function tick() {
  if (++n < 5) setTimeout(tick, 20);
  else setImmediate(() => fs.readFile('/etc/hostname', () => console.log(JSON.stringify({pid: process.pid}))));
}
setTimeout(tick, 20);
"""


def test_node_callbacks_cut_its_loop(argus_cli):
    """node.json + libuv.json on node (its own exported C++ functions and
    libuv): 5 timers, an immediate and a file read's completion each run as
    a callback of the main thread (RunTimers, CheckImmediate,
    InternalMakeCallback), cut into their own vertices; every uv_timer_start
    names the timer handle RunTimers dispatches.  Only these two specs: V8's
    start-up takes pthread mutexes ~9000 times in a burst, which can fill the
    main thread's ring before a busy daemon drains it."""
    import shutil
    import pytest
    from argus.hooks import hookspec
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed")
    require_tracing()
    argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
    specs = [os.path.join(hookspec.default_spec_dir(), n) for n in ("libuv.json", "node.json")]
    proc = subprocess.run([sys.executable, "-m", "argus.cli", "run", "--hooks", specs[0], "--hooks", specs[1], "--",
                           node, "-e", NODE_LOOP], env=argus_cli.env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    pid = json.loads(proc.stdout.splitlines()[-1])["pid"]
    argus_cli.wait_drained()
    argus_cli.stop()
    events = [json.loads(line) for line in
              argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(pid)).stdout.splitlines()]
    ids = {h.symbol: i for i, h in enumerate(hookspec.load(specs))}
    assert not [e for e in events if e["type"] == "lost"]
    timers = ids["_ZN4node11Environment9RunTimersEP10uv_timer_s"]
    immediate = ids["_ZN4node11Environment14CheckImmediateEP10uv_check_s"]
    make_callback = [i for s, i in ids.items() if s.startswith("_ZN4node20InternalMakeCallback")][0]

    def begins(probe):
        return [e for e in events if e["type"] == "callback_begin" and e["probe_id"] == probe and e["tid"] == pid]
    assert len(begins(timers)) == 5                      # one expired timer per run here
    assert len(begins(immediate)) >= 1 and len(begins(make_callback)) >= 1
    arms = {e["obj"] for e in events if e["type"] == "enqueue" and e["probe_id"] == ids["uv_timer_start"]}
    assert arms == {e["obj"] for e in begins(timers)}    # the environment's one uv_timer_t
    ends = [e for e in events if e["type"] == "callback_end" and e["tid"] == pid]
    assert len(ends) == len([e for e in events if e["type"] == "callback_begin" and e["tid"] == pid])
    g = build_graph_from_trace(reader.decode_file(argus_cli.buffer, strict=False))
    tid = g.threads.tid[g.seg.utid]
    callback = np.flatnonzero((tid == pid) & (g.seg.split_kind == G.SPLIT_CALLBACK))
    assert len(callback) >= 7, len(callback)


NODE_WASM = """
const bytes = new Uint8Array([0,97,115,109,1,0,0,0,1,5,1,96,0,1,127,3,2,1,0,7,5,1,1,102,0,0,10,6,1,4,0,65,42,11]);
let n = 0;
function again() {
  WebAssembly.compile(bytes).then(() => {
    if (++n < 5) again();
    else setTimeout(() => console.log(JSON.stringify({pid: process.pid})), 100);   // the loop turns on: a pending wakeup runs
  });
}
again();
"""


def test_node_platform_task_from_another_thread_is_a_message_edge(argus_cli):
    """WebAssembly.compile finishes on V8's background threads, which post
    the result to the main loop: uv_async_send on the platform's uv_async_t
    (enqueue, libuv.json) -> node::PerIsolatePlatformData::FlushTasks on it
    (callback_begin, node.json): a message edge from the background thread."""
    import shutil
    import pytest
    from argus.hooks import hookspec
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed")
    require_tracing()
    argus_cli.start(size="256M")   # a busy machine wraps a small trace file in seconds
    specs = [os.path.join(hookspec.default_spec_dir(), n) for n in ("libuv.json", "node.json")]
    proc = subprocess.run([sys.executable, "-m", "argus.cli", "run", "--hooks", specs[0], "--hooks", specs[1], "--",
                           node, "-e", NODE_WASM], env=argus_cli.env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    pid = json.loads(proc.stdout.splitlines()[-1])["pid"]
    g = _graph(argus_cli)
    tid, gpid = g.threads.tid[g.seg.utid], g.threads.pid[g.seg.utid]
    e = g.edges
    msg = np.flatnonzero((e.type == G.EDGE_MESSAGE) & (gpid[e.dst] == pid) & (tid[e.dst] == pid)
                         & (tid[e.src] != pid) & (gpid[e.src] == pid))
    assert g.stats["enqueue_edges"] >= 1
    # the probe edge: it ends where FlushTasks opens its vertex (kernel message edges may join it)
    flush = [k for k in msg.tolist() if g.seg.start[e.dst[k]] == e.ts[k] and g.seg.split_kind[e.dst[k]] == G.SPLIT_CALLBACK]
    assert flush and all(e.src_ts[k] <= e.ts[k] for k in flush)
