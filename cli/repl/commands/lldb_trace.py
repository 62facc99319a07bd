"""lldb: instruction-level evidence captured by `argus lldb-script` for a thread."""
from argus.cli.repl.registry import CommandParser, command

parser = CommandParser("lldb", "Show the lldb instruction traces (`argus lldb-script`) stored next to the "
                               "buffer for the thread of a vertex.")
parser.add_argument("id", nargs="?", type=int, help="vertex id (default: the cursor)")
parser.add_argument("--instructions", type=int, default=20, help="instructions to show per trace (default 20)")


@command(parser)
def run(ctx, args):
    from argus.cli.safe_files import UnsafePath
    from argus.lldb.generate import render_text, results_for

    v = ctx.check_vertex(args.id)
    u = int(ctx.g.seg.utid[v])
    pid, tid = int(ctx.g.threads.pid[u]), int(ctx.g.threads.tid[u])
    try:
        docs = results_for(ctx.buffer, pid, tid) if ctx.buffer else []
    except UnsafePath as e:
        ctx.out(str(e))
        return
    if not docs:
        ctx.out(f"no lldb trace for {ctx.g.comm(u)}/{tid}: run `argus lldb-script --pid {pid} --tid {tid} "
                f"--function SYMBOL --run` while it is alive")
        return
    for doc in docs:
        ctx.out(render_text(doc, max_instructions=args.instructions))
