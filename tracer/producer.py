"""Writing records into a ring buffer from Python (bp_watch, tests).

Producer wraps one struct argus_rb_producer: it owns one chunk at a time, so
give each writing thread its own Producer (calls on one Producer are
serialized by a lock anyway).  Records are schema v1 (tracer/ringbuf/argus_event.h).
"""
import ctypes
import struct
import threading
import time

from . import native, schema

# struct argus_event_header: ts_ns, pid, tid, type, size, cpu, flags
EVENT_HEADER = struct.Struct("<QIIHHHH")
# struct argus_ev_data_flag: header + addr, value, pc
DATA_FLAG = struct.Struct("<QIIHHHHQQQ")

_DATA_FLAG_KINDS = {
    "write": schema.DATA_FLAG_WRITE, schema.DATA_FLAG_WRITE: schema.DATA_FLAG_WRITE,
    "read": schema.DATA_FLAG_READ, schema.DATA_FLAG_READ: schema.DATA_FLAG_READ,
}


class ProducerError(OSError):
    """A ring buffer could not be created, opened or written."""


def create_buffer(path, size, chunk_size=1 << 20):
    """Create (or truncate) a sparse ring buffer file of `size` bytes, mode 0600."""
    lib = native.lib()
    handle = ctypes.c_void_p()
    rc = lib.argus_rb_create(native.fs_path(path), size, chunk_size, ctypes.byref(handle))
    try:
        if rc < 0:
            raise ProducerError(-rc, native.rb_error(handle))
    finally:
        lib.argus_rb_close(handle)


class Producer:
    def __init__(self, path, producer_id):
        self._lib = native.lib()
        self._handle = ctypes.c_void_p()
        rc = self._lib.argus_rb_open(native.fs_path(path), 1, ctypes.byref(self._handle))
        if rc < 0:
            message = native.rb_error(self._handle)
            self._lib.argus_rb_close(self._handle)
            raise ProducerError(-rc, message)
        self._producer = native.RbProducer()
        self._lib.argus_rb_producer_init(self._handle, ctypes.byref(self._producer), producer_id)
        self._lock = threading.Lock()
        self.path = path

    def write_raw(self, record):
        """Append one complete record (bytes; its header's size must equal len(record))."""
        with self._lock:
            if self._handle is None:
                raise ProducerError(9, f"{self.path}: producer is closed")
            rc = self._lib.argus_rb_write(ctypes.byref(self._producer), bytes(record), len(record))
            if rc < 0:
                raise ProducerError(-rc, native.rb_error(self._handle))

    def write_data_flag(self, kind, pid, tid, addr, value, pc, ts_ns=None, cpu=0):
        """Append a DATA_FLAG_WRITE / DATA_FLAG_READ record (kind: "write", "read" or the type)."""
        try:
            event_type = _DATA_FLAG_KINDS[kind]
        except KeyError:
            raise ValueError(f"data flag kind must be 'write' or 'read', not {kind!r}") from None
        if ts_ns is None:
            ts_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, like every other producer
        self.write_raw(DATA_FLAG.pack(ts_ns, pid, tid, event_type, DATA_FLAG.size, cpu, 0,
                                      addr & 0xFFFFFFFFFFFFFFFF, value & 0xFFFFFFFFFFFFFFFF,
                                      pc & 0xFFFFFFFFFFFFFFFF))

    def close(self):
        """Seal the current chunk and unmap the buffer (idempotent)."""
        with self._lock:
            if self._handle is None:
                return
            self._lib.argus_rb_producer_close(ctypes.byref(self._producer))
            self._lib.argus_rb_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self.close()
