"""diagnose: run Algorithm 1; its questions appear as prompts."""
from argus.cli.repl.registry import CommandParser, command
from argus.cli.repl.render import report_text
from argus.diagnose import hang_for_vertex

parser = CommandParser("diagnose", "Run the diagnosis (Algorithm 1) on the hang, or on a vertex.  Questions "
                                   "appear as prompts: answer with the key in brackets; Enter takes the default "
                                   "(*); anything else is asked again; Ctrl-C or Ctrl-D stops there.")
parser.add_argument("id", nargs="?", type=int, help="diagnose this vertex instead of the hang")
parser.add_argument("--auto", action="store_true", help="answer every question with the automatic heuristic")


@command(parser, aliases=("d",), category="diagnose")
def run(ctx, args):
    hang = None
    if args.id is not None:
        hang = hang_for_vertex(ctx.g, ctx.check_vertex(args.id))
    ctx.run_diagnosis(hang, auto=args.auto, ask=ctx.ask)
    ctx.out(report_text(ctx.report).rstrip("\n"))
