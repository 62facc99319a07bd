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
import dataclasses
import os

import numpy as np

from . import native, netio, reader, schema

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
    (reader.decode_file with types=...) counts them once.  A short NET_IO
    row whose socket's full row is in an earlier window gets its 4-tuple
    from there (netio.TupleCarry), and an implied one (schema v6) its
    chain's rows (reader.chain_rows of the last netio.ANCHOR_MAX_NS), as in
    one decode of the buffer."""
    carry = netio.TupleCarry()
    # the windows before, as the lookback of implied NET_IO rows (schema v6)
    chain = reader.chain_rows(schema.empty_rows(0))
    for lo, hi, hint in windows(chunk_table(path), chunks_per_window):
        chain = chain[chain["ts_ns"] >= np.uint64(max(0, lo - netio.ANCHOR_MAX_NS))]
        trace = reader.decode_file(path, strict=False, since_ns=lo, until_ns=hi, rows_hint=hint, keep_state=False,
                                   lookback=chain, keep_chain=True)
        chain = np.concatenate([chain, trace.chain])
        trace.chain = None
        trace.frames = carry.apply(trace.rows, trace.frames)
        ts = trace.rows["ts_ns"]
        a, b = np.searchsorted(ts, np.uint64(lo), side="left"), np.searchsorted(ts, np.uint64(hi), side="right")
        if b > a:
            trace.rows = trace.rows[a:b]
            yield trace


# Side-array offsets a row holds (schema.ROW_FIELDS, ctype "side"): which
# array each indexes, so rows of two decodes can share one pair of arrays.
_OFFSET_FIELDS = {"frames": "frames", "fds": "frames", "local_addr": "frames", "path": "strings"}


def _rebase(rows, frames_off, strings_off):
    """Adds the offsets of the arrays this decode's side arrays were appended to."""
    for t, fields in schema.ROW_FIELDS.items():
        for f in fields:
            which = _OFFSET_FIELDS.get(f.name) if f.ctype == "side" else None
            off = frames_off if which == "frames" else strings_off if which == "strings" else 0
            if off:
                sel = rows["type"] == t
                rows[f.column][sel] += off


class GrowingWindow:
    """Windows of one buffer that only grow ([since, until], either side None:
    unbounded), each record decoded once.

    Algorithm: the first window is one decode (state records from before it
    kept).  A wider one decodes only what it adds: [since, lo - 1] with the
    state records from before it, and [hi + 1, until] without; of each decode
    only the rows with ts on its side of the old bounds are kept (a chunk
    overlapping a bound is decoded on both sides, its records kept once), and
    the old rows lose theirs outside [lo, hi] that the new parts cover.  The
    rows are concatenated older part, old rows, newer part: sorted, since the
    parts' ts ranges are disjoint, and the same rows as one decode of the
    wider window (its records, the state records from before it), the side
    arrays appended and the rows' offsets into them rebased.

    Invariant: self.trace is the decode of [self.lo, self.hi] as
    reader.decode_file would give it (rows, first_window_ts, counters of the
    last part decoded)."""

    def __init__(self, path, decode=None):
        self.path = path
        self.decode = decode or (lambda **kw: reader.decode_file(path, strict=False, **kw))
        self.trace, self.lo, self.hi = None, None, None
        self.decoded_rows = 0           # rows the decoder produced, all loads together

    def load(self, since_ns, until_ns):
        lo = 0 if since_ns is None else int(since_ns)
        hi = _U64_MAX if until_ns is None else int(until_ns)
        t = self.trace
        if t is None or lo > self.lo or hi < self.hi or t.window is None:
            self.trace = self._decode(lo, hi, True)
        elif (lo, hi) != (self.lo, self.hi):
            self.trace = self._widen(t, lo, hi)
        self.lo, self.hi = lo, hi
        return self.trace

    def _decode(self, lo, hi, keep_state):
        whole = lo == 0 and hi == _U64_MAX and keep_state
        kw = {} if whole else dict(since_ns=lo, until_ns=hi, keep_state=keep_state)
        try:
            hint = records_in(chunk_table(self.path), lo, hi) * 5 // 4 + 1024
        except (OSError, ValueError):
            hint = 0
        t = self.decode(rows_hint=hint, **kw)
        self.decoded_rows += t.nrows
        return t

    def _widen(self, old, lo, hi):
        ts = old.rows["ts_ns"]
        a = int(np.searchsorted(ts, np.uint64(self.lo), side="left")) if lo < self.lo else 0
        b = int(np.searchsorted(ts, np.uint64(self.hi), side="right")) if hi > self.hi else len(ts)
        parts, first_window_ts = [], old.first_window_ts
        if lo < self.lo:
            older = self._decode(lo, self.lo - 1, True)
            k = int(np.searchsorted(older.rows["ts_ns"], np.uint64(self.lo), side="left"))
            parts.append((older, older.rows[:k]))
            first_window_ts = older.first_window_ts or first_window_ts
        parts.append((old, old.rows[a:b]))
        if hi > self.hi:
            newer = self._decode(self.hi + 1, hi, False)
            k = int(np.searchsorted(newer.rows["ts_ns"], np.uint64(self.hi), side="right"))
            parts.append((newer, newer.rows[k:]))
        frames, strings, chunks = [], [], []
        nf = ns = 0
        for t, rows in parts:
            if nf or ns:
                rows = rows.copy()          # a view of a decode: rebased in a copy
                _rebase(rows, nf, ns)
            chunks.append(rows)
            frames.append(t.frames)
            strings.append(t.strings)
            nf, ns = nf + len(t.frames), ns + len(t.strings)
        rows = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
        frames = np.concatenate(frames)
        if len(chunks) > 1:   # a short NET_IO row's socket may have its full row in another part
            frames = netio.resolve_tuples(rows, frames)
        last = parts[-1][0]
        return dataclasses.replace(
            last, rows=rows, nrows=len(rows), frames=frames, strings=b"".join(strings),
            window=(lo, hi), first_window_ts=first_window_ts,
            first_ts=int(rows["ts_ns"][0]) if len(rows) else 0, last_ts=int(rows["ts_ns"][-1]) if len(rows) else 0,
            torn_chunks=sum(int(t.torn_chunks) for t, _ in parts), bad_records=sum(int(t.bad_records) for t, _ in parts))
