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
  Rank: same thread first, then the same kernel object (objects.wait_identity:
  an inode or socket, a futex of the process; an fd number is no object),
  then before the hang (most
  recent first), then after it (nearest first).
  Semantic similarity (paper §5.4: "the same high level semantics"), per
  candidate, in [0, 1], the mean of the parts that exist:
    syscall sequence   difflib's ratio of the two segments' syscall-number
                       sequences (order matters, attributes that change at
                       run time - fds, addresses - do not)
    call stacks        Jaccard of the stack symbols, when stacks are recorded
    message peers      Jaccard of the (process, thread) names the segment
                       woke or was woken by
  Candidates with similarity >= MIN_SIMILARITY qualify and come first (rank
  order kept inside both groups); `syscall_overlap` (Jaccard of the syscall
  sets) is kept for the report.  group_by_signature folds qualifying
  candidates whose wake-up came from the same (process, thread) names into
  one (its best ranked), dropping kinds clearly less similar than the best
  (SIMILARITY_MARGIN): an interactive chooser asks only when more than one
  kind of baseline remains.

For a RepeatedYield spinning stretch that read data flags (DATA_FLAG_READ)
in its window: candidates are data_flag edges into T (or a same-comm thread)
on one of those addresses, outside the hang window, whose polling episode
(wait_ns, docs/event-graph.md) was shorter than threshold / 10; ranked the
same way.  The slice starts at the reader segment with the data_flag edge.

Invariant: the spinning vertex itself is never a candidate; the returned list
is ranked best first (AutoChooser takes the first).
"""
from dataclasses import dataclass

import difflib

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose import objects as OBJ
from argus.diagnose.stacks import top_frames, has_stacks


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
    similarity: float = None

    def to_dict(self, g):
        return {
            "vertex": self.vertex, "successor": self.successor, "edge": self.edge,
            "tid": int(g.threads.tid[self.utid]), "pid": int(g.threads.pid[self.utid]),
            "comm": g.comm(self.utid), "same_thread": self.same_thread, "same_obj": self.same_obj,
            "before_hang": self.before_hang, "start_ns": self.wait_start_ns, "wait_ns": self.wait_ns,
            "syscall_overlap": self.syscall_overlap, "similarity": self.similarity,
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
    reason, nr = seg.wait_reason[v], seg.wait_nr[v]
    ident = OBJ.wait_identity(g, v)           # the kernel object, never the fd number
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
        if g.host_edges is not None:          # a reply from another host ended it (graphbuild/multihost.py)
            good |= (wake >= 0) & g.host_edges[np.maximum(wake, 0)]
        for c, e in zip(cand[good].tolist(), wake[good].tolist()):
            out.append(Baseline(
                vertex=c, successor=c + 1, edge=e, utid=u, same_thread=(u == utid),
                same_obj=ident is not None and OBJ.wait_identity(g, c) == ident, before_hang=bool(seg.wait_start[c] < hang_start),
                wait_start_ns=int(seg.wait_start[c]), wait_ns=int(seg.wait_end[c] - seg.wait_start[c])))
    out.sort(key=lambda b: _rank(b, hang_start))
    out = out[:limit]
    for b in out:
        b.syscall_overlap = _jaccard(own, set(g.segment_syscalls(b.vertex)))
    return _by_similarity(g, v, out)


MIN_SIMILARITY = 0.5
SEQ_MAX = 256


def syscall_sequence(g, v):
    r = g.rows[g.segment_rows(v)]
    return r["nr"][r["type"] == schema.SYSCALL_ENTER][-SEQ_MAX:].tolist()


def message_peers(g, v):
    """(process, thread) names v woke or was woken by (wakeup / spawn edges)."""
    out = set()
    for e in list(g.in_edges(v).tolist()) + list(g.out_edges(v).tolist()):
        if g.edges.type[e] not in (G.EDGE_WAKEUP, G.EDGE_SPAWN):
            continue
        other = int(g.edges.src[e]) if int(g.edges.dst[e]) == v else int(g.edges.dst[e])
        u = int(g.seg.utid[other])
        out.add((g.process_name(int(g.threads.pid[u])), g.comm(u)))
    return out


def similarity(g, v, w, seq_v=None, peers_v=None):
    seq_v = syscall_sequence(g, v) if seq_v is None else seq_v
    parts = [difflib.SequenceMatcher(None, seq_v, syscall_sequence(g, w), autojunk=False).ratio()
             if (seq_v or syscall_sequence(g, w)) else 1.0]
    if has_stacks(g):
        parts.append(_jaccard(set(top_frames(g, v, 64)), set(top_frames(g, w, 64))))
    peers_v = message_peers(g, v) if peers_v is None else peers_v
    peers_w = message_peers(g, w)
    if peers_v or peers_w:
        parts.append(_jaccard(peers_v, peers_w))
    return round(sum(parts) / len(parts), 3)


def _by_similarity(g, v, cands):
    seq_v, peers_v = syscall_sequence(g, v), message_peers(g, v)
    for b in cands:
        b.similarity = similarity(g, v, b.vertex, seq_v, peers_v)
    good = [b for b in cands if b.similarity >= MIN_SIMILARITY]
    return good + [b for b in cands if b.similarity < MIN_SIMILARITY]


def signature(g, b):
    """What a baseline's wake-up looks like, by stable names."""
    waker = int(g.seg.utid[int(g.edges.src[b.edge])])
    return (b.same_thread, g.process_name(int(g.threads.pid[waker])), g.comm(waker),
            G.EDGE_TYPE_NAMES[int(g.edges.type[b.edge])])


SIMILARITY_MARGIN = 0.25


def group_by_signature(g, cands):
    """One baseline per signature (the best ranked), in rank order, among the
    qualifying ones: similarity >= MIN_SIMILARITY and within
    SIMILARITY_MARGIN of the most similar candidate (a kind of wake-up that
    is clearly less alike is not worth a question); all when none qualify."""
    sims = [b.similarity for b in cands if b.similarity is not None]
    floor = max(MIN_SIMILARITY, max(sims) - SIMILARITY_MARGIN) if sims else MIN_SIMILARITY
    pool = [b for b in cands if b.similarity is None or b.similarity >= floor] or list(cands)
    seen, out = set(), []
    for b in pool:
        sig = signature(g, b)
        if sig not in seen:
            seen.add(sig)
            out.append(b)
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
