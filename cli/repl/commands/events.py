"""events: the decoded records of a vertex."""
from argus.cli.repl.registry import CommandParser, command
from argus.diagnose.report import fmt_rel
from argus.tracer import schema

TYPES = sorted(schema.TYPE_NAMES.values()) if hasattr(schema, "TYPE_NAMES") else None

parser = CommandParser("events", "List the records of a vertex (its own rows), like `argus events`.")
parser.add_argument("id", nargs="?", type=int, help="vertex id (default: the cursor)")
parser.add_argument("--limit", type=int, default=40, help="at most this many (default 40; the last ones)")
if TYPES:
    parser.add_argument("--type", choices=TYPES, help="only records of this type")
else:
    parser.add_argument("--type", type=str, help="only records of this type")


def _type_name(t):
    names = getattr(schema, "TYPE_NAMES", {})
    return names.get(int(t), str(int(t)))


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
    for r in rows:
        t = _type_name(r["type"])
        desc = f"{fmt_rel(int(r['ts_ns']) - ctx.t0):>12}  {int(r['tid']):>7}  {t:<14}"
        if int(r["type"]) in (schema.SYSCALL_ENTER, schema.SYSCALL_EXIT):
            desc += f" {g.syscall_name(r['nr'])}"
            if int(r["type"]) == schema.SYSCALL_ENTER:
                desc += f"(obj 0x{int(r['obj']):x})"
            else:
                desc += f" = {int(r['val'])}"
        elif int(r["type"]) in (schema.WAKEUP, schema.WAKEUP_NEW, schema.FORK):
            desc += f" -> {int(r['peer_tid'])}"
        elif int(r["type"]) == schema.SWITCH_OUT:
            desc += f" {schema.STATE_NAMES.get(int(r['state']), '?')} {schema.WAIT_NAMES.get(int(r['reason']), '')}"
        elif int(r["type"]) in (schema.DATA_FLAG_READ, schema.DATA_FLAG_WRITE):
            desc += f" 0x{int(r['obj']):x} = {int(r['val'])}"
        ctx.out(desc)
    if n == 0:
        ctx.out(f"vertex {v} has no records" + (f" of type {args.type}" if args.type else ""))
