"""Unit tests of the kdebug decoder (tracer/kdebug/kdebug_decode.c) and the raw file
importer (tracer/kdebug/kdebug_file.c), run on Linux against the real native
library: kd_buf bytes in (written by kdebug_gen the way xnu lays them out),
Argus records out, checked field by field."""
import pathlib
import random
import re
import struct

import pytest

from argus.tracer import kdebug, reader, schema
from support import kdebug_gen as g

HDR = struct.Struct("<QIIHHHH")
PAYLOAD = {
    schema.SWITCH_OUT: ("<BBHIQ", ("state", "wait_reason", "prio", "syscall_nr", "wait_obj")),
    schema.SWITCH_IN: ("<II", ("prev_tid", "prev_pid")),
    schema.WAKEUP: ("<IIBBHI", ("wakee_pid", "wakee_tid", "context", "irq_kind", "target_cpu", "irq_vec")),
    schema.SYSCALL_ENTER: ("<IiQQ", ("nr", "aux", "obj", "obj2")),
    schema.SYSCALL_EXIT: ("<IIq", ("nr", "reserved", "ret")),
    schema.FORK: ("<II16s", ("child_pid", "child_tid", "comm")),
    schema.EXEC: ("<16s", ("comm",)),
    schema.THREAD_NAME: ("<16s", ("comm",)),
    schema.EXIT: ("<iI", ("exit_code", "is_group_leader")),
    schema.PROC_SNAPSHOT: ("<II16s", ("ppid", "is_main_thread", "comm")),
    schema.LOST: ("<Q", ("count",)),
    schema.TIMER: ("<QqQIIBBHI", ("timer_id", "expires_ns", "arm_ts_ns", "arm_pid", "arm_tid", "kind", "mode",
                                  "clockid", "reserved")),
}
NR_BSD, NR_MACH = 0x20000, 0x10000
NONE = 0xFFFFFFFF

APP, APP_PID, KWORK, IDLE0 = 0x101001, 100, 0x50, 11
MAIN = APP_PID           # the main thread (lowest tid of its process) is reported as tid = pid, as on Linux
HIGH = 0x80000000        # thread ids in the pid range (kernel threads from boot) get the high bit


def parse(data):
    out = []
    off = 0
    while off < len(data):
        ts, pid, tid, typ, size, cpu, _ = HDR.unpack_from(data, off)
        rec = {"ts": ts, "pid": pid, "tid": tid, "type": typ, "cpu": cpu}
        fmt, names = PAYLOAD[typ]
        for k, v in zip(names, struct.unpack_from(fmt, data, off + HDR.size)):
            rec[k] = v.split(b"\0", 1)[0].decode(errors="replace") if isinstance(v, bytes) else v
        out.append(rec)
        assert size % 8 == 0 and size >= HDR.size + struct.calcsize(fmt)
        if typ == schema.SWITCH_OUT:
            assert size == 40          # no user_stack_id: kdebug records no stacks here
        off += size
    return out


def base_trace(**kw):
    t = g.KdTrace(**kw)
    t.kernel_thread(IDLE0).kernel_thread(KWORK)
    t.thread(APP, APP_PID, "App")
    t.thread(0x101002, APP_PID, "App")
    t.thread(0x103001, 1, "launchd")
    t.idle(1, 0, IDLE0)
    return t


def decode(t, **kw):
    return parse(kdebug.decode_records(t.events_bytes(), t.threadmap_bytes(), **kw))


def of_type(recs, typ):
    return [r for r in recs if r["type"] == typ]


def test_threadmap_snapshot_pids_and_main_thread():
    recs = decode(base_trace())
    snaps = {r["tid"]: r for r in of_type(recs, schema.PROC_SNAPSHOT)}
    assert snaps[IDLE0 | HIGH]["pid"] == 0 and snaps[KWORK | HIGH]["pid"] == 0   # kernel_task: valid 1
    assert snaps[1]["pid"] == 1 and snaps[1]["comm"] == "launchd"    # launchd's main thread: tid = pid = 1
    assert snaps[MAIN]["pid"] == APP_PID and snaps[MAIN]["is_main_thread"] == 1
    assert snaps[0x101002]["pid"] == APP_PID and snaps[0x101002]["is_main_thread"] == 0
    assert snaps[MAIN]["comm"] == "App"
    assert APP not in snaps and 0x103001 not in snaps


