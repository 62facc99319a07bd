"""Goroutines' own waits (GO_* rows, `argus start --go-probes`).

A goroutine that is not locked to an OS thread waits without its thread:
it parks (GO_PARK, runtime.park_m) and its M goes on to run other
goroutines or sleeps as a spare; whoever readies it later (GO_READY,
runtime.ready) lets some M run it again (GO_EXECUTE).  No thread shows that
wait, so a thread-by-thread classification sees only a relay M that ran a
goroutine for a moment.  Here the goroutine that starts a segment (its
stint) is traced back to its park: a park long enough is a LongWait of that
goroutine, named on the M that ran it afterwards.

How the wait ended says where its cause lies:
  goroutine   GO_READY by a thread that was running a goroutine (a channel
              send, an Unlock): the graph core's goroutine edge leads there;
  runtime     GO_READY on a thread running none (Go's timers: a Sleep, a
              Timer): the wait is the end of the chain;
  netpoller   no GO_READY between the park and the execute (runtime.netpoll
              hands it over through injectglist): the data it then reads
              ended it (the core's rule in argus_graph_probes.c).
"""
import weakref

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G

_CACHE = weakref.WeakKeyDictionary()


def _process_rows(g, pid):
    """(ts, type, tid, g) of the process's GO_* rows, in time order."""
    per = _CACHE.setdefault(g, {})
    got = per.get(pid)
    if got is None:
        idx = [g.thread_rows[g.thread_rows_ptr[u]:g.thread_rows_ptr[u + 1]] for u in g.utids_of_pid(pid)]
        idx = np.concatenate(idx) if idx else np.zeros(0, dtype=np.int64)
        r = g.rows[idx]
        r = r[np.isin(r["type"], schema.GO_TYPES)]
        r = r[np.argsort(r["ts_ns"], kind="stable")]
        got = per[pid] = list(zip(r["ts_ns"].tolist(), r["type"].tolist(), r["tid"].tolist(), r["obj"].tolist()))
    return got


def stint(g, v):
    """(goroutine, execute ts) of the first GO_EXECUTE in segment v, or None."""
    rows = g.rows[g.segment_rows(v)]
    ex = rows[rows["type"] == schema.GO_EXECUTE]
    if len(ex) == 0:
        return None
    return int(ex["obj"][0]), int(ex["ts_ns"][0])


def wait_before(g, pid, gid, exec_ts):
    """The wait of goroutine gid that its execute at exec_ts ended: a dict
    (park_ts, park_tid, ready_ts, ready_tid, ended_by) or None when it did
    not park before (a new goroutine, a preempted one resumed)."""
    rows = _process_rows(g, pid)
    park = ready = None
    seen = False
    for ts, typ, tid, obj in rows:
        if ts >= exec_ts:
            break
        if obj != gid:
            continue
        if typ == schema.GO_READY and not seen and rows:
            # its first row a ready: it parked before the probes were on (a
            # program runs unprobed for a moment after its exec), so it waited
            # since the process's first GO_* row at least
            park = (rows[0][0], None)
        seen = True
        if typ == schema.GO_PARK:
            park, ready = (ts, tid), None
        elif typ == schema.GO_READY and park is not None:
            ready = (ts, tid)
        elif typ == schema.GO_EXECUTE:
            park = ready = None
    if park is None:
        return None
    if ready is None:
        how = "netpoller"
    else:
        # readied by a goroutine when its thread's last GO_* row before the
        # ready is an execute (a goroutine ran there), else by the runtime
        last = nxt = None
        for ts, typ, tid, obj in rows:
            if tid != ready[1] or typ == schema.GO_READY:
                continue
            if ts < ready[0]:
                last = typ
            else:
                nxt = (typ, obj)
                break
        if last is None and nxt is not None:
            # the thread's first GO_* row comes after the ready (the probes
            # came on while its goroutine ran): a goroutine other than this
            # one parking next was running there
            last = schema.GO_EXECUTE if nxt[0] == schema.GO_PARK and nxt[1] != gid else None
        how = "goroutine" if last == schema.GO_EXECUTE else "runtime"
    return {"park_ts": park[0], "park_tid": park[1], "before_probes": park[1] is None, "ready_ts": ready[0] if ready else None,
            "ready_tid": ready[1] if ready else None, "exec_ts": exec_ts, "ended_by": how}


def _timer_wait_start(g, tid, ts):
    """When the M that Go's timers readied a goroutine on began the timed
    wait whose expiry led to it (its segment at ts opened by a kernel timer
    ending its previous wait), else ts.  The runtime sleeps until its
    earliest timer, and a timer added earlier wakes it (wakeNetPoller), so
    the expired timer was armed, its goroutine parked, when that wait began:
    a bound for a goroutine that parked before the probes were on."""
    u = g.utid_of_tid(tid, ts)
    if u is None or u < 0:
        return ts
    v = g.segment_at(u, ts)
    for _ in range(8):       # back over the heuristic splits of the same run
        if v is None or v < 0 or g.start_label(v) != "split":
            break
        v = g.prev_segment(v)
    p = g.prev_segment(v) if v is not None and v >= 0 else -1
    if p is None or p < 0 or g.start_label(v) != "timer" or not g.seg.wait_known[p] or g.seg.wait_start[p] < 0:
        return ts
    return min(ts, int(g.seg.wait_start[p]))


