"""The wait model: which blocking waits of a thread are idle event-loop waits.

A hang is the main thread not coming back to its run loop (paper §2); an
event-loop thread blocked in its loop with nothing of its own pending is
idle, not hung.  The syscall alone cannot say which: libpq waits for a query
in poll(), GDBus's call_sync in a nested poll(), an X11 round trip in poll()
on the X socket, nginx's worker for its upstream in epoll_wait.  So a wait
is judged by its site and by causality (wait_kind(g, v), for a segment v
that ended blocked):

  blocking  the wait is not an event-loop wait (wait_reason != POLL): a
            read, futex, sleep ... is never idle (hangs.py's rule (a)).
  unknown   it began before the trace (placeholder): treated as idle,
            nothing says the thread was hung rather than idle.
  nested    a POLL wait at a site other than the thread's loop site.  A
            site is (syscall nr, wait_obj): the epoll fd, or the first fd
            of a poll() set (the tracer records that fd).  The loop site is
            the thread's most frequent POLL site; a site used strictly less
            often is a nested loop or a one-off wait (GLib's call_sync polls
            a private context, PostgreSQL waits for a lock on its latch's
            own epoll set).
  sync      the wait ended with a wakeup that is causally downstream of
            what the thread itself did in the same iteration just before
            the wait (a message, a write, a wakeup of a helper thread):
            downstream(g, v) reaches the waker's vertex.
  pending   the wait is still going on at trace end and something the
            thread started is still being worked on: downstream(g, v)
            reaches a thread that is running at trace end, or still
            serving (below) and has sent nothing since it was reached.
  idle      everything else.

downstream(g, v): the forward closure of v's actions, inside the wait
window [iteration start of v, t_end], over strong causal edges only
(wakeup, thread spawn, message, data_flag; weak lock hand-overs, timer
edges and forks of other processes are not followed: a timer armed
elsewhere is not "the request", nor is a shell's background job).  From a
reached vertex x (entered at ts):
  - x's out edges leaving at or after ts are followed;
  - x's program-order successor is reached when x ended by a split (the
    same run), or when x is *serving*: it sent nothing after it was reached
    (no out edge, the request is neither answered nor forwarded) and its
    wait is not an idle wait at its own loop site (a service sleeping or
    computing before it replies, a backend waiting for a lock in a nested
    epoll).  An event-loop thread is never crossed at its own loop site by
    program order: its next iteration is reached only through the edge that
    woke it (no over-connection through an X server's or a bus daemon's
    loop).
Bounded by MAX_CLOSURE vertices.

Cases the model gets wrong (documented in docs/event-graph.md):
  - a server that replies and then waits for a client that computes for a
    long time in the same run before its next request: the server's wait
    is downstream of its reply, so it is "sync" (the client is the real
    hang, and it is found too);
  - a request answered through a path with a culled kernel wakeup in it
    (a timer-driven retry, a device) is not reached: the wait stays idle;
  - a nested wait site used as often as the loop site is taken as the loop
    (ties go to idle);
  - a one-way message (an X11 request with no reply) consumed by a thread
    that then blocks outside its loop looks like a request being served.

Invariant: wait_kind is a pure function of the graph; every vertex in a
closure is at or after the wait's iteration start.
"""
from collections import Counter, deque

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G

BLOCKING, UNKNOWN, NESTED, SYNC, PENDING, IDLE = "blocking", "unknown", "nested", "sync", "pending", "idle"
NOT_IDLE = (BLOCKING, NESTED, SYNC, PENDING)
STRONG_TYPES = (G.EDGE_WAKEUP, G.EDGE_SPAWN, G.EDGE_MESSAGE, G.EDGE_DATA_FLAG)
MAX_CLOSURE = 512


def is_poll(g, v):
    return bool(g.seg.wait_known[v]) and int(g.seg.wait_reason[v]) == schema.WAIT_POLL


def site(g, v):
    """The wait site of a blocked vertex: (syscall nr, wait_obj)."""
    return int(g.seg.wait_nr[v]), int(g.seg.wait_obj[v])


