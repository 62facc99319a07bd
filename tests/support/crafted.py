"""Crafted traces for tests: write schema.ROW_DTYPE row arrays from a readable
description, the way the Linux tracer would record them.

    t = Trace()
    t.thread(100, 100, "app")                    # PROC_SNAPSHOT at trace start
    t.run(100, ms(0))                            # SWITCH_IN
    t.block(100, ms(1), "read", "read", obj=5)   # SYSCALL_ENTER read(5) + SWITCH_OUT blocked
    t.wake(200, 100, ms(3))                      # WAKEUP, waker 200, task context
    t.run(100, ms(3))                            # SWITCH_IN (+ SYSCALL_EXIT of the read)
    g = t.build()                                # build_graph(t.rows())

Invariants: rows() is sorted by ts with insertion order kept for equal
timestamps (like the decoder's stable sort); every tid must be registered with
thread() (or created by fork()) so rows carry the right pid; all times are
integer nanoseconds (ms(), us(), s() convert).  A thread's blocked syscall is
remembered so that the next run() emits its SYSCALL_EXIT (ret 0, or the ret
given to wake_and_run / run).  own() adds ownership edges (who holds what
a thread waits for or polls) to the built graph, the shape the graph core
gives them (graph.EDGE_OWNERSHIP, edges.owner_kind).
"""
import types

import numpy as np

from argus.tracer import schema, syscalls

WAIT_BY_NAME = {v: k for k, v in schema.WAIT_NAMES.items()}
CTX_BY_NAME = {v: k for k, v in schema.WAKE_CONTEXT_NAMES.items()}
IRQ_BY_NAME = {v: k for k, v in schema.IRQ_NAMES.items()}
STATE_BY_NAME = {v: k for k, v in schema.STATE_NAMES.items()}

FUTEX_WAIT_PRIVATE = 128 | schema.FUTEX_WAIT      # | FUTEX_PRIVATE_FLAG, as glibc calls it
FUTEX_WAKE_PRIVATE = 128 | schema.FUTEX_WAKE
ETIMEDOUT = -110


def ms(x):
    return int(round(x * 1_000_000))


def us(x):
    return int(round(x * 1_000))


def s(x):
    return int(round(x * 1_000_000_000))


def nr_of(name_or_nr):
    if name_or_nr is None:
        return schema.SYSCALL_NONE
    if isinstance(name_or_nr, str):
        return syscalls.NUMBERS[name_or_nr]
    return int(name_or_nr)


def _enum(value, table):
    return table[value] if isinstance(value, str) else int(value)


