"""Diagnosis: hang detection, block types, baselines, slicing, Algorithm 1,
reports.  The CLI needs only what this module exports:

    g = argus.graphbuild.build_graph(rows, trace_start=..., trace_end=...)
    hangs = list_hangs(g, pid, tid=None, threshold_ns=...)      # argus hangs
    render_hangs_text(g, hangs) / hangs_to_json(g, hangs)
    d = diagnose(g, pid, tid=None, at=None, threshold_ns=..., chooser=None)
    render_text(d) / render_json(d) / to_json(d)               # argus debug [--json]

For an interactive REPL: chooser.AskingChooser(g, ask=callback, presets=
recorded answers, rules=remembered rules) implements slice.Chooser (asks
only where the graph is ambiguous; counts `queries` and questions saved),
with find_hang / most_recent_hang / hang_for_vertex +
diagnose_hang(g, hang, threshold_ns, chooser).  d.metrics holds Table 2's
numbers (queries, path length vs --auto).

From a buffer: windowed.search_trace(path, load, accept, ...) with
windowed.hang_acceptor (argus debug) or hangs_acceptor (argus hangs) loads
the smallest window whose graph holds the answer (cli/cmd_debug.py gives
it the loading).

Errors with nothing to diagnose are DiagnoseError subclasses (NoHangError,
UnknownProcessError) whose str() is one clear line.
"""
from argus.diagnose.blocktype import (  # noqa: F401
    LONG_WAIT, LONG_RUNNING, REPEATED_YIELD, NORMAL, Classification, classify,
)
from argus.diagnose.hangs import (  # noqa: F401
    DEFAULT_THRESHOLD_NS, DiagnoseError, NoHangError, UnknownProcessError, Hang,
    find_hang, list_hangs, thread_hangs, hang_for_vertex, main_thread_hangs, most_recent_hang,
)
from argus.diagnose.slice import Chooser, AutoChooser, EdgeRef, interactive_slice  # noqa: F401
from argus.diagnose.baseline import Baseline, find_wait_baselines  # noqa: F401
from argus.diagnose.algorithm import Diagnosis, RootCause, diagnose, diagnose_hang  # noqa: F401
from argus.diagnose.chooser import AskingChooser, Question, Abort  # noqa: F401
from argus.diagnose.rules import RuleSet  # noqa: F401
from argus.diagnose.report import (  # noqa: F401
    SCHEMA, to_json, render_json, render_text, render_hangs_text, hangs_to_json,
)
from argus.diagnose.windowed import search_trace, hang_acceptor, hangs_acceptor  # noqa: F401
