"""A damaged buffer: a chunk whose header claims more committed bytes than a
chunk holds (dropped as torn) and a corrupt record (ends its chunk) are
reported, not dropped silently: one warning line on stderr with the counts
and the time range lost, and the counts in `argus status` and the reports."""
import ctypes
import json
import shutil
import struct

import numpy as np

from argus.tracer import native
from conftest import run_demo

RECORD_SIZE_AT = 18          # struct argus_event_header: ts 8, pid 4, tid 4, type 2, size 2


def damage(path):
    """Chunk A: committed_bytes > chunk_size; chunk B: its first record's size
    field not a multiple of 8.  Returns the (first_ts, last_ts) of A."""
    with open(path, "r+b") as f:
        head = native.RbFileHeader.from_buffer_copy(f.read(ctypes.sizeof(native.RbFileHeader)))
        dtype = np.dtype(native.RbChunkHeader)
        f.seek(head.chunk_table_offset)
        table = np.frombuffer(f.read(head.nchunks * dtype.itemsize), dtype=dtype)
        used = [int(i) for i in np.argsort(table["seq"]) if table["nrecords"][i] > 0 and table["state"][i] != 0]
        assert len(used) >= 2, f"the recording filled {len(used)} chunk(s)"
        a, b = used[(len(used) - 1) // 2], used[(len(used) - 1) // 2 + 1]
        commit = head.chunk_table_offset + a * dtype.itemsize + dtype.fields["committed_bytes"][1]
        f.seek(commit)
        f.write(struct.pack("<I", head.chunk_size + 8))
        f.seek(head.data_offset + b * head.chunk_size + RECORD_SIZE_AT)
        f.write(struct.pack("<H", 12))
    return int(table["first_ts"][a]), int(table["last_ts"][a])


def warnings(proc):
    return [l for l in proc.stderr.splitlines() if l.startswith("argus: warning:")]


def test_torn_and_bad_chunks_are_reported(tracing, tmp_path):
    # the yield storm fills many chunks, so damaging two leaves the rest readable
    info, rc = run_demo("--requests", "40", "--hang-at", "30", "--hang-ms", "1500", "--interval-ms", "5",
                        "--stuck", "yield")
    assert rc == 0
    tracing.wait_drained()
    tracing.stop()
    good, bad = tmp_path / "good.argus", tmp_path / "bad.argus"
    shutil.copyfile(tracing.buffer, good)
    shutil.copyfile(tracing.buffer, bad)
    damage(bad)

    clean = tracing.run("events", "--buffer", str(good))
    assert clean.returncode == 0 and warnings(clean) == []
    assert tracing.json("status", "--json", "--buffer", str(good))["torn_chunks"] == 0

    proc = tracing.run("events", "--buffer", str(bad))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    [line] = warnings(proc)
    assert "1 chunk(s) dropped" in line and "records from " in line and " lost" in line
    assert "1 bad record(s)" in line
    assert len(proc.stdout.splitlines()) < len(clean.stdout.splitlines())

    st = tracing.json("status", "--json", "--buffer", str(bad))
    assert (st["torn_chunks"], st["bad_records"]) == (1, 1)
    text = tracing.run("status", "--buffer", str(bad)).stdout
    assert "torn chunks:    1" in text and "bad records:    1" in text

    hangs = tracing.run("hangs", "--buffer", str(bad), "--window", "0", "--json", "--pid", str(info["app_pid"]),
                        "--threshold", "1", check=False)
    assert len(warnings(hangs)) == 1
    trace = json.loads(hangs.stdout)["trace"]
    assert (trace["torn_chunks"], trace["bad_records"]) == (1, 1)

    # debug widens window by window: still at most one warning, and it agrees with the report
    for window in ("0.2", "0"):
        dbg = tracing.run("debug", "--buffer", str(bad), "--pid", str(info["app_pid"]), "--auto", "--json",
                          "--threshold", "1", "--window", window)
        report = json.loads(dbg.stdout)
        dropped = report["trace"]["torn_chunks"] + report["trace"]["bad_records"]
        assert len(warnings(dbg)) == (1 if dropped else 0), (window, dbg.stderr)
        assert any("dropped" in n or "bad record" in n for n in report["notes"]) == bool(dropped)
    assert (report["trace"]["torn_chunks"], report["trace"]["bad_records"]) == (1, 1)    # the whole buffer
