"""`bp_watch`: record a data flag's writes and reads into the Argus buffer.

    bp_watch PID IMAGE SYMBOL [--size N] [--address ADDR] [--for SECONDS]
    bp_watch PID --watch IMAGE:SYMBOL --watch IMAGE:SYMBOL ...

Resolves each symbol in the image as loaded in PID (debugger/symbols.py),
arms hardware watchpoints on every thread (debugger/perf_bp.py by default,
or lldb), and appends one DATA_FLAG_WRITE / DATA_FLAG_READ record per access
(addr, value, pc; the accessing thread; CLOCK_MONOTONIC time) to the running
Argus buffer, which `argus debug` turns into data_flag edges.  Stops after
--for seconds, when the target exits, or on Ctrl-C / SIGTERM; every exit path
disarms first, leaving the target as it was.  Errors are one line.
"""
import argparse
import json
import os
import signal
import sys
import time

from argus.cli.common import ArgusError, resolve_buffer
from argus.tracer.producer import Producer, ProducerError


def _int(text):
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def build_parser():
    p = argparse.ArgumentParser(
        prog="bp_watch",
        description="Trace a shared-memory flag with hardware watchpoints into the Argus buffer "
                    "(data_flag_write / data_flag_read events).")
    p.add_argument("pid", type=int, help="the process to watch")
    p.add_argument("image", nargs="?", help="executable or shared object defining the flag (path or basename)")
    p.add_argument("symbol", nargs="?", help="the flag's symbol in IMAGE")
    p.add_argument("--watch", action="append", default=[], metavar="IMAGE:SYMBOL",
                   help="another flag to watch (repeatable; x86 has 4 debug registers per thread)")
    p.add_argument("--size", type=int, choices=(1, 2, 4, 8), help="bytes to watch (default: the symbol's size)")
    p.add_argument("--address", type=_int, metavar="ADDR",
                   help="watch this runtime address instead of looking the symbol up")
    p.add_argument("--for", dest="duration", type=float, metavar="SECONDS",
                   help="stop after this long (default: until Ctrl-C or the process exits)")
    p.add_argument("--buffer", metavar="FILE", help="Argus ring buffer (default: the active one)")
    p.add_argument("--mechanism", choices=("perf", "lldb"),
                   help="perf: perf_event_open breakpoints, the target never stops (Linux default); "
                        "lldb: lldb's Python API, the target stops at each access")
    p.add_argument("--write-only", action="store_true", help="record writes only (a W watchpoint)")
    p.add_argument("--wakeup", type=int, default=1, metavar="N",
                   help="perf: wake bp_watch every N accesses (default 1: the value is read right after each "
                        "access; larger costs the target less under bursts, values are read later)")
    p.add_argument("--verbose", "-v", action="store_true", help="print every access, not only writes")
    p.add_argument("--json", action="store_true", help="print a JSON summary at the end")
    return p


def specs_from_args(args):
    # local for start-up time: the debugger layer loads pyelftools / capstone (~80 ms)
    from argus.debugger import DebuggerError, symbols

    if args.duration is not None and args.duration <= 0:
        raise ArgusError("--for must be positive")
    wanted = []
    if args.image and not args.symbol and args.address is None:
        raise ArgusError("give IMAGE and SYMBOL, or --address ADDR, or --watch IMAGE:SYMBOL")
    if args.image or args.address is not None:
        wanted.append((args.image, args.symbol, args.address))
    for w in args.watch:
        image, sep, symbol = w.rpartition(":")
        if not sep or not image or not symbol:
            raise ArgusError(f"--watch {w!r}: use IMAGE:SYMBOL")
        wanted.append((image, symbol, None))
    if not wanted:
        raise ArgusError("nothing to watch: give IMAGE SYMBOL, --address or --watch IMAGE:SYMBOL")
    specs = []
    for image, symbol, address in wanted:
        try:
            specs.append(symbols.resolve_watch(args.pid, image, symbol, size=args.size, address=address))
        except DebuggerError as e:
            raise ArgusError(str(e)) from None
    return specs


