"""Which global variables a function reads: bp_watch candidates from a stack.

A RepeatedYield thread polls a flag the kernel never sees; its recorded user
stack names the loop's function (diagnose/stacks.py), and the flag is most
likely a global that function - or a function it calls directly - reads.

Algorithm, on the ELF file alone (the process may be gone; the file is only
read, never executed):
  1. the function containing a virtual address: the image's symbols
     (symbols.elf_info, cached: .symtab, else .dynsym);
  2. its bytes from the file (vaddr -> file offset through PT_LOAD) are
     disassembled with capstone (x86-64);
  3. every rip-relative memory operand (mov eax, [rip + X]; cmp [rip + X], 0)
     is an absolute address; one that falls in a data object (STT_OBJECT /
     STT_TLS symbol) names a candidate; direct calls to other functions of
     the same file are followed one level (a check helper such as
     `flag_is_set()` called by the loop);
  4. candidates are ranked: read and then tested by a conditional branch
     within TEST_WINDOW instructions first (a flag is read to be checked),
     then by how many reads were seen (a store alone is no read).  For a caller
     frame (a return address) the direct call just before it names the
     function that was running, whose frame frame-pointer unwinding lost
     (the libc leaf keeps no frame pointer): its globals rank first.
Globals reached through the GOT (shared objects' default-visibility
variables) and heap flags are not found: the caller keeps the polled
addresses as the other kind of candidate.

Without a stack (pollers): the functions of an image that call one of the
library functions a polling loop waits with (sched_yield, usleep, ...),
found by their direct calls (`call stub`, where the PLT stub is `jmp
[rip + GOT]`, or `call [rip + GOT]` with -fno-plt) whose GOT slot the
image's JUMP_SLOT / GLOB_DAT relocation names; each with the globals it
reads (steps 3-4).  At most MAX_SCAN_BYTES of code are decoded.

Invariants: at most MAX_FUNCTION_BYTES are decoded per function and one
level of callees; unknown architecture or unreadable file -> [].
"""
import bisect
import os

import capstone
from capstone import x86 as cs_x86

from argus.debugger.base import DebuggerError
from argus.debugger.symbols import elf_info

MAX_FUNCTION_BYTES = 1 << 16
MAX_CALLEES = 16
MAX_SCAN_BYTES = 8 << 20
TEST_WINDOW = 3           # instructions from a read to the branch that checks it (mov; test; jcc)


class _Image:
    def __init__(self, path):
        from elftools.elf.elffile import ELFFile
        self.path = path
        _, _, syms, funcs = elf_info(path, os.stat(path).st_mtime_ns)
        self.funcs = list(funcs)
        self.starts = [f[0] for f in self.funcs]
        objs = sorted((v, max(s, 1), n) for n, (v, s, t) in syms.items() if t in ("STT_OBJECT", "STT_TLS") and v)
        self.objs, self.obj_starts = objs, [o[0] for o in objs]
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if elf["e_machine"] != "EM_X86_64":
                raise DebuggerError(f"{path}: not x86-64")
            self.loads = [(s["p_vaddr"], s["p_filesz"], s["p_offset"]) for s in elf.iter_segments()
                          if s["p_type"] == "PT_LOAD"]

    def function_at(self, va):
        i = bisect.bisect_right(self.starts, va) - 1
        if i >= 0:
            start, size, name = self.funcs[i]
            if start <= va < start + max(size, 1):
                return start, size, name
        return None

    def object_at(self, va):
        i = bisect.bisect_right(self.obj_starts, va) - 1
        if i >= 0 and self.objs[i][0] <= va < self.objs[i][0] + self.objs[i][1]:
            return self.objs[i][2]
        return None

    def got_names(self):
        """{GOT slot address: imported symbol name} (JUMP_SLOT, GLOB_DAT)."""
        from elftools.elf.elffile import ELFFile
        from elftools.elf.relocation import RelocationSection
        out = {}
        with open(self.path, "rb") as f:
            elf = ELFFile(f)
            for sec in elf.iter_sections():
                if not isinstance(sec, RelocationSection) or not sec["sh_link"]:
                    continue
                syms = elf.get_section(sec["sh_link"])
                for rel in sec.iter_relocations():
                    if rel["r_info_sym"]:
                        name = syms.get_symbol(rel["r_info_sym"]).name
                        if name:
                            out[rel["r_offset"]] = name.split("@", 1)[0]
        return out

    def code(self, start, size):
        for va, filesz, off in self.loads:
            if va <= start and start + size <= va + filesz:
                with open(self.path, "rb") as f:
                    f.seek(off + start - va)
                    return f.read(size)
        return b""


