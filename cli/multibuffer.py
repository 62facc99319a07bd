"""Several `--buffer` options: one graph of several hosts (debug, hangs, export, report).

Each buffer is decoded whole (a window would cut the message pairs the
clocks are synchronised from, and shorten the span the drift is measured
over: --window is ignored, said in one line on stderr), merged (graphbuild/multihost.py: host ids,
one clock, cross-host edges) and searched like one buffer's whole-buffer
window.  --pid / --tid name a process as HOST:PID (HOST a host's name or
index, as the reports print them) or PID alone when one host has it.
"""
import re
import sys

import numpy as np

from argus.cli.common import ArgusError
from argus.cli.memcheck import check_load
from argus.cli.progress import Progress, fmt_count
from argus.cli.tracefile import load_trace
from argus.diagnose import DiagnoseError
from argus.diagnose.windowed import Widen
from argus.graphbuild import build_graph
from argus.graphbuild import multihost as MH

HOST_PID_RE = re.compile(r"^(?:(?P<host>[^:]+):)?(?P<pid>\d+)$")


WINDOW_IGNORED = ("argus: --window is ignored with several --buffer files: each is decoded whole, "
                  "for the message pairs the clocks are estimated from (docs/multi-host.md)")


def pid_arg(text):
    """argparse type of --pid / --tid: PID (an int) or HOST:PID (a str)."""
    m = HOST_PID_RE.match(str(text).strip())
    if not m:
        raise ValueError(text)
    return int(m.group("pid")) if m.group("host") is None else str(text).strip()


pid_arg.__name__ = "pid"       # argparse's "invalid pid value: 'x'"


def buffers(args):
    """The list of buffers when several were given, else None; args.buffer
    becomes the one buffer (or None) the single-buffer path expects."""
    b = args.buffer
    if isinstance(b, list):
        if len(b) > 1:
            args.buffer = None
            args.buffers = list(b)
            if args.window:                 # every caller's parser has --window (cmd_debug._add_common)
                print(WINDOW_IGNORED, file=sys.stderr)
            return args.buffers
        args.buffer = b[0] if b else None
    if args.buffers:
        return args.buffers
    for k, v in (("pid", args.pid), ("tid", args.tid)):
        if isinstance(v, str):
            raise ArgusError(f"--{k} {v}: HOST:ID names a process of one of several --buffer files")
    return None


def load(paths):
    """(merged, g): the buffers decoded, merged and built into one graph."""
    with Progress() as progress:
        traces = []
        for p in paths:
            check_load(p, None, None, widening=False)      # one line instead of the OOM killer
            progress.stage(f"decoding {p}")
            trace, _ = load_trace(p, names=False)
            progress.finished("decoded", trace.nrows)
            traces.append(trace)
        progress.stage(f"merging {len(paths)} hosts")
        try:
            merged = MH.merge(traces, paths)
        except ValueError as e:
            raise ArgusError(str(e))
        if not merged.nrows:
            raise ArgusError(f"{merged.path} hold no events")
        progress.finished("merged", merged.nrows)
        progress.stage(f"building the event graph of {fmt_count(merged.nrows)} events")
        g = build_graph(merged.rows, trace_start=merged.first_ts, trace_end=merged.last_ts, side=merged)
        g = MH.add_host_edges(g, merged)
        progress.finished("built a graph of", merged.nrows)
    g.time_origin = merged.first_ts
    g.wall_offset_ns = merged.wall_offset_ns
    g.torn_chunks, g.bad_records = merged.torn_chunks, merged.bad_records
    g.loaded_window = None
    return merged, g


def resolve(g, spec, what="--pid", host=None):
    """A graph id from PID or HOST:PID (module doc); host: the host a --tid
    must be on (its --pid's).  None stays None."""
    if spec is None:
        return None
    if isinstance(spec, str):
        name, _, num = spec.rpartition(":")
        idx = [h.index for h in g.hosts if h.name == name or str(h.index) == name]
        if not idx:
            raise ArgusError(f"{what} {spec}: no host {name!r} (hosts: {', '.join(h.name for h in g.hosts)})")
        return MH.global_id(idx[0], int(num))
    if host is not None:
        return MH.global_id(host, spec)
    pid = int(spec)
    on = [h for h in g.hosts if MH.global_id(h.index, pid) in g.processes]
    if not on:
        raise ArgusError(f"{what} {pid}: no such process in the {len(g.hosts)} buffers")
    if len(on) > 1:
        # the same pid on several hosts: the one where it does the most (a
        # process that is only seen waking or woken there is elsewhere)
        counts = sorted(((int(np.count_nonzero(g.rows["pid"] == MH.global_id(h.index, pid))), h) for h in on),
                        key=lambda c: -c[0])
        if counts[0][0] < 10 * max(1, counts[1][0]):
            raise ArgusError(f"{what} {pid} is on hosts {', '.join(h.name for h in on)}: pass HOST:{pid}")
        on = [counts[0][1]]
    return MH.global_id(on[0].index, pid)


def ids(g, args):
    """(pid, tid) of args as graph ids."""
    pid = resolve(g, args.pid)
    tid = resolve(g, args.tid, "--tid", None if pid is None else MH.host_of(pid))
    return pid, tid


def accept(g, acceptor):
    """acceptor's answer on the whole merged graph, ArgusError on none."""
    try:
        return acceptor(g, None, False)
    except (DiagnoseError, Widen) as e:
        raise ArgusError(str(e) or "no hang found in the buffers")
