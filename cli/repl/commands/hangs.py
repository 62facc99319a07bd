"""hangs: the hangs of the spinning thread's process."""
from argus.cli.repl.registry import CommandParser, command
from argus.diagnose import list_hangs, render_hangs_text
from argus.diagnose import DiagnoseError, hosts
from argus.cli.repl.registry import ReplUsageError

parser = CommandParser("hangs", "List the hangs of the process being debugged (or --pid's).")
parser.add_argument("--pid", type=str, help="another process (HOST:PID with several buffers)")


@command(parser, category="diagnose")
def run(ctx, args):
    try:
        pid = ctx.hang.pid if args.pid is None else hosts.parse_ident(ctx.g, args.pid)
        hs = list_hangs(ctx.g, pid, threshold_ns=ctx.threshold_ns)
    except (DiagnoseError, ValueError) as e:
        raise ReplUsageError(str(e))
    ctx.out(render_hangs_text(ctx.g, hs).rstrip("\n"))
