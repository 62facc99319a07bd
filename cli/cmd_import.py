"""`argus import-kdebug`: convert a macOS kdebug raw trace into an Argus ring
buffer, so `argus debug`, `hangs` and `events` work on traces recorded on a
Mac (`ktrace trace`, `trace`, or argusd's own kdebug reader).

    argus import-kdebug TRACE_FILE --out BUFFER.argus [--timebase 125/3]

V1 (RAW_VERSION1) and V3 files are read (docs/macos.md).  V3 carries the
mach timebase; V1 does not, so timestamps are taken as nanoseconds unless
--timebase gives mach_timebase_info's numer/denom (125/3 on Apple silicon,
1/1 on Intel Macs).  A corrupt or truncated file is refused with one line
before anything is written.
"""
import os
import re
import sys

from argus.cli.common import ArgusError, parse_size
from argus.tracer import kdebug


def register(sub):
    p = sub.add_parser("import-kdebug", help="convert a macOS kdebug trace file (V1/V3) into an Argus buffer")
    p.add_argument("trace", metavar="TRACE_FILE", help="kdebug raw trace file (V1 or V3)")
    p.add_argument("--out", required=True, metavar="BUFFER", help="Argus ring buffer to create (overwritten)")
    p.add_argument("--timebase", metavar="NUMER/DENOM",
                   help="mach timebase (default: from a V3 file, else 1/1); Apple silicon is 125/3")
    p.add_argument("--size", metavar="BYTES", help="buffer size (default: fits every event)")
    p.add_argument("--no-syscalls", action="store_true", help="no SYSCALL_ENTER/EXIT records (wait reasons stay)")
    p.set_defaults(func=run)


def _timebase(text):
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or int(m.group(1)) == 0 or int(m.group(2)) == 0 or max(int(m.group(1)), int(m.group(2))) >= 2**32:
        raise ArgusError(f"bad --timebase {text!r}: use NUMER/DENOM, e.g. 125/3")
    return int(m.group(1)), int(m.group(2))


def run(args):
    timebase = _timebase(args.timebase)
    size = parse_size(args.size) if args.size else 0
    if not os.path.exists(args.trace):
        raise ArgusError(f"no such file: {args.trace}")
    if os.path.isdir(args.out):
        raise ArgusError(f"--out {args.out} is a directory")
    if os.path.exists(args.out) and os.path.samefile(args.trace, args.out):
        raise ArgusError(f"--out {args.out} is the trace itself: pick another file")
    try:
        res = kdebug.import_trace(args.trace, args.out, timebase=timebase, buffer_size=size,
                                  trace_syscalls=not args.no_syscalls)
    except kdebug.KdebugError as e:
        raise ArgusError(f"{args.trace}: {e.strerror}")
    except OSError as e:  # the native library is missing
        raise ArgusError(str(e))
    if res.format == 1 and timebase is None:
        print("argus: warning: V1 files carry no mach timebase; assumed 1/1 (Intel Macs). "
              "Apple silicon traces need --timebase 125/3", file=sys.stderr)
    extra = []
    if res.lost_markers:
        extra.append(f"{res.lost_markers} lost-events markers")
    if res.patched_events:
        extra.append(f"{res.patched_events} patched-xnu events")
    print(f"imported {args.trace} (kdebug V{res.format}, timebase {res.timebase_numer}/{res.timebase_denom}): "
          f"{res.threads} threads, {res.kd_events} kdebug events -> {res.records} records in {args.out}"
          + (f" ({', '.join(extra)})" if extra else ""))
    return 0
