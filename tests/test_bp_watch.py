"""bp_watch end to end: real hardware watchpoints on real programs.

  - flag_handshake (tests/programs): a worker stores 1, 2, 3 into a global
    flag that the main thread polls with sched_yield + usleep; watched with
    the perf mechanism while tracing: the writes and reads reach the buffer
    with the right threads and values, the graph gets data_flag edges, and
    `argus debug --auto` on the poller's RepeatedYield hang falls through to
    the writer.
  - the same program under the lldb mechanism.
  - CPython itself (a program no one here wrote): the GIL's `locked` word,
    _PyRuntime.ceval.gil.locked, which a thread waiting for the GIL polls
    between 5 ms timed waits and which the holder clears on release.
  - after bp_watch exits, every thread's debug registers are free (4 perf
    breakpoints open on each; DR7 read with ptrace PEEKUSER is 0), no thread
    is stopped, and the program makes progress (lldb: DR7 has no enabled
    breakpoint, one slot stays reserved by the kernel's ptrace bookkeeping).
  - one-line errors: no such process, image not loaded, symbol not found,
    a function instead of a variable, no free debug register, permission denied.
"""
import ctypes
import errno
import json
import os
import signal
import subprocess
import sys
import sysconfig
import time

import pytest

from conftest import no_traceback, require_tracing
from support.programs import program

PTRACE_PEEKUSER, PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 3, 17, 0x4206, 0x4207
DR7_OFFSET = 848 + 7 * 8          # offsetof(struct user, u_debugreg[7]) on x86_64
__WALL = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


def require_root():
    if os.geteuid() != 0:
        pytest.skip("needs root (hardware breakpoints and ptrace on other processes)")


def start_handshake(start_ms, works, linger_ms, gated=False):
    proc = subprocess.Popen([program("argus-flag-handshake"), str(start_ms), ",".join(map(str, works)),
                             str(linger_ms)] + (["gated"] if gated else []), stdout=subprocess.PIPE, text=True)
    info = json.loads(proc.stdout.readline())
    return proc, info


