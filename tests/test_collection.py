"""End to end: the extended collection (docs/event-schema.md) on the real kernel.

Each test runs real processes under a real argusd and checks what the trace
says about them: channel identities on message syscalls (unix socketpair, TCP
loopback, pipe, eventfd) match across the two ends even when no wakeup joins
them; a sleep's timer fire names the thread that armed it and the wakeup it
caused; a blocked thread's user stack starts inside the libc mapping recorded
for that process; and the bytes per record of a scheduler-heavy benchmark.
"""
import os
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from argus.tracer import reader, schema, syscalls
from support.children import run_python_json

AF_UNIX, AF_INET = 1, 2


def run_child(code, timeout=30):
    """Runs a Python child that prints one JSON line; returns that dict."""
    return run_python_json(code, timeout)


def decode(tracing):
    tracing.wait_drained()
    return reader.decode_file(tracing.buffer, strict=False)


def syscall_enters(trace, pid, name, fd):
    r = trace.rows
    return r[(r["type"] == schema.SYSCALL_ENTER) & (r["pid"] == pid) & (r["nr"] == syscalls.NUMBERS[name])
             & (r["obj"] == fd)]


def channel(trace, pid, name, fd):
    """The last `name` syscall on fd (the interpreter may have used the fd number for
    files before) and the fd_info it joins to on (pid, fd, inode = obj2)."""
    calls = syscall_enters(trace, pid, name, fd)
    assert len(calls) >= 1, f"no {name} call on fd {fd} of pid {pid}"
    call = calls[-1]
    assert call["obj2"] != 0, "syscall_enter without the fd's inode"
    r = trace.rows
    infos = r[(r["type"] == schema.FD_INFO) & (r["pid"] == pid) & (r["aux"] == fd) & (r["obj"] == call["obj2"])
              & (r["ts_ns"] <= call["ts_ns"])]
    assert len(infos) >= 1, f"no fd_info for pid {pid} fd {fd} inode {call['obj2']}"
    # Within the refresh period the identity is written once; later copies repeat it.
    assert len({(int(i["obj2"]), int(i["val"]), int(i["state"])) for i in infos}) == 1
    return infos[-1]


# The sender writes first and exits; the receiver reads only afterwards, so no
# wakeup connects them: only the channel identity can.
TWO_ENDS = """
    import json, os, socket, time
    {setup}
    child = os.fork()
    if child == 0:
        {send}
        os._exit(0)
    os.waitpid(child, 0)
    time.sleep(0.05)
    {recv}
    print(json.dumps({{"sender": child, "receiver": os.getpid(), "send_fd": send_fd,
                      "recv_fd": recv_fd, "ino": os.fstat(recv_fd).st_ino,
                      "extra_fd": globals().get("extra_fd", -1)}}))
"""


def two_ends(setup, send, recv):
    return run_child(TWO_ENDS.format(setup=setup, send=send, recv=recv))


def test_unix_socketpair_peers_cross_match(tracing):
    info = two_ends("a, b = socket.socketpair(); send_fd, recv_fd = a.fileno(), b.fileno()",
                    "a.send(b'ping')", "assert b.recv(16) == b'ping'")
    trace = decode(tracing)
    send = channel(trace, info["sender"], "sendto", info["send_fd"])
    recv = channel(trace, info["receiver"], "recvfrom", info["recv_fd"])
    for end in (send, recv):
        assert end["state"] == schema.FD_SOCKET and end["reason"] == AF_UNIX
        assert end["nr"] == socket.SOCK_STREAM
        assert end["obj2"] == end["obj"]          # a unix socket's own identity is its inode
    assert recv["obj"] == info["ino"]
    assert send["obj"] != recv["obj"]
    assert send["obj2"] == recv["val"] and send["val"] == recv["obj2"]
    # The receiver never waited for the message: no wakeup joins the two ends.
    # Only switch-outs after the send count: before the socketpair existed the
    # interpreter read .pyc files through the same fd number, and with a cold
    # page cache those reads block (CI saw exactly that).
    sent_at = syscall_enters(trace, info["sender"], "sendto", info["send_fd"])[-1]["ts_ns"]
    r = trace.rows
    assert not ((r["type"] == schema.SWITCH_OUT) & (r["tid"] == info["receiver"])
                & (r["reason"] == schema.WAIT_READ) & (r["obj"] == info["recv_fd"])
                & (r["ts_ns"] >= sent_at)).any()


