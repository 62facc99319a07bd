"""Ring buffer and decoder tests against the real native parts.

Records are written by the C stress program (tests/programs/rb_stress.c) or by
the Python Producer.  Stress records say who wrote them: nr = producer id,
aux = thread index, obj = per-thread sequence number, obj2 = record_check(...),
so every surviving record can be accounted for exactly.
"""
import ctypes
import os
import signal
import struct
import subprocess
import threading
import time

import numpy as np
import pytest

from argus.tracer import native, producer, reader, schema
from support.programs import program

RECORD = 48              # sizeof(struct argus_ev_syscall_enter)
SMALL_CHUNK = 4096       # 85 records of 48 bytes per chunk


# ---- helpers ----------------------------------------------------------------------

def stress_binary():
    return program("argus-rb-stress")     # a test program: built by the tests, not shipped


def stress(*args, timeout=120):
    done = subprocess.run([stress_binary(), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"rb_stress {args}: {done.stderr}"
    return done.stdout


def spawn_stress(*args, **popen):
    return subprocess.Popen([stress_binary(), *map(str, args)], **popen)


def record_check(producer_id, thread, seq):
    """Mirror of record_check() in rb_stress.c (splitmix64 finalizer), vectorized."""
    z = ((producer_id.astype(np.uint64) << np.uint64(48))
         ^ (thread.astype(np.uint64) << np.uint64(32)) ^ seq.astype(np.uint64))
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def stress_records(trace):
    """Validate every row as an intact stress record; return {(producer, thread): sorted seqs}."""
    rows = trace.rows
    assert np.all(rows["type"] == schema.SYSCALL_ENTER)
    bad = rows["obj2"] != record_check(rows["nr"], rows["aux"], rows["obj"])
    assert not bad.any(), f"{bad.sum()} rows fail their checksum, first {rows[bad][:3]}"
    assert np.all(np.diff(rows["ts_ns"].astype(np.int64)) >= 0), "rows not sorted by time"
    seqs = {}
    for key in set(zip(rows["nr"].tolist(), rows["aux"].tolist())):
        mine = np.sort(rows["obj"][(rows["nr"] == key[0]) & (rows["aux"] == key[1])])
        assert np.all(np.diff(mine) > 0), f"duplicate records of producer/thread {key}"
        seqs[key] = mine
    return seqs


def header_of(path):
    with open(path, "rb") as f:
        return native.RbFileHeader.from_buffer_copy(f.read(ctypes.sizeof(native.RbFileHeader)))


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def event(type_, size, ts, pid=100, tid=101, cpu=3):
    """struct argus_event_header of a record of `size` bytes."""
    return struct.pack("<QIIHHHH", ts, pid, tid, type_, size, cpu, 0)


@pytest.fixture
def buf(tmp_path):
    return str(tmp_path / "trace.argus")


# ---- file creation -------------------------------------------------------------------

def test_file_mode_is_0600_whatever_the_umask_or_previous_file(buf):
    old = os.umask(0)
    try:
        producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
        assert os.stat(buf).st_mode & 0o777 == 0o600
        os.chmod(buf, 0o666)
        stress("create", buf, "1m", SMALL_CHUNK)          # truncates the existing file
        assert os.stat(buf).st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
    assert os.stat(buf).st_blocks * 512 < (1 << 20), "buffer file should be sparse"


def test_header_is_self_describing(buf):
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    h = header_of(buf)
    assert (h.magic, h.version, h.schema_version) == (b"ARGUSRB", 1, schema.SCHEMA_VERSION)
    assert (h.header_size, h.chunk_header_size) == (ctypes.sizeof(h), ctypes.sizeof(native.RbChunkHeader))
    assert h.file_size == os.path.getsize(buf) == 1 << 20
    assert h.chunk_table_offset >= h.header_size
    assert h.data_offset >= h.chunk_table_offset + h.nchunks * h.chunk_header_size
    assert h.data_offset + h.nchunks * h.chunk_size <= h.file_size
    assert h.created_realtime_ns > 1_600_000_000 * 10**9


def test_header_names_the_host_that_created_it(buf):
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    with open("/proc/sys/kernel/random/boot_id") as f:
        boot_id = f.read().strip()
    st = reader.buffer_stats(buf)
    assert (st["hostname"], st["boot_id"]) == (os.uname().nodename, boot_id)
    trace = reader.decode_file(buf)
    assert (trace.hostname, trace.boot_id) == (os.uname().nodename, boot_id)
    h = header_of(buf)
    assert h.hostname == os.uname().nodename.encode() and bytes(h.boot_id).hex() == boot_id.replace("-", "")


def test_a_file_older_than_the_host_identity_reads_with_it_empty(buf):
    """header_size 200 (ARGUS_RB_HEADER_SIZE_V1): the bytes where the fields
    would be belong to the chunk table of such a file and are not read."""
    small_trace(buf, records=10)
    patch(buf, native.RbFileHeader.header_size.offset, struct.pack("<I", native.RbFileHeader.boot_id.offset))
    st = reader.buffer_stats(buf)
    trace = reader.decode_file(buf)
    assert (st["hostname"], st["boot_id"], trace.hostname, trace.boot_id) == ("", "", "", "")
    assert trace.nrows == 10
    patch(buf, native.RbFileHeader.header_size.offset, struct.pack("<I", 201))
    with pytest.raises(reader.TraceError, match=r"bad header_size 201 at offset 0xc"):
        reader.buffer_stats(buf)


def test_set_identity_rewrites_the_host(buf):
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    lib, handle = native.lib(), ctypes.c_void_p()
    assert lib.argus_rb_open(native.fs_path(buf), 1, ctypes.byref(handle)) == 0
    try:
        raw = (ctypes.c_uint8 * 16)(*range(16))
        assert lib.argus_rb_set_identity(handle, ctypes.byref(raw), b"h" * 70) == 0
    finally:
        lib.argus_rb_close(handle)
    st = reader.buffer_stats(buf)
    assert st["hostname"] == "h" * 64
    assert st["boot_id"] == "00010203-0405-0607-0809-0a0b0c0d0e0f"


def test_create_rejects_bad_geometry(buf):
    with pytest.raises(producer.ProducerError, match="chunk size 100"):
        producer.create_buffer(buf, 1 << 20, 100)
    with pytest.raises(producer.ProducerError, match="fewer than 2 chunks"):
        producer.create_buffer(buf, 8192, SMALL_CHUNK)


# ---- accounting ----------------------------------------------------------------------

@pytest.mark.parametrize("size", [RECORD, 72, 256])
def test_wrap_around_keeps_exactly_the_newest_records(buf, size):
    stress("create", buf, "256k", SMALL_CHUNK)
    nchunks = reader.buffer_stats(buf)["nchunks"]
    per_chunk = SMALL_CHUNK // size
    total = per_chunk * nchunks * 3 + per_chunk // 2       # three laps and a half-full chunk
    stress("produce", buf, "--records", total, "--producer-id", 9, "--size", size)

    st = reader.buffer_stats(buf)
    trace = reader.decode_file(buf)
    assert st["records_written"] == total
    assert st["records_present"] == trace.nrows
    assert st["records_present"] + st["records_overwritten"] == total
    # The newest chunk is half full, the other N-1 are full.
    assert trace.nrows == (nchunks - 1) * per_chunk + per_chunk // 2
    assert st["chunks_overwritten"] * per_chunk == st["records_overwritten"]
    assert st["bytes_written"] == total * size
    assert trace.records_overwritten == st["records_overwritten"]
    assert trace.bytes == trace.nrows * size
    seqs = stress_records(trace)
    assert list(seqs) == [(9, 0)]
    np.testing.assert_array_equal(seqs[(9, 0)], np.arange(total - trace.nrows, total))
    assert (trace.first_ts, trace.last_ts) == (st["first_ts"], st["last_ts"])
    assert (trace.bad_records, trace.torn_chunks) == (0, 0)


def test_threads_and_processes_without_wrap_lose_nothing(buf):
    stress("create", buf, "64m", "64k")
    procs = [spawn_stress("produce", buf, "--threads", 3, "--records", 20000, "--producer-id", pid,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) for pid in (1, 2, 3)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    trace = reader.decode_file(buf)
    seqs = stress_records(trace)
    assert sorted(seqs) == [(p, t) for p in (1, 2, 3) for t in range(3)]
    for key, got in seqs.items():
        np.testing.assert_array_equal(got, np.arange(20000), err_msg=str(key))
    st = reader.buffer_stats(buf)
    assert st["records_written"] == st["records_present"] == trace.nrows == 9 * 20000
    assert st["records_overwritten"] == 0


def test_threads_and_processes_with_wrap_account_for_every_record(buf):
    stress("create", buf, "512k", SMALL_CHUNK)
    procs = [spawn_stress("produce", buf, "--threads", 2, "--records", 30000, "--producer-id", pid,
                          "--size", 48 + 8 * pid, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for pid in (1, 2, 3)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    trace = reader.decode_file(buf)
    seqs = stress_records(trace)                        # intact, unique, sorted
    st = reader.buffer_stats(buf)
    assert st["records_written"] == 6 * 30000
    assert st["records_present"] == trace.nrows == sum(len(s) for s in seqs.values())
    assert st["records_present"] + st["records_overwritten"] == st["records_written"]
    assert st["records_overwritten"] > 0
    assert (trace.bad_records, trace.torn_chunks) == (0, 0)


def test_more_live_producers_than_chunks_is_busy_not_corrupt(buf):
    producer.create_buffer(buf, 4096 + 3 * SMALL_CHUNK, SMALL_CHUNK)  # table page + 3 chunks
    assert reader.buffer_stats(buf)["nchunks"] == 3
    record = event(schema.LOST, 32, 1) + struct.pack("<Q", 1)
    holders = [producer.Producer(buf, i) for i in range(3)]
    for p in holders:
        p.write_raw(record)                              # each owns one chunk now
    extra = producer.Producer(buf, 99)
    with pytest.raises(producer.ProducerError, match="all 3 chunks are owned by live producers"):
        extra.write_raw(record)
    for p in holders + [extra]:
        p.close()
    st = reader.buffer_stats(buf)
    assert st["chunks_skipped"] > 0
    assert st["records_written"] == st["records_present"] == 3
    extra = producer.Producer(buf, 99)                  # sealed chunks can be taken again
    extra.write_raw(record)
    extra.close()
    assert reader.buffer_stats(buf)["records_overwritten"] == 1


# ---- kill -9 -------------------------------------------------------------------------

def produce_then_kill(buf, min_reported, *extra):
    """Run produce-forever, SIGKILL it once it reported >= min_reported commits."""
    proc = spawn_stress("produce-forever", buf, "--producer-id", 5, *extra,
                        stdout=subprocess.PIPE, text=True)
    reported = 0
    try:
        for line in proc.stdout:
            reported = int(line)
            if reported >= min_reported:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()                                     # reaped: kill(pid, 0) now says ESRCH
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return reported


def test_kill9_loses_no_committed_record(buf):
    stress("create", buf, "512m", "64k")
    reported = produce_then_kill(buf, 200_000, "--batch", 1000)
    trace = reader.decode_file(buf)
    assert (trace.bad_records, trace.torn_chunks) == (0, 0)
    seqs = stress_records(trace)[(5, 0)]
    assert len(seqs) >= reported
    np.testing.assert_array_equal(seqs, np.arange(len(seqs)))   # a prefix, no gaps
    st = reader.buffer_stats(buf)
    # The dead producer's chunk is still OPEN and fully counted.
    assert st["records_present"] == st["records_written"] == trace.nrows


def test_chunk_of_killed_producer_is_sealed_and_credited_when_taken(buf):
    stress("create", buf, "1m", SMALL_CHUNK)
    produce_then_kill(buf, 100, "--batch", 100, "--batch-sleep-us", 2000)
    dead = stress_records(reader.decode_file(buf))[(5, 0)]
    np.testing.assert_array_equal(dead, np.arange(len(dead)))   # no wrap happened
    stress("produce", buf, "--records", 100_000, "--producer-id", 6)   # several laps
    st = reader.buffer_stats(buf)
    trace = reader.decode_file(buf)
    assert list(stress_records(trace)) == [(6, 0)]
    assert st["records_written"] == len(dead) + 100_000
    assert st["records_present"] + st["records_overwritten"] == st["records_written"]
    assert st["records_present"] == trace.nrows


# ---- readers racing writers ------------------------------------------------------------

def test_reader_racing_writers_never_sees_a_bad_record(buf):
    stress("create", buf, "256k", SMALL_CHUNK)           # ~60 chunks: laps every few ms
    writers = [spawn_stress("produce-forever", buf, "--producer-id", pid, "--batch", 5000,
                            stdout=subprocess.DEVNULL) for pid in (1, 2)]
    decodes, torn = 0, 0
    try:
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            trace = reader.decode_file(buf)
            assert trace.bad_records == 0, trace.warning
            stress_records(trace)                       # every row intact and unique
            decodes += 1
            torn += trace.torn_chunks
    finally:
        for w in writers:
            w.kill()
            w.wait()
    assert decodes > 20
    print(f"{decodes} decodes while writing, {torn} torn chunks dropped")


# ---- damaged files ---------------------------------------------------------------------

def small_trace(buf, records=300):
    stress("create", buf, "1m", SMALL_CHUNK)
    stress("produce", buf, "--records", records, "--producer-id", 1)
    return header_of(buf)


def test_truncated_file_names_both_sizes(buf):
    small_trace(buf)
    os.truncate(buf, 512 * 1024)
    with pytest.raises(reader.TraceError,
                       match=r"trace.argus: truncated: file is 524288 bytes, header says 1048576$"):
        reader.decode_file(buf)
    os.truncate(buf, 100)
    with pytest.raises(reader.TraceError, match=r"truncated: file is 100 bytes, smaller than the 200-byte header"):
        reader.decode_file(buf)
    with pytest.raises(reader.TraceError, match="truncated"):
        reader.buffer_stats(buf)


@pytest.mark.parametrize("field, value, message", [
    ("magic", b"NOTARGUS", r"bad magic at offset 0x0"),
    ("version", struct.pack("<I", 7), r"unsupported version 7 at offset 0x8"),
    ("schema_version", struct.pack("<I", 7), r"unsupported schema_version 7 at offset 0x14"),
    ("chunk_size", struct.pack("<I", 4100), r"bad chunk_size 4100 at offset 0x30"),
    ("nchunks", struct.pack("<I", 1000), r"bad chunk_table_offset .* at offset 0x20"),
    ("data_offset", struct.pack("<Q", 1 << 19), r"bad data_offset 0x80000 at offset 0x28"),
])
def test_corrupt_header_is_a_hard_error_naming_the_offset(buf, field, value, message):
    small_trace(buf)
    patch(buf, getattr(native.RbFileHeader, field).offset, value)
    with pytest.raises(reader.TraceError, match=message):
        reader.decode_file(buf)


def test_corrupt_record_names_its_offset_and_drops_the_rest_of_its_chunk(buf):
    h = small_trace(buf, records=300)                   # chunks 0..3: 85 + 85 + 85 + 45
    bad_offset = h.data_offset + 2 * RECORD             # third record of chunk 0
    patch(buf, bad_offset + 18, struct.pack("<H", 3))   # its size field
    with pytest.raises(reader.TraceError, match=rf"trace.argus: corrupt record at offset "
                                                rf"{bad_offset:#x}: size 3 "):
        reader.decode_file(buf)
    trace = reader.decode_file(buf, strict=False)
    assert trace.bad_records == 1 and f"{bad_offset:#x}" in trace.warning
    seqs = stress_records(trace)[(1, 0)]
    np.testing.assert_array_equal(seqs, np.r_[0:2, 85:300])


def test_record_too_short_for_its_type_is_corrupt(buf):
    h = small_trace(buf, records=100)
    bad_offset = h.data_offset + 85 * RECORD            # first record of chunk 1
    patch(buf, bad_offset + 16, struct.pack("<H", schema.FORK))   # a 48-byte fork needs 48: ok
    patch(buf, h.data_offset + 86 * RECORD + 16, struct.pack("<H", schema.WAKEUP))  # fine too
    trace = reader.decode_file(buf)
    assert trace.bad_records == 0
    patch(buf, h.data_offset + 16, struct.pack("<HH", schema.SWITCH_OUT, 32))       # size < 40
    with pytest.raises(reader.TraceError, match=rf"offset {h.data_offset:#x}: size 32, type 1 needs at least 40"):
        reader.decode_file(buf)
    trace = reader.decode_file(buf, strict=False)       # chunk 0 is dropped from its first record
    assert (trace.bad_records, trace.nrows) == (1, 15)
    np.testing.assert_array_equal(np.sort(trace.rows["obj"]), np.arange(85, 100))


def test_unknown_types_are_skipped_and_counted(buf):
    h = small_trace(buf, records=10)
    patch(buf, h.data_offset + 3 * RECORD + 16, struct.pack("<H", 200))
    trace = reader.decode_file(buf)
    assert (trace.bad_records, trace.unknown_records, trace.nrows) == (0, 1, 9)


# ---- decoder mapping and ordering --------------------------------------------------------

def test_every_type_is_widened_per_the_mapping(buf):
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    comm = b"worker-thread\0\0\0"
    records = [
        event(schema.SWITCH_OUT, 40, 1) + struct.pack("<BBHIQ", 1, schema.WAIT_FUTEX, 120, 202, 0x7F00),
        event(schema.SWITCH_IN, 32, 2) + struct.pack("<II", 55, 54),
        event(schema.WAKEUP, 40, 3) + struct.pack("<IIBBHI", 60, 61, schema.WAKE_SOFTIRQ,
                                                  schema.IRQ_NET, 7, 3),
        event(schema.WAKEUP_NEW, 40, 4) + struct.pack("<IIBBHI", 62, 63, 0, 0, 1, 0),
        event(schema.SYSCALL_ENTER, 48, 5) + struct.pack("<IiQQ", 202, -1, 0xABC, 0xDEF),
        event(schema.SYSCALL_EXIT, 48, 6) + struct.pack("<IIqQ", 0, 0, -11, 0),
        event(schema.FORK, 48, 7) + struct.pack("<II", 70, 71) + comm,
        event(schema.EXEC, 40, 8) + comm,
        event(schema.EXIT, 32, 9) + struct.pack("<iI", -9, 1),
        event(schema.THREAD_NAME, 40, 10) + comm,
        event(schema.PROC_SNAPSHOT, 48, 11) + struct.pack("<II", 1, 5) + comm,
        event(schema.DATA_FLAG_READ, 48, 12) + struct.pack("<QQQ", 0x1000, 42, 0x400500),
        event(schema.LOST, 32, 13) + struct.pack("<Q", 17),
        # Forward compatibility: a longer record than v1 knows is accepted.
        event(schema.EXIT, 64, 14) + struct.pack("<iI", 3, 0) + b"\xff" * 32,
    ]
    with producer.Producer(buf, 1) as p:
        for r in records:
            p.write_raw(r)
        p.write_data_flag("write", 100, 101, 0x2000, -1, 0x400600, ts_ns=15, cpu=3)
    rows = reader.decode_file(buf).rows
    assert rows["ts_ns"].tolist() == list(range(1, 16))
    assert np.all(rows["pid"] == 100) and np.all(rows["tid"] == 101) and np.all(rows["cpu"] == 3)
    r = {i + 1: row for i, row in enumerate(rows)}
    assert (r[1]["state"], r[1]["reason"], r[1]["nr"], r[1]["obj"], r[1]["aux"]) == (1, 1, 202, 0x7F00, 120)
    assert (r[2]["peer_pid"], r[2]["peer_tid"]) == (54, 55)
    assert (r[3]["peer_pid"], r[3]["peer_tid"], r[3]["reason"], r[3]["irq"], r[3]["aux"], r[3]["obj"]) == \
        (60, 61, schema.WAKE_SOFTIRQ, schema.IRQ_NET, 3, 7)
    assert (r[4]["type"], r[4]["peer_tid"], r[4]["obj"]) == (schema.WAKEUP_NEW, 63, 1)
    assert (r[5]["nr"], r[5]["aux"], r[5]["obj"], r[5]["obj2"]) == (202, -1, 0xABC, 0xDEF)
    assert (r[6]["nr"], r[6]["val"]) == (0, -11)
    assert (r[7]["peer_pid"], r[7]["peer_tid"], r[7]["comm"]) == (70, 71, b"worker-thread")
    assert r[8]["comm"] == r[10]["comm"] == b"worker-thread"
    assert (r[9]["val"], r[9]["state"]) == (-9, 1)
    assert (r[11]["peer_pid"], r[11]["state"], r[11]["comm"]) == (1, 1, b"worker-thread")
    assert (r[12]["obj"], r[12]["val"], r[12]["obj2"]) == (0x1000, 42, 0x400500)
    assert r[13]["val"] == 17
    assert (r[14]["val"], r[14]["state"]) == (3, 0)
    assert (r[15]["type"], r[15]["obj"], r[15]["val"], r[15]["obj2"]) == \
        (schema.DATA_FLAG_WRITE, 0x2000, -1, 0x400600)


def test_both_syscall_exit_forms_are_read_by_size(buf):
    """Schema v2: a 32-byte syscall_exit (ret as s32) beside the 40-byte one
    (ret as s64) that v1 files hold; a 24-byte one is too short for either."""
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    with producer.Producer(buf, 1) as p:
        p.write_raw(event(schema.SYSCALL_EXIT, 32, 1) + struct.pack("<Ii", 0, -11))
        p.write_raw(event(schema.SYSCALL_EXIT, 32, 2) + struct.pack("<Ii", 1, 2**31 - 1))
        p.write_raw(event(schema.SYSCALL_EXIT, 40, 3) + struct.pack("<IIq", 1, 0, 1 << 40))
        p.write_raw(event(schema.SYSCALL_EXIT, 40, 4) + struct.pack("<IIq", 0, 0, -(1 << 40)))
    rows = reader.decode_file(buf).rows
    assert [(int(r["nr"]), int(r["val"])) for r in rows] == [(0, -11), (1, 2**31 - 1), (1, 1 << 40), (0, -(1 << 40))]
    patch(buf, header_of(buf).data_offset + 16, struct.pack("<HH", schema.SYSCALL_EXIT, 24))
    with pytest.raises(reader.TraceError, match="size 24, type 6 needs at least 32"):
        reader.decode_file(buf)


def test_both_syscall_enter_forms_are_read_by_size(buf):
    """Schema v3: a 40-byte syscall_enter (obj, obj2 as u32, zero-extended)
    beside the 48-byte one; a 32-byte one is too short for either."""
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    with producer.Producer(buf, 1) as p:
        p.write_raw(event(schema.SYSCALL_ENTER, 40, 1) + struct.pack("<IiII", 0, 4096, 3, 0xFFFFFFFF))
        p.write_raw(event(schema.SYSCALL_ENTER, 48, 2) + struct.pack("<IiQQ", 202, -1, 0x7F00_0000_0000, 1))
        p.write_raw(event(schema.SYSCALL_ENTER, 48, 3) + struct.pack("<IiqQ", 61, 0, -1, 0))
    rows = reader.decode_file(buf).rows
    assert [(int(r["nr"]), int(r["aux"]), int(r["obj"]), int(r["obj2"])) for r in rows] == [
        (0, 4096, 3, 0xFFFFFFFF), (202, -1, 0x7F00_0000_0000, 1), (61, 0, 2**64 - 1, 0)]
    patch(buf, header_of(buf).data_offset + 16, struct.pack("<HH", schema.SYSCALL_ENTER, 32))
    with pytest.raises(reader.TraceError, match="size 32, type 5 needs at least 40"):
        reader.decode_file(buf)


def switch_out(ts, tid, stack_id=None):
    body = struct.pack("<BBHIQ", schema.STATE_BLOCKED, schema.WAIT_READ, 120, 0, 7)
    if stack_id is None:
        return event(schema.SWITCH_OUT, 40, ts, pid=tid, tid=tid) + body
    return event(schema.SWITCH_OUT, 48, ts, pid=tid, tid=tid) + body + struct.pack("<Q", stack_id)


def switch_pair(ts, prev, nxt, stack_id=None):
    """Schema v3: one SWITCH record for prev's switch-out and nxt's switch-in."""
    body = struct.pack("<BBHIQII", schema.STATE_BLOCKED, schema.WAIT_READ, 120, 0, 7, nxt + 1000, nxt)
    if stack_id is None:
        return event(schema.SWITCH, 48, ts, pid=prev, tid=prev) + body
    return event(schema.SWITCH, 56, ts, pid=prev, tid=prev) + body + struct.pack("<Q", stack_id)


def test_switch_record_gives_the_rows_of_a_switch_out_and_a_switch_in(tmp_path):
    """A v3 SWITCH record is decoded into exactly the rows of the SWITCH_OUT
    and SWITCH_IN records it replaces (v1/v2 files), in that order at one ts;
    a type filter keeps either side; rows never have type SWITCH."""
    old, new = str(tmp_path / "v2.argus"), str(tmp_path / "v3.argus")
    for path in (old, new):
        producer.create_buffer(path, 1 << 20, SMALL_CHUNK)
    with producer.Producer(old, 1) as p:
        for ts, stack in ((1, None), (2, 0xABCDEF)):
            p.write_raw(switch_out(ts, 10 + ts, stack))
            p.write_raw(event(schema.SWITCH_IN, 32, ts, pid=1020, tid=20) + struct.pack("<II", 10 + ts, 10 + ts))
    with producer.Producer(new, 1) as p:
        for ts, stack in ((1, None), (2, 0xABCDEF)):
            p.write_raw(switch_pair(ts, 10 + ts, 20, stack))
    a, b = reader.decode_file(old), reader.decode_file(new)
    assert b.nrows == 4 and a.rows.tobytes() == b.rows.tobytes()
    assert b.rows["type"].tolist() == [schema.SWITCH_OUT, schema.SWITCH_IN] * 2
    assert b.rows["obj2"].tolist() == [0, 0, 0xABCDEF, 0]
    assert (b.bytes, a.bytes) == (48 + 56, 2 * 32 + 40 + 48)
    ins = reader.decode_file(new, types=[schema.SWITCH_IN]).rows
    assert ins.tobytes() == a.rows[a.rows["type"] == schema.SWITCH_IN].tobytes()
    assert reader.decode_file(new, types=[schema.WAKEUP]).nrows == 0
    patch(new, header_of(new).data_offset + 16, struct.pack("<HH", schema.SWITCH, 40))
    with pytest.raises(reader.TraceError, match="size 40, type 24 needs at least 48"):
        reader.decode_file(new)


def syscall_call(ts, tid, nr, aux, obj, obj2, ret, delta):
    """Schema v4: one SYSCALL record for a call's enter and exit."""
    return event(schema.SYSCALL, 48, ts, pid=tid, tid=tid) + struct.pack("<IiIIiI", nr, aux, obj, obj2, ret, delta)


CALLS = [   # (ts, tid, nr, aux, obj, obj2, ret, delta): extreme values of every member
    (100, 11, 0, -1, 5, 77, -11, 250),
    (200, 12, 232, 2**31 - 1, 2**32 - 1, 2**32 - 1, 2**31 - 1, 2**32 - 1),
    (300, 11, 1, -(2**31), 0, 0, -(2**31), 0),
]


def test_syscall_record_gives_the_rows_of_a_syscall_enter_and_exit(tmp_path):
    """A v4 SYSCALL record is decoded into exactly the rows of the 40-byte
    SYSCALL_ENTER and 32-byte SYSCALL_EXIT records it replaces (the exit at
    ts + exit_delta_ns, same cpu and nr), sorted among other records as they
    were; a type filter keeps either side; rows never have type SYSCALL."""
    old, new = str(tmp_path / "v3.argus"), str(tmp_path / "v4.argus")
    for path in (old, new):
        producer.create_buffer(path, 1 << 20, SMALL_CHUNK)
    other = event(schema.WAKEUP, 40, 150, pid=20, tid=20) + struct.pack("<IIBBHI", 11, 11, 0, 0, 1, 0)
    with producer.Producer(old, 1) as p:
        for ts, tid, nr, aux, obj, obj2, ret, delta in CALLS:
            p.write_raw(event(schema.SYSCALL_ENTER, 40, ts, pid=tid, tid=tid) + struct.pack("<IiII", nr, aux, obj, obj2))
            if ts == 100:
                p.write_raw(other)     # another CPU's record between the enter and the exit
            p.write_raw(event(schema.SYSCALL_EXIT, 32, ts + delta, pid=tid, tid=tid) + struct.pack("<Ii", nr, ret))
    with producer.Producer(new, 1) as p:
        for call in CALLS:
            p.write_raw(syscall_call(*call))
            if call[0] == 100:
                p.write_raw(other)
    a, b = reader.decode_file(old), reader.decode_file(new)
    assert b.nrows == 7 and a.rows.tobytes() == b.rows.tobytes()
    assert schema.SYSCALL not in b.rows["type"].tolist()
    assert (b.bytes, a.bytes) == (3 * 48 + 40, 3 * (40 + 32) + 40)
    assert b.last_ts == a.last_ts == 200 + 2**32 - 1
    for t in (schema.SYSCALL_ENTER, schema.SYSCALL_EXIT):
        side = reader.decode_file(new, types=[t]).rows
        assert side.tobytes() == a.rows[a.rows["type"] == t].tobytes()
    patch(new, header_of(new).data_offset + 16, struct.pack("<HH", schema.SYSCALL, 40))
    with pytest.raises(reader.TraceError, match="size 40, type 25 needs at least 48"):
        reader.decode_file(new)


def test_a_window_gets_the_exit_row_of_a_syscall_record_that_entered_before_it(buf):
    """A chunk's time range covers the exit row of its SYSCALL records
    (ts + exit_delta_ns), so a window starting between a call's enter and
    exit reads the chunk, as it would read the chunk of a separate exit."""
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    with producer.Producer(buf, 1) as p:
        p.write_raw(syscall_call(100, 11, 0, 0, 3, 0, 1, 900))
    rows = reader.decode_file(buf, since_ns=500, until_ns=2000, keep_state=False).rows
    assert rows["type"].tolist() == [schema.SYSCALL_ENTER, schema.SYSCALL_EXIT]
    assert rows["ts_ns"].tolist() == [100, 1000]


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6])
def test_files_of_every_schema_version_are_read(buf, version):
    """Readers take v1 (40-byte syscall_exit), v2 (+ the 32-byte one), v3
    (+ SWITCH), v4 (+ SYSCALL), v5 (+ NET_IO_SHORT) and v6 (+ a SYSCALL
    whose header.flags stand for a NET_IO row): a record's form is told by
    its type and size."""
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    with producer.Producer(buf, 1) as p:
        p.write_raw(event(schema.SYSCALL_EXIT, 40, 1) + struct.pack("<IIq", 0, 0, -11))
        p.write_raw(switch_out(2, 11))
        if version >= 2:
            p.write_raw(event(schema.SYSCALL_EXIT, 32, 3) + struct.pack("<Ii", 1, 5))
        if version >= 3:
            p.write_raw(switch_pair(4, 11, 20))
        if version >= 4:
            p.write_raw(syscall_call(5, 11, 0, 0, 3, 0, 1, 1))
        if version >= 5:     # inode, bytes, seq, fd, dir, proto
            p.write_raw(event(schema.NET_IO_SHORT, 40, 6) + struct.pack("<IIIHBB", 9, 3, 0, 4, schema.NET_SEND, 6))
        if version >= 6:     # a write of 5 bytes on fd 4 (inode 9), continuing the chain of the short record
            p.write_raw(struct.pack("<QIIHHHH", 7, 100, 101, schema.SYSCALL, 48, 3, schema.NET_SEND)
                        + struct.pack("<IiIIiI", 1, 5, 4, 9, 5, 1))
    patch(buf, native.RbFileHeader.schema_version.offset, struct.pack("<I", version))   # as that version wrote it
    t = reader.decode_file(buf)
    assert header_of(buf).schema_version == version
    want = [schema.SYSCALL_EXIT, schema.SWITCH_OUT] + [schema.SYSCALL_EXIT] * (version >= 2) + \
        [schema.SWITCH_OUT, schema.SWITCH_IN] * (version >= 3) + [schema.SYSCALL_ENTER, schema.SYSCALL_EXIT] * (version >= 4) + \
        [schema.NET_IO] * (version >= 5) + [schema.SYSCALL_ENTER, schema.SYSCALL_EXIT, schema.NET_IO] * (version >= 6)
    assert t.rows["type"].tolist() == want and t.bad_records == 0
    if version >= 6:
        assert t.rows["peer_tid"][-1] == 3 and t.rows["val"][-1] == 5 and t.net_io_implied == 1   # seq 0 + 3


def test_producer_rejects_malformed_records(buf):
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    with producer.Producer(buf, 1) as p:
        with pytest.raises(producer.ProducerError, match="bad record: size 36"):
            p.write_raw(event(schema.EXIT, 36, 1) + b"\0" * 12)
        with pytest.raises(producer.ProducerError, match="bad record: size 32"):
            p.write_raw(event(schema.EXIT, 40, 1) + b"\0" * 8)       # header disagrees
        with pytest.raises(ValueError):
            p.write_data_flag("modify", 1, 1, 0, 0, 0)
    assert reader.decode_file(buf).nrows == 0


@pytest.mark.parametrize("ts_bits", [12, 40, 63])
def test_sort_is_stable_by_time_then_chunk_then_position(buf, ts_bits):
    producer.create_buffer(buf, 4 << 20, SMALL_CHUNK)
    rng = np.random.default_rng(ts_bits)
    n = 30000
    ts = rng.integers(0, 1 << ts_bits, size=n, dtype=np.uint64)
    ts[::7] = ts[0]                                     # plenty of ties, across chunks
    with producer.Producer(buf, 1) as p:
        for i, t in enumerate(ts.tolist()):
            p.write_raw(event(schema.LOST, 32, t) + struct.pack("<Q", i))
    trace = reader.decode_file(buf)
    # One producer: write order == (chunk seq, position) order.
    np.testing.assert_array_equal(trace.rows["val"], np.argsort(ts, kind="stable"))
    assert (trace.first_ts, trace.last_ts) == (int(ts.min()), int(ts.max()))


def test_header_counters_reach_stats_and_decoder(buf):
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    lib = native.lib()
    handle = ctypes.c_void_p()
    assert lib.argus_rb_open(native.fs_path(buf), 1, ctypes.byref(handle)) == 0
    lib.argus_rb_set_daemon_pid(handle, 4242)
    lib.argus_rb_add_lost(handle, 5)
    lib.argus_rb_add_lost(handle, 2)
    lib.argus_rb_close(handle)
    st = reader.buffer_stats(buf)
    assert (st["daemon_pid"], st["records_lost"]) == (4242, 7)
    trace = reader.decode_file(buf)
    assert (trace.records_lost, trace.nrows, trace.first_ts, trace.last_ts) == (7, 0, 0, 0)
    assert trace.created_ns == header_of(buf).created_ns


def test_lost_records_say_their_kind_and_32_byte_ones_are_drops(buf):
    """A LOST record of 40 bytes carries its kind (records dropped, or
    switches the kernel never reported); one of 32 bytes, from before the
    field, is a drop."""
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    with producer.Producer(buf, 1) as p:
        p.write_raw(event(schema.LOST, 32, 1) + struct.pack("<Q", 5))
        p.write_raw(event(schema.LOST, 40, 2) + struct.pack("<QII", 6, schema.LOST_DROPPED, 0))
        p.write_raw(event(schema.LOST, 40, 3) + struct.pack("<QII", 7, schema.LOST_SWITCHES_UNREPORTED, 0))
    rows = reader.decode_file(buf).rows
    assert [(int(r["val"]), int(r["state"])) for r in rows] == [
        (5, schema.LOST_DROPPED), (6, schema.LOST_DROPPED), (7, schema.LOST_SWITCHES_UNREPORTED)]
    assert [schema.LOST_KIND_NAMES[schema.row_values(r)["kind"]] for r in rows] == [
        "dropped", "dropped", "switches_unreported"]


def test_switches_unreported_round_trip_apart_from_records_lost(buf):
    """header.switches_unreported (0x98, was reserved): written by its own
    call, read back by the header, the stats and the decoder, never mixed
    with records_lost."""
    producer.create_buffer(buf, 1 << 20, SMALL_CHUNK)
    lib = native.lib()
    handle = ctypes.c_void_p()
    assert lib.argus_rb_open(native.fs_path(buf), 1, ctypes.byref(handle)) == 0
    lib.argus_rb_add_lost(handle, 2)
    lib.argus_rb_add_switches_unreported(handle, 40)
    lib.argus_rb_add_switches_unreported(handle, 2)
    lib.argus_rb_close(handle)
    with open(buf, "rb") as f:
        raw = f.read(0xa0)
    assert struct.unpack_from("<QQ", raw, 0x70)[0] == 2                       # records_lost
    assert struct.unpack_from("<Q", raw, 0x98)[0] == 42                       # switches_unreported
    h = header_of(buf)
    assert (h.records_lost, h.switches_unreported, h.header_size) == (2, 42, 280)
    st = reader.buffer_stats(buf)
    assert (st["records_lost"], st["switches_unreported"]) == (2, 42)
    trace = reader.decode_file(buf)
    assert (trace.records_lost, trace.switches_unreported) == (2, 42)


def test_a_header_older_than_switches_unreported_reads_it_as_0(buf):
    """Files made before the field hold 0 there (a reserved word), the
    200-byte headers before the host identity too; their records_lost is
    read as it was written."""
    small_trace(buf, records=10)
    lib = native.lib()
    handle = ctypes.c_void_p()
    assert lib.argus_rb_open(native.fs_path(buf), 1, ctypes.byref(handle)) == 0
    lib.argus_rb_add_lost(handle, 9)
    lib.argus_rb_close(handle)
    for header_size in (280, native.RbFileHeader.boot_id.offset):
        patch(buf, native.RbFileHeader.header_size.offset, struct.pack("<I", header_size))
        st = reader.buffer_stats(buf)
        trace = reader.decode_file(buf)
        assert (st["records_lost"], st["switches_unreported"]) == (9, 0)
        assert (trace.records_lost, trace.switches_unreported, trace.nrows) == (9, 0, 10)


def test_rows_survive_the_trace_object_and_free_with_the_last_view(buf):
    small_trace(buf, records=500)
    trace = reader.decode_file(buf)
    view = trace.rows[10:20]
    expected = view.copy()
    del trace
    import gc
    gc.collect()
    np.testing.assert_array_equal(view, expected)       # still backed by the C buffer


def test_python_producers_in_threads(buf):
    producer.create_buffer(buf, 8 << 20, SMALL_CHUNK)

    def write(tid):
        with producer.Producer(buf, tid) as p:
            for i in range(2000):
                p.write_data_flag("write", 1, tid, 0x1000 + tid, i, 0)

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = reader.decode_file(buf).rows
    for tid in range(4):
        np.testing.assert_array_equal(np.sort(rows["val"][rows["tid"] == tid]), np.arange(2000))
    assert len(rows) == 8000
