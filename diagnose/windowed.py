"""From a buffer to the hang(s) to explain: the one entry point of `argus
debug` and `argus hangs` (search_trace), with its windowed-load policy.

Algorithm (windowed load): a full default buffer holds tens of millions of
events, and decoding and building all of them takes a minute, while the hang
to explain is nearly always recent.  search_trace first loads only the last W
seconds (around `at`: [at - W, at + W]), W = --window (default
DEFAULT_WINDOW_S; 0 loads the whole buffer; without --window a buffer of at
most WHOLE_BUFFER_EVENTS events is loaded whole at once, about as cheap as a
first window of a busy buffer).  W doubles until the answer does not depend
on what lies outside the window, as accept() judges on each window's graph:
  hang_acceptor   a hang is found, it does not start at the window's first
                  timestamp (nor is it ongoing at the window's end when `at`
                  cuts the window before the buffer's end), and Algorithm 1
                  would find a baseline for it in the window;
  hangs_acceptor  the same for every hang listed (and at least one found).
A window reaching back to the buffer's start is the whole buffer; with a pid,
one reaching back to the fork that created the process is the last (the hang
cannot lie before it).  Whatever the last window says is the answer, errors
included.

Loading a window (decoding, the memory check, the graph build, progress and
warnings) is the caller's load(since, until, widening) (cli/cmd_debug.py);
this module decides which windows, in what order, and when to stop.

Invariants: windows grow strictly and end with the whole buffer, the
process's birth or the widest window the caller allows (max_window_s); accept() sees window_start None exactly on the last window;
every error is a DiagnoseError with one clear line.
"""
import gc
import itertools

from argus.diagnose import baseline as BL, blocktype as B
from argus.diagnose.hangs import DiagnoseError, find_hang, list_hangs, main_thread_hangs, most_recent_hang
from argus.graphbuild import graph as G
from argus.tracer import reader, schema

DEFAULT_WINDOW_S = 10.0   # ~7M events of a busy machine: a first answer in seconds
# Decoding + building runs at ~1-3M events/s on one core: a buffer of this many
# events is read whole in about the time of a first window, so nothing is
# left unsearched (the count is the chunk headers' records_present: no decoding).
WHOLE_BUFFER_EVENTS = 2_000_000


class Widen(Exception):
    """The answer found in a window may depend on what lies before it."""


def windows(path, window_s, at_s=None, at_ns=None, birth=lambda: None, max_window_s=None):
    """(since_ns, until_ns, origin_ns, last) to load, smallest first; (None,
    None, origin, True) is the whole buffer.  origin: the buffer's first
    timestamp; the windows end at the buffer's end, or are centred on at_s
    seconds after the origin (at_ns: an absolute ts).  birth(): the ts before
    which the answer cannot lie (the process's creation) or None, asked once
    the first window did not do; a window reaching back to it is the last,
    so a young process never costs a whole-buffer load.  max_window_s: the
    widest half-width; a window that wide is the last (a caller that knows
    where the hang is bounds what it decodes)."""
    if window_s is not None and window_s < 0:
        raise DiagnoseError("--window must be >= 0")
    try:
        st = reader.buffer_stats(path)
    except reader.TraceError as e:
        raise DiagnoseError(str(e))
    if window_s is None:
        window_s = 0 if st["records_present"] <= WHOLE_BUFFER_EVENTS else DEFAULT_WINDOW_S
    lo, hi = int(st["first_ts"]), int(st["last_ts"])
    width = int(window_s * 1e9)
    center = at_ns if at_s is None else lo + int(at_s * 1e9)
    floor = None
    cap = None if max_window_s is None else max(1, int(max_window_s * 1e9))
    for n in itertools.count():
        if width <= 0:
            break
        if cap is not None and width >= cap:
            since = (hi if center is None else center) - cap
            if since > lo or (center is not None and center + cap < hi):
                yield max(since, 0), None if center is None else center + cap, lo, True
                return
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


def process_birth(path, pid):
    """The ts of the fork that created process pid (its first thread: child
    tid = child pid), or None: a validation pass keeping only FORK rows."""
    if pid is None:
        return None
    try:
        forks = reader.decode_file(path, strict=False, types=(schema.FORK,), rows_hint=4096).rows
    except (reader.TraceError, MemoryError):
        return None
    born = forks["ts_ns"][(forks[schema.column(schema.FORK, "child_pid")] == pid)
                          & (forks[schema.column(schema.FORK, "child_tid")] == pid)]
    return int(born.min()) if len(born) else None