def test_tcp_loopback_tuples_match_swapped(tracing):
    info = two_ends(
        """srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
    cli = socket.create_connection(srv.getsockname()); conn, _ = srv.accept()
    send_fd, recv_fd = cli.fileno(), conn.fileno()
    ports = (cli.getsockname()[1], srv.getsockname()[1])""",
        "cli.sendall(b'ping')", "assert conn.recv(16) == b'ping'")
    trace = decode(tracing)
    send = channel(trace, info["sender"], "sendto", info["send_fd"])
    recv = channel(trace, info["receiver"], "recvfrom", info["recv_fd"])
    for end in (send, recv):
        assert end["state"] == schema.FD_SOCKET and end["reason"] == AF_INET
        assert end["nr"] == socket.SOCK_STREAM
    assert send["obj2"] == recv["val"] and send["val"] == recv["obj2"]
    loopback = 0x7F000001 << 16
    assert int(send["obj2"]) >> 16 << 16 == loopback and int(recv["obj2"]) >> 16 << 16 == loopback
    assert int(send["obj2"]) & 0xFFFF != int(recv["obj2"]) & 0xFFFF    # client port vs server port


def test_pipe_ends_share_the_inode(tracing):
    info = two_ends("recv_fd, send_fd = os.pipe()", "os.write(send_fd, b'ping')",
                    "assert os.read(recv_fd, 16) == b'ping'")
    trace = decode(tracing)
    send = channel(trace, info["sender"], "write", info["send_fd"])
    recv = channel(trace, info["receiver"], "read", info["recv_fd"])
    for end in (send, recv):
        assert end["state"] == schema.FD_PIPE
        assert end["obj"] == info["ino"] and end["obj2"] == info["ino"] and end["val"] == 0


def test_eventfd_ends_share_the_id(tracing):
    info = two_ends("send_fd = recv_fd = os.eventfd(0); extra_fd = os.eventfd(0)",
                    "os.eventfd_write(send_fd, 3)",
                    "assert os.eventfd_read(recv_fd) == 3; os.eventfd_write(extra_fd, 1)")
    trace = decode(tracing)
    send = channel(trace, info["sender"], "write", info["send_fd"])
    recv = channel(trace, info["receiver"], "read", info["recv_fd"])
    assert send["state"] == recv["state"] == schema.FD_EVENTFD
    assert send["obj2"] == recv["obj2"] and send["val"] == recv["val"] == 0
    # All eventfds share one anonymous inode: the id, not the inode, tells them apart.
    other = channel(trace, info["receiver"], "write", info["extra_fd"])
    assert other["state"] == schema.FD_EVENTFD
    assert other["obj"] == recv["obj"] and other["obj2"] != recv["obj2"]


SLEEPER = """
    import json, os, threading, time
    out = {}
    def sleeper():
        out["tid"] = threading.get_native_id()
        time.sleep(0.2)
    t = threading.Thread(target=sleeper); t.start(); t.join()
    print(json.dumps({"pid": os.getpid(), "tid": out["tid"]}))
"""


def test_sleep_timer_fire_names_the_arming_thread_and_its_wakeup(tracing):
    info = run_child(SLEEPER)
    trace = decode(tracing)
    r = trace.rows
    fires = r[(r["type"] == schema.TIMER) & (r["peer_tid"] == info["tid"])]
    assert len(fires) >= 1, "no timer fire armed by the sleeping thread"
    fire = fires[0]
    assert fire["state"] == schema.TIMER_FIRE and fire["peer_pid"] == info["pid"]
    assert fire["nr"] == time.CLOCK_MONOTONIC
    # Armed inside the thread's clock_nanosleep, about 200 ms before the fire.
    sleeps = r[(r["type"] == schema.SYSCALL_ENTER) & (r["tid"] == info["tid"])
               & (r["nr"] == syscalls.NUMBERS["clock_nanosleep"])]
    assert len(sleeps) == 1
    assert sleeps[0]["ts_ns"] <= fire["obj2"] < fire["ts_ns"]
    assert 150e6 < fire["ts_ns"] - fire["obj2"] < 1e9
    # The expiry's wakeup of the sleeper carries the timer id.
    wakes = r[(r["type"] == schema.WAKEUP) & (r["peer_tid"] == info["tid"])
              & (r["ts_ns"] >= fire["ts_ns"]) & (r["ts_ns"] < fire["ts_ns"] + 1_000_000)]
    assert len(wakes) >= 1
    wake = wakes[0]
    assert wake["reason"] == schema.WAKE_HARDIRQ and wake["irq"] == schema.IRQ_TIMER
    assert int(wake["aux"]) & 0xFFFFFFFF == int(fire["obj"]) & 0xFFFFFFFF


