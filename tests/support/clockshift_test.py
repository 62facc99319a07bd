"""clockshift: every time field of a buffer moves by the offset and drift, nothing else."""
import os
import struct
import subprocess
import sys

import numpy as np

from argus.tracer import producer, reader, schema
from support import clockshift

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clockshift.py")
T0 = 10_000_000_000


def event(type_, size, ts, pid=100, tid=101, cpu=1):
    return struct.pack("<QIIHHHH", ts, pid, tid, type_, size, cpu, 0)


def _buffer(path):
    producer.create_buffer(path, 1 << 20, 64 << 10)
    recs = [
        event(schema.SWITCH_IN, 32, T0 + 1_000) + struct.pack("<II", 55, 54),
        event(schema.SYSCALL, 48, T0 + 2_000) + struct.pack("<IiIIiI", 0, 3, 5, 0, 10, 1_000_000),
        event(schema.TIMER, 64, T0 + 3_000_000_000) + struct.pack("<QqQIIBBHI", 7, T0 + 3_000_000_000,
                                                                   T0 + 1_000_000_000, 100, 101, 2, 1, 1, 0),
        event(schema.TIMER, 64, T0 + 3_000_000_001) + struct.pack("<QqQIIBBHI", 8, 1_700_000_000 * 10**9,
                                                                   T0 + 1_000_000_000, 100, 101, 2, 1, 0, 0),
        event(schema.DETAIL, 40, T0 + 4_000_000_000) + struct.pack("<BBHIQ", 1, 2, 0, 101, 2_000_000_000),
    ]
    with producer.Producer(path, 1) as p:
        for r in recs:
            p.write_raw(r)
    return reader.decode_file(path)


def test_every_time_field_moves_and_nothing_else(tmp_path):
    src, dst = str(tmp_path / "a.argus"), str(tmp_path / "b.argus")
    before = _buffer(src)
    offset, ppm = -1.3, 100.0
    out = subprocess.run([sys.executable, TOOL, src, dst, "--offset", str(offset), "--ppm", str(ppm)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    after = reader.decode_file(dst)
    a = int(before.created_ns)

    def shift(t):
        return t + int(offset * 1e9) + round(ppm * 1e-6 * (t - a))

    assert after.created_ns == shift(a)
    assert after.created_realtime_ns == before.created_realtime_ns
    assert after.rows["ts_ns"].tolist() == [shift(int(t)) for t in before.rows["ts_ns"]]
    b, f = before.rows, after.rows
    exits = b["type"] == schema.SYSCALL_EXIT
    assert int(f["ts_ns"][exits][0]) == shift(T0 + 2_000 + 1_000_000)
    timers = np.flatnonzero(b["type"] == schema.TIMER)
    assert int(f["obj2"][timers[0]]) == shift(T0 + 1_000_000_000)                  # arm_ts_ns
    assert int(f["val"][timers[0]]) == shift(T0 + 3_000_000_000)                   # monotonic expiry
    assert int(f["val"][timers[1]]) == 1_700_000_000 * 10**9                       # a CLOCK_REALTIME one stays
    detail = np.flatnonzero(b["type"] == schema.DETAIL)[0]
    assert int(f["val"][detail]) == round(2_000_000_000 * (1 + ppm * 1e-6))       # a duration scales
    same = [c for c in schema.ROW_DTYPE.names if c not in ("ts_ns", "obj2", "val")]
    for c in same:
        assert (b[c] == f[c]).all(), c
    assert open(src, "rb").read() != open(dst, "rb").read()
    assert before.rows["ts_ns"].tolist() == reader.decode_file(src).rows["ts_ns"].tolist()   # input unchanged


def test_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "x.argus"
    bad.write_bytes(b"not a buffer" * 100)
    out = subprocess.run([sys.executable, TOOL, str(bad), str(tmp_path / "y"), "--offset", "1"],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "not an Argus buffer" in out.stderr
    missing = subprocess.run([sys.executable, TOOL, str(tmp_path / "none"), str(tmp_path / "y"), "--offset", "1"],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1


def test_help():
    out = subprocess.run([sys.executable, TOOL, "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--ppm" in out.stdout


def test_shift_in_memory_counts_records(tmp_path):
    src = str(tmp_path / "a.argus")
    _buffer(src)
    data = bytearray(open(src, "rb").read())
    assert clockshift.shift_buffer(data, 0, 0.0) == 5
    assert bytes(data) == open(src, "rb").read()          # a zero shift is the identity
