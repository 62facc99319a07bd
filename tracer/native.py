"""ctypes bindings for libargus_core.so (tracer/ringbuf/argus_rb.h, tracer/ringbuf/argus_decode.h).

The library is looked up in ARGUS_NATIVE_DIR (environment, checked at load
time) or else argus.NATIVE_DIR, where `pip install .` puts the CMake outputs.
The Structures below mirror the C structs field for field; schema_test.py
parses the headers and fails if they drift.
"""
import ctypes
import os
import threading

import argus

LIBRARY_NAME = "libargus_core.so"

c_u8, c_u16, c_u32, c_u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64


class RbFileHeader(ctypes.Structure):
    """struct argus_rb_file_header"""
    _fields_ = [
        ("magic", ctypes.c_char * 8),
        ("version", c_u32),
        ("header_size", c_u32),
        ("chunk_header_size", c_u32),
        ("schema_version", c_u32),
        ("file_size", c_u64),
        ("chunk_table_offset", c_u64),
        ("data_offset", c_u64),
        ("chunk_size", c_u32),
        ("nchunks", c_u32),
        ("created_ns", c_u64),
        ("created_realtime_ns", c_u64),
        ("next_seq", c_u64),
        ("records_written", c_u64),
        ("bytes_written", c_u64),
        ("records_overwritten", c_u64),
        ("chunks_overwritten", c_u64),
        ("records_lost", c_u64),
        ("chunks_skipped", c_u64),
        ("daemon_pid", c_u32),
        ("flags", c_u32),
        ("extra_rows", c_u64),
        ("disk_full_since_ns", c_u64),
        ("switches_unreported", c_u64),
        ("reserved", c_u64 * 5),
        ("boot_id", c_u8 * 16),
        ("hostname", ctypes.c_char * 64),
    ]


class RbChunkHeader(ctypes.Structure):
    """struct argus_rb_chunk_header"""
    _fields_ = [
        ("seq", c_u64),
        ("state", c_u32),
        ("owner_pid", c_u32),
        ("committed_bytes", c_u32),
        ("nrecords", c_u32),
        ("first_ts", c_u64),
        ("last_ts", c_u64),
    ]


class RbProducer(ctypes.Structure):
    """struct argus_rb_producer (process-local producer state)"""
    _fields_ = [
        ("rb", ctypes.c_void_p),
        ("chunk_index", c_u32),
        ("seq", c_u64),
        ("used", c_u32),
        ("producer_id", c_u32),
    ]


class RbStats(ctypes.Structure):
    """struct argus_rb_stats"""
    _fields_ = [(name, c_u64) for name in (
        "file_size", "chunk_size", "nchunks",
        "records_written", "bytes_written",
        "records_overwritten", "chunks_overwritten", "records_lost", "chunks_skipped",
        "chunks_in_use", "records_present", "bytes_present",
        "first_ts", "last_ts", "created_ns", "created_realtime_ns",
    )] + [("daemon_pid", c_u32), ("extra_rows", c_u64), ("disk_full_since_ns", c_u64),
          ("boot_id", c_u8 * 16), ("hostname", ctypes.c_char * 65), ("switches_unreported", c_u64)]


class DecodeResult(ctypes.Structure):
    """struct argus_decode_result"""
    _fields_ = [
        ("rows", ctypes.c_void_p),
        ("nrows", c_u64),
        ("bytes", c_u64),
        ("torn_chunks", c_u64),
        ("bad_records", c_u64),
        ("records_overwritten", c_u64),
        ("records_lost", c_u64),
        ("first_ts", c_u64),
        ("last_ts", c_u64),
        ("created_realtime_ns", c_u64),
        ("created_ns", c_u64),
        ("error", ctypes.c_char * 256),
        ("unknown_records", c_u64),
        ("frames", ctypes.c_void_p),
        ("nframes", c_u64),
        ("strings", ctypes.c_void_p),
        ("strings_len", c_u64),
        ("first_window_ts", c_u64),
        ("seen_first_ts", c_u64),
        ("seen_last_ts", c_u64),
        ("torn_first_ts", c_u64),
        ("torn_last_ts", c_u64),
        ("boot_id", c_u8 * 16),
        ("hostname", ctypes.c_char * 65),
        ("switches_unreported", c_u64),
    ]


class DecodeOpts(ctypes.Structure):
    """struct argus_decode_opts"""
    _fields_ = [
        ("since_ns", c_u64),
        ("until_ns", c_u64),
        ("type_mask", c_u64),
        ("rows_hint", c_u64),
        ("keep_state", ctypes.c_int),
    ]


