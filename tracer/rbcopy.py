"""A consistent, compact copy of a ring buffer, live or not (`argus buffer-copy`, `argus collect`).

Algorithm: read the file header and the chunk table (T1); read each used
chunk's committed bytes (T1's committed_bytes: every record below it is
complete, argus_rb.h); read the table again (T2).  A chunk whose seq
changed between T1 and T2 (a writer took it over while it was read), or
that was being reset (seq = UINT64_MAX), is left out: what was read of it
may mix two generations.  A chunk still OPEN keeps what was committed at
T1.  The copy holds only the used chunks (nchunks = their number, the data
area right after the table), so a mostly empty 2 GiB buffer copies in a
few MiB; a reader needs no more (chunks are found by the table, never by
index).  The header's counters are the live ones at T1, daemon_pid is 0
(no daemon writes the copy).

Invariants: the copy opens with argus_rb_open and decodes to the records
of the source's chunks that did not change while being read, in full.
The source is opened read-only without following a link, and must be a
regular file.
"""
import ctypes
import os
import stat

import numpy as np

from . import native

DATA_ALIGN = 4096
_U64_MAX = (1 << 64) - 1
_FREE, _OPEN, _SEALED = 0, 1, 2


class CopyError(Exception):
    """The source is not a buffer that can be copied; one line."""


def _align(v, a):
    return (v + a - 1) // a * a


def _table(fd, head):
    dtype = np.dtype(native.RbChunkHeader)
    if head.chunk_header_size != dtype.itemsize:
        raise CopyError(f"chunk header size {head.chunk_header_size} is not this reader's {dtype.itemsize}")
    raw = os.pread(fd, head.nchunks * dtype.itemsize, head.chunk_table_offset)
    if len(raw) != head.nchunks * dtype.itemsize:
        raise CopyError("truncated chunk table")
    return np.frombuffer(raw, dtype=dtype).copy()


def copy(path, write, between=None):
    """Writes the copy of buffer `path` through write(bytes) (module doc).
    between(): called after the chunks were read, before the table is read
    again (tests make a writer's move there).  Returns (size of the copy,
    chunks copied, chunks left out)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise CopyError(f"cannot open {path}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CopyError(f"{path} is not a regular file")
        size = ctypes.sizeof(native.RbFileHeader)
        raw = os.pread(fd, size, 0)
        if len(raw) < size or raw[:8] != b"ARGUSRB\0":
            raise CopyError(f"{path} is not an Argus buffer")
        head = native.RbFileHeader.from_buffer_copy(raw)
        if head.header_size < 72 or head.header_size > head.chunk_table_offset or head.file_size > st.st_size \
                or head.chunk_size == 0 or head.data_offset + head.nchunks * head.chunk_size > head.file_size:
            raise CopyError(f"{path}: damaged header (sizes do not fit the file)")
        header = bytearray(os.pread(fd, head.chunk_table_offset, 0))
        t1 = _table(fd, head)
        used = np.flatnonzero((t1["state"] != _FREE) & (t1["seq"] != _U64_MAX) & (t1["committed_bytes"] > 0)
                              & (t1["committed_bytes"] <= head.chunk_size))
        data = {}
        for i in used.tolist():
            off = head.data_offset + i * head.chunk_size
            data[i] = os.pread(fd, int(t1["committed_bytes"][i]), off)
        if between is not None:
            between()
        t2 = _table(fd, head)
    finally:
        os.close(fd)
    keep = [i for i in used.tolist() if t2["seq"][i] == t1["seq"][i] and len(data[i]) == t1["committed_bytes"][i]]
    n = len(keep)
    table_off = head.chunk_table_offset
    data_off = _align(table_off + n * head.chunk_header_size, DATA_ALIGN)
    out_size = data_off + n * head.chunk_size
    h = native.RbFileHeader.from_buffer(header)
    h.file_size, h.data_offset, h.nchunks, h.daemon_pid = out_size, data_off, n, 0
    write(bytes(header))
    table = t1[keep] if n else t1[:0]
    table["state"][table["state"] == _OPEN] = _SEALED      # no producer owns a chunk of the copy
    table["owner_pid"] = 0
    write(table.tobytes())
    write(bytes(data_off - table_off - n * head.chunk_header_size))
    for i in keep:
        write(data[i])
        write(bytes(head.chunk_size - len(data[i])))
    return out_size, n, len(used) - n