def _netpolled_unseen(g, v, pid, gid, exec_ts):
    """A goroutine first seen at this execute (it parked before the probes
    were on) that the graph core took for the netpoller's: the core's
    goroutine edge into v from the sender of what it read (obj = gid), or
    the message edge of data sent before it ran.  It waited from before the
    process's first GO_* row until that send."""
    rows = _process_rows(g, pid)
    if not rows or any(obj == gid and ts < exec_ts for ts, _, _, obj in rows):
        return None
    for e in g.in_edges(v).tolist():
        typ, src = int(g.edges.type[e]), int(g.edges.src[e])
        if same_goroutine(g, src, v, gid) or int(g.edges.src_ts[e]) > exec_ts:
            continue
        # the core's goroutine edge; or, when a split of the M's run came
        # between its wake and the execute, the message it read
        if (typ == G.EDGE_WAKEUP and int(g.edges.obj[e]) == gid) or typ == G.EDGE_MESSAGE:
            send = int(g.edges.src_ts[e])
            return {"park_ts": min(rows[0][0], send), "park_tid": None, "before_probes": True, "ready_ts": send,
                    "ready_tid": int(g.seg.tid[int(g.edges.src[e])]), "exec_ts": exec_ts, "ended_by": "netpoller"}
    return None


def same_goroutine(g, src, v, gid):
    """Whether segment src, on an edge into segment v (whose stint runs
    goroutine gid), is gid's own program order rather than its cause: src
    runs gid, or runs no goroutine known and is on v's thread.  Another
    goroutine that ran on the same M just before (Go's timers readied a
    sender there, then the netpoller the receiver) is a cause like any
    other thread."""
    other = goroutine_at(g, src)
    if other is not None:
        return other == gid
    return int(g.seg.utid[src]) == int(g.seg.utid[v])


def stint_wait(g, v, min_ns, a=None):
    """The LongWait of the goroutine whose stint starts segment v: its wait
    dict plus goroutine and dur_ns, when it parked >= min_ns (and, with a,
    was still parked at a); else None."""
    s = stint(g, v)
    if s is None:
        return None
    gid, exec_ts = s
    pid = int(g.threads.pid[int(g.seg.utid[v])])
    w = wait_before(g, pid, gid, exec_ts)
    if w is None:
        w = _netpolled_unseen(g, v, pid, gid, exec_ts)
    if w is None:
        return None
    if w["before_probes"] and w["ended_by"] == "runtime":
        w["park_ts"] = min(w["park_ts"], _timer_wait_start(g, w["ready_tid"], w["ready_ts"]))
    end = w["ready_ts"] if w["ready_ts"] is not None else exec_ts
    if end - w["park_ts"] < min_ns or (a is not None and end < a):
        return None
    return dict(w, goroutine=gid, end_ts=end, dur_ns=end - w["park_ts"])


def timer_ended(g, v):
    """Whether segment v's wait ended when Go's timers readied the goroutine
    its thread runs next (a Sleep or a Timer of a goroutine locked to the
    thread): the graph core culls that M's wake as a timer's, and nothing
    behind the wait is its cause."""
    nxt = g.next_segment(v)
    if nxt is None or nxt < 0 or g.start_label(nxt) != "timer":
        return False
    s = stint(g, nxt)
    if s is None:
        return False
    w = wait_before(g, int(g.threads.pid[int(g.seg.utid[nxt])]), s[0], s[1])
    return w is not None and w["ended_by"] == "runtime"


def runtime_thread(g, utid):
    """Whether thread utid of a Go process (GO_* rows present) never ran a
    goroutine in the trace: no GO_* row of its own.  With the probes on,
    such a thread that keeps running is the runtime's own (sysmon polling
    in short sleeps, a template thread), not user code."""
    pid = int(g.threads.pid[utid])
    rows = _process_rows(g, pid)
    if not rows:
        return False
    tid = int(g.threads.tid[utid])
    return not any(t == tid for _, _, t, _ in rows)


def goroutine_at(g, v):
    """The goroutine the thread of segment v runs at v's start: its stint's
    (the first GO_EXECUTE in v), else the last one it executed before v
    that it did not park since; None without GO_* rows."""
    s = stint(g, v)
    if s is not None:
        return s[0]
    utid = int(g.seg.utid[v])
    tid, pid = int(g.threads.tid[utid]), int(g.threads.pid[utid])
    at, cur = int(g.seg.start[v]), None
    for ts, typ, t, obj in _process_rows(g, pid):
        if ts > at:
            break
        if t != tid or typ == schema.GO_READY:
            continue
        cur = obj if typ == schema.GO_EXECUTE else None
    return cur