# int (*argus_rb_visit_fn)(const void *rec, uint32_t size, uint64_t chunk_seq, void *ctx)
VISIT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, c_u32, c_u64, ctypes.c_void_p)

_handle = ctypes.c_void_p
_SIGNATURES = {
    # name: (restype, argtypes)
    "argus_rb_create": (ctypes.c_int, [ctypes.c_char_p, c_u64, c_u32, ctypes.POINTER(_handle)]),
    "argus_rb_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_handle)]),
    "argus_rb_close": (None, [_handle]),
    "argus_rb_error": (ctypes.c_char_p, [_handle]),
    "argus_rb_header": (ctypes.POINTER(RbFileHeader), [_handle]),
    "argus_rb_set_daemon_pid": (None, [_handle, c_u32]),
    "argus_rb_add_lost": (None, [_handle, c_u64]),
    "argus_rb_add_switches_unreported": (None, [_handle, c_u64]),
    "argus_rb_identity": (ctypes.c_int, [_handle, ctypes.POINTER(c_u8 * 16), ctypes.POINTER(ctypes.c_char * 65)]),
    "argus_rb_set_identity": (ctypes.c_int, [_handle, ctypes.POINTER(c_u8 * 16), ctypes.c_char_p]),
    "argus_rb_add_extra_rows": (None, [_handle, c_u64]),
    "argus_rb_producer_init": (None, [_handle, ctypes.POINTER(RbProducer), c_u32]),
    "argus_rb_write": (ctypes.c_int, [ctypes.POINTER(RbProducer), ctypes.c_char_p, c_u32]),
    "argus_rb_producer_close": (None, [ctypes.POINTER(RbProducer)]),
    "argus_rb_stats": (ctypes.c_int, [_handle, ctypes.POINTER(RbStats)]),
    "argus_rb_read": (ctypes.c_int, [_handle, VISIT_FN, ctypes.c_void_p, ctypes.POINTER(c_u64)]),
    "argus_decode_file": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(DecodeResult)]),
    "argus_decode_file_window": (ctypes.c_int, [ctypes.c_char_p, c_u64, c_u64, ctypes.POINTER(DecodeResult)]),
    "argus_decode_file_opts": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(DecodeOpts),
                                              ctypes.POINTER(DecodeResult)]),
    "argus_decode_free": (None, [ctypes.POINTER(DecodeResult)]),
}

def boot_id_text(raw):
    """16 boot id bytes (a header's) -> the 36-character UUID form of
    /proc/sys/kernel/random/boot_id; "" when all zero (a file without one)."""
    b = bytes(raw)
    if not any(b):
        return ""
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def hostname_text(raw):
    """A NUL-padded hostname field -> str (undecodable bytes escaped)."""
    return bytes(raw).split(b"\0", 1)[0].decode(errors="backslashreplace")


_lib = None
_lib_lock = threading.Lock()


def native_dir():
    """Directory holding the native parts (ARGUS_NATIVE_DIR overrides argus.NATIVE_DIR)."""
    return os.environ.get("ARGUS_NATIVE_DIR") or argus.NATIVE_DIR


def library_path():
    return os.path.join(native_dir(), LIBRARY_NAME)


def lib():
    """The loaded libargus_core with its C signatures declared (loaded once)."""
    global _lib
    with _lib_lock:
        if _lib is None:
            path = library_path()
            if not os.path.exists(path):
                raise OSError(f"{LIBRARY_NAME} not found at {path}: build Argus with `pip install .` "
                              f"or point ARGUS_NATIVE_DIR at a CMake build")
            try:
                loaded = ctypes.CDLL(path)
            except OSError as e:
                # dlopen has no errno: an address-space limit reads "failed to
                # map segment" (glibc) or "Cannot allocate memory"; that is out
                # of memory, which the CLI reports in one line like any other
                if "failed to map segment" in str(e) or "Cannot allocate memory" in str(e):
                    raise MemoryError(f"loading {LIBRARY_NAME}") from None
                raise
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(loaded, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = loaded
        return _lib


def fs_path(path):
    """A path argument as the bytes the C API takes."""
    return os.fsencode(os.fspath(path))


def rb_error(handle):
    """The message a failed argus_rb_* call left in its handle."""
    msg = lib().argus_rb_error(handle)
    return msg.decode(errors="replace") if msg else "out of memory"
