"""Writes kdebug raw trace files (V1 and V3 layouts) for tests.

There are no public kdebug trace files to test against, so tests describe what
a Mac's kernel would record (the stock events of tracer/kdebug/kdebug.h, in the
argument order xnu emits them) and this module lays them out byte for byte
the way xnu's kdebug.c writes a RAW_VERSION1 file or a V3 chunked file.

    t = KdTrace()
    t.thread(0x1001, 100, "HangApp")          # thread map entry
    t.idle(cpu=0, tid=11)                      # a processor's idle thread
    t.switch(ts, cpu, 11, 0x1001)              # MACH_SCHED idle -> app
    t.write_v3(path, timebase=(125, 3))

Timestamps given in ns are converted to mach ticks with the timebase the file
declares (V3) or the caller passes to the importer (V1).

Invariants: events are written in the order added, which must be time order
(the kernel merges per-CPU buffers by time); every kd_buf is 64 bytes.
"""
import struct

KD_BUF = struct.Struct("<QQQQQQIIQ")        # timestamp, arg1..arg5, debugid, cpuid, unused
THREADMAP = struct.Struct("<Qi20s")          # thread, valid (pid), command
RAW_HEADER_V1 = struct.Struct("<iiQI4x")     # version_no, thread_count, TOD secs, TOD usecs
CHUNK = struct.Struct("<IIQ")                # tag, sub_tag, length
HEADER_V3 = struct.Struct("<IIQQIIII")       # numer, denom, timestamp, wall secs, usecs, tz, dst, flags
CPUMAP_V1 = struct.Struct("<II")             # kd_cpumap_header: version, cpu count
CPUMAP_ENTRY = struct.Struct("<II8s")        # kd_cpumap: cpu_id, flags, name

RAW_VERSION1 = 0x55AA0101
V3_HEADER, V3_CPU_MAP, V3_THREAD_MAP, V3_RAW_EVENTS, V3_NULL = 0x1000, 0x1C00, 0x1D00, 0x1E00, 0x2000

START, END = 1, 2


def kd(cls, sub, code):
    return (cls << 24) | (sub << 16) | (code << 2)


MACH_SCHED = kd(1, 0x40, 0x00)
MACH_MAKE_RUNNABLE = kd(1, 0x40, 0x06)
MACH_IDLE = kd(1, 0x40, 0x09)
MACH_BLOCK = kd(1, 0x40, 0x0F)
MACH_INTR = kd(1, 0x05, 0)
DECR_TIMER_CALLOUT = kd(1, 0x09, 2)
DECR_TIMER_ENTER = kd(1, 0x09, 7)
TRACE_DATA_NEWTHREAD = kd(7, 0, 1)
TRACE_DATA_EXEC = kd(7, 0, 2)
TRACE_DATA_THREAD_TERMINATE = kd(7, 0, 3)
TRACE_STRING_EXEC = kd(7, 1, 2)
TRACE_STRING_THREADNAME = kd(7, 1, 4)
TRACE_LOST_EVENTS = kd(7, 2, 2)
ARGUS_WAIT = kd(1, 0xFA, 1)
ARGUS_WAKEUP = kd(1, 0xFA, 2)
BSD_SC, MACH_SC = 0x040C0000, 0x010C0000

AST_QUANTUM, AST_YIELD = 0x02, 0x10
INTR_TIMER, INTR_OTHER = 2, 3
MACH_SEND_MSG, MACH_RCV_MSG = 1, 2

# syscall numbers (bsd/kern/syscalls.master, osfmk/kern/syscall_sw.c)
BSD = {"read": 3, "write": 4, "psynch_cvsignal": 304, "psynch_cvwait": 305, "kevent_qos": 374,
       "ulock_wait": 515, "ulock_wake": 516, "__semwait_signal": 334}
MACH = {"mach_msg2_trap": 47, "mach_msg_trap": 31, "swtch_pri": 59, "thread_switch": 61,
        "mach_wait_until_trap": 90, "semaphore_wait_trap": 36}


