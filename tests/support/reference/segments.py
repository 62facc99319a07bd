"""Per-thread execution segments (the vertices), thread_state intervals, and
the raw records edges are made from.

Algorithm: one pass over the rows in time order, a small state machine per
thread (UNKNOWN -> RUNNING / RUNNABLE / BLOCKED / NEW -> DEAD).  This is the
per-event Python loop the C core (graphbuild/core/) replaced; it is kept as
the test oracle (support.reference.build_graph; native_core_test.py checks
that the core with splits=False produces the same tables).  Interface:
`build_segments(rows, tracker, nrs, trace_start, trace_end) -> SegmentResult`.

  A segment of thread T starts when T becomes runnable after a blocking wait:
  at the WAKEUP that ends the wait (START_WAKEUP), or at its SWITCH_IN when no
  wakeup was seen (START_SWITCH_IN), or at thread creation (FORK /
  WAKEUP_NEW: START_THREAD), or at trace start for a thread already running
  (START_TRACE).  It ends at the next blocking switch-out (SWITCH_OUT with
  state BLOCKED, BLOCKED_IO or OTHER = stopped/traced), at the thread's last
  switch-out (state DEAD; after its EXIT row the thread still runs, e.g. to
  wake its parent), or at trace end (at EXIT if the DEAD switch-out is
  missing).  Rows of a tid after its DEAD switch-out belong to a new thread
  (tid reuse, stats["tid_reuse"]).  The blocking wait that ends a segment belongs
  to it: wait_start (= end), wait_end (the next wakeup of T, else the next
  switch-in, else trace end with wait_ongoing), wait_state, wait_reason,
  wait_nr (syscall in progress), wait_obj (fd / futex uaddr), wait_aux (the
  syscall's aux, e.g. futex op), wait_done (the syscall's exit is the first
  syscall row after the wait: the wait completed the syscall; False for a
  spurious wakeup after which the kernel put the thread back to sleep inside
  the same syscall) and wait_timedout (that exit returned -ETIMEDOUT).

  Preemptions (SWITCH_OUT RUNNABLE) and yields do not end a segment; they are
  counted (preempts, yields) and their runnable time accumulates in
  runnable_ns.  A yield is a sched_yield SYSCALL_ENTER, or a SWITCH_OUT
  RUNNABLE with wait_reason YIELD outside a recorded sched_yield syscall.

  Only the first wakeup after a blocking switch-out ends the wait; wakeups of
  a thread that is running or runnable are ignored (stats["ignored_wakeups"]).

  A thread whose first row shows it blocked (it is the wakee of a WAKEUP), or
  that appears only in PROC_SNAPSHOT, gets a placeholder segment
  START_PRE_TRACE at trace start whose wait started before the trace
  (wait_known = False, reason NONE); the snapshot-only thread's wait is
  ongoing for the whole trace.

  The wakeup context is kept on the new segment (start_ctx, start_irq,
  start_row); edges.py decides culling.  WAKEUP rows whose waker tid is 0 (the
  idle task) are IDLE context whatever the row says.

Invariants: see graph.py.  Segments are returned sorted by (utid, start):
every thread's segments are contiguous and time ordered.  Each row is owned
by at most one thread (its header tid; tid 0 owns none); seg.row_lo/row_hi
index into thread_rows, which lists each thread's rows in time order.
"""
import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.graphbuild.threads import decode_comm

UNKNOWN, RUNNING, RUNNABLE, BLOCKED, NEW, DEAD = range(6)

# the futex uses the channel learning counts (as the C core's on_syscall):
# the plain and bitset forms only, not schema.FUTEX_WAIT_OPS / _WAKE_OPS
FUTEX_WAIT_OPS = (schema.FUTEX_WAIT, schema.FUTEX_WAIT_BITSET)
FUTEX_WAKE_OPS = (schema.FUTEX_WAKE, schema.FUTEX_WAKE_BITSET)
ETIMEDOUT = 110
# a signal interrupted the syscall: -EINTR, -ERESTARTSYS, -ERESTARTNOINTR,
# -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK (the C core's signal_interrupted)
SIGNAL_RETURNS = (-4, -512, -513, -514, -516)

_BLOCKING = (schema.STATE_BLOCKED, schema.STATE_BLOCKED_IO, schema.STATE_OTHER)


