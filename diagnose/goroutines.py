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

Goroutines parked before the probes (GO_SNAPSHOT rows, parked_locked): the
probes come on 0.2-0.5 s after a Go program's exec, or long after a service
started, and a goroutine that parked before and stays parked has no GO_*
row at all.  argusd has tracer/gosnap.py read the process's goroutines once
when it attaches (ts = the attach): goid, wait reason ("chan receive",
"select", "sync.Mutex.Lock", "sleep", "IO wait"), the channel it waits on,
the thread (M) it is locked to.  The rule, for a thread T of the process at
time `at`:
  1. the last GO_SNAPSHOT row (ts = when gosnap read it, <= at) whose
     locked M is T names goroutine G (its g address) and its wait; its
     wait_since is the probes' attach (or g.waitsince, when Go's GC set it);
  2. G was never seen afterwards: no GO_* row of G's g from the read to
     `at` (a GO_EXECUTE or GO_READY would mean it ran or was readied; a
     GO_PARK of it on T means it parked again there, and is still parked:
     the wait is that park's, of a reason unknown);
  3. then T's wait at `at` is G's wait, not the M's own: it began at its
     last GO_PARK between the attach and the read (it ran in between), else
     at wait_since at the latest, on
     G's wait object (the channel), of kind
       timer   "sleep", or a receive from a timer's channel (hchan.timer):
               Go's timers end it, the wait is the end of the chain;
       process anything else (a channel, select, a sync primitive, a
               semaphore, IO wait through the netpoller): whoever ends it is
               another goroutine, so most likely a thread of the same
               process (for an IO wait whose fd the snapshot found, the
               holders of its other end in other processes come first:
               objects.fd_peer_holders); the walk takes the process's held-up threads
               (algorithm._Run.process_peers), never the M's own earlier
               park-futex waits, which the runtime reuses for every park of
               that M (start-up hand-offs, not baselines of this wait).
A goroutine not locked to an M has no thread whose waits it could stand
for; its snapshot row bounds its wait once a stint of it is on the path
(stint_wait, snapshot_since): one first seen when readied, with no GO_* row
before, that the snapshot saw parked waited since the snapshot's
wait_since at the latest, not only since the process's first GO_* row or
the start of the timed wait of the M whose timer readied it (a program
whose goroutines all sleep has its first GO_* row at the end).
"""
import dataclasses
import weakref

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose import blocktype as B

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
    if w["before_probes"]:
        # the snapshot saw it parked (locked to an M or not) and no GO_* row of
        # it came before this stint: parked since the snapshot's wait_since
        since = snapshot_since(g, pid, gid, exec_ts)
        if since is not None:
            w["park_ts"] = min(w["park_ts"], since)
    end = w["ready_ts"] if w["ready_ts"] is not None else exec_ts
    if end - w["park_ts"] < min_ns or (a is not None and end < a):
        return None
    return dict(w, goroutine=gid, end_ts=end, dur_ns=end - w["park_ts"])


def _snapshot_rows(g):
    """The graph's GO_SNAPSHOT rows in time order, selected and sorted once
    for both indexes built from them (snapshot_since, _snapshots)."""
    per = _CACHE.setdefault(g, {})
    rows = per.get("snap_rows")
    if rows is None:
        rows = g.rows[g.rows["type"] == schema.GO_SNAPSHOT]
        rows = per["snap_rows"] = rows[np.argsort(rows["ts_ns"], kind="stable")]
    return rows


def snapshot_since(g, pid, gid, at):
    """When goroutine gid (its g) of process pid was parked since, by the
    last GO_SNAPSHOT row of it read before `at` (its wait_since, else when
    it was read), locked to an M or not; None without one."""
    per = _CACHE.setdefault(g, {})
    by_g = per.get("snap_g")
    if by_g is None:
        by_g = per["snap_g"] = {}
        for r in _snapshot_rows(g):
            ts, since = int(r["ts_ns"]), int(r["val"])
            by_g.setdefault((int(r["pid"]), int(r["obj"])), []).append((ts, since if 0 < since <= ts else ts))
    seen = [since for ts, since in by_g.get((pid, gid), ()) if ts <= at]
    return seen[-1] if seen else None


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



def go_program(g, pid):
    """Whether process pid runs goroutines the trace shows (GO_* rows, or a
    GO_SNAPSHOT of its goroutines)."""
    if _process_rows(g, pid):
        return True
    per = _CACHE.setdefault(g, {})
    if "snap_pids" not in per:
        rows = g.rows[g.rows["type"] == schema.GO_SNAPSHOT]
        per["snap_pids"] = frozenset(int(p) for p in np.unique(rows["pid"]))
    return pid in per["snap_pids"]


def lock_held_in_process(g, v):
    """The inode of the file lock (flock, a record lock) segment v waits for
    when the kernel names v's own process as its holder in a Go program,
    else None.  The lock belongs to a goroutine: the M that took it (the
    thread the lock table keeps) runs other goroutines since, or is v's own
    thread, which took it for another goroutine (flock locks an open file,
    so two goroutines on two descriptors of one file exclude each other
    whatever M runs them)."""
    utid = int(g.seg.utid[v])
    pid = int(g.threads.pid[utid])
    if not g.seg.wait_known[v] or not go_program(g, pid):
        return None
    ws = int(g.seg.wait_start[v])
    r = g.rows[g.thread_rows_of(utid, int(g.seg.start[v]), ws)]
    r = r[(r["type"] == schema.FILE_LOCK) & (r["peer_tid"] != 0)]
    if not len(r) or int(r["peer_pid"][-1]) != pid:
        return None
    return int(r["obj"][-1])


# --- goroutines parked before the probes (GO_SNAPSHOT; see the top) ---

TIMER_WAITS = ("sleep",)


def _on_timer(wait, timer_flag):
    """Whether a snapshot's wait is Go's timers' alone: a "sleep", or a
    receive from timers' channels only (GO_SNAP_TIMER)."""
    return wait in TIMER_WAITS or bool(timer_flag)


def _snapshots(g):
    """GO_SNAPSHOT rows as dicts, by (pid, locked tid), each list in time order."""
    per = _CACHE.setdefault(g, {})
    got = per.get("snap")
    if got is None:
        got = per["snap"] = {}
        for r in _snapshot_rows(g):
            flags = int(r["irq"])
            if not flags & schema.GO_SNAP_LOCKED:
                continue
            got.setdefault((int(r["pid"]), int(r["tid"])), []).append({
                "ts": int(r["ts_ns"]), "g": int(r["obj"]), "goid": int(r["nr"]), "status": int(r["state"]),
                "reason": int(r["reason"]), "wait": schema.go_snapshot_wait(r, g.strings),
                "wait_obj": int(r["obj2"]), "since": int(r["val"]), "timer": bool(flags & schema.GO_SNAP_TIMER),
                "fd": int(r["aux"]) if flags & schema.GO_SNAP_FD else -1, "tid": int(r["tid"])})
    return got


def parked_locked(g, utid, at):
    """The goroutine locked to thread utid that the snapshot found parked
    and that nothing showed again up to `at` (rules 1-3 at the top): a dict
    (goid, g, wait, wait_obj, park_ts, kind "timer" | "process",
    parked_again) or None."""
    pid, tid = int(g.threads.pid[utid]), int(g.threads.tid[utid])
    snaps = [s for s in _snapshots(g).get((pid, tid), ()) if s["ts"] <= at]
    if not snaps:
        return None
    s = snaps[-1]
    # the row's ts is when gosnap read the goroutine; since, the probes'
    # attach (or Go's waitsince): a GO_* row of it in between is its own
    # program order up to the park the snapshot saw (it ran after the attach
    # and parked again before the read, with the snapshot's reason)
    since = s["since"] if 0 < s["since"] <= s["ts"] else s["ts"]
    park_ts, again = since, False
    for ts, typ, t, obj in _process_rows(g, pid):
        if ts > at:
            break
        if ts < since or obj != s["g"]:
            continue
        if ts <= s["ts"]:
            park_ts = ts if typ == schema.GO_PARK else since      # before the read
            continue
        if typ == schema.GO_PARK and t == tid:
            park_ts, again = ts, True
        else:
            park_ts, again = None, False      # it ran, or was readied
    if park_ts is None:
        return None
    timer = not again and _on_timer(s["wait"], s["timer"])
    return {"goid": s["goid"], "g": s["g"], "wait": "parked" if again else s["wait"],
            "wait_obj": 0 if again else s["wait_obj"], "fd": -1 if again else s["fd"],
            "park_ts": park_ts, "snapshot_ts": s["ts"],
            "kind": "timer" if timer else "process", "parked_again": again}


def timer_sleepers(g, pid, at):
    """Goroutines of process pid not locked to any thread that the snapshot
    saw asleep on a timer ("sleep", or a receive from timers' channels only)
    and that nothing showed again up to `at` (no GO_* row of their g after
    the read): dicts (goid, g, wait, since), goid order.  Of a Go program's
    parked goroutines only these wake by themselves; one on a channel or a
    lock waits for another goroutine, as the one it may be blocking does."""
    rows = [r for r in _snapshot_rows(g) if int(r["pid"]) == pid and int(r["ts_ns"]) <= at
            and not int(r["irq"]) & schema.GO_SNAP_LOCKED]
    last = {}
    for r in rows:                      # the latest read of each goroutine
        last[int(r["obj"])] = r
    seen = {}
    for ts, _typ, _t, obj in _process_rows(g, pid):
        if ts > at:
            break
        seen[obj] = ts
    out = []
    for gp, r in last.items():
        read, since = int(r["ts_ns"]), int(r["val"])
        wait = schema.go_snapshot_wait(r, g.strings)
        if not _on_timer(wait, int(r["irq"]) & schema.GO_SNAP_TIMER) or seen.get(gp, -1) > read:
            continue
        out.append({"goid": int(r["nr"]), "g": gp, "wait": wait, "since": since if 0 < since <= read else read})
    return sorted(out, key=lambda s: s["goid"])


def timer_park_readied(g, v):
    """Whether segment v's wait (its thread an M) ended with the ready of the
    goroutine locked to that M that the snapshot saw parked on Go's timers
    ("sleep", or a receive from timers' channels only): the first GO_* row
    of that g after the read is a GO_READY inside the wait (one before it
    means the goroutine ran again before this wait: a quick sleep of an
    earlier round, not this wait's).
    Only a timer readies such a goroutine, whichever M ran the timer (one
    may be running another goroutine's work then, and the graph core takes
    its ready for that goroutine's): the wait is the end of the chain."""
    utid = int(g.seg.utid[v])
    pid, tid = int(g.threads.pid[utid]), int(g.threads.tid[utid])
    start, end = int(g.seg.wait_start[v]), int(g.seg.wait_end[v])
    snaps = [x for x in _snapshots(g).get((pid, tid), ()) if x["ts"] <= end]
    if not snaps or not _on_timer(snaps[-1]["wait"], snaps[-1]["timer"]):
        return False
    s = snaps[-1]
    for ts, typ, _t, obj in _process_rows(g, pid):
        if ts > end:
            return False
        if ts > s["ts"] and obj == s["g"]:
            return typ == schema.GO_READY and ts >= start
    return False


def describe_parked(p):
    """'goroutine 7 locked here, parked before the probes: chan receive on 0xc000012345'."""
    obj = f" on {'timer channel' if p['kind'] == 'timer' and p['wait_obj'] else 'channel'} {p['wait_obj']:#x}" \
        if p["wait_obj"] else (f" on fd {p['fd']}" if p.get("fd", -1) >= 0 else "")
    when = "parked again" if p["parked_again"] else "parked before the probes"
    return f"goroutine {p['goid']} locked here, {when}: {p['wait'] or 'wait'}{obj}"


def with_parked(g, c, b):
    """Classification c of a thread, with the goroutine locked to it that
    parked before the probes and stayed parked (parked_locked at b) named
    in its LongWait's evidence ("go_parked", and the longest wait's
    "what"): the M's wait is that goroutine's.  c unchanged otherwise."""
    if c.block_type != B.LONG_WAIT:
        return c
    p = parked_locked(g, c.utid, int(b))
    if p is None:
        return c
    lw = dict(c.evidence.get("longest_wait") or {})
    lw["what"] = describe_parked(p) + (f" ({lw['what']})" if lw.get("what") else "")
    return dataclasses.replace(c, evidence=dict(c.evidence, longest_wait=lw, go_parked=p))


def idle_m(g, c, b):
    """Whether thread c.utid, classified c over a window ending at b, is an
    idle M of a Go program whose goroutines the snapshot saw: a LongWait in
    a futex with no goroutine locked to it parked (parked_locked).  Go
    parks goroutines, not threads: an M asleep in a futex has no goroutine
    to run (a spare M, the template thread) unless one is locked to it, and
    holds nothing another goroutine waits for."""
    if c.block_type != B.LONG_WAIT or ((c.evidence.get("longest_wait") or {}).get("reason")) != "futex":
        return False
    pid = int(g.threads.pid[c.utid])
    if not any(p == pid for p, _ in _snapshots(g)):
        return False
    return parked_locked(g, c.utid, int(b)) is None
