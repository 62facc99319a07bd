"""Watchpoints through lldb's Python API (macOS and Linux).

Algorithm: attach (the process stops), set one read/write watchpoint per
spec (lldb arms it in every thread, present and future), continue; each
stop with reason watchpoint yields one Access per stopped thread (its tid,
its pc, the value read from memory while the thread is still stopped, the
time of the stop: lldb gives no kernel timestamp), then continue again.
close() stops, deletes the watchpoints and detaches.  The target stops for
every access (two context switches and a round trip through lldb-server),
which is the cost docs/bp_watch.md and bench/watch_overhead.py measure.
"""
import time

from argus.debugger.base import Access, DebuggerError, Watcher
from argus.debugger.classify import AccessClassifier
from argus.debugger.backends.lldb.session import Session


class LldbWatcher(Watcher):
    mechanism = "lldb"

    def __init__(self, pid, specs, write_only=False, wakeup=1):
        super().__init__(pid, specs)
        self.session = Session(pid)
        self.lost = 0
        self.threads_seen = set()
        self.classifier = AccessClassifier(pid)
        try:
            self.by_id = {}
            for s in self.specs:
                wp = self.session.watch(s.addr, s.size, write_only)
                self.by_id[wp.GetID()] = s
            self.session.continue_()
        except BaseException:
            self.session.detach()
            raise

    def _poll(self, timeout_s):
        lldb = self.session.lldb
        ses = self.session
        out = []
        ev = lldb.SBEvent()
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            # WaitForEvent takes whole seconds; 0 polls.  Sub-second waits: poll + short sleeps.
            if not ses.listener.WaitForEvent(0, ev):
                if out or left <= 0:
                    return out
                time.sleep(min(left, 0.0005))
                continue
            if not lldb.SBProcess.EventIsProcessEvent(ev):
                continue
            st = lldb.SBProcess.GetStateFromEvent(ev)
            if st in (lldb.eStateExited, lldb.eStateDetached, lldb.eStateCrashed):
                raise DebuggerError(f"process {self.pid} exited")
            if st != lldb.eStateStopped or lldb.SBProcess.GetRestartedFromEvent(ev):
                continue
            now = time.monotonic_ns()
            proc = ses.process
            for i in range(proc.GetNumThreads()):
                th = proc.GetThreadAtIndex(i)
                if th.GetStopReason() != lldb.eStopReasonWatchpoint:
                    continue
                spec = self.by_id.get(th.GetStopReasonDataAtIndex(0))
                if spec is None:
                    continue
                err = lldb.SBError()
                value = proc.ReadUnsignedFromMemory(spec.addr, spec.size, err)
                pc = th.GetFrameAtIndex(0).GetPC()
                kind, how = self.classifier.classify(spec.addr, pc, value)
                tid = th.GetThreadID()
                self.threads_seen.add(tid)
                out.append(Access(kind, self.pid, tid, pc, spec.addr, value, now, how))
            ses.continue_()
            if time.monotonic() >= deadline:
                return out

    def _disarm(self):
        self.session.detach()
