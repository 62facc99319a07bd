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

Which part of the buffer is loaded and which hang is explained is
diagnose/windowed.py's search_trace (--window: the last W seconds first,
around --at, doubled until the answer does not depend on what lies outside);
this module loads each window it asks for: the memory check first
(cli/memcheck.py: one line rather than the OOM killer), the decode
(tracefile.window_rows stamps the state records from before the window with
its start), the graph build, progress and warnings.  `hangs` says on stderr
which window it searched when that is not the whole buffer, and how to widen
it.  Times printed are seconds since the buffer's start, with the wall clock
(report.trace_clock: the one time origin).
"""
import gc
import os
import sys

import numpy as np

from argus.cli.common import ArgusError, resolve_buffer
from argus.cli.memcheck import check_load
from argus.cli.progress import Progress, fmt_count
from argus.tracer.textsafe import safe_lines
from argus.cli.tracefile import load_trace, warn_dropped, window_rows

from argus.diagnose.windowed import DEFAULT_WINDOW_S, WHOLE_BUFFER_EVENTS
from argus.diagnose import DiagnoseError
from argus.diagnose.windowed import search_trace
from argus.graphbuild import build_graph
from argus.cli.tracefile import dropped_summary
from argus.diagnose import render_json, render_text
from argus.cli.repl.context import ReplContext
from argus.diagnose.windowed import hang_acceptor
from argus.diagnose.report import fmt_trace_time
from argus.tracer import reader
from argus.diagnose import candidates as C
from argus.diagnose.report import fmt_dur, fmt_trace_time
from argus.diagnose.report import fmt_dur, evidence_text, fmt_trace_time
from argus.cli import snapshots
from argus.diagnose import hangs_to_json, render_hangs_text
from argus.diagnose.windowed import hangs_acceptor
from argus.cli import index_answer
from argus.tracer import focus, stream
from argus.cli import multibuffer


def _add_common(p, pid_help, json=True):
    p.add_argument("--pid", type=multibuffer.pid_arg,
                   help=pid_help + "; HOST:PID with several --buffer files")
    p.add_argument("--tid", type=multibuffer.pid_arg, help="the hung thread (default: the main thread)")
    p.add_argument("--buffer", metavar="FILE", action="append",
                   help="ring buffer file (default: the active one); several: one graph of several hosts, "
                        "their clocks synchronised from the messages between them (docs/multi-host.md)")
    p.set_defaults(buffers=None)          # cli/multibuffer.py: several --buffer files
    p.add_argument("--threshold", type=float, default=2.0, metavar="SECONDS",
                   help="a hang is a thread out of its event loop at least this long (default 2)")
    if json:
        p.add_argument("--json", action="store_true", help="print JSON (docs/diagnosis-json.md)")
    p.add_argument("--window", type=float, default=None, metavar="SECONDS",
                   help="load the last SECONDS of the buffer first (around --at when given) and double it "
                        f"until the hang is inside; 0 loads everything (default {DEFAULT_WINDOW_S:g}; the "
                        f"whole buffer when it holds at most {WHOLE_BUFFER_EVENTS:,} events); without it, hangs and "
                        "debug without --pid answer from the buffer's ring index when argusd wrote one "
                        "(docs/ring-buffer.md); ignored with several --buffer files (each is decoded whole)")


def register(sub):
    p = sub.add_parser("debug", help="diagnose a hang: the spinning vertex, the causal chain, root causes "
                                     "(interactive on a terminal; docs/repl.md)")
    add_diagnosis_args(p)
    p.add_argument("--auto", action="store_true",
                   help="answer every question with the automatic heuristic (most recent edge / baseline)")
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


def add_diagnosis_args(p, json=True):
    """The options that pick a hang and answer its questions: `argus debug`'s,
    and those of the commands that render a diagnosis (export, report)."""
    _add_common(p, "the process that hung (default: the one whose main thread hung most recently)", json=json)
    p.add_argument("--at", type=float, metavar="SECONDS",
                   help="the hang in progress at this time (seconds since the start of the trace)")
    p.add_argument("--answers", metavar="FILE",
                   help="replay the answers recorded in FILE (REPL: export --answers FILE)")
    p.add_argument("--resume", nargs="?", type=int, const=0, metavar="ID",
                   help="continue a saved session (default: the most recent one)")
    p.add_argument("--snapshot", metavar="ID",
                   help="diagnose a hang the flight recorder kept (argus hangs --recorded lists them)")
    p.add_argument("--no-rules", action="store_true",
                   help="ignore the rules of earlier sessions (they apply in every mode otherwise; "
                        "argus rules list shows them)")


# a window of more events than this, around a hang the ring index named, is
# decoded focused on the processes near the hang's (tracer/focus.py): a busy
# machine's few seconds are millions of events, and gigabytes to build
FOCUS_MIN_EVENTS = 1_000_000
# rows a focused window keeps at most: rows plus their graph cost up to ~300
# bytes each at the peak (632 MiB for 1.9M on a busy 2 GiB buffer; one run
# at 1.5M peaked at 952 MiB), so this keeps `argus debug` well under 1 GB
# however long the hang (its neighbourhood's farthest processes go first;
# the report says so)
FOCUS_MAX_ROWS = 1_000_000
# hangs of the index tried, focused, before the graph's own ranking decides
INDEX_TRIES = 3
# around a hang the index named, windows widen (for a baseline) this far past
# the hang's own window at most: the whole of a busy buffer is a minute per try
INDEX_LOOKBACK_S = 10.0
# the graph's own ranking after the index's candidates were not confirmed
# decodes at most the last this many events (unfocused; built as above)
FALLBACK_MAX_EVENTS = 1_000_000


def _graph(args, accept, buffer=None, at_s=None, at_ns=None, pid=None, window_s=None, focus_pid=None,
           max_window_s=None):
    """(trace, g, accepted): diagnose.windowed.search_trace over the buffer,
    each window loaded here (module doc); a wider window decodes only what
    it adds (stream.GrowingWindow).  window_s: the first window's half-width
    instead of --window's (the index path: around the hang it named).
    focus_pid: a busy window is decoded focused on this process's
    neighbourhood (FOCUS_MIN_EVENTS).  max_window_s: the widest half-width
    searched (windowed.windows)."""

    if args.threshold <= 0:
        raise ArgusError("--threshold must be positive")
    path = buffer or resolve_buffer(args.buffer)
    if not os.path.exists(path):
        load_trace(path, names=False)        # its one-line error
    grow = stream.GrowingWindow(path, decode=lambda **kw: load_trace(path, names=False, warn=False, **kw)[0])

    def load(since, until, widening):
        whole = since is None
        events = _window_events(path, since, until) if focus_pid is not None else 0
        if events > FOCUS_MIN_EVENTS:
            progress.stage(f"decoding {path} (a window of {fmt_count(events)} events, focused on the processes "
                           f"near pid {focus_pid})")
            trace = focus.decode_focused(path, focus_pid, since, until, max_rows=FOCUS_MAX_ROWS,
                                         decode=lambda **kw: load_trace(path, names=False, warn=False, **kw)[0])
            progress.finished("kept", trace.nrows)
        else:
            check_load(path, since, until, widening=widening)      # one line instead of the OOM killer
            progress.stage(f"decoding {path}" + ("" if whole else " (a window of it)"))
            before = grow.decoded_rows
            trace = grow.load(since, until)
            progress.finished("decoded", grow.decoded_rows - before)
        if trace.nrows == 0 or (not whole and trace.first_window_ts == 0):
            return trace, None, None
        rows = window_rows(trace)
        start = trace.first_ts if whole else int(trace.first_window_ts)
        progress.stage(f"building the event graph of {fmt_count(trace.nrows)} events")
        g = build_graph(rows, trace_start=start, trace_end=trace.last_ts, side=trace)   # with the user stacks
        progress.finished("built a graph of", trace.nrows)
        return trace, g, start

    with Progress() as progress:
        try:
            return search_trace(path, load, accept, args.window if window_s is None else window_s, at_s, at_ns, pid,
                                report_dropped=warn_dropped, max_window_s=max_window_s)
        except DiagnoseError as e:
            raise ArgusError(str(e))


def _last_events_s(path, n):
    """Seconds back from the buffer's end that hold about n events (chunk
    headers only), or None when the whole buffer holds fewer or is unreadable."""
    try:
        table = stream.chunk_table(path)
    except (OSError, ValueError, reader.TraceError):
        return None
    if not len(table) or int(table["nrecords"].sum()) <= n:
        return None
    newest = np.argsort(table["last_ts"])[::-1]
    held = np.cumsum(table["nrecords"][newest].astype(np.int64))
    k = min(int(np.searchsorted(held, n, side="right")), len(newest) - 1)
    end = int(table["last_ts"].max())
    return max(0.001, (end - int(table["first_ts"][newest[max(k - 1, 0)]])) / 1e9)


def _window_events(path, since, until):
    """Events a decode of [since, until] widens (chunk headers only), 0 when unreadable."""
    try:
        return stream.records_in(stream.chunk_table(path), since or 0, (1 << 64) - 1 if until is None else until)
    except (OSError, ValueError, reader.TraceError):
        return 0


def _notes(trace):
    dropped = dropped_summary(trace)
    notes = [dropped] if dropped else []
    if trace.focus and trace.focus_note:
        notes.append(f"a busy window: only the {len(trace.focus)} processes nearest the hung one were decoded "
                     f"(tracer/focus.py): {trace.focus_note}; --pid PID --window SECONDS decodes everything")
    elif trace.focus:
        notes.append(f"a busy window: only the {len(trace.focus)} processes within {focus.MAX_HOPS} wakeups or forks "
                     "of the hung one were decoded (tracer/focus.py); --pid PID --window SECONDS decodes everything")
    if trace.records_overwritten:
        notes.append(f"the oldest {trace.records_overwritten:,} records were overwritten (buffer wrapped)")
    if trace.records_lost:
        notes.append(f"{trace.records_lost:,} records were lost before reaching the buffer")
    if trace.switches_unreported:
        notes.append(f"{trace.switches_unreported:,} context switches were never reported by the kernel "
                     "(holes in its reporting, not records the tracer lost)")
    return notes


def _store(create=True):
    """The session store; with create=False None when there is none yet
    (--auto reads rules only: no store, no rules, nothing created)."""
    # local for start-up time: sqlite3, only for the commands that keep answers
    from argus.cli.session import Store, SessionError, default_path
    if not create and not os.path.exists(default_path()):
        return None
    try:
        return Store()
    except SessionError as e:
        raise ArgusError(str(e))


def run_debug(args):
    # local for start-up time: sqlite3, only for the commands that keep answers
    from argus.cli.session import SessionError

    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not (args.auto or args.json or args.answers)
    try:
        ctx = open_context(args, interactive)
    except SessionError as e:
        raise ArgusError(str(e))
    store, sid = ctx.store, ctx.sid
    try:
        if interactive:
            # local for start-up time: the REPL loads prompt_toolkit and rich (~150 ms)
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


def open_context(args, interactive=False):
    """The ReplContext of the hang that args (add_diagnosis_args, plus auto)
    name, its diagnosis not yet run; ctx.store is the session store (None
    with --auto when there is none yet), which the caller closes.  `argus
    debug` runs it; export and report reuse it.  Raises SessionError."""
    # local for start-up time: sqlite3, only for the commands that keep answers
    from argus.cli.session import read_answers_doc

    store, sid, presets, preset_rules = None, None, [], []
    several = multibuffer.buffers(args)
    try:
        if several:
            if args.resume is not None or args.snapshot is not None:
                raise ArgusError("several --buffer files: drop --resume / --snapshot")
            if args.answers:
                presets, preset_rules = read_answers_doc(args.answers)
            threshold_ns = int(args.threshold * 1e9)
            if threshold_ns <= 0:
                raise ArgusError("--threshold must be positive")
            trace, g = multibuffer.load(several)
            pid, tid = multibuffer.ids(g, args)
            if pid is None and tid is not None:
                raise ArgusError("--tid needs --pid")
            ranked = [] if pid is None else None
            hang = multibuffer.accept(g, hang_acceptor(pid, tid, args.at, None, threshold_ns, ranked))
            if ranked:
                _say_choice(g, ranked)
            store = _store(create=not args.auto)
            if not args.auto:
                sid = store.create(trace.path, hang, threshold_ns)
        elif args.resume is not None:
            if args.answers or args.auto or args.snapshot is not None:
                raise ArgusError("--resume replays the session's own answers: drop --answers / --auto / --snapshot")
            store = _store()
            s = store.get(args.resume or None)
            sid = s["id"]
            presets = store.answers(sid)
            preset_rules = store.rules_made(sid)
            args.threshold = s["threshold_ns"] / 1e9
            at = s["hang_start_ns"]
            trace, g, hang = _graph(args, hang_acceptor(s["pid"], s["tid"], None, at, s["threshold_ns"]),
                                    s["buffer"], at_ns=at, pid=args.pid)
        elif args.snapshot is not None:
            if args.answers:
                presets, preset_rules = read_answers_doc(args.answers)
            trace, g, hang = _snapshot_graph(args)
            store = _store(create=not args.auto)
            if not args.auto:
                sid = store.create(trace.path, hang, int(args.threshold * 1e9))
        else:
            if args.pid is None and args.tid is not None:
                raise ArgusError("--tid needs --pid")
            if args.answers:
                presets, preset_rules = read_answers_doc(args.answers)
            threshold_ns = int(args.threshold * 1e9)
            picked = None
            if args.pid is None and args.at is None and args.window is None:
                if args.threshold <= 0:
                    raise ArgusError("--threshold must be positive")
                args.buffer = resolve_buffer(args.buffer)     # said once
                picked = index_answer.pick(args.buffer, threshold_ns)
            tried = []
            while picked is not None:
                # the index named the hang: decode only the window around it
                if tried:
                    gc.collect()     # the failed try's graph (cycles, held by its traceback) goes first
                h, half = picked
                at_ns = (h.start_ns + h.end_ns) // 2
                try:
                    trace, g, hang = _graph(args, hang_acceptor(h.pid, None, None, at_ns, threshold_ns), at_ns=at_ns,
                                            pid=h.pid, window_s=half / 1e9, focus_pid=h.pid,
                                            max_window_s=half / 1e9 + INDEX_LOOKBACK_S)
                    ranked = None
                    break
                except ArgusError as e:
                    # the graph's model disagrees with the index's: the next candidate, focused as well (a
                    # decode of the busy buffer unfocused is gigabytes), then the ranking of the graph
                    tried.append(h.tid)
                    more = len(tried) < INDEX_TRIES
                    print(safe_lines(f"argus: {e}; " + ("trying the index's next candidate" if more else
                                                        "ranking the hangs of the decoded buffer instead")),
                          file=sys.stderr)
                    picked = index_answer.pick(args.buffer, threshold_ns, skip=tried) if more else None
            if picked is None:
                ranked = [] if args.pid is None else None
                # the index answered but its hangs were not confirmed: the graph ranks the buffer's end, bounded
                last = _last_events_s(args.buffer, FALLBACK_MAX_EVENTS) if tried else None
                if tried:
                    gc.collect()
                if last is not None:
                    print(f"argus: searching the last {last:.1f} s of the buffer (at most {fmt_count(FALLBACK_MAX_EVENTS)} "
                          "events; --window SECONDS searches more)", file=sys.stderr)
                trace, g, hang = _graph(args, hang_acceptor(args.pid, args.tid, args.at, None, threshold_ns, ranked),
                                        at_s=args.at, pid=args.pid, window_s=last, max_window_s=last)
            if ranked:
                _say_choice(g, ranked)
            store = _store(create=not args.auto)   # its rules apply in every mode; --auto saves no session
            if not args.auto:
                sid = store.create(trace.path, hang, threshold_ns)
        ctx = ReplContext(g, hang, int(args.threshold * 1e9), store, sid, trace.path, notes=_notes(trace))
        ctx.presets = presets
        ctx.preset_rules = preset_rules
        ctx.no_rules = args.no_rules
        ctx.show_rules = interactive
        return ctx
    except BaseException:
        if store is not None:
            store.close()
        raise


def _say_window(g, trace):
    """`hangs` searched only part of the buffer: which part, and how to widen."""
    a, b = g.loaded_window
    try:
        st = reader.buffer_stats(trace.path)
        whole = (f"{(int(st['last_ts']) - int(st['first_ts'])) / 1e9:.1f} s, "
                 f"{reader.event_counts(st)['present']:,} events")
    except reader.TraceError:
        whole = "more"
    print(f"argus: searched the window {fmt_trace_time(g, a)} .. {fmt_trace_time(g, b)} of the buffer "
          f"(trace clock {a / 1e9:.3f} .. {b / 1e9:.3f} s); it holds {whole}: --window 0 searches all of it, "
          f"--window SECONDS a wider end", file=sys.stderr)


def _say_choice(g, ranked):
    """Without --pid: which hang was picked, and the top three on stderr when
    the choice is not clear (diagnose/candidates.py)."""
    if not C.ambiguous(ranked):
        return
    top = C.top_threads(ranked)
    lines = [f"argus: {len(top)} likely hangs; explaining the first (pass --pid PID for another):"]
    for i, c in enumerate(top, 1):
        h = c.hang
        where = g.process_where(h.pid)
        lines.append(f"  {i}. {g.process_name(h.pid) or g.comm(h.utid)}/{h.pid}{f' [{where}]' if where else ''}: "
                     f"{h.block_type} for "
                     f"{fmt_dur(h.dur_ns)}{' (ongoing)' if h.ongoing else ''} at {fmt_trace_time(g, h.start_ns)}"
                     f" -- {c.why}")
    print("\n".join(lines), file=sys.stderr)


def _header(ctx):
    h, g = ctx.hang, ctx.g
    ev = h.classification.evidence
    where = g.process_where(h.pid)
    ctx.out(f"Hang in {g.comm(h.utid)}/{h.tid} (process {g.process_name(h.pid)}/{h.pid}"
            f"{f' [{where}]' if where else ''}): {h.block_type} "
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
    return _graph(args, hang_acceptor(pid, tid, args.at, at_ns, threshold_ns), path,
                  at_s=args.at, at_ns=at_ns, pid=pid)


def run_hangs(args):
    import json

    if args.recorded:
        if args.pid is not None or args.tid is not None or args.buffer:
            raise ArgusError("--recorded lists the flight recorder's snapshots: drop --pid / --tid / --buffer")
        snaps = snapshots.list_snapshots()
        if args.json:
            print(json.dumps(snapshots.to_json(snaps)))
        else:
            sys.stdout.write(safe_lines(snapshots.render_text(snaps)))
        return 0


    if args.top <= 0:
        raise ArgusError("--top must be positive")
    if args.pid is None and args.tid is not None:
        raise ArgusError("--tid needs --pid")

    if args.threshold <= 0:
        raise ArgusError("--threshold must be positive")
    several = multibuffer.buffers(args)
    if several:
        trace, g = multibuffer.load(several)
        pid, tid = multibuffer.ids(g, args)
        hangs = multibuffer.accept(g, hangs_acceptor(pid, tid, int(args.threshold * 1e9), args.top, not args.all))
        return _print_hangs(args, g, hangs, pid)
    if args.pid is None and args.window is None and not args.all:
        args.buffer = resolve_buffer(args.buffer)         # said once, here or by the decode
        done = index_answer.run_hangs(args, args.buffer, int(args.threshold * 1e9))
        if done is not None:
            return done
    accept = hangs_acceptor(args.pid, args.tid, int(args.threshold * 1e9), args.top, not args.all)
    trace, g, hangs = _graph(args, accept, pid=args.pid)
    if g.loaded_window is not None:
        _say_window(g, trace)
    return _print_hangs(args, g, hangs, args.pid)


def _print_hangs(args, g, hangs, pid):
    import json

    ranks = None
    if pid is None:
        ranks = {id(c.hang): c for c in C.rank(g, hangs)}
    if args.json:
        print(json.dumps(hangs_to_json(g, hangs, ranks)))
    else:
        sys.stdout.write(safe_lines(render_hangs_text(g, hangs, with_process=pid is None, ranks=ranks))
                         .rstrip("\n") + "\n")
    return 0
