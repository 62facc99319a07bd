"""Hang detection: finding the spinning vertex of a thread.

Algorithm, for one thread (default: the process's main thread, tid == pid):
  Idle waits are decided by the wait model (waits.wait_kind): a POLL wait
  (epoll / poll / select) at the thread's loop site with nothing the thread
  started pending is idle; a nested POLL wait (another site), a synchronous
  one (ended by an answer downstream of the thread's own request) and a
  pending one (still unanswered at trace end) are not.  Placeholder waits
  that began before the trace (reason unknown) are treated as idle:
  nothing says the thread was hung rather than idle.  Waits that are not
  POLL waits are never idle.
  (a) every other blocking wait lasting >= threshold (default 2 s) is a hang
      candidate: kind "wait", block type LongWait, spinning vertex = the
      segment that owns the wait, hang window = [wait_start, wait_end].  A wait
      still in progress at trace end lasts until trace end (ongoing: true).
      Waits split by spurious wakeups inside one syscall (the syscall did not
      return and the thread slept again in it, see _continues), a poll
      that timed out followed by nothing but re-polls at the same site
      (waits.repoll_continues), and a futex wait that timed out followed by
      nothing but another wait on the same futex (waits.rewait_continues:
      HotSpot's contended monitor, timed condition waits in a loop), count
      as one wait from the first piece's start; the spinning vertex is the
      last piece (evidence longest_wait.pieces > 1).
  (b) the thread's timeline is cut at idle waits and at the (a) waits into
      stretches (from the end of one cut wait to the start of the next, or to
      the thread's end / trace end).  A stretch lasting >= threshold that
      classifies (blocktype.classify over the stretch) as LongRunning or
      RepeatedYield is a candidate: kind "stretch", spinning vertex = its first
      segment, hang window = the stretch.  A RepeatedYield stretch that holds
      a run of >= threshold without any blocking wait (segments joined only
      by splits) is cut around that run: the run is its own candidate, the
      parts before and after are classified on their own.  That keeps a
      condition-variable loop's idle timed waits (Tcl's notifier) out of a
      callback's LongRunning window.
  Choice: with `at`, the candidate whose window contains it (with --tid and
  --at and no candidate there: the vertex at that time, as the user named
  it, user_named_hang); a named thread (--pid's main thread, --tid) with no
  candidate at all: its longest wait >= threshold (named_wait_hang, which
  list_hangs uses too, so `hangs --pid` and `debug --pid` agree); else a candidate
  ongoing at trace end; else the longest (ties: the earliest).  If the
  process has no thread tid == pid in the trace, all its threads are searched:
  the thread with the longest hang is taken (with `at`: the longest hang
  containing it), then its hang is chosen by the rule above.
  A main thread (chosen by default, not by --tid) whose hang is a wait to
  join another thread (a strong thread_exit ownership edge into the
  waiting vertex: pthread_join) stands for that thread: the JVM launcher
  runs main() on a new thread and joins it, as do programs that want a
  bigger stack.  The joined thread's hang overlapping the join is taken
  (by the rule above; joins followed up to MAX_JOINS deep), with evidence
  joined_by naming the joining thread; without one, the join itself.

Invariants: the candidates of one thread have disjoint windows (waits and
stretches partition the timeline), listed in time order.
"""
from dataclasses import dataclass

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose import blocktype as B
from argus.diagnose import waits as W
from argus.diagnose import candidates as C
from argus.diagnose.fmt import fmt_trace_time

DEFAULT_THRESHOLD_NS = 2_000_000_000


class DiagnoseError(Exception):
    """A clear, one-line reason why no diagnosis is possible."""


class UnknownProcessError(DiagnoseError):
    pass


class NoHangError(DiagnoseError):
    pass


