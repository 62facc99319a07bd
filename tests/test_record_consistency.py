"""The trace of a busy switching load is whole, or says where it is not.

argus-switch-storm keeps both CPUs switching (pipe and condvar ping-pong,
short sleepers woken by hrtimers); every CPU's scheduling rows must then
chain (tests/support/cpu_timeline.py).  A break is a switch missing from the
trace; the tracer may not avoid every one (a full kernel buffer, a kernel
that runs no tracepoint while some task is current), but it must count each
in the trace's lost records: breaks <= records_lost.  Records dropped
silently, by the BPF staging (kext/linux/stage.bpf.h) or by argusd's
consumer, fail it.

The load runs at nice 19 so the daemon keeps up with it: lost records then
come from kernel-side gaps only, not from a full buffer that would cover
any silent loss.
"""
import json
import subprocess

from argus.tracer import reader, schema
from support import cpu_timeline
from support.programs import program


def test_every_break_in_a_cpu_timeline_is_counted_lost(tracing):
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
    assert breaks.switches <= trace.records_lost, \
        f"{breaks.switches} switches missing from the CPU timelines, {trace.records_lost} records counted lost; " \
        f"first: {breaks.examples[:3]}"
