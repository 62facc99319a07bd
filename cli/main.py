"""`argus`: start/stop/status tracing, print events, debug a hang.

One module per subcommand (cli/cmd_*.py); each exposes `register(subparsers)`
which adds its parser and sets `func`.  main() turns every ArgusError (and a
Ctrl-C, a closed pipe) into one line and an exit code, never a traceback.
"""
import argparse
import sys

from argus.cli.common import ArgusError
from argus.tracer.textsafe import safe_lines
from argus.cli import cmd_start, cmd_status, cmd_events, cmd_debug, cmd_demo
from argus.cli import cmd_import
from argus.cli import cmd_graph
from argus.cli import cmd_lldb_script, cmd_flags
from argus.cli import cmd_rules
from argus.cli import cmd_compare, cmd_export, cmd_report
from argus.cli import cmd_run
from argus.cli import cmd_instrument
from argus.cli import cmd_collect

COMMANDS = (cmd_start, cmd_status, cmd_events, cmd_debug, cmd_demo, cmd_import, cmd_graph, cmd_lldb_script, cmd_flags, cmd_rules,
            cmd_compare, cmd_export, cmd_report, cmd_run, cmd_instrument, cmd_collect)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="argus",
        description="Interactive causal tracing: record what every thread waits on, then explain a hang.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv=None):
    try:
        # inside the try: building the parser (every command's module) can run
        # out of memory as well as the command itself
        args = build_parser().parse_args(argv)
        return args.func(args) or 0
    except ArgusError as e:
        print(safe_lines(f"argus: {e}"), file=sys.stderr)   # may quote a path or a name
        return e.exit_code
    except MemoryError as e:
        # numpy / the graph build ran out (a full buffer decoded at once needs
        # gigabytes): one line, as for every other failure.
        what = " ".join(str(e).split())
        print(safe_lines(f"argus: out of memory{f' ({what})' if what else ''}: narrow the window "
                         f"(--window SECONDS), filter, or free memory"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("argus: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `argus events | head`: the reader left; that is not an error.
        try:
            sys.stdout = None
        except Exception:
            pass
        return 0


if __name__ == "__main__":
    sys.exit(main())
