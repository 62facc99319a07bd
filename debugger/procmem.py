"""A live process seen through /proc: its mappings, threads and memory.

process_vm_readv has no wrapper in Python's standard library or in any
maintained package, so it is called through ctypes here; it reads without
stopping the target (unlike ptrace PEEKDATA) and fails cleanly on an unmapped
address.
"""
import ctypes
import ctypes.util
import errno
import os
from dataclasses import dataclass

from argus.debugger.base import DebuggerError

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class _IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


_libc.process_vm_readv.restype = ctypes.c_ssize_t
_libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.POINTER(_IoVec), ctypes.c_ulong,
                                   ctypes.POINTER(_IoVec), ctypes.c_ulong, ctypes.c_ulong]


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    perms: str
    offset: int
    path: str


def permission_hint(unprivileged):
    """What to do about EPERM/EACCES: as a user, become root; as root, nothing will help."""
    if os.geteuid() != 0:
        return unprivileged
    return "even root may not: the process is protected or outside this namespace"


def check_process(pid):
    """One-line errors for a pid that is not there or not ours to touch."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        raise DebuggerError(f"no such process {pid}") from None
    except PermissionError:
        raise DebuggerError(f"permission denied for process {pid}: " + permission_hint(
            "run as root (or as its owner with kernel.perf_event_paranoid <= 1 / kernel.yama.ptrace_scope 0)")) from None


def alive(pid):
    """True while pid runs (not gone, not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def maps(pid):
    try:
        with open(f"/proc/{pid}/maps") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise DebuggerError(f"no such process {pid}") from None
    except PermissionError:
        raise DebuggerError(f"permission denied reading /proc/{pid}/maps: " + permission_hint("run as root")) from None
    out = []
    for line in lines:
        parts = line.split(maxsplit=5)
        if len(parts) < 5:
            continue
        lo, hi = parts[0].split("-")
        out.append(Mapping(int(lo, 16), int(hi, 16), parts[1], int(parts[2], 16),
                           parts[5].strip() if len(parts) > 5 else ""))
    return out


def threads(pid):
    """The tids of pid's live threads (empty once it is gone)."""
    try:
        return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except FileNotFoundError:
        return []


def read(pid, addr, size):
    """size bytes at addr in pid, or raise DebuggerError."""
    buf = ctypes.create_string_buffer(size)
    local = _IoVec(ctypes.cast(buf, ctypes.c_void_p), size)
    remote = _IoVec(ctypes.c_void_p(addr), size)
    n = _libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    if n != size:
        e = ctypes.get_errno()
        if e == errno.ESRCH:
            raise DebuggerError(f"no such process {pid}")
        if e == errno.EPERM:
            raise DebuggerError(f"permission denied reading memory of process {pid}: " + permission_hint("run as root"))
        raise DebuggerError(f"failed to read {size} bytes at 0x{addr:x} in process {pid}: {os.strerror(e)}")
    return buf.raw


def read_uint(pid, addr, size):
    return int.from_bytes(read(pid, addr, size), "little")