def search_trace(path, load, accept, window_s=None, at_s=None, at_ns=None, pid=None,
                 report_dropped=lambda trace: None, max_window_s=None):
    """(trace, g, accepted): the smallest window (module doc) whose graph
    accept(g, window_start, cut_end) takes (window_start None: the last
    window; cut_end: the window ends before the buffer does); accept raises
    Widen for a bigger window, or DiagnoseError, which only the last window
    reports.  load(since, until, widening) -> (trace, g, start): the window's
    decode and graph (g None when the window holds no events; start: its
    first timestamp).  report_dropped(trace): what the decode of the window
    kept (or of the last one) dropped, said once.  max_window_s: windows()."""
    for n, (since, until, origin, last) in enumerate(windows(path, window_s, at_s, at_ns,
                                                               birth=lambda: process_birth(path, pid),
                                                               max_window_s=max_window_s)):
        trace, g, start = load(since, until, n > 0)
        if g is None:
            if last:
                report_dropped(trace)          # every chunk damaged says why
                raise DiagnoseError(f"{trace.path} holds no events")
            continue
        g.time_origin = origin
        g.wall_offset_ns = trace.wall_offset_ns
        g.torn_chunks, g.bad_records = int(trace.torn_chunks), int(trace.bad_records)
        g.loaded_window = None if since is None else (start, trace.last_ts)
        try:
            accepted = accept(g, None if last else start, not last and until is not None)
        except (Widen, DiagnoseError):
            if last:
                report_dropped(trace)
                raise
        else:
            report_dropped(trace)      # of the window kept: one warning, not one per window
            return trace, g, accepted
        del trace, g
        gc.collect()            # the graph's cycles hold the rows: free them before the next window
    raise AssertionError("windows() ends with the whole buffer")


def starts_before(g, hang, window_start):
    """The hang may have begun before the window: it starts at the window's
    first timestamp, or its thread was already running / blocked then."""
    return hang.start_ns <= window_start or \
        int(g.seg.start_kind[hang.vertex]) in (G.START_TRACE, G.START_PRE_TRACE)


def lacks_baseline(g, hang, threshold_ns):
    """Algorithm 1 would find no baseline for the hang in this graph (one may
    lie before the window)."""
    if hang.block_type == B.LONG_WAIT:
        return not BL.find_wait_baselines(g, hang.vertex, threshold_ns, hang_start=hang.start_ns)
    if hang.block_type == B.REPEATED_YIELD:
        addrs = B.flag_reads(g, hang.utid, hang.start_ns, hang.end_ns)
        return bool(addrs) and not BL.find_flag_baselines(g, hang.utid, addrs, hang.start_ns, hang.end_ns,
                                                          threshold_ns)
    return False


def pick_hang(g, pid, tid, at, threshold_ns, ranked=None):
    """The hang to diagnose: pid's (its main thread's, or tid's) in progress
    at `at`, else its longest; without pid, the one of the process whose main
    thread hung most recently (ranked receives the candidates)."""
    if pid is None:
        if tid is not None:
            raise DiagnoseError("--tid needs --pid")
        return most_recent_hang(g, at=at, threshold_ns=threshold_ns, ranked=ranked)
    return find_hang(g, pid, tid=tid, at=at, threshold_ns=threshold_ns)


def hang_acceptor(pid, tid, at_s, at_ns, threshold_ns, ranked=None):
    """accept() for search_trace: the hang to diagnose (pick_hang), or Widen.
    at_s: seconds since the buffer's start (g.time_origin), at_ns: an
    absolute ts.  ranked (without pid): a list that receives the
    candidates.rank of the accepted graph."""
    def accept(g, window_start, cut_end):
        at = at_ns if at_s is None else g.time_origin + int(at_s * 1e9)
        if ranked is not None:
            ranked.clear()
        hang = pick_hang(g, pid, tid, at, threshold_ns, ranked)
        if window_start is not None and (starts_before(g, hang, window_start) or (cut_end and hang.ongoing) or
                                         lacks_baseline(g, hang, threshold_ns)):
            raise Widen()
        return hang
    return accept


def hangs_acceptor(pid, tid, threshold_ns, top, event_loops_only):
    """accept() for search_trace: the hangs `argus hangs` lists, or Widen.
    With pid: every hang of pid (its main thread, or tid); without: the `top`
    longest hangs of every process's main thread (event_loops_only: only
    main threads with an event loop)."""
    def accept(g, window_start, cut_end):
        if pid is None:
            hangs = main_thread_hangs(g, threshold_ns=threshold_ns, event_loops_only=event_loops_only)
            hangs = sorted(hangs, key=lambda h: (-h.dur_ns, h.start_ns))[:top]
        else:
            hangs = list_hangs(g, pid, tid=tid, threshold_ns=threshold_ns)
        if window_start is not None and (not hangs or any(starts_before(g, h, window_start) or (cut_end and h.ongoing)
                                                          for h in hangs)):
            raise Widen()
        return hangs
    return accept
