"""Template of the lldb scripts `argus lldb-script` writes (paper §5.5).

This file is data for the generator (generate.py): it is copied verbatim
after one generated line, `PARAMS = json.loads(<string literal>)`, and run by
lldb, never imported by Argus (Argus's own lldb code lives in
argus.debugger.backends.lldb).  Run a generated script either way:

    python3 -I SCRIPT.py                          (Python with lldb's module)
    lldb --batch -o 'command script import SCRIPT.py'

Algorithm:
  attach     to PARAMS["pid"]; the thread PARAMS["tid"] (its main thread when 0).
  reach      if PARAMS["function"] is on the thread's stack (and not
             PARAMS["next_call"]), step out until it is frame 0; else set a
             breakpoint on it for that thread only,
             continue, and wait up to PARAMS["timeout_s"] (stop_reason
             "not_reached" when it never runs).  No function: start where the
             thread is, stepping out of frames outside the app's modules.
  step       PARAMS["max_steps"] times: read the instruction's bytes at pc,
             disassemble with capstone, record {pc, bytes, asm, function,
             module, mem: the memory operands' effective addresses (from the
             thread's registers), sizes, access and the value there before the
             instruction runs}; step into it.  A call that lands outside the app's
             modules (a shared library, or its PLT trampoline) is stepped out
             of at once and recorded as {callee, module, return_value (rax /
             x0)} only.  A step that lands on the first instruction of a
             function records the full call stack.  Stops early when the
             start function returns (stop_reason "returned").
  deadline   PARAMS["timeout_s"] bounds the whole run from the attach: every
             step-out runs asynchronously and is interrupted at the deadline
             (a thread inside a long sleep() never returns to its caller in
             time), and the step loop checks it (stop_reason "timeout").
  leave      delete the breakpoint, detach (the process runs on), write the
             result JSON (schema argus.lldb-trace/1, docs/lldb.md) to
             PARAMS["result"] with mode 0600.
"""
import json
import os
import sys
import time

import lldb

try:
    import capstone
except ImportError:      # lldb's embedded Python without capstone: bytes only
    capstone = None

PARAMS = globals().get("PARAMS") or {}


class TimedOut(Exception):
    """PARAMS["timeout_s"] ran out: the process was interrupted."""


def _module_name(addr):
    mod = addr.GetModule()
    return mod.GetFileSpec().GetFilename() if mod.IsValid() else None


def _function_name(addr):
    fn = addr.GetFunction()
    if fn.IsValid():
        return fn.GetName()
    sym = addr.GetSymbol()
    return sym.GetName() if sym.IsValid() else None


def _is_entry(target, addr, pc):
    fn = addr.GetFunction()
    start = fn.GetStartAddress() if fn.IsValid() else addr.GetSymbol().GetStartAddress()
    return start.IsValid() and start.GetLoadAddress(target) == pc


def _stack(thread, target):
    frames = []
    for f in thread:
        a = f.GetPCAddress()
        frames.append({"pc": f.GetPC(), "function": _function_name(a), "module": _module_name(a)})
    return frames


def _return_register(frame):
    for name in ("rax", "x0", "r0"):
        reg = frame.FindRegister(name)
        if reg.IsValid():
            return reg.GetValueAsUnsigned()
    return None


