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
Rules apply in every mode, --auto included (--no-rules: none); the report
lists those that fired (rules_fired).

Windowed load (--window SECONDS, default 10; 0 loads the whole buffer): a full
default buffer holds tens of millions of events, and decoding and building
all of them takes a minute, while the hang to explain is nearly always
recent.  Both commands first decode only the last W seconds (around --at:
[at - W, at + W]).  argus_decode_file_window widens only the records of the
chunks overlapping the window; of the other chunks it keeps just the state
records from before the window (process snapshot, thread names, fd
identities, mappings), which tracefile.window_rows stamps with the window's
start.  W doubles until the answer does not depend on what lies outside the
window: a hang is found, it does not start at the window's first timestamp
(nor is it ongoing at the window's end when --at cuts the window before the
buffer's end), and a baseline exists for it; `hangs`: the same for every hang
listed.  A window reaching back to the buffer's start is the whole buffer;
with --pid, one reaching back to the fork that created the process is the
last (the hang cannot lie before it).  Each load is first checked against
the available memory (cli/memcheck.py): one line rather than the OOM killer.
Without --window, a buffer of at most WHOLE_BUFFER_EVENTS events is loaded
whole at once (cheap: about as long as a first window of a busy buffer).
`hangs` says on stderr which window it searched when that is not the whole
buffer, and how to widen it.  Times printed are seconds since the buffer's
start, with the wall clock (report.trace_clock: the one time origin).
"""
import gc
import itertools
import os
import sys

from argus.cli.common import ArgusError, resolve_buffer
from argus.cli.memcheck import check_load
from argus.cli.progress import Progress, fmt_count
from argus.cli.textsafe import safe_lines
from argus.cli.tracefile import load_trace, warn_dropped, window_rows

DEFAULT_WINDOW_S = 10.0   # ~7M events of a busy machine: a first answer in seconds
# Decoding + building runs at ~1-3M events/s on one core: a buffer of this many
# events is read whole in about the time of a first window, so nothing is
# left unsearched (the count is the chunk headers' records_present: no decoding).
WHOLE_BUFFER_EVENTS = 2_000_000


def _add_common(p, pid_help):
    p.add_argument("--pid", type=int, help=pid_help)
    p.add_argument("--tid", type=int, help="the hung thread (default: the main thread)")
    p.add_argument("--buffer", metavar="FILE", help="ring buffer file (default: the active one)")
    p.add_argument("--threshold", type=float, default=2.0, metavar="SECONDS",
                   help="a hang is a thread out of its event loop at least this long (default 2)")
    p.add_argument("--json", action="store_true", help="print JSON (docs/diagnosis-json.md)")
    p.add_argument("--window", type=float, default=None, metavar="SECONDS",
                   help="load the last SECONDS of the buffer first (around --at when given) and double it "
                        f"until the hang is inside; 0 loads everything (default {DEFAULT_WINDOW_S:g}; the "
                        f"whole buffer when it holds at most {WHOLE_BUFFER_EVENTS:,} events)")


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
    p.add_argument("--snapshot", metavar="ID",
                   help="diagnose a hang the flight recorder kept (argus hangs --recorded lists them)")
    p.add_argument("--no-rules", action="store_true",
                   help="ignore the rules of earlier sessions (they apply in every mode otherwise; "
                        "argus rules list shows them)")
    p.set_defaults(func=run_debug)

    p = sub.add_parser("hangs", help="list hangs: of one process, or the longest of every process's main thread")
    _add_common(p, "the process (default: every process's main thread)")
    p.add_argument("--top", type=int, default=20, metavar="N",
                   help="without --pid: the N longest hangs (default 20)")
    p.add_argument("--all", action="store_true",
                   help="without --pid: every main thread, not only those with an event loop (poll/epoll waits)")
    p.add_argument("--recorded", action="store_true",
                   help="list the hangs the flight recorder kept snapshots of (docs/flight-recorder.md)")
    p.set_defaults(func=run_hangs)


class _Widen(Exception):
    """The answer found in a window may depend on what lies before it."""


def _windows(path, window_s, at_s=None, at_ns=None, birth=lambda: None):
    """(since_ns, until_ns, origin_ns, last) to load, smallest first; (None,
    None, origin, True) is the whole buffer.  origin: the buffer's first
    timestamp; the windows end at the buffer's end, or are centred on at_s
    seconds after the origin (at_ns: an absolute ts).  birth(): the ts before
    which the answer cannot lie (the process's creation) or None, asked once
    the first window did not do; a window reaching back to it is the last,
    so a young process never costs a whole-buffer load."""
    from argus.tracer import reader

    if window_s is not None and window_s < 0:
        raise ArgusError("--window must be >= 0")
    try:
        st = reader.buffer_stats(path)
    except reader.TraceError as e:
        raise ArgusError(str(e))
    if window_s is None:
        window_s = 0 if st["records_present"] <= WHOLE_BUFFER_EVENTS else DEFAULT_WINDOW_S
    lo, hi = int(st["first_ts"]), int(st["last_ts"])
    width = int(window_s * 1e9)
    center = at_ns if at_s is None else lo + int(at_s * 1e9)
    floor = None
    for n in itertools.count():
        if width <= 0:
            break
        since = (hi if center is None else center) - width
        until = None if center is None else center + width
        floor = birth() if n == 1 else floor
        if floor is not None and until is None and lo < floor and since <= floor:
            yield floor, None, lo, True
            return
        if since <= lo and (until is None or until >= hi):
            break
        yield max(since, 0), until, lo, False
        width *= 2
    yield None, None, lo, True


def _process_birth(path, pid):
    """The ts of the fork that created process pid (its first thread: child
    tid = child pid), or None: a validation pass keeping only FORK rows."""
    from argus.tracer import reader, schema

    if pid is None:
        return None
    try:
        forks = reader.decode_file(path, strict=False, types=(schema.FORK,), rows_hint=4096).rows
    except (reader.TraceError, MemoryError):
        return None
    born = forks["ts_ns"][(forks["peer_pid"] == pid) & (forks["peer_tid"] == pid)]
    return int(born.min()) if len(born) else None


def _graph(args, buffer=None, accept=None, at_ns=None):
    """(trace, g, accepted): the smallest window (see the module doc) whose
    graph accept(g, window_start, cut_end) takes (window_start None: the whole
    buffer; cut_end: the window ends before the buffer does); it raises _Widen
    for a bigger window, or ArgusError, which only the whole buffer reports."""
    from argus.graphbuild import build_graph
    from argus.graphbuild.builder import attach_side_arrays

    if args.threshold <= 0:
        raise ArgusError("--threshold must be positive")
    path = buffer or resolve_buffer(args.buffer)
    if not os.path.exists(path):
        load_trace(path, names=False)        # its one-line error
    at_s = None if at_ns is not None else getattr(args, "at", None)
    pid = getattr(args, "pid", None)
    windows = _windows(path, args.window, at_s, at_ns, birth=lambda: _process_birth(path, pid))
    with Progress() as progress:
        for n, (since, until, origin, last) in enumerate(windows):
            whole = since is None
            check_load(path, since, until, widening=n > 0)      # one line instead of the OOM killer
            progress.stage(f"decoding {path}" + ("" if whole else " (a window of it)"))
            trace, _ = load_trace(path, since, until, names=False, warn=False)
            progress.finished("decoded", trace.nrows)
            if trace.nrows == 0 or (not whole and trace.first_window_ts == 0):
                if last:
                    warn_dropped(trace)          # every chunk damaged says why
                    raise ArgusError(f"{trace.path} holds no events")
                continue
            rows = window_rows(trace)
            start = trace.first_ts if whole else int(trace.first_window_ts)
            progress.stage(f"building the event graph of {fmt_count(trace.nrows)} events")
            g = build_graph(rows, trace_start=start, trace_end=trace.last_ts)
            progress.finished("built a graph of", trace.nrows)
            attach_side_arrays(g, trace)        # the user stacks (REPL `stack`, questions, advice)
            g.time_origin = origin
            g.wall_offset_ns = trace.wall_offset_ns
            _note_dropped(g, trace)
            g.loaded_window = None if whole else (start, trace.last_ts)
            try:
                accepted = None if accept is None else accept(g, None if last else start,
                                                              not last and until is not None)
            except (_Widen, ArgusError):
                if last:
                    warn_dropped(trace)
                    raise
            else:
                warn_dropped(trace)      # of the window kept: one warning, not one per window
                return trace, g, accepted
            del trace, g, rows
            gc.collect()            # the graph's cycles hold the rows: free them before the next window
    raise AssertionError("_windows ends with the whole buffer")


def _starts_before(g, hang, window_start):
    """The hang may have begun before the window: it starts at the window's
    first timestamp, or its thread was already running / blocked then."""
    from argus.graphbuild import graph as G
    return hang.start_ns <= window_start or \
        int(g.seg.start_kind[hang.vertex]) in (G.START_TRACE, G.START_PRE_TRACE)


def _lacks_baseline(g, hang, threshold_ns):
    """Algorithm 1 would find no baseline for the hang in this graph (one may
    lie before the window)."""
    from argus.diagnose import baseline as BL, blocktype as B
    if hang.block_type == B.LONG_WAIT:
        return not BL.find_wait_baselines(g, hang.vertex, threshold_ns, hang_start=hang.start_ns)
    if hang.block_type == B.REPEATED_YIELD:
        addrs = B.flag_reads(g, hang.utid, hang.start_ns, hang.end_ns)
        return bool(addrs) and not BL.find_flag_baselines(g, hang.utid, addrs, hang.start_ns, hang.end_ns,
                                                          threshold_ns)
    return False


def _hang_in_window(pid, tid, at_s, at_ns, threshold_ns, ranked=None):
    """accept() for _graph: the hang to diagnose, or _Widen.  ranked (without
    pid): a list that receives the candidates.rank of the accepted graph."""
    def accept(g, window_start, cut_end):
        at = at_ns if at_s is None else g.time_origin + int(at_s * 1e9)
        if ranked is not None:
            ranked.clear()
        hang = _find_hang(g, pid, tid, at, threshold_ns, ranked)
        if window_start is not None and (_starts_before(g, hang, window_start) or (cut_end and hang.ongoing) or
                                         _lacks_baseline(g, hang, threshold_ns)):
            raise _Widen()
        return hang
    return accept


def _note_dropped(g, trace):
    """What the decode dropped, for the reports' "trace" object (JSON too)."""
    g.torn_chunks, g.bad_records = int(trace.torn_chunks), int(trace.bad_records)


def _notes(trace):
    from argus.cli.tracefile import dropped_summary

    dropped = dropped_summary(trace)
    notes = [dropped] if dropped else []
    if trace.records_overwritten:
        notes.append(f"the oldest {trace.records_overwritten:,} records were overwritten (buffer wrapped)")
    if trace.records_lost:
        notes.append(f"{trace.records_lost:,} records were lost before reaching the buffer")
    return notes


def _store(create=True):
    """The session store; with create=False None when there is none yet
    (--auto reads rules only: no store, no rules, nothing created)."""
    from argus.cli.session import Store, SessionError, default_path
    if not create and not os.path.exists(default_path()):
        return None
    try:
        return Store()
    except SessionError as e:
        raise ArgusError(str(e))


def _find_hang(g, pid, tid, at, threshold_ns, ranked=None):
    from argus.diagnose import DiagnoseError, find_hang, most_recent_hang
    try:
        if pid is None:
            if tid is not None:
                raise ArgusError("--tid needs --pid")
            return most_recent_hang(g, at=at, threshold_ns=threshold_ns, ranked=ranked)
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
            if args.answers or args.auto or args.snapshot is not None:
                raise ArgusError("--resume replays the session's own answers: drop --answers / --auto / --snapshot")
            store = _store()
            s = store.get(args.resume or None)
            sid = s["id"]
            presets = store.answers(sid)
            args.threshold = s["threshold_ns"] / 1e9
            at = s["hang_start_ns"]
            trace, g, hang = _graph(args, s["buffer"], _hang_in_window(s["pid"], s["tid"], None, at,
                                                                        s["threshold_ns"]), at_ns=at)
        elif args.snapshot is not None:
            if args.answers:
                presets = read_answers_file(args.answers)
            trace, g, hang = _snapshot_graph(args)
            store = _store(create=not args.auto)
            if not args.auto:
                sid = store.create(trace.path, hang, int(args.threshold * 1e9))
        else:
            if args.pid is None and args.tid is not None:
                raise ArgusError("--tid needs --pid")
            if args.answers:
                presets = read_answers_file(args.answers)
            threshold_ns = int(args.threshold * 1e9)
            ranked = [] if args.pid is None else None
            trace, g, hang = _graph(args, None, _hang_in_window(args.pid, args.tid, args.at, None, threshold_ns,
                                                                ranked))
            if ranked:
                _say_choice(g, ranked)
            store = _store(create=not args.auto)   # its rules apply in every mode; --auto saves no session
            if not args.auto:
                sid = store.create(trace.path, hang, threshold_ns)
        ctx = ReplContext(g, hang, int(args.threshold * 1e9), store, sid, trace.path, notes=_notes(trace))
        ctx.presets = presets
        ctx.no_rules = args.no_rules
        ctx.show_rules = interactive
        if interactive:
            from argus.cli.repl import app
            _header(ctx)
            try:
                return app.run(ctx, store.history_path)
            finally:
                store.finish(sid, ctx.report, status="closed")
        ctx.run_diagnosis(auto=args.auto, ask=None)
        if sid is not None:
            store.finish(sid, ctx.report, status="closed")
        d = ctx.diagnosis
        sys.stdout.write((render_json(d) if args.json else safe_lines(render_text(d))).rstrip("\n") + "\n")
        return 0
    except SessionError as e:
        raise ArgusError(str(e))
    finally:
        if store is not None:
            store.close()


def _say_window(g, trace):
    """`hangs` searched only part of the buffer: which part, and how to widen."""
    from argus.diagnose.report import fmt_trace_time
    from argus.tracer import reader
    a, b = g.loaded_window
    try:
        st = reader.buffer_stats(trace.path)
        whole = f"{(int(st['last_ts']) - int(st['first_ts'])) / 1e9:.1f} s, {st['records_present']:,} events"
    except reader.TraceError:
        whole = "more"
    print(f"argus: searched the window {fmt_trace_time(g, a)} .. {fmt_trace_time(g, b)} of the buffer "
          f"(trace clock {a / 1e9:.3f} .. {b / 1e9:.3f} s); it holds {whole}: --window 0 searches all of it, "
          f"--window SECONDS a wider end", file=sys.stderr)


def _say_choice(g, ranked):
    """Without --pid: which hang was picked, and the top three on stderr when
    the choice is not clear (diagnose/candidates.py)."""
    from argus.diagnose import candidates as C
    from argus.diagnose.report import fmt_dur, fmt_trace_time
    if not C.ambiguous(ranked):
        return
    top = C.top_threads(ranked)
    lines = [f"argus: {len(top)} likely hangs; explaining the first (pass --pid PID for another):"]
    for i, c in enumerate(top, 1):
        h = c.hang
        lines.append(f"  {i}. {g.process_name(h.pid) or g.comm(h.utid)}/{h.pid}: {h.block_type} for "
                     f"{fmt_dur(h.dur_ns)}{' (ongoing)' if h.ongoing else ''} at {fmt_trace_time(g, h.start_ns)}"
                     f" -- {c.why}")
    print("\n".join(lines), file=sys.stderr)


def _header(ctx):
    from argus.diagnose.report import fmt_dur, evidence_text, fmt_trace_time
    h, g = ctx.hang, ctx.g
    ev = h.classification.evidence
    ctx.out(f"Hang in {g.comm(h.utid)}/{h.tid} (process {g.process_name(h.pid)}/{h.pid}): {h.block_type} "
            f"for {fmt_dur(h.dur_ns)} from {fmt_trace_time(g, h.start_ns)}"
            f"{' (ongoing at trace end)' if h.ongoing else ''}; spinning vertex {h.vertex}")
    ctx.out(f"  evidence: {evidence_text(ev)}")
    ctx.out(f"  session {ctx.sid} in {ctx.store.path} (argus debug --resume {ctx.sid} continues it)")
    rules = ctx.rules()
    if rules:
        ctx.out(f"  {len(rules)} rule(s) from earlier sessions apply (argus rules list; --no-rules ignores them)")


def _snapshot_graph(args):
    """`debug --snapshot ID`: the snapshot's trace, and in it the hang the
    detector recorded (its process and thread, at the middle of the hang),
    unless --pid / --tid / --at say otherwise."""
    from argus.cli import snapshots

    if args.buffer or args.resume is not None:
        raise ArgusError("--snapshot reads the snapshot's own trace: drop --buffer / --resume")
    path, meta = snapshots.resolve(args.snapshot)
    pid, tid = args.pid, args.tid
    at_ns = None
    if pid is None:
        pid = meta["pid"]
        tid = meta["tid"] if meta["tid"] != meta["pid"] else None
        if args.at is None:
            at_ns = (meta["start_ns"] + meta["end_ns"]) // 2
    elif tid is not None and pid is None:
        raise ArgusError("--tid needs --pid")
    args.buffer = path
    threshold_ns = int(args.threshold * 1e9)
    return _graph(args, path, _hang_in_window(pid, tid, args.at, at_ns, threshold_ns), at_ns=at_ns)


def run_hangs(args):
    import json

    if args.recorded:
        from argus.cli import snapshots
        if args.pid is not None or args.tid is not None or args.buffer:
            raise ArgusError("--recorded lists the flight recorder's snapshots: drop --pid / --tid / --buffer")
        snaps = snapshots.list_snapshots()
        if args.json:
            print(json.dumps(snapshots.to_json(snaps)))
        else:
            sys.stdout.write(safe_lines(snapshots.render_text(snaps)))
        return 0

    from argus.diagnose import DiagnoseError, hangs_to_json, list_hangs, main_thread_hangs, render_hangs_text

    if args.top <= 0:
        raise ArgusError("--top must be positive")
    if args.pid is None and args.tid is not None:
        raise ArgusError("--tid needs --pid")

    def accept(g, window_start, cut_end):
        try:
            if args.pid is None:
                hangs = main_thread_hangs(g, threshold_ns=int(args.threshold * 1e9), event_loops_only=not args.all)
                hangs = sorted(hangs, key=lambda h: (-h.dur_ns, h.start_ns))[:args.top]
            else:
                hangs = list_hangs(g, args.pid, tid=args.tid, threshold_ns=int(args.threshold * 1e9))
        except DiagnoseError as e:
            raise ArgusError(str(e))
        if window_start is not None and (not hangs or any(_starts_before(g, h, window_start) or (cut_end and h.ongoing)
                                                          for h in hangs)):
            raise _Widen()
        return hangs

    trace, g, hangs = _graph(args, None, accept)
    if g.loaded_window is not None:
        _say_window(g, trace)
    ranks = None
    if args.pid is None:
        from argus.diagnose import candidates as C
        ranks = {id(c.hang): c for c in C.rank(g, hangs)}
    if args.json:
        print(json.dumps(hangs_to_json(g, hangs, ranks)))
    else:
        sys.stdout.write(safe_lines(render_hangs_text(g, hangs, with_process=args.pid is None, ranks=ranks))
                         .rstrip("\n") + "\n")
    return 0