BLOCKED_READER = """
    import json, os, threading, time
    r, w = os.pipe()
    threading.Timer(0.3, os.write, (w, b"x")).start()
    print(json.dumps({"pid": os.getpid(), "fd": r}), flush=True)
    os.read(r, 1)
"""


def test_blocked_thread_has_a_user_stack_in_libc(tracing):
    info = run_child(BLOCKED_READER)
    trace = decode(tracing)
    r = trace.rows
    pid = info["pid"]
    outs = r[(r["type"] == schema.SWITCH_OUT) & (r["tid"] == pid) & (r["reason"] == schema.WAIT_READ)
             & (r["obj"] == info["fd"])]
    assert len(outs) >= 1, "the main thread never blocked in read"
    stack_id = int(outs[-1]["obj2"])
    assert stack_id != 0, "blocking switch-out without a user stack id"
    stacks = r[(r["type"] == schema.USER_STACK) & (r["pid"] == pid) & (r["obj2"] == stack_id)]
    assert len(stacks) >= 1
    frames = trace.stack_frames(stacks[0])
    assert 1 <= len(frames) <= schema.USER_STACK_MAX_FRAMES
    maps = r[(r["type"] == schema.MAPPING) & (r["pid"] == pid)]
    assert len(maps) >= 1, "no mappings recorded for a process whose stack was"
    libc = [m for m in maps if "/libc.so" in trace.mapping_path(m) or "/libc-" in trace.mapping_path(m)]
    assert libc, [trace.mapping_path(m) for m in maps]
    assert all(m["aux"] & schema.MAP_EXEC for m in maps)
    # The innermost frame is the syscall wrapper's return address, in libc.
    assert any(m["obj"] <= frames[0] < m["obj2"] for m in libc), (
        hex(int(frames[0])), [(hex(int(m["obj"])), hex(int(m["obj2"]))) for m in libc])


SIZES = {schema.SWITCH_IN: 32, schema.WAKEUP: 40, schema.WAKEUP_NEW: 40,
         schema.SYSCALL_EXIT: 40, schema.FORK: 48, schema.EXEC: 40, schema.EXIT: 32,
         schema.THREAD_NAME: 40, schema.FD_INFO: 56, schema.TIMER: 64, schema.CPU_SAMPLE: 48,
         schema.PROC_SNAPSHOT: 48, schema.LOST: 40, schema.DATA_FLAG_WRITE: 48, schema.DATA_FLAG_READ: 48,
         schema.WAIT_SITE: 96, schema.FUTEX_STATE: 48, schema.FILE_LOCK: 64, schema.NET_IO: 88,
         **{t: 48 for t in schema.PROBE_TYPES}}


