"""Opening a trace for the commands: decode with one-line errors, name threads.

Corrupt records inside a chunk do not stop a diagnosis: the decoder drops the
rest of that chunk, and a torn or damaged chunk is dropped whole; the command
prints one warning line naming the counts and the time range lost.  A
missing, truncated or unrecognisable file is an error, and so is running out
of memory (one line, not a traceback).
"""
import os
import sys
import time

import numpy as np

from argus.cli.common import ArgusError
from argus.tracer.textsafe import safe_lines
from argus.graphbuild.threads import decode_comm
from argus.tracer import schema
from argus.tracer import reader
from argus.tracer import reader, stream


# The records that name a thread (ThreadNames): a names-only decode selects them.
NAME_TYPES = (schema.PROC_SNAPSHOT, schema.EXEC, schema.THREAD_NAME, schema.FORK)


def load_trace(path, since_ns=None, until_ns=None, names=True, types=None, rows_hint=0, warn=True, keep_state=True):
    """Returns (Trace, ThreadNames) or raises ArgusError with one line.
    since_ns / until_ns: a windowed load (reader.decode_file); see window_rows.
    names=False skips the name scan (None instead) for callers that build a
    graph, whose thread tracker names threads itself.  types / rows_hint: a
    decode of those record types only (reader.decode_file).  Bad records and
    dropped chunks are reported on stderr (warn_dropped) unless warn=False
    (a caller that may load several windows reports the one it keeps).
    keep_state: as reader.decode_file."""
    if not os.path.exists(path):
        raise ArgusError(f"no trace at {path}: start tracing with `argus start`, or pass --buffer FILE")
    if not os.access(path, os.R_OK):
        raise ArgusError(f"cannot read {path}: permission denied (traces are root-only, mode 0600)")
    try:
        trace = reader.decode_file(path, strict=False, since_ns=since_ns, until_ns=until_ns, types=types,
                                   rows_hint=rows_hint, keep_state=keep_state)
    except reader.TraceError as e:
        raise ArgusError(str(e))
    except MemoryError:
        raise ArgusError(out_of_memory(path))
    if warn:
        warn_dropped(trace)
    return trace, (ThreadNames(trace.rows) if names else None)


def out_of_memory(path):
    return (f"out of memory decoding {path}: narrow the window (--window SECONDS) or filter, "
            f"or free memory")


def stream_windows(path, chunks_per_window):
    """stream.iter_windows with one-line errors (load_trace has reported the
    buffer's bad records and dropped chunks already)."""
    try:
        yield from stream.iter_windows(path, chunks_per_window)
    except reader.TraceError as e:
        raise ArgusError(str(e))
    except MemoryError:
        raise ArgusError(out_of_memory(path))


def dropped_summary(trace):
    """One line on what the decode could not use, or "": torn or damaged
    chunks (with the time range their headers claimed, wall clock) and bad
    records."""
    parts = []
    if trace.torn_chunks:
        span = ""
        if trace.torn_last_ts:
            span = f", records from {_wall(trace, trace.torn_first_ts)} to {_wall(trace, trace.torn_last_ts)} lost"
        parts.append(f"{trace.torn_chunks} chunk(s) dropped (torn by a live writer or damaged){span}")
    if trace.bad_records:
        parts.append(trace.warning)
    return "; ".join(parts)


def _wall(trace, ts_ns):
    wall = trace.wall_ns(ts_ns)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(wall // 10**9)) + f".{wall // 10**6 % 1000:03d}"


def warn_dropped(trace):
    line = dropped_summary(trace)
    if line:
        print(safe_lines(f"argus: warning: {line}"), file=sys.stderr)


def window_rows(trace):
    """The rows of a windowed Trace, ready for the graph builder: the state
    records kept from before the window (PROC_SNAPSHOT, THREAD_NAME, FD_INFO,
    MAPPING) are stamped with the window's first timestamp, since they
    describe the state as of the window start; a THREAD_NAME among them
    becomes a PROC_SNAPSHOT row (not main, no ppid): it names the thread but,
    unlike a THREAD_NAME in the window, says nothing about the thread running
    then.  Changes trace.rows in place (the decoder's own buffer; rows stay
    sorted).  A whole-buffer Trace is returned as is."""
    rows = trace.rows
    if trace.window is None or not len(rows):
        return rows
    start = int(trace.first_window_ts)
    if not start:
        return rows          # nothing in the window but state records
    k = int(np.searchsorted(rows["ts_ns"], start, side="left"))
    head = rows[:k]
    if k:
        head["ts_ns"] = start
        named = head["type"] == schema.THREAD_NAME
        head["type"][named] = schema.PROC_SNAPSHOT
        head[schema.column(schema.PROC_SNAPSHOT, "is_main_thread")][named] = 0
        head[schema.column(schema.PROC_SNAPSHOT, "ppid")][named] = 0
    return rows


class ThreadNames:
    """tid -> latest comm, from the rows that carry a name (snapshot, fork,
    exec, thread_name); vectorized so `argus events` stays fast on big traces."""

    def __init__(self, rows):
        named = rows[np.isin(rows["type"], NAME_TYPES)]
        self._comm = {}
        for row in named:
            tid = int(row[schema.column(schema.FORK, "child_tid")]) if int(row["type"]) == schema.FORK \
                else int(row["tid"])
            name = decode_comm(bytes(row["comm"]))
            if name:
                self._comm[tid] = name

    def comm(self, tid):
        return self._comm.get(tid, "?")

    def label(self, tid):
        return f"{self.comm(tid)}/{tid}"
