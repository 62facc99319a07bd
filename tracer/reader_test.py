"""reader.decode_file with a time window (argus_decode_file_window) against the
full decode of the same real, wrapped trace (tests/data/golden.argus).

The oracle is built independently of the decoder: argus_rb_read hands out every
record with its chunk seq, the chunk table read straight from the file gives
each chunk's state and [first_ts, last_ts], and the full decode's rows are
matched to records by the decoder's documented order (ts, chunk seq,
position).  A window decode must return exactly the full decode's rows of the
chunks overlapping the window, plus the state records from before it.
"""
import ctypes
import os

import numpy as np
import pytest

from argus.tracer import native, reader, schema

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "golden.argus")
CHUNK_DTYPE = np.dtype([("seq", "<u8"), ("state", "<u4"), ("owner_pid", "<u4"), ("committed_bytes", "<u4"),
                        ("nrecords", "<u4"), ("first_ts", "<u8"), ("last_ts", "<u8")])
STATE_TYPES = [schema.PROC_SNAPSHOT, schema.THREAD_NAME, schema.FD_INFO, schema.MAPPING]
STACK_LOOKBACK_NS = 2_000_000_000     # argus_decode.c: stacks of the 2 s before a window are kept
OPEN = 1


def _chunk_table(path):
    with open(path, "rb") as f:
        head = f.read(0x38)
        table_off = int.from_bytes(head[0x20:0x28], "little")
        nchunks = int.from_bytes(head[0x34:0x38], "little")
        f.seek(table_off)
        table = np.frombuffer(f.read(nchunks * CHUNK_DTYPE.itemsize), CHUNK_DTYPE)
    return {int(c["seq"]): c for c in table}


def _records(path):
    """(ts, seq, position, type) of every record, in argus_rb_read order."""
    lib = native.lib()
    handle = ctypes.c_void_p()
    assert lib.argus_rb_open(native.fs_path(path), 0, ctypes.byref(handle)) == 0
    out = []
    pos = {}

    def visit(rec, size, seq, _ctx):
        hdr = ctypes.string_at(rec, 24)
        pos[seq] = pos.get(seq, -1) + 1
        out.append((int.from_bytes(hdr[0:8], "little"), seq, pos[seq], int.from_bytes(hdr[16:18], "little")))
        return 0

    try:
        torn = native.c_u64()
        assert lib.argus_rb_read(handle, native.VISIT_FN(visit), None, ctypes.byref(torn)) == 0
        assert torn.value == 0
    finally:
        lib.argus_rb_close(handle)
    return np.array(out, dtype=np.uint64).reshape(-1, 4)


@pytest.fixture(scope="module")
def golden():
    full = reader.decode_file(GOLDEN)
    assert full.bad_records == 0 and full.unknown_records == 0
    rec = _records(GOLDEN)
    assert len(rec) == full.nrows
    order = np.lexsort((rec[:, 2], rec[:, 1], rec[:, 0]))
    rec = rec[order]                       # now row i of the full decode is record i
    assert np.array_equal(rec[:, 0], full.rows["ts_ns"])
    assert np.array_equal(rec[:, 3], full.rows["type"])
    return full, rec[:, 1], _chunk_table(GOLDEN)


def _same_rows(win, full, keep):
    """win's rows are full's rows[keep]; side-array references (USER_STACK obj,
    MAPPING peer_tid) index each Trace's own arrays, so those compare by content."""
    a, b = win.rows.copy(), full.rows[keep].copy()
    assert len(a) == len(b)
    for t, field, content in ((schema.USER_STACK, "obj", lambda tr, r: tr.stack_frames(r).tolist()),
                              (schema.MAPPING, "peer_tid", lambda tr, r: tr.mapping_path(r))):
        ia, ib = np.flatnonzero(a["type"] == t), np.flatnonzero(b["type"] == t)
        assert np.array_equal(ia, ib)
        assert [content(win, win.rows[i]) for i in ia] == [content(full, full.rows[keep][i]) for i in ib]
        a[field][ia] = 0
        b[field][ib] = 0
    return a.tobytes() == b.tobytes()


def _expected(full, seqs, chunks, since, until):
    inside = {s: bool(c["state"] == OPEN or (c["first_ts"] <= until and c["last_ts"] >= since))
              for s, c in chunks.items()}
    in_window = np.array([inside[int(s)] for s in seqs], dtype=bool)
    ts = full.rows["ts_ns"]
    recent_stack = (full.rows["type"] == schema.USER_STACK) & (ts + STACK_LOOKBACK_NS >= since)
    before = (np.isin(full.rows["type"], STATE_TYPES) | recent_stack) & (ts < since) & ~in_window
    return in_window, in_window | before


@pytest.mark.parametrize("lo, hi", [(0.45, 0.55), (0.0, 0.1), (0.9, 1.0), (0.3, 0.3), (0.0, 1.0)])
def test_window_rows_are_the_full_rows_of_the_overlapping_chunks(golden, lo, hi):
    full, seqs, chunks = golden
    span = full.last_ts - full.first_ts
    since, until = full.first_ts + int(span * lo), full.first_ts + int(span * hi)
    win = reader.decode_file(GOLDEN, since_ns=since, until_ns=until)
    in_window, keep = _expected(full, seqs, chunks, since, until)
    assert win.window == (since, until)
    assert win.nrows == int(keep.sum())
    assert _same_rows(win, full, keep)
    assert win.first_window_ts == int(full.rows["ts_ns"][in_window].min())
    if hi - lo < 0.5:
        assert win.nrows < full.nrows // 2      # the window really skipped chunks


def test_window_keeps_state_records_from_before_it(golden):
    full, seqs, chunks = golden
    since = full.last_ts - (full.last_ts - full.first_ts) // 20
    win = reader.decode_file(GOLDEN, since_ns=since)
    early = win.rows[win.rows["ts_ns"] < win.first_window_ts]
    assert len(early) and set(np.unique(early["type"]).tolist()) <= set(STATE_TYPES) | {schema.USER_STACK}
    in_window, keep = _expected(full, seqs, chunks, since, (1 << 64) - 1)
    assert _same_rows(win, full, keep)


def test_window_after_the_trace_holds_only_state_records(golden):
    full, _, _ = golden
    win = reader.decode_file(GOLDEN, since_ns=full.last_ts + 1, until_ns=full.last_ts + 10)
    assert win.first_window_ts == 0
    assert set(np.unique(win.rows["type"]).tolist()) <= set(STATE_TYPES) | {schema.USER_STACK}
