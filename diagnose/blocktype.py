"""Block type classification of a thread over a time window [a, b].

Algorithm (all clipped to the window, from the graph's columnar tables):
  cpu_ns       on-CPU time (running intervals)            -> cpu_share
  runnable_ns  runnable, not running (runnable intervals) -> runnable_share
  longest wait the blocking wait overlapping the window with the most time
               inside it (a wait still in progress at trace end lasts until
               trace end; a placeholder wait that began before the trace
               counts from trace start)
  yields       sched_yield syscalls / yield switch-outs inside the window
  short waits  (short_waits_woken: those another task's wakeup ended;
               short_waits_kernel: those the kernel ended, not a timer)
               blocking waits starting inside the window that lasted
               < 20 ms, or whose syscall returned -ETIMEDOUT, or timed
               sleeps (nanosleep family) shorter than a tenth of the
               window -- polling with backoff (SQLite's busy handler,
               spin-then-sleep locks) sleeps 1..100 ms between tries, and
               the period of such a loop, not a fixed 20 ms, is what makes
               it polling; event-loop waits (wait reason POLL) are idle,
               never counted
  rate         (yields + short waits) per second of window; mean period =
               mean gap between consecutive such events
  stopped_ns   time a tracer or job control held the thread: switch-outs
               in state traced (ptrace stops, single steps) until the next
               switch-in - the graph keeps them runnable, without a vertex
               boundary - and, in traces recorded before that state existed
               (or for SIGSTOP), blocking waits in state other.  Stops are
               not the program's waits: they are never yields, short waits
               or the longest wait, they leave the runnable time, and the
               shares and the rate are of the window minus stopped_ns (a thread
               single-stepped by a debugger while it spins stays
               LongRunning: many short stops never outrank time on CPU)
Rules, in order:
  1. longest wait inside the window >= 50 % of it       -> LongWait
  2. no yields and cpu + runnable >= 80 % of it          -> LongRunning
     (a thread that computes and hands a lock back and forth in short
     waits - a Python thread under the GIL - computes; a poller sleeps;
     fewer yields than make a repetition, MIN_REPEATS, count as none: a
     runtime's own, as Go's scheduler yields now and then in its hand-offs
     while a goroutine locked to the thread computes; a spin loop yields
     thousands of times),
     unless the kernel ended most of its short waits while it was on CPU
     less than half the time (device_paced: an fsync loop, runnable after
     each completion on a loaded machine)
  3. yields + short waits >= 10 and rate >= 5/s          -> RepeatedYield
  4. cpu + runnable >= 50 % of the window                -> LongRunning
  5. otherwise                                           -> Normal

`Classification.vertex` is the segment that stands for the thread in that
window: the segment owning the longest wait for LongWait, else the segment
whose running span overlaps the window most (the "vertex in t before the
spinning vertex gets spinning" of Algorithm 1).

Invariants: shares are in [0, 1] (cpu + runnable + blocked <= window up to
rounding of unknown states); an empty window classifies as Normal.
"""
from dataclasses import dataclass, field

import numpy as np

from argus.tracer import kdebug, schema
from argus.graphbuild import graph as G

LONG_WAIT = "LongWait"
REPEATED_YIELD = "RepeatedYield"
LONG_RUNNING = "LongRunning"
NORMAL = "Normal"
ABNORMAL = (LONG_WAIT, REPEATED_YIELD, LONG_RUNNING)

SHORT_WAIT_NS = 20_000_000
BACKOFF_FRACTION = 10      # a timed sleep < window / 10 is one try of a polling loop
MIN_REPEATS = 10
MIN_RATE_PER_S = 5.0
SHARE = 0.5
BUSY_SHARE = 0.8     # on CPU or runnable this much, without yields: computing, whatever its short waits


@dataclass
class Classification:
    block_type: str
    utid: int
    start_ns: int
    end_ns: int
    vertex: int
    evidence: dict = field(default_factory=dict)

    @property
    def abnormal(self):
        return self.block_type in ABNORMAL


def _clipped(starts, ends, a, b):
    if len(starts) == 0:
        return 0
    return int(np.sum(np.clip(np.minimum(ends, b) - np.maximum(starts, a), 0, None)))


def cpu_ns(g, utid, a, b):
    """utid's time on CPU inside [a, b] (ns)."""
    rl, rh = g.run_lo[utid], g.run_hi[utid]
    return _clipped(g.running.start[rl:rh], g.running.end[rl:rh], a, b)


def wait_desc(g, v):
    """Human description of segment v's wait: "read(fd 5)", "futex 0x7f..."."""
    reason = int(g.seg.wait_reason[v])
    if not g.seg.wait_known[v]:
        return "a wait that began before the trace"
    obj = int(g.seg.wait_obj[v])
    sc = g.syscall_name(g.seg.wait_nr[v])
    if int(g.seg.wait_nr[v]) != schema.SYSCALL_NONE and int(g.seg.wait_nr[v]) >= kdebug.NR_MACH:
        mach = kdebug.wait_obj_text(g.seg.wait_nr[v], obj)   # a Mach port is no fd (kdebug imports)
        if mach:
            return mach
    if reason == schema.WAIT_FUTEX:
        return f"futex 0x{obj:x}"
    if reason in (schema.WAIT_READ, schema.WAIT_WRITE, schema.WAIT_ACCEPT):
        return f"{sc}(fd {obj})"
    if reason == schema.WAIT_POLL:
        return f"{sc} (event loop)"
    if reason == schema.WAIT_SLEEP:
        return sc if sc != "-" else "sleep"
    if sc != "-":
        return sc
    return schema.WAIT_NAMES.get(reason, "wait")


