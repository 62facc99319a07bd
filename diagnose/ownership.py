"""Who holds what a hung thread polls or waits for: the candidate holders
behind the ownership edges of the graph (graph.EDGE_OWNERSHIP).

An ownership edge goes from the holder's vertex to the victim's vertex that
waited for / tried what the holder held at that time.  Its owner_kind says
how the graph knows: the futex word or the glibc mutex's owner field named
the holder (futex_owner), the holder woke waiters of the same futex before
(futex_channel: condition variables, CPython's GIL), or the holder took the
file lock the victim's fcntl / flock tried (file_lock).  Inferred ones are
weak.

Algorithm (owners): take the ownership edges entering the victim thread's
vertices with ts in [a, b] (a RepeatedYield polls from many vertices, one
per try), or, for a LongWait, the edges entering its waiting vertex
whatever their ts (the try happened when the wait began, possibly before
the window); drop the thread's own edges; group them by holder thread.  A
holder is strong when any of its edges is strong.  Rank: strong before
weak, then most edges (polls / tries pointing at it), then most CPU time
in [a, b], then utid.  The representative edge of a holder is its most
recent one: its source is the holder's vertex the walk continues from.

Invariants: one Owner per holder thread; never the victim itself; owners
are ranked best first; an Owner's edge is one of its edges.
"""
from dataclasses import dataclass

import numpy as np

from argus.graphbuild import graph as G


@dataclass
class Owner:
    utid: int
    vertex: int          # the holder's vertex (source of `edge`)
    edge: int            # its most recent ownership edge into the victim
    kind: str            # graph.OWNER_KIND_NAMES
    weak: bool           # every edge pointing at this holder is weak
    tries: int           # ownership edges pointing at it
    cpu_ns: int          # on CPU inside [a, b]
    obj: int             # what is held (futex address, inode), from `edge`

    def to_dict(self, g):
        return {"pid": int(g.threads.pid[self.utid]), "tid": int(g.threads.tid[self.utid]),
                "comm": g.comm(self.utid), "vertex": self.vertex, "eid": self.edge, "kind": self.kind,
                "weak": self.weak, "tries": self.tries, "cpu_ns": self.cpu_ns, "obj": self.obj}


def ownership_edges(g, utid, a, b, vertex=None):
    """Edge ids of the ownership edges into utid's vertices with ts in [a, b]
    (into `vertex` only, any ts, when given), other threads' only."""
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
        sel &= (ed.dst >= lo) & (ed.dst < hi) & (ed.ts >= a) & (ed.ts <= b)
    eids = np.flatnonzero(sel)
    return eids[g.seg.utid[ed.src[eids]] != utid]


def _cpu_ns(g, utid, a, b):
    rl, rh = g.run_lo[utid], g.run_hi[utid]
    st, en = g.running.start[rl:rh], g.running.end[rl:rh]
    return int(np.sum(np.clip(np.minimum(en, b) - np.maximum(st, a), 0, None))) if len(st) else 0


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
                         bool(all(ed.weak[e] for e in es)), len(es), _cpu_ns(g, h, a, b), int(ed.obj[last])))
    out.sort(key=lambda o: (o.weak, -o.tries, -o.cpu_ns, o.utid))
    return out
