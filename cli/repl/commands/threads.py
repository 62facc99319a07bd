"""threads: the threads of the processes involved, classified over the hang."""
from rich.table import Table

from argus.cli.repl.registry import CommandParser, command
from argus.diagnose import blocktype as B
from argus.diagnose.report import evidence_text

parser = CommandParser("threads", "List the threads of the processes on the path (or of one process), "
                                  "with their block type over the hang window.")
parser.add_argument("--pid", type=int, help="only this process")


@command(parser, aliases=("t",))
def run(ctx, args):
    g = ctx.g
    if args.pid is not None:
        pids = [args.pid]
    else:
        pids = [ctx.hang.pid] + sorted({p["pid"] for p in (ctx.report or {}).get("path", [])} - {ctx.hang.pid})
    t = Table(box=None, pad_edge=False)
    for col in ("thread", "process", "block type", "evidence"):
        t.add_column(col)
    n = 0
    for pid in pids:
        for u in g.utids_of_pid(pid):
            c = B.classify(g, u, ctx.hang.start_ns, ctx.hang.end_ns)
            where = g.process_where(pid)
            t.add_row(f"{g.comm(u)}/{int(g.threads.tid[u])}",
                      f"{g.process_name(pid)}/{pid}" + (f" [{where}]" if where else ""), c.block_type,
                      evidence_text(c.evidence))
            n += 1
    if n == 0:
        ctx.out(f"no threads of pid {args.pid} in the trace")
        return
    ctx.console.print(t)
