"""Finding a data flag from two instruction streams of the same code (paper §4.3).

Input: two argus.lldb-trace/1 results (docs/lldb.md) of the same code, one
recorded while the thread spins (the hang) and one while it runs normally
(e.g. the same poll loop in a round that ended quickly).  Each instruction
carries pc, asm and its memory operands (effective address from the
thread's registers, value before it ran).

Algorithm:
  successors   for each stream, every executed pc -> the set of pcs that
               followed it (library calls stepped over do not break the
               chain: the next recorded pc is the return site).
  divergence   a pc executed in both streams whose successor sets differ:
               the normal stream went somewhere the spinning stream never
               did (the loop exit), or the reverse.  Ranked: branches first
               (j*, loop*, cmov*), then by how early the normal stream first
               took the new way (the first divergence in time).
  operands     for each divergence, walk back from its first divergent
               occurrence in the normal stream over at most WINDOW
               instructions (stopping at an earlier occurrence of the same
               branch: one loop iteration) and collect the memory operands
               read there; the same walk in the spinning stream gives the
               values the spinning thread saw.  Ranked: a value that differs
               between the streams first, then globals (rip-relative, or
               inside an image's symbol) before stack slots, then nearest
               to the branch.
  watch line   `bp_watch PID IMAGE SYMBOL` when the address resolves to a
               symbol of an image mapped in the live process (symbols.py),
               `bp_watch PID --address 0x... --size N` otherwise.

Invariants: streams are read, never evaluated; an empty or foreign input is
a DebuggerError with one line.
"""
from dataclasses import dataclass, field

from argus.debugger.base import DebuggerError
from argus.debugger import symbols

WINDOW = 32
BRANCH_PREFIXES = ("j", "loop", "cmov")
STACK_BASES = ("rsp", "rbp", "esp", "ebp", "sp", "x29")


@dataclass
class Operand:
    addr: int
    size: int
    base: str
    distance: int                 # instructions before the divergent branch (normal stream)
    pc: int
    asm: str
    function: str
    normal_values: list = field(default_factory=list)
    spinning_values: list = field(default_factory=list)
    symbol: str = None            # "IMAGE:SYMBOL" or "IMAGE:SYMBOL+0x8"
    watch: str = ""

    @property
    def differs(self):
        return bool(self.normal_values) and bool(self.spinning_values) and \
            set(self.normal_values) != set(self.spinning_values)

    @property
    def is_stack(self):
        return self.base in STACK_BASES

    def to_dict(self):
        return {"addr": self.addr, "size": self.size, "symbol": self.symbol, "read_at": self.pc,
                "asm": self.asm, "function": self.function, "distance": self.distance,
                "normal_values": self.normal_values, "spinning_values": self.spinning_values,
                "differs": self.differs, "stack": self.is_stack, "bp_watch": self.watch}


@dataclass
class Divergence:
    pc: int
    asm: str
    function: str
    normal_next: list
    spinning_next: list
    first_normal_index: int
    operands: list

    def to_dict(self):
        return {"pc": self.pc, "asm": self.asm, "function": self.function,
                "normal_next": self.normal_next, "spinning_next": self.spinning_next,
                "first_normal_index": self.first_normal_index,
                "operands": [o.to_dict() for o in self.operands]}


def _stream(doc, label):
    if not isinstance(doc, dict) or doc.get("schema") != "argus.lldb-trace/1":
        raise DebuggerError(f"the {label} trace is not an argus.lldb-trace/1 result")
    ins = doc.get("instructions")
    if not isinstance(ins, list) or len(ins) < 2:
        raise DebuggerError(f"the {label} trace has fewer than 2 instructions")
    return ins


def _successors(ins):
    succ = {}
    for a, b in zip(ins, ins[1:]):
        succ.setdefault(a["pc"], set()).add(b["pc"])
    return succ


def _is_branch(asm):
    return bool(asm) and asm.split()[0].startswith(BRANCH_PREFIXES)