@dataclass
class Hang:
    pid: int
    tid: int
    utid: int
    kind: str            # "wait" | "stretch"
    vertex: int          # the spinning vertex (segment id)
    last_vertex: int     # last segment of the stretch (== vertex for waits)
    start_ns: int
    end_ns: int
    ongoing: bool
    classification: B.Classification
    user_named: bool = False     # --tid and --at named it; the tool found no hang there (user_named_hang)

    @property
    def block_type(self):
        return self.classification.block_type

    @property
    def dur_ns(self):
        return self.end_ns - self.start_ns

    def contains(self, ts):
        return self.start_ns <= ts <= self.end_ns

    def to_dict(self, g):
        return {
            "pid": self.pid, "tid": self.tid, "comm": g.comm(self.utid),
            "process": g.process_name(self.pid), **g.process_scope(self.pid), "main": self.pid == self.tid,
            "kind": self.kind, "block_type": self.block_type,
            "start_ns": self.start_ns, "end_ns": self.end_ns, "dur_ns": self.dur_ns,
            "ongoing": self.ongoing, "vertex": self.vertex, "user_named": self.user_named,
            "evidence": self.classification.evidence,
        }


def fmt_threshold(ns):
    return f"{ns / 1e9:g} s"


def _continues(g, lo, hi):
    """For segments lo..hi-1 of one thread: whether segment v's wait continues
    into v+1's, a spurious wakeup inside one syscall (v's syscall did not
    return; v+1 entered no syscall and blocked again in the same syscall on
    the same object).  A list of bools, index v - lo."""
    seg = g.seg
    a, b = slice(lo, hi - 1), slice(lo + 1, hi)
    if hi - lo < 2:
        return [False] * (hi - lo)
    c = ((seg.end_kind[a] == G.END_BLOCKED) & (seg.end_kind[b] == G.END_BLOCKED) & ~seg.wait_done[a]
         & (seg.wait_nr[a] != schema.SYSCALL_NONE) & seg.wait_known[a] & (seg.nsyscalls[b] == 0)
         & (seg.wait_reason[b] == seg.wait_reason[a]) & (seg.wait_nr[b] == seg.wait_nr[a])
         & (seg.wait_obj[b] == seg.wait_obj[a]))
    return c.tolist() + [False]


def _wait_class(g, utid, first, last, ws, we):
    """Classification of a hang wait made of segments first..last (more than
    one when spurious wakeups split it): LongWait over [ws, we]."""
    c = B.classify(g, utid, ws, we)
    if first == last and c.block_type == B.LONG_WAIT:
        c.evidence["longest_wait"]["pieces"] = 1
        return c
    lw = B.wait_info(g, last, ws, we)
    lw.update(start_ns=ws, dur_ns=we - ws, in_window_ns=we - ws, pieces=last - first + 1)
    ev = dict(c.evidence, longest_wait=lw, longest_wait_share=1.0)
    return B.Classification(B.LONG_WAIT, int(utid), ws, we, int(last), ev)


def _seg_end(g, v):
    return int(g.seg.wait_start[v]) if g.seg.end_kind[v] == G.END_BLOCKED else int(g.seg.end[v])


def _long_run(g, first, last, end, threshold_ns):
    """The longest run of segments first..last joined only by splits (the
    thread never blocked) lasting >= threshold_ns, as (a, b), or None."""
    seg = g.seg
    best, a = None, first
    for v in range(first, last + 1):
        if v == last or seg.end_kind[v] != G.END_SPLIT:
            d = min(_seg_end(g, v), end) - int(seg.start[a])
            if d >= threshold_ns and (best is None or d > best[0]):
                best = (d, a, v)
            a = v + 1
    return None if best is None else best[1:]


