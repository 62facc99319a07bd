"""events: the decoded records of a vertex."""
from argus.cli.cmd_events import describe
from argus.cli.repl.registry import CommandParser, command
from argus.diagnose.report import fmt_rel
from argus.diagnose.hosts import graph_label
from argus.tracer import schema

TYPES = sorted(schema.TYPE_NAMES.values())

parser = CommandParser("events", "List the records of a vertex (its own rows), like `argus events`.")
parser.add_argument("id", nargs="?", type=int, help="vertex id (default: the cursor)")
parser.add_argument("--limit", type=int, default=40, help="at most this many (default 40; the last ones)")
parser.add_argument("--type", choices=TYPES, help="only records of this type")


def _type_name(t):
    return schema.TYPE_NAMES.get(int(t), str(int(t)))


@command(parser)
def run(ctx, args):
    g = ctx.g
    v = ctx.check_vertex(args.id)
    rows = g.rows[g.segment_rows(v)]
    if args.type:
        rows = rows[[_type_name(t) == args.type for t in rows["type"]]]
    n = len(rows)
    if args.limit > 0 and n > args.limit:
        ctx.out(f"... {n - args.limit} earlier records")
        rows = rows[-args.limit:]
    names = ctx.thread_names()
    for r in rows:
        t = _type_name(r["type"])
        ctx.out(f"{fmt_rel(int(r['ts_ns']) - ctx.t0):>12}  {graph_label(g, int(r['tid'])):>7}  {t:<14} {describe(r, names, g)}")
    if n == 0:
        ctx.out(f"vertex {v} has no records" + (f" of type {args.type}" if args.type else ""))
