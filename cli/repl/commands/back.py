"""back: undo the last cursor move."""
from argus.cli.repl.registry import CommandParser, command
from argus.cli.repl.render import vertex_panel

parser = CommandParser("back", "Move the cursor back to where it was before the last follow / vertex / baseline.")


@command(parser, aliases=("b",), category="walk")
def run(ctx, args):
    if not ctx.go_back():
        ctx.out("already at the start")
        return
    ctx.out(vertex_panel(ctx, ctx.cursor))