def _reads_before(ins, k, branch_pc):
    """(distance, instruction, operand) read in the WINDOW instructions before ins[k]."""
    out = []
    for d in range(1, WINDOW + 1):
        j = k - d
        if j < 0 or ins[j]["pc"] == branch_pc:
            break
        for m in ins[j].get("mem") or []:
            if "r" in (m.get("access") or "r") and isinstance(m.get("addr"), int):
                out.append((d, ins[j], m))
    return out


def find(normal, spinning, pid=None, resolve=None, limit=10):
    """Ranked [Divergence] between two lldb-trace results (dicts).
    resolve(addr) -> "IMAGE:SYMBOL[+off]" or None (symbols of the live process)."""
    ni, si = _stream(normal, "normal"), _stream(spinning, "spinning")
    ns, ss = _successors(ni), _successors(si)
    pid = pid or normal.get("pid") or spinning.get("pid")
    first_idx = {}
    for k, r in enumerate(ni):
        first_idx.setdefault(r["pc"], k)
    asm = {r["pc"]: r for r in si + ni}
    cands = [pc for pc in ns if pc in ss and ns[pc] != ss[pc]]
    divs = []
    for pc in cands:
        new = ns[pc] - ss[pc]
        # first occurrence in the normal stream where it went the new way
        k = next((k for k in range(len(ni) - 1) if ni[k]["pc"] == pc and ni[k + 1]["pc"] in new),
                 first_idx[pc])
        ops = {}
        for d, r, m in _reads_before(ni, k, pc):
            key = (m["addr"], m["size"])
            if key not in ops:
                ops[key] = Operand(m["addr"], m["size"], m.get("base"), d, r["pc"], r.get("asm"), r.get("function"))
            if m.get("value") is not None and m["value"] not in ops[key].normal_values:
                ops[key].normal_values.append(m["value"])
        for k2, r in enumerate(si):           # what the spinning thread read there
            for m in r.get("mem") or []:
                o = ops.get((m.get("addr"), m.get("size")))
                if o is not None and m.get("value") is not None and m["value"] not in o.spinning_values:
                    o.spinning_values.append(m["value"])
        for o in ops.values():
            o.symbol = resolve(o.addr) if resolve and not o.is_stack else None
            o.watch = _watch_line(pid, o)
        ranked = sorted(ops.values(), key=lambda o: (not o.differs, o.is_stack, o.distance))
        a = asm[pc]
        divs.append(Divergence(pc, a.get("asm"), a.get("function"), sorted(ns[pc]), sorted(ss[pc]), k, ranked))
    divs.sort(key=lambda d: (not _is_branch(d.asm), d.first_normal_index))
    return divs[:limit]


def _watch_line(pid, o):
    if o.symbol and "+" not in o.symbol:
        image, sym = o.symbol.rsplit(":", 1)
        return f"bp_watch {pid} {image} {sym}"
    return f"bp_watch {pid} --address 0x{o.addr:x} --size {o.size}"


def live_resolver(pid):
    """addr -> "IMAGE:SYMBOL[+0xoff]" through the images mapped in pid (None when gone)."""
    images = symbols.ImageCache(pid)
    objects = {}      # image path -> its data objects sorted by runtime address

    def resolve(addr):
        try:
            img = images.at(addr)
        except DebuggerError:
            return None
        if img is None:
            return None
        if img.path not in objects:
            objects[img.path] = sorted((v + img.bias, size, name) for name, (v, size, typ) in img.syms.items()
                                       if typ in ("STT_OBJECT", "STT_TLS", "STT_COMMON") and v)
        for start, size, name in objects[img.path]:
            if start <= addr < start + max(size, 1):
                base = img.path.rsplit("/", 1)[-1]
                return f"{base}:{name}" if addr == start else f"{base}:{name}+0x{addr - start:x}"
        return None
    return resolve
