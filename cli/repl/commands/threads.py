"""threads: the threads of the processes involved, classified over the hang."""
from rich.table import Table

from argus.cli.repl.registry import CommandParser, ReplUsageError, command
from argus.cli.repl.render import process_label, thread_label
from argus.diagnose import blocktype as B
from argus.diagnose import hosts
from argus.diagnose.report import evidence_text

parser = CommandParser("threads", "List the threads of the processes on the path (or of one process), "
                                  "with their block type over the hang window.")
parser.add_argument("--pid", type=str, help="only this process (HOST:PID with several buffers)")


@command(parser, aliases=("t",))
def run(ctx, args):
    g = ctx.g
    if args.pid is not None:
        try:
            pids = [hosts.parse_ident(g, args.pid)]
        except ValueError as e:
            raise ReplUsageError(f"threads: {e}")
    else:
        # the path's processes by their vertices: its JSON pids are local to their hosts
        on_path = {int(g.threads.pid[g.seg.utid[p["vertex"]]]) for p in (ctx.report or {}).get("path", [])}
        pids = [ctx.hang.pid] + sorted(on_path - {ctx.hang.pid})
    t = Table(box=None, pad_edge=False)
    for col in ("thread", "process", "block type", "evidence"):
        t.add_column(col)
    n = 0
    for pid in pids:
        for u in g.utids_of_pid(pid):
            c = B.classify(g, u, ctx.hang.start_ns, ctx.hang.end_ns)
            t.add_row(thread_label(g, u), process_label(g, pid), c.block_type, evidence_text(c.evidence))
            n += 1
    if n == 0:
        ctx.out(f"no threads of pid {args.pid} in the trace")
        return
    ctx.console.print(t)
