"""Roles of syscall numbers that the graph builder needs: which numbers are
sched_yield, futex, and "sending" calls (for the loopback rule in edges.py).

Algorithm: start from the syscall table of the host architecture
(argus.tracer.syscalls, x86_64 when unknown), then learn from the trace
itself: the tracer derives a switch-out's wait_reason from the syscall in
progress, so every SWITCH_OUT with wait_reason FUTEX names a futex syscall
number, and with wait_reason YIELD a sched_yield number.  Learning makes a
trace recorded on another architecture mostly work (names still come from
the host table).

Invariant: the sets only grow; SYSCALL_NONE is never in a set.
"""
import numpy as np

from argus.tracer import schema, syscalls

SEND_NAMES = ("write", "writev", "pwrite64", "sendto", "sendmsg", "sendmmsg", "sendfile", "splice",
              "connect", "shutdown", "close")


def _nrs(names):
    return {syscalls.NUMBERS[n] for n in names if n in syscalls.NUMBERS}


class SyscallRoles:
    def __init__(self, yield_nrs=None, futex_nrs=None, send_nrs=None):
        self.yield_nrs = set(_nrs(["sched_yield"]) if yield_nrs is None else yield_nrs)
        self.futex_nrs = set(_nrs(["futex"]) if futex_nrs is None else futex_nrs)
        self.send_nrs = set(_nrs(SEND_NAMES) if send_nrs is None else send_nrs)

    def learn(self, rows):
        so = rows[rows["type"] == schema.SWITCH_OUT]
        for reason, target in ((schema.WAIT_FUTEX, self.futex_nrs), (schema.WAIT_YIELD, self.yield_nrs)):
            nrs = np.unique(so["nr"][so["reason"] == reason])
            target.update(int(n) for n in nrs if n != schema.SYSCALL_NONE)
        return self

    @staticmethod
    def name(nr):
        return syscalls.name(nr)