def test_threadmap_main_threads_of_many_processes_in_any_order():
    """The main thread of each process is its lowest tid, wherever it sits in
    the map (the sort that replaced the pairwise scan keeps this exact)."""
    rng = random.Random(7)
    t = g.KdTrace()
    entries = []
    for pid in range(200, 2200):
        base = 0x200000 + pid * 16
        entries += [(base + k, pid, f"p{pid}") for k in rng.sample(range(1, 9), 3)]
    entries += [(0x60, 1, "kernel_task"), (0x61, 1, "kernel_task"), (0x62, 1, "launchd-ish")]
    rng.shuffle(entries)
    for e in entries:
        t.thread(*e)
    snaps = of_type(decode(t), schema.PROC_SNAPSHOT)
    lowest = {}
    for tid, pid, cmd in entries:
        key = (pid, cmd == "kernel_task")
        lowest[key] = min(lowest.get(key, tid), tid)
    assert len(snaps) == len(entries)
    # one main thread per process (kernel_task's is pid 0), reported as tid = pid ...
    assert sorted(r["pid"] for r in snaps if r["is_main_thread"]) == sorted(
        0 if kernel else pid for pid, kernel in lowest)
    assert all(r["tid"] == r["pid"] for r in snaps if r["is_main_thread"] and r["pid"])
    # ... and every other thread keeps its own id
    others = sorted(tid for tid, pid, cmd in entries if tid != lowest[(pid, cmd == "kernel_task")])
    assert sorted(r["tid"] & ~HIGH for r in snaps if not r["is_main_thread"]) == others


def test_lost_marker_forgets_every_wait():
    """A wait asserted before a lost-events marker is not trusted after it;
    one asserted after the marker is."""
    t = base_trace()
    t.switch(100, 0, IDLE0, APP)
    t.switch(110, 1, IDLE0, 0x101002)
    t.block(200, 0, APP)
    t.lost(300)
    t.switch(400, 0, APP, IDLE0)              # blocked before the gap: unknown, runnable
    t.block(500, 1, 0x101002)
    t.switch(600, 1, 0x101002, IDLE0)         # blocked after the gap: a real wait
    outs = of_type(decode(t), schema.SWITCH_OUT)
    assert [(o["tid"], o["state"]) for o in outs] == [
        (MAIN, schema.STATE_RUNNABLE), (0x101002, schema.STATE_BLOCKED)]


def test_switch_blocked_only_after_mach_block():
    t = base_trace()
    t.switch(100, 0, IDLE0, APP)
    t.switch(200, 0, APP, IDLE0, reason=g.AST_QUANTUM, prev_pri=47)   # preempted
    t.switch(300, 0, IDLE0, APP)
    t.block(400, 0, APP)
    t.switch(400, 0, APP, IDLE0)                                       # a real wait
    recs = decode(t)
    outs = of_type(recs, schema.SWITCH_OUT)
    ins = of_type(recs, schema.SWITCH_IN)
    assert [(o["state"], o["wait_reason"]) for o in outs] == [
        (schema.STATE_RUNNABLE, schema.WAIT_PREEMPTED), (schema.STATE_BLOCKED, schema.WAIT_NONE)]
    assert outs[0]["prio"] == 47 and outs[0]["syscall_nr"] == NONE
    # the idle thread is tid 0, like Linux's idle task, and emits no switch records
    assert all(r["tid"] == MAIN for r in outs + ins)
    assert ins[0]["prev_tid"] == 0 and ins[0]["prev_pid"] == 0
    assert [r["ts"] for r in ins] == [100, 300]


