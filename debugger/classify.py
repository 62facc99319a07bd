"""Write or read?  Classifying a hardware-watchpoint hit after the fact.

x86 debug registers watch "write" or "read or write" (there is no read-only
mode), and a data breakpoint is a trap: it fires after the access, with the
pc at the next instruction.  So a read-or-write watch reports every access
without saying which it was.  Two ways to tell, in order:

  insn   the instruction that made the access is the one ending at pc.  The
         function containing pc-1 is found in the image's ELF symbols
         (symbols.image_at), its bytes are read from the process and
         disassembled linearly with capstone from the function start; the
         instruction whose end is pc is the access, and it is a write when a
         memory operand has CS_AC_WRITE (mov [m], r; add [m], 1; xchg;
         lock cmpxchg; ...), else a read.  Cached per pc.
  value  no symbol covers pc (stripped code, JIT): the access is a write when
         the flag's value differs from the last value seen, else a read.
         This misattributes a write that stores the value already there
         (reported as a read) and, when samples are handled late, a read
         that happened just before another thread's write.

The capstone seam is this module only; nothing else decodes instructions for
the watch path.
"""
import capstone
from capstone import x86 as cs_x86

from argus.debugger import procmem, symbols
from argus.debugger.base import DebuggerError

MAX_FUNCTION_BYTES = 1 << 20
RMW_DEST0 = ("cmpxchg", "cmpxchg8b", "cmpxchg16b", "xadd")


class AccessClassifier:
    def __init__(self, pid):
        self.pid = pid
        self.md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
        self.md.detail = True
        self.by_pc = {}
        self.images = symbols.ImageCache(pid)
        self.last_value = {}

    def decode_kind(self, pc):
        """'write' / 'read' from the instruction ending at pc, or None."""
        if pc in self.by_pc:
            return self.by_pc[pc]
        kind = None
        try:
            img = self.images.at(pc - 1)
            fn = img.function_at(pc - 1) if img is not None else None
            if fn is not None and 0 < fn[1] <= MAX_FUNCTION_BYTES:
                start, size, _ = fn
                code = procmem.read(self.pid, start, size)
                for insn in self.md.disasm(code, start):
                    if insn.address + insn.size == pc:
                        kind = self.insn_kind(insn)
                        break
                    if insn.address >= pc:
                        break
        except DebuggerError:
            kind = None
        self.by_pc[pc] = kind
        return kind

    @staticmethod
    def insn_kind(insn):
        if insn.mnemonic in ("lea", "nop") or insn.mnemonic.startswith("prefetch"):
            return None
        mem = [op for op in insn.operands if op.type == cs_x86.X86_OP_MEM]
        if not mem:
            return None
        if any(op.access & capstone.CS_AC_WRITE for op in mem):
            return "write"
        # capstone 5 marks the destination of cmpxchg / xadd as read only; they store
        if insn.mnemonic.split()[-1] in RMW_DEST0 and insn.operands[0].type == cs_x86.X86_OP_MEM:
            return "write"
        return "read"

    def classify(self, addr, pc, value):
        """(kind, how) for an access to addr at pc that left `value` there."""
        kind = self.decode_kind(pc)
        last = self.last_value.get(addr)
        self.last_value[addr] = value
        if kind is not None:
            return kind, "insn"
        return ("write" if last is not None and value != last else "read"), "value"