def row_bytes(rows):
    """Record bytes per row, recomputed from time-sorted rows (the decoder
    keeps no per-row size); the two rows of a SWITCH record get half of it
    each.  Syscall enters and exits count as separate records: whether a
    pair was one SYSCALL record (schema v4) cannot be told from its rows
    (merged_syscall_candidates bounds it)."""
    size = np.zeros(len(rows), np.int64)
    for ty, n in SIZES.items():
        size[rows["type"] == ty] = n
    # schema v2: a syscall_exit whose ret fits in 32 bits is the 32-byte form
    exits = rows["type"] == schema.SYSCALL_EXIT
    size[exits] = np.where((rows["val"][exits] >= -2**31) & (rows["val"][exits] < 2**31), 32, 40)
    # schema v3: a syscall_enter whose obj and obj2 fit in 32 bits is the 40-byte form
    enters = rows["type"] == schema.SYSCALL_ENTER
    size[enters] = np.where((rows["obj"][enters] < 2**32) & (rows["obj2"][enters] < 2**32), 40, 48)
    out = rows["type"] == schema.SWITCH_OUT
    size[out] = np.where(rows["obj2"][out] != 0, 48, 40)
    # schema v3: a switch-out whose switch-in row follows at the same ts and
    # cpu, naming it as prev, was one SWITCH record (48, 56 with a stack id)
    o = np.flatnonzero(out[:-1])
    nxt = rows[o + 1]
    pair = o[(nxt["type"] == schema.SWITCH_IN) & (nxt["ts_ns"] == rows["ts_ns"][o]) & (nxt["cpu"] == rows["cpu"][o])
             & (nxt["peer_tid"] == rows["tid"][o])]
    half = np.where(rows["obj2"][pair] != 0, 28, 24)
    size[pair], size[pair + 1] = half, half
    stack = np.isin(rows["type"], [schema.USER_STACK, schema.KERNEL_STACK])
    size[stack] = 32 + 8 * rows["aux"][stack].astype(np.int64)
    # schema v5: a NET_IO row decoded from a 40-byte NET_IO_SHORT record (pad != 0)
    net = rows["type"] == schema.NET_IO
    size[net] = np.where(rows["pad"][net] != schema.NET_TUPLE_OWN, 40, 88)
    mapping = rows["type"] == schema.MAPPING
    size[mapping] = 64 + (rows["peer_pid"][mapping].astype(np.int64) + 1 + 7) // 8 * 8
    # proc_ns: the kernel's 40 bytes, plus the cgroup path argusd appends (NUL, padded to 8)
    ns = rows["type"] == schema.PROC_NS
    n = rows["peer_pid"][ns].astype(np.int64)
    size[ns] = 40 + np.where(n > 0, (n + 1 + 7) // 8 * 8, 0)
    assert (size > 0).all(), np.unique(rows["type"][size == 0])
    return size


def merged_syscall_candidates(rows):
    """Enter rows that may have been one SYSCALL record with their exit
    (schema v4): a 40-byte enter whose thread's next row is its exit, on the
    same cpu (no switch in between: the call did not block), with a 32-bit
    ret less than 2^32 ns later.  A superset: the enter may have been flushed
    before the exit (a tick, a full stage)."""
    order = np.argsort(rows["tid"], kind="stable")          # each thread's rows, in time order
    a, b = rows[order[:-1]], rows[order[1:]]
    return int(((a["type"] == schema.SYSCALL_ENTER) & (b["type"] == schema.SYSCALL_EXIT)
                & (a["tid"] == b["tid"]) & (a["cpu"] == b["cpu"]) & (a["nr"] == b["nr"])
                & (a["obj"] < 2**32) & (a["obj2"] < 2**32)
                & (b["val"] >= -2**31) & (b["val"] < 2**31)
                & (b["ts_ns"] - a["ts_ns"] < 2**32)).sum())


def test_bytes_per_event_under_sched_pipe(tracing, capsys):
    proc = subprocess.run(["perf", "bench", "sched", "pipe", "-l", "100000"], capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"perf bench unavailable: {proc.stderr.strip()[:200]}")
    trace = decode(tracing)
    r = trace.rows
    perf_pids = set(r["pid"][(r["type"] == schema.EXEC) & (r["comm"] == b"perf")].tolist())
    forks = r[r["type"] == schema.FORK]
    perf_pids |= set(forks["peer_pid"][np.isin(forks["pid"], list(perf_pids))].tolist())
    is_mine = np.isin(r["pid"], list(perf_pids))
    mine = r[is_mine]
    assert len(mine) > 100000 * 10, len(mine)
    sizes = row_bytes(r)
    whole = trace.bytes / trace.nrows
    # the recomputation is exact but for the SYSCALL records, 24 bytes less
    # than the enter and exit they stand for; most non-blocking calls are one.
    # schema v6: implied NET_IO rows had no record (row_bytes counts 40)
    merged, rest = divmod(int(sizes.sum()) - 40 * trace.net_io_implied - trace.bytes, 24)
    candidates = merged_syscall_candidates(r)
    assert rest == 0 and candidates / 2 < merged <= candidates, (merged, candidates)
    # perf's share of them (at most all of its rows counted separately)
    per_event_max = sizes[is_mine].sum() / len(mine)
    per_event = per_event_max - 24 * merged * merged_syscall_candidates(mine) / candidates / len(mine)
    # `argus status` counts events as rows: records + the second row of each
    # SWITCH and SYSCALL record (header extra_rows, read after the decode:
    # counts only grow)
    st = reader.buffer_stats(tracing.buffer)
    pairs = int(((r["type"][:-1] == schema.SWITCH_OUT) & (r["type"][1:] == schema.SWITCH_IN)
                 & (r["ts_ns"][:-1] == r["ts_ns"][1:]) & (r["cpu"][:-1] == r["cpu"][1:])
                 & (r["peer_tid"][1:] == r["tid"][:-1])).sum())
    assert st["extra_rows"] >= pairs + merged and pairs > 0
    status_per_event = st["bytes_written"] / (st["records_written"] + st["extra_rows"])
    # the daemon counts what it wrote; implied NET_IO rows (schema v6) are the
    # reader's, and a socket-heavy neighbour makes many of them
    written_rows = trace.nrows - trace.net_io_implied
    assert abs(status_per_event - trace.bytes / written_rows) < 1.0, (status_per_event, whole)
    stacks = int((mine["type"] == schema.USER_STACK).sum())
    with capsys.disabled():
        print(f"\nperf bench sched pipe -l 100000: {len(mine)} events (rows) of perf, "
              f"~{per_event:.2f} bytes/event (<= {per_event_max:.2f}; {stacks} user_stack records, "
              f"{merged} of {candidates} non-blocking calls one SYSCALL record); "
              f"whole trace {whole:.2f} bytes/event, status {status_per_event:.2f}")
    assert per_event_max <= 40


FUTEX_OPS = """
    import ctypes, json, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    words = (ctypes.c_uint32 * 2)(0, 0)
    uaddr, uaddr2 = ctypes.addressof(words), ctypes.addressof(words) + 4
    PRIVATE = 128
    def futex(op, val=0, timeout=0, addr2=0, val3=0):
        return libc.syscall(202, ctypes.c_void_p(uaddr), op | PRIVATE, val, ctypes.c_void_p(timeout),
                            ctypes.c_void_p(addr2), val3)
    assert futex(4, 1, 0, uaddr2, 0) == 0          # CMP_REQUEUE: nobody waits, nothing moved
    assert futex(9, 1, 0, 0, 0xFFFFFFFF) == -1     # WAIT_BITSET on a value it does not hold: EAGAIN
    assert futex(6) == 0                           # LOCK_PI on a free word takes it
    assert futex(7) == 0                           # UNLOCK_PI gives it back
    print(json.dumps({"pid": os.getpid(), "uaddr": uaddr, "uaddr2": uaddr2}))
"""


def test_futex_ops_and_second_address(tracing):
    info = run_child(FUTEX_OPS)
    trace = decode(tracing)
    r = trace.rows
    calls = r[(r["type"] == schema.SYSCALL_ENTER) & (r["pid"] == info["pid"])
              & (r["nr"] == syscalls.NUMBERS["futex"]) & (r["obj"] == info["uaddr"])]
    ops = [int(c["aux"]) & schema.FUTEX_CMD_MASK for c in calls]
    assert ops[-4:] == [4, 9, 6, 7], ops
    requeue, bitset, lock, unlock = calls[-4:]
    assert requeue["obj2"] == info["uaddr2"]          # REQUEUE names the second futex
    assert bitset["obj2"] == 1                        # WAIT_BITSET: the expected value
    assert {6, 7} <= schema.FUTEX_LOCK_LIKE and {4, 9} <= schema.FUTEX_CONDITION_LIKE
    assert 4 in schema.FUTEX_REQUEUE_OPS and 9 not in schema.FUTEX_REQUEUE_OPS


NAMED_THREAD = """
    import ctypes, json, os, sys, threading
    libc = ctypes.CDLL(None)
    def set_name(name):
        libc.prctl(15, name.encode(), 0, 0, 0)      # PR_SET_NAME, for the calling thread
    ready, go, done = threading.Event(), threading.Event(), threading.Event()
    out = {}
    def worker():
        set_name("before-trace")
        out["tid"] = threading.get_native_id()
        ready.set(); go.wait()
        set_name("after-trace")
        done.set()
    threading.Thread(target=worker).start()
    ready.wait()
    print(json.dumps({"pid": os.getpid(), "tid": out["tid"]}), flush=True)
    sys.stdin.readline()
    go.set(); done.wait()
"""


def test_thread_names_before_and_after_tracing_starts(argus_cli):
    import json
    from conftest import require_tracing
    require_tracing()
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(NAMED_THREAD)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(child.stdout.readline())
        argus_cli.start()
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
    trace = decode(argus_cli)
    r = trace.rows
    snap = r[(r["type"] == schema.PROC_SNAPSHOT) & (r["tid"] == info["tid"])]
    assert len(snap) == 1 and snap[0]["comm"] == b"before-trace" and snap[0]["pid"] == info["pid"]
    assert snap[0]["state"] == 0                      # not the main thread
    renames = r[(r["type"] == schema.THREAD_NAME) & (r["tid"] == info["tid"])]
    assert [x["comm"] for x in renames] == [b"after-trace"]
    assert renames[0]["ts_ns"] > snap[0]["ts_ns"]


TIMERFD_READER = """
    import ctypes, json, os, threading
    libc = ctypes.CDLL(None, use_errno=True)
    class timespec(ctypes.Structure):
        _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]
    class itimerspec(ctypes.Structure):
        _fields_ = [("interval", timespec), ("value", timespec)]
    fd = libc.timerfd_create(1, 0)                      # CLOCK_MONOTONIC, blocking
    assert fd >= 0
    out = {}
    def reader():
        out["tid"] = threading.get_native_id()
        assert len(os.read(fd, 8)) == 8
    t = threading.Thread(target=reader); t.start()
    import time; time.sleep(0.05)                        # the reader blocks first
    spec = itimerspec(timespec(0, 0), timespec(0, 100_000_000))
    assert libc.timerfd_settime(fd, 0, ctypes.byref(spec), None) == 0
    t.join()
    print(json.dumps({"pid": os.getpid(), "armer": threading.get_native_id(), "reader": out["tid"], "fd": fd}))
"""


def test_timerfd_fire_links_the_arming_thread_to_the_reader(tracing):
    info = run_child(TIMERFD_READER)
    trace = decode(tracing)
    r = trace.rows
    sets = r[(r["type"] == schema.SYSCALL_ENTER) & (r["tid"] == info["armer"])
             & (r["nr"] == syscalls.NUMBERS["timerfd_settime"]) & (r["obj"] == info["fd"])]
    assert len(sets) == 1 and sets[0]["obj2"] == 100_000_000
    # (the arming thread's own sleep before it fired too)
    fires = r[(r["type"] == schema.TIMER) & (r["peer_tid"] == info["armer"]) & (r["obj2"] >= sets[0]["ts_ns"])]
    assert len(fires) == 1, "one fire of the timer armed by timerfd_settime"
    fire = fires[0]
    assert sets[0]["ts_ns"] <= fire["obj2"] and 50e6 < fire["ts_ns"] - fire["obj2"] < 1e9
    # The timer woke the reader, not the thread that armed it: the wakeup names the timer.
    wakes = r[(r["type"] == schema.WAKEUP) & (r["peer_tid"] == info["reader"])
              & (r["ts_ns"] >= fire["ts_ns"]) & (r["ts_ns"] < fire["ts_ns"] + 1_000_000)]
    assert len(wakes) >= 1
    assert wakes[0]["reason"] == schema.WAKE_HARDIRQ and wakes[0]["irq"] == schema.IRQ_TIMER
    assert int(wakes[0]["aux"]) & 0xFFFFFFFF == int(fire["obj"]) & 0xFFFFFFFF


def test_no_stacks_leaves_switch_outs_at_40_bytes(tmp_path):
    """argusd --no-stacks: no stack walks, no user_stack or mapping records, and
    blocking switch-outs without a stack id (40-byte records)."""
    from conftest import native, require_tracing
    require_tracing()
    buffer, sock = tmp_path / "t.argus", tmp_path / "argusd.sock"
    ready_r, ready_w = os.pipe()
    daemon = subprocess.Popen([native("argusd"), "--buffer", str(buffer), "--size", "256M", "--socket",
                               str(sock), "--foreground", "--no-stacks", "--ready-fd", str(ready_w)],
                              pass_fds=(ready_w,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(ready_w)
    try:
        with os.fdopen(ready_r) as ready:
            assert ready.readline().strip() == "ready"
        info = run_child(BLOCKED_READER)
        time.sleep(1.5)
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    trace = reader.decode_file(buffer)
    r = trace.rows
    outs = r[(r["type"] == schema.SWITCH_OUT) & (r["tid"] == info["pid"]) & (r["reason"] == schema.WAIT_READ)]
    assert len(outs) >= 1
    assert not (r["obj2"][r["type"] == schema.SWITCH_OUT]).any()
    assert not np.isin(r["type"], [schema.USER_STACK, schema.MAPPING]).any()
    # the side array holds only the wait sites' fds (WAIT_SITE rows index it too), no stack frame
    assert len(trace.frames) == int(r["peer_tid"][r["type"] == schema.WAIT_SITE].sum())
