"""back: undo the last cursor move."""
from argus.cli.repl.registry import CommandParser, command
from argus.cli.repl.render import vertex_panel

parser = CommandParser("back", "Move the cursor back to where it was before the last follow / vertex / baseline.")


@command(parser, aliases=("b",), category="walk")
def run(ctx, args):
    if not ctx.back_stack:
        ctx.out("already at the start")
        return
    ctx.cursor = ctx.back_stack.pop()
    ctx.out(vertex_panel(ctx, ctx.cursor))
