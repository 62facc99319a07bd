"""Hardware watchpoints through Linux perf_event_open (PERF_TYPE_BREAKPOINT).

No Python library wraps perf_event_open (the syscall has no libc wrapper
either), so the attr struct and the ring-buffer reader are written here with
ctypes and mmap; the layouts are the kernel's uapi (linux/perf_event.h).

Algorithm:
  arm     for every thread of the target (/proc/PID/task) and every spec, one
          breakpoint event: bp_type RW (or W with write_only), bp_len = size,
          sample_period 1, sample_type IP|TID|TIME|ADDR|CPU, use_clockid with
          CLOCK_MONOTONIC (the clock every other Argus record uses),
          exclude_kernel, wakeup_events 1 (or --wakeup N: fewer wakeups of
          bp_watch under bursts, values read later), an mmap ring of RING_PAGES.
          `inherit` cannot be combined with a per-thread mmap ring (the kernel
          refuses mmap of an inherited cpu=-1 event), so new threads are found
          by rescanning /proc/PID/task every RESCAN_S; a thread's accesses in
          its first RESCAN_S are missed.
  poll    poll() the event fds; drain each ring (data_head .. data_tail,
          wrapping), parse SAMPLE and LOST records; read the flag's value
          with process_vm_readv right after (the target was not stopped: the
          value is the one after the access, possibly after later accesses
          too); classify write / read (classify.py); hand Access records out
          in time order.
  disarm  read each event's hit count (sample_period 1: one per access) to
          count the accesses the ring had no room for that no LOST record
          reported yet, then close every event fd (the kernel frees the debug
          register of every thread at once); the target was never stopped.

Ring buffer protocol (perf_event_mmap_page): the kernel writes records and
then publishes data_head; we read data_head, then the records, then store
data_tail.  On x86 (TSO) loads are not reordered with other loads and stores
are not reordered with earlier loads, so reading data_head before the records
and writing data_tail after them needs no explicit barrier from Python; the
kernel side has its own smp_wmb / smp_mb.
"""
import ctypes
import errno
import mmap
import os
import platform
import select
import struct
import time

from argus.debugger import procmem
from argus.debugger.base import Access, DebuggerError, Watcher
from argus.debugger.classify import AccessClassifier

PERF_TYPE_BREAKPOINT = 5
HW_BREAKPOINT_W = 2
HW_BREAKPOINT_RW = 3
PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_CPU = 1, 2, 4, 8, 128
PERF_RECORD_LOST, PERF_RECORD_SAMPLE = 2, 9
PERF_EVENT_IOC_DISABLE = 0x2401
CLOCK_MONOTONIC = 1
# attr.flags bits (the kernel's bitfield order)
FLAG_EXCLUDE_KERNEL = 1 << 5
FLAG_EXCLUDE_HV = 1 << 6
FLAG_USE_CLOCKID = 1 << 25

RING_PAGES = 64         # data pages per event (a power of two): 256 KiB, 6500 40-byte samples
RESCAN_S = 0.1

_NR_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}
SAMPLE = struct.Struct("<QIIQQII")  # ip, pid, tid, time, addr, cpu, res (the kernel's field order)
HEADER = struct.Struct("<IHH")      # type, misc, size
_DATA_HEAD_OFF = 1024               # offsetof(struct perf_event_mmap_page, data_head)


