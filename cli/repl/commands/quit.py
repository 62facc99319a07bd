"""quit: leave the REPL; the session stays saved (argus debug --resume)."""
from argus.cli.repl.registry import CommandParser, command

parser = CommandParser("quit", "Leave.  The session (answers, marks, report) is saved; "
                               "`argus debug --resume` continues it.")


@command(parser, aliases=("q", "exit"), category="session")
def run(ctx, args):
    ctx.running = False