class Trace:
    def __init__(self, start=0):
        self.start = int(start)
        self._rows = []
        self.pid_of = {}
        self._blocked_nr = {}
        self._cpu = {}
        self._owns = []
        self._strings = bytearray()     # the MAPPING paths (the decoder's strings side array)

    # --- threads ---
    def thread(self, pid, tid, comm, snapshot=True, ppid=1, cpu=0):
        """Registers a thread alive at trace start (PROC_SNAPSHOT row)."""
        self.pid_of[tid] = pid
        self._cpu[tid] = cpu
        if snapshot:
            self.row(self.start, tid, schema.PROC_SNAPSHOT, peer_pid=ppid, state=int(pid == tid), comm=comm)
        return self

    def fork(self, parent, child_tid, at, comm, child_pid=None, wake_new=True):
        """FORK by `parent` (+ WAKEUP_NEW of the child at the same time)."""
        child_pid = self.pid_of[parent] if child_pid is None else child_pid
        self.pid_of[child_tid] = child_pid
        self._cpu.setdefault(child_tid, 0)
        self.row(at, parent, schema.FORK, peer_pid=child_pid, peer_tid=child_tid, comm=comm)
        if wake_new:
            self.row(at, parent, schema.WAKEUP_NEW, peer_pid=child_pid, peer_tid=child_tid)
        return self

    def exit(self, tid, at, code=0):
        self.row(at, tid, schema.EXIT, val=code, state=int(self.pid_of[tid] == tid))
        self.row(at, tid, schema.SWITCH_OUT, state=schema.STATE_DEAD)
        return self

    def rename(self, tid, at, comm):
        self.row(at, tid, schema.THREAD_NAME, comm=comm)
        return self

    # --- raw rows ---
    def row(self, ts, tid, type, **fields):
        pid = 0 if tid == 0 else self.pid_of[tid]
        self._rows.append((int(ts), pid, tid, type, fields))
        return self

    # --- scheduling ---
    def fd_info(self, tid, at, fd, kind, local, peer=0, family=0, inode=None):
        """FD_INFO: the channel identity of (tid's process, fd), as the tracer
        writes it the first time the fd is used (kind: schema.FD_* or its name)."""
        kind = kind if isinstance(kind, int) else {v: k for k, v in schema.FD_KIND_NAMES.items()}[kind]
        return self.row(at, tid, schema.FD_INFO, aux=fd, state=kind, reason=family, obj=local if inode is None
                        else inode, obj2=local, val=peer)

    def run(self, tid, at, until=None, preempt=False, ret=0):
        """SWITCH_IN at `at` (plus the SYSCALL_EXIT of the syscall the thread
        blocked in, with `ret`); with `until`, a SWITCH_OUT there: RUNNABLE
        (preempted) when preempt=True; nothing otherwise (the caller blocks or
        yields it)."""
        self.row(at, tid, schema.SWITCH_IN, cpu=self._cpu.get(tid, 0))
        nr = self._blocked_nr.pop(tid, None)
        if nr is not None:
            self.row(at, tid, schema.SYSCALL_EXIT, nr=nr, val=ret)
        if until is not None and preempt:
            self.preempt(tid, until)
        return self

    def busy(self, tid, frm, to, slice_ns=None, gap_ns=0):
        """On CPU from `frm` to `to`, preempted every `slice_ns` (runnable for
        `gap_ns` each time); the thread must be switched in at `frm` already.
        Ends running at `to` (no row at `to`)."""
        if slice_ns:
            t = frm + slice_ns
            while t + gap_ns < to:
                self.preempt(tid, t)
                self.row(t + gap_ns, tid, schema.SWITCH_IN, cpu=self._cpu.get(tid, 0))
                t += gap_ns + slice_ns
        return self

    def preempt(self, tid, at):
        self.row(at, tid, schema.SWITCH_OUT, state=schema.STATE_RUNNABLE, reason=schema.WAIT_PREEMPTED)
        return self

    def syscall(self, tid, at, name, aux=0, obj=0, obj2=0, ret=None, exit_at=None):
        """SYSCALL_ENTER (+ SYSCALL_EXIT at exit_at or at, when ret is given)."""
        nr = nr_of(name)
        self.row(at, tid, schema.SYSCALL_ENTER, nr=nr, aux=aux, obj=obj, obj2=obj2)
        if ret is not None:
            self.row(at if exit_at is None else exit_at, tid, schema.SYSCALL_EXIT, nr=nr, val=ret)
        return self

    def block(self, tid, at, reason, syscall=None, obj=0, aux=0, state="blocked", enter=True):
        """The thread blocks: SYSCALL_ENTER (if a syscall is named and enter)
        and SWITCH_OUT with state BLOCKED, wait reason, syscall nr, wait obj."""
        nr = nr_of(syscall)
        if syscall is not None and enter:
            self.row(at, tid, schema.SYSCALL_ENTER, nr=nr, aux=aux, obj=obj)
        self.row(at, tid, schema.SWITCH_OUT, state=_enum(state, STATE_BY_NAME),
                 reason=_enum(reason, WAIT_BY_NAME), nr=nr, obj=obj)
        if syscall is not None:
            self._blocked_nr[tid] = nr
        return self

    def wake(self, waker, wakee, at, context="task", irq="none"):
        """WAKEUP row: header = waker (0 = the idle task), peer = wakee."""
        self.row(at, waker or 0, schema.WAKEUP, peer_pid=self.pid_of[wakee], peer_tid=wakee,
                 reason=_enum(context, CTX_BY_NAME), irq=_enum(irq, IRQ_BY_NAME))
        return self

    def wake_and_run(self, waker, wakee, at, context="task", irq="none", delay=0, ret=0):
        """wake() then run() `delay` ns later."""
        self.wake(waker, wakee, at, context, irq)
        return self.run(wakee, at + delay, ret=ret)

    def timer_wake(self, wakee, at, delay=0, ret=0):
        """A timer interrupt wakes the thread (culled: hardirq, irq timer)."""
        return self.wake_and_run(0, wakee, at, "hardirq", "timer", delay, ret)

    def yield_(self, tid, at, back=None):
        """sched_yield: SYSCALL_ENTER, SWITCH_OUT RUNNABLE (reason YIELD), and
        back on CPU at `back` (default at + 1 us) with the SYSCALL_EXIT."""
        nr = nr_of("sched_yield")
        back = at + 1000 if back is None else back
        self.row(at, tid, schema.SYSCALL_ENTER, nr=nr)
        self.row(at, tid, schema.SWITCH_OUT, state=schema.STATE_RUNNABLE, reason=schema.WAIT_YIELD, nr=nr)
        self.row(back, tid, schema.SWITCH_IN, cpu=self._cpu.get(tid, 0))
        self.row(back, tid, schema.SYSCALL_EXIT, nr=nr, val=0)
        return self

    def futex_wake(self, tid, at, uaddr, ret=1):
        return self.syscall(tid, at, "futex", aux=FUTEX_WAKE_PRIVATE, obj=uaddr, ret=ret)

    def futex_wait(self, tid, at, uaddr):
        return self.block(tid, at, "futex", "futex", obj=uaddr, aux=FUTEX_WAIT_PRIVATE)

    # --- data flags ---
    def flag_write(self, tid, at, addr, value=1, pc=0):
        return self.row(at, tid, schema.DATA_FLAG_WRITE, obj=addr, val=value, obj2=pc)

    def flag_read(self, tid, at, addr, value=0, pc=0):
        return self.row(at, tid, schema.DATA_FLAG_READ, obj=addr, val=value, obj2=pc)

    # --- ownership ---
    def own(self, holder, victim, at, kind="file_lock", weak=False, obj=0):
        """An ownership edge at `at` from the holder's segment then to the
        victim's (the try or wait at `at`); kind: graph.OWNER_KIND_NAMES."""
        self._owns.append((int(at), holder, victim, kind, bool(weak), int(obj)))
        return self

    def mapping(self, tid, at, start, end, path, pgoff=0, prot=5):
        """A MAPPING record of tid's process: [start, end) maps path from
        file offset pgoff (r-x by default), as argusd writes from /proc/PID/maps."""
        raw = path.encode()
        at_off = len(self._strings)
        self._strings += raw
        return self.row(at, tid, schema.MAPPING, obj=start, obj2=end, val=pgoff, aux=prot,
                        peer_tid=at_off, peer_pid=len(raw))

    def proc_ns(self, pid, at, cgroup_id, path, netns):
        """A PROC_NS record: process pid lives in cgroup path (id) and
        network namespace netns, as the kernel side and argusd write it."""
        raw = path.encode()
        at_off = len(self._strings)
        self._strings += raw + b"\0"
        return self.row(at, pid, schema.PROC_NS, obj=cgroup_id, obj2=netns, peer_tid=at_off, peer_pid=len(raw))

    def go_snapshot(self, at, tid, g, goid, wait, wait_obj=0, locked=True, timer=False, since=0, reason=0):
        """A GO_SNAPSHOT record (tracer/gosnap.py): goroutine g (goid) was
        parked in `wait` when the Go probes attached at `at`; tid is the M
        it is locked to (locked) or the pid."""
        raw = wait.encode()
        at_off = len(self._strings)
        self._strings += raw + b"\0"
        flags = (schema.GO_SNAP_LOCKED if locked else 0) | (schema.GO_SNAP_CHAN if wait_obj else 0) \
            | (schema.GO_SNAP_TIMER if timer else 0)
        return self.row(at, tid, schema.GO_SNAPSHOT, obj=g, obj2=wait_obj, val=since, nr=goid, aux=-1, state=4,
                        reason=reason, irq=flags, peer_tid=at_off, peer_pid=len(raw))

    def lost(self, at, count, kind=schema.LOST_DROPPED):
        return self.row(at, 0, schema.LOST, val=count, state=kind)

    # --- output ---
    def rows(self, until=None):
        """The row array, sorted by ts (stable); with `until`, only rows at or
        before it (a trace cut short while something is still going on)."""
        keep = [k for k in range(len(self._rows)) if until is None or self._rows[k][0] <= until]
        out = np.zeros(len(keep), dtype=schema.ROW_DTYPE)
        order = sorted(keep, key=lambda k: self._rows[k][0])
        for j, k in enumerate(order):
            ts, pid, tid, typ, f = self._rows[k]
            r = out[j]
            r["ts_ns"] = ts
            r["pid"] = pid
            r["tid"] = tid
            r["type"] = typ
            for name, v in f.items():
                if name == "comm":
                    v = v.encode()
                r[name] = v
            if typ == schema.SWITCH_OUT and "nr" not in f:
                r["nr"] = schema.SYSCALL_NONE
        return out

    def build(self, until=None, trace_end=None, **kw):
        """build_graph(self.rows(until)); trace_end defaults to `until`."""
        from argus.graphbuild.builder import build_graph
        if trace_end is None:
            trace_end = until
        if self._strings:
            kw.setdefault("side", types.SimpleNamespace(frames=np.zeros(0, np.uint64), strings=bytes(self._strings)))
        g = build_graph(self.rows(until), trace_end=trace_end, **kw)
        owns = [o for o in self._owns if until is None or o[0] <= until]
        return with_ownership(g, owns) if owns else g


