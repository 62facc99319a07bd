"""stack: the call stack recorded in a vertex, when the trace has stacks."""
from argus.cli.repl.registry import CommandParser, command
from argus.diagnose.stacks import top_frames, has_stacks

parser = CommandParser("stack", "Show the call stack (innermost first) recorded in a vertex.")
parser.add_argument("id", nargs="?", type=int, help="vertex id (default: the cursor)")
parser.add_argument("--depth", type=int, default=16, help="frames to show (default 16)")


@command(parser, aliases=("bt",))
def run(ctx, args):
    v = ctx.check_vertex(args.id)
    if not has_stacks(ctx.g):
        ctx.out("no call stacks in this trace (recorded with `argus start --no-stacks`, or no thread "
                "blocked with one); use `lldb-script` to capture them")
        return
    frames = top_frames(ctx.g, v, args.depth)
    if not frames:
        ctx.out(f"no stack recorded in vertex {v}")
    for i, f in enumerate(frames):
        ctx.out(f"#{i:<2} {f}")
