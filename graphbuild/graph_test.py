"""EventGraph storage: Table, CSR indexes, accessors, networkx view, and the
invariants documented in graph.py, checked on the cross-process scenario."""
import numpy as np
import pytest

from argus.graphbuild import graph as G
from support import crafted as C


@pytest.fixture(scope="module")
def g():
    t, info = C.client_daemon(n_baseline=3, hang_s=2.5)
    return t.build(trace_end=info["trace_end"])


def test_table_is_columnar_and_read_only():
    t = G.Table(a=np.arange(3), b=np.array([1.5, 2.5, 3.5]))
    assert len(t) == 3 and t.names == ("a", "b")
    assert t.record(1) == {"a": 1, "b": 2.5}
    assert t.take([2, 0]).a.tolist() == [2, 0]
    with pytest.raises(AttributeError):
        t.a = np.zeros(3)
    with pytest.raises(ValueError):
        G.Table(a=np.arange(3), b=np.arange(2))


def test_segment_invariants(g):
    s = g.seg
    assert np.all(s.start <= s.end)
    blocked = s.end_kind == G.END_BLOCKED
    assert np.all(s.wait_start[blocked] == s.end[blocked])
    assert np.all(s.wait_end[blocked] >= s.wait_start[blocked])
    assert np.all(s.wait_start[~blocked] == -1) and np.all(s.wait_end[~blocked] == -1)
    same = s.utid[:-1] == s.utid[1:]
    assert np.all(s.end[:-1][same] <= s.start[1:][same])
    assert np.all(s.start[1:][same & blocked[:-1]] == s.wait_end[:-1][same & blocked[:-1]])
    assert np.all(np.diff(s.utid) >= 0)


def test_edge_invariants(g):
    e = g.edges
    assert np.all(e.src != e.dst)
    wake = (e.type == G.EDGE_WAKEUP) | (e.type == G.EDGE_SPAWN)
    assert np.all(e.ts[wake] == g.seg.start[e.dst[wake]])
    assert len(np.unique(e.dst[wake])) == int(wake.sum())
    po = e.type == G.EDGE_PROGRAM_ORDER
    assert np.all(e.dst[po] == e.src[po] + 1)
    # CSR: every edge exactly once, grouped by dst / src
    assert sorted(g.in_eid.tolist()) == list(range(len(e)))
    for v in range(g.num_vertices):
        assert np.all(e.dst[g.in_edges(v)] == v) and np.all(e.src[g.out_edges(v)] == v)


def test_accessors(g):
    u = g.utid_of_tid(C.APP)
    segs = g.thread_segments(u)
    assert g.prev_segment(segs[0]) == -1 and g.next_segment(segs[-1]) == -1
    assert g.prev_segment(segs[1]) == segs[0] and g.next_segment(segs[0]) == segs[1]
    v = segs[2]
    assert g.segment_at(u, int(g.seg.start[v])) == v
    assert g.segment_at(u, int(g.seg.wait_end[v]) - 1) == v
    assert g.segment_at(u, -5) == segs[0]
    d = g.vertex(v)
    assert d["comm"] == "app" and d["process"] == "app" and d["vertex"] == v
    assert g.wait_duration(v) == int(g.seg.wait_end[v] - g.seg.wait_start[v])


def test_to_networkx_view(g):
    nxg = g.to_networkx()
    assert nxg.number_of_nodes() == g.num_vertices and nxg.number_of_edges() == g.num_edges
    u = g.utid_of_tid(C.DAEMON)
    vs = g.thread_segments(u)[:3].tolist()
    sub = g.to_networkx(vs)
    assert sorted(sub.nodes) == vs
    assert [d["type"] for _, _, d in sub.edges(data=True)] == ["program_order", "program_order"]
    assert sub.nodes[vs[0]]["comm"] == "daemond" and sub.nodes[vs[0]]["tid"] == C.DAEMON
