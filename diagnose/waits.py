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
            site is (syscall nr, fd set): the graph's wait_site hash of the
            set when the tracer recorded it (WAIT_SITE records), else
            wait_obj, the epoll fd or the first fd of a poll() set.  The
            loop site is the thread's most frequent POLL site (ties: the
            one seen first); a site used strictly less often is a nested
            loop or a one-off wait (GLib's call_sync polls a private
            context, PostgreSQL waits for a lock on its latch's own epoll
            set).
  sync      the wait ended with a wakeup that is causally downstream of
            what the thread itself did in the same iteration just before
            the wait (a message, a write, a wakeup of a helper thread):
            downstream(g, v) reaches the waker's vertex.  At the loop site
            the waker must be another process: a loop that hands work to
            its own worker threads and waits in its loop stays responsive
            (a synchronous helper call waits at a nested site instead).
  pending   the wait is still going on at trace end and something the
            thread started is still being worked on: downstream(g, v)
            reaches a thread that is running at trace end, or still
            serving (below) and has sent nothing since it was reached (at
            the loop site: of another process, as for sync).
  idle      everything else.

downstream(g, v): the forward closure of v's actions, inside the wait
window [iteration start of v, t_end], over strong causal edges only
(wakeup, thread spawn, message, data_flag; weak lock hand-overs, timer
edges and forks of other processes are not followed: a timer armed
elsewhere is not "the request", nor is a shell's background job).  From a
reached vertex x (entered at ts):
  - x's out edges leaving at or after ts are followed;
  - a relay (a process reached by the request that then receives an
    answer from further downstream: a proxy, a bus daemon) is followed
    across up to MAX_RELAY_ITERATIONS of its loop waits after that answer
    (the answer may arrive in pieces: nginx reads the upstream's headers,
    waits, reads the body, then replies);
  - x's program-order successor is reached when x ended by a split (the
    same run), or when x is *serving*: it sent nothing after it was reached
    (the request is neither answered nor forwarded), it was not reached by
    an answer (answers(): only who spoke first in a conversation tells a
    request from a reply), its wait is not at its thread's loop site, and
    it is not back at the site of the wait its run was woken from (a
    worker back on its queue is done; a service sleeping or computing
    before it replies, a backend waiting for a lock in a nested epoll set
    is serving).  An event-loop thread is never crossed at its own loop
    site by program order: its next iteration is reached only through the
    edge that woke it (no over-connection through an X server's or a bus
    daemon's loop).
Bounded by MAX_CLOSURE vertices.

A wait ended by a culled "net" wakeup (loopback TCP delivered in a softirq
the tracer cannot pin on the sender) is answered by the closure vertex that
sent within NET_SLACK_NS before it.  Pieces of one wait re-polled after
timeouts (curl) are joined by repoll_continues; a futex waited for again
after timeouts (HotSpot's contended monitor, timed condition waits in a
loop) by rewait_continues.

Cases the model gets wrong (docs/event-graph.md lists them all): an event
loop's asynchronous request to another process answered >= 2 s later with
nothing else waking the loop is "sync"; a server that replied and waits
for a client computing in the same run before its next request is "sync";
an answer through a culled wakeup other than loopback "net" is not
reached; a conversation whose first visible message is a reply flips
request and reply; a one-way message consumed by a thread that then
blocks outside its loop looks like a request being served.

Invariant: wait_kind is a pure function of the graph; every vertex in a
closure is at or after the wait's iteration start.
"""
from collections import Counter, deque

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose.blocktype import cpu_ns

BLOCKING, UNKNOWN, NESTED, SYNC, PENDING, IDLE = "blocking", "unknown", "nested", "sync", "pending", "idle"
NOT_IDLE = (BLOCKING, NESTED, SYNC, PENDING)
STRONG_TYPES = (G.EDGE_WAKEUP, G.EDGE_SPAWN, G.EDGE_MESSAGE, G.EDGE_DATA_FLAG)
MAX_CLOSURE = 512
MAX_CONVERSATION = 16       # turns answers() walks back
MAX_RELAYS = 2
MAX_RELAY_ITERATIONS = 2    # loop iterations of a relay (a proxy) followed after its upstream answered
NET_SLACK_NS = 10_000_000
FUTEX_NEIGHBOURHOOD = 8      # bytes: a condition variable's two futex words
IRQ_TIMER = {v: k for k, v in schema.IRQ_NAMES.items()}["timer"]    # a loopback answer's send to its culled "net" wakeup


def is_poll(g, v):
    return bool(g.seg.wait_known[v]) and int(g.seg.wait_reason[v]) == schema.WAIT_POLL


def _site_col(g):
    """The per-vertex fd-set hash when the graph has it (WAIT_SITE records),
    else wait_obj (the epoll fd; the first fd of a poll set)."""
    if "wait_site" in g.seg.names:
        ws = g.seg.wait_site
        return np.where(ws != 0, ws.astype(np.uint64), g.seg.wait_obj.astype(np.uint64))
    return g.seg.wait_obj


def site(g, v):
    """The wait site of a blocked vertex: (syscall nr, fd set)."""
    return int(g.seg.wait_nr[v]), int(sites(g).col[v])


class Sites:
    """Per-thread POLL site counts, computed once per graph (cached on it)."""

    def __init__(self, g):
        seg = g.seg
        sel = np.flatnonzero((seg.end_kind == G.END_BLOCKED) & seg.wait_known
                             & (seg.wait_reason == schema.WAIT_POLL))
        self.col = _site_col(g)
        self.counts = {}
        for u, nr, obj in zip(seg.utid[sel].tolist(), seg.wait_nr[sel].tolist(), self.col[sel].tolist()):
            self.counts.setdefault(u, Counter())[(int(nr), int(obj))] += 1

    def loop_site(self, utid):
        c = self.counts.get(int(utid))
        if not c:
            return None
        # ties go to the site seen first: a server waits in its loop before
        # any request makes it wait anywhere else (Counter keeps first-seen order)
        return max(enumerate(c.items()), key=lambda ikv: (ikv[1][1], -ikv[0]))[1][0]

    def is_nested(self, g, v):
        c = self.counts.get(int(g.seg.utid[v]))
        if not c:
            return False
        return c[site(g, v)] < c[self.loop_site(int(g.seg.utid[v]))]


def sites(g):
    s = g.derived.wait_sites
    if s is None:
        s = g.derived.wait_sites = Sites(g)
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
    from): a worker back on its queue, a server back in its loop: done.  A
    futex counts as the same within FUTEX_NEIGHBOURHOOD bytes: a glibc
    condition variable alternates between two adjacent words
    (__g_signals[0] / [1])."""
    p = g.prev_segment(iteration_start(g, x))
    if p < 0 or g.seg.end_kind[p] != G.END_BLOCKED or not g.seg.wait_known[p] \
            or int(g.seg.wait_reason[p]) != int(g.seg.wait_reason[x]):
        return False
    if int(g.seg.wait_reason[x]) == schema.WAIT_FUTEX:
        return abs(int(g.seg.wait_obj[p]) - int(g.seg.wait_obj[x])) <= FUTEX_NEIGHBOURHOOD
    return site(g, p) == site(g, x)


def _serving(g, x, s):
    """x ended blocked still on the request: a known wait that is neither at its
    thread's loop site nor back at the wait its run was woken from."""
    return g.seg.end_kind[x] == G.END_BLOCKED and bool(g.seg.wait_known[x]) and not _idle_at_loop(g, x, s) \
        and not _returned_home(g, x)


class Closure(dict):
    """{vertex: edge id that reached it (-1: program order)}, plus `replies`:
    the vertices reached only by an answer (below), `requested`: the
    processes a request reached, `relay`: relay iterations left."""

    def __init__(self):
        super().__init__()
        self.replies = set()
        self.requested = set()    # pids reached by a request
        self.relay = {}           # vertex -> loop iterations a relay may still be followed


def _requester(g, x, dst_pid):
    """(vertex of dst_pid whose message started x's work, the process it sent
    to), through at most MAX_RELAYS forks in between (a postmaster that
    forks the backend for the client that connected); (-1, -1) if none."""
    hop = int(g.seg.pid[x])
    e = int(g.in_wake[iteration_start(g, x)])
    for _ in range(MAX_RELAYS + 1):
        if e < 0:
            return -1, -1
        y = int(g.edges.src[e])
        if int(g.seg.pid[y]) == int(dst_pid):
            return y, hop
        if g.edges.type[e] != G.EDGE_SPAWN:
            return -1, -1
        hop = int(g.seg.pid[y])
        e = int(g.in_wake[iteration_start(g, y)])
    return -1, -1


def answers(g, x, dst_pid, depth=0):
    """x's send to process dst_pid answers a request: x's work was started by
    dst_pid's message (directly or through relays), and that message was not
    itself an answer.  The conversation is walked back to its beginning (at
    most MAX_CONVERSATION turns; without a beginning in sight it is taken as
    a request): in a ping-pong only who spoke first tells a request from a
    reply."""
    if depth >= MAX_CONVERSATION:
        return False
    y, to = _requester(g, x, dst_pid)
    if y < 0:
        return False
    return not answers(g, y, to, depth + 1)


def downstream(g, v, until=None):
    """Forward closure of v's run's actions (module comment).  v's own run
    (its split predecessors) is the root and not in the result.

    An edge that answers a request (answers()) reaches a thread that
    received a reply, not a request: it is never taken to be serving (a
    client that sleeps after a reply before its next request is not a
    service sleeping before it answers)."""
    seg = g.seg
    s = sites(g)
    until = g.trace_end if until is None else int(until)
    root = int(v)
    first = iteration_start(g, root)
    own = int(seg.utid[root])
    out = Closure()
    q = deque()

    def reach(x, ts):
        sent = False
        for e in _strong_out(g, x, ts, until):
            sent = True
            d = int(g.edges.dst[e])
            if int(seg.utid[d]) == own or d in out:
                continue
            out[d] = int(e)
            if answers(g, x, int(seg.pid[d])):
                out.replies.add(d)
            else:
                out.requested.add(int(seg.pid[d]))
            q.append((d, int(g.edges.ts[e])))
        return sent

    for x in range(first, root + 1):
        reach(x, int(seg.start[first]))
    while q and len(out) < MAX_CLOSURE:
        x, ts = q.popleft()
        sent = reach(x, ts)
        n = g.next_segment(x)
        if n < 0 or seg.start[n] > until or n in out:
            continue
        relay = out.relay.get(x, 0)
        if x in out.replies and relay == 0 and int(seg.pid[x]) in out.requested:
            relay = MAX_RELAY_ITERATIONS + 1      # a relay got its answer: it forwards it next
        if seg.end_kind[x] == G.END_SPLIT:
            out[n] = -1
            if x in out.replies:
                out.replies.add(n)
            if relay:
                out.relay[n] = relay
        elif (not sent and x not in out.replies and _serving(g, x, s)) or \
                (relay > 1 and seg.end_kind[x] == G.END_BLOCKED):
            out[n] = -1
            if x in out.replies:
                out.replies.add(n)
            if relay > 1:
                out.relay[n] = relay - 1
        else:
            continue
        q.append((n, int(seg.start[n])))
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
    """The edge that ended v's wait: the wakeup / spawn edge into v's
    successor (g.in_wake), -1 when none."""
    n = g.next_segment(v)
    return int(g.in_wake[n]) if n >= 0 else -1


def task_woke(g, e):
    """Edge e is a task's wakeup: a wakeup edge, or in a graph of several
    hosts the cross-host message that ended a wait the network woke
    (graphbuild/multihost.py), which stands for the sender's wakeup."""
    return e >= 0 and (g.edges.type[e] == G.EDGE_WAKEUP or (g.host_edges is not None and bool(g.host_edges[e])))


def _send_nrs(g):
    return np.array(sorted(g.roles.send_nrs), dtype=np.uint32)


def _net_answer(g, v, closure):
    """A wait ended by a culled network wakeup (TCP over loopback delivered
    in a softirq the tracer cannot pin on the sender): the closure vertex
    that sent within NET_SLACK_NS before it, else -1."""
    n = g.next_segment(v)
    if n < 0 or g.in_wake[n] >= 0 or g.start_label(n) != "net" or not closure:
        return -1
    we = int(g.seg.wait_end[v])
    nrs = _send_nrs(g)
    best, best_ts = -1, -1
    for x in closure:
        if g.seg.start[x] > we or max(g.seg.end[x], g.seg.wait_start[x]) < we - NET_SLACK_NS:
            continue
        r = g.rows[g.segment_rows(x)]
        ts = r["ts_ns"].astype(np.int64)
        sel = (r["type"] == schema.SYSCALL_ENTER) & np.isin(r["nr"], nrs) & (ts <= we) & (ts >= we - NET_SLACK_NS)
        if sel.any() and int(ts[sel].max()) > best_ts:
            best, best_ts = int(x), int(ts[sel].max())
    return best


ETIMEDOUT = 110
# a timed-out futex wait at least this long is a wait, not one try of a
# polling loop: blocktype's RepeatedYield needs >= 5 tries a second
REWAIT_MIN_NS = 200_000_000
# the most a thread may run between a timed-out wait and the next piece of
# the same wait: a re-poll or a recheck takes microseconds; a timer callback
# that computes between two polls (a GLib timeout, a Tk `after`) is not a wait.
# Time on CPU, not wall time: on a loaded machine the woken thread can sit
# runnable longer than this before its re-poll (a 3 s curl wait fell apart
# into 1 s pieces, and no hang was found, in one suite run of three)
TIMEOUT_GAP_MAX_NS = 10_000_000


def _only_calls(g, x, nr, ret_ok):
    """x's syscalls are all `nr`, every return passes ret_ok (an int64
    array -> bool array), and it reached nobody."""
    r = g.rows[g.segment_rows(x)]
    sc = r[(r["type"] == schema.SYSCALL_ENTER) | (r["type"] == schema.SYSCALL_EXIT)]
    rets = sc[schema.column(schema.SYSCALL_EXIT, "ret")][sc["type"] == schema.SYSCALL_EXIT].astype(np.int64)
    if (sc["nr"] != nr).any() or not ret_ok(rets).all():
        return False
    return not any(_strong_out(g, x, int(g.seg.start[x]), g.trace_end))


def _only_repoll(g, x, nr):
    """x's syscalls are all `nr` returning 0 (nothing ready) and it reached nobody."""
    return _only_calls(g, x, nr, lambda rets: rets == 0)


def _only_rewait(g, x, nr):
    """x's syscalls are all futex calls (the timed-out wait's return, a wake of
    the runtime's own internal mutex, the next wait), none failing otherwise
    (-EAGAIN: the word changed, something happened), and it reached nobody."""
    return _only_calls(g, x, nr, lambda rets: (rets >= 0) | (rets == -ETIMEDOUT))


def _timed_out_wait(g, b):
    """The wait before b lasted >= REWAIT_MIN_NS and returned -ETIMEDOUT (the
    first syscall return in b)."""
    a = b - 1
    if int(g.seg.wait_end[a]) - int(g.seg.wait_start[a]) < REWAIT_MIN_NS:
        return False
    r = g.rows[g.segment_rows(b)]
    rets = r[schema.column(schema.SYSCALL_EXIT, "ret")][r["type"] == schema.SYSCALL_EXIT]
    return len(rets) > 0 and int(rets[0]) == -ETIMEDOUT


def _same_futex(g, a, b):
    return (bool(g.seg.wait_known[b]) and int(g.seg.wait_reason[b]) == schema.WAIT_FUTEX
            and abs(int(g.seg.wait_obj[b]) - int(g.seg.wait_obj[a])) <= FUTEX_NEIGHBOURHOOD)


def _continued_after_timeouts(g, lo, hi, reason, only, same, timed_out=None):
    """For segments lo..hi-1 of one thread: whether segment x's wait (of
    `reason`) goes on after it: it ended by its timer and the thread did
    nothing but what only(g, y, nr) allows, within TIMEOUT_GAP_MAX_NS on CPU, until
    it blocked again where same(g, a, b) says is the same wait.  True for the
    timed-out wait and the segments up to the next blocking piece, like
    hangs._continues for spurious wakeups."""
    seg = g.seg
    out = [False] * (hi - lo)
    if hi - lo < 2:
        return out
    # only a wait ended by a timer (the timeout) can be re-entered: a
    # vectorized filter, so busy loops cost one numpy pass
    a_, b_ = slice(lo, hi - 1), slice(lo + 1, hi)
    cand = np.flatnonzero((seg.end_kind[a_] == G.END_BLOCKED) & seg.wait_known[a_]
                          & (seg.wait_reason[a_] == reason) & (g.in_wake[b_] < 0)
                          & (seg.start_irq[b_] == IRQ_TIMER)) + lo
    for a in cand.tolist():
        nr = int(seg.wait_nr[a])
        if timed_out is not None and not timed_out(g, a + 1):
            continue
        b = a + 1
        while b < hi and g.in_wake[b] < 0 and only(g, b, nr):
            if seg.end_kind[b] == G.END_BLOCKED:
                if same(g, a, b) and cpu_ns(g, int(seg.utid[a]), int(seg.wait_end[a]),
                                            int(seg.wait_start[b])) <= TIMEOUT_GAP_MAX_NS:
                    for x in range(a, b):
                        out[x - lo] = True
                break
            if seg.end_kind[b] != G.END_SPLIT:
                break
            b += 1
    return out


def repoll_continues(g, lo, hi):
    """A POLL wait that timed out (returned 0) followed by nothing but
    re-polls at the same site (curl's multi loop re-polls every second, with
    a non-blocking poll in between, while its request is pending)."""
    return _continued_after_timeouts(g, lo, hi, schema.WAIT_POLL, _only_repoll,
                                     lambda g, a, b: is_poll(g, b) and site(g, b) == site(g, a))


def rewait_continues(g, lo, hi):
    """A futex wait that timed out (-ETIMEDOUT) followed by nothing but futex
    calls that reached nobody and another wait on the same futex (within
    FUTEX_NEIGHBOURHOOD: a condition variable's two words): a lock or
    condition waited for with a timeout and re-waited.  HotSpot parks the
    one thread entering a contended monitor with timeouts of 1, 8, 64,
    512 ms then 1 s, rechecking in between; pthread_cond_timedwait and
    sem_timedwait loops (Python's Event.wait(timeout), Lock.acquire(timeout))
    do the same.  Only a timed-out piece of >= REWAIT_MIN_NS continues: a
    loop of shorter timed waits polls a data flag (RepeatedYield)."""
    return _continued_after_timeouts(g, lo, hi, schema.WAIT_FUTEX, _only_rewait, _same_futex, _timed_out_wait)


def timeout_continues(g, lo, hi):
    """repoll_continues or rewait_continues, per segment."""
    return [a or b for a, b in zip(repoll_continues(g, lo, hi), rewait_continues(g, lo, hi))]


def first_piece(g, v):
    """The first segment of the wait that v's wait continues (timeout_continues)."""
    v = int(v)
    u = int(g.seg.utid[v])
    lo = int(g.thread_seg_lo[u])
    cont = timeout_continues(g, lo, v + 1)
    while v > lo and cont[v - 1 - lo]:
        v -= 1
    return v


def quick_kind(g, v):
    """For waits shorter than a hang (hangs.py): blocking, unknown or idle,
    without sites or closure (a short POLL wait cuts a stretch)."""
    if not g.seg.wait_known[v]:
        return UNKNOWN
    return BLOCKING if int(g.seg.wait_reason[v]) != schema.WAIT_POLL else IDLE


def wait_kind(g, v, last=None):
    """(kind, detail) for a vertex that ended blocked (module comment); `last`:
    the last piece when spurious wakeups split one syscall's wait.
    detail: {"site", "loop_site"} and, for sync / pending, "callee": the
    reached vertex that answered (sync) or is still busy (pending), and
    "closure": how many vertices were reached."""
    seg = g.seg
    v = int(v)
    kind = quick_kind(g, v)
    if kind != IDLE:
        return kind, {}
    s = sites(g)
    detail = {"site": list(site(g, v)), "loop_site": list(s.loop_site(int(seg.utid[v])) or ())}
    if s.is_nested(g, v):
        kind = NESTED
    last = v if last is None else int(last)
    we = int(seg.wait_end[last])
    closure = downstream(g, v, until=we)
    detail["closure"] = len(closure)
    # At the loop site, work handed to a thread of the same process (a worker
    # pool, GDBus's worker delivering an async reply) is the loop staying
    # responsive, not a synchronous call: only another process counts there.
    own_pid = int(seg.pid[v])

    def counts(x):
        return kind != IDLE or int(seg.pid[x]) != own_pid

    e = ending_edge(g, last)
    answer = int(g.edges.src[e]) if e >= 0 else _net_answer(g, last, closure)
    if answer in closure and counts(answer):
        detail["callee"] = answer
        return (SYNC if kind == IDLE else kind), detail
    if seg.wait_ongoing[last]:
        busy = [x for x in closure if _still_busy(g, x, s, closure) and counts(x)]
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