class Sites:
    """Per-thread POLL site counts, computed once per graph (cached on it)."""

    def __init__(self, g):
        seg = g.seg
        sel = np.flatnonzero((seg.end_kind == G.END_BLOCKED) & seg.wait_known
                             & (seg.wait_reason == schema.WAIT_POLL))
        self.counts = {}
        for u, nr, obj in zip(seg.utid[sel].tolist(), seg.wait_nr[sel].tolist(), seg.wait_obj[sel].tolist()):
            self.counts.setdefault(u, Counter())[(int(nr), int(obj))] += 1

    def loop_site(self, utid):
        c = self.counts.get(int(utid))
        if not c:
            return None
        return max(c.items(), key=lambda kv: (kv[1], -kv[0][0], -kv[0][1]))[0]

    def is_nested(self, g, v):
        c = self.counts.get(int(g.seg.utid[v]))
        if not c:
            return False
        return c[site(g, v)] < c[self.loop_site(int(g.seg.utid[v]))]


def sites(g):
    s = getattr(g, "_wait_sites", None)
    if s is None:
        s = g._wait_sites = Sites(g)
    return s


def iteration_start(g, v):
    """First vertex of v's run: back over split boundaries (same run)."""
    seg = g.seg
    while True:
        p = g.prev_segment(v)
        if p < 0 or seg.end_kind[p] != G.END_SPLIT:
            return v
        v = p


def _strong_out(g, x, after, until):
    """Strong causal out edges of x leaving in [after, until].  A spawn of
    another process (fork: a shell's background job, a daemon's child) is
    not a request the parent waits for; a thread spawn (a helper) is."""
    ed = g.edges
    pid = g.seg.pid
    for e in g.out_edges(x).tolist():
        if ed.type[e] in STRONG_TYPES and not ed.weak[e] and after <= ed.src_ts[e] and ed.ts[e] <= until \
                and ed.dst[e] != ed.src[e] and (ed.type[e] != G.EDGE_SPAWN or pid[ed.dst[e]] == pid[ed.src[e]]):
            yield e


def _idle_at_loop(g, x, s):
    """x's wait is a POLL wait at its thread's loop site (an iteration boundary)."""
    return is_poll(g, x) and site(g, x) == s.loop_site(int(g.seg.utid[x]))


def _returned_home(g, x):
    """x waits where its thread waited before this run (the wait it was woken
    from): a worker back on its queue, a server back in its loop: done."""
    p = g.prev_segment(iteration_start(g, x))
    return p >= 0 and g.seg.end_kind[p] == G.END_BLOCKED and bool(g.seg.wait_known[p]) \
        and int(g.seg.wait_reason[p]) == int(g.seg.wait_reason[x]) and site(g, p) == site(g, x)


def _serving(g, x, s):
    """x ended blocked still on the request: a known wait that is neither at its
    thread's loop site nor back at the wait its run was woken from."""
    return g.seg.end_kind[x] == G.END_BLOCKED and bool(g.seg.wait_known[x]) and not _idle_at_loop(g, x, s) \
        and not _returned_home(g, x)


class Closure(dict):
    """{vertex: edge id that reached it (-1: program order)}, plus `replies`:
    the vertices reached only by an answer (below)."""

    def __init__(self):
        super().__init__()
        self.replies = set()


def _origin_pid(g, x):
    """pid of the thread whose wakeup started x's run, or -1."""
    e = int(g.in_wake[iteration_start(g, x)])
    return int(g.seg.pid[int(g.edges.src[e])]) if e >= 0 else -1