def _words(text):
    raw = text.encode()[:32].ljust(32, b"\0")
    return struct.unpack("<4Q", raw)


class KdTrace:
    def __init__(self, timebase=(1, 1), ncpus=4):
        self.timebase = timebase
        self.ncpus = ncpus
        self.threads = []            # (tid, pid, command)
        self.events = []             # packed kd_bufs

    # --- time ---
    def ticks(self, ns):
        numer, denom = self.timebase
        return int(ns) * denom // numer

    # --- raw ---
    def raw(self, ns, debugid, tid, cpu, a1=0, a2=0, a3=0, a4=0):
        self.events.append(KD_BUF.pack(self.ticks(ns), a1 & (2**64 - 1), a2 & (2**64 - 1), a3 & (2**64 - 1),
                                       a4 & (2**64 - 1), tid, debugid, cpu, 0))
        return self

    # --- thread map ---
    def thread(self, tid, pid, command):
        """A thread-map entry; kernel_task threads are valid=1, command "kernel_task"."""
        self.threads.append((tid, pid, command))
        return self

    def kernel_thread(self, tid):
        return self.thread(tid, 1, "kernel_task")

    # --- scheduler ---
    def idle(self, ns, cpu, tid):
        """MACH_IDLE START from idle_thread(): processor_idle(THREAD_NULL, ...)
        traces thread_tid(THREAD_NULL) = 0 in arg1; arg5 is the idle thread."""
        return self.raw(ns, MACH_IDLE | START, tid, cpu, 0)

    def switch(self, ns, cpu, prev, nxt, reason=0, prev_pri=31, next_pri=31):
        """MACH_SCHED on the outgoing thread: reason, next tid, priorities."""
        return self.raw(ns, MACH_SCHED, prev, cpu, reason, nxt, prev_pri, next_pri)

    def block(self, ns, cpu, tid):
        """MACH_BLOCK: the thread asserted a wait and blocks (real wait)."""
        return self.raw(ns, MACH_BLOCK, tid, cpu, 0, 0)

    def make_runnable(self, ns, cpu, waker, wakee, pri=31):
        return self.raw(ns, MACH_MAKE_RUNNABLE, waker, cpu, wakee, pri, 0, 1)

    def intr(self, ns, cpu, running, kind=INTR_TIMER):
        """Interrupt START on `running`'s CPU: irq, pc, user mode, type."""
        return self.raw(ns, MACH_INTR | START, running, cpu, 0, 0, 0, kind)

    def timer_enter(self, ns, cpu, tid, call, deadline_ns):
        """timer_call_enter by `tid`: DECR_TIMER_ENTER START (permuted call,
        param1, deadline in mach time, flags)."""
        return self.raw(ns, DECR_TIMER_ENTER | START, tid, cpu, call, 0, self.ticks(deadline_ns), 0)

    def timer_callout(self, ns, cpu, running, call, end=False):
        """DECR_TIMER_CALLOUT START / END around the timer's function."""
        return self.raw(ns, DECR_TIMER_CALLOUT | (END if end else START), running, cpu, call, 0xF00, 0, 0)

    def intr_end(self, ns, cpu, running):
        return self.raw(ns, MACH_INTR | END, running, cpu)

    # --- syscalls ---
    def bsd(self, ns, cpu, tid, name, *args, end=False, error=0, ret=0, pid=0):
        """BSD syscall START (args = the first four arguments) or END
        (error, rval0, rval1, pid: the order bsd/dev/*/systemcalls.c emit)."""
        nr = BSD[name] if isinstance(name, str) else int(name)
        if end:
            return self.raw(ns, BSD_SC | nr << 2 | END, tid, cpu, error, ret, 0, pid)
        return self.raw(ns, BSD_SC | nr << 2 | START, tid, cpu, *args)

    def mach(self, ns, cpu, tid, name, *args, end=False, ret=0):
        nr = MACH[name] if isinstance(name, str) else int(name)
        if end:
            return self.raw(ns, MACH_SC | nr << 2 | END, tid, cpu, ret)
        return self.raw(ns, MACH_SC | nr << 2 | START, tid, cpu, *args)

    # --- process lifetime ---
    def thread_name(self, ns, cpu, tid, name):
        return self.raw(ns, TRACE_STRING_THREADNAME | START | END, tid, cpu, *_words(name))

    def new_thread(self, ns, cpu, parent, child, pid):
        return self.raw(ns, TRACE_DATA_NEWTHREAD, parent, cpu, child, pid, 0, 0)

    def exec_(self, ns, cpu, tid, pid, name):
        self.raw(ns, TRACE_DATA_EXEC, tid, cpu, pid)
        return self.raw(ns, TRACE_STRING_EXEC | START | END, tid, cpu, *_words(name))

    def terminate(self, ns, cpu, tid):
        return self.raw(ns, TRACE_DATA_THREAD_TERMINATE, tid, cpu, tid)

    def lost(self, ns, cpu=0):
        return self.raw(ns, TRACE_LOST_EVENTS, 0, cpu, 1)

    # --- the patched kernel's events ---
    def argus_wait(self, ns, cpu, tid, event):
        return self.raw(ns, ARGUS_WAIT, tid, cpu, event, 0, 1, 0)

    def argus_wakeup(self, ns, cpu, waker, wakee, event, flags=0):
        return self.raw(ns, ARGUS_WAKEUP, waker, cpu, wakee, event, flags, 0)

    # --- files ---
    def threadmap_bytes(self):
        return b"".join(THREADMAP.pack(tid, pid, cmd.encode()[:19]) for tid, pid, cmd in self.threads)

    def events_bytes(self):
        return b"".join(self.events)

    def _cpumap_v1(self):
        head = CPUMAP_V1.pack(1, self.ncpus)
        return head + b"".join(CPUMAP_ENTRY.pack(i, 0, b"AP") for i in range(self.ncpus))

    def write_v1(self, path, page_size=16384):
        """RAW_VERSION1 as xnu writes it: header, thread map, zeroed extra
        thread entries so the CPU map lands in the last 4 KiB page before the
        events, page padding holding the CPU map, then the events."""
        tmap = self.threadmap_bytes()
        pad = page_size - ((RAW_HEADER_V1.size + len(tmap)) % page_size)
        cpumap = self._cpumap_v1()
        if len(cpumap) > pad:
            pad += page_size
        extra = 0
        if pad > 4096:
            extra = (pad - 4096) // THREADMAP.size + 1
        out = bytearray(RAW_HEADER_V1.pack(RAW_VERSION1, len(self.threads) + extra, 1_700_000_000, 0))
        out += tmap + bytes(extra * THREADMAP.size)
        tail = (-len(out)) % page_size
        out += (cpumap + bytes(tail))[:tail]
        out += self.events_bytes()
        _write(path, out)

    def write_v3(self, path, split_at=None, current_kernel_layout=True, chunk_events=None):
        """V3: header chunk (with the CPU map sub-chunk inside its length),
        thread map chunk, a null padding chunk, and the events in two raw
        event chunks: the first with the older layout (length counts the
        8-byte future-events timestamp), the second as current kernels write
        it (it does not), when current_kernel_layout.  With chunk_events,
        one event chunk per that many events instead (current layout), as a
        long recording writes one per read."""
        numer, denom = self.timebase
        cpumap = b"".join(CPUMAP_ENTRY.pack(i, 0, b"AP") for i in range(self.ncpus))
        ticks, secs, usecs = getattr(self, "walltime", None) or (0, 0, 0)   # (mach ticks, wall s, us) at once
        payload = HEADER_V3.pack(numer, denom, ticks, secs, usecs, 0, 0, 1)
        sub = CHUNK.pack(V3_CPU_MAP, 1, len(cpumap)) + cpumap
        out = bytearray(CHUNK.pack(V3_HEADER, 1, len(payload) + len(sub)) + payload + sub)
        tmap = self.threadmap_bytes()
        out += CHUNK.pack(V3_THREAD_MAP, 1, len(tmap)) + tmap
        out += CHUNK.pack(V3_NULL, 0, 24) + bytes(24)
        events = self.events
        if chunk_events:
            for i in range(0, len(events), chunk_events):
                part = b"".join(events[i:i + chunk_events])
                out += CHUNK.pack(V3_RAW_EVENTS, 1, len(part)) + bytes(8) + part
            _write(path, out)
            return
        cut = len(events) // 2 if split_at is None else split_at
        first, second = b"".join(events[:cut]), b"".join(events[cut:])
        out += CHUNK.pack(V3_RAW_EVENTS, 1, len(first) + 8) + bytes(8) + first
        if second:
            length = len(second) if current_kernel_layout else len(second) + 8
            out += CHUNK.pack(V3_RAW_EVENTS, 1, length) + bytes(8) + second
        _write(path, out)


