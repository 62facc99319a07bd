"""compare: a vertex against its baseline instances (what only it has)."""
from argus.cli.repl.registry import CommandParser, command
from argus.diagnose.compare import compare, render_compare

parser = CommandParser("compare", "Compare a vertex (default: the cursor) with the quick instances of the same wait "
                                  "or work: wait object, peer and duration, syscalls and sampled functions that "
                                  "only it has, ranked.")
parser.add_argument("id", nargs="?", type=int, help="vertex id (default: the cursor)")
parser.add_argument("--top", type=int, default=12, help="differences to show (default 12)")


@command(parser)
def run(ctx, args):
    v = ctx.check_vertex(args.id)
    for line in render_compare(compare(ctx.g, v, ctx.threshold_ns), top=max(args.top, 1)):
        ctx.out(line)