class _Thread:
    __slots__ = ("utid", "pid", "state", "seg", "first_seg", "cpu", "rbl", "preempts", "yields", "nsys",
                 "on_since", "rbl_since", "cur_nr", "cur_aux", "cur_obj",
                 "last_nr", "last_aux", "last_obj", "pending_exit", "rows", "row_lo", "exit_ts",
                 "cpu_mark", "rbl_mark", "go_g", "go_last", "go_seg", "sig_seg")

    def __init__(self, utid, pid):
        self.utid = utid
        self.pid = pid
        self.state = UNKNOWN
        self.seg = -1
        self.first_seg = -1
        self.cpu = self.rbl = self.preempts = self.yields = self.nsys = 0
        self.on_since = self.rbl_since = 0
        self.cur_nr = self.last_nr = schema.SYSCALL_NONE
        self.cur_aux = self.cur_obj = self.last_aux = self.last_obj = 0
        self.pending_exit = -1
        self.exit_ts = -1
        self.rows = []
        self.row_lo = 0
        # a split's time so far went to the segment it ended (-1: none this run)
        self.cpu_mark = self.rbl_mark = -1
        # Go: the goroutine it runs (0 none), the last one it ran, its segment + 1 (0 none)
        self.go_g = self.go_last = self.go_seg = 0
        # the segment + 1 whose opening wait a signal interrupted (0 none)
        self.sig_seg = 0


