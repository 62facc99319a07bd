"""ctypes bindings for the kdebug importer and decoder in libargus_core
(tracer/kdebug/kdebug_file.h): `argus import-kdebug` and the unit tests use them.

The signatures are declared here, not in native.py, so the kdebug side stays
one unit; the library itself is the one native.lib() loads.
"""
import ctypes

from . import native

c_u32, c_u64 = ctypes.c_uint32, ctypes.c_uint64

# Syscall number namespaces of the decoder (tracer/kdebug/kdebug_decode.h).
NR_MACH, NR_BSD = 0x10000, 0x20000

# Names of the xnu syscalls the decoder records (bsd/kern/syscalls.master,
# osfmk/kern/syscall_sw.c), by Argus syscall number.
XNU_SYSCALL_NAMES = {NR_BSD | n: name for n, name in {
    3: "read", 4: "write", 7: "wait4", 27: "recvmsg", 28: "sendmsg", 29: "recvfrom", 30: "accept",
    93: "select", 95: "fsync", 98: "connect", 111: "sigsuspend", 120: "readv", 121: "writev",
    133: "sendto", 153: "pread", 154: "pwrite", 173: "waitid", 230: "poll", 271: "sem_wait",
    301: "psynch_mutexwait", 302: "psynch_mutexdrop", 303: "psynch_cvbroad", 304: "psynch_cvsignal",
    305: "psynch_cvwait", 306: "psynch_rw_rdlock", 307: "psynch_rw_wrlock", 330: "__sigwait",
    334: "__semwait_signal", 363: "kevent", 368: "workq_kernreturn", 369: "kevent64", 374: "kevent_qos",
    375: "kevent_id", 396: "read_nocancel", 397: "write_nocancel", 400: "wait4_nocancel",
    401: "recvmsg_nocancel", 402: "sendmsg_nocancel", 403: "recvfrom_nocancel", 404: "accept_nocancel",
    407: "select_nocancel", 409: "connect_nocancel", 411: "readv_nocancel", 412: "writev_nocancel",
    413: "sendto_nocancel", 414: "pread_nocancel", 415: "pwrite_nocancel", 417: "poll_nocancel",
    420: "sem_wait_nocancel", 423: "__semwait_signal_nocancel", 515: "ulock_wait", 516: "ulock_wake",
    544: "ulock_wait2",
}.items()}
XNU_SYSCALL_NAMES.update({NR_MACH | n: name for n, name in {
    31: "mach_msg_trap", 32: "mach_msg_overwrite_trap", 36: "semaphore_wait_trap",
    37: "semaphore_wait_signal_trap", 38: "semaphore_timedwait_trap", 47: "mach_msg2_trap",
    59: "swtch_pri", 60: "swtch", 61: "thread_switch", 90: "mach_wait_until_trap",
}.items()})


def xnu_syscall_name(nr):
    """The name of a decoded xnu syscall number, or None when it is not one."""
    return XNU_SYSCALL_NAMES.get(int(nr))


def wait_obj_text(nr, obj):
    """What an xnu wait's object is (SWITCH_OUT wait_obj of a decoded xnu
    syscall; kdebug_decode.c says what it stores), or None when nr is no
    xnu syscall whose object is a Mach port or a message buffer."""
    name = xnu_syscall_name(nr)
    obj = int(obj) & (2**64 - 1)
    if name == "mach_msg2_trap":
        # arg4: the header's remote and local port names, combined by libsyscall
        # as remote | local << 32 (LIBMACH_MSG2_COMBINE)
        return f"{name}(remote port {obj & 0xFFFFFFFF:#x}, local port {obj >> 32:#x})"
    if name in ("mach_msg_trap", "mach_msg_overwrite_trap"):
        return f"{name}(message at {obj:#x})"
    if name and name.startswith("semaphore_"):
        return f"{name}(port {obj:#x})"
    return None


class KdebugError(OSError):
    """A kdebug trace could not be imported or decoded (one line)."""


class ImportOpts(ctypes.Structure):
    """struct argus_kdebug_import_opts"""
    _fields_ = [
        ("timebase_numer", c_u32),
        ("timebase_denom", c_u32),
        ("buffer_size", c_u64),
        ("trace_syscalls", ctypes.c_int),
    ]


class ImportResult(ctypes.Structure):
    """struct argus_kdebug_import_result"""
    _fields_ = [
        ("format", c_u32),
        ("timebase_numer", c_u32),
        ("timebase_denom", c_u32),
        ("threads", c_u64),
        ("kd_events", c_u64),
        ("records", c_u64),
        ("lost_markers", c_u64),
        ("patched_events", c_u64),
        ("buffer_size", c_u64),
        ("error", ctypes.c_char * 256),
    ]


_SIGNATURES = {
    "argus_kdebug_import": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ImportOpts),
                                           ctypes.POINTER(ImportResult)]),
    "argus_kdebug_decode_mem": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                               c_u32, c_u32, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                                               ctypes.POINTER(ctypes.c_size_t)]),
}
_declared = False


def _lib():
    global _declared
    lib = native.lib()
    if not _declared:
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        _declared = True
    return lib


def import_trace(trace_path, buffer_path, timebase=None, buffer_size=0, trace_syscalls=True):
    """Converts a V1/V3 kdebug raw file into an Argus ring buffer.
    timebase: (numer, denom) or None (from the file, else 1/1).
    Returns the ImportResult; raises KdebugError with one line."""
    opts = ImportOpts()
    if timebase:
        opts.timebase_numer, opts.timebase_denom = timebase
    opts.buffer_size = buffer_size
    opts.trace_syscalls = 1 if trace_syscalls else 0
    res = ImportResult()
    rc = _lib().argus_kdebug_import(native.fs_path(trace_path), native.fs_path(buffer_path),
                                    ctypes.byref(opts), ctypes.byref(res))
    if rc < 0:
        raise KdebugError(-rc, res.error.decode(errors="replace") or f"import failed (errno {-rc})")
    return res


def decode_records(kdbufs, threadmap=b"", timebase=(1, 1), trace_syscalls=True, out_cap=1 << 20):
    """Decodes raw kd_buf bytes (and thread map bytes) into concatenated Argus
    record bytes, in memory."""
    if len(kdbufs) % 64 or len(threadmap) % 32:
        raise ValueError("kd_bufs are 64 bytes and thread map entries 32 bytes")
    out = ctypes.create_string_buffer(out_cap)
    used = ctypes.c_size_t()
    rc = _lib().argus_kdebug_decode_mem(bytes(kdbufs), len(kdbufs) // 64, bytes(threadmap), len(threadmap) // 32,
                                        timebase[0], timebase[1], 1 if trace_syscalls else 0,
                                        out, out_cap, ctypes.byref(used))
    if rc < 0:
        raise KdebugError(-rc, f"kdebug decode failed (errno {-rc})")
    return out.raw[:used.value]
