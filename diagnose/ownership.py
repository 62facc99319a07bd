"""Who holds what a hung thread polls or waits for: the candidate holders
behind the ownership edges of the graph (graph.EDGE_OWNERSHIP), and, for a
GIL-like lock the graph has no edge for, the thread that released it.

An ownership edge goes from the holder's vertex to the victim's vertex that
waited for / tried what the holder held at that time.  Its owner_kind says
how the graph knows: the futex word or the glibc mutex's owner field named
the holder (futex_owner), the holder woke waiters of the same futex before
(futex_channel: condition variables, CPython's GIL), the holder took the
file lock the victim's fcntl / flock tried (file_lock), or the victim joins
the holder: it waits on the futex the kernel clears at the holder's exit
(thread_exit).  Inferred ones are weak.

Algorithm (owners): take the ownership edges entering the victim thread's
vertices with ts in [a, b] (a RepeatedYield polls from many vertices, one
per try), or, for a LongWait, the edges entering its waiting vertex
whatever their ts (the try happened when the wait began, possibly before
the window); drop the thread's own edges; group them by holder thread.  A
holder is strong when any of its edges is strong.  Rank: strong before
weak, then most edges (polls / tries pointing at it), then most CPU time
in [a, b], then utid.  The representative edge of a holder is its most
recent one: its source is the holder's vertex the walk continues from.

Algorithm (release_owners, when owners finds none): the graph's channel
edges need a wake that ended a wait on the address before the try; the
holder of a GIL-like lock that never let go before the hang has none.  It
does release it at the end of its hold with a FUTEX_WAKE-family call on
the condition the poller waits on (CPython's drop_gil signals gil->cond),
whether or not a waiter was asleep to be woken.  So: the threads of the
victim's process, other than the victim, that made such a call on one of
the addresses the victim polled in [a, b] (polled_addresses), between a
and b + RELEASE_SLACK_NS; weak futex_channel candidates with no graph edge
(edge -1), ranked like the others.  Nothing when the hold is still going
on at trace end.

Invariants: one Owner per holder thread; never the victim itself; owners
are ranked best first; an Owner's edge is one of its edges, or -1 for a
release waker, whose vertex is its segment at the wake.
"""
from dataclasses import dataclass

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose import blocktype as B
from argus.diagnose.slice import EdgeRef

RELEASE_SLACK_NS = 20_000_000     # the release comes with the poller's last try, within one short wait


@dataclass
class Owner:
    utid: int
    vertex: int          # the holder's vertex (source of `edge`, or its segment at the release)
    edge: int            # its most recent ownership edge into the victim; -1: a release waker
    kind: str            # graph.OWNER_KIND_NAMES
    weak: bool           # every edge pointing at this holder is weak
    tries: int           # ownership edges (or releases) pointing at it
    cpu_ns: int          # on CPU inside [a, b]
    obj: int             # what is held (futex address, inode)
    ts: int              # when the most recent edge (or release) happened

    @property
    def tries_text(self):
        """"1 try points" / "N tries point" (at it), for the report and the question."""
        return "1 try points" if self.tries == 1 else f"{self.tries} tries point"

    def edge_ref(self, g, victim_vertex):
        """The EdgeRef of the hop holder -> victim (a pseudo one, eid -1,
        for a release waker)."""
        if self.edge >= 0:
            return EdgeRef.of(g, self.edge)
        return EdgeRef(-1, self.vertex, int(victim_vertex), G.EDGE_TYPE_NAMES[G.EDGE_OWNERSHIP], True,
                       self.ts, self.ts)

    def to_dict(self, g):
        return {"pid": int(g.threads.pid[self.utid]), "tid": int(g.threads.tid[self.utid]),
                "comm": g.comm(self.utid), "vertex": self.vertex, "eid": self.edge if self.edge >= 0 else None,
                "kind": self.kind, "weak": self.weak, "tries": self.tries, "cpu_ns": self.cpu_ns, "obj": self.obj,
                "release": self.edge < 0}


def _rank(owners):
    owners.sort(key=lambda o: (o.weak, -o.tries, -o.cpu_ns, o.utid))
    return owners


