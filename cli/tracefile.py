"""Opening a trace for the commands: decode with one-line errors, name threads.

Corrupt records inside a chunk do not stop a diagnosis: the decoder drops the
rest of that chunk and the command prints one warning line; a missing,
truncated or unrecognisable file is an error.
"""
import os
import sys

import numpy as np

from argus.cli.common import ArgusError
from argus.graphbuild.threads import decode_comm
from argus.tracer import schema


def load_trace(path, since_ns=None, until_ns=None, names=True):
    """Returns (Trace, ThreadNames) or raises ArgusError with one line.
    since_ns / until_ns: a windowed load (reader.decode_file); see window_rows.
    names=False skips the name scan (None instead) for callers that build a
    graph, whose thread tracker names threads itself."""
    from argus.tracer import reader

    if not os.path.exists(path):
        raise ArgusError(f"no trace at {path}: start tracing with `argus start`, or pass --buffer FILE")
    if not os.access(path, os.R_OK):
        raise ArgusError(f"cannot read {path}: permission denied (traces are root-only, mode 0600)")
    try:
        trace = reader.decode_file(path, strict=False, since_ns=since_ns, until_ns=until_ns)
    except reader.TraceError as e:
        raise ArgusError(str(e))
    if trace.warning:
        print(f"argus: warning: {trace.warning}", file=sys.stderr)
    return trace, (ThreadNames(trace.rows) if names else None)


def wall_offset(trace):
    """CLOCK_REALTIME - CLOCK_MONOTONIC for the trace's timestamps, from the
    file header's creation stamps (docs/ring-buffer.md); None when the header
    has none (a realtime stamp of 0)."""
    if not trace.created_realtime_ns:
        return None
    return int(trace.created_realtime_ns) - int(trace.created_ns)


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
        head["state"][named] = 0
        head["peer_pid"][named] = 0
    return rows


class ThreadNames:
    """tid -> latest comm, from the rows that carry a name (snapshot, fork,
    exec, thread_name); vectorized so `argus events` stays fast on big traces."""

    def __init__(self, rows):
        named = rows[np.isin(rows["type"], [schema.PROC_SNAPSHOT, schema.EXEC, schema.THREAD_NAME, schema.FORK])]
        self._comm = {}
        for row in named:
            tid = int(row["peer_tid"]) if int(row["type"]) == schema.FORK else int(row["tid"])
            name = decode_comm(bytes(row["comm"]))
            if name:
                self._comm[tid] = name

    def comm(self, tid):
        return self._comm.get(tid, "?")

    def label(self, tid):
        return f"{self.comm(tid)}/{tid}"
