"""REPL commands, one module each; importing this package registers them."""
from argus.cli.repl.commands import (  # noqa: F401
    vertex, path, stack, events, threads, follow, back, not_causal, flag, baseline, diagnose, export, hangs,
    quit, help, flag_values, lldb_trace, profile, compare,
)