class SegmentResult:
    """Output of build_segments (all seg ids already in final, sorted order).

    seg: Table; thread_rows: int64 array; running / runnable / yields / flags:
    Tables; wakes: Table of WAKEUP rows that ended a wait (row, ts, waker_utid,
    waker_seg, wakee_utid, dst (new segment), prev (the segment whose wait
    ended), ctx, irq, waker_cur_nr, waker_last_nr, waker_last_aux,
    waker_last_obj); spawns: Table (src, dst, ts, row); futex_use: dict
    (pid, uaddr) -> (set of utids that waited, set of utids that woke);
    stats: dict.
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)


def build_segments(rows, tracker, nrs, trace_start, trace_end):
    """rows: ROW_DTYPE array sorted by ts_ns.  tracker: ThreadTracker (filled as
    a side effect).  nrs: object with sets yield_nrs, futex_nrs."""
    t0, t_end = int(trace_start), int(trace_end)
    yield_nrs = frozenset(nrs.yield_nrs)
    futex_nrs = frozenset(nrs.futex_nrs)
    NONE_NR = schema.SYSCALL_NONE

    # Segment columns, creation order.
    S_utid, S_start, S_end, S_skind, S_sctx, S_sirq, S_srow = [], [], [], [], [], [], []
    S_ekind, S_wstate, S_wreason, S_wnr, S_wobj, S_waux, S_wend = [], [], [], [], [], [], []
    S_ongoing, S_timedout, S_known, S_done = [], [], [], []
    S_cpu, S_rbl, S_pre, S_yld, S_nsys, S_rlo, S_rhi = [], [], [], [], [], [], []
    # thread_state intervals
    R_utid, R_start, R_end = [], [], []
    Q_utid, Q_start, Q_end = [], [], []
    # yields
    Y_utid, Y_ts, Y_seg = [], [], []
    # wake records
    W = {k: [] for k in ("row", "ts", "waker_utid", "waker_seg", "wakee_utid", "dst", "prev", "ctx", "irq",
                         "waker_cur_nr", "waker_last_nr", "waker_last_aux", "waker_last_obj",
                         "go", "src_ts", "go_obj")}
    # Go: (pid, g) -> its last GO_READY; goroutine edges into cut segments
    # (src, dst, ts, src_ts, row, g), creation ids
    go_ready, GE = {}, []
    P_src, P_dst, P_ts, P_row = [], [], [], []
    F = {k: [] for k in ("row", "utid", "pid", "seg", "ts", "addr", "value", "write")}
    futex_use = {}
    stats = {"ignored_wakeups": 0, "lost_records": 0, "lost_rows": 0, "tid_reuse": 0, "go_edges": 0,
             "unreported_switches": 0}

    threads = []  # utid -> _Thread
    by_tid = {}   # tid -> _Thread of its current utid (fast path)

    def thread(utid, pid):
        while len(threads) <= utid:
            u = len(threads)
            threads.append(_Thread(u, tracker.pid[u]))
        T = threads[utid]
        T.pid = pid or T.pid
        tid = tracker.tid[utid]
        if tracker.tid_to_utid.get(tid) == utid:
            by_tid[tid] = T
        return T

    def open_seg(T, ts, kind, ctx=-1, irq=0, row=-1):
        sid = len(S_utid)
        S_utid.append(T.utid); S_start.append(ts); S_end.append(ts)
        S_skind.append(kind); S_sctx.append(ctx); S_sirq.append(irq); S_srow.append(row)
        S_ekind.append(G.END_TRACE); S_wstate.append(0); S_wreason.append(0); S_wnr.append(NONE_NR)
        S_wobj.append(0); S_waux.append(0); S_wend.append(-1)
        S_ongoing.append(False); S_timedout.append(False); S_known.append(True); S_done.append(False)
        S_cpu.append(0); S_rbl.append(0); S_pre.append(0); S_yld.append(0); S_nsys.append(0)
        S_rlo.append(len(T.rows)); S_rhi.append(len(T.rows))
        T.seg = sid
        if T.first_seg < 0:
            T.first_seg = sid
        T.cpu = T.rbl = T.preempts = T.yields = T.nsys = 0
        return sid

    def flush(T, end, ekind):
        s = T.seg
        S_end[s] = end; S_ekind[s] = ekind
        S_cpu[s] = T.cpu; S_rbl[s] = T.rbl; S_pre[s] = T.preempts; S_yld[s] = T.yields; S_nsys[s] = T.nsys
        S_rhi[s] = len(T.rows)

    def pre_trace(T):
        s = open_seg(T, t0, G.START_PRE_TRACE)
        flush(T, t0, G.END_BLOCKED)
        S_known[s] = False
        S_wreason[s] = schema.WAIT_NONE
        T.state = BLOCKED

    def start_running(T, ts):
        """First own row of an UNKNOWN thread: it was running since trace start."""
        open_seg(T, t0, G.START_TRACE)
        T.state = RUNNING
        T.on_since = t0

    def stop_running(T, ts):
        if T.state == RUNNING:
            since = max(T.on_since, T.cpu_mark)
            if ts > since:
                T.cpu += ts - since
            R_utid.append(T.utid); R_start.append(T.on_since); R_end.append(max(ts, T.on_since))

    def stop_runnable(T, ts):
        if T.state in (RUNNABLE, NEW) and T.rbl_since >= 0:
            since = max(T.rbl_since, T.rbl_mark)
            if ts > since:
                T.rbl += ts - since
            Q_utid.append(T.utid); Q_start.append(T.rbl_since); Q_end.append(max(ts, T.rbl_since))

    def end_wait(T, ts):
        s = T.seg
        S_wend[s] = ts
        T.pending_exit = s

    def own(tid, pid, ts, switch_out=False):
        """The thread named by a row's header, as a running thread."""
        utid = tracker.lookup(tid, pid, ts)
        T = thread(utid, pid)
        if T.state == DEAD and not switch_out:
            # tid reused without a FORK in the trace: a new thread instance.
            stats["tid_reuse"] += 1
            utid = tracker.new_instance(tid, pid, ts)
            T = thread(utid, pid)
            open_seg(T, ts, G.START_THREAD)
            T.state = RUNNING
            T.on_since = ts
        if T.state == UNKNOWN and not switch_out:
            start_running(T, ts)
        if T.state == BLOCKED and ts > S_end[T.seg]:
            # its own row after it blocked: a switch-in the kernel did not report
            end_wait(T, ts)
            open_seg(T, ts, G.START_SWITCH_IN)
            T.state = RUNNING
            T.on_since = ts
        return T

    def lookup_thread(tid, pid, ts):
        return thread(tracker.lookup(tid, pid, ts), pid)

    def split_at(T, ts):
        """An exact cut of a running (or runnable) thread's segment at ts: the
        row at ts opens the new segment (the C core's split_at)."""
        if T.state == RUNNING:
            since = max(T.on_since, T.cpu_mark)
            if ts > since:
                T.cpu += ts - since
            T.cpu_mark = ts
        elif T.state in (RUNNABLE, NEW):
            since = max(T.rbl_since, T.rbl_mark)
            if ts > since:
                T.rbl += ts - since
            T.rbl_mark = ts
        else:
            return
        flush(T, ts, G.END_SPLIT)
        open_seg(T, ts, G.START_SPLIT)

    def go_execute(T, i, ts, g):
        """GO_EXECUTE (the C core's on_go_execute, argus_graph_probes.c)."""
        h = go_ready.get((T.pid, g))
        readied = h is not None and not h["used"] and h["utid"] >= 0 and h["utid"] != T.utid
        if h is not None and not h["used"] and h["utid"] == T.utid:
            h["used"] = True
        if T.go_last == g and not readied:
            T.go_g = g
            T.rows.append(i)
            return
        w = None
        if T.seg >= 0 and (T.go_seg == T.seg + 1 or T.sig_seg == T.seg + 1):
            if S_start[T.seg] != ts or S_rlo[T.seg] != len(T.rows):
                split_at(T, ts)
        elif T.seg >= 0 and S_skind[T.seg] == G.START_WAKEUP:
            for k in range(len(W["dst"]) - 1, -1, -1):
                if W["ts"][k] < S_start[T.seg]:
                    break
                if W["dst"][k] == T.seg:
                    w = k
                    break
        T.rows.append(i)
        T.go_g = T.go_last = g
        T.go_seg = T.seg + 1
        if not readied or T.seg < 0:
            return
        h["used"] = True
        stats["go_edges"] += 1
        if w is not None:
            W["go"][w] = True
            W["waker_utid"][w] = h["utid"]; W["waker_seg"][w] = h["seg"]
            W["src_ts"][w] = h["ts"]; W["row"][w] = h["row"]; W["ctx"][w] = schema.WAKE_TASK
            W["go_obj"][w] = g
            return
        GE.append((h["seg"], T.seg, ts, h["ts"], h["row"], g))

    def futex_used(pid, uaddr, utid, waits):
        e = futex_use.get((pid, uaddr))
        if e is None:
            e = futex_use[(pid, uaddr)] = (set(), set())
        e[0 if waits else 1].add(utid)

    c_ts = rows["ts_ns"].astype(np.int64).tolist()
    c_pid = rows["pid"].tolist()
    c_tid = rows["tid"].tolist()
    c_type = rows["type"].tolist()
    c_state = rows["state"].tolist()
    c_reason = rows["reason"].tolist()
    c_irq = rows["irq"].tolist()
    c_nr = rows["nr"].tolist()
    c_ppid = rows["peer_pid"].tolist()
    c_ptid = rows["peer_tid"].tolist()
    c_aux = rows["aux"].tolist()
    c_val = rows["val"].tolist()
    c_obj = rows["obj"].tolist()
    c_comm = rows["comm"].tolist()

    SYSCALL_ENTER, SYSCALL_EXIT = schema.SYSCALL_ENTER, schema.SYSCALL_EXIT
    SWITCH_OUT, SWITCH_IN = schema.SWITCH_OUT, schema.SWITCH_IN
    WAKEUP, WAKEUP_NEW = schema.WAKEUP, schema.WAKEUP_NEW

    for i in range(len(c_ts)):
        typ = c_type[i]
        ts = c_ts[i]
        tid = c_tid[i]
        if typ == SYSCALL_ENTER:
            if tid == 0:
                continue
            T = by_tid.get(tid)
            if T is None or T.state in (UNKNOWN, DEAD, BLOCKED):
                T = own(tid, c_pid[i], ts)
            T.rows.append(i)
            nr = c_nr[i]
            T.nsys += 1
            T.pending_exit = -1
            T.cur_nr = nr
            if nr in yield_nrs:
                T.yields += 1
                Y_utid.append(T.utid); Y_ts.append(ts); Y_seg.append(T.seg)
                continue
            T.cur_aux = T.last_aux = c_aux[i]
            T.cur_obj = T.last_obj = c_obj[i]
            T.last_nr = nr
            if nr in futex_nrs:
                op = c_aux[i] & schema.FUTEX_CMD_MASK
                if op in FUTEX_WAKE_OPS:
                    futex_used(T.pid, c_obj[i], T.utid, False)
                elif op in FUTEX_WAIT_OPS:
                    futex_used(T.pid, c_obj[i], T.utid, True)
        elif typ == SYSCALL_EXIT:
            if tid == 0:
                continue
            T = by_tid.get(tid)
            if T is None or T.state in (UNKNOWN, DEAD, BLOCKED):
                T = own(tid, c_pid[i], ts)
            T.rows.append(i)
            p = T.pending_exit
            if p >= 0 and c_nr[i] == S_wnr[p]:
                S_done[p] = True
                if c_val[i] == -ETIMEDOUT:
                    S_timedout[p] = True
                if c_val[i] in SIGNAL_RETURNS:   # the handler runs before a goroutine here
                    T.sig_seg = T.seg + 1
            T.pending_exit = -1
            T.cur_nr = NONE_NR
        elif typ == SWITCH_OUT:
            if tid == 0:
                continue
            T = by_tid.get(tid)
            if T is None or T.state in (UNKNOWN, BLOCKED):
                T = own(tid, c_pid[i], ts, switch_out=True)
            if T.state == DEAD:
                continue
            if T.state == UNKNOWN:
                start_running(T, ts)
            T.rows.append(i)
            st = c_state[i]
            stop_running(T, ts)
            if st == schema.STATE_RUNNABLE:
                if c_reason[i] == schema.WAIT_YIELD or T.cur_nr in yield_nrs:
                    if T.cur_nr not in yield_nrs:
                        T.yields += 1
                        Y_utid.append(T.utid); Y_ts.append(ts); Y_seg.append(T.seg)
                else:
                    T.preempts += 1
                T.state = RUNNABLE
                T.rbl_since = ts
            elif st == schema.STATE_TRACED:          # a tracer's stop: runnable time, no boundary
                T.state = RUNNABLE
                T.rbl_since = ts
            elif st in _BLOCKING and T.exit_ts < 0:
                s = T.seg
                flush(T, ts, G.END_BLOCKED)
                nr = c_nr[i]
                if nr == NONE_NR:
                    nr = T.cur_nr
                obj = c_obj[i]
                if T.cur_nr == nr and nr != NONE_NR:
                    S_waux[s] = T.cur_aux
                    if obj == 0:
                        obj = T.cur_obj
                S_wstate[s] = st; S_wreason[s] = c_reason[i]; S_wnr[s] = nr; S_wobj[s] = obj
                if c_reason[i] == schema.WAIT_FUTEX:
                    futex_used(T.pid, obj, T.utid, True)
                T.state = BLOCKED
            else:  # DEAD (or OTHER states after EXIT): the thread is gone
                flush(T, ts, G.END_EXIT)
                T.state = DEAD
                if T.exit_ts < 0:
                    tracker.exit(T.utid, ts)
        elif typ == SWITCH_IN:
            if tid == 0:
                continue
            utid = tracker.lookup(tid, c_pid[i], ts)
            T = thread(utid, c_pid[i])
            if T.state == DEAD:
                stats["tid_reuse"] += 1
                utid = tracker.new_instance(tid, c_pid[i], ts)
                T = thread(utid, c_pid[i])
                open_seg(T, ts, G.START_THREAD)
                T.state = NEW
                T.rbl_since = ts
            T.rows.append(i)
            if T.state == UNKNOWN:
                # Was runnable (or blocked with its wakeup lost) at trace start.
                open_seg(T, t0, G.START_TRACE)
                S_rlo[T.seg] = len(T.rows) - 1
            elif T.state in (RUNNABLE, NEW):
                stop_runnable(T, ts)
            elif T.state == BLOCKED:
                end_wait(T, ts)
                open_seg(T, ts, G.START_SWITCH_IN)
                S_rlo[T.seg] = len(T.rows) - 1   # the switch-in row opens it
            # RUNNING: a switch-out was lost; restart the on-CPU clock.
            T.state = RUNNING
            T.on_since = ts
        elif typ == WAKEUP or typ == WAKEUP_NEW:
            ctx = c_reason[i] if tid != 0 else schema.WAKE_IDLE
            if tid != 0:
                # an interrupt's wakeup names whoever it interrupted: not proof that one runs
                Wk = lookup_thread(tid, c_pid[i], ts)
                if ctx == schema.WAKE_TASK or Wk.state != BLOCKED:
                    Wk = own(tid, c_pid[i], ts)
                Wk.rows.append(i)
                waker_utid, waker_seg = Wk.utid, Wk.seg
            else:
                Wk = None
                waker_utid = waker_seg = -1
            wtid = c_ptid[i]
            if wtid == 0:
                continue
            wutid = tracker.lookup(wtid, c_ppid[i], ts)
            E = thread(wutid, c_ppid[i])
            if typ == WAKEUP_NEW:
                if E.state == UNKNOWN or E.state == DEAD:
                    if E.state == DEAD:
                        stats["tid_reuse"] += 1
                        wutid = tracker.new_instance(wtid, c_ppid[i], ts)
                        E = thread(wutid, c_ppid[i])
                    open_seg(E, ts, G.START_THREAD, ctx, c_irq[i], i)
                    tracker.mark_created(E.utid, waker_utid, ts)
                if E.state in (UNKNOWN, NEW):
                    E.state = RUNNABLE
                    E.rbl_since = ts
                if waker_seg >= 0 and ctx == schema.WAKE_TASK:
                    first = E.first_seg
                    P_src.append(waker_seg); P_dst.append(first); P_ts.append(ts); P_row.append(i)
                continue
            if E.state == UNKNOWN:
                pre_trace(E)
            if E.state == BLOCKED:
                prev = E.seg
                end_wait(E, ts)
                dst = open_seg(E, ts, G.START_WAKEUP, ctx, c_irq[i], i)
                E.state = RUNNABLE
                E.rbl_since = ts
                W["row"].append(i); W["ts"].append(ts)
                W["waker_utid"].append(waker_utid); W["waker_seg"].append(waker_seg)
                W["wakee_utid"].append(E.utid); W["dst"].append(dst); W["prev"].append(prev)
                W["ctx"].append(ctx); W["irq"].append(c_irq[i])
                W["go"].append(False); W["src_ts"].append(ts); W["go_obj"].append(0)
                if Wk is not None:
                    W["waker_cur_nr"].append(Wk.cur_nr); W["waker_last_nr"].append(Wk.last_nr)
                    W["waker_last_aux"].append(Wk.last_aux); W["waker_last_obj"].append(Wk.last_obj)
                else:
                    W["waker_cur_nr"].append(NONE_NR); W["waker_last_nr"].append(NONE_NR)
                    W["waker_last_aux"].append(0); W["waker_last_obj"].append(0)
            elif E.state == NEW:
                E.state = RUNNABLE
                E.rbl_since = ts
            else:
                stats["ignored_wakeups"] += 1
        elif typ == schema.FORK:
            if tid == 0:
                continue
            Pt = own(tid, c_pid[i], ts)
            Pt.rows.append(i)
            cutid, new = tracker.fork(Pt.utid, c_ptid[i], c_ppid[i], decode_comm(c_comm[i]), ts)
            C = thread(cutid, c_ppid[i])
            if C.state == UNKNOWN:
                open_seg(C, ts, G.START_THREAD, -1, 0, i)
                C.state = NEW
                C.rbl_since = ts
            P_src.append(Pt.seg); P_dst.append(C.first_seg); P_ts.append(ts); P_row.append(i)
        elif typ == schema.EXIT:
            if tid == 0:
                continue
            T = own(tid, c_pid[i], ts)
            T.rows.append(i)
            # The exiting thread still runs (it wakes its parent, ...) until
            # its last switch-out (state DEAD), which ends the segment.
            if T.state == BLOCKED:
                end_wait(T, ts)
                open_seg(T, ts, G.START_SWITCH_IN)
                T.state = RUNNING
                T.on_since = ts
            T.exit_ts = ts
            tracker.exit(T.utid, ts)
        elif typ == schema.PROC_SNAPSHOT:
            if tid == 0:
                continue
            utid = tracker.lookup(tid, c_pid[i], ts)
            thread(utid, c_pid[i])
            tracker.snapshot(utid, c_ppid[i], c_state[i], decode_comm(c_comm[i]))
        elif typ == schema.EXEC or typ == schema.THREAD_NAME:
            if tid == 0:
                continue
            T = lookup_thread(tid, c_pid[i], ts)   # a rename by another thread names one that may sleep
            if T.state != BLOCKED:
                T = own(tid, c_pid[i], ts)
            T.rows.append(i)
            tracker.set_comm(T.utid, decode_comm(c_comm[i]))
        elif typ == schema.WAIT_SITE or typ == schema.FUTEX_STATE or typ == schema.FILE_LOCK:
            # what the next wait is on: owned rows (the core reads them; the oracle only owns them)
            if tid == 0:
                continue
            T = own(tid, c_pid[i], ts)
            T.rows.append(i)
        elif typ == schema.DATA_FLAG_WRITE or typ == schema.DATA_FLAG_READ:
            if tid == 0:
                continue
            T = own(tid, c_pid[i], ts)
            T.rows.append(i)
            F["row"].append(i); F["utid"].append(T.utid); F["pid"].append(T.pid); F["seg"].append(T.seg)
            F["ts"].append(ts); F["addr"].append(c_obj[i]); F["value"].append(c_val[i])
            F["write"].append(typ == schema.DATA_FLAG_WRITE)
        elif schema.GO_READY <= typ <= schema.GO_PARK:
            if tid == 0:
                continue
            T = own(tid, c_pid[i], ts)
            g = c_obj[i]
            if typ == schema.GO_EXECUTE:
                go_execute(T, i, ts, g)
                continue
            T.rows.append(i)
            if typ == schema.GO_PARK:
                if T.go_g == g:
                    T.go_g = 0
            else:   # GO_READY: by a goroutine, or by the runtime (no goroutine on this thread)
                go_ready[(T.pid, g)] = {"utid": T.utid if T.go_g else -1, "seg": T.seg, "ts": ts, "row": i,
                                        "used": False}
        elif typ == schema.LOST:
            stats["lost_rows"] += 1
            # switches the kernel never reported: a hole, but not a drop
            kind = "unreported_switches" if c_state[i] == schema.LOST_SWITCHES_UNREPORTED else "lost_records"
            stats[kind] += max(c_val[i], 0)

    # Threads known only by name (snapshot / peer of a fork never scheduled, ...).
    for utid in range(len(tracker)):
        thread(utid, tracker.pid[utid])

    # Trace end.
    for T in threads:
        if T.state == UNKNOWN:
            pre_trace(T)
        if T.state == BLOCKED:
            s = T.seg
            if S_wend[s] < 0:
                S_wend[s] = max(t_end, S_end[s])
                S_ongoing[s] = True
        elif T.state in (RUNNING, RUNNABLE, NEW) and T.exit_ts >= 0:
            # exited, but its last switch-out is not in the trace
            end = max(T.exit_ts, S_start[T.seg])
            stop_running(T, end)
            stop_runnable(T, end)
            flush(T, end, G.END_EXIT)
        elif T.state in (RUNNING, RUNNABLE, NEW):
            stop_running(T, t_end)
            stop_runnable(T, t_end)
            flush(T, max(t_end, S_start[T.seg]), G.END_TRACE)

    # Sort segments by (utid, creation order) -> contiguous per thread.
    nseg = len(S_utid)
    utid_arr = np.asarray(S_utid, dtype=np.int64)
    order = np.argsort(utid_arr, kind="stable")
    remap = np.empty(nseg, dtype=np.int64)
    remap[order] = np.arange(nseg)

    def col(lst, dtype):
        return np.asarray(lst, dtype=dtype)[order] if nseg else np.zeros(0, dtype)

    # thread_rows: per-thread rows concatenated in utid order
    base = np.zeros(len(threads) + 1, np.int64)
    for T in threads:
        base[T.utid + 1] = len(T.rows)
    np.cumsum(base, out=base)
    thread_rows = np.fromiter((r for T in threads for r in T.rows), dtype=np.int64, count=int(base[-1]))
    rlo = np.asarray(S_rlo, np.int64) + base[utid_arr] if nseg else np.zeros(0, np.int64)
    rhi = np.asarray(S_rhi, np.int64) + base[utid_arr] if nseg else np.zeros(0, np.int64)

    end_kind = col(S_ekind, np.uint8)
    wait_start = np.where(end_kind == G.END_BLOCKED, col(S_end, np.int64), -1)
    wait_end = np.where(end_kind == G.END_BLOCKED, col(S_wend, np.int64), -1)
    tid_of = np.asarray(tracker.tid, np.int64)
    pid_of = np.asarray(tracker.pid, np.int64)
    seg = G.Table(
        utid=utid_arr[order],
        tid=tid_of[utid_arr[order]] if nseg else np.zeros(0, np.int64),
        pid=pid_of[utid_arr[order]] if nseg else np.zeros(0, np.int64),
        start=col(S_start, np.int64),
        end=col(S_end, np.int64),
        start_kind=col(S_skind, np.uint8),
        start_ctx=col(S_sctx, np.int8),
        start_irq=col(S_sirq, np.uint8),
        start_row=col(S_srow, np.int64),
        end_kind=end_kind,
        wait_start=wait_start,
        wait_end=wait_end,
        wait_ongoing=col(S_ongoing, bool),
        wait_known=col(S_known, bool),
        wait_state=col(S_wstate, np.uint8),
        wait_reason=col(S_wreason, np.uint8),
        wait_nr=col(S_wnr, np.uint32),
        wait_obj=col(S_wobj, np.uint64),
        wait_aux=col(S_waux, np.int32),
        wait_timedout=col(S_timedout, bool),
        wait_done=col(S_done, bool),
        cpu_ns=col(S_cpu, np.int64),
        runnable_ns=col(S_rbl, np.int64),
        preempts=col(S_pre, np.int64),
        yields=col(S_yld, np.int64),
        nsyscalls=col(S_nsys, np.int64),
        row_lo=rlo[order] if nseg else rlo,
        row_hi=rhi[order] if nseg else rhi,
    )

    def rm(a):
        a = np.asarray(a, dtype=np.int64)
        out = a.copy()
        ok = a >= 0
        out[ok] = remap[a[ok]]
        return out

    def interval_table(u, s, e):
        u = np.asarray(u, np.int64)
        s = np.asarray(s, np.int64)
        e = np.asarray(e, np.int64)
        o = np.lexsort((s, u)) if len(u) else np.zeros(0, np.int64)
        return G.Table(utid=u[o], start=s[o], end=e[o])

    yu = np.asarray(Y_utid, np.int64)
    yt = np.asarray(Y_ts, np.int64)
    ys = rm(Y_seg)
    yo = np.lexsort((yt, yu)) if len(yu) else np.zeros(0, np.int64)
    yields = G.Table(utid=yu[yo], ts=yt[yo], seg=ys[yo])

    fu = np.asarray(F["utid"], np.int64)
    ft = np.asarray(F["ts"], np.int64)
    fo = np.lexsort((np.arange(len(fu)), ft, fu)) if len(fu) else np.zeros(0, np.int64)
    flags = G.Table(row=np.asarray(F["row"], np.int64)[fo], utid=fu[fo],
                    pid=np.asarray(F["pid"], np.int64)[fo], seg=rm(F["seg"])[fo], ts=ft[fo],
                    addr=np.asarray(F["addr"], np.uint64)[fo], value=np.asarray(F["value"], np.int64)[fo],
                    write=np.asarray(F["write"], bool)[fo])

    wakes = G.Table(
        row=np.asarray(W["row"], np.int64), ts=np.asarray(W["ts"], np.int64),
        waker_utid=np.asarray(W["waker_utid"], np.int64), waker_seg=rm(W["waker_seg"]),
        wakee_utid=np.asarray(W["wakee_utid"], np.int64), dst=rm(W["dst"]), prev=rm(W["prev"]),
        ctx=np.asarray(W["ctx"], np.int8), irq=np.asarray(W["irq"], np.uint8),
        waker_cur_nr=np.asarray(W["waker_cur_nr"], np.uint32),
        waker_last_nr=np.asarray(W["waker_last_nr"], np.uint32),
        waker_last_aux=np.asarray(W["waker_last_aux"], np.int32),
        waker_last_obj=np.asarray(W["waker_last_obj"], np.uint64),
        go=np.asarray(W["go"], bool), src_ts=np.asarray(W["src_ts"], np.int64),
        go_obj=np.asarray(W["go_obj"], np.uint64),
    )
    go_edges = [(int(rm([s])[0]), int(rm([d])[0]), t, st, r, g) for s, d, t, st, r, g in GE]
    spawns = G.Table(src=rm(P_src), dst=rm(P_dst), ts=np.asarray(P_ts, np.int64), row=np.asarray(P_row, np.int64))

    return SegmentResult(
        seg=seg, thread_rows=thread_rows, thread_rows_ptr=base,
        running=interval_table(R_utid, R_start, R_end),
        runnable=interval_table(Q_utid, Q_start, Q_end),
        yields=yields, flags=flags, wakes=wakes, spawns=spawns,
        futex_use=futex_use, stats=stats, go_edges=go_edges,
    )

