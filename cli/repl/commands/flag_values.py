"""flag-values: the recorded data-flag accesses over time (bp_watch events)."""
from rich.table import Table

from argus.cli.repl.registry import CommandParser, command
from argus.cli.repl.render import thread_label
from argus.diagnose.report import fmt_rel

parser = CommandParser("flag-values", "Show the data-flag reads and writes recorded by bp_watch, in time "
                                      "order: who touched which flag and the value it saw or left.")
parser.add_argument("--addr", type=lambda s: int(s, 0), help="only this flag address (hex or decimal)")
parser.add_argument("--writes", action="store_true", help="only writes")
parser.add_argument("--all", action="store_true", help="the whole trace, not just the hang window +/- 1 s")
parser.add_argument("--limit", type=int, default=40, help="rows to show (default 40; the last ones)")


@command(parser, aliases=("fv",))
def run(ctx, args):
    g, f = ctx.g, ctx.g.flags
    if len(f.ts) == 0:
        ctx.out("no data-flag accesses in this trace: watch a flag with `bp_watch PID IMAGE SYMBOL` while "
                "tracing and reproduce the hang")
        return
    keep = [i for i in range(len(f.ts))
            if (args.addr is None or int(f.addr[i]) == args.addr)
            and (not args.writes or bool(f.write[i]))
            and (args.all or ctx.hang.start_ns - 1_000_000_000 <= int(f.ts[i]) <= ctx.hang.end_ns + 1_000_000_000)]
    keep.sort(key=lambda i: (int(f.ts[i]), i))     # the flags table is grouped by thread, not by time
    if not keep:
        ctx.out("no data-flag access matches (try --all)")
        return
    shown = keep[-args.limit:] if args.limit > 0 else keep
    t = Table(box=None, pad_edge=False)
    for col in ("at", "thread", "access", "flag", "value", "vertex"):
        t.add_column(col)
    for i in shown:
        u = int(f.utid[i])
        t.add_row(fmt_rel(int(f.ts[i]) - ctx.t0), thread_label(g, u),
                  "write" if f.write[i] else "read", f"{int(f.addr[i]):#x}", str(int(f.value[i])), f"v{int(f.seg[i])}")
    ctx.console.print(t)
    writes = sum(1 for i in keep if f.write[i])
    ctx.out(f"{len(keep)} access(es), {writes} write(s), {len(keep) - writes} read(s)"
            + (f"; showing the last {len(shown)}" if len(shown) < len(keep) else ""))
