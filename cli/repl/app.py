"""The REPL loop.

Input: one prompt_toolkit PromptSession (history file beside the session
store; completion from the command registry: names, options, choices).
A line is split with shlex, looked up in the registry, parsed by the
command's argparse parser (never exits) and run.  Errors of a command are
one line; the loop goes on.

Questions of a running diagnosis (Algorithm 1) use the same session with a
per-question completer of the option keys; Ctrl-C or Ctrl-D inside a
question stop the diagnosis there (chooser.Abort semantics), at the command
prompt Ctrl-C clears the line and Ctrl-D leaves.  prompt_toolkit restores
the terminal after every prompt, so no exit path leaves it raw.
"""
import shlex

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import NestedCompleter, WordCompleter
from prompt_toolkit.history import FileHistory, InMemoryHistory

from argus.cli.repl import registry
from argus.cli.repl import commands  # noqa: F401  (registers the commands)
from argus.cli.repl.registry import ReplUsageError
from argus.diagnose import DiagnoseError


def make_session(history_path):
    try:
        hist = FileHistory(history_path) if history_path else InMemoryHistory()
    except OSError:
        hist = InMemoryHistory()
    return PromptSession(history=hist, completer=NestedCompleter.from_nested_dict(registry.completion_tree()))


def make_ask(ctx, session):
    # Questions and command prompts are numbered (like IPython's In [n]) so a
    # reader of the transcript - or a test driving the pty - can tell a new
    # prompt from the redraw of an answered one.  Questions are numbered
    # consecutively; asking one again after an invalid answer is attempt 2,
    # 3, ... of the same number ("#4.2").
    attempt = [0]

    def ask(q):
        ctx.out("")
        if q.invalid is not None:
            attempt[0] += 1
            ctx.out(f"invalid input {q.invalid!r}: answer {', '.join(q.keys())} (Enter: the * default; "
                    f"Ctrl-C or Ctrl-D stops the diagnosis)")
        else:
            ctx.questions_asked += 1
            attempt[0] = 1
            ctx.out(f"Question {ctx.questions_asked}: " + q.render())
        n = f"{ctx.questions_asked}" + (f".{attempt[0]}" if attempt[0] > 1 else "")
        return session.prompt(f"{q.kind} #{n} [{'/'.join(q.keys())}]> ",
                              completer=WordCompleter(q.keys()), default="")
    return ask


def execute(ctx, line):
    try:
        words = shlex.split(line)
    except ValueError as e:
        ctx.out(f"cannot parse that line: {e}")
        return
    if not words:
        return
    cmd = registry.lookup(words[0])
    if cmd is None:
        ctx.out(f"unknown command {words[0]!r}; `help` lists the commands")
        return
    try:
        args = cmd.parser.parse_args(words[1:])
        cmd.func(ctx, args)
    except ReplUsageError as e:
        ctx.out(str(e))
    except DiagnoseError as e:
        ctx.out(str(e))
    except KeyboardInterrupt:
        ctx.out(f"{cmd.name}: interrupted")


def run(ctx, history_path=None, first=("diagnose",)):
    session = make_session(history_path)
    ctx.ask = make_ask(ctx, session)
    for line in first:
        execute(ctx, line)
    ctx.out("\n(argus) commands: help, vertex, path, follow, back, baseline, diagnose, export, quit")
    n = 0
    while ctx.running:
        n += 1
        try:
            line = session.prompt(f"(argus:{n}) ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        execute(ctx, line)
    return ctx.exit_code