def with_ownership(g, owns):
    """g plus ownership edges [(at, holder_tid, victim_tid, kind, weak, obj)]
    appended to its edge table (a new EventGraph: the CSR indexes are rebuilt)."""
    from argus.graphbuild import graph as G
    kind_by_name = {v: k for k, v in G.OWNER_KIND_NAMES.items()}
    new = []
    for at, holder, victim, kind, weak, obj in owns:
        src = g.segment_at(g.utid_of_tid(holder, at), at)
        dst = g.segment_at(g.utid_of_tid(victim, at), at)
        new.append(dict(src=src, dst=dst, type=G.EDGE_OWNERSHIP, weak=weak, ts=at, src_ts=at, row=-1, ctx=0,
                        obj=obj, wait_ns=0, owner_kind=kind_by_name[kind]))
    # both engines give edges.owner_kind: every column keeps its dtype
    edges = G.Table(**{name: np.concatenate([col, np.asarray([e[name] for e in new], dtype=col.dtype)])
                       for name, col in g.edges.columns().items()})
    return G.EventGraph(rows=g.rows, trace_start=g.trace_start, trace_end=g.trace_end, threads=g.threads,
                        processes=g.processes, seg=g.seg, thread_rows=g.thread_rows,
                        thread_rows_ptr=g.thread_rows_ptr, edges=edges, running=g.running, runnable=g.runnable,
                        yields=g.yields, flags=g.flags, stats=g.stats, roles=g.roles)


