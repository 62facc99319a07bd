"""Baseline search (paper §5.4): a vertex like the spinning one whose wait
ended quickly, so its wake-up path shows what should have happened.

Algorithm, for a LongWait spinning segment v of thread T (wait reason R,
syscall nr N, wait obj O):
  candidates = segments of T, or of threads with T's comm in T's process,
  that ended in a blocking wait with the same R and N, whose wait is known,
  not ongoing, shorter than threshold / 10, completed its syscall (the
  syscall's exit follows the wakeup: a spurious wakeup after which the kernel
  slept again inside the same read() is no baseline; waits without a syscall
  nr are not checked), and ended by a task's wakeup: the
  next segment has an incoming wakeup edge (culled kernel wakeups - timers,
  irqs - are no baseline: nothing on a task's path is to blame).
  Rank: same thread first, then same wait obj, then before the hang (most
  recent first), then after it (nearest first).  Similarity beyond that (the
  syscalls inside the segments) is reported per candidate (`syscall_overlap`,
  Jaccard of the syscall-number sets of the two segments) so an interactive
  chooser can show it; it does not reorder.

For a RepeatedYield spinning stretch that read data flags (DATA_FLAG_READ)
in its window: candidates are data_flag edges into T (or a same-comm thread)
on one of those addresses, outside the hang window, whose polling episode
(wait_ns, see graphbuild/edges.py) was shorter than threshold / 10; ranked the
same way.  The slice starts at the reader segment with the data_flag edge.

Invariant: the spinning vertex itself is never a candidate; the returned list
is ranked best first (AutoChooser takes the first).
"""
from dataclasses import dataclass

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G


@dataclass
class Baseline:
    vertex: int          # the similar segment (its wait ended quickly) / the reader segment
    successor: int       # where the slice starts: the wakee segment / the reader segment
    edge: int            # the wakeup / data_flag edge that ended the wait (into successor)
    utid: int
    same_thread: bool
    same_obj: bool
    before_hang: bool
    wait_start_ns: int
    wait_ns: int
    syscall_overlap: float = 0.0

    def to_dict(self, g):
        return {
            "vertex": self.vertex, "successor": self.successor, "edge": self.edge,
            "tid": int(g.threads.tid[self.utid]), "pid": int(g.threads.pid[self.utid]),
            "comm": g.comm(self.utid), "same_thread": self.same_thread, "same_obj": self.same_obj,
            "before_hang": self.before_hang, "start_ns": self.wait_start_ns, "wait_ns": self.wait_ns,
            "syscall_overlap": self.syscall_overlap,
        }


def _rank(b, hang_start):
    recency = -b.wait_start_ns if b.before_hang else b.wait_start_ns - hang_start
    return (not b.same_thread, not b.same_obj, not b.before_hang, recency)


def _peer_threads(g, utid):
    pid = int(g.threads.pid[utid])
    comm = g.comm(utid)
    peers = [u for u in g.utids_of_pid(pid) if u != utid and g.comm(u) == comm]
    return [utid] + peers


def _jaccard(a, b):
    if not a and not b:
        return 1.0
    return round(len(a & b) / len(a | b), 3)


def find_wait_baselines(g, v, threshold_ns, hang_start=None, limit=50):
    seg = g.seg
    utid = int(seg.utid[v])
    hang_start = int(seg.wait_start[v]) if hang_start is None else int(hang_start)
    reason, nr, obj = seg.wait_reason[v], seg.wait_nr[v], seg.wait_obj[v]
    quick = threshold_ns // 10
    own = set(g.segment_syscalls(v))
    out = []
    for u in _peer_threads(g, utid):
        lo, hi = int(g.thread_seg_lo[u]), int(g.thread_seg_hi[u])
        if hi - lo < 2:
            continue
        s = slice(lo, hi - 1)   # a candidate needs a successor
        ok = ((seg.end_kind[s] == G.END_BLOCKED) & seg.wait_known[s] & ~seg.wait_ongoing[s]
              & (seg.wait_reason[s] == reason) & (seg.wait_nr[s] == nr)
              & ((seg.wait_end[s] - seg.wait_start[s]) < quick)
              & (seg.wait_done[s] | (seg.wait_nr[s] == schema.SYSCALL_NONE)))
        cand = lo + np.flatnonzero(ok)
        cand = cand[cand != v]
        if len(cand) == 0:
            continue
        wake = g.in_wake[cand + 1]
        good = wake >= 0
        good[good] &= g.edges.type[wake[good]] == G.EDGE_WAKEUP
        for c, e in zip(cand[good].tolist(), wake[good].tolist()):
            out.append(Baseline(
                vertex=c, successor=c + 1, edge=e, utid=u, same_thread=(u == utid),
                same_obj=bool(seg.wait_obj[c] == obj), before_hang=bool(seg.wait_start[c] < hang_start),
                wait_start_ns=int(seg.wait_start[c]), wait_ns=int(seg.wait_end[c] - seg.wait_start[c])))
    out.sort(key=lambda b: _rank(b, hang_start))
    out = out[:limit]
    for b in out:
        b.syscall_overlap = _jaccard(own, set(g.segment_syscalls(b.vertex)))
    return out


def find_flag_baselines(g, utid, addrs, a, b, threshold_ns, limit=50):
    quick = threshold_ns // 10
    ed = g.edges
    addrs = np.asarray(sorted(addrs), dtype=np.uint64)
    out = []
    for u in _peer_threads(g, utid):
        lo, hi = int(g.thread_seg_lo[u]), int(g.thread_seg_hi[u])
        sel = np.flatnonzero((ed.type == G.EDGE_DATA_FLAG) & (ed.dst >= lo) & (ed.dst < hi)
                             & np.isin(ed.obj, addrs) & ((ed.ts < a) | (ed.ts > b)) & (ed.wait_ns < quick))
        for e in sel.tolist():
            d = int(ed.dst[e])
            out.append(Baseline(
                vertex=d, successor=d, edge=e, utid=u, same_thread=(u == utid), same_obj=True,
                before_hang=bool(ed.ts[e] < a), wait_start_ns=int(ed.ts[e] - ed.wait_ns[e]),
                wait_ns=int(ed.wait_ns[e])))
    out.sort(key=lambda x: _rank(x, a))
    return out[:limit]


def flag_edges_in_window(g, utid, addrs, a, b):
    """data_flag edges into utid on addrs inside [a, b] (a write that ended the
    polling), latest first."""
    ed = g.edges
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
    sel = np.flatnonzero((ed.type == G.EDGE_DATA_FLAG) & (ed.dst >= lo) & (ed.dst < hi)
                         & np.isin(ed.obj, np.asarray(sorted(addrs), dtype=np.uint64))
                         & (ed.ts >= a) & (ed.ts <= b))
    return sel[::-1].tolist()
