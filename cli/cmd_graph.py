"""`argus graph`: build the event graph of a buffer, print its statistics,
save it to SQLite.

  argus graph stats [--buffer FILE | --db FILE] [--json]
      vertices, edges by type, weak edges, splits by criterion, culled
      wakeups by kind, the Argus paper's Table 2 ratios, and a note when the
      trace has lost or overwritten regions (graphbuild/summary.py)
  argus graph save --out FILE.db [--buffer FILE]
      the built graph in SQLite (graphbuild/storage.py): a later session
      (`argus graph stats --db FILE.db`, the REPL) reopens it without the trace

Errors are one line (ArgusError): a missing or corrupt trace names the file
and offset (the decoder's message), a damaged database names the file.
"""
import json
import os
import sys
import time

from argus.cli.common import ArgusError, resolve_buffer
from argus.cli.memcheck import check_load
from argus.cli.progress import Progress, fmt_count
from argus.tracer.textsafe import safe_lines
from argus.cli.tracefile import load_trace
from argus.graphbuild.builder import build_graph_from_trace
from argus.graphbuild.native_core import GraphError
from argus.graphbuild.summary import graph_summary, format_summary


def register(sub):
    p = sub.add_parser("graph", help="event graph: statistics (vertices, edges, splits, culling), save to SQLite")
    gsub = p.add_subparsers(dest="graph_command", metavar="SUBCOMMAND")
    gsub.required = True

    s = gsub.add_parser("stats", help="vertices, edges by type, weak edges, splits by criterion, culled wakeups, "
                                      "Table 2 ratios")
    src = s.add_mutually_exclusive_group()
    src.add_argument("--buffer", metavar="FILE", help="ring buffer file (default: the active one)")
    src.add_argument("--db", metavar="FILE", help="a graph saved with `argus graph save`")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=run_stats)

    s = gsub.add_parser("save", help="build the graph and save it to SQLite")
    s.add_argument("--buffer", metavar="FILE", help="ring buffer file (default: the active one)")
    s.add_argument("--out", metavar="FILE.db", required=True, help="the SQLite file to write")
    s.set_defaults(func=run_save)


def _build(buffer):

    path = resolve_buffer(buffer)
    if os.path.exists(path):
        check_load(path, None, None, widening=False)     # the whole buffer: one line if it cannot fit
    with Progress() as progress:            # stderr only: --json keeps stdout clean
        t0 = time.perf_counter()
        progress.stage(f"decoding {path}")
        trace, _ = load_trace(path, names=False)
        progress.finished("decoded", trace.nrows)
        t1 = time.perf_counter()
        progress.stage(f"building the event graph of {fmt_count(trace.nrows)} events")
        try:
            g = build_graph_from_trace(trace)
        except GraphError as e:
            raise ArgusError(f"{path}: {e}")
        progress.finished("built a graph of", trace.nrows)
        t2 = time.perf_counter()
    return path, g, {"decode_s": round(t1 - t0, 3), "build_s": round(t2 - t1, 3)}


def run_stats(args):
    if args.db:
        # local for start-up time: sqlite3, only for --db / save
        from argus.graphbuild.storage import load_graph, StorageError
        try:
            g = load_graph(args.db)
        except StorageError as e:
            raise ArgusError(str(e))
        source, timing = args.db, {}
    else:
        source, g, timing = _build(args.buffer)
    s = graph_summary(g)
    s["source"] = source
    s.update(timing)
    if args.json:
        json.dump(s, sys.stdout, indent=2)
        print()
    else:
        print(safe_lines(f"graph of {source}" + (f" (decode {timing['decode_s']} s, build {timing['build_s']} s)"
                                                 if timing else "")))
        print(safe_lines(format_summary(s)))   # names the busiest threads: untrusted
    return 0


def run_save(args):
    # local for start-up time: sqlite3, only for --db / save
    from argus.graphbuild.storage import save_graph, StorageError

    source, g, _ = _build(args.buffer)
    try:
        save_graph(g, args.out, source=source)
    except StorageError as e:
        raise ArgusError(str(e))
    print(f"saved {g.num_vertices:,} vertices and {g.num_edges:,} edges to {args.out}")
    return 0
