"""`argus export`: a diagnosis as a trace viewers open, or as a graph.

  argus export [--pid PID ...] --perfetto FILE     Perfetto protobuf trace (ui.perfetto.dev)
                               --chrome-json FILE  Chrome trace-event JSON
                               --dot FILE          the diagnosis slice, Graphviz DOT
                               --svg FILE          the same, drawn by graphviz as SVG
                               --speedscope FILE   the root causes' CPU profiles, speedscope JSON
                                                   (--thread TID: that thread's over the hang)
Any number of outputs at once.  The hang is picked and answered as `argus
debug` does (cli/cmd_debug.add_diagnosis_args: --pid, --tid, --at, --buffer,
--window, --threshold, --answers, --resume, --no-rules): the automatic
answers unless --answers / --resume replay recorded ones (a replayed run is
saved as a session, as `argus debug --answers` saves it).  What the files hold: docs/export.md; how they are built:
diagnose/export_model.py and one writer per format beside it.

Every output is a new 0600 file renamed into place through its verified
directory (tracer/safe_files.py): a trace names processes and files, so what
is derived from it is private.  Nothing read from the trace is executed:
the SVG is graphviz's `dot` reading the DOT source on stdin.
"""
import os
import sys

from argus.cli.common import ArgusError
from argus.cli.progress import Progress, fmt_count
from argus.tracer.textsafe import safe_lines
from argus.cli.cmd_debug import add_diagnosis_args
from argus.cli.cmd_debug import open_context
from argus.diagnose.export_model import timeline
from argus.tracer import safe_files
from argus.diagnose import export_chrome, export_dot, export_perfetto
from argus.cli import speedscope
from argus.diagnose import profile as P

FORMATS = (("perfetto", "--perfetto", "Perfetto protobuf trace (open in ui.perfetto.dev)"),
           ("chrome_json", "--chrome-json", "Chrome trace-event JSON (chrome://tracing and other viewers)"),
           ("dot", "--dot", "the diagnosis slice as a Graphviz DOT graph"),
           ("svg", "--svg", "the diagnosis slice drawn as SVG (graphviz's dot)"),
           ("speedscope", "--speedscope", "the root causes' CPU profiles (LongRunning / RepeatedYield) as "
                                          "speedscope JSON, a flame graph (docs/profile.md)"))


def register(sub):
    p = sub.add_parser("export", help="write a diagnosis as a Perfetto / Chrome JSON trace, or its slice as a "
                                      "DOT / SVG graph (docs/export.md)")
    for dest, flag, what in FORMATS:
        p.add_argument(flag, dest=dest, metavar="FILE", help=what)
    p.add_argument("--thread", type=int, default=None, metavar="TID",
                   help="--speedscope: profile this thread over the whole hang instead of the root causes")
    add_diagnosis_args(p, json=False)
    p.set_defaults(func=run)


def diagnosis_for_output(args):
    """(ReplContext with its diagnosis run, graph timeline): the hang args name,
    answered automatically unless --answers / --resume replay answers."""
    # local for start-up time: sqlite3, only for the commands that keep answers
    from argus.cli.session import SessionError

    args.auto = not (args.answers or args.resume is not None)   # no session of its own
    try:
        ctx = open_context(args)
    except SessionError as e:
        raise ArgusError(str(e))
    try:
        ctx.run_diagnosis(auto=args.auto, ask=None)
        if ctx.sid is not None:
            ctx.store.finish(ctx.sid, ctx.report, status="closed")
    except SessionError as e:
        raise ArgusError(str(e))
    finally:
        if ctx.store is not None:
            ctx.store.close()
    return ctx, timeline(ctx.g, ctx.diagnosis)


def write_output(path, data):
    """data (str or bytes) as a new 0600 file at path (tracer/safe_files.py)."""
    safe_files.write_output(path, data)


def check_output_path(flag, path):
    """Before the (long) diagnosis: a directory, or a file in a directory that
    does not exist, is refused at once."""
    if os.path.isdir(path):
        raise ArgusError(f"{flag} {path}: is a directory")
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise ArgusError(f"{flag} {path}: its directory does not exist")


def _renderer(kind):
    return {"perfetto": export_perfetto.render, "chrome_json": export_chrome.render,
            "dot": export_dot.render_dot, "svg": export_dot.render_svg}[kind]


def _speedscope(ctx, thread):
    """speedscope JSON of the root causes' CPU profiles, or of one thread over
    the hang (cli/speedscope.py)."""
    import json

    g, hang = ctx.g, ctx.hang
    if not P.has_samples(g):
        raise ArgusError("no CPU samples in this trace (traced with `argus start --no-sample`?)")
    if thread is not None:
        utid = g.utid_of_tid(thread, at=hang.start_ns)
        if utid is None:
            raise ArgusError(f"no thread {thread} in the trace")
        windows = [(f"{g.comm(utid)}/{thread}", utid, hang.start_ns, hang.end_ns)]
    else:
        windows = [(f"{g.comm(r.utid)}/{int(g.threads.tid[r.utid])} {r.block_type} depth {r.depth}", r.utid,
                    r.start_ns, r.end_ns) for r in ctx.diagnosis.root_causes if r.profile]
    doc = speedscope.document(g, windows, name=f"argus: hang of {g.comm(hang.utid)}/{hang.tid}")
    if not doc["profiles"]:
        raise ArgusError("no root cause of this hang has CPU samples (none ran on the CPU): try --thread TID")
    return json.dumps(doc)


def run(args):
    wanted = [(dest, flag, getattr(args, dest)) for dest, flag, _ in FORMATS if getattr(args, dest)]
    if not wanted:
        raise ArgusError("export: name at least one output (--perfetto, --chrome-json, --dot, --svg or "
                         "--speedscope FILE)")
    for _, flag, path in wanted:
        check_output_path(flag, path)
    ctx, tl = diagnosis_for_output(args)
    n = sum(len(s) for s in tl["states"].values()) + len(tl["segments"]) + len(tl["flows"])
    with Progress() as progress:
        for kind, flag, path in wanted:
            progress.stage(f"exporting {fmt_count(n)} events to {path}")
            try:
                data = _speedscope(ctx, args.thread) if kind == "speedscope" else _renderer(kind)(tl)
            except RuntimeError as e:          # a missing tool or package: one line
                raise ArgusError(str(e)) from None
            write_output(path, data)
            progress.finished(f"exported ({flag[2:]})", n)
    h = ctx.hang
    print(safe_lines(f"argus: exported the diagnosis of {ctx.g.comm(h.utid)}/{h.tid} ({h.block_type}, "
                     f"{len(tl['path'])} path steps, {len(tl['roots'])} root causes) to "
                     + ", ".join(path for _, _, path in wanted)), file=sys.stderr)
    return 0
