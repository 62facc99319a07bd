"""build_graph(rows) -> EventGraph: the graph-building pipeline.

Algorithm (Perfetto trace_processor style, one stage per module):
  1. validate the rows (ROW_DTYPE, sorted by ts_ns; an unsorted input is
     sorted stably, which keeps ties in producer order);
  2. SyscallRoles: which syscall numbers are yield / futex / send, from the
     host table plus what the trace's switch-outs reveal (sysroles.py);
  3. ThreadTracker + build_segments: one pass over the rows; threads,
     segments (vertices), thread_state intervals, yields, raw wake / spawn /
     data-flag records (threads.py, segments.py);
  4. build_edges: program-order, wakeup (with culling and the weak mutex
     heuristic), spawn and data_flag edges (edges.py);
  5. EventGraph: columnar storage plus CSR indexes (graph.py).

This unit is the replaceable part: a C core can produce the same tables and
hand them to EventGraph.  Invariants: see graph.py; trace_start / trace_end
default to the first / last row's ts and may be widened by the caller (the
decoder knows when recording started and stopped).
"""
import numpy as np

from argus.tracer import schema
from argus.graphbuild.graph import EventGraph
from argus.graphbuild.threads import ThreadTracker
from argus.graphbuild.segments import build_segments
from argus.graphbuild.edges import build_edges
from argus.graphbuild.sysroles import SyscallRoles


def build_graph(rows, *, trace_start=None, trace_end=None, roles=None):
    """Builds the event graph of a trace.

    rows: numpy array of schema.ROW_DTYPE (the decoder's output).
    trace_start / trace_end: ns; default the first / last row's timestamp.
    roles: SyscallRoles to override the syscall numbers used for yields,
    futexes and sends (default: host table + learned from the trace).
    """
    rows = np.asarray(rows)
    if rows.dtype != schema.ROW_DTYPE:
        raise TypeError(f"rows must have dtype schema.ROW_DTYPE, got {rows.dtype}")
    if len(rows) > 1 and np.any(np.diff(rows["ts_ns"].astype(np.int64)) < 0):
        rows = rows[np.argsort(rows["ts_ns"], kind="stable")]
    if len(rows):
        first, last = int(rows["ts_ns"][0]), int(rows["ts_ns"][-1])
    else:
        first = last = 0
    t0 = first if trace_start is None else min(int(trace_start), first) if len(rows) else int(trace_start)
    t1 = last if trace_end is None else max(int(trace_end), last) if len(rows) else int(trace_end)
    roles = (roles or SyscallRoles()).learn(rows)
    tracker = ThreadTracker()
    res = build_segments(rows, tracker, roles, t0, t1)
    edges, estats = build_edges(res.seg, res, roles)
    threads, processes = tracker.finish()
    stats = dict(res.stats)
    stats.update(estats)
    stats["rows"] = int(len(rows))
    return EventGraph(
        rows=rows, trace_start=t0, trace_end=t1, threads=threads, processes=processes,
        seg=res.seg, thread_rows=res.thread_rows, thread_rows_ptr=res.thread_rows_ptr, edges=edges, running=res.running,
        runnable=res.runnable, yields=res.yields, flags=res.flags, stats=stats,
        syscall_name=roles.name,
    )