def test_inline_idle_of_a_thread_does_not_make_it_idle():
    t = base_trace()
    t.raw(50, g.MACH_IDLE | g.START, APP, 0, APP)      # older kernels: processor_idle(current thread)
    t.switch(100, 0, APP, 0x101002)
    recs = decode(t)
    assert [r["tid"] for r in of_type(recs, schema.SWITCH_OUT)] == [MAIN]


def test_switch_to_self_is_not_a_switch():
    """thread_invoke may pick the blocking thread itself (woken before it got
    off the CPU): MACH_SCHED with next == prev, which Linux never reports."""
    t = base_trace()
    t.switch(100, 0, IDLE0, APP)
    t.block(200, 0, APP)
    t.switch(200, 0, APP, APP)
    t.switch(300, 0, APP, IDLE0)          # later preempted: not blocked any more
    recs = decode(t)
    outs = of_type(recs, schema.SWITCH_OUT)
    assert [(o["ts"], o["state"]) for o in outs] == [(300, schema.STATE_RUNNABLE)]
    assert len(of_type(recs, schema.SWITCH_IN)) == 1


def test_bsd_exit_names_the_pid_of_a_thread_missing_from_the_map():
    t = base_trace()
    t.bsd(100, 0, 0x107001, "read", 3, 0, 8, 0)
    t.bsd(200, 0, 0x107001, "read", end=True, ret=8, pid=700)
    t.switch(300, 0, 0x107001, IDLE0)
    recs = decode(t)
    assert of_type(recs, schema.SYSCALL_ENTER)[0]["pid"] == 0x107001      # not known yet: its own process
    assert of_type(recs, schema.SYSCALL_EXIT)[0]["pid"] == 700
    assert of_type(recs, schema.SWITCH_OUT)[0]["pid"] == 700


def test_yield_reason_from_ast_and_from_yield_traps():
    t = base_trace()
    t.switch(100, 0, IDLE0, APP)
    t.switch(200, 0, APP, IDLE0, reason=g.AST_YIELD)
    t.switch(300, 0, IDLE0, APP)
    t.mach(350, 0, APP, "swtch_pri")
    t.switch(400, 0, APP, IDLE0)
    recs = decode(t)
    outs = of_type(recs, schema.SWITCH_OUT)
    assert [(o["state"], o["wait_reason"]) for o in outs] == [
        (schema.STATE_RUNNABLE, schema.WAIT_YIELD), (schema.STATE_RUNNABLE, schema.WAIT_YIELD)]
    assert outs[1]["syscall_nr"] == NR_MACH | 59


@pytest.mark.parametrize("name,args,reason,obj", [
    ("psynch_cvwait", (0x6000AA00, 0, 0, 0x6000BB00), schema.WAIT_FUTEX, 0x6000AA00),
    ("ulock_wait", (0x1000002, 0x16F000, 0, 0), schema.WAIT_FUTEX, 0x16F000),
    ("kevent_qos", (9, 0, 0, 0), schema.WAIT_POLL, 9),
    ("read", (5, 0x1000, 64, 0), schema.WAIT_READ, 5),
    ("__semwait_signal", (0, 0, 1, 1), schema.WAIT_SLEEP, 0),
])
def test_bsd_wait_reasons(name, args, reason, obj):
    t = base_trace()
    t.switch(100, 0, IDLE0, APP)
    t.bsd(200, 0, APP, name, *args)
    t.block(300, 0, APP)
    t.switch(300, 0, APP, IDLE0)
    recs = decode(t)
    so = of_type(recs, schema.SWITCH_OUT)[0]
    assert (so["state"], so["wait_reason"], so["wait_obj"]) == (schema.STATE_BLOCKED, reason, obj)
    assert so["syscall_nr"] == NR_BSD | g.BSD[name]
    enter = of_type(recs, schema.SYSCALL_ENTER)[0]
    assert enter["nr"] == NR_BSD | g.BSD[name] and enter["obj"] == obj


