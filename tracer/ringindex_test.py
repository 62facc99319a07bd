"""The ring index reader (ringindex.py) on index files laid out byte by byte
as argusd writes them (hang_index.h): geometry checks, the torn-entry rule,
the open table, and the files it refuses."""
import os
import struct

import numpy as np
import pytest

from argus.tracer import reader, ringindex as RI


def entry(seq, start, end, pid=7, kind=RI.KIND_WAIT, reason=3, flags=0, comm=b"app"):
    e = np.zeros(1, RI.ENTRY_DTYPE)
    e["seq"], e["start_ns"], e["end_ns"], e["pid"], e["tid"] = seq, start, end, pid, pid
    e["kind"], e["reason"], e["guess"], e["flags"], e["nr"], e["obj"], e["comm"] = kind, reason, 1, flags, 0, 3, comm
    return e.tobytes()


def write_index(dirpath, buf, nentries=4, nopen=2, next_seq=0, ring=(), opened=(), magic=RI.MAGIC, created=11,
                mode=0o600, gen=2):
    ino = os.stat(buf).st_ino
    head = RI.HEADER.pack(magic, RI.VERSION, RI.HEADER_SIZE, RI.ENTRY_SIZE, nentries, nopen, 0, ino, created,
                          100, 500, next_seq, gen, len(opened), 0, 999)
    body = bytearray((nopen + nentries) * RI.ENTRY_SIZE)
    for i, e in enumerate(opened):
        body[i * 64:(i + 1) * 64] = e
    for slot, e in ring:
        off = (nopen + slot) * 64
        body[off:off + 64] = e
    path = os.path.join(dirpath, RI.index_name(buf))
    with open(path, "wb") as f:
        f.write(head + bytes(body))
    os.chmod(path, mode)
    return path


@pytest.fixture
def where(tmp_path):
    buf = tmp_path / "t.argus"
    buf.write_bytes(b"x")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield tmp_path, str(buf), fd
    os.close(fd)


def read(where, created=11):
    d, buf, fd = where
    return RI.read_index(fd, RI.index_name(buf), buf, created)


def test_reads_ring_and_open_table(where):
    d, buf, _ = where
    write_index(d, buf, next_seq=2, ring=[(0, entry(1, 1000, 2000)), (1, entry(2, 3000, 4000, pid=8))],
                opened=[entry(1, 5000, 6000, pid=9)])
    idx = read(where)
    assert idx.entries["pid"].tolist() == [7, 8, 9]
    assert [bool(f & RI.FLAG_ONGOING) for f in idx.entries["flags"]] == [False, False, True]
    assert idx.covers(100) and idx.min_ns == 500


def test_wrapped_ring_keeps_only_the_live_sequence_and_says_what_it_covers(where):
    d, buf, _ = where
    # 6 written into 4 slots: seqs 3..6 are live; slot 1 holds a stale seq (torn write) and is dropped
    ring = [(0, entry(5, 5000, 5500)), (1, entry(2, 2000, 2500)), (2, entry(3, 3000, 3500)),
            (3, entry(4, 4000, 4500))]
    write_index(d, buf, next_seq=6, ring=ring)
    idx = read(where)
    assert sorted(idx.entries["start_ns"].tolist()) == [3000, 4000, 5000]
    assert idx.covers_from_ns == 3500 and not idx.covers(100)


def test_an_entry_past_next_seq_is_not_read(where):
    d, buf, _ = where
    write_index(d, buf, next_seq=1, ring=[(0, entry(1, 1, 2)), (1, entry(2, 3, 4))])
    assert read(where).entries["start_ns"].tolist() == [1]


def test_open_table_being_rewritten_is_skipped(where):
    d, buf, _ = where
    write_index(d, buf, opened=[entry(1, 5, 6)], gen=3)     # odd: mid-rewrite, never settles
    assert len(read(where).entries) == 0


def test_another_buffers_index_is_none_and_missing_is_none(where):
    d, buf, _ = where
    assert read(where) is None
    write_index(d, buf, created=12)
    assert read(where) is None


@pytest.mark.parametrize("kw, msg", [(dict(magic=b"NOTANIDX"), "bad magic"), (dict(nentries=0), "bad nentries"),
                                     (dict(mode=0o644), "lets group or others")])
def test_damaged_or_open_to_others_is_one_line(where, kw, msg):
    d, buf, _ = where
    write_index(d, buf, **kw)
    with pytest.raises(reader.TraceError, match=msg):
        read(where)


def test_truncated_and_linked_are_refused(where):
    d, buf, _ = where
    path = write_index(d, buf)
    with open(path, "r+b") as f:
        f.truncate(RI.HEADER_SIZE + 10)
    with pytest.raises(reader.TraceError, match="truncated index"):
        read(where)
    os.unlink(path)
    os.symlink("/etc/passwd", path)
    with pytest.raises(reader.TraceError, match="symbolic link"):
        read(where)