class Tracer:
    def __init__(self, debugger, params):
        self.dbg = debugger
        self.p = params
        self.result = {
            "schema": "argus.lldb-trace/1", "pid": params["pid"], "tid": params["tid"],
            "function": params.get("function"), "image": params.get("image"),
            "vertex": params.get("vertex"), "started_ns": time.monotonic_ns(), "ended_ns": None,
            "stop_reason": None, "error": None, "instructions": [], "calls": [], "stacks": [],
        }
        self.md = None
        if capstone is not None:
            arch = (capstone.CS_ARCH_X86, capstone.CS_MODE_64)
            if getattr(os, "uname", None) and os.uname().machine in ("aarch64", "arm64"):
                arch = (capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
            self.md = capstone.Cs(*arch)
            self.md.detail = True      # operands: the memory each instruction touches (argus flags)

    # --- attach / reach ---
    def attach(self):
        self.dbg.SetAsync(False)
        self.target = self.dbg.CreateTarget("")
        err = lldb.SBError()
        self.process = self.target.AttachToProcessWithID(self.dbg.GetListener(), self.p["pid"], err)
        if not err.Success():
            raise RuntimeError(f"failed to attach to process {self.p['pid']}: {err.GetCString()}")
        tid = self.p["tid"] or self.p["pid"]
        self.thread = self.process.GetThreadByID(tid)
        if not self.thread.IsValid():
            raise RuntimeError(f"process {self.p['pid']} has no thread {tid}")
        self.process.SetSelectedThread(self.thread)
        # the program's own signals pass through without interrupting a step
        sigs = self.process.GetUnixSignals()
        for k in range(sigs.GetNumSignals()):
            signo = sigs.GetSignalAtIndex(k)
            if sigs.GetSignalAsCString(signo) not in ("SIGTRAP", "SIGSTOP", "SIGKILL", "SIGINT"):
                sigs.SetShouldStop(signo, False)
                sigs.SetShouldNotify(signo, False)
                sigs.SetShouldSuppress(signo, False)
        exe = self.target.GetExecutable().GetFilename()
        self.app_modules = {m for m in ([exe] + list(self.p.get("app_modules") or [])) if m}
        self.deadline = time.monotonic() + self.p.get("timeout_s", 30)

    def remaining(self):
        left = getattr(self, "deadline", time.monotonic() + 30) - time.monotonic()
        if left <= 0:
            raise TimedOut()
        return left

    def step_out(self):
        """thread.StepOut() within the deadline: run asynchronously and wait for
        the stop; at the deadline interrupt the process and raise TimedOut.
        A synchronous StepOut of a frame blocked in a syscall would wait for
        the syscall (a sleep(60): a minute).  False when the process exited."""
        left = self.remaining()
        tid = self.thread.GetThreadID()
        listener, ev = self.dbg.GetListener(), lldb.SBEvent()
        while listener.GetNextEvent(ev):        # stale events: not this step's stop
            pass
        self.dbg.SetAsync(True)
        try:
            self.thread.StepOut()
            if not self._wait_stop(left):
                raise TimedOut()
        except RuntimeError:                    # exited meanwhile
            return False
        finally:
            self.dbg.SetAsync(False)
        thread = self.process.GetThreadByID(tid)
        if thread.IsValid():
            self.thread = thread
        return self.process.GetState() == lldb.eStateStopped

    def in_app(self, addr):
        mod = _module_name(addr)
        return mod in self.app_modules and addr.GetSymbol().GetType() != lldb.eSymbolTypeTrampoline

    def callee_module(self, addr):
        """The module that defines a call's target: through a PLT trampoline, the library."""
        sym = addr.GetSymbol()
        if sym.IsValid() and sym.GetType() == lldb.eSymbolTypeTrampoline:
            here = _module_name(addr)
            for ctx in self.target.FindSymbols(sym.GetName()):
                s, mod = ctx.GetSymbol(), ctx.GetModule()
                if s.IsValid() and s.GetType() in (lldb.eSymbolTypeCode, lldb.eSymbolTypeResolver) \
                        and mod.IsValid() and mod.GetFileSpec().GetFilename() != here:
                    return mod.GetFileSpec().GetFilename()
        return _module_name(addr)

    def reach(self):
        fn = self.p.get("function")
        if fn:
            names = [_function_name(f.GetPCAddress()) for f in self.thread]
            if fn in names and not self.p.get("next_call"):
                for _ in range(names.index(fn)):
                    if not self.step_out():
                        raise RuntimeError(f"process {self.p['pid']} exited")
                return True
            bp = self.target.BreakpointCreateByName(fn)
            if bp.GetNumLocations() == 0:
                self.target.BreakpointDelete(bp.GetID())
                raise RuntimeError(f"function {fn} not found in process {self.p['pid']}")
            bp.SetThreadID(self.thread.GetThreadID())
            self.bp = bp
            self.dbg.SetAsync(True)
            self.process.Continue()
            reached = self._wait_stop(self.remaining())
            self.dbg.SetAsync(False)
            self.target.BreakpointDelete(bp.GetID())
            self.bp = None
            if not reached:
                self.result["stop_reason"] = "not_reached"
                return False
            self.thread = self.process.GetThreadByID(self.thread.GetThreadID())
            return True
        for _ in range(64):       # no function: climb out of library frames into the app
            if self.in_app(self.thread.GetFrameAtIndex(0).GetPCAddress()) or self.thread.GetNumFrames() < 2:
                break
            if not self.step_out():
                raise RuntimeError(f"process {self.p['pid']} exited")
        return True

    def _wait_stop(self, timeout_s):
        """Waits for the process to stop again after an asynchronous resume,
        by pulling its events: the debugger is always our own (main), so
        nobody else takes them, and pulling the stop event is what makes
        lldb finish the stop (the thread list and frames are current only
        after it; a stop read from the public state alone, with its event
        still queued, left the thread with no frames under load).
        At the deadline: interrupt, False."""
        listener = self.dbg.GetListener()
        ev = lldb.SBEvent()
        gone = (lldb.eStateExited, lldb.eStateDetached, lldb.eStateCrashed)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not listener.WaitForEvent(1, ev):     # whole seconds only: at most 1 s past the deadline
                if self.process.GetState() in gone:
                    raise RuntimeError(f"process {self.p['pid']} exited")
                continue
            if not lldb.SBProcess.EventIsProcessEvent(ev):
                continue
            st = lldb.SBProcess.GetStateFromEvent(ev)
            if st == lldb.eStateStopped and not lldb.SBProcess.GetRestartedFromEvent(ev):
                return True
            if st in gone:
                raise RuntimeError(f"process {self.p['pid']} exited")
        self.process.Stop()
        self._drain_until_stopped()
        return False

    def _drain_until_stopped(self):
        listener = self.dbg.GetListener()
        ev = lldb.SBEvent()
        for _ in range(10):
            if self.process.GetState() == lldb.eStateStopped:
                return
            listener.WaitForEvent(1, ev)

    # --- step ---
    def insn_record(self, i, frame):
        pc = frame.GetPC()
        addr = frame.GetPCAddress()
        err = lldb.SBError()
        code = self.process.ReadMemory(pc, 16, err)
        rec = {"i": i, "pc": pc, "function": _function_name(addr), "module": _module_name(addr),
               "bytes": None, "asm": None, "size": None}
        if err.Success() and code:
            if self.md is not None:
                insn = next(self.md.disasm(code, pc, 1), None)
                if insn is not None:
                    rec.update(bytes=insn.bytes.hex(), asm=f"{insn.mnemonic} {insn.op_str}".strip(),
                               size=insn.size)
                    mem = self.mem_operands(frame, insn)
                    if mem:
                        rec["mem"] = mem
                    return rec, insn
            rec["bytes"] = code.hex()
        return rec, None

    def mem_operands(self, frame, insn):
        """[{addr, size, access, value, base}] for the x86 memory operands of insn, with the
        effective address from the thread's registers and the value there before it runs."""
        if insn.mnemonic in ("lea", "nop", "endbr64") or insn.mnemonic.startswith(("push", "pop", "call", "ret")):
            return []
        try:
            from capstone import x86 as cs_x86
            ops = [op for op in insn.operands if op.type == cs_x86.X86_OP_MEM]
        except Exception:         # another architecture: no operand analysis
            return []
        out = []
        for op in ops:
            m = op.mem
            if m.segment != 0:                      # fs: / gs: (TLS): no segment base here
                continue
            base = insn.reg_name(m.base) if m.base else None
            ea = m.disp
            if base == "rip":
                ea += insn.address + insn.size
            elif base:
                ea += frame.FindRegister(base).GetValueAsUnsigned()
            if m.index:
                ea += frame.FindRegister(insn.reg_name(m.index)).GetValueAsUnsigned() * m.scale
            ea &= 0xFFFFFFFFFFFFFFFF
            size = op.size if op.size in (1, 2, 4, 8) else 8
            err = lldb.SBError()
            value = self.process.ReadUnsignedFromMemory(ea, size, err)
            access = ("r" if op.access & capstone.CS_AC_READ else "") + ("w" if op.access & capstone.CS_AC_WRITE else "")
            out.append({"addr": ea, "size": size, "access": access or "r", "base": base,
                        "value": value if err.Success() else None})
        return out

    def settled_thread(self):
        """self.thread with a readable frame 0.  The SBThread held from
        before an asynchronous step-out or continue can come back stale (no
        frames, pc all ones) although the process has stopped: fetch it
        again by its id while the stop settles, for at most a second.  False
        when it never comes back (the thread or process is gone)."""
        tid = self.thread.GetThreadID()
        for _ in range(100):
            pc = self.thread.GetFrameAtIndex(0).GetPC()
            if pc != lldb.LLDB_INVALID_ADDRESS:
                return True
            if self.process.GetState() != lldb.eStateStopped:
                return False
            thread = self.process.GetThreadByID(tid)
            if thread.IsValid():
                self.thread = thread
            time.sleep(0.01)
        return False

    def step(self):
        res = self.result
        if not self.settled_thread():
            res["stop_reason"] = "exited"
            return
        start_depth = self.thread.GetNumFrames()
        res["stacks"].append({"i": 0, "function": _function_name(self.thread.GetFrameAtIndex(0).GetPCAddress()),
                              "frames": _stack(self.thread, self.target)})
        for i in range(self.p.get("max_steps", 2000)):
            self.remaining()
            if not self.settled_thread():
                res["stop_reason"] = "exited"
                return
            frame = self.thread.GetFrameAtIndex(0)
            rec, insn = self.insn_record(i, frame)
            res["instructions"].append(rec)
            is_call = insn is not None and insn.mnemonic.startswith("call")
            depth_before = self.thread.GetNumFrames()
            self.thread.StepInstruction(False)
            if self.process.GetState() != lldb.eStateStopped:
                res["stop_reason"] = "exited"
                return
            frame = self.thread.GetFrameAtIndex(0)
            addr = frame.GetPCAddress()
            if is_call and not self.in_app(addr):
                callee, module = _function_name(addr), self.callee_module(addr)
                if not self.step_out() or self.process.GetState() != lldb.eStateStopped:
                    res["stop_reason"] = "exited"
                    return
                while self.thread.GetNumFrames() > depth_before and not self.in_app(
                        self.thread.GetFrameAtIndex(0).GetPCAddress()):
                    if not self.step_out():  # a PLT stub's jump: leave the library too
                        res["stop_reason"] = "exited"
                        return
                res["calls"].append({"i": i, "pc": rec["pc"], "callee": callee, "module": module,
                                     "return_value": _return_register(self.thread.GetFrameAtIndex(0))})
                continue
            if is_call and _is_entry(self.target, addr, frame.GetPC()):
                res["stacks"].append({"i": i + 1, "function": _function_name(addr),
                                      "frames": _stack(self.thread, self.target)})
            if self.p.get("function") and self.thread.GetNumFrames() < start_depth:
                res["stop_reason"] = "returned"
                return
        res["stop_reason"] = "max_steps"

    def leave(self):
        bp = getattr(self, "bp", None)
        if bp is not None:
            self.target.BreakpointDelete(bp.GetID())
        proc = getattr(self, "process", None)
        if proc is not None and proc.IsValid() and proc.GetState() == lldb.eStateStopped:
            proc.Detach()

    def run(self):
        try:
            self.attach()
            if self.reach():
                self.step()
        except TimedOut:
            self.result["stop_reason"] = "timeout"      # what was recorded until then stands
        except Exception as e:      # reported in the result file, one line
            self.result["error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
            self.result["stop_reason"] = self.result["stop_reason"] or "error"
        finally:
            try:
                self.leave()
            finally:
                self.result["ended_ns"] = time.monotonic_ns()
                write_result(self.p["result"], self.result)
        return self.result


def write_result(path, result):
    """The result as a new 0600 file renamed over path, written through a
    verified fd of its directory: a real directory owned by root or by us and
    not writable by others unless sticky (like /tmp), so a planted symlink or a
    swapped directory never receives a trace of another process.  The same
    rules as argus.tracer.safe_files, written out again because lldb's own Python
    runs this file and need not have Argus installed."""
    d, name = os.path.split(os.path.abspath(path))
    os.makedirs(d, mode=0o700, exist_ok=True)
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(dfd)
        if st.st_uid not in (0, os.geteuid()) or (st.st_mode & 0o022 and not st.st_mode & 0o1000):
            raise RuntimeError(f"refusing to write {path}: its directory is another user's or writable by others")
        tmp = f".{name}.{os.getpid()}.{os.urandom(8).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        with os.fdopen(fd, "w") as f:
            json.dump(result, f)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    finally:
        os.close(dfd)


def main():
    debugger = lldb.SBDebugger.Create(False)
    try:
        res = Tracer(debugger, PARAMS).run()
        # said before lldb is torn down: liblldb may die in Destroy, and the
        # result (already written) must not be lost with it
        print(f"argus lldb trace: {len(res['instructions'])} instructions, {len(res['calls'])} library calls, "
              f"{len(res['stacks'])} stacks, stop: {res['stop_reason']}"
              + (f", error: {res['error']}" if res["error"] else "") + f" -> {PARAMS['result']}", flush=True)
    finally:
        lldb.SBDebugger.Destroy(debugger)
    return 0 if res["error"] is None else 1


def __lldb_init_module(debugger, internal_dict):
    # A debugger of our own, not the lldb binary's: the driver's event thread
    # pulls the events of the debugger it runs, so an asynchronous step-out
    # or continue on that one raced it for the stop (CI saw a step wait out
    # the whole deadline, and a stale thread read as "exited").  On our own
    # debugger only _wait_stop listens.
    main()


if __name__ == "__main__":
    sys.exit(main())
