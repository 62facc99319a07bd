"""A consistent, compact copy of a buffer: the same records, only the used
chunks, and a chunk a writer took over while it was read left out."""
import struct

import numpy as np
import pytest

from argus.tracer import native, producer, rbcopy, reader, schema

CHUNK = 64 << 10


def _records(path, n):
    producer.create_buffer(path, 8 << 20, CHUNK)
    with producer.Producer(path, 1) as p:
        for i in range(n):
            p.write_raw(struct.pack("<QIIHHHH", 1_000 + i, 7, 7, schema.LOST, 32, 0, 0) + struct.pack("<Q", i))


def _copy(src, dst, **kw):
    parts = []
    size, kept, dropped = rbcopy.copy(src, parts.append, **kw)
    blob = b"".join(parts)
    assert len(blob) == size
    with open(dst, "wb") as f:
        f.write(blob)
    return kept, dropped


def test_copy_holds_the_same_records_in_fewer_bytes(tmp_path):
    src, dst = str(tmp_path / "a.argus"), str(tmp_path / "b.argus")
    _records(src, 5000)                                  # 160 kB: three chunks of 64 kB
    kept, dropped = _copy(src, dst)
    assert (kept, dropped) == (3, 0)
    a, b = reader.decode_file(src), reader.decode_file(dst)
    assert b.rows["val"].tolist() == a.rows["val"].tolist() == list(range(5000))
    assert (tmp_path / "b.argus").stat().st_size < (8 << 20) // 4
    assert reader.buffer_stats(dst)["daemon_pid"] == 0


def test_a_chunk_taken_over_while_read_is_left_out(tmp_path):
    src, dst = str(tmp_path / "a.argus"), str(tmp_path / "b.argus")
    _records(src, 5000)
    with open(src, "rb") as f:
        head = native.RbFileHeader.from_buffer_copy(f.read(512))

    def writer_moves():         # chunk 1 gets a new sequence number, as when a producer takes it
        with open(src, "r+b") as f:
            off = head.chunk_table_offset + head.chunk_header_size
            f.seek(off)
            seq = struct.unpack("<Q", f.read(8))[0]
            f.seek(off)
            f.write(struct.pack("<Q", seq + head.nchunks))

    kept, dropped = _copy(src, dst, between=writer_moves)
    assert (kept, dropped) == (2, 1)
    vals = reader.decode_file(dst).rows["val"]
    assert len(vals) < 5000 and np.all(np.diff(vals) > 0)


def test_not_a_buffer(tmp_path):
    p = tmp_path / "x"
    p.write_bytes(b"x" * 4096)
    with pytest.raises(rbcopy.CopyError, match="not an Argus buffer"):
        rbcopy.copy(str(p), lambda b: None)
    with pytest.raises(rbcopy.CopyError, match="cannot open"):
        rbcopy.copy(str(tmp_path / "none"), lambda b: None)
