#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/run.sh (tests/fuzz/corpus/<target>/).

Ring buffer seeds are small real buffers (1 KiB chunks) holding records of
the golden trace (tests/data/golden.argus, recorded by argusd): sealed,
wrapped (overwritten chunks) and with an OPEN chunk; the window seeds add a
24-byte (since, until, type mask) prefix.  kdebug seeds are files that
tests/support/kdebug_gen.py lays out as xnu does (V1 and V3), from its
scenarios and a small crafted one (many pids, lost-events markers).  Each
file is a few KB.  Run after `pip install .`; the output is checked in.
"""
import ctypes
import os
import pathlib
import shutil
import struct
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))        # tests/support: the generators, not installed

from argus.tracer import native, producer, reader   # noqa: E402
from support import kdebug_gen as g                  # noqa: E402
GOLDEN = HERE.parent / "data" / "golden.argus"
CHUNK = 1024


def golden_records(limit):
    """Raw record bytes of the golden trace, in chunk order."""
    out = []
    lib = native.lib()
    handle = ctypes.c_void_p()
    assert lib.argus_rb_open(native.fs_path(GOLDEN), 0, ctypes.byref(handle)) == 0

    def visit(rec, size, seq, ctx):
        out.append(ctypes.string_at(rec, size))
        return 1 if len(out) >= limit else 0
    lib.argus_rb_read(handle, native.VISIT_FN(visit), None, None)
    lib.argus_rb_close(handle)
    return out


def merged_switches(records):
    """Schema v3: each SWITCH_OUT directly followed by a SWITCH_IN of the same
    ts and cpu becomes one SWITCH record (48 bytes, 56 with a stack id), and
    each SYSCALL_ENTER whose obj and obj2 fit in 32 bits the 40-byte form, as
    the tracer writes them now."""
    out, i = [], 0
    while i < len(records):
        r = records[i]
        nxt = records[i + 1] if i + 1 < len(records) else b""
        if (struct.unpack_from("<H", r, 16)[0] == 1 and nxt and struct.unpack_from("<H", nxt, 16)[0] == 2
                and r[:8] == nxt[:8] and r[20:22] == nxt[20:22]):
            ts, pid, tid, _, size, cpu, flags = struct.unpack_from("<QIIHHHH", r)
            npid, ntid = struct.unpack_from("<II", nxt, 8)
            stack = r[40:48] if size >= 48 else b""
            out.append(struct.pack("<QIIHHHH", ts, pid, tid, 24, 48 + len(stack), cpu, flags) +
                       r[24:40] + struct.pack("<II", npid, ntid) + stack)
            i += 2
        elif struct.unpack_from("<H", r, 16)[0] == 5 and max(struct.unpack_from("<QQ", r, 32)) < 1 << 32:
            obj, obj2 = struct.unpack_from("<QQ", r, 32)      # the 40-byte syscall_enter
            out.append(r[:18] + struct.pack("<H", 40) + r[20:32] + struct.pack("<II", obj, obj2))
            i += 1
        else:
            out.append(r)
            i += 1
    return out


def merged_syscalls(records):
    """Schema v4: each 40-byte SYSCALL_ENTER directly followed by the exit of
    the same thread on the same cpu, with a 32-bit ret less than 2^32 ns
    later, becomes one SYSCALL record (48 bytes), as the tracer writes a call
    that did not block."""
    out, i = [], 0
    while i < len(records):
        r = records[i]
        nxt = records[i + 1] if i + 1 < len(records) else b""
        if (struct.unpack_from("<HH", r, 16) == (5, 40) and nxt and struct.unpack_from("<H", nxt, 16)[0] == 6
                and r[8:16] == nxt[8:16] and r[20:22] == nxt[20:22]):
            ret = struct.unpack_from("<i" if len(nxt) == 32 else "<q", nxt, 28 if len(nxt) == 32 else 32)[0]
            delta = struct.unpack_from("<Q", nxt)[0] - struct.unpack_from("<Q", r)[0]
            if -2**31 <= ret < 2**31 and 0 <= delta < 2**32:
                out.append(r[:18] + struct.pack("<H", 48) + r[20:40] + struct.pack("<iI", ret, delta))
                i += 2
                continue
        out.append(r)
        i += 1
    return out


def ring_buffer(tmp, name, records, nchunks=4, seal=True):
    path = os.path.join(tmp, name)
    producer.create_buffer(path, 4096 + nchunks * CHUNK + 4096, CHUNK)
    p = producer.Producer(path, 1)
    for r in records:
        p.write_raw(r)
    if seal:
        p.close()
    else:
        p._lib.argus_rb_close(p._handle)      # leaves the chunk OPEN, as a live producer would
        p._handle = None
    return pathlib.Path(path).read_bytes()


def main():
    recs = golden_records(400)
    by_type = {}
    for r in recs:
        by_type.setdefault(struct.unpack_from("<H", r, 16)[0], []).append(r)
    varied = [rs[0] for rs in by_type.values()] + recs[:60]
    with tempfile.TemporaryDirectory() as tmp:
        # a stack record with no frames first: memcpy to the still-NULL frame array (UBSan, fixed)
        empty_stack = struct.pack("<QIIHHHH", struct.unpack_from("<Q", recs[0])[0], 1, 1,
                                  17, 32, 0, 0) + bytes(8)
        seeds = {
            "sealed": ring_buffer(tmp, "a", varied[:40]),
            "wrapped": ring_buffer(tmp, "b", recs[:200]),
            "open": ring_buffer(tmp, "c", varied[:30], seal=False),
            "empty-stack": ring_buffer(tmp, "d", [empty_stack] + varied[:10]),
            "switch-v3": ring_buffer(tmp, "e", merged_switches(recs[:120])),
            "syscall-v4": ring_buffer(tmp, "f", merged_syscalls(merged_switches(recs[:160]))),
        }
        for target in ("rb_decode", "rb_window"):
            d = HERE / "corpus" / target
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            for name, data in seeds.items():
                if target == "rb_window":
                    t = reader.decode_file(os.path.join(tmp, {"sealed": "a", "wrapped": "b", "open": "c", "empty-stack": "d",
                                                              "switch-v3": "e", "syscall-v4": "f"}[name]))
                    mid = (t.first_ts + t.last_ts) // 2
                    data = struct.pack("<QQQ", mid, t.last_ts, (1 << 63) | 0x7FFFF) + data
                (d / name).write_bytes(data)

    v1, v3 = HERE / "corpus" / "kdebug_v1", HERE / "corpus" / "kdebug_v3"
    for d in (v1, v3):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    crafted = g.KdTrace()
    for i in range(40):
        crafted.thread(0x1000 + i, 500 + i % 13, f"p{i}")
    for i in range(20):
        crafted.block(1000 + i * 10, 0, 0x1000 + i).lost(1001 + i * 10)
    crafted.bsd(2000, 0, 0x1000, "read", 3, 0, 8, 0)
    crafted.bsd(2010, 0, 0x1000, "read", end=True, error=1 << 63)   # -INT64_MIN (UBSan, fixed)
    timer = g.cross_thread_timer()
    timer.write_v1(v1 / "timer", page_size=4096)
    timer.write_v3(v3 / "timer")
    crafted.write_v1(v1 / "crafted", page_size=4096)
    crafted.write_v3(v3 / "crafted", chunk_events=7)
    hang, _ = g.cross_process_hang(n_baseline=1, hang_s=0.5, period_s=0.2)
    hang.write_v3(v3 / "hang", chunk_events=64)
    for d in (HERE / "corpus").iterdir():
        print(d.name, sorted((f.name, f.stat().st_size) for f in d.iterdir()))


if __name__ == "__main__":
    main()