class _StopRequest:
    """SIGINT / SIGTERM ask the loop to stop after the batch in hand (so no
    access already taken from the kernel is dropped); a second one raises."""

    def __init__(self):
        self.asked = False

    def __call__(self, signum, frame):
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True


def run(args):
    # local for start-up time: the debugger layer loads pyelftools / capstone (~80 ms)
    from argus.debugger import DebuggerError, default_mechanism, open_watcher, procmem

    specs = specs_from_args(args)
    buffer = resolve_buffer(args.buffer, announce=False)   # bp_watch writes; its summary names the buffer
    if not os.path.exists(buffer):
        raise ArgusError(f"no Argus buffer at {buffer}: start tracing with `argus start` or pass --buffer")
    try:
        producer = Producer(buffer, os.getpid())
    except ProducerError as e:
        raise ArgusError(f"failed to open buffer {buffer}: {e.strerror or e}") from None
    mechanism = args.mechanism or default_mechanism()
    stop = _StopRequest()
    old_handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    written = {"write": 0, "read": 0}
    how = {}
    watcher = None
    reason = "time is up"

    def record(accesses):
        for a in accesses:
            try:
                producer.write_data_flag(a.kind, a.pid, a.tid, a.addr, a.value, a.pc, ts_ns=a.ts_ns, cpu=a.cpu)
            except ProducerError as e:
                raise ArgusError(f"failed to write to buffer {buffer}: {e.strerror or e}") from None
            written[a.kind] += 1
            how[a.how] = how.get(a.how, 0) + 1
            if args.verbose or a.kind == "write":
                # --json: stdout is the JSON summary alone; the running log goes to stderr
                print(f"{a.ts_ns / 1e9:.6f} {a.kind:5} tid={a.tid} pc=0x{a.pc:x} "
                      f"addr=0x{a.addr:x} value={a.value}", flush=True, file=sys.stderr if args.json else sys.stdout)
    try:
        try:
            if args.wakeup < 1:
                raise ArgusError("--wakeup must be at least 1")
            watcher = open_watcher(mechanism, args.pid, specs, write_only=args.write_only, wakeup=args.wakeup)
        except DebuggerError as e:
            raise ArgusError(str(e)) from None
        what = ", ".join(f"{s.label} at 0x{s.addr:x} ({s.size} bytes)" for s in specs)
        print(f"bp_watch: watching {what} in process {args.pid} with {mechanism}; Ctrl-C to stop",
              file=sys.stderr, flush=True)
        end = time.monotonic() + args.duration if args.duration else None
        try:
            while end is None or time.monotonic() < end:
                if stop.asked:
                    reason = "interrupted"
                    break
                if not procmem.alive(args.pid):
                    reason = "the process exited"
                    break
                try:
                    accesses = watcher.accesses(0.1)
                except DebuggerError as e:
                    if not procmem.alive(args.pid):
                        reason = "the process exited"
                        break
                    raise ArgusError(str(e)) from None
                record(accesses)
        except KeyboardInterrupt:
            reason = "interrupted"
        try:
            # what the kernel buffered since the last poll belongs to the trace too
            record(watcher.accesses(0))
        except (DebuggerError, KeyboardInterrupt):
            pass
    finally:
        # disarming must not be cut short by an impatient second Ctrl-C
        for sig in old_handlers:
            signal.signal(sig, signal.SIG_IGN)
        if watcher is not None:
            watcher.close()
        producer.close()
        for sig, h in old_handlers.items():
            signal.signal(sig, h)
    lost = watcher.lost
    threads = sorted(watcher.threads_seen)
    print(f"bp_watch: {reason}; {written['write']} writes, {written['read']} reads recorded into {buffer}"
          + (f"; {lost} accesses lost (ring full)" if lost else "") + "; watchpoints removed",
          file=sys.stderr)
    if args.json:
        print(json.dumps({"pid": args.pid, "mechanism": mechanism, "buffer": buffer, "reason": reason,
                          "watches": [{"label": s.label, "addr": s.addr, "size": s.size} for s in specs],
                          "writes": written["write"], "reads": written["read"], "classified_by": how,
                          "lost": lost, "threads": threads}))
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except ArgusError as e:
        print(f"bp_watch: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("bp_watch: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