@pytest.mark.parametrize("options,reason", [
    (g.MACH_SEND_MSG | g.MACH_RCV_MSG, schema.WAIT_READ),     # an RPC waiting for its reply
    (g.MACH_RCV_MSG, schema.WAIT_POLL),                       # a run loop on its port set
    (g.MACH_SEND_MSG, schema.WAIT_WRITE),
])
def test_mach_msg_wait_reason_follows_options(options, reason):
    t = base_trace()
    t.switch(100, 0, IDLE0, APP)
    t.mach(200, 0, APP, "mach_msg2_trap", 0x7000, options, 0x1C, 0x1503_00001607)
    t.block(300, 0, APP)
    t.switch(300, 0, APP, IDLE0)
    so = of_type(decode(t), schema.SWITCH_OUT)[0]
    assert so["wait_reason"] == reason
    assert so["syscall_nr"] == NR_MACH | 47 and so["wait_obj"] == 0x1503_00001607


def test_syscall_exit_values():
    t = base_trace()
    t.bsd(100, 0, APP, "read", 5, 0, 8, 0)
    t.bsd(200, 0, APP, "read", end=True, error=0, ret=8)
    t.bsd(300, 0, APP, "read", 5, 0, 8, 0)
    t.bsd(400, 0, APP, "read", end=True, error=4, ret=0)     # EINTR
    t.mach(500, 0, APP, "semaphore_wait_trap", 0x1A03)
    t.mach(600, 0, APP, "semaphore_wait_trap", end=True, ret=0xE)   # KERN_ABORTED
    exits = of_type(decode(t), schema.SYSCALL_EXIT)
    assert [(e["nr"], e["ret"]) for e in exits] == [(NR_BSD | 3, 8), (NR_BSD | 3, -4), (NR_MACH | 36, 14)]


def test_syscalls_off_keeps_wait_reasons():
    t = base_trace()
    t.bsd(100, 0, APP, "psynch_cvwait", 0xC0, 0, 0, 0)
    t.block(110, 0, APP)
    t.switch(110, 0, APP, IDLE0)
    recs = decode(t, trace_syscalls=False)
    assert not of_type(recs, schema.SYSCALL_ENTER)
    assert of_type(recs, schema.SWITCH_OUT)[0]["wait_reason"] == schema.WAIT_FUTEX


def test_wakeup_contexts():
    t = base_trace()
    t.make_runnable(100, 1, 0x101002, APP)                  # a user thread: causal
    t.make_runnable(200, 1, KWORK, APP)                   # kernel_task thread
    t.make_runnable(300, 0, IDLE0, APP)                   # the idle thread
    t.intr(400, 2, 0x101002, g.INTR_TIMER)
    t.make_runnable(410, 2, 0x101002, APP)                  # in a timer interrupt over a user thread
    t.intr_end(420, 2, 0x101002)
    t.intr(500, 2, 0x101002, g.INTR_OTHER)
    t.make_runnable(510, 2, 0x101002, APP)
    t.intr_end(520, 2, 0x101002)
    t.make_runnable(600, 2, 0x101002, APP)                  # after the interrupt: task again
    wakes = of_type(decode(t), schema.WAKEUP)
    got = [(w["tid"], w["context"], w["irq_kind"]) for w in wakes]
    assert got == [
        (0x101002, schema.WAKE_TASK, schema.IRQ_NONE),
        (KWORK | HIGH, schema.WAKE_KTHREAD, schema.IRQ_NONE),
        (0, schema.WAKE_IDLE, schema.IRQ_NONE),
        (0x101002, schema.WAKE_HARDIRQ, schema.IRQ_TIMER),
        (0x101002, schema.WAKE_HARDIRQ, schema.IRQ_DEVICE),
        (0x101002, schema.WAKE_TASK, schema.IRQ_NONE),
    ]
    assert all(w["wakee_tid"] == MAIN and w["wakee_pid"] == APP_PID for w in wakes)


