"""Streaming a ring buffer window by window, in constant memory.

Decoding a full 2 GiB buffer at once costs ~180 bytes per record (the rows,
the radix sort's keys and the gather copy): ~9 GB for 50M records.  A reader
that only looks at each record once (`argus events`) instead walks the buffer
in time windows that each cover about CHUNKS_PER_WINDOW chunks.

Algorithm: read the chunk table (headers only: seq, state, nrecords,
first_ts, last_ts), sort the chunks holding records by first_ts and cut the
time axis at every CHUNKS_PER_WINDOW-th distinct first_ts.  Window k,
[lo_k, hi_k], is decoded with argus_decode_file_opts(since=lo_k, until=hi_k,
keep_state=0): every chunk whose header range overlaps it, plus every OPEN
chunk; of those rows only the ones with lo_k <= ts <= hi_k are kept.

Invariants:
  - the windows partition [0, 2^64): a record belongs to exactly one, and its
    chunk (header range covering its ts) is decoded with that window, so the
    concatenated output is every record exactly once;
  - each window's rows are sorted by (ts, chunk seq, position) and cutting by
    ts keeps that order, so the concatenation equals the whole-buffer decode
    row for row (for a buffer no producer writes meanwhile);
  - memory per window: the rows of its chunks (chunks spanning many windows,
    e.g. a quiet CPU's, are decoded again in each: time, not memory).
"""
import ctypes
import os

import numpy as np

from . import native, reader

CHUNKS_PER_WINDOW = 16          # ~16 MiB of records (default 1 MiB chunks): ~70 MB of rows at peak
_U64_MAX = (1 << 64) - 1
_CHUNK_FREE, _CHUNK_OPEN = 0, 1


def chunk_table(path):
    """The chunk headers of a buffer that hold records (numpy array of
    native.RbChunkHeader), read with two preads; [] when none."""
    with open(path, "rb", buffering=0) as f:
        fd = f.fileno()
        head = native.RbFileHeader.from_buffer_copy(os.pread(fd, ctypes.sizeof(native.RbFileHeader), 0))
        dtype = np.dtype(native.RbChunkHeader)
        raw = os.pread(fd, head.nchunks * dtype.itemsize, head.chunk_table_offset)
    table = np.frombuffer(raw, dtype=dtype, count=len(raw) // dtype.itemsize)
    used = ((table["state"] != _CHUNK_FREE) & (table["seq"] != _U64_MAX) & (table["nrecords"] > 0)
            & (table["committed_bytes"] <= head.chunk_size))
    return table[used]


def records_in(table, since_ns, until_ns):
    """Records of the chunks a decode of [since_ns, until_ns] reads (their
    header range overlaps it, or they are OPEN): what it will widen."""
    inside = ((table["first_ts"] <= until_ns) & (table["last_ts"] >= since_ns)) | (table["state"] == _CHUNK_OPEN)
    return int(table["nrecords"][inside].sum())


def windows(table, chunks_per_window=CHUNKS_PER_WINDOW):
    """[(lo, hi, rows_hint)] partitioning [0, 2^64) so that about
    chunks_per_window chunks start in each window."""
    starts = np.unique(np.sort(table["first_ts"]))[::max(1, int(chunks_per_window))]
    cuts = [0] + [int(t) for t in starts[1:]] + [_U64_MAX + 1]
    # a switch record (schema v3) is two rows: a quarter more rows than records, as the decoder sizes it
    return [(lo, nxt - 1, records_in(table, lo, nxt - 1) * 5 // 4 + 1024) for lo, nxt in zip(cuts, cuts[1:])]


def iter_windows(path, chunks_per_window=CHUNKS_PER_WINDOW):
    """Yields one reader.Trace per window, its rows cut to the window (views
    of the window's decode; a window with no record yields nothing).  Bad
    records and torn chunks are not reported here: a whole-buffer pass
    (reader.decode_file with types=...) counts them once."""
    for lo, hi, hint in windows(chunk_table(path), chunks_per_window):
        trace = reader.decode_file(path, strict=False, since_ns=lo, until_ns=hi, rows_hint=hint, keep_state=False)
        ts = trace.rows["ts_ns"]
        a, b = np.searchsorted(ts, np.uint64(lo), side="left"), np.searchsorted(ts, np.uint64(hi), side="right")
        if b > a:
            trace.rows = trace.rows[a:b]
            yield trace