# --- scenarios shared by the graphbuild and diagnose tests ---

APP, DAEMON, HELPER = 100, 200, 201
APP_FD, DAEMON_FD = 5, 7
REQ_FUTEX, DONE_FUTEX = 0x7F0000001000, 0x7F0000002000


def client_daemon(n_baseline=4, hang_s=5.0, period_s=1.0, work_us=200, trace_end_s=None):
    """The cross-process scenario.

    app (pid 100, main thread 100) wakes from nanosleep on a timer every
    `period_s`, writes a request on its socket (fd 5), which wakes the daemon
    (pid 200) main thread 200 blocked in read(fd 7), and blocks in read(fd 5).
    The daemon hands the request to its helper thread 201 (futex WAKE on
    REQ_FUTEX) and waits on DONE_FUTEX; the helper works `work_us`, wakes the
    daemon (futex WAKE on DONE_FUTEX) and waits on REQ_FUTEX again; the daemon
    writes the reply (waking the app) and blocks in read(fd 7).  Request k
    (k = 0..n_baseline-1) starts at (1 + k) * period_s; request n_baseline is
    the hang: the helper runs on the CPU for `hang_s` (preempted every 10 ms
    for 100 us).  All three threads are blocked when tracing starts.

    Returns (trace, info) where info has the request start times ("req"), the
    hang's "hang_req", "app_wait_start", "app_wait_end", "daemon_wait_start",
    "daemon_wait_end", "helper_start" and "trace_end".
    """
    t = Trace()
    t.thread(APP, APP, "app")
    t.thread(DAEMON, DAEMON, "daemond")
    t.thread(DAEMON, HELPER, "helper")
    info = {"req": []}
    t.fd_info(APP, 0, APP_FD, "socket", 9001, 9002, family=1)        # a unix socketpair
    t.fd_info(DAEMON, 0, DAEMON_FD, "socket", 9002, 9001, family=1)
    n = n_baseline + 1
    end = None
    for k in range(n):
        T = s(1 + k * period_s)
        info["req"].append(T)
        busy = s(hang_s) if k == n_baseline else us(work_us)
        t.timer_wake(APP, T)
        t.syscall(APP, T + us(10), "write", obj=APP_FD)
        t.wake(APP, DAEMON, T + us(20))
        t.row(T + us(25), APP, schema.SYSCALL_EXIT, nr=nr_of("write"), val=4)
        t.block(APP, T + us(30), "read", "read", obj=APP_FD)
        t.run(DAEMON, T + us(30), ret=4)
        t.futex_wake(DAEMON, T + us(40), REQ_FUTEX)
        t.wake(DAEMON, HELPER, T + us(45))
        t.futex_wait(DAEMON, T + us(60), DONE_FUTEX)
        t.run(HELPER, T + us(55))
        X = T + us(55) + busy
        if k == n_baseline:
            t.busy(HELPER, T + us(55), X, slice_ns=ms(10), gap_ns=us(100))
        t.futex_wake(HELPER, X, DONE_FUTEX)
        t.wake(HELPER, DAEMON, X + us(5))
        t.futex_wait(HELPER, X + us(10), REQ_FUTEX)
        t.run(DAEMON, X + us(15))
        t.syscall(DAEMON, X + us(20), "write", obj=DAEMON_FD)
        t.wake(DAEMON, APP, X + us(25))
        t.row(X + us(28), DAEMON, schema.SYSCALL_EXIT, nr=nr_of("write"), val=4)
        t.block(DAEMON, X + us(35), "read", "read", obj=DAEMON_FD)
        t.run(APP, X + us(30), ret=4)
        t.block(APP, X + us(40), "sleep", "nanosleep")
        if k == n_baseline:
            info.update(hang_req=T, app_wait_start=T + us(30), app_wait_end=X + us(25),
                        daemon_wait_start=T + us(60), daemon_wait_end=X + us(5), helper_start=T + us(45),
                        helper_busy_end=X)
        end = X + us(40)
    info["trace_end"] = s(trace_end_s) if trace_end_s is not None else end + ms(500)
    return t, info


