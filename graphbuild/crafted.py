"""Crafted traces for tests: write schema.ROW_DTYPE row arrays from a readable
description, the way the Linux tracer would record them.

    t = Trace()
    t.thread(100, 100, "app")                    # PROC_SNAPSHOT at trace start
    t.run(100, ms(0))                            # SWITCH_IN
    t.block(100, ms(1), "read", "read", obj=5)   # SYSCALL_ENTER read(5) + SWITCH_OUT blocked
    t.wake(200, 100, ms(3))                      # WAKEUP, waker 200, task context
    t.run(100, ms(3))                            # SWITCH_IN (+ SYSCALL_EXIT of the read)
    g = t.build()                                # build_graph(t.rows())

Invariants: rows() is sorted by ts with insertion order kept for equal
timestamps (like the decoder's stable sort); every tid must be registered with
thread() (or created by fork()) so rows carry the right pid; all times are
integer nanoseconds (ms(), us(), s() convert).  A thread's blocked syscall is
remembered so that the next run() emits its SYSCALL_EXIT (ret 0, or the ret
given to wake_and_run / run).
"""
import numpy as np

from argus.tracer import schema, syscalls

WAIT_BY_NAME = {v: k for k, v in schema.WAIT_NAMES.items()}
CTX_BY_NAME = {v: k for k, v in schema.WAKE_CONTEXT_NAMES.items()}
IRQ_BY_NAME = {v: k for k, v in schema.IRQ_NAMES.items()}
STATE_BY_NAME = {v: k for k, v in schema.STATE_NAMES.items()}

FUTEX_WAIT_PRIVATE = 128 | 0
FUTEX_WAKE_PRIVATE = 128 | 1
ETIMEDOUT = -110


def ms(x):
    return int(round(x * 1_000_000))


def us(x):
    return int(round(x * 1_000))


def s(x):
    return int(round(x * 1_000_000_000))


def nr_of(name_or_nr):
    if name_or_nr is None:
        return schema.SYSCALL_NONE
    if isinstance(name_or_nr, str):
        return syscalls.NUMBERS[name_or_nr]
    return int(name_or_nr)


def _enum(value, table):
    return table[value] if isinstance(value, str) else int(value)


