"""Per-CPU consistency of a trace's scheduling records: does each CPU's
timeline hold together, or are records missing?

On one CPU the tracer sees every sched_switch, so its rows chain: a
SWITCH_OUT is by the task the CPU's last SWITCH_IN brought in, a SWITCH_IN
follows a SWITCH_OUT (or starts the CPU's rows, or follows a switch to an
untraced task: the idle task, the daemon itself), and a task's syscall rows
on the CPU come while it is the one switched in.  A break means records of
that CPU are missing: a switch the tracer lost (dropped, or staged and never
written) or one the kernel never reported.  Either way the trace must say
so: the first in its lost records, the second in its unreported switches
(kext/linux/stage.bpf.h, stage_note_switch); tests/test_record_consistency.py
checks this count against the sum of the two.

Rows must be one decode's, sorted by time (the decoder's order); interrupt
rows (wakeups, timers) name whoever they interrupted and are not checked.
"""
import dataclasses

import numpy as np

from argus.tracer import schema

UNKNOWN = -2          # before the CPU's first switch row
BETWEEN = -1          # after a SWITCH_OUT, until the next SWITCH_IN


@dataclasses.dataclass
class Breaks:
    switch_outs: int = 0        # switch-out rows checked
    bad_switch_out: int = 0     # a SWITCH_OUT of a task other than the one switched in
    bad_switch_in: int = 0      # a SWITCH_IN while another task was still switched in
    bad_syscall: int = 0        # syscall rows of a task that was not switched in
    examples: list = dataclasses.field(default_factory=list)   # (cpu, ts, what) of the first few

    @property
    def switches(self):
        """Breaks of the switch chain: each is at least one switch not recorded."""
        return self.bad_switch_out + self.bad_switch_in


def check(rows, max_examples=10):
    """Breaks of every CPU's timeline in rows (schema.ROW_DTYPE, time order)."""
    out = Breaks()
    task_rows = (schema.SYSCALL_ENTER, schema.SYSCALL_EXIT)
    for cpu in np.unique(rows["cpu"]):
        rc = rows[rows["cpu"] == cpu]
        types = rc["type"].tolist()
        tids = rc["tid"].tolist()
        cur = UNKNOWN
        for i, ty in enumerate(types):
            tid = tids[i]
            what = None
            if ty == schema.SWITCH_OUT:
                out.switch_outs += 1
                if cur not in (UNKNOWN, BETWEEN) and tid != cur:
                    out.bad_switch_out += 1
                    what = f"switch-out of {tid} while {cur} was switched in"
                cur = BETWEEN
            elif ty == schema.SWITCH_IN:
                if cur not in (UNKNOWN, BETWEEN):
                    out.bad_switch_in += 1
                    what = f"switch-in of {tid} while {cur} was switched in"
                cur = tid
            elif ty in task_rows and tid:
                if cur != UNKNOWN and tid != cur:
                    out.bad_syscall += 1
                    what = f"syscall of {tid} while {cur if cur != BETWEEN else 'no task'} was switched in"
            if what and len(out.examples) < max_examples:
                out.examples.append((int(cpu), int(rc["ts_ns"][i]), what))
    return out