def editor_xorg():
    """Xorg (pid 400), woken by a device interrupt at 1 s, sends an event to the
    editor (pid 300, idle in epoll); the editor's main thread then runs on the
    CPU until 4 s (preempted every 10 ms for 100 us).  Trace ends at 5 s."""
    t = Trace()
    t.thread(300, 300, "editor")
    t.thread(400, 400, "Xorg")
    t.run(300, 0).block(300, ms(1), "poll", "epoll_wait", obj=3)
    t.run(400, 0).block(400, ms(2), "poll", "epoll_wait", obj=9)
    t.wake(0, 400, s(1), "hardirq", "device").run(400, s(1))
    t.syscall(400, s(1) + us(10), "writev", obj=12)
    t.wake(400, 300, s(1) + us(20))
    t.block(400, s(1) + us(40), "poll", "epoll_wait", obj=9)
    t.run(300, s(1) + us(30))
    t.busy(300, s(1) + us(30), s(4), slice_ns=ms(10), gap_ns=us(100))
    t.block(300, s(4), "poll", "epoll_wait", obj=3)
    return t.build(trace_end=s(5))


def demo_like(n=3, hang_s=3.0):
    """The bundled demo's shape: app polls (idle) then write + read; daemon
    main and helper share one condition variable CV: both wait on it and both
    broadcast it, so it looks lock-like and their wakeups are weak edges.
    Request k starts at 1 + k s; request n is the hang (helper busy hang_s).
    Returns the Trace (build it with trace_end)."""
    CV = 0x601040
    t = Trace()
    t.thread(100, 100, "demo-app")
    t.thread(200, 200, "demo-daemon")
    t.thread(200, 201, "demo-helper")
    for k in range(n + 1):
        T = s(1 + k)
        busy = s(hang_s) if k == n else us(50)
        t.wake(0, 100, T, "hardirq", "timer").run(100, T)          # poll timeout
        t.syscall(100, T + us(5), "write", obj=3, ret=4)
        t.wake(100, 200, T + us(6))
        t.block(100, T + us(10), "read", "read", obj=3)
        t.run(200, T + us(8), ret=4)
        t.futex_wake(200, T + us(12), CV)                           # broadcast: helper waits on CV
        t.wake(200, 201, T + us(13))
        t.futex_wait(200, T + us(15), CV)                           # wait for the result
        t.run(201, T + us(14))
        X = T + us(20) + busy
        if k == n:
            t.busy(201, T + us(14), X, slice_ns=ms(4), gap_ns=us(50))
        t.futex_wake(201, X, CV)
        t.wake(201, 200, X + us(1))
        t.futex_wait(201, X + us(2), CV)
        t.run(200, X + us(3))
        t.syscall(200, X + us(4), "write", obj=4, ret=4)
        t.wake(200, 100, X + us(5))
        t.block(200, X + us(6), "read", "read", obj=4)
        t.run(100, X + us(6), ret=4)
        t.block(100, X + us(8), "poll", "poll", obj=7)
    return t