def test_timer_armed_in_a_syscall_names_its_armer_at_the_callout():
    CALL, KCALL = 0xCA11_0001_2345_6789, 0xCA11_0002
    t = base_trace(timebase=(125, 3))
    t.bsd(100, 0, APP, "kevent_qos", 9, 0, 0, 0)           # arms a kqueue timer inside the syscall
    t.timer_enter(200, 0, APP, CALL, 5_000_000)
    t.timer_enter(250, 2, KWORK, KCALL, 6_000_000)         # a kernel thread's timer: not followed
    t.intr(5_000_000, 1, 0x101002, g.INTR_TIMER)
    t.timer_callout(5_000_100, 1, 0x101002, CALL)
    t.make_runnable(5_000_200, 1, 0x101002, 0x101002 + 1)
    t.timer_callout(5_000_300, 1, 0x101002, CALL, end=True)
    t.timer_callout(5_000_400, 1, 0x101002, KCALL)
    t.make_runnable(5_000_500, 1, 0x101002, APP)
    t.timer_callout(5_000_600, 1, 0x101002, KCALL, end=True)
    t.intr_end(5_000_700, 1, 0x101002)
    recs = decode(t, timebase=(125, 3))
    timers = of_type(recs, schema.TIMER)
    assert len(timers) == 1
    tm = timers[0]
    assert (tm["timer_id"], tm["arm_pid"], tm["arm_tid"], tm["kind"]) == (CALL, APP_PID, MAIN, 2)
    assert (tm["tid"], tm["cpu"]) == (0x101002, 1)                       # the interrupted task
    assert abs(tm["arm_ts_ns"] - 200) <= 42 and abs(tm["expires_ns"] - 5_000_000) <= 42   # tick rounding
    wakes = of_type(recs, schema.WAKEUP)
    assert [(w["context"], w["irq_kind"], w["irq_vec"]) for w in wakes] == [
        (schema.WAKE_HARDIRQ, schema.IRQ_TIMER, CALL & 0xFFFFFFFF),   # joins the TIMER record
        (schema.WAKE_HARDIRQ, schema.IRQ_TIMER, 0),
    ]


def test_patched_xnu_wakeup_is_exact_and_replaces_stock():
    t = base_trace()
    # a timer fires while a user thread runs, no interrupt event recorded
    t.argus_wakeup(100, 1, 0x101002, APP, 0xE1, flags=0x1 | 0x2)
    t.make_runnable(101, 1, 0x101002, APP)
    t.argus_wakeup(200, 1, 0x101002, APP, 0xE2)             # a real task wakeup
    t.make_runnable(201, 1, 0x101002, APP)
    t.argus_wait(300, 0, APP, 0xFEED)                     # a kernel wait with no syscall
    t.block(301, 0, APP)
    t.switch(301, 0, APP, IDLE0)
    recs = decode(t)
    wakes = of_type(recs, schema.WAKEUP)
    assert [(w["context"], w["irq_kind"]) for w in wakes] == [
        (schema.WAKE_HARDIRQ, schema.IRQ_TIMER), (schema.WAKE_TASK, schema.IRQ_NONE)]
    so = of_type(recs, schema.SWITCH_OUT)[0]
    assert so["wait_obj"] == 0xFEED and so["wait_reason"] == schema.WAIT_NONE     # no syscall: no reason


def test_lifetime_records():
    t = base_trace()
    t.new_thread(100, 0, APP, 0x101003, APP_PID)
    t.new_thread(150, 0, APP, 0x104001, 400)                # a new process (fork / spawn)
    t.exec_(200, 1, 0x104001, 400, "helper-tool")
    t.thread_name(300, 0, 0x101003, "com.apple.main-thread-long-name")
    t.terminate(400, 0, 0x101003)
    t.lost(500)
    recs = decode(t)
    forks = of_type(recs, schema.FORK)
    # a thread of the same process, then the first thread of a new process (tid = its pid)
    assert [(f["tid"], f["child_pid"], f["child_tid"], f["comm"]) for f in forks] == [
        (MAIN, APP_PID, 0x101003, "App"), (MAIN, 400, 400, "App")]
    ex = of_type(recs, schema.EXEC)[0]
    assert (ex["pid"], ex["tid"], ex["comm"]) == (400, 400, "helper-tool")
    tn = of_type(recs, schema.THREAD_NAME)[0]
    assert (tn["pid"], tn["tid"], tn["comm"]) == (APP_PID, 0x101003, "com.apple.main-")
    assert [(e["pid"], e["tid"]) for e in of_type(recs, schema.EXIT)] == [(APP_PID, 0x101003)]
    assert [r["count"] for r in of_type(recs, schema.LOST)] == [1]


