"""`argus flags`: find the data flag a spinning thread polls (paper §4.3, automated).

    argus flags --pid PID [--tid TID] --function F --record spinning   # while it spins
    argus flags --pid PID [--tid TID] --function F --record normal --next-call   # its next, normal call
    argus flags --pid PID [--tid TID]                                  # compare the two
    argus flags --normal A.json --spinning B.json [--pid PID]          # any two lldb-trace results

Recording runs the generated lldb script (argus lldb-script) with a bounded
instruction count and keeps the result as <buffer>.lldb/<pid>-<tid>.<label>.json.
The comparison reports, first, the addresses the two streams read with
different values (debugger/value_flags.py: a flag read as the same value in
every spinning iteration and as another in the normal run ranks first, even
when a different branch tests it in each stream), then where the two control
flows diverge and the memory operands read just before
(debugger/divergence.py), each with the bp_watch line that would watch it.
"""
import json
import os
import sys

from argus.tracer import safe_files
from argus.cli.common import ArgusError, resolve_buffer
from argus.tracer.textsafe import safe_lines
from argus.scripts.lldb import generate as gen
from argus.cli.cmd_lldb_script import script_dir, run_script
from argus.scripts.lldb.generate import read_result

LABELS = ("normal", "spinning")


def register(sub):
    p = sub.add_parser("flags", help="find a polled data flag: where a spinning and a normal run of the same code diverge")
    p.add_argument("--pid", type=int, help="the process (to record, and to resolve addresses to symbols)")
    p.add_argument("--tid", type=int, help="the thread (default: the main thread)")
    p.add_argument("--function", metavar="SYMBOL", help="record from this function (with --record)")
    p.add_argument("--record", choices=LABELS, help="record one instruction stream now, labelled normal or spinning")
    p.add_argument("--next-call", action="store_true",
                   help="record from the function's next call (e.g. the normal run after the spinning one)")
    p.add_argument("--max-steps", type=int, default=1500, help="instructions to record (default 1500)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="how long to wait for the function to be called (default 30)")
    p.add_argument("--normal", metavar="FILE", help="an lldb-trace result of the normal run")
    p.add_argument("--spinning", metavar="FILE", help="an lldb-trace result of the spinning run")
    p.add_argument("--buffer", metavar="FILE", help="ring buffer the recordings belong to (default: the active one)")
    p.add_argument("--limit", type=int, default=5, help="divergences to report (default 5)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _label_path(buffer, pid, tid, label):
    return os.path.join(gen.results_dir(buffer), f"{int(pid)}-{int(tid)}.{label}.json")


def _record(args, buffer):
    if args.pid is None:
        raise ArgusError("--record needs --pid")
    tid = args.tid or args.pid
    if not os.path.exists(f"/proc/{args.pid}/task/{tid}"):
        raise ArgusError(f"no such process {args.pid}" if not os.path.exists(f"/proc/{args.pid}")
                         else f"process {args.pid} has no thread {tid}")
    if args.max_steps <= 0:
        raise ArgusError("--max-steps must be positive")
    result = _label_path(buffer, args.pid, tid, args.record)
    if args.next_call and not args.function:
        raise ArgusError("--next-call needs --function")
    params = {"pid": args.pid, "tid": tid, "function": args.function, "next_call": args.next_call,
              "image": None, "app_modules": [],
              "vertex": None, "max_steps": args.max_steps, "timeout_s": args.timeout, "result": result}
    script = os.path.join(gen.results_dir(buffer), f"flags_{args.pid}_{tid}_{args.record}.py")
    dir_fd, name = script_dir(gen, buffer, script)
    try:
        safe_files.write_file(dir_fd, name, gen.generate(params))
        line, rc = run_script(dir_fd, name, params)
    finally:
        os.close(dir_fd)
    print(safe_lines(f"{args.record}: {line}"))
    return rc


def _load(path, label, ours):
    """A trace the user named is read as given (it is data, never run); one
    of ours (in <buffer>.lldb/) only through its verified directory."""
    try:
        if ours:
            return read_result(path)
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise ArgusError(f"cannot read the {label} trace {path}: {e.strerror}"
                         + (f" (record it: argus flags --record {label} ...)" if e.errno == 2 else "")) from None
    except ValueError:
        raise ArgusError(f"the {label} trace {path} is not JSON") from None


def run(args):
    # local for start-up time: the debugger layer loads pyelftools / capstone (~80 ms)
    from argus.debugger import DebuggerError
    from argus.debugger import divergence, value_flags

    buffer = resolve_buffer(args.buffer)
    if args.record:
        return _record(args, buffer)
    paths = {"normal": args.normal, "spinning": args.spinning}
    ours = {label: not paths[label] for label in LABELS}
    for label in LABELS:
        if not paths[label]:
            if args.pid is None:
                raise ArgusError(f"give --{label} FILE, or --pid to use the recordings of --record")
            paths[label] = _label_path(buffer, args.pid, args.tid or args.pid, label)
    docs = {label: _load(paths[label], label, ours[label]) for label in LABELS}
    pid = args.pid or docs["spinning"].get("pid")
    resolve = divergence.live_resolver(pid) if isinstance(pid, int) and os.path.exists(f"/proc/{pid}") else None
    try:
        flags = value_flags.find(docs["normal"], docs["spinning"], pid=pid, resolve=resolve, limit=args.limit)
        divs = divergence.find(docs["normal"], docs["spinning"], pid=pid, resolve=resolve, limit=args.limit)
    except DebuggerError as e:
        raise ArgusError(str(e)) from None
    if args.json:
        print(json.dumps({"pid": pid, "normal": paths["normal"], "spinning": paths["spinning"],
                          "flags": [f.to_dict() for f in flags],
                          "divergences": [d.to_dict() for d in divs]}, indent=1))
        return 0
    if not flags and not divs:
        print("no divergence: the two streams take the same branches and read the same values "
              "(record a longer normal run?)")
        return 0
    for line in _flag_lines(flags) if flags else ["no address was read with different values in the two streams"]:
        print(safe_lines(line))      # symbol names come from the traced binary
    if not divs:
        print("no branch both streams ran went a different way")
    for line in _divergence_lines(divs):
        print(safe_lines(line))
    return 0


def _sites(tests):
    return ", ".join(f"{asm} at 0x{pc:x}" for pc, asm in sorted(tests.items())) or "no branch"


def _flag_lines(flags):
    yield "read with different values (spinning vs normal):"
    for n, f in enumerate(flags, 1):
        what = f.symbol or f"0x{f.addr:x}"
        how = "the same value every time" if len(f.spinning_values) == 1 else "changing values"
        every = f", every iteration of {f.iterations}" if f.every_iteration else f" in {f.iterations} iterations"
        yield (f"{n}. {what} ({f.size} bytes){' [stack]' if f.is_stack else ''}: spinning read "
               f"{f.spinning_values[:5]} {f.spinning_reads} times ({how}{every}), normal read "
               f"{f.normal_values[:5]}{' (consistently different)' if f.consistent else ''}")
        split = " (different branch sites)" if f.split_sites else ""
        yield (f"   tested by {_sites(f.tested_by.get('spinning') or {})} when spinning, "
               f"{_sites(f.tested_by.get('normal') or {})} when normal{split}")
        yield f"       {f.watch}"


def _divergence_lines(divs):
    if divs:
        yield "control flow diverges:"
    for n, d in enumerate(divs, 1):
        yield (f"{n}. diverges at 0x{d.pc:x} {d.function or '?'}: {d.asm}")
        yield (f"   normal went to {', '.join(f'0x{x:x}' for x in d.normal_next)}; "
               f"spinning to {', '.join(f'0x{x:x}' for x in d.spinning_next)}")
        if not d.operands:
            yield "   no memory read in the instructions before it"
        for o in d.operands:
            what = o.symbol or f"0x{o.addr:x}"
            vals = f"normal saw {o.normal_values or '?'}, spinning saw {o.spinning_values or '?'}"
            yield (f"   - {what} ({o.size} bytes) read {o.distance} instructions before by {o.asm!s} "
                   f"in {o.function or '?'}; {vals}{' (differs)' if o.differs else ''}"
                   f"{' [stack]' if o.is_stack else ''}")
            yield f"       {o.watch}"
