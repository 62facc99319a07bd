"""Streams: a reader fed in pieces by one busy producer.

A thread that reads a compressor's output, a download or a child's pipe in
chunks blocks many times, briefly each time: alone, that looks like polling
(RepeatedYield), and the thread would be named as its own cause.  But each
of those waits was ended by the same producer writing the next chunk: the
thread is waiting on that producer, one LongWait spread over many reads.

Algorithm (stream_wait, for a thread classified RepeatedYield over [a, b]):
  its blocking read / write waits (wait reason READ or WRITE: data on a
  pipe, socket, file) that start inside [a, b]; each one's ending edge (the
  wakeup into the next segment); if at least MIN_PIECES of them, and at
  least PRODUCER_SHARE of all such waits, were ended by wakeups from one
  other thread, the thread is reclassified LongWait: vertex = its last such
  wait (the walk goes on from its waker, the producer), evidence
  longest_wait = the span from the first such wait to the end of the last,
  with "what" saying how many pieces and from whom, stream_from = the
  producer.  Futex and poll waits are not streams (a GIL or a lock handed
  back and forth is ownership, an event loop is idle), so they never
  qualify.

Invariant: a pure function of the graph and the classification; the
producer is never the thread itself.
"""
from collections import Counter

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose import blocktype as B
from argus.diagnose import waits as W

MIN_PIECES = 10
PRODUCER_SHARE = 0.8
DATA_WAITS = (schema.WAIT_READ, schema.WAIT_WRITE)


def _pieces(g, utid, a, b):
    seg = g.seg
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
    out = []
    for v in range(lo, hi - 1):
        if seg.end_kind[v] != G.END_BLOCKED or not seg.wait_known[v] or not a <= seg.wait_start[v] <= b:
            continue
        if int(seg.wait_reason[v]) not in DATA_WAITS:
            continue
        e = W.ending_edge(g, v)
        src = int(seg.utid[g.edges.src[e]]) if e >= 0 and g.edges.type[e] == G.EDGE_WAKEUP else None
        out.append((v, src))
    return out


def stream_wait(g, c, a, b):
    """The LongWait Classification of RepeatedYield c when its waits are a
    stream from one producer (see the top), else None."""
    if c.block_type != B.REPEATED_YIELD:
        return None
    utid = c.utid
    pieces = _pieces(g, utid, a, b)
    by = Counter(src for _, src in pieces if src is not None and src != utid)
    if not by:
        return None
    producer, n = min(by.items(), key=lambda kv: (-kv[1], kv[0]))
    if n < MIN_PIECES or n < PRODUCER_SHARE * len(pieces):
        return None
    mine = [v for v, src in pieces if src == producer]
    first, last = mine[0], mine[-1]
    wait = B.wait_info(g, last, a, b)
    start, end = int(g.seg.wait_start[first]), int(g.seg.wait_end[last])
    wait.update(start_ns=start, end_ns=end, dur_ns=end - start,
                what=f"{n} pieces of {wait['what']}, each ended by {g.comm(producer)}/{int(g.threads.tid[producer])}")
    active = max(int(b) - int(a), 1)
    ev = dict(c.evidence, longest_wait=wait, longest_wait_share=round(min(end, b) - max(start, a), 4) / active,
              stream_from={"pid": int(g.threads.pid[producer]), "tid": int(g.threads.tid[producer]),
                           "comm": g.comm(producer), "pieces": n})
    return B.Classification(B.LONG_WAIT, utid, c.start_ns, c.end_ns, last, ev)