def ownership_edges(g, utid, a, b, vertex=None):
    """Edge ids of the ownership edges into utid's vertices with ts in [a, b]
    (into `vertex` only, any ts, when given), other threads' only.  Over a
    window (a poller's tries) a thread_exit edge does not count: a join
    explains the join's own wait, not what the thread polled before it (a
    thread that polls a flag and then joins the thread that set it)."""
    ed = g.edges
    if not len(ed):
        return np.zeros(0, np.int64)
    sel = ed.type == G.EDGE_OWNERSHIP
    if not sel.any():
        return np.zeros(0, np.int64)
    if vertex is not None:
        sel &= ed.dst == int(vertex)
    else:
        lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
        sel &= (ed.dst >= lo) & (ed.dst < hi) & (ed.ts >= a) & (ed.ts <= b) & (ed.owner_kind != G.OWNER_THREAD_EXIT)
    eids = np.flatnonzero(sel)
    return eids[g.seg.utid[ed.src[eids]] != utid]


def owners(g, utid, a, b, vertex=None):
    """The ranked candidate holders (Owner list, best first; see the top)."""
    eids = ownership_edges(g, utid, a, b, vertex)
    if not len(eids):
        return []
    ed = g.edges
    by_holder = {}
    for e in eids.tolist():
        by_holder.setdefault(int(g.seg.utid[ed.src[e]]), []).append(e)
    out = []
    for h, es in by_holder.items():
        last = max(es, key=lambda e: (int(ed.ts[e]), e))
        out.append(Owner(h, int(ed.src[last]), int(last), G.OWNER_KIND_NAMES.get(int(ed.owner_kind[last]), "?"),
                         bool(all(ed.weak[e] for e in es)), len(es), B.cpu_ns(g, h, a, b), int(ed.obj[last]),
                         int(ed.ts[last])))
    return _rank(out)


def polled_addresses(g, utid, a, b):
    """Addresses a yielding thread waited on with futex waits in [a, b],
    most frequent first (a flag polled in a loop is likely among them, or
    next to them).  Futex syscall numbers are the trace's (g.roles)."""
    r = g.rows[g.thread_rows_of(utid, a, b)]
    sel = (r["type"] == schema.SYSCALL_ENTER) & np.isin(r["nr"], sorted(g.roles.futex_nrs)) \
        & np.isin(r["aux"] & schema.FUTEX_CMD_MASK, sorted(schema.FUTEX_WAIT_OPS)) & (r["obj"] != 0)
    u, c = np.unique(r["obj"][sel], return_counts=True)
    return [int(x) for x, _ in sorted(zip(u.tolist(), c.tolist()), key=lambda kv: (-kv[1], kv[0]))]


def release_owners(g, utid, a, b):
    """Release wakers of what utid polled (see the top), ranked."""
    addrs = polled_addresses(g, utid, a, b)
    if not addrs:
        return []
    r = g.rows
    ts = r["ts_ns"].astype(np.int64)
    sel = (r["type"] == schema.SYSCALL_ENTER) & (r["pid"] == int(g.threads.pid[utid])) \
        & (r["tid"] != int(g.threads.tid[utid])) & (ts >= a) & (ts <= b + RELEASE_SLACK_NS) \
        & np.isin(r["nr"], sorted(g.roles.futex_nrs)) \
        & np.isin(r["aux"] & schema.FUTEX_CMD_MASK, sorted(schema.FUTEX_WAKE_OPS)) & np.isin(r["obj"], addrs)
    by_holder = {}
    for i in np.flatnonzero(sel).tolist():
        h = g.utid_of_tid(int(r["tid"][i]), at=int(ts[i]))
        if h is not None:
            by_holder.setdefault(h, []).append(i)
    out = []
    for h, idx in by_holder.items():
        last = idx[-1]
        at = int(ts[last])
        out.append(Owner(h, int(g.segment_at(h, at)), -1, G.OWNER_KIND_NAMES[G.OWNER_FUTEX_CHANNEL], True,
                         len(idx), B.cpu_ns(g, h, a, b), int(r["obj"][last]), at))
    return _rank(out)