def test_timebase_converts_mach_ticks():
    t = base_trace(timebase=(125, 3))
    t.switch(1_000_000_000, 3, IDLE0, APP)                # written as 24_000_000 ticks
    recs = decode(t, timebase=(125, 3))
    si = of_type(recs, schema.SWITCH_IN)[0]
    assert si["ts"] == 1_000_000_000 and si["cpu"] == 3


def _rows_of(path):
    tr = reader.decode_file(str(path))
    return tr.rows


@pytest.mark.parametrize("fmt", ["v1", "v1-4k-pages", "v3", "v3-old-layout"])
def test_file_import_equals_decoding(tmp_path, fmt):
    v1 = fmt.startswith("v1")
    t, _ = g.cross_process_hang(timebase=(1, 1) if v1 else (125, 3), n_baseline=1, hang_s=0.05)
    trace = tmp_path / "t.trace"
    if v1:
        t.write_v1(trace, page_size=4096 if "4k" in fmt else 16384)
    else:
        t.write_v3(trace, current_kernel_layout=(fmt == "v3"))
    out = tmp_path / "t.argus"
    res = kdebug.import_trace(trace, out)
    assert res.format == (1 if v1 else 3)
    assert res.threads == len(t.threads) and res.kd_events == len(t.events)
    expected = parse(kdebug.decode_records(t.events_bytes(), t.threadmap_bytes(), timebase=t.timebase))
    rows = _rows_of(out)
    assert len(rows) == len(expected) == res.records
    got = sorted((int(r["ts_ns"]), int(r["type"]), int(r["tid"])) for r in rows)
    assert got == sorted((e["ts"], e["type"], e["tid"]) for e in expected)


def test_file_import_many_event_chunks(tmp_path):
    t, _ = g.cross_process_hang(n_baseline=1, hang_s=0.05)
    trace = tmp_path / "t.trace"
    t.write_v3(trace, chunk_events=3)                     # hundreds of chunks
    res = kdebug.import_trace(trace, tmp_path / "t.argus")
    assert res.kd_events == len(t.events)
    assert res.records == len(parse(kdebug.decode_records(t.events_bytes(), t.threadmap_bytes())))


def _v3_bytes(tmp_path):
    t, _ = g.cross_process_hang(n_baseline=1, hang_s=0.05)
    p = tmp_path / "ok.trace"
    t.write_v3(p)
    return p.read_bytes()


@pytest.mark.parametrize("mutate,message", [
    (lambda b: b[:-10], "truncated"),                               # cut inside the last event chunk
    (lambda b: b[:100], "truncated"),
    (lambda b: b"\x01\x02\x03\x04" + b[4:], "not a kdebug V1 or V3 trace"),
    (lambda b: struct.pack("<I", 0x55AA0200) + b[4:], "RAW_VERSION2"),
    (lambda b: struct.pack("<I", 0x55AA0300) + b[4:], "artrace"),
    (lambda b: b[:16] + struct.pack("<II", 0, 5) + b[24:], "timebase"),   # corrupt V3 header payload
])
def test_corrupt_v3_is_refused_with_one_line(tmp_path, mutate, message):
    p = tmp_path / "bad.trace"
    p.write_bytes(mutate(_v3_bytes(tmp_path)))
    out = tmp_path / "bad.argus"
    with pytest.raises(kdebug.KdebugError) as e:
        kdebug.import_trace(p, out)
    assert message in e.value.strerror and "\n" not in e.value.strerror
    assert not out.exists()                                          # refused before writing


