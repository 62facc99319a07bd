"""The Python reference engine of the graph core: the per-row loop that
graphbuild/core/ replaced, kept as the test oracle.

build_graph(rows, ...) runs threads.py, segments.py and edges.py over the rows
the product's builder.prepare_rows prepared and returns a product EventGraph.
It knows only the blocking-wait criterion, the program-order / wakeup /
spawn / data_flag edges and Go's goroutine cuts and edges (GO_* rows), so it
matches argus.graphbuild.build_graph(rows,
splits=False) on those (support.crafted.compare_with_oracle checks it).
"""
import numpy as np

from argus.graphbuild import graph as G
from argus.graphbuild.builder import prepare_rows
from argus.graphbuild.graph import EventGraph, Table

from support.reference.edges import build_edges
from support.reference.segments import build_segments
from support.reference.threads import ThreadTracker

# seg columns the reference knows nothing of (wait sites, actions; core only):
# name -> (dtype, the value of a vertex without one)
CORE_ONLY_SEG = {"wait_site": (np.uint64, 0), "wait_stack": (np.uint64, 0), "wait_timeout_ms": (np.int32, G.TIMEOUT_NA),
                 "act_kind": (np.uint8, 0), "act_ts": (np.int64, -1), "act_obj": (np.uint64, 0),
                 "act_seg": (np.int64, -1), "act_wakee": (np.int64, -1)}


def build_graph(rows, *, trace_start=None, trace_end=None, roles=None):
    """The reference EventGraph of rows (same arguments as the product's
    build_graph, minus the core-only splits / head_gap_end)."""
    rows, t0, t1, roles = prepare_rows(rows, trace_start, trace_end, roles)
    tracker = ThreadTracker()
    res = build_segments(rows, tracker, roles, t0, t1)
    edges, estats = build_edges(res.seg, res, roles)
    threads, processes = tracker.finish()
    stats = dict(res.stats)
    stats.update(estats)
    stats["rows"] = int(len(rows))
    cols = res.seg.columns()
    n = len(res.seg)
    cols["split_kind"] = np.zeros(n, np.uint8)
    cols["gap"] = np.zeros(n, bool)
    cols.update({name: np.full(n, empty, dtype) for name, (dtype, empty) in CORE_ONLY_SEG.items()})
    edges = Table(**edges.columns(), owner_kind=np.zeros(len(edges), np.uint8))
    return EventGraph(
        rows=rows, trace_start=t0, trace_end=t1, threads=threads, processes=processes,
        seg=Table(**cols), thread_rows=res.thread_rows, thread_rows_ptr=res.thread_rows_ptr, edges=edges,
        running=res.running, runnable=res.runnable, yields=res.yields, flags=res.flags, stats=stats,
        roles=roles,
    )