def _write(path, data):
    with open(path, "wb") as f:
        f.write(bytes(data))


# --- the cross-process hang, as a Mac would record it ---

# thread ids as a running Mac has them: far above the pid range (the first
# threads after boot have ids 101.., kernel_task's are the IDLE ones below)
APP_PID, APP_TID = 100, 0x101001
DAEMON_PID, DAEMON_TID, HELPER_TID = 200, 0x102001, 0x102002
IDLE = {0: 11, 1: 12, 2: 13}
REQ_CV, DONE_CV = 0x600000001000, 0x600000002000
APP_PORTS, DAEMON_PORTS = (0x1503 << 32) | 0x1607, (0x2703 << 32) | 0x2807
APP_RUNLOOP_PORTS = 0x1A03


def us(x):
    return int(round(x * 1_000))


def ms(x):
    return int(round(x * 1_000_000))


def s(x):
    return int(round(x * 1_000_000_000))


def cross_process_hang(timebase=(1, 1), n_baseline=4, hang_s=5.0, period_s=1.0, work_us=200, patched=False):
    """The app's main thread (HangApp, pid 100) waits in its run loop
    (mach_msg2 receive-only on its port set), is woken by a timer interrupt
    every period, sends a request to the daemon (hangd, pid
    200) with mach_msg2 (send + receive the reply) and blocks; the daemon's
    main thread, blocked receiving, hands the request to its helper thread
    ("hang-helper") with psynch_cvsignal and waits in psynch_cvwait; the
    helper works `work_us`, signals back and waits again; the daemon replies
    with mach_msg2 (waking the app) and receives again.  Request n_baseline
    is the hang: the helper runs for hang_s, preempted every 10 ms (quantum).
    CPU 0 runs the app, 1 the daemon, 2 the helper; each CPU's idle thread
    runs in between.  With `patched`, the Argus xnu patch events are added
    (wait events and exact wakeup context).  Returns (KdTrace, info)."""
    t = KdTrace(timebase=timebase, ncpus=3)
    for tid in IDLE.values():
        t.kernel_thread(tid)
    t.thread(APP_TID, APP_PID, "HangApp")
    t.thread(DAEMON_TID, DAEMON_PID, "hangd")
    t.thread(HELPER_TID, DAEMON_PID, "hangd")
    for cpu, tid in IDLE.items():
        t.idle(us(1) + cpu, cpu, tid)
    t.thread_name(us(5), 2, HELPER_TID, "hang-helper")
    info = {"req": []}
    end = 0
    for k in range(n_baseline + 1):
        T = s(1 + k * period_s)
        info["req"].append(T)
        busy = s(hang_s) if k == n_baseline else us(work_us)
        # timer interrupt on the idle CPU 0 wakes the app's run loop
        t.intr(T, 0, IDLE[0], INTR_TIMER)
        if patched:
            t.argus_wakeup(T + 500, 0, IDLE[0], APP_TID, 0xA11CE, flags=0x1 | 0x2)
        t.make_runnable(T + 600, 0, IDLE[0], APP_TID)
        t.intr_end(T + 800, 0, IDLE[0])
        t.switch(T + us(1), 0, IDLE[0], APP_TID)
        t.mach(T + us(2), 0, APP_TID, "mach_msg2_trap", end=True)          # the run loop wakes
        # app: mach_msg2 send request + receive reply
        t.mach(T + us(10), 0, APP_TID, "mach_msg2_trap", 0x7000_0000_0000, MACH_SEND_MSG | MACH_RCV_MSG, 0x1c,
               APP_PORTS)
        if patched:
            t.argus_wakeup(T + us(19), 0, APP_TID, DAEMON_TID, 0xD0E)
        t.make_runnable(T + us(20), 0, APP_TID, DAEMON_TID)
        if patched:
            t.argus_wait(T + us(29), 0, APP_TID, 0xA99)
        t.block(T + us(30), 0, APP_TID)
        t.switch(T + us(30), 0, APP_TID, IDLE[0])
        # daemon main: receive returns; hand off to the helper
        t.switch(T + us(31), 1, IDLE[1], DAEMON_TID)
        t.mach(T + us(32), 1, DAEMON_TID, "mach_msg2_trap", end=True)
        t.bsd(T + us(40), 1, DAEMON_TID, "psynch_cvsignal", REQ_CV, 0, 0, 0)
        if patched:
            t.argus_wakeup(T + us(44), 1, DAEMON_TID, HELPER_TID, 0x4E0)
        t.make_runnable(T + us(45), 1, DAEMON_TID, HELPER_TID)
        t.bsd(T + us(46), 1, DAEMON_TID, "psynch_cvsignal", end=True, pid=DAEMON_PID)
        t.bsd(T + us(60), 1, DAEMON_TID, "psynch_cvwait", DONE_CV, 0, 0, 0x600000003000)
        if patched:
            t.argus_wait(T + us(60) + 500, 1, DAEMON_TID, 0xD01E)
        t.block(T + us(61), 1, DAEMON_TID)
        t.switch(T + us(61), 1, DAEMON_TID, IDLE[1])
        # helper: its cvwait returns; it works (the hang: on the CPU for seconds)
        t.switch(T + us(55), 2, IDLE[2], HELPER_TID)
        t.bsd(T + us(56), 2, HELPER_TID, "psynch_cvwait", end=True, pid=DAEMON_PID)
        X = T + us(56) + busy
        if k == n_baseline:
            at = T + us(56) + ms(10)
            while at + us(100) < X:
                t.switch(at, 2, HELPER_TID, IDLE[2], reason=AST_QUANTUM)
                t.switch(at + us(100), 2, IDLE[2], HELPER_TID)
                at += ms(10)
        t.bsd(X, 2, HELPER_TID, "psynch_cvsignal", DONE_CV, 0, 0, 0)
        if patched:
            t.argus_wakeup(X + us(4), 2, HELPER_TID, DAEMON_TID, 0xD01E)
        t.make_runnable(X + us(5), 2, HELPER_TID, DAEMON_TID)
        t.bsd(X + us(6), 2, HELPER_TID, "psynch_cvsignal", end=True, pid=DAEMON_PID)
        t.bsd(X + us(10), 2, HELPER_TID, "psynch_cvwait", REQ_CV, 0, 0, 0x600000003000)
        t.block(X + us(11), 2, HELPER_TID)
        t.switch(X + us(11), 2, HELPER_TID, IDLE[2])
        # daemon: reply and receive the next request
        t.switch(X + us(15), 1, IDLE[1], DAEMON_TID)
        t.bsd(X + us(16), 1, DAEMON_TID, "psynch_cvwait", end=True, pid=DAEMON_PID)
        t.mach(X + us(20), 1, DAEMON_TID, "mach_msg2_trap", 0x7000_0001_0000, MACH_SEND_MSG | MACH_RCV_MSG, 0x1c,
               DAEMON_PORTS)
        if patched:
            t.argus_wakeup(X + us(24), 1, DAEMON_TID, APP_TID, 0xA99)
        t.make_runnable(X + us(25), 1, DAEMON_TID, APP_TID)
        t.block(X + us(35), 1, DAEMON_TID)
        t.switch(X + us(35), 1, DAEMON_TID, IDLE[1])
        # app: the reply arrives; back to the run loop until the next period
        t.switch(X + us(30), 0, IDLE[0], APP_TID)
        t.mach(X + us(31), 0, APP_TID, "mach_msg2_trap", end=True)
        t.mach(X + us(40), 0, APP_TID, "mach_msg2_trap", 0x7000_0000_1000, MACH_RCV_MSG, 0, APP_RUNLOOP_PORTS)
        t.block(X + us(41), 0, APP_TID)
        t.switch(X + us(41), 0, APP_TID, IDLE[0])
        if k == n_baseline:
            info.update(hang_req=T, helper_busy_end=X)
        end = X + us(41)
    # the kernel merges per-CPU buffers by time: sort the events the same way
    t.events.sort(key=lambda e: KD_BUF.unpack(e)[0])
    info["trace_end"] = end
    return t, info