def yield_app(flags, worker_pid=600, executable=None):
    """ui (pid 600, tid 600) wakes from poll on a timer every second, hands
    work to its worker 601 (futex wake) and polls flag F with sched_yield until
    the worker sets it, then goes back to poll.  Rounds 0-2 take 3 ms; in
    round 3 (at 4 s) the worker computes for 3 s.  With flags=False the flag
    accesses are not traced.  worker_pid: the worker's process (600: a
    thread of ui's; else a process sharing the flag's memory).  executable:
    a path mapped as ui's executable (a MAPPING record, no stack).  Returns
    the graph (trace end 8 s)."""
    F, REQ = 0x6000A0, 0x6000B0
    t = Trace()
    t.thread(600, 600, "ui")
    t.thread(worker_pid, 601, "worker")
    if executable:
        t.mapping(600, 0, 0x555555554000, 0x555555556000, executable)
    t.run(600, 0).block(600, ms(1), "poll", "epoll_wait", obj=3)
    for k in range(4):
        T = s(1 + k)
        work = s(3) if k == 3 else ms(2)
        step = ms(10) if k == 3 else ms(1)
        t.wake(0, 600, T, "hardirq", "timer").run(600, T)
        t.futex_wake(600, T + us(5), REQ)
        t.wake(600, 601, T + us(10))
        t.run(601, T + us(20))
        if k == 3:
            t.busy(601, T + us(20), T + work, slice_ns=ms(10), gap_ns=us(100))
        if flags:
            t.flag_write(601, T + work, F, k + 1)
        t.futex_wait(601, T + work + us(10), REQ)
        now = T + us(30)
        while True:
            if flags:
                t.flag_read(600, now, F, k + (1 if now > T + work else 0))
            if now > T + work:
                break
            t.yield_(600, now + us(2), back=now + us(4))
            now += step
        t.block(600, now + us(10), "poll", "epoll_wait", obj=3)
    return t.build(trace_end=s(8))


