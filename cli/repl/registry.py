"""The REPL's command registry (pwndbg style): one module per command, each
an argparse parser plus a function, registered with @command(parser).

Registration checks what the help and the completion rely on, and refuses a
command (ValueError at import, so a broken command never ships silently)
whose parser has no description, or an argument without help text, or a
value-taking argument without a type or choices (every value is converted
and checked by argparse before the command runs).  The registry feeds both
dispatch (parse_args) and completion (names, options, choices).

Parsing never exits: argparse errors become ReplUsageError (one line).
"""
import argparse
from dataclasses import dataclass, field


class ReplUsageError(Exception):
    pass


class CommandParser(argparse.ArgumentParser):
    def __init__(self, prog, description, **kw):
        super().__init__(prog=prog, description=description, add_help=False, **kw)

    def error(self, message):
        raise ReplUsageError(f"{self.prog}: {message} (help {self.prog})")

    def exit(self, status=0, message=None):
        raise ReplUsageError(message.strip() if message else f"{self.prog}: bad usage")


@dataclass
class Command:
    name: str
    parser: CommandParser
    func: object
    aliases: tuple = ()
    category: str = "inspect"
    options: list = field(default_factory=list)

    @property
    def summary(self):
        return self.parser.description.split("\n", 1)[0]


COMMANDS = {}
ALIASES = {}


def _check(parser):
    if not (parser.description or "").strip():
        raise ValueError(f"REPL command {parser.prog}: no description")
    for a in parser._actions:
        if not (a.help or "").strip():
            raise ValueError(f"REPL command {parser.prog}: argument {a.dest} has no help text")
        takes_value = a.nargs != 0 and not isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction,
                                                           argparse._StoreConstAction, argparse._CountAction))
        if takes_value and a.type is None and a.choices is None:
            raise ValueError(f"REPL command {parser.prog}: argument {a.dest} has no type")


def command(parser, aliases=(), category="inspect"):
    """Registers the decorated function(ctx, args) as command parser.prog."""
    _check(parser)

    def wrap(func):
        opts = [s for a in parser._actions for s in a.option_strings]
        cmd = Command(parser.prog, parser, func, tuple(aliases), category, opts)
        if cmd.name in COMMANDS or cmd.name in ALIASES:
            raise ValueError(f"REPL command {cmd.name} registered twice")
        COMMANDS[cmd.name] = cmd
        for al in aliases:
            ALIASES[al] = cmd.name
        return func
    return wrap


def lookup(name):
    return COMMANDS.get(name) or COMMANDS.get(ALIASES.get(name, ""))


def completion_tree():
    """{command: {option: None or {choice: None}}} for prompt_toolkit's
    NestedCompleter."""
    tree = {}
    for name, cmd in COMMANDS.items():
        sub = {}
        for a in cmd.parser._actions:
            for s in a.option_strings:
                sub[s] = {str(c): None for c in a.choices} if a.choices else None
            if not a.option_strings and a.choices:
                for c in a.choices:
                    sub[str(c)] = None
        if name == "help":
            sub = {n: None for n in COMMANDS}
        tree[name] = sub or None
        for al in cmd.aliases:
            tree[al] = sub or None
    return tree
