"""SQLite save / load of a built graph: every table comes back identical."""
import os
import sqlite3

import numpy as np
import pytest

from support import crafted as C
from argus.graphbuild.storage import save_graph, load_graph, StorageError
from argus.graphbuild.summary import graph_summary

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "golden.argus")


def assert_same_graph(a, b):
    for table in ("seg", "edges", "running", "runnable", "yields", "flags"):
        ta, tb = getattr(a, table), getattr(b, table)
        assert ta.names == tb.names, table
        for name in ta.names:
            x, y = getattr(ta, name), getattr(tb, name)
            assert x.dtype == y.dtype and np.array_equal(x, y), f"{table}.{name}"
    for name in a.threads.names:
        assert list(getattr(a.threads, name)) == list(getattr(b.threads, name)), name
    assert np.array_equal(a.rows, b.rows)
    assert np.array_equal(a.thread_rows, b.thread_rows) and np.array_equal(a.thread_rows_ptr, b.thread_rows_ptr)
    assert np.array_equal(a.in_eid, b.in_eid) and np.array_equal(a.out_eid, b.out_eid)
    assert a.processes == b.processes and (a.trace_start, a.trace_end) == (b.trace_start, b.trace_end)
    assert graph_summary(a) == graph_summary(b)
    assert (a.roles.futex_nrs, a.roles.yield_nrs) == (b.roles.futex_nrs, b.roles.yield_nrs)


def test_roundtrip_crafted(tmp_path):
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    path = tmp_path / "g.db"
    save_graph(g, str(path))
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    h = load_graph(str(path))
    assert_same_graph(g, h)
    v = int(g.thread_segments(g.utid_of_tid(C.DAEMON))[1])
    assert h.vertex(v) == g.vertex(v) and h.segment_syscalls(v) == g.segment_syscalls(v)
    con = sqlite3.connect(str(path))
    # the semantic events of a vertex are queryable by vertex id
    n = con.execute("SELECT COUNT(*) FROM events WHERE vertex = ?", (v,)).fetchone()[0]
    assert n == len(g.segment_rows(v))
    con.close()


@pytest.mark.skipif(not os.path.exists(GOLDEN), reason="golden trace not recorded")
def test_roundtrip_real_trace_with_stacks(tmp_path):
    from argus.tracer import reader
    from argus.graphbuild.builder import build_graph_from_trace
    g = build_graph_from_trace(reader.decode_file(GOLDEN, strict=False))
    save_graph(g, str(tmp_path / "g.db"))
    h = load_graph(str(tmp_path / "g.db"))
    assert_same_graph(g, h)
    assert np.array_equal(g.frames, h.frames) and g.strings == h.strings


def test_not_a_graph_database(tmp_path):
    bad = tmp_path / "x.db"
    bad.write_bytes(b"hello")
    with pytest.raises(StorageError, match="not an Argus graph database"):
        load_graph(str(bad))
    with pytest.raises(StorageError, match="no graph database"):
        load_graph(str(tmp_path / "missing.db"))