class PerfEventAttr(ctypes.Structure):
    # PERF_ATTR_SIZE_VER5 (112 bytes): every field we need, accepted by any kernel since 4.1.
    _fields_ = [
        ("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
        ("bp_addr", ctypes.c_uint64), ("bp_len", ctypes.c_uint64),
        ("branch_sample_type", ctypes.c_uint64), ("sample_regs_user", ctypes.c_uint64),
        ("sample_stack_user", ctypes.c_uint32), ("clockid", ctypes.c_int32),
        ("sample_regs_intr", ctypes.c_uint64), ("aux_watermark", ctypes.c_uint32),
        ("sample_max_stack", ctypes.c_uint16), ("reserved_2", ctypes.c_uint16),
    ]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def perf_event_open(tid, addr, size, write_only=False, wakeup=1):
    """One breakpoint event on thread tid; returns the fd, raises OSError(errno)."""
    nr = _NR_PERF_EVENT_OPEN.get(platform.machine())
    if nr is None:
        raise DebuggerError(f"perf breakpoints are not supported on {platform.machine()}: use --mechanism lldb")
    attr = PerfEventAttr()
    attr.type = PERF_TYPE_BREAKPOINT
    attr.size = ctypes.sizeof(PerfEventAttr)
    attr.sample_period = 1
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU
    attr.flags = FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV | FLAG_USE_CLOCKID
    attr.clockid = CLOCK_MONOTONIC
    attr.wakeup_events = wakeup
    attr.bp_type = HW_BREAKPOINT_W if write_only else HW_BREAKPOINT_RW
    attr.bp_addr = addr
    attr.bp_len = size
    fd = _libc.syscall(nr, ctypes.byref(attr), tid, -1, -1, 0)
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return fd


def _open_error(e, pid, tid, spec):
    if e.errno == errno.ENOSPC:
        return DebuggerError(f"no free debug register for {spec.label} in thread {tid} of process {pid} "
                             f"(x86 has 4 per thread; another debugger or perf may hold them)")
    if e.errno in (errno.EACCES, errno.EPERM):
        return DebuggerError(f"permission denied opening a hardware breakpoint on process {pid}: " + procmem.permission_hint(
            "run as root (or lower kernel.perf_event_paranoid)"))
    if e.errno == errno.EINVAL:
        return DebuggerError(f"the kernel refused a {spec.size}-byte breakpoint at 0x{spec.addr:x} "
                             f"({spec.label}): check size and alignment")
    if e.errno in (errno.ENOENT, errno.EOPNOTSUPP, errno.ENODEV):
        return DebuggerError("this kernel or VM has no hardware breakpoints for perf: use --mechanism lldb")
    return DebuggerError(f"failed to open a hardware breakpoint on thread {tid}: {e.strerror}")


class _Event:
    def __init__(self, fd, tid, spec):
        self.fd, self.tid, self.spec = fd, tid, spec
        self.page = mmap.PAGESIZE
        self.data_size = RING_PAGES * self.page
        self.ring = mmap.mmap(fd, self.page + self.data_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.tail = 0
        self.samples = 0      # SAMPLE records read
        self.lost = 0         # accesses LOST records reported

    def hits(self):
        """Accesses the kernel counted on this event (read_format 0: one u64)."""
        try:
            return struct.unpack("<Q", os.read(self.fd, 8))[0]
        except OSError:
            return self.samples

    def drain(self):
        """[(kind, fields)]: ('sample', (ip, pid, tid, time, addr)) / ('lost', count)."""
        head = struct.unpack_from("<Q", self.ring, _DATA_HEAD_OFF)[0]
        out = []
        while self.tail < head:
            hdr = self._bytes(self.tail, HEADER.size)
            typ, _, size = HEADER.unpack(hdr)
            if size < HEADER.size:
                break
            body = self._bytes(self.tail + HEADER.size, size - HEADER.size)
            if typ == PERF_RECORD_SAMPLE and len(body) >= SAMPLE.size:
                out.append(("sample", SAMPLE.unpack_from(body)))
            elif typ == PERF_RECORD_LOST and len(body) >= 16:
                out.append(("lost", struct.unpack_from("<QQ", body)[1]))
            self.tail += size
        # data_tail after the records are consumed (see the block comment on ordering)
        struct.pack_into("<Q", self.ring, _DATA_HEAD_OFF + 8, self.tail)
        return out

    def _bytes(self, pos, n):
        off = pos % self.data_size
        start = self.page + off
        if off + n <= self.data_size:
            return self.ring[start:start + n]
        first = self.data_size - off
        return self.ring[start:start + first] + self.ring[self.page:self.page + n - first]

    def close(self):
        try:
            self.ring.close()
        finally:
            os.close(self.fd)


class PerfWatcher(Watcher):
    mechanism = "perf"

    def __init__(self, pid, specs, write_only=False, wakeup=1):
        super().__init__(pid, specs)
        procmem.check_process(pid)
        self.write_only = write_only
        self.wakeup = max(1, int(wakeup))
        self.events = {}          # (tid, spec index) -> _Event
        self.by_fd = {}
        self.poller = select.poll()
        self.classifier = AccessClassifier(pid)
        self.lost = 0
        self.threads_seen = set()
        self._next_scan = 0.0
        try:
            self._rescan(initial=True)
        except BaseException:
            self._disarm()
            raise

    def _rescan(self, initial=False):
        tids = procmem.threads(self.pid) if procmem.alive(self.pid) else []
        if initial and not tids:
            raise DebuggerError(f"no such process {self.pid} (it exited)")
        live = set(tids)
        for key in [k for k in self.events if k[0] not in live]:
            self._drop(key)
        for tid in tids:
            for i, spec in enumerate(self.specs):
                if (tid, i) in self.events:
                    continue
                try:
                    fd = perf_event_open(tid, spec.addr, spec.size, self.write_only, self.wakeup)
                except OSError as e:
                    if e.errno == errno.ESRCH:      # the thread exited while we scanned
                        continue
                    raise _open_error(e, self.pid, tid, spec) from None
                try:
                    ev = _Event(fd, tid, spec)
                except OSError as e:
                    os.close(fd)
                    raise DebuggerError(f"failed to map the perf ring of thread {tid}: {e.strerror}") from None
                self.events[(tid, i)] = ev
                self.by_fd[fd] = ev
                self.poller.register(fd, select.POLLIN)
                self.threads_seen.add(tid)
        if initial and not self.events:
            raise DebuggerError(f"no such process {self.pid} (its threads exited)")
        self._next_scan = time.monotonic() + RESCAN_S

    def _drop(self, key):
        ev = self.events.pop(key)
        # samples the ring had no room for and no later LOST record reported
        self.lost += max(0, ev.hits() - ev.samples - ev.lost)
        self.by_fd.pop(ev.fd, None)
        try:
            self.poller.unregister(ev.fd)
        except (KeyError, ValueError):
            pass
        ev.close()

    def _poll(self, timeout_s):
        if time.monotonic() >= self._next_scan:
            self._rescan()
        if not self.events:
            time.sleep(timeout_s)
            return []
        self.poller.poll(max(0, int(timeout_s * 1000)))
        samples = []
        for ev in list(self.events.values()):
            recs = ev.drain()
            if not recs:
                continue
            # one read per ring per pass: the samples of a pass were taken before it,
            # so a read per sample would not be closer to any of their accesses
            try:
                value = procmem.read_uint(self.pid, ev.spec.addr, ev.spec.size)
            except DebuggerError:
                value = 0
            for kind, rec in recs:
                if kind == "lost":
                    self.lost += rec
                    ev.lost += rec
                    continue
                ev.samples += 1
                ip, pid, tid, ts, _addr, cpu, _ = rec
                samples.append((ts, tid, ip, ev.spec, value, cpu))
        samples.sort(key=lambda s: s[0])
        out = []
        for ts, tid, ip, spec, value, cpu in samples:
            kind, how = self.classifier.classify(spec.addr, ip, value)
            out.append(Access(kind, self.pid, tid, ip, spec.addr, value, ts, how, cpu))
        return out

    def _disarm(self):
        for key in list(self.events):
            try:
                self._drop(key)
            except OSError:
                pass
