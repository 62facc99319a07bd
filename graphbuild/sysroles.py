"""Roles of syscall numbers that the graph builder needs: which numbers are
sched_yield, futex, and "sending" calls (for the loopback rule of the graph core's wakeup edges),
and for the splitting heuristics and message edges of the C core: message
sends / receives on an fd, event-loop waits, io_uring_enter, timerfd_settime.

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
# Message operations on an fd (positional file I/O, pread/pwrite, is not a message).
MSG_SEND_NAMES = ("write", "writev", "sendto", "sendmsg", "sendmmsg")
MSG_RECV_NAMES = ("read", "readv", "recvfrom", "recvmsg", "recvmmsg")
LOOP_WAIT_NAMES = ("epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6")
URING_NAMES = ("io_uring_enter",)
TIMER_ARM_NAMES = ("timerfd_settime",)

# Bits of the role table handed to the C core (enum argus_graph_role).
ROLE_YIELD, ROLE_FUTEX, ROLE_SEND, ROLE_MSG_SEND, ROLE_MSG_RECV, ROLE_LOOP_WAIT, ROLE_URING, ROLE_TIMER_ARM = \
    (1 << k for k in range(8))
ROLE_TABLE_SIZE = 1024


def _nrs(names):
    return {syscalls.NUMBERS[n] for n in names if n in syscalls.NUMBERS}


class SyscallRoles:
    def __init__(self, yield_nrs=None, futex_nrs=None, send_nrs=None):
        self.yield_nrs = set(_nrs(["sched_yield"]) if yield_nrs is None else yield_nrs)
        self.futex_nrs = set(_nrs(["futex"]) if futex_nrs is None else futex_nrs)
        self.send_nrs = set(_nrs(SEND_NAMES) if send_nrs is None else send_nrs)
        self.msg_send_nrs = _nrs(MSG_SEND_NAMES)
        self.msg_recv_nrs = _nrs(MSG_RECV_NAMES)
        self.loop_wait_nrs = _nrs(LOOP_WAIT_NAMES)
        self.uring_nrs = _nrs(URING_NAMES)
        self.timer_arm_nrs = _nrs(TIMER_ARM_NAMES)

    def learn(self, rows):
        # masks over the strided columns: no copy of the rows
        is_so = rows["type"] == schema.SWITCH_OUT
        reason = rows[schema.column(schema.SWITCH_OUT, "wait_reason")]
        for r, target in ((schema.WAIT_FUTEX, self.futex_nrs), (schema.WAIT_YIELD, self.yield_nrs)):
            nrs = np.unique(rows[schema.column(schema.SWITCH_OUT, "syscall_nr")][is_so & (reason == r)])
            target.update(int(n) for n in nrs if n != schema.SYSCALL_NONE)
        return self

    def learn_table(self, learned):
        """learn() from the C scan's per-nr bits (native_core.scan_rows)."""
        self.futex_nrs.update(int(n) for n in np.flatnonzero(learned & ROLE_FUTEX) if n != schema.SYSCALL_NONE)
        self.yield_nrs.update(int(n) for n in np.flatnonzero(learned & ROLE_YIELD) if n != schema.SYSCALL_NONE)
        return self

    def table(self):
        """uint8 role bits per syscall number, for the C core."""
        t = np.zeros(ROLE_TABLE_SIZE, np.uint8)
        for bit, nrs in ((ROLE_YIELD, self.yield_nrs), (ROLE_FUTEX, self.futex_nrs), (ROLE_SEND, self.send_nrs),
                         (ROLE_MSG_SEND, self.msg_send_nrs), (ROLE_MSG_RECV, self.msg_recv_nrs),
                         (ROLE_LOOP_WAIT, self.loop_wait_nrs), (ROLE_URING, self.uring_nrs),
                         (ROLE_TIMER_ARM, self.timer_arm_nrs)):
            for n in nrs:
                if 0 <= n < ROLE_TABLE_SIZE:
                    t[n] |= bit
        return t

    @staticmethod
    def name(nr):
        return syscalls.name(nr)
