"""`argus debug` and `argus hangs`: find the hang in the buffer and explain it.

debug decodes the buffer, builds the event graph, finds the spinning vertex
(the main thread's hang: the one in progress at the end of the buffer, else
the longest, or the one at --at), classifies it and runs Algorithm 1.  With
--auto every choice is made by the paper's heuristic (most recent edge, most
recent baseline); that is also the default until the interactive REPL lands.
"""
import sys

from argus.cli.common import ArgusError, resolve_buffer
from argus.cli.tracefile import load_trace


def _add_common(p):
    p.add_argument("--pid", type=int, required=True, help="the process that hung")
    p.add_argument("--tid", type=int, help="the hung thread (default: the main thread)")
    p.add_argument("--buffer", metavar="FILE", help="ring buffer file (default: the active one)")
    p.add_argument("--threshold", type=float, default=2.0, metavar="SECONDS",
                   help="a hang is a thread out of its event loop at least this long (default 2)")
    p.add_argument("--json", action="store_true", help="print JSON (docs/diagnosis-json.md)")


def register(sub):
    p = sub.add_parser("debug", help="diagnose a hang: the spinning vertex, the causal chain, root causes")
    _add_common(p)
    p.add_argument("--at", type=float, metavar="SECONDS",
                   help="the hang in progress at this time (seconds since the start of the trace)")
    p.add_argument("--auto", action="store_true",
                   help="answer every question with the automatic heuristic (most recent edge / baseline)")
    p.set_defaults(func=run_debug)

    p = sub.add_parser("hangs", help="list the hangs of a process in the buffer")
    _add_common(p)
    p.set_defaults(func=run_hangs)


def _graph(args):
    from argus.graphbuild import build_graph

    if args.threshold <= 0:
        raise ArgusError("--threshold must be positive")
    trace, _ = load_trace(resolve_buffer(args.buffer))
    if trace.nrows == 0:
        raise ArgusError(f"{trace.path} holds no events")
    g = build_graph(trace.rows, trace_start=trace.first_ts, trace_end=trace.last_ts)
    return trace, g


def _notes(trace):
    notes = []
    if trace.records_overwritten:
        notes.append(f"the oldest {trace.records_overwritten:,} records were overwritten (buffer wrapped)")
    if trace.records_lost:
        notes.append(f"{trace.records_lost:,} records were lost before reaching the buffer")
    return notes


def run_debug(args):
    from argus.diagnose import DiagnoseError, diagnose, render_json, render_text

    trace, g = _graph(args)
    at = None if args.at is None else int(trace.first_ts + args.at * 1e9)
    try:
        d = diagnose(g, args.pid, tid=args.tid, at=at, threshold_ns=int(args.threshold * 1e9))
    except DiagnoseError as e:
        raise ArgusError(str(e))
    d.notes.extend(_notes(trace))
    sys.stdout.write((render_json(d) if args.json else render_text(d)).rstrip("\n") + "\n")
    return 0


def run_hangs(args):
    import json

    from argus.diagnose import DiagnoseError, hangs_to_json, list_hangs, render_hangs_text

    trace, g = _graph(args)
    try:
        hangs = list_hangs(g, args.pid, tid=args.tid, threshold_ns=int(args.threshold * 1e9))
    except DiagnoseError as e:
        raise ArgusError(str(e))
    if args.json:
        print(json.dumps(hangs_to_json(g, hangs)))
    else:
        sys.stdout.write(render_hangs_text(g, hangs).rstrip("\n") + "\n")
    return 0
