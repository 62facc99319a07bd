"""open_watcher: the one place that picks a mechanism's Watcher by name.

It sits apart from base.py because every mechanism imports base (Watcher,
DebuggerError): a factory in base would make base and its mechanisms import
each other (tests/test_layers.py forbids module cycles).
"""
from argus.debugger.base import MECHANISMS, DebuggerError


def open_watcher(mechanism, pid, specs, **kw):
    if mechanism == "perf":
        # local for start-up time: `import argus.debugger` loads no mechanism (capstone, pyelftools)
        from argus.debugger.perf_bp import PerfWatcher
        return PerfWatcher(pid, specs, **kw)
    if mechanism == "lldb":
        # local for start-up time, as above; lldb itself loads in find_lldb() when it arms
        from argus.debugger.backends.lldb.watch import LldbWatcher
        return LldbWatcher(pid, specs, **kw)
    raise DebuggerError(f"unknown mechanism {mechanism!r}: use one of {', '.join(MECHANISMS)}")
