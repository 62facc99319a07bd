"""The watch interface every mechanism implements, and the layer's error type.

A Watcher is armed on construction (every thread of the target gets the
watchpoints), yields Access records from accesses(), and close() leaves the
target exactly as it was: no watchpoint, not stopped.  close() is idempotent
and runs from __exit__, so Ctrl-C in the caller still disarms.
"""
import os
from dataclasses import dataclass

MECHANISMS = ("perf", "lldb")


class DebuggerError(Exception):
    """A watch or step could not be set up or carried on; str() is one line."""


@dataclass(frozen=True)
class WatchSpec:
    addr: int          # runtime address in the target
    size: int          # 1, 2, 4 or 8 bytes, naturally aligned
    label: str         # "IMAGE:SYMBOL" or "0xADDR", for messages


@dataclass
class Access:
    kind: str          # "write" or "read"
    pid: int
    tid: int
    pc: int            # x86: the instruction after the access (debug traps fire after it)
    addr: int          # the watched address (the spec's, not the exact byte touched)
    value: int         # the flag's value read right after the access (see docs/bp_watch.md)
    ts_ns: int         # CLOCK_MONOTONIC
    how: str = ""      # how kind was decided: "insn" (decoded the access) or "value" (value changed)
    cpu: int = 0       # the CPU the access ran on (perf; lldb does not know: 0)


class Watcher:
    """Base class: subclasses implement _arm, _poll(timeout_s) -> [Access], _disarm."""
    mechanism = "?"

    def __init__(self, pid, specs):
        if not specs:
            raise DebuggerError("nothing to watch")
        for s in specs:
            if s.size not in (1, 2, 4, 8):
                raise DebuggerError(f"{s.label}: watch size must be 1, 2, 4 or 8 bytes, not {s.size}")
            if s.addr % s.size:
                raise DebuggerError(f"{s.label}: address 0x{s.addr:x} is not aligned to its size {s.size}")
        self.pid = pid
        self.specs = list(specs)
        self.closed = False
        self.lost = 0                 # accesses the mechanism dropped (a full perf ring)
        self.threads_seen = set()     # tids an access was seen from

    def accesses(self, timeout_s=0.1):
        """The accesses seen since the last call, waiting up to timeout_s for one."""
        return self._poll(timeout_s)

    def close(self):
        if not self.closed:
            self.closed = True
            self._disarm()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def default_mechanism():
    return "perf" if os.uname().sysname == "Linux" else "lldb"
