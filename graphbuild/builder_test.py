"""build_graph: input validation, ordering, trace bounds, syscall roles."""
import numpy as np
import pytest

from argus.tracer import schema
from argus.graphbuild import build_graph, SyscallRoles
from support.crafted import Trace, ms


def small():
    t = Trace()
    t.thread(10, 10, "a")
    t.run(10, ms(1))
    t.block(10, ms(2), "read", "read", obj=3)
    return t


def test_rejects_other_dtypes():
    with pytest.raises(TypeError):
        build_graph(np.zeros(3, dtype=[("ts_ns", "<u8")]))


def test_empty_trace():
    g = build_graph(schema.empty_rows())
    assert g.num_vertices == 0 and g.num_edges == 0 and len(g.threads) == 0


def test_unsorted_rows_are_sorted_stably():
    rows = small().rows()
    g1 = build_graph(rows)
    g2 = build_graph(rows[::-1].copy())
    assert np.array_equal(g1.seg.start, g2.seg.start) and np.array_equal(g1.seg.end, g2.seg.end)


def test_trace_bounds_default_and_widened():
    rows = small().rows()
    g = build_graph(rows)
    assert (g.trace_start, g.trace_end) == (0, ms(2))
    g = build_graph(rows, trace_end=ms(10))
    assert g.trace_end == ms(10)
    assert g.seg.wait_end[-1] == ms(10) and g.seg.wait_ongoing[-1]


def test_syscall_roles_learned_from_switch_outs():
    t = Trace()
    t.thread(10, 10, "a")
    t.run(10, ms(0))
    # a foreign architecture: futex is 98 and sched_yield 124 (arm64)
    t.row(ms(1), 10, schema.SYSCALL_ENTER, nr=124)
    t.row(ms(1), 10, schema.SWITCH_OUT, state=schema.STATE_RUNNABLE, reason=schema.WAIT_YIELD, nr=124)
    t.run(10, ms(2))
    t.row(ms(3), 10, schema.SYSCALL_ENTER, nr=98, aux=128, obj=0x10)
    t.row(ms(3), 10, schema.SWITCH_OUT, state=schema.STATE_BLOCKED, reason=schema.WAIT_FUTEX, nr=98, obj=0x10)
    roles = SyscallRoles(yield_nrs=set(), futex_nrs=set())
    g = build_graph(t.rows(), roles=roles)
    assert roles.yield_nrs == {124} and roles.futex_nrs == {98}
    assert int(g.seg.yields[0]) == 1 and len(g.yields) == 1
