"""An lldb attach session: attach, run, stop, detach with one-line errors.

Async mode: continue() returns at once and wait_stop(timeout) waits on the
debugger's listener, so a caller can give up after --for seconds or on
Ctrl-C; detach() stops the process first if it is running, deletes every
watchpoint and breakpoint this session made, and detaches (the process then
runs on as before).
"""
import os

from argus.debugger.base import DebuggerError
from argus.debugger.backends.lldb import find_lldb
from argus.debugger.procmem import permission_hint


class Session:
    def __init__(self, pid):
        lldb = self.lldb = find_lldb()
        self.pid = pid
        self.dbg = lldb.SBDebugger.Create(False)
        self.dbg.SetAsync(True)
        # lldb prints "Watchpoint N hit: old value / new value" for each stop; we report accesses ourselves.
        self._devnull = open(os.devnull, "w")
        self.dbg.SetOutputFile(lldb.SBFile.Create(self._devnull, borrow=True))
        self.dbg.SetErrorFile(lldb.SBFile.Create(self._devnull, borrow=True))
        self.target = self.dbg.CreateTarget("")
        self.listener = self.dbg.GetListener()
        err = lldb.SBError()
        self.process = self.target.AttachToProcessWithID(self.listener, pid, err)
        if not err.Success() or not self.process.IsValid():
            msg = err.GetCString() or "unknown error"
            self.dbg.DeleteTarget(self.target)
            lldb.SBDebugger.Destroy(self.dbg)
            if not os.path.exists(f"/proc/{pid}"):
                raise DebuggerError(f"no such process {pid}")
            if "ermission" in msg or "not permitted" in msg:
                raise DebuggerError(f"permission denied attaching lldb to process {pid}: "
                                    + permission_hint("run as root (or set kernel.yama.ptrace_scope to 0)"))
            raise DebuggerError(f"failed to attach lldb to process {pid}: {msg.strip()}")
        self.wait_state((lldb.eStateStopped,), 30)
        self.watchpoints = []
        self.breakpoints = []
        self.detached = False

    def wait_state(self, states, timeout_s):
        """Wait for a process state change into one of `states`; True when reached."""
        lldb = self.lldb
        if self.process.GetState() in states:
            return True
        ev = lldb.SBEvent()
        deadline = timeout_s
        while deadline > 0:
            step = min(deadline, 1)
            if self.listener.WaitForEvent(max(1, int(step)), ev):
                if lldb.SBProcess.EventIsProcessEvent(ev):
                    st = lldb.SBProcess.GetStateFromEvent(ev)
                    if st in states:
                        return True
                    if st in (lldb.eStateExited, lldb.eStateDetached, lldb.eStateCrashed):
                        return False
            deadline -= step
        return self.process.GetState() in states

    def continue_(self):
        err = self.process.Continue()
        if not err.Success():
            raise DebuggerError(f"failed to continue process {self.pid}: {err.GetCString()}")

    def watch(self, addr, size, write_only=False):
        lldb = self.lldb
        err = lldb.SBError()
        if hasattr(lldb, "SBWatchpointOptions"):
            opts = lldb.SBWatchpointOptions()
            opts.SetWatchpointTypeRead(not write_only)
            opts.SetWatchpointTypeWrite(lldb.eWatchpointWriteTypeAlways)
            wp = self.target.WatchpointCreateByAddress(addr, size, opts, err)
        else:
            wp = self.target.WatchAddress(addr, size, not write_only, True, err)
        if not err.Success() or not wp.IsValid():
            msg = (err.GetCString() or "").strip()
            if "resource" in msg.lower() or "no space" in msg.lower() or "hardware" in msg.lower():
                raise DebuggerError(f"no free debug register for 0x{addr:x} in process {self.pid} ({msg})")
            raise DebuggerError(f"failed to set a watchpoint at 0x{addr:x} in process {self.pid}: {msg}")
        self.watchpoints.append(wp)
        return wp

    def detach(self):
        """Leave the process as it was: no watchpoint, no breakpoint, running."""
        if self.detached:
            return
        self.detached = True
        lldb = self.lldb
        try:
            if self.process.IsValid() and self.process.GetState() not in (
                    lldb.eStateExited, lldb.eStateDetached, lldb.eStateCrashed, lldb.eStateInvalid):
                if self.process.GetState() != lldb.eStateStopped:
                    self.process.Stop()
                    self.wait_state((lldb.eStateStopped,), 10)
                for wp in self.watchpoints:
                    self.target.DeleteWatchpoint(wp.GetID())
                for bp in self.breakpoints:
                    self.target.BreakpointDelete(bp.GetID())
                self.process.Detach()
                self.wait_state((lldb.eStateDetached,), 5)
        finally:
            self.dbg.DeleteTarget(self.target)
            lldb.SBDebugger.Destroy(self.dbg)
            self._devnull.close()