def downstream(g, v, until=None):
    """Forward closure of v's run's actions (module comment).  v's own run
    (its split predecessors) is the root and not in the result.

    An edge from x back to the process whose request started x's work is an
    answer: its target received a reply, not a request, so it is never
    taken to be serving (a client that sleeps after a reply before its next
    request is not a service sleeping before it answers)."""
    seg = g.seg
    s = sites(g)
    until = g.trace_end if until is None else int(until)
    root = int(v)
    first = iteration_start(g, root)
    own = int(seg.utid[root])
    out = Closure()
    q = deque()

    def reach(x, ts, origin):
        sent = False
        for e in _strong_out(g, x, ts, until):
            sent = True
            d = int(g.edges.dst[e])
            if int(seg.utid[d]) == own or d in out:
                continue
            out[d] = int(e)
            if int(seg.pid[d]) == origin:
                out.replies.add(d)
            q.append((d, int(g.edges.ts[e]), int(seg.pid[x])))
        return sent

    origin = _origin_pid(g, root)
    for x in range(first, root + 1):
        reach(x, int(seg.start[first]), origin)
    while q and len(out) < MAX_CLOSURE:
        x, ts, origin = q.popleft()
        sent = reach(x, ts, origin)
        n = g.next_segment(x)
        if n < 0 or seg.start[n] > until or n in out:
            continue
        split = seg.end_kind[x] == G.END_SPLIT
        if split or (not sent and x not in out.replies and _serving(g, x, s)):
            out[n] = -1
            if x in out.replies:
                out.replies.add(n)
            q.append((n, int(seg.start[n]), origin))
    return out


def _still_busy(g, x, s, closure):
    """x is its thread's last vertex and the thread is still on a request at
    trace end: running, or serving and silent since it was reached."""
    seg = g.seg
    if g.next_segment(x) >= 0 or x in closure.replies:
        return False
    if seg.end_kind[x] == G.END_TRACE:
        return True
    return bool(seg.wait_ongoing[x]) and not any(_strong_out(g, x, int(seg.start[x]), g.trace_end)) \
        and _serving(g, x, s)


def ending_edge(g, v):
    """The edge that ended v's wait: the wakeup / spawn edge into v's successor,
    else a strong message edge into it at its start; -1 when none."""
    n = g.next_segment(v)
    if n < 0:
        return -1
    e = int(g.in_wake[n])
    if e >= 0:
        return e
    return -1


def wait_kind(g, v, last=None):
    """(kind, detail) for a vertex that ended blocked (module comment); `last`:
    the last piece when spurious wakeups split one syscall's wait.
    detail: {"site", "loop_site"} and, for sync / pending, "callee": the
    reached vertex that answered (sync) or is still busy (pending), and
    "closure": how many vertices were reached."""
    seg = g.seg
    v = int(v)
    if not seg.wait_known[v]:
        return UNKNOWN, {}
    if int(seg.wait_reason[v]) != schema.WAIT_POLL:
        return BLOCKING, {}
    s = sites(g)
    detail = {"site": list(site(g, v)), "loop_site": list(s.loop_site(int(seg.utid[v])) or ())}
    if s.is_nested(g, v):
        kind = NESTED
    else:
        kind = IDLE
    last = v if last is None else int(last)
    we = int(seg.wait_end[last])
    closure = downstream(g, v, until=we)
    detail["closure"] = len(closure)
    e = ending_edge(g, last)
    if e >= 0 and int(g.edges.src[e]) in closure:
        detail["callee"] = int(g.edges.src[e])
        return (SYNC if kind == IDLE else kind), detail
    if seg.wait_ongoing[last]:
        busy = [x for x in closure if _still_busy(g, x, s, closure)]
        if busy:
            detail["callee"] = min(busy, key=lambda x: (int(seg.start[x]), x))
            return (PENDING if kind == IDLE else kind), detail
    return kind, detail


def callee_path(g, v, callee):
    """Vertices from v's run to `callee` along the closure's tree edges
    (v's successor side first is not included): [v, ..., callee]."""
    closure = downstream(g, v, until=g.trace_end)
    if callee not in closure:
        return [int(v)]
    out = [int(callee)]
    x = int(callee)
    while True:
        e = closure.get(x)
        if e is None:
            break
        x = int(g.edges.src[e]) if e >= 0 else x - 1
        if x not in closure:
            break
        out.append(x)
    out.append(int(v))
    return out[::-1]