def bp_watch(env, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "argus.cli.bp_watch", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def bp_watch_bg(env, *args):
    """Starts bp_watch; returns once it reports its watchpoints armed."""
    p = subprocess.Popen([sys.executable, "-m", "argus.cli.bp_watch", *map(str, args)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    assert "watching" in line, line + p.stderr.read()
    return p


def finish(p, timeout=120):
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err
    assert "Traceback" not in err, err
    return json.loads(out), err      # --json: stdout is the JSON summary and nothing else


def perf_slots_free(tid, want=4):
    """How many of `want` 8-byte RW hardware breakpoints the kernel lets us open
    on thread tid at once (x86 has 4 debug registers per thread)."""
    from argus.debugger.perf_bp import perf_event_open
    fds = []
    buf = ctypes.create_string_buffer(64)
    base = (ctypes.addressof(buf) + 7) & ~7
    try:
        for i in range(want):
            try:
                fds.append(perf_event_open(tid, base + 8 * i, 8))
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                break
        return len(fds)
    finally:
        for fd in fds:
            os.close(fd)


def dr7(tid):
    """DR7 of thread tid: seize it, interrupt (stops it briefly), PEEKUSER, detach (it runs on)."""
    def call(req, addr=0, data=0):
        ctypes.set_errno(0)
        r = _libc.ptrace(req, tid, ctypes.c_void_p(addr), ctypes.c_void_p(data))
        e = ctypes.get_errno()
        if r == -1 and e:
            raise OSError(e, os.strerror(e))
        return r
    call(PTRACE_SEIZE)
    try:
        call(PTRACE_INTERRUPT)
        os.waitpid(tid, __WALL)
        return call(PTRACE_PEEKUSER, DR7_OFFSET) & 0xFFFFFFFFFFFFFFFF
    finally:
        call(PTRACE_DETACH)


def thread_states(pid):
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/stat") as f:
            out[int(t)] = f.read().rsplit(")", 1)[1].split()[0]
    return out


def read_symbol(pid, image, symbol, size=8):
    from argus.debugger import procmem, symbols
    spec = symbols.resolve_watch(pid, image, symbol, size=size)
    return procmem.read_uint(pid, spec.addr, spec.size)


def assert_left_clean(pid, slots=4):
    """Every thread: no breakpoint enabled in DR7 (L0-3/G0-3, bits 0-7), `slots`
    debug registers free for perf, not stopped; the program makes progress.
    lldb (ptrace) leaves a disabled ptrace breakpoint registered per thread,
    which the kernel frees only at thread exit or exec (docs/bp_watch.md): 3 slots."""
    tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    assert len(tids) >= 2
    for tid in tids:
        assert perf_slots_free(tid) == slots, f"thread {tid}: expected {slots} free debug registers"
        assert dr7(tid) & 0xFF == 0, f"thread {tid} DR7 has an enabled breakpoint"
    states = thread_states(pid)
    assert not [s for s in states.values() if s in "tT"], states
    before = read_symbol(pid, "argus-flag-handshake", "handshake_progress")
    time.sleep(0.3)
    after = read_symbol(pid, "argus-flag-handshake", "handshake_progress")
    assert after > before, "the program stopped making progress"


def flag_events(argus_cli, pid, buffer=None):
    extra = ["--buffer", buffer] if buffer else []
    out = {}
    for kind in ("data_flag_write", "data_flag_read"):
        proc = argus_cli.run("events", "--pid", str(pid), "--type", kind, "--json", *extra)
        out[kind] = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    return out["data_flag_write"], out["data_flag_read"]


def test_flag_handshake_perf_traced_diagnosed(tracing, tmp_path):
    # worker: sleeps 1.5 s, then 0.3 s of work -> flag=1, 0.3 s -> 2, 4 s -> 3 (the hang)
    # then both threads idle in poll() (up to 120 s, until SIGUSR1): alive for the lldb script at the end
    prog, info = start_handshake(1500, [300, 300, 4000], 120000)
    pid, main_tid, worker_tid = info["pid"], info["main_tid"], info["worker_tid"]
    try:
        w = bp_watch_bg(tracing.env, pid, "argus-flag-handshake", "handshake_flag", "--for", 6.5,
                        "--json", "--buffer", tracing.buffer)
        # positive control for the "debug registers free" check: one is taken now
        assert perf_slots_free(main_tid) == 3
        summary, err = finish(w)
        assert summary["mechanism"] == "perf"
        assert summary["watches"][0]["addr"] == info["flag_addr"] and summary["watches"][0]["size"] == 4
        assert summary["writes"] == 3 and summary["reads"] > 100, summary
        assert "watchpoints removed" in err
        assert err.count(" write tid=") == 3, err      # the running log of writes went to stderr
        assert_left_clean(pid)
        tracing.wait_drained()
        _check_flags_graph_diagnosis(tracing, info, summary, tmp_path)
    finally:
        prog.send_signal(signal.SIGUSR1)
        assert prog.wait(timeout=60) == 0


def _check_flags_graph_diagnosis(tracing, info, summary, tmp_path):
    pid, main_tid, worker_tid = info["pid"], info["main_tid"], info["worker_tid"]

    writes, reads = flag_events(tracing, pid)
    assert [(e["tid"], e["value"], e["addr"]) for e in writes] == \
        [(worker_tid, v, info["flag_addr"]) for v in (1, 2, 3)]
    assert len(reads) == summary["reads"]
    assert {e["tid"] for e in reads} == {main_tid}
    values = [e["value"] for e in reads]
    assert values == sorted(values) and set(values) <= {0, 1, 2, 3}   # the flag only grows
    assert values[-1] == 3

    # the graph: write -> read edges from the worker into the poller
    from argus.cli.tracefile import load_trace
    from argus.graphbuild import build_graph
    from argus.graphbuild import graph as G
    trace, _ = load_trace(tracing.buffer)
    g = build_graph(trace.rows, trace_start=trace.first_ts, trace_end=trace.last_ts)
    sel = [k for k in range(len(g.edges)) if g.edges.type[k] == G.EDGE_DATA_FLAG
           and int(g.seg.pid[g.edges.src[k]]) == pid]
    assert len(sel) == 3
    for k in sel:
        assert int(g.threads.tid[g.seg.utid[g.edges.src[k]]]) == worker_tid
        assert int(g.threads.tid[g.seg.utid[g.edges.dst[k]]]) == main_tid
        assert int(g.edges.obj[k]) == info["flag_addr"]

    # the diagnosis: RepeatedYield with flag reads falls through to the writer
    d = tracing.json("debug", "--pid", str(pid), "--auto", "--json")
    assert d["spinning"]["tid"] == main_tid and d["spinning"]["block_type"] == "RepeatedYield"
    assert [f["addr"] for f in d["spinning"]["data_flags"]] == [info["flag_addr"]]
    primary = [r for r in d["root_causes"] if r["primary"]]
    assert len(primary) == 1 and primary[0]["tid"] == worker_tid, d["root_causes"]
    assert primary[0]["block_type"] == "LongRunning"
    assert "data_flag" in json.dumps(d["path"])

    # instruction-level evidence at the root cause (argus lldb-script, paper §5.5): the
    # report has no stack on Linux, so the script starts where the writer thread is now
    try:
        import lldb  # noqa: F401
    except ImportError:
        return
    diag = tmp_path / "diagnosis.json"
    diag.write_text(json.dumps(d))
    tracing.run("lldb-script", "--diagnosis", str(diag), "--max-steps", "40", "--run")
    from argus.scripts.lldb.generate import results_for
    [res] = results_for(tracing.buffer, pid, worker_tid)
    assert res["error"] is None and res["vertex"] == primary[0]["vertex"]
    assert len(res["instructions"]) == 40
    assert {i["function"] for i in res["instructions"]} == {"handshake_worker"}


def test_flag_handshake_lldb_mechanism(argus_cli, tmp_path):
    require_root()
    pytest.importorskip("lldb")
    from argus.tracer.producer import create_buffer
    buf = str(tmp_path / "flags.argus")
    create_buffer(buf, 16 << 20)
    prog, info = start_handshake(2000, [300, 1000], 4000)
    pid, main_tid, worker_tid = info["pid"], info["main_tid"], info["worker_tid"]
    try:
        w = bp_watch_bg(argus_cli.env, pid, "argus-flag-handshake", "handshake_flag", "--for", 3.5,
                        "--json", "--buffer", buf, "--mechanism", "lldb")
        summary, err = finish(w)
        assert summary["mechanism"] == "lldb" and summary["writes"] == 2 and summary["reads"] > 50, summary
        assert_left_clean(pid, slots=3)
    finally:
        assert prog.wait(timeout=60) == 0
    writes, reads = flag_events(argus_cli, pid, buf)
    assert [(e["tid"], e["value"]) for e in writes] == [(worker_tid, 1), (worker_tid, 2)]
    assert {e["tid"] for e in reads} == {main_tid} and len(reads) == summary["reads"]


GIL_SCRIPT = """
import sys, threading, time
def spin(n):
    end = time.monotonic() + n
    while time.monotonic() < end:
        pass
print("ready", flush=True)
sys.stdin.readline()                  # the threads start once bp_watch is armed: new threads are followed
ts = [threading.Thread(target=spin, args=(float(sys.argv[1]),)) for _ in range(2)]
for t in ts: t.start()
print("started", flush=True)
for t in ts: t.join()
"""


def test_cpython_gil_locked(argus_cli, tmp_path):
    """A real poll loop in a program no one here wrote: a thread that wants
    CPython's GIL re-reads `locked` after each 5 ms timed wait (take_gil),
    and the holder clears it when it drops the GIL (drop_gil)."""
    require_root()
    pytest.importorskip("lldb")      # the struct field's offset comes from DWARF through lldb
    if sys.version_info >= (3, 12):
        pytest.skip("Python >= 3.12 keeps the GIL in the interpreter state, not in _PyRuntime.ceval")
    image = sysconfig.get_config_var("INSTSONAME") if sysconfig.get_config_var("Py_ENABLE_SHARED") \
        else os.path.realpath(sys.executable)
    from argus.tracer.producer import create_buffer
    buf = str(tmp_path / "gil.argus")
    create_buffer(buf, 16 << 20)
    # spins for 30 s (killed when done): bp_watch starts slowly with both CPUs busy
    prog = subprocess.Popen([sys.executable, "-c", GIL_SCRIPT, "30"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert prog.stdout.readline().strip() == "ready"
        w = bp_watch_bg(argus_cli.env, prog.pid, image, "_PyRuntime.ceval.gil.locked", "--for", 3,
                        "--json", "--buffer", buf)
        prog.stdin.write("go\n")
        prog.stdin.flush()
        assert prog.stdout.readline().strip() == "started"
        tids = set(int(t) for t in os.listdir(f"/proc/{prog.pid}/task"))
        summary, _ = finish(w)
        assert summary["watches"][0]["size"] == 4
        assert not [s for s in thread_states(prog.pid).values() if s in "tT"]
    finally:
        prog.kill()
        prog.wait(timeout=60)
    writes, reads = flag_events(argus_cli, prog.pid, buf)
    spinners = tids - {prog.pid}
    writers = {e["tid"] for e in writes}
    # both threads, created after bp_watch armed, take and drop the GIL
    assert len(writers & spinners) == 2, (writers, spinners)
    assert {e["value"] for e in writes} == {0, 1}
    assert len(reads) > 10 and {e["tid"] for e in reads} & spinners
    assert summary["classified_by"].get("insn", 0) == len(writes) + len(reads)   # decoded, not guessed


def test_errors_are_one_line(argus_cli, tmp_path):
    require_root()
    from argus.tracer.producer import create_buffer
    buf = str(tmp_path / "e.argus")
    create_buffer(buf, 16 << 20)
    prog, info = start_handshake(100, [100], 30000)
    pid = info["pid"]
    try:
        def err(*args):
            proc = bp_watch(argus_cli.env, *args, "--buffer", buf, "--for", 0.2)
            assert proc.returncode != 0
            return no_traceback(proc)
        assert "no such process 999999999" in err(999999999, "x", "y")
        assert "image libnothere.so is not loaded in process" in err(pid, "libnothere.so", "x")
        assert "symbol no_such_flag not found in" in err(pid, "argus-flag-handshake", "no_such_flag")
        assert "is a function, not a variable" in err(pid, "argus-flag-handshake", "handshake_wait")
        assert "no Argus buffer at" in no_traceback(bp_watch(argus_cli.env, pid, "argus-flag-handshake",
                                                             "handshake_flag", "--buffer", str(tmp_path / "none")))
        # occupy every debug register of the main thread, then ask for one more
        from argus.debugger.perf_bp import perf_event_open
        cell = ctypes.create_string_buffer(64)
        base = (ctypes.addressof(cell) + 7) & ~7
        fds = [perf_event_open(pid, base + 8 * i, 8) for i in range(4)]
        try:
            assert "no free debug register" in err(pid, "argus-flag-handshake", "handshake_flag")
        finally:
            for fd in fds:
                os.close(fd)
        # an unprivileged user against root's process
        drop = ("import os, sys\nfrom argus.cli import bp_watch\n"
                "import argus.debugger.perf_bp, argus.debugger.symbols, argus.tracer.producer\n"
                "os.setgid(65534); os.setuid(65534)\n"
                f"sys.exit(bp_watch.main([{str(pid)!r}, 'argus-flag-handshake', 'handshake_flag', "
                f"'--buffer', {buf!r}]))\n")
        proc = subprocess.run([sys.executable, "-c", drop], env=argus_cli.env, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode != 0 and "permission denied" in no_traceback(proc)
        # after all that the program is untouched
        assert_left_clean(pid)
    finally:
        prog.send_signal(signal.SIGKILL)
        prog.wait()


def test_several_flags_at_once(argus_cli, tmp_path):
    require_root()
    from argus.tracer.producer import create_buffer
    buf = str(tmp_path / "two.argus")
    create_buffer(buf, 16 << 20)
    prog, info = start_handshake(1500, [300], 60000)
    try:
        w = bp_watch_bg(argus_cli.env, info["pid"], "--watch", "argus-flag-handshake:handshake_flag",
                        "--watch", "argus-flag-handshake:handshake_progress", "--for", 3, "--json", "--buffer", buf)
        summary, _ = finish(w)
        assert [x["label"] for x in summary["watches"]] == ["argus-flag-handshake:handshake_flag",
                                                            "argus-flag-handshake:handshake_progress"]
        progress_addr = summary["watches"][1]["addr"]
        assert summary["watches"][1]["size"] == 8
    finally:
        prog.send_signal(signal.SIGUSR1)
        assert prog.wait(timeout=60) == 0
    writes, reads = flag_events(argus_cli, info["pid"], buf)
    flag_writes = [e for e in writes if e["addr"] == info["flag_addr"]]
    progress_writes = [e for e in writes if e["addr"] == progress_addr]
    assert [(e["tid"], e["value"]) for e in flag_writes] == [(info["worker_tid"], 1)]
    assert len(progress_writes) > 20 and {e["tid"] for e in progress_writes} == {info["main_tid"]}
    values = [e["value"] for e in progress_writes]
    assert values == sorted(values)                     # the counter only grows