class Trace:
    def __init__(self, start=0):
        self.start = int(start)
        self._rows = []
        self.pid_of = {}
        self._blocked_nr = {}
        self._cpu = {}

    # --- threads ---
    def thread(self, pid, tid, comm, snapshot=True, ppid=1, cpu=0):
        """Registers a thread alive at trace start (PROC_SNAPSHOT row)."""
        self.pid_of[tid] = pid
        self._cpu[tid] = cpu
        if snapshot:
            self.row(self.start, tid, schema.PROC_SNAPSHOT, peer_pid=ppid, state=int(pid == tid), comm=comm)
        return self

    def fork(self, parent, child_tid, at, comm, child_pid=None, wake_new=True):
        """FORK by `parent` (+ WAKEUP_NEW of the child at the same time)."""
        child_pid = self.pid_of[parent] if child_pid is None else child_pid
        self.pid_of[child_tid] = child_pid
        self._cpu.setdefault(child_tid, 0)
        self.row(at, parent, schema.FORK, peer_pid=child_pid, peer_tid=child_tid, comm=comm)
        if wake_new:
            self.row(at, parent, schema.WAKEUP_NEW, peer_pid=child_pid, peer_tid=child_tid)
        return self

    def exit(self, tid, at, code=0):
        self.row(at, tid, schema.EXIT, val=code, state=int(self.pid_of[tid] == tid))
        self.row(at, tid, schema.SWITCH_OUT, state=schema.STATE_DEAD)
        return self

    def rename(self, tid, at, comm):
        self.row(at, tid, schema.THREAD_NAME, comm=comm)
        return self

    # --- raw rows ---
    def row(self, ts, tid, type, **fields):
        pid = 0 if tid == 0 else self.pid_of[tid]
        self._rows.append((int(ts), pid, tid, type, fields))
        return self

    # --- scheduling ---
    def run(self, tid, at, until=None, preempt=False, ret=0):
        """SWITCH_IN at `at` (plus the SYSCALL_EXIT of the syscall the thread
        blocked in, with `ret`); with `until`, a SWITCH_OUT there: RUNNABLE
        (preempted) when preempt=True; nothing otherwise (the caller blocks or
        yields it)."""
        self.row(at, tid, schema.SWITCH_IN, cpu=self._cpu.get(tid, 0))
        nr = self._blocked_nr.pop(tid, None)
        if nr is not None:
            self.row(at, tid, schema.SYSCALL_EXIT, nr=nr, val=ret)
        if until is not None and preempt:
            self.preempt(tid, until)
        return self

    def busy(self, tid, frm, to, slice_ns=None, gap_ns=0):
        """On CPU from `frm` to `to`, preempted every `slice_ns` (runnable for
        `gap_ns` each time); the thread must be switched in at `frm` already.
        Ends running at `to` (no row at `to`)."""
        if slice_ns:
            t = frm + slice_ns
            while t + gap_ns < to:
                self.preempt(tid, t)
                self.row(t + gap_ns, tid, schema.SWITCH_IN, cpu=self._cpu.get(tid, 0))
                t += gap_ns + slice_ns
        return self

    def preempt(self, tid, at):
        self.row(at, tid, schema.SWITCH_OUT, state=schema.STATE_RUNNABLE, reason=schema.WAIT_PREEMPTED)
        return self

    def syscall(self, tid, at, name, aux=0, obj=0, obj2=0, ret=None, exit_at=None):
        """SYSCALL_ENTER (+ SYSCALL_EXIT at exit_at or at, when ret is given)."""
        nr = nr_of(name)
        self.row(at, tid, schema.SYSCALL_ENTER, nr=nr, aux=aux, obj=obj, obj2=obj2)
        if ret is not None:
            self.row(at if exit_at is None else exit_at, tid, schema.SYSCALL_EXIT, nr=nr, val=ret)
        return self

    def block(self, tid, at, reason, syscall=None, obj=0, aux=0, state="blocked", enter=True):
        """The thread blocks: SYSCALL_ENTER (if a syscall is named and enter)
        and SWITCH_OUT with state BLOCKED, wait reason, syscall nr, wait obj."""
        nr = nr_of(syscall)
        if syscall is not None and enter:
            self.row(at, tid, schema.SYSCALL_ENTER, nr=nr, aux=aux, obj=obj)
        self.row(at, tid, schema.SWITCH_OUT, state=_enum(state, STATE_BY_NAME),
                 reason=_enum(reason, WAIT_BY_NAME), nr=nr, obj=obj)
        if syscall is not None:
            self._blocked_nr[tid] = nr
        return self

    def wake(self, waker, wakee, at, context="task", irq="none"):
        """WAKEUP row: header = waker (0 = the idle task), peer = wakee."""
        self.row(at, waker or 0, schema.WAKEUP, peer_pid=self.pid_of[wakee], peer_tid=wakee,
                 reason=_enum(context, CTX_BY_NAME), irq=_enum(irq, IRQ_BY_NAME))
        return self

    def wake_and_run(self, waker, wakee, at, context="task", irq="none", delay=0, ret=0):
        """wake() then run() `delay` ns later."""
        self.wake(waker, wakee, at, context, irq)
        return self.run(wakee, at + delay, ret=ret)

    def timer_wake(self, wakee, at, delay=0, ret=0):
        """A timer interrupt wakes the thread (culled: hardirq, irq timer)."""
        return self.wake_and_run(0, wakee, at, "hardirq", "timer", delay, ret)

    def yield_(self, tid, at, back=None):
        """sched_yield: SYSCALL_ENTER, SWITCH_OUT RUNNABLE (reason YIELD), and
        back on CPU at `back` (default at + 1 us) with the SYSCALL_EXIT."""
        nr = nr_of("sched_yield")
        back = at + 1000 if back is None else back
        self.row(at, tid, schema.SYSCALL_ENTER, nr=nr)
        self.row(at, tid, schema.SWITCH_OUT, state=schema.STATE_RUNNABLE, reason=schema.WAIT_YIELD, nr=nr)
        self.row(back, tid, schema.SWITCH_IN, cpu=self._cpu.get(tid, 0))
        self.row(back, tid, schema.SYSCALL_EXIT, nr=nr, val=0)
        return self

    def futex_wake(self, tid, at, uaddr, ret=1):
        return self.syscall(tid, at, "futex", aux=FUTEX_WAKE_PRIVATE, obj=uaddr, ret=ret)

    def futex_wait(self, tid, at, uaddr):
        return self.block(tid, at, "futex", "futex", obj=uaddr, aux=FUTEX_WAIT_PRIVATE)

    # --- data flags ---
    def flag_write(self, tid, at, addr, value=1, pc=0):
        return self.row(at, tid, schema.DATA_FLAG_WRITE, obj=addr, val=value, obj2=pc)

    def flag_read(self, tid, at, addr, value=0, pc=0):
        return self.row(at, tid, schema.DATA_FLAG_READ, obj=addr, val=value, obj2=pc)

    def lost(self, at, count):
        return self.row(at, 0, schema.LOST, val=count)

    # --- output ---
    def rows(self):
        out = np.zeros(len(self._rows), dtype=schema.ROW_DTYPE)
        order = sorted(range(len(self._rows)), key=lambda k: self._rows[k][0])
        for j, k in enumerate(order):
            ts, pid, tid, typ, f = self._rows[k]
            r = out[j]
            r["ts_ns"] = ts
            r["pid"] = pid
            r["tid"] = tid
            r["type"] = typ
            for name, v in f.items():
                if name == "comm":
                    v = v.encode()
                r[name] = v
            if typ == schema.SWITCH_OUT and "nr" not in f:
                r["nr"] = schema.SYSCALL_NONE
        return out

    def build(self, **kw):
        from argus.graphbuild.builder import build_graph
        return build_graph(self.rows(), **kw)
