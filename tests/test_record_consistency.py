"""The trace of a busy switching load is whole, or says where it is not.

argus-switch-storm keeps both CPUs switching (pipe and condvar ping-pong,
short sleepers woken by hrtimers); every CPU's scheduling rows must then
chain (tests/support/cpu_timeline.py).  A break is a switch missing from the
trace; the tracer may not avoid every one (a full kernel buffer, a kernel
that runs no tracepoint while some task is current), but it must count each
as a hole: a record lost (records_lost) or a switch the kernel never
reported (switches_unreported, counted apart since it is no loss of the
tracer's): breaks <= records_lost + switches_unreported.  Records dropped
silently, by the BPF staging (kext/linux/stage.bpf.h) or by argusd's
consumer, fail it.

The load runs at nice 19 so the daemon keeps up with it: the holes then
come from kernel-side gaps only (switches_unreported), not from a full
buffer whose lost count would cover any silent loss.
"""
import json
import subprocess

from argus.tracer import reader, schema
from support import cpu_timeline
from support.programs import program


def test_every_break_in_a_cpu_timeline_is_counted_as_a_hole(tracing):
    proc = subprocess.run(["nice", "-n", "19", program("argus-switch-storm"), "3"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    pid = json.loads(proc.stdout.splitlines()[0])["pid"]
    tracing.wait_drained()
    tracing.stop()
    trace = reader.decode_file(tracing.buffer, types=[schema.SWITCH_OUT, schema.SWITCH_IN,
                                                      schema.SYSCALL_ENTER, schema.SYSCALL_EXIT])
    rows = trace.rows
    # The load really ran and switched a lot on every CPU.
    assert (rows["pid"] == pid).sum() > 10_000
    breaks = cpu_timeline.check(rows)
    assert breaks.switch_outs > 10_000
    holes = trace.records_lost + trace.switches_unreported
    assert breaks.switches <= holes, \
        f"{breaks.switches} switches missing from the CPU timelines, {trace.records_lost} records counted lost " \
        f"and {trace.switches_unreported} switches unreported; first: {breaks.examples[:3]}"
    # The LOST records say where each kind was (a LOST record that could not
    # be written is itself a record lost): never one kind in the other's.
    lost = reader.decode_file(tracing.buffer, types=[schema.LOST]).rows
    unreported = lost["state"] == schema.LOST_SWITCHES_UNREPORTED
    assert int(lost["val"][unreported].sum()) <= trace.switches_unreported
    assert int(lost["val"][~unreported].sum()) <= trace.records_lost
