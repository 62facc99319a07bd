#!/usr/bin/env python3
"""clockshift: a copy of an Argus buffer as if another host's clock had recorded it.

    python3 tests/support/clockshift.py IN OUT --offset 2.7 --ppm 100

Every CLOCK_MONOTONIC time in the copy becomes
    t' = t + offset + ppm * 1e-6 * (t - anchor)
with anchor the buffer's creation stamp (header created_ns, before the
shift), and every duration d becomes d * (1 + ppm * 1e-6).  That is:
record headers' ts_ns (every record type), a SYSCALL record's exit (its
exit_delta_ns, so the exit row moves like the enter), a TIMER's arm_ts_ns
and its expires_ns when the timer's clock is CLOCK_MONOTONIC or
CLOCK_BOOTTIME, a DETAIL's out_ns (a duration), the chunk headers'
first_ts / last_ts and the file header's created_ns.  CLOCK_REALTIME
stamps (created_realtime_ns, disk_full_since_ns) are left alone: a second
host's wall clock agrees (NTP), its monotonic clock does not.
Layouts: tracer/ringbuf/argus_rb.h (file, chunks) and argus_event.h
(records); a record type this tool does not know keeps its payload and
gets its header's ts shifted.  Bad input: one line on stderr, exit 1.
"""
import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from argus.tracer import safe_files  # noqa: E402

MAGIC = b"ARGUSRB\0"
FILE_HEADER = struct.Struct("<8sIIII QQQ II QQ")      # up to created_realtime_ns
CREATED_NS_OFF = 56
CHUNK = struct.Struct("<QIIII QQ")                    # seq, state, owner, committed, nrecords, first, last
REC = struct.Struct("<QIIHHHH")                      # ts, pid, tid, type, size, cpu, flags
SYSCALL, TIMER, DETAIL = 25, 16, 26
MONOTONIC_CLOCKS = (1, 7)


class BadInput(Exception):
    pass


def shift_buffer(data, offset_ns, ppm):
    """Shift the buffer in bytearray data in place; returns the records shifted."""
    if len(data) < FILE_HEADER.size or bytes(data[:8]) != MAGIC:
        raise BadInput("not an Argus buffer (bad magic)")
    (_, _, header_size, chunk_header_size, _, file_size, table, data_off, chunk_size, nchunks,
     created, _) = FILE_HEADER.unpack_from(data)
    if file_size != len(data) or chunk_header_size < CHUNK.size or table + nchunks * chunk_header_size > len(data) \
            or data_off + nchunks * chunk_size > len(data):
        raise BadInput("damaged or truncated buffer (the header's sizes do not fit the file)")
    rate = ppm * 1e-6

    def t(ts):
        return max(0, int(ts) + int(offset_ns) + int(round(rate * (int(ts) - created))))

    def dur(d):
        return max(0, int(round(d * (1 + rate))))

    struct.pack_into("<Q", data, CREATED_NS_OFF, t(created))
    n = 0
    for i in range(nchunks):
        h = table + i * chunk_header_size
        seq, state, owner, committed, nrec, first, last = CHUNK.unpack_from(data, h)
        if committed == 0 or committed > chunk_size:
            continue
        CHUNK.pack_into(data, h, seq, state, owner, committed, nrec, t(first) if first else 0, t(last) if last else 0)
        base, off = data_off + i * chunk_size, 0
        while off + REC.size <= committed:
            ts, pid, tid, typ, size, cpu, flags = REC.unpack_from(data, base + off)
            if size < REC.size or size % 8 or off + size > committed:
                break          # the rest of a chunk a writer tore: the decoder drops it too
            r = base + off
            struct.pack_into("<Q", data, r, t(ts))
            if typ == SYSCALL and size >= 48:
                (delta,) = struct.unpack_from("<I", data, r + 44)
                struct.pack_into("<I", data, r + 44, min(0xFFFFFFFF, t(ts + delta) - t(ts)))
            elif typ == TIMER and size >= 64:
                expires, arm = struct.unpack_from("<qQ", data, r + 32)
                (clockid,) = struct.unpack_from("<H", data, r + 58)
                if clockid in MONOTONIC_CLOCKS:
                    expires = t(expires) if expires > 0 else expires
                struct.pack_into("<qQ", data, r + 32, expires, t(arm) if arm else 0)
            elif typ == DETAIL and size >= 40:
                (out,) = struct.unpack_from("<Q", data, r + 32)
                struct.pack_into("<Q", data, r + 32, dur(out))
            off += size
            n += 1
    return n


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="clockshift", description="Write a copy of an Argus buffer with its monotonic clock shifted by an "
        "offset and a drift, as another host would have recorded it (tests of multi-host merging).",
        epilog="t' = t + OFFSET + PPM*1e-6*(t - created_ns); durations scale by 1 + PPM*1e-6.")
    p.add_argument("input", help="the buffer to read (left unchanged)")
    p.add_argument("output", help="the copy to write (a new file, mode 0600)")
    p.add_argument("--offset", type=float, required=True, metavar="SECONDS", help="clock offset, may be negative")
    p.add_argument("--ppm", type=float, default=0.0, help="clock drift in parts per million (default 0)")
    args = p.parse_args(argv)
    try:
        with open(args.input, "rb") as f:
            data = bytearray(f.read())
        n = shift_buffer(data, int(round(args.offset * 1e9)), args.ppm)
        safe_files.write_output(args.output, bytes(data))
    except BadInput as e:
        print(f"clockshift: {args.input}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"clockshift: {e.filename or args.input}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"clockshift: {n} records shifted by {args.offset:+g} s, {args.ppm:+g} ppm -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
