"""`argus debug` and `argus hangs`: find the hang in the buffer and explain it.

debug decodes the buffer, builds the event graph, finds the spinning vertex
(with --pid: that process's main thread's hang, the one in progress at the
end of the buffer, else the longest, or the one at --at; without --pid: the
process whose main thread hung most recently), classifies it and runs
Algorithm 1.  Who answers Algorithm 1's questions:
  a TTY, no --auto / --json / --answers   the user, in the REPL (cli/repl/)
  --answers FILE                          the recorded answers, then the
                                          automatic heuristic
  --resume [ID]                           the session's recorded answers,
                                          then the user (REPL) or heuristic
  --auto, --json, or no TTY               the automatic heuristic
Everything but --auto runs in a session saved in SQLite (cli/session.py):
answers, marks and the report, and the rules that later sessions apply.
"""
import sys

from argus.cli.common import ArgusError, resolve_buffer
from argus.cli.tracefile import load_trace


def _add_common(p, pid_help):
    p.add_argument("--pid", type=int, help=pid_help)
    p.add_argument("--tid", type=int, help="the hung thread (default: the main thread)")
    p.add_argument("--buffer", metavar="FILE", help="ring buffer file (default: the active one)")
    p.add_argument("--threshold", type=float, default=2.0, metavar="SECONDS",
                   help="a hang is a thread out of its event loop at least this long (default 2)")
    p.add_argument("--json", action="store_true", help="print JSON (docs/diagnosis-json.md)")


def register(sub):
    p = sub.add_parser("debug", help="diagnose a hang: the spinning vertex, the causal chain, root causes "
                                     "(interactive on a terminal; docs/repl.md)")
    _add_common(p, "the process that hung (default: the one whose main thread hung most recently)")
    p.add_argument("--at", type=float, metavar="SECONDS",
                   help="the hang in progress at this time (seconds since the start of the trace)")
    p.add_argument("--auto", action="store_true",
                   help="answer every question with the automatic heuristic (most recent edge / baseline)")
    p.add_argument("--answers", metavar="FILE",
                   help="replay the answers recorded in FILE (REPL: export --answers FILE)")
    p.add_argument("--resume", nargs="?", type=int, const=0, metavar="ID",
                   help="continue a saved session (default: the most recent one)")
    p.set_defaults(func=run_debug)

    p = sub.add_parser("hangs", help="list hangs: of one process, or the longest of every process's main thread")
    _add_common(p, "the process (default: every process's main thread)")
    p.add_argument("--top", type=int, default=20, metavar="N",
                   help="without --pid: the N longest hangs (default 20)")
    p.add_argument("--all", action="store_true",
                   help="without --pid: every main thread, not only those with an event loop (poll/epoll waits)")
    p.set_defaults(func=run_hangs)


def _graph(args, buffer=None):
    from argus.graphbuild import build_graph

    if args.threshold <= 0:
        raise ArgusError("--threshold must be positive")
    trace, _ = load_trace(buffer or resolve_buffer(args.buffer))
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


def _store():
    from argus.cli.session import Store, SessionError
    try:
        return Store()
    except SessionError as e:
        raise ArgusError(str(e))


def _find_hang(g, pid, tid, at, threshold_ns):
    from argus.diagnose import DiagnoseError, find_hang, most_recent_hang
    try:
        if pid is None:
            if tid is not None:
                raise ArgusError("--tid needs --pid")
            return most_recent_hang(g, at=at, threshold_ns=threshold_ns)
        return find_hang(g, pid, tid=tid, at=at, threshold_ns=threshold_ns)
    except DiagnoseError as e:
        raise ArgusError(str(e))


def run_debug(args):
    from argus.cli.session import SessionError, read_answers_file
    from argus.cli.repl.context import ReplContext
    from argus.diagnose import render_json, render_text

    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not (args.auto or args.json or args.answers)
    store, sid, presets = None, None, []
    try:
        if args.resume is not None:
            if args.answers or args.auto:
                raise ArgusError("--resume replays the session's own answers: drop --answers / --auto")
            store = _store()
            s = store.get(args.resume or None)
            sid = s["id"]
            presets = store.answers(sid)
            args.threshold = s["threshold_ns"] / 1e9
            trace, g = _graph(args, s["buffer"])
            hang = _find_hang(g, s["pid"], s["tid"], s["hang_start_ns"], s["threshold_ns"])
        else:
            if args.answers:
                presets = read_answers_file(args.answers)
            trace, g = _graph(args)
            at = None if args.at is None else int(trace.first_ts + args.at * 1e9)
            threshold_ns = int(args.threshold * 1e9)
            hang = _find_hang(g, args.pid, args.tid, at, threshold_ns)
            if not args.auto:
                store = _store()
                sid = store.create(trace.path, hang, threshold_ns)
        ctx = ReplContext(g, hang, int(args.threshold * 1e9), store, sid, trace.path, notes=_notes(trace))
        ctx.presets = presets
        if interactive:
            from argus.cli.repl import app
            _header(ctx)
            try:
                return app.run(ctx, store.history_path)
            finally:
                store.finish(sid, ctx.report, status="closed")
        ctx.run_diagnosis(auto=args.auto, ask=None)
        if store is not None:
            store.finish(sid, ctx.report, status="closed")
        d = ctx.diagnosis
        sys.stdout.write((render_json(d) if args.json else render_text(d)).rstrip("\n") + "\n")
        return 0
    except SessionError as e:
        raise ArgusError(str(e))
    finally:
        if store is not None:
            store.close()


def _header(ctx):
    from argus.diagnose.report import fmt_dur, evidence_text
    h, g = ctx.hang, ctx.g
    ev = h.classification.evidence
    ctx.out(f"Hang in {g.comm(h.utid)}/{h.tid} (process {g.process_name(h.pid)}/{h.pid}): {h.block_type} "
            f"for {fmt_dur(h.dur_ns)}{' (ongoing at trace end)' if h.ongoing else ''}; spinning vertex {h.vertex}")
    ctx.out(f"  evidence: {evidence_text(ev)}")
    ctx.out(f"  session {ctx.sid} in {ctx.store.path} (argus debug --resume {ctx.sid} continues it)")
    rules = ctx.rules()
    if rules:
        ctx.out(f"  {len(rules)} rule(s) from earlier sessions apply")


def run_hangs(args):
    import json

    from argus.diagnose import DiagnoseError, hangs_to_json, list_hangs, main_thread_hangs, render_hangs_text

    if args.top <= 0:
        raise ArgusError("--top must be positive")
    trace, g = _graph(args)
    try:
        if args.pid is None:
            if args.tid is not None:
                raise ArgusError("--tid needs --pid")
            hangs = main_thread_hangs(g, threshold_ns=int(args.threshold * 1e9), event_loops_only=not args.all)
            hangs = sorted(hangs, key=lambda h: (-h.dur_ns, h.start_ns))[:args.top]
        else:
            hangs = list_hangs(g, args.pid, tid=args.tid, threshold_ns=int(args.threshold * 1e9))
    except DiagnoseError as e:
        raise ArgusError(str(e))
    if args.json:
        print(json.dumps(hangs_to_json(g, hangs)))
    else:
        sys.stdout.write(render_hangs_text(g, hangs, with_process=args.pid is None).rstrip("\n") + "\n")
    return 0