def split_loop():
    """loop (pid 10, tid 10) is woken by waker (11) at 2 ms; at 3 ms a
    non-blocking epoll_wait return splits its run (event_loop): the vertex
    after the split (loop's third) has no causal in-edge, only the weak
    program-order edge from the vertex before it.  Returns the graph (trace
    end 10 ms)."""
    t = Trace()
    t.thread(10, 10, "loop")
    t.thread(10, 11, "waker")
    t.run(11, 0).run(10, 0)
    t.block(10, ms(1), "read", "read", obj=3)
    t.wake(11, 10, ms(2)).run(10, ms(2))
    t.syscall(10, ms(3), "epoll_wait", obj=4, ret=1)
    t.block(10, ms(4), "read", "read", obj=3)
    return t.build(trace_end=ms(10))


def compare_with_oracle(rows, **kw):
    """Builds rows with the Python reference loop and with the C core
    (splits=False) and asserts identical tables (the oracle test; the
    reference knows neither gaps, splits, message / timer edges, nor probe
    rows but Go's: callback / input cuts are made with splits=False too).
    Returns (python graph, core graph)."""
    from argus.graphbuild.builder import build_graph
    from support.reference import CORE_ONLY_SEG, build_graph as reference_build_graph
    py = reference_build_graph(rows, **kw)
    nat = build_graph(rows, splits=False, **kw)
    for name in py.seg.names:
        if name in ("gap", "split_kind") or name in CORE_ONLY_SEG:      # the oracle knows none of these
            continue
        assert np.array_equal(getattr(py.seg, name), getattr(nat.seg, name)), f"seg.{name}"
        assert getattr(py.seg, name).dtype == getattr(nat.seg, name).dtype, f"seg.{name} dtype"
    keep = np.isin(nat.edges.type, (0, 1, 2, 3))   # program_order, wakeup, spawn, data_flag
    for name in py.edges.names:
        assert np.array_equal(getattr(py.edges, name), getattr(nat.edges, name)[keep]), f"edges.{name}"
    for name in py.threads.names:
        assert list(getattr(py.threads, name)) == list(getattr(nat.threads, name)), f"threads.{name}"
    for table in ("running", "runnable", "yields", "flags"):
        a, b = getattr(py, table), getattr(nat, table)
        for name in a.names:
            assert np.array_equal(getattr(a, name), getattr(b, name)), f"{table}.{name}"
    assert np.array_equal(py.thread_rows, nat.thread_rows)
    assert np.array_equal(py.thread_rows_ptr, nat.thread_rows_ptr)
    assert py.processes == nat.processes
    for key, value in py.stats.items():
        assert nat.stats[key] == value, key
    if keep.all():
        assert np.array_equal(py.in_eid, nat.in_eid) and np.array_equal(py.out_eid, nat.out_eid)
    return py, nat


POLLER, HOLDER, OTHER = 700, 800, 900
LOCK_INODE = 0x4242
LOCK_EX_NB = 6         # flock(LOCK_EX | LOCK_NB)
EAGAIN = -11


