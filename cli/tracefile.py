"""Opening a trace for the commands: decode with one-line errors, name threads.

Corrupt records inside a chunk do not stop a diagnosis: the decoder drops the
rest of that chunk and the command prints one warning line; a missing,
truncated or unrecognisable file is an error.
"""
import os
import sys

import numpy as np

from argus.cli.common import ArgusError
from argus.tracer import schema


def load_trace(path):
    """Returns (Trace, ThreadNames) or raises ArgusError with one line."""
    from argus.tracer import reader

    if not os.path.exists(path):
        raise ArgusError(f"no trace at {path}: start tracing with `argus start`, or pass --buffer FILE")
    if not os.access(path, os.R_OK):
        raise ArgusError(f"cannot read {path}: permission denied (traces are root-only, mode 0600)")
    try:
        trace = reader.decode_file(path, strict=False)
    except reader.TraceError as e:
        raise ArgusError(str(e))
    if trace.warning:
        print(f"argus: warning: {trace.warning}", file=sys.stderr)
    return trace, ThreadNames(trace.rows)


class ThreadNames:
    """tid -> latest comm, from the rows that carry a name (snapshot, fork,
    exec, thread_name); vectorized so `argus events` stays fast on big traces."""

    def __init__(self, rows):
        named = rows[np.isin(rows["type"], [schema.PROC_SNAPSHOT, schema.EXEC, schema.THREAD_NAME, schema.FORK])]
        self._comm = {}
        for row in named:
            tid = int(row["peer_tid"]) if int(row["type"]) == schema.FORK else int(row["tid"])
            name = bytes(row["comm"]).split(b"\0", 1)[0].decode(errors="replace")
            if name:
                self._comm[tid] = name

    def comm(self, tid):
        return self._comm.get(tid, "?")

    def label(self, tid):
        return f"{self.comm(tid)}/{tid}"