def wait_info(g, v, a=None, b=None):
    """Evidence dict of segment v's wait (optionally with time inside [a, b])."""
    ws, we = int(g.seg.wait_start[v]), int(g.seg.wait_end[v])
    d = {
        "vertex": int(v),
        "start_ns": ws,
        "end_ns": we,
        "dur_ns": we - ws,
        "reason": schema.WAIT_NAMES.get(int(g.seg.wait_reason[v]), "?") if g.seg.wait_known[v] else "unknown",
        "syscall": g.syscall_name(g.seg.wait_nr[v]),
        "syscall_nr": None if g.seg.wait_nr[v] == schema.SYSCALL_NONE else int(g.seg.wait_nr[v]),
        "obj": int(g.seg.wait_obj[v]),
        "what": wait_desc(g, v),
        "ongoing": bool(g.seg.wait_ongoing[v]),
        "timed_out": bool(g.seg.wait_timedout[v]),
        "started_before_trace": not bool(g.seg.wait_known[v]),
    }
    if a is not None:
        d["in_window_ns"] = max(0, min(we, b) - max(ws, a))
    return d


def classify(g, utid, a, b):
    """Classifies thread `utid` over [a, b] (ns).  Returns a Classification."""
    a, b = int(a), int(b)
    window = max(b - a, 0)
    seg = g.seg
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])

    cpu = cpu_ns(g, utid, a, b)
    ql, qh = g.rbl_lo[utid], g.rbl_hi[utid]
    rbl = _clipped(g.runnable.start[ql:qh], g.runnable.end[ql:qh], a, b)

    s = slice(lo, hi)
    ws = seg.wait_start[s]
    we = seg.wait_end[s]
    blocked = seg.end_kind[s] == G.END_BLOCKED
    stop = blocked & (seg.wait_state[s] == schema.STATE_OTHER)
    blocked &= ~stop
    traced = traced_ns(g, utid, a, b)
    stopped = traced + _clipped(ws[stop], we[stop], a, b)
    rbl = max(rbl - traced, 0)
    active = max(window - stopped, 0)      # the window minus tracer / job-control stops
    inwin = np.where(blocked, np.clip(np.minimum(we, b) - np.maximum(ws, a), 0, None), -1)
    longest = None
    longest_in = 0
    if hi > lo and active > 0:
        k = int(np.argmax(inwin))
        if inwin[k] > 0:
            longest = lo + k
            longest_in = int(inwin[k])

    # yields in the window
    yl, yh = g.yld_lo[utid], g.yld_hi[utid]
    yts = g.yields.ts[yl:yh]
    yts = yts[(yts >= a) & (yts <= b)]
    # short waits / timeouts starting in the window (not idle, not placeholder)
    dur = we - ws
    start_in = blocked & (ws >= a) & (ws <= b) & seg.wait_known[s] & (seg.wait_reason[s] != schema.WAIT_POLL)
    backoff_sleep = (seg.wait_reason[s] == schema.WAIT_SLEEP) & (dur < active // BACKOFF_FRACTION)
    short = start_in & ((dur < SHORT_WAIT_NS) | seg.wait_timedout[s] | backoff_sleep)
    sts = ws[short]
    # short waits another task ended (its wakeup opened the next segment)
    nxt = np.flatnonzero(short) + lo + 1
    nxt = nxt[nxt < hi]
    woke = seg.start_kind[nxt] == G.START_WAKEUP
    woken = int(np.count_nonzero(woke & (seg.start_ctx[nxt] == schema.WAKE_TASK)))
    # ... and those the kernel ended, not on a timer (a disk's completion, a
    # kernel thread's): the thread waits on a device, not on a task
    kernel = int(np.count_nonzero(woke & (seg.start_ctx[nxt] != schema.WAKE_TASK) & (g.in_wake[nxt] < 0)
                                  & (seg.start_irq[nxt] != schema.IRQ_TIMER)))
    timeouts = int(np.count_nonzero(start_in & seg.wait_timedout[s]))
    events = np.sort(np.concatenate([yts, sts]))
    n_events = len(events)
    rate = n_events / (active / 1e9) if active > 0 else 0.0
    period = int((events[-1] - events[0]) // (n_events - 1)) if n_events >= 2 else None

    ev = {
        "window_ns": window,
        "cpu_ns": cpu,
        "cpu_share": round(cpu / active, 4) if active else 0.0,
        "runnable_ns": rbl,
        "runnable_share": round(rbl / active, 4) if active else 0.0,
        "longest_wait": wait_info(g, longest, a, b) if longest is not None else None,
        "longest_wait_share": round(longest_in / active, 4) if active else 0.0,
        "yields": int(len(yts)),
        "short_waits": int(len(sts)),
        "short_waits_woken": woken,
        "short_waits_kernel": kernel,
        "timeouts": timeouts,
        "stopped_ns": int(stopped),
        "repeat_rate_per_s": round(rate, 2),
        "mean_period_ns": period,
    }

    if active <= 0:
        bt = NORMAL
    elif longest is not None and longest_in >= SHARE * active:
        bt = LONG_WAIT
    elif len(yts) < MIN_REPEATS and cpu + rbl >= BUSY_SHARE * active and not device_paced(ev):
        bt = LONG_RUNNING       # computing, with short hand-offs between (a GIL's)
    elif n_events >= MIN_REPEATS and rate >= MIN_RATE_PER_S:
        bt = REPEATED_YIELD
    elif cpu + rbl >= SHARE * active:
        bt = LONG_RUNNING
    else:
        bt = NORMAL

    if bt == LONG_WAIT:
        vertex = longest
    else:
        vertex = busiest_segment(g, utid, a, b)
    return Classification(bt, int(utid), a, b, int(vertex), ev)


def traced_ns(g, utid, a, b):
    """ns of [a, b] thread utid spent in tracer stops: each switch-out in
    state traced until the thread's next switch-in (or b).  Threads that were
    never traced cost one cached vectorized pass over the rows per graph."""
    tids = g.derived.traced_tids
    if tids is None:
        r = g.rows
        sel = (r["type"] == schema.SWITCH_OUT) & (r["state"] == schema.STATE_TRACED)
        tids = g.derived.traced_tids = frozenset(np.unique(r["tid"][sel]).tolist())
    if int(g.threads.tid[utid]) not in tids:
        return 0
    idx = g.thread_rows_of(utid)
    ts = g.rows["ts_ns"][idx].astype(np.int64)
    lo, hi = int(np.searchsorted(ts, a, side="left")), int(np.searchsorted(ts, b, side="right"))
    r = g.rows[idx[max(lo - 1, 0):hi]]         # from the row before a: a stop in progress at a
    ts = r["ts_ns"].astype(np.int64)
    outs = ts[(r["type"] == schema.SWITCH_OUT) & (r["state"] == schema.STATE_TRACED)]
    ins = ts[r["type"] == schema.SWITCH_IN]
    if not len(ins):
        return _clipped(outs, np.full(len(outs), b, np.int64), a, b)
    pos = np.searchsorted(ins, outs, side="right")
    ends = np.where(pos < len(ins), ins[np.minimum(pos, len(ins) - 1)], b)
    return _clipped(outs, ends, a, b)


def busiest_segment(g, utid, a, b):
    """The segment of utid whose running span [start, end] overlaps [a, b] most
    (the first one on ties); the segment at `a` when none overlaps."""
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
    if lo == hi:
        return -1
    st = g.seg.start[lo:hi]
    en = g.seg.end[lo:hi]
    ov = np.minimum(en, b) - np.maximum(st, a)
    k = int(np.argmax(ov))
    if ov[k] <= 0 and not (st[k] <= a <= en[k]):
        return g.segment_at(utid, a)
    return lo + k


def device_paced(ev):
    """RepeatedYield evidence whose short waits the kernel mostly ended (a
    disk's completions, a kernel thread; not a timer; next to no yields): the
    thread waits on a device in small steps (fsync loops, small direct
    writes), it polls nothing a task holds.  A yield per hundred waits is
    a runtime's own (Go's spinning scheduler), not the loop's; and a thread
    on CPU half the window or more computes, whatever its page-ins (a
    service that starts up reading its files)."""
    n = ev.get("short_waits", 0)
    return ev.get("yields", 0) * 100 <= n and ev.get("short_waits_kernel", 0) * 2 > n > 0 \
        and ev.get("cpu_share", 0.0) < SHARE


def syscall_counts(g, utid, a, b):
    """{name: count} of the syscalls `utid` entered in [a, b], most frequent first."""
    idx = g.thread_rows_of(utid, a, b)
    r = g.rows[idx]
    nrs = r["nr"][r["type"] == schema.SYSCALL_ENTER]
    u, c = np.unique(nrs, return_counts=True)
    pairs = sorted(((g.syscall_name(n), int(k)) for n, k in zip(u, c)), key=lambda p: (-p[1], p[0]))
    return dict(pairs)


def flag_reads(g, utid, a, b):
    """{addr: count} of DATA_FLAG_READ rows of utid in [a, b]."""
    fl, fh = g.flg_lo[utid], g.flg_hi[utid]
    ts = g.flags.ts[fl:fh]
    sel = (ts >= a) & (ts <= b) & ~g.flags.write[fl:fh]
    addrs = g.flags.addr[fl:fh][sel]
    u, c = np.unique(addrs, return_counts=True)
    return {int(x): int(k) for x, k in zip(u, c)}