def _refs(md, img, start, size, call_ending_at=None):
    """(data addresses read, those of them a conditional branch tests within
    TEST_WINDOW instructions, direct call targets, the target of the direct
    call ending at call_ending_at or None) of one function.  A store alone
    (mov [rip + X], reg: a counter written back) is no read."""
    data, tested, calls, active = [], [], [], None
    insns = list(md.disasm(img.code(start, min(size, MAX_FUNCTION_BYTES)), start))
    for k, insn in enumerate(insns):
        for op in insn.operands:
            if op.type == cs_x86.X86_OP_MEM and op.mem.base == cs_x86.X86_REG_RIP and insn.mnemonic != "lea":
                if op.access == capstone.CS_AC_WRITE:
                    continue
                addr = insn.address + insn.size + op.mem.disp
                data.append(addr)
                if any(n.group(capstone.CS_GRP_JUMP) and n.mnemonic != "jmp" for n in insns[k + 1:k + 1 + TEST_WINDOW]):
                    tested.append(addr)
            elif op.type == cs_x86.X86_OP_IMM and insn.group(capstone.CS_GRP_CALL):
                calls.append(op.imm)
                if insn.address + insn.size == call_ending_at:
                    active = op.imm
    return data, tested, calls, active


def _globals_of(md, img, fn, follow_calls=True):
    """Global variable names read by fn (and its direct callees): those a
    branch tests first (a flag is read to be checked), then the most
    referenced."""
    data, tested, calls, _ = _refs(md, img, fn[0], fn[1])
    seen = {fn[0]}
    for target in calls[:MAX_CALLEES] if follow_calls else ():
        callee = img.function_at(target)
        if callee is not None and callee[0] not in seen and callee[1] > 0:
            seen.add(callee[0])
            d, t, _, _ = _refs(md, img, callee[0], callee[1])
            data, tested = data + d, tested + t
    counts, tests, order = {}, {}, []
    for addr in data:
        name = img.object_at(addr)
        if name is not None:
            if name not in counts:
                order.append(name)
            counts[name] = counts.get(name, 0) + 1
    for addr in tested:
        name = img.object_at(addr)
        if name is not None:
            tests[name] = tests.get(name, 0) + 1
    return sorted(order, key=lambda n: (-tests.get(n, 0), -counts[n], order.index(n)))


def globals_read(path, vaddr, return_address=False):
    """(function name, [global variable names]) for the function of `path`
    at `vaddr`, most likely first; (None, []) when unknown.
    return_address: vaddr is a caller frame's return address.  Frame-pointer
    unwinding skips the frame of whatever the innermost (libc) function was
    called from, so the direct call just before the return address names
    the function that was really looping: its globals come first, then the
    caller's own."""
    try:
        img = _Image(path)
    except Exception:  # gone, unreadable, not ELF, not x86-64 (pyelftools raises its own errors)
        return None, []
    fn = img.function_at(vaddr - 1 if return_address else vaddr)
    if fn is None or fn[1] <= 0:
        return None, []
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    active = _refs(md, img, fn[0], fn[1], vaddr)[3] if return_address else None
    callee = img.function_at(active) if active is not None else None
    if callee is None or callee[1] <= 0:
        return fn[2], _globals_of(md, img, fn)
    first = _globals_of(md, img, callee)
    return callee[2], first + [n for n in _globals_of(md, img, fn, follow_calls=False) if n not in first]


def _rip_target(insn):
    """The absolute address of insn's [rip + disp] operand, or None."""
    for op in insn.operands:
        if op.type == cs_x86.X86_OP_MEM and op.mem.base == cs_x86.X86_REG_RIP:
            return insn.address + insn.size + op.mem.disp
    return None


def _stub_target(md, img, addr, got):
    """The imported name a PLT stub at addr jumps through, or None."""
    for insn in md.disasm(img.code(addr, 16) or b"", addr):
        if insn.mnemonic == "jmp":
            return got.get(_rip_target(insn))
        if insn.mnemonic != "endbr64":
            return None
    return None


def pollers(path, callees):
    """[(function name, [global names read])] of the functions of path that
    call one of `callees` (imported names), in address order; [] when
    unknown.  Functions that read no global are left out."""
    try:
        img = _Image(path)
        got = img.got_names()
    except Exception:  # gone, unreadable, not ELF, not x86-64 (pyelftools raises its own errors)
        return []
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    stubs, out, budget, done = {}, [], MAX_SCAN_BYTES, set()
    for fn in img.funcs:
        if fn[1] <= 0 or budget <= 0 or fn[0] in done:
            continue
        done.add(fn[0])
        budget -= fn[1]
        calls = False
        for insn in md.disasm(img.code(fn[0], min(fn[1], MAX_FUNCTION_BYTES)), fn[0]):
            if not insn.group(capstone.CS_GRP_CALL):
                continue
            op = insn.operands[0] if insn.operands else None
            if op is not None and op.type == cs_x86.X86_OP_IMM:
                if op.imm not in stubs:
                    stubs[op.imm] = _stub_target(md, img, op.imm, got)
                name = stubs[op.imm]
            else:
                name = got.get(_rip_target(insn))
            if name in callees:
                calls = True
                break
        if calls:
            names = _globals_of(md, img, fn)
            if names:
                out.append((fn[2], names))
    return out