def test_corrupt_v1_is_refused(tmp_path):
    t, _ = g.cross_process_hang(n_baseline=1, hang_s=0.05)
    p = tmp_path / "v1.trace"
    t.write_v1(p)
    data = p.read_bytes()
    for bad, message in ((data[:-1], "trailing bytes"), (data[:20], "truncated V1 header"),
                         (data[:8 + 16] + b"", "thread map"),
                         (struct.pack("<Ii", 0x55AA0101, -5) + data[8:], "thread count")):
        p.write_bytes(bad)
        with pytest.raises(kdebug.KdebugError) as e:
            kdebug.import_trace(p, tmp_path / "o.argus")
        assert message in e.value.strerror, e.value.strerror


def test_random_events_decode_to_well_formed_records():
    """Traces are untrusted input: random debugids and arguments (thread ids
    that create thousands of threads, garbage names, interrupts that never
    end) must decode without crashing into well-formed records.  Found a
    use-after-free once (thread table growth under a held pointer)."""
    rnd = random.Random(20261121)
    ids = [g.MACH_SCHED, g.MACH_MAKE_RUNNABLE, g.MACH_BLOCK, g.MACH_IDLE | 1, g.MACH_INTR | 1, g.MACH_INTR | 2,
           g.TRACE_DATA_NEWTHREAD, g.TRACE_DATA_EXEC, g.TRACE_STRING_EXEC | 3, g.TRACE_STRING_THREADNAME | 1,
           g.TRACE_DATA_THREAD_TERMINATE, g.TRACE_LOST_EVENTS, g.ARGUS_WAIT, g.ARGUS_WAKEUP,
           g.BSD_SC | 305 << 2 | 1, g.BSD_SC | 305 << 2 | 2, g.MACH_SC | 47 << 2 | 1, g.MACH_SC | 47 << 2 | 2,
           g.DECR_TIMER_ENTER | 1, g.DECR_TIMER_CALLOUT | 1, g.DECR_TIMER_CALLOUT | 2]
    t = g.KdTrace()
    for tid in range(1, 200):
        t.thread(rnd.getrandbits(64), rnd.choice([1, -3, rnd.getrandbits(31)]), "x" * rnd.randrange(25))

    def arg():
        return rnd.choice([0, 1, rnd.randrange(1, 64), rnd.randrange(1, 1 << 20), rnd.getrandbits(64)])

    for i in range(20000):
        debugid = rnd.choice(ids) if rnd.random() < 0.9 else rnd.getrandbits(32)
        t.raw(i, debugid, arg(), rnd.getrandbits(32) if rnd.random() < 0.1 else rnd.randrange(8),
              arg(), arg(), arg(), arg())
    recs = parse(kdebug.decode_records(t.events_bytes(), t.threadmap_bytes(), out_cap=64 << 20))
    assert len(recs) > 1000
    assert all(r["type"] in PAYLOAD for r in recs)


def test_xnu_syscall_names_match_the_decoder_table():
    """Every syscall the decoder's tables know (tracer/kdebug/kdebug_decode.c) has
    the same name in kdebug.XNU_SYSCALL_NAMES, and the generator agrees."""
    src = (pathlib.Path(__file__).resolve().parent / "kdebug" / "kdebug_decode.c").read_text()
    tables = {}
    for table, ns in (("bsd_table", NR_BSD), ("mach_table", NR_MACH)):
        body = src[src.index(f"sc_info {table}[]"):]
        body = body[:body.index("};")]
        for nr, name in re.findall(r"\{\s*(\d+),[^}]*\},\s*/\*\s*([A-Za-z_0-9]+)", body):
            tables[ns | int(nr)] = name
    assert len(tables) > 50
    assert tables == kdebug.XNU_SYSCALL_NAMES
    for name, n in g.BSD.items():
        assert kdebug.xnu_syscall_name(NR_BSD | n) == name
    for name, n in g.MACH.items():
        assert kdebug.xnu_syscall_name(NR_MACH | n) == name