def thread_hangs(g, utid, threshold_ns=DEFAULT_THRESHOLD_NS):
    """All hang candidates of one thread, in time order."""
    seg = g.seg
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
    out = []
    if lo == hi:
        return out
    tid, pid = int(g.threads.tid[utid]), int(g.threads.pid[utid])

    def stretch(first, last, end, carve=True):
        start = int(seg.start[first])
        if end - start < threshold_ns:
            return
        c = B.classify(g, utid, start, end)
        run = _long_run(g, first, last, end, threshold_ns) if carve and c.block_type == B.REPEATED_YIELD else None
        if run is not None:
            # a run that never blocked for >= threshold inside a yielding stretch: the
            # thread was out of its loop there, whatever its idle waits around it were
            a, b = run
            if a > first:
                stretch(first, a - 1, int(seg.wait_start[a - 1]), carve=False)
            stretch(a, b, _seg_end(g, b), carve=False)
            if b < last:
                stretch(b + 1, last, end, carve=False)
            return
        if c.block_type in (B.LONG_RUNNING, B.REPEATED_YIELD):
            ongoing = end >= g.trace_end and seg.end_kind[last] != G.END_EXIT
            out.append(Hang(pid, tid, utid, "stretch", first, last, start, int(end), bool(ongoing), c))

    blocked = (seg.end_kind[lo:hi] == G.END_BLOCKED).tolist()
    cont = _continues(g, lo, hi)
    cont = [a or b for a, b in zip(cont, W.timeout_continues(g, lo, hi))]
    first = lo
    k = lo
    while k < hi:
        if not blocked[k - lo]:
            k += 1
            continue
        last = k
        while cont[last - lo]:
            last += 1
        ws, we = int(seg.wait_start[k]), int(seg.wait_end[last])
        # the model only matters for a wait long enough to be a hang (and its
        # closure costs); a shorter POLL wait cuts the stretch as before
        kind, detail = W.wait_kind(g, k, last) if we - ws >= threshold_ns else (W.quick_kind(g, k), {})
        idle = kind not in W.NOT_IDLE
        long = not idle and we - ws >= threshold_ns
        if idle or long:
            stretch(first, k, ws)
            if long:
                c = _wait_class(g, utid, k, last, ws, we)
                if kind != W.BLOCKING:
                    c.evidence["wait_model"] = dict(detail, kind=kind)
                out.append(Hang(pid, tid, utid, "wait", last, last, ws, we, bool(seg.wait_ongoing[last]), c))
            first = last + 1
        k = last + 1
    if first < hi:
        last = hi - 1
        end = int(seg.wait_end[last]) if seg.end_kind[last] == G.END_BLOCKED else int(seg.end[last])
        stretch(first, last, end)
    out.sort(key=lambda h: h.start_ns)
    return out


def hang_for_vertex(g, v):
    """A Hang for any vertex (for the REPL: "diagnose this one"): its wait
    when it ended blocked (kind "wait"), else its running span (kind
    "stretch"), classified over that window."""
    seg = g.seg
    v = int(v)
    utid = int(seg.utid[v])
    tid, pid = int(seg.tid[v]), int(seg.pid[v])
    if seg.end_kind[v] == G.END_BLOCKED:
        a, b = int(seg.wait_start[v]), int(seg.wait_end[v])
        return Hang(pid, tid, utid, "wait", v, v, a, b, bool(seg.wait_ongoing[v]), B.classify(g, utid, a, b))
    a, b = int(seg.start[v]), int(seg.end[v])
    ongoing = bool(seg.end_kind[v] == G.END_TRACE)
    return Hang(pid, tid, utid, "stretch", v, v, a, b, ongoing, B.classify(g, utid, a, b))


def user_named_hang(g, utid, at):
    """The user named a thread and a time (--tid with --at) where the tool
    finds no hang (it would call the wait idle, or the span is short): the
    hang is the vertex there, as the user says (user_named: the report says
    so)."""
    v = g.segment_at(utid, at)
    if v < 0:
        raise NoHangError(f"thread {int(g.threads.tid[utid])} has no vertex at {fmt_trace_time(g, at)}")
    seg = g.seg
    if seg.end_kind[v] == G.END_BLOCKED and at >= seg.wait_start[v]:
        last = v
        while g.next_segment(last) >= 0 and _continues(g, last, last + 2)[0]:
            last += 1
        ws, we = int(seg.wait_start[v]), int(seg.wait_end[last])
        tid, pid = int(g.threads.tid[utid]), int(g.threads.pid[utid])
        h = Hang(pid, tid, utid, "wait", last, last, ws, we, bool(seg.wait_ongoing[last]),
                 _wait_class(g, utid, v, last, ws, we))
        kind, detail = W.wait_kind(g, v, last)
        h.classification.evidence["wait_model"] = dict(detail, kind=kind)
    else:
        h = hang_for_vertex(g, v)
        if seg.end_kind[v] == G.END_BLOCKED:      # at falls in the running part: that span, not the wait
            h.kind, h.start_ns, h.end_ns, h.ongoing = "stretch", int(seg.start[v]), int(seg.end[v]), False
            h.classification = B.classify(g, utid, h.start_ns, h.end_ns)
    h.user_named = True
    h.classification.evidence["user_named"] = True
    return h


def _process_utids(g, pid):
    utids = g.utids_of_pid(pid)
    if not utids:
        raise UnknownProcessError(f"pid {pid} not found in the trace "
                                  f"[{fmt_trace_time(g, g.trace_start)}, {fmt_trace_time(g, g.trace_end)}]")
    return utids


