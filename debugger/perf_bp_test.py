"""perf_bp against the real kernel: this process watches one of its own
variables (needs root or kernel.perf_event_paranoid <= 1, and a CPU/VM with
hardware breakpoints)."""
import ctypes
import errno
import os
import threading

import pytest

from argus.debugger import perf_bp
from argus.debugger.base import DebuggerError, WatchSpec


def _spec(cell):
    return WatchSpec(ctypes.addressof(cell), 8, "cell")


def _require_breakpoints():
    cell = ctypes.c_long(0)
    try:
        os.close(perf_bp.perf_event_open(threading.get_native_id(), ctypes.addressof(cell), 8))
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM, errno.ENOENT, errno.EOPNOTSUPP, errno.ENODEV):
            pytest.skip(f"no perf hardware breakpoints here: {e.strerror}")
        raise


def test_every_access_recorded_across_ring_wraps():
    _require_breakpoints()
    cell = ctypes.c_long(0)
    me = threading.get_native_id()
    n, seen = 20000, []
    with perf_bp.PerfWatcher(os.getpid(), [_spec(cell)]) as w:
        for i in range(1, n + 1):
            cell.value = i                      # one store per iteration (ctypes writes the 8 bytes)
            if i % 1000 == 0:
                seen += w.accesses(0)
        seen += w.accesses(0)
        hits = sum(ev.hits() for ev in w.events.values())
    mine = [a for a in seen if a.tid == me]
    assert w.lost == 0 and hits >= n
    assert len(seen) == hits                    # 20000 x 48-byte samples: the 256 KiB ring wrapped ~4 times
    assert len(mine) >= n and all(a.addr == ctypes.addressof(cell) for a in mine)
    assert [a.ts_ns for a in seen] == sorted(a.ts_ns for a in seen)
    assert mine[-1].value == n


def test_no_free_debug_register_is_one_error():
    _require_breakpoints()
    cells = (ctypes.c_long * 8)()
    base = ctypes.addressof(cells)
    fds = [perf_bp.perf_event_open(threading.get_native_id(), base + 8 * i, 8) for i in range(4)]
    try:
        with pytest.raises(DebuggerError, match="no free debug register for cell"):
            perf_bp.PerfWatcher(os.getpid(), [WatchSpec(base + 32, 8, "cell")])
    finally:
        for fd in fds:
            os.close(fd)
    # and once they are free again, a watcher arms
    with perf_bp.PerfWatcher(os.getpid(), [WatchSpec(base + 32, 8, "cell")]) as w:
        assert w.events
