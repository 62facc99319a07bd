"""help: list the commands, or one command's usage."""
from argus.cli.repl import registry
from argus.cli.repl.registry import CommandParser, command, ReplUsageError

parser = CommandParser("help", "List the commands, or show the usage of one.")
parser.add_argument("name", nargs="?", type=str, help="a command")


@command(parser, aliases=("h", "?"), category="session")
def run(ctx, args):
    if args.name:
        cmd = registry.lookup(args.name)
        if cmd is None:
            raise ReplUsageError(f"help: no command {args.name!r}")
        text = cmd.parser.format_help()
        if cmd.aliases:
            text += f"aliases: {', '.join(cmd.aliases)}\n"
        ctx.out(text.rstrip("\n"))
        return
    for cat in ("inspect", "walk", "annotate", "diagnose", "session"):
        cmds = [c for c in registry.COMMANDS.values() if c.category == cat]
        if not cmds:
            continue
        ctx.out(f"{cat}:")
        for c in sorted(cmds, key=lambda c: c.name):
            ctx.out(f"  {c.name:<12} {c.summary}")
    ctx.out("help COMMAND shows its arguments.")