def cross_thread_timer(armer=0x101001, sleeper=0x103001, fire_ns=502_000_000):
    """A user thread (armer, pid 100) arms a timer inside kevent_qos (say, an
    EVFILT_TIMER for another process's queue) and goes on to block in read;
    the timer's callout, in a timer interrupt over CPU 1's idle thread, wakes
    `sleeper` (pid 300), blocked in kevent_qos.  Returns the KdTrace."""
    idle0, idle1 = 11, 12
    t = KdTrace(timebase=(1, 1), ncpus=2)
    t.kernel_thread(idle0).kernel_thread(idle1)
    t.thread(armer, 100, "armer").thread(sleeper, 300, "sleeper")
    t.idle(1, 0, idle0).idle(2, 1, idle1)
    t.switch(1_000_000, 1, idle1, sleeper)
    t.bsd(1_000_100, 1, sleeper, "kevent_qos", 7, 0, 0, 0)
    t.block(1_000_200, 1, sleeper).switch(1_000_200, 1, sleeper, idle1)
    t.switch(2_000_000, 0, idle0, armer)
    t.bsd(2_000_100, 0, armer, "kevent_qos", 9, 0, 0, 0)
    t.timer_enter(2_000_200, 0, armer, 0xCA11, fire_ns)
    t.bsd(2_000_300, 0, armer, "kevent_qos", end=True, pid=100)
    t.bsd(2_000_400, 0, armer, "read", 3, 0, 8, 0)
    t.block(2_000_500, 0, armer).switch(2_000_500, 0, armer, idle0)
    t.intr(fire_ns, 1, idle1, INTR_TIMER)
    t.timer_callout(fire_ns + 100, 1, idle1, 0xCA11)
    t.make_runnable(fire_ns + 200, 1, idle1, sleeper)
    t.timer_callout(fire_ns + 300, 1, idle1, 0xCA11, end=True)
    t.intr_end(fire_ns + 400, 1, idle1)
    t.switch(fire_ns + 1_000, 1, idle1, sleeper)
    t.bsd(fire_ns + 1_100, 1, sleeper, "kevent_qos", end=True, pid=300)
    t.bsd(fire_ns + 100_000, 1, sleeper, "kevent_qos", 7, 0, 0, 0)
    t.block(fire_ns + 100_100, 1, sleeper).switch(fire_ns + 100_100, 1, sleeper, idle1)
    return t
