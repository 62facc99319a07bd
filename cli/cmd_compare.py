"""argus compare: the hung vertex against its baseline instances (the same
wait or work when it went quickly): what only the hung one has, ranked
(diagnose/compare.py).  The hang is found as `argus debug` finds it."""
import json
import sys

from argus.cli import multibuffer
from argus.cli.common import ArgusError
from argus.tracer.textsafe import safe_lines
from argus.cli.cmd_debug import _add_common
from argus.cli.cmd_debug import _graph
from argus.diagnose.compare import compare, render_compare
from argus.diagnose.windowed import hang_acceptor


def register(sub):
    p = sub.add_parser("compare", help="compare a hung vertex with its quick instances (what only the hang has)")
    _add_common(p, "the process whose hang to compare (default: the most recent hang)")
    p.add_argument("--at", type=float, metavar="SECONDS", help="the hang in progress at this time (seconds into the trace)")
    p.add_argument("--vertex", type=int, default=None, metavar="V",
                   help="compare this vertex instead of the hang's spinning vertex")
    p.set_defaults(func=run_compare)


def run_compare(args):
    if multibuffer.buffers(args):      # also makes args.buffer the one file (--buffer appends)
        raise ArgusError("compare takes one --buffer; debug, hangs, export and report merge several")
    threshold_ns = int(args.threshold * 1e9)
    if args.pid is None and args.tid is not None:
        raise ArgusError("--tid needs --pid")
    accept = hang_acceptor(args.pid, args.tid, args.at, None, threshold_ns, [] if args.pid is None else None)
    trace, g, hang = _graph(args, accept, at_s=args.at, pid=args.pid)
    v = hang.vertex if args.vertex is None else args.vertex
    if not 0 <= v < len(g.seg):
        raise ArgusError(f"no vertex {v} in the graph (0..{len(g.seg) - 1})")
    c = compare(g, v, threshold_ns)
    if args.json:
        sys.stdout.write(json.dumps({"schema": "argus.compare/1", **c}, indent=2) + "\n")
    else:
        sys.stdout.write(safe_lines("\n".join(render_compare(c)) + "\n"))
    return 0