def _thread_utids(g, pid, tid):
    utids = [u for u in g.utids_of_tid(tid) if int(g.threads.pid[u]) == int(pid)]
    if not utids:
        raise UnknownProcessError(f"thread {tid} of pid {pid} not found in the trace")
    return utids


def _thread_utid(g, pid, tid, at=None):
    utids = _thread_utids(g, pid, tid)
    if at is not None:
        for u in utids:
            lo, hi = g.thread_seg_lo[u], g.thread_seg_hi[u]
            if lo < hi and g.seg.start[lo] <= at <= max(g.seg.end[hi - 1], g.seg.wait_end[hi - 1]):
                return u
    return utids[-1]


def list_hangs(g, pid, tid=None, threshold_ns=DEFAULT_THRESHOLD_NS):
    """All hang candidates of a process (or of one of its threads), by start
    time: the one definition `argus hangs --pid` and `argus debug --pid`
    share.  A named process whose main thread (or the named thread) has no
    candidate gets that thread's longest wait >= threshold (named_wait_hang)."""
    utids = _process_utids(g, pid)
    if tid is not None:
        utids = _thread_utids(g, pid, tid)
    out = _hangs_by_start(g, utids, threshold_ns)
    named = [u for u in utids if int(g.threads.tid[u]) == int(tid if tid is not None else pid)]
    for u in named:
        if not any(h.utid == u for h in out):
            h = named_wait_hang(g, u, threshold_ns)
            if h is not None:
                out.append(h)
    out.sort(key=lambda h: (h.start_ns, h.tid))
    return out


def named_wait_hang(g, utid, threshold_ns):
    """The user named this thread (--pid: its main thread, or --tid) and the
    idle model finds no hang of it: its longest blocked wait >= threshold
    is the hang all the same (an event-loop poll that waits for a reply the
    model cannot tie to a request), marked user_named; None when it has no
    wait that long."""
    seg = g.seg
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
    if hi <= lo:
        return None
    sel = slice(lo, hi)
    dur = np.where((seg.end_kind[sel] == G.END_BLOCKED) & seg.wait_known[sel],
                   (seg.wait_end[sel] - seg.wait_start[sel]).astype(np.int64), -1)
    k = int(np.argmax(dur))
    if dur[k] < threshold_ns:
        return None
    h = user_named_hang(g, utid, int(seg.wait_start[lo + k]))
    h.classification.evidence["named_longest_wait"] = True
    return h


def _hangs_by_start(g, utids, threshold_ns):
    out = []
    for u in utids:
        out.extend(thread_hangs(g, u, threshold_ns))
    out.sort(key=lambda h: (h.start_ns, h.tid))
    return out


def choose(cands, at=None, prefer_ongoing=True):
    if not cands:
        return None
    if at is not None:
        inside = [h for h in cands if h.contains(at)]
        return max(inside, key=lambda h: (h.dur_ns, -h.start_ns)) if inside else None
    ongoing = [h for h in cands if h.ongoing] if prefer_ongoing else []
    pool = ongoing or cands
    return max(pool, key=lambda h: (h.dur_ns, -h.start_ns))


MAX_JOINS = 4


def _joined_thread(g, h):
    """The utid of the thread h's wait joins (a strong thread_exit ownership
    edge into its vertex from another thread), else None."""
    if h.kind != "wait":
        return None
    e = g.edges
    for k in g.in_edges(h.vertex).tolist():
        if e.type[k] == G.EDGE_OWNERSHIP and e.owner_kind[k] == G.OWNER_THREAD_EXIT and not e.weak[k]:
            u = int(g.seg.utid[e.src[k]])
            if u != h.utid:
                return u
    return None


def _through_joins(g, h, at, threshold_ns):
    """h, or the hang of the thread h only waits to join (module comment)."""
    for _ in range(MAX_JOINS):
        u = _joined_thread(g, h)
        if u is None:
            return h
        inside = [c for c in thread_hangs(g, u, threshold_ns) if c.start_ns < h.end_ns and c.end_ns > h.start_ns]
        j = choose(inside, at)
        if j is None:
            return h
        j.classification.evidence["joined_by"] = {
            "pid": h.pid, "tid": h.tid, "comm": g.comm(h.utid), "vertex": int(h.vertex),
            "start_ns": int(h.start_ns), "end_ns": int(h.end_ns)}
        h = j
    return h


