"""Unit tests of tests/support/cpu_timeline.py on crafted rows."""
from argus.tracer import schema
from support import cpu_timeline


def _rows(spec):
    rows = schema.empty_rows(len(spec))
    for i, (cpu, ty, tid) in enumerate(spec):
        rows[i]["ts_ns"] = 1000 + i
        rows[i]["cpu"] = cpu
        rows[i]["type"] = ty
        rows[i]["tid"] = tid
        rows[i]["pid"] = tid
    return rows


SO, SI, SE, SX = schema.SWITCH_OUT, schema.SWITCH_IN, schema.SYSCALL_ENTER, schema.SYSCALL_EXIT


def test_whole_timeline_has_no_breaks():
    rows = _rows([(0, SX, 5), (0, SO, 5), (0, SI, 6), (0, SE, 6), (1, SI, 5), (1, SX, 5),
                  (0, SO, 6), (0, SI, 7), (1, SO, 5)])
    b = cpu_timeline.check(rows)
    assert (b.switches, b.bad_syscall, b.switch_outs) == (0, 0, 3)


def test_a_switch_never_recorded_breaks_the_chain():
    # 6 switched in; 6 -> 7 not recorded; 7 runs and switches out.
    rows = _rows([(0, SO, 5), (0, SI, 6), (0, SE, 7), (0, SX, 7), (0, SO, 7), (0, SI, 8)])
    b = cpu_timeline.check(rows)
    assert (b.bad_switch_out, b.bad_switch_in, b.bad_syscall) == (1, 0, 2)
    assert b.examples[0][0] == 0


def test_a_switch_to_idle_never_recorded_breaks_at_the_switch_in():
    # 6 went idle unrecorded (idle -> 8 is a lone SWITCH_IN).
    rows = _rows([(1, SO, 5), (1, SI, 6), (1, SI, 8)])
    assert cpu_timeline.check(rows).bad_switch_in == 1


def test_cpus_are_separate():
    rows = _rows([(0, SI, 6), (1, SI, 7), (0, SX, 6), (1, SX, 7), (1, SO, 7), (0, SO, 6)])
    assert cpu_timeline.check(rows).switches == 0
