"""The C core on random rows (seeded): it must never crash, and its output
must keep the graph invariants (graph.py) whatever the input says."""
import numpy as np
import pytest

from argus.tracer import schema
from argus.graphbuild import build_graph, graph as G


def random_rows(seed, n=20000, probes=False):
    rng = np.random.default_rng(seed)
    rows = schema.empty_rows(n)
    rows["ts_ns"] = np.sort(rng.integers(0, 10**9, n)).astype(np.uint64)
    rows["type"] = rng.integers(1, schema.FILE_LOCK + 3, n)  # every type, and a few unknown ones
    if probes:     # a third of the rows user-space tracepoints (callback, enqueue, mutex, input, return)
        some = rng.random(n) < 0.33
        rows["type"][some] = rng.choice(np.array(schema.PROBE_TYPES, np.uint16), int(some.sum()))
    rows["pid"] = rng.integers(0, 6, n)
    rows["tid"] = rng.integers(0, 12, n)
    rows["peer_pid"] = rng.integers(0, 6, n)
    rows["peer_tid"] = rng.integers(0, 12, n)
    rows["state"] = rng.integers(0, 6, n)
    rows["reason"] = rng.integers(0, 13, n)
    rows["irq"] = rng.integers(0, 10, n)
    rows["nr"] = rng.choice(np.array([0, 1, 7, 44, 45, 202, 232, 281, 286, 426, 3000, 0xFFFFFFFF], np.uint32), n)
    rows["aux"] = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    rows["val"] = rng.integers(-200, 200, n)
    rows["obj"] = rng.integers(0, 8, n).astype(np.uint64)
    rows["obj2"] = rng.integers(0, 8, n).astype(np.uint64)
    return rows


@pytest.mark.parametrize("seed,probes", [(s, False) for s in range(6)] + [(s, True) for s in range(3)])
def test_random_rows_build_a_consistent_graph(seed, probes):
    g = build_graph(random_rows(seed, probes=probes), head_gap_end=10**8)
    nseg = g.num_vertices
    seg = g.seg
    assert nseg > 0
    assert np.all(np.diff(seg.utid) >= 0)                           # contiguous per thread
    same = seg.utid[1:] == seg.utid[:-1]
    assert np.all(seg.start[1:][same] >= seg.start[:-1][same])      # time ordered inside a thread
    assert np.all(seg.end >= seg.start)
    e = g.edges
    assert np.all((e.src >= 0) & (e.src < nseg) & (e.dst >= 0) & (e.dst < nseg)) and np.all(e.src != e.dst)
    assert np.all(np.diff(e.ts) >= 0)
    assert set(np.unique(e.type).tolist()) <= set(G.EDGE_TYPE_NAMES)
    po = e.type == G.EDGE_PROGRAM_ORDER
    assert np.array_equal(e.dst[po], e.src[po] + 1)
    assert np.array_equal(e.weak[po], seg.start_kind[e.dst[po]] == G.START_SPLIT)
    assert g.in_ptr[-1] == g.num_edges and g.out_ptr[-1] == g.num_edges
    assert np.array_equal(np.sort(g.in_eid), np.arange(g.num_edges))
    assert np.all(e.dst[g.in_eid] == np.repeat(np.arange(nseg), np.diff(g.in_ptr)))
    assert np.all(e.src[g.out_eid] == np.repeat(np.arange(nseg), np.diff(g.out_ptr)))
    # every owned row lies in its thread's run; segment row ranges stay inside it
    assert len(g.thread_rows) == g.thread_rows_ptr[-1] and len(np.unique(g.thread_rows)) == len(g.thread_rows)
    lo, hi = g.thread_rows_ptr[seg.utid], g.thread_rows_ptr[seg.utid + 1]
    assert np.all((seg.row_lo >= lo) & (seg.row_hi <= hi) & (seg.row_lo <= seg.row_hi))
    assert int(np.count_nonzero(seg.gap)) == g.stats["gap_segments"]


@pytest.mark.parametrize("seed", range(6))
def test_random_rows_core_matches_the_python_oracle(seed):
    """With splits off, the core and the reference loop agree on random input
    too.  Each tid keeps one pid here: on a tid whose pid changes mid-trace
    the two differ by design (the core updates the pid on every row naming
    it, the reference loop only on some)."""
    from support.crafted import compare_with_oracle
    rows = random_rows(seed)
    rows["pid"] = np.where(rows["tid"] > 0, rows["tid"] // 3 + 100, 0)
    rows["peer_pid"] = np.where(rows["peer_tid"] > 0, rows["peer_tid"] // 3 + 100, 0)
    compare_with_oracle(rows)