def find_hang(g, pid, tid=None, at=None, threshold_ns=DEFAULT_THRESHOLD_NS):
    """The hang to diagnose.  Raises UnknownProcessError / NoHangError."""
    pid = int(pid)
    utids = _process_utids(g, pid)
    who = f"pid {pid}"
    tid_given = tid is not None
    if tid is None:
        mains = [u for u in utids if int(g.threads.tid[u]) == pid]
        if mains:
            tid = pid
    if tid is not None:
        u = _thread_utid(g, pid, int(tid), at)
        cands = thread_hangs(g, u, threshold_ns)
        scope = [u]
        if int(tid) != pid:
            who = f"thread {tid} of pid {pid}"
        else:
            who = f"the main thread of pid {pid}"
    else:
        cands = []
        for u in utids:
            cands.extend(thread_hangs(g, u, threshold_ns))
        scope = utids
        who = f"pid {pid} (no main thread in the trace; searched {len(utids)} threads)"
    # Without a main thread: the thread with the longest hang (spec), then
    # that thread's hang by the usual rule.
    if tid is None and cands and at is None:
        longest = choose(cands, prefer_ongoing=False)
        cands = [c for c in cands if c.utid == longest.utid]
    h = choose(cands, at)
    if h is not None:
        return h if tid_given else _through_joins(g, h, at, threshold_ns)
    if tid is not None and at is not None and tid_given:
        return user_named_hang(g, scope[0], at)
    if tid is not None and at is None:
        h = named_wait_hang(g, scope[0], threshold_ns)       # as list_hangs: one definition
        if h is not None:
            return h
    msg = f"no hang >= {fmt_threshold(threshold_ns)} found for {who} in the trace window " \
          f"[{fmt_trace_time(g, g.trace_start)}, {fmt_trace_time(g, g.trace_end)}]"
    if at is not None:
        msg += f" at {fmt_trace_time(g, at)}"
        if cands:
            msg += " (hangs at: " + ", ".join(f"{fmt_trace_time(g, c.start_ns)}..{fmt_trace_time(g, c.end_ns)}"
                                              for c in cands[:5]) + ")"
    else:
        silent = [u for u in scope if g.thread_seg_hi[u] - g.thread_seg_lo[u] == 1
                  and not g.seg.wait_known[g.thread_seg_lo[u]]]
        if silent:
            msg += "; no activity in the trace (blocked since before tracing started, reason unknown)"
    raise NoHangError(msg)


def main_thread_hangs(g, threshold_ns=DEFAULT_THRESHOLD_NS, event_loops_only=True):
    """Hang candidates of every process's main thread (tid == pid) in the
    trace, in time order (`argus hangs` without --pid); by default only those
    a user would look at first (candidates.py: tiers 0 and 1, interactive
    threads and synchronous waits; no shell, sleeper or kernel thread)."""
    tid, pid = g.threads.tid, g.threads.pid
    hangs = _hangs_by_start(g, np.flatnonzero(tid == pid).tolist(), threshold_ns)
    if not event_loops_only:
        return hangs
    keep = {id(c.hang) for c in C.rank(g, hangs) if c.tier <= 1}
    return [h for h in hangs if id(h) in keep]


def most_recent_hang(g, at=None, threshold_ns=DEFAULT_THRESHOLD_NS, ranked=None):
    """The hang of a main thread a user would ask about (candidates.rank:
    interactive threads first, then synchronous waits, each by latest end),
    with `at` among those containing it.  ranked: a list that receives the
    whole ranking (the CLI shows the top three when the choice is not clear).
    Raises NoHangError."""
    order = C.rank(g, main_thread_hangs(g, threshold_ns, event_loops_only=False), at=at)
    if ranked is not None:
        ranked.extend(order)
    if order:
        return order[0].hang
    where = f" at {fmt_trace_time(g, at)}" if at is not None else ""
    raise NoHangError(f"no main thread with an event loop, a window or a synchronous wait hung "
                      f">= {fmt_threshold(threshold_ns)}{where} in the trace window "
                      f"[{fmt_trace_time(g, g.trace_start)}, {fmt_trace_time(g, g.trace_end)}]; "
                      "pass --pid to look at other threads")