def lock_poller(holder="wait", strong=True, other=None, poll_ms=10):
    """A file lock polled by one process and held by another.

    poller (pid 700) tries the lock every `poll_ms` from 0.5 s (flock
    LOCK_EX|LOCK_NB fails with EAGAIN, nanosleep `poll_ms`, timer wakeup) and
    gets it at 3.5 s, then idles in epoll_wait.  holder (pid 800) took the
    lock at 1 ms and then, until 3.5 s: holder="wait" blocks in read(fd 0),
    "busy" runs on the CPU, "idle" blocks in epoll_wait on and off (runs
    normally); it unlocks at 3.5 s.  Each failed try gets an ownership edge
    holder -> poller (file_lock, weak unless `strong`).  other="channel" adds
    thread 900 (pid 900, busy on the CPU the whole time) with a weak
    futex_channel edge on every third try.  Returns (trace, info) with
    "hang_start" (first try), "unlock" and "trace_end" (5 s).
    """
    t = Trace()
    t.thread(POLLER, POLLER, "poller")
    t.thread(HOLDER, HOLDER, "holder")
    t.run(POLLER, 0).block(POLLER, ms(1), "poll", "epoll_wait", obj=3)
    t.run(HOLDER, 0).syscall(HOLDER, us(500), "flock", aux=LOCK_EX_NB, obj=LOCK_INODE, ret=0)
    unlock = s(3.5)
    if holder == "wait":
        t.block(HOLDER, ms(1), "read", "read", obj=0)
        t.timer_wake(HOLDER, unlock - us(50))
    elif holder == "busy":
        t.busy(HOLDER, 0, unlock, slice_ns=ms(10), gap_ns=us(100))
    else:
        for k in range(35):
            t.block(HOLDER, ms(1) + k * ms(100), "poll", "epoll_wait", obj=4)
            t.timer_wake(HOLDER, ms(90) + k * ms(100))
    t.syscall(HOLDER, unlock, "flock", aux=LOCK_EX_NB, obj=LOCK_INODE, ret=0)
    t.block(HOLDER, unlock + us(10), "poll", "epoll_wait", obj=4)
    if other:
        t.thread(OTHER, OTHER, "other")
        t.run(OTHER, 0).busy(OTHER, 0, s(5), slice_ns=ms(10), gap_ns=us(100))
    t.timer_wake(POLLER, s(0.5))
    now, k = s(0.5) + us(10), 0
    while now < unlock:
        t.syscall(POLLER, now, "flock", aux=LOCK_EX_NB, obj=LOCK_INODE, ret=EAGAIN)
        t.own(HOLDER, POLLER, now, "file_lock", weak=not strong, obj=LOCK_INODE)
        if other and k % 3 == 0:
            t.own(OTHER, POLLER, now, "futex_channel", weak=True, obj=0x7000)
        t.block(POLLER, now + us(5), "sleep", "nanosleep")
        t.timer_wake(POLLER, now + ms(poll_ms))
        now += ms(poll_ms) + us(10)
        k += 1
    t.syscall(POLLER, now, "flock", aux=LOCK_EX_NB, obj=LOCK_INODE, ret=0)
    t.block(POLLER, now + us(10), "poll", "epoll_wait", obj=3)
    return t, {"hang_start": s(0.5), "unlock": unlock, "first_try": s(0.5) + us(10), "trace_end": s(5)}


GIL_LIKE_FUTEX = 0x7000


def gil_like(release=True, other_process_wakes=False, worker_pid=10):
    """main (pid 10) polls futex G with 5 ms timed waits from 1 s to 4 s while
    worker 11 (a thread of main's, or of process worker_pid) computes; at
    4 s the worker releases G (FUTEX_WAKE, nobody asleep to wake); with
    other_process_wakes, pid 20 wakes its own G too."""
    G_ = GIL_LIKE_FUTEX
    t = Trace()
    t.thread(10, 10, "main").thread(worker_pid, 11, "worker")
    t.run(11, 0).busy(11, 0, s(4), slice_ns=ms(10), gap_ns=us(100))
    if other_process_wakes:
        t.thread(20, 20, "stranger").run(20, 0)
        t.futex_wake(20, s(2), G_, ret=0)
    t.run(10, 0).block(10, ms(1), "poll", "epoll_wait", obj=3)
    t.timer_wake(10, s(1))
    now = s(1) + us(10)
    while now < s(4):
        t.futex_wait(10, now, G_)
        t.timer_wake(10, now + ms(5), ret=ETIMEDOUT)
        now += ms(5) + us(20)
    if release:
        t.futex_wake(11, s(4), G_, ret=0)
    t.block(11, s(4) + us(5), "poll", "epoll_wait", obj=4)
    t.block(10, now, "poll", "epoll_wait", obj=3)
    return t.build(trace_end=s(5))
