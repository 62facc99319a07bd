"""Watching memory and stepping code in another process: the debugger layer.

Everything Argus does to a live process goes through this package:

    from argus.debugger import WatchSpec, open_watcher, DebuggerError
    spec = symbols.resolve_watch(pid, "/usr/bin/app", "g_ready", size=None)
    with open_watcher("perf", pid, [spec]) as w:        # or "lldb"
        for access in w.accesses(timeout_s=0.1): ...     # Access: kind, tid, pc, addr, value, ts_ns

Mechanisms (one interface, base.Watcher):
  perf   perf_bp.PerfWatcher: Linux perf_event_open hardware breakpoints,
         one per thread; the target never stops.  Default on Linux.
  lldb   backends/lldb: lldb's Python API; the target stops at each access.

Every `import lldb` lives in backends/lldb (pwndbg's rule: the debugger sits
behind an abstract layer).  Errors are DebuggerError (one exception type for
the layer) whose str() is one line the CLI prints as is.
"""
from argus.debugger import procmem  # noqa: F401
from argus.debugger.base import (  # noqa: F401
    Access, DebuggerError, WatchSpec, Watcher, MECHANISMS, default_mechanism,
)
from argus.debugger.watchers import open_watcher  # noqa: F401
