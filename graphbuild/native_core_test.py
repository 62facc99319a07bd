"""The C graph core against the Python reference loop (the oracle): with the
splitting heuristics off, both must produce identical tables on every crafted
scenario and on a real recorded trace."""
import os

import numpy as np
import pytest

from argus.tracer import schema
from argus.graphbuild import build_graph
from support import crafted as C
from support.crafted import Trace, ms, us, compare_with_oracle

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "golden.argus")


def assert_same(rows, **kw):
    return compare_with_oracle(rows, **kw)


@pytest.mark.parametrize("scenario", ["client_daemon", "demo_like", "yield_flags", "yield_noflags", "editor"])
def test_core_matches_python_on_crafted_scenarios(scenario):
    if scenario == "client_daemon":
        t, info = C.client_daemon()
        rows, end = t.rows(), info["trace_end"]
    elif scenario == "demo_like":
        rows, end = C.demo_like().rows(), C.s(8)
    elif scenario == "editor":
        rows, end = C.editor_xorg().rows, C.s(5)
    else:
        rows, end = C.yield_app(scenario == "yield_flags").rows, C.s(8)
    py, nat = assert_same(rows, trace_end=end)
    assert nat.num_vertices >= 4 and nat.num_edges >= 3


def test_core_matches_python_on_tid_reuse_fork_exit_and_lost():
    t = Trace()
    t.thread(10, 10, "main")
    t.run(10, ms(0))
    t.fork(10, 11, ms(1), "child")
    t.run(11, ms(2))
    t.exit(11, ms(3))
    t.row(ms(4), 11, schema.SYSCALL_ENTER, nr=0, obj=3)     # tid 11 reused, no FORK seen
    t.lost(ms(5), 7)
    t.lost(ms(5), 3, kind=schema.LOST_SWITCHES_UNREPORTED)
    t.block(10, ms(6), "child", "wait4", obj=0xFFFFFFFF)
    t.wake(11, 10, ms(7))
    t.run(10, ms(8))
    t.rename(10, ms(9), "renamed")
    py, nat = assert_same(t.rows(), trace_end=ms(20))
    assert (nat.stats["lost_records"], nat.stats["unreported_switches"], nat.stats["lost_rows"]) == (7, 3, 2)


@pytest.mark.skipif(not os.path.exists(GOLDEN), reason="golden trace not recorded")
def test_core_matches_python_on_a_real_trace():
    from argus.tracer import reader
    tr = reader.decode_file(GOLDEN)
    py, nat = assert_same(tr.rows)
    assert nat.num_vertices > 1000


def test_unsorted_rows_are_rejected_by_the_core_and_sorted_by_the_builder():
    from argus.graphbuild import native_core
    t = Trace()
    t.thread(10, 10, "a")
    t.run(10, ms(1)).block(10, ms(2), "read", "read", obj=3)
    rows = t.rows()[::-1].copy()
    assert not native_core.rows_sorted(rows)
    with pytest.raises(native_core.GraphError, match="not sorted"):
        native_core.build(rows, 0, ms(2), np.zeros(1024, np.uint8))
    assert build_graph(rows).num_vertices == 1
