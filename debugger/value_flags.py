"""Finding a data flag by the values two instruction streams read (paper §4.3).

divergence.py looks for a branch both streams executed and left differently.
An optimizing compiler can give one check of a flag two branch sites: gcc -O1
rotates `while (!ready) { yield(); }` into a test before the loop (`jne` out
of a call whose flag is already set) and a test at its bottom (`je` back
while it spins).  The normal stream then executes only the first branch and
the spinning stream only the second: no branch is shared, so no branch
divergence exists, yet the flag is plain in the data.  This module compares
what the streams READ, address by address, whatever instruction read it.

Input: the same two argus.lldb-trace/1 results as divergence.find (each
instruction's memory operands carry the effective address, the size, the
access and the value there before the instruction ran).

Algorithm:
  reads        for each stream, (addr, size) -> every value a reading operand
               (access r or rw) saw, with the instruction that read it.
  candidates   the addresses read in both streams whose sets of values
               differ.
  consistent   the spinning stream saw ONE value there, every time, and the
               normal stream saw a value the spinning one never did: the
               spinning thread keeps reading the same thing and the normal
               one read something else (a counter bumped each round differs
               too, but never consistently).
  tested by    in each stream, the first conditional branch within
               TEST_WINDOW instructions after each read, with no call in
               between (the check of the value; a return is crossed: a
               check helper such as flag_is_set()); the sites may differ
               between the streams.
  iterations   how often the spinning stream's hottest conditional branch
               ran (the loop's); "read every iteration" when the address was
               read at least that often, less one for the iteration the
               recording cut.
  ranking      consistent first, then globals before stack slots, then
               tested by a branch in both streams, then read every
               iteration, then more spinning reads, then the address.

Invariants: streams are read, never evaluated; bad input is the DebuggerError
divergence._stream raises.
"""
from dataclasses import dataclass, field

from argus.debugger import divergence

TEST_WINDOW = 8


@dataclass
class ValueFlag:
    addr: int
    size: int
    base: str
    normal_values: list = field(default_factory=list)     # distinct, in the order first seen
    spinning_values: list = field(default_factory=list)
    normal_reads: int = 0
    spinning_reads: int = 0
    iterations: int = 0                                     # of the spinning loop
    read_by: dict = field(default_factory=dict)             # stream -> {pc: (asm, function)}
    tested_by: dict = field(default_factory=dict)           # stream -> {pc: asm}
    symbol: str = None
    watch: str = ""

    @property
    def is_stack(self):
        return self.base in divergence.STACK_BASES

    @property
    def consistent(self):
        return len(self.spinning_values) == 1 and any(v not in self.spinning_values for v in self.normal_values)

    @property
    def every_iteration(self):
        return self.iterations > 0 and self.spinning_reads >= self.iterations - 1

    @property
    def split_sites(self):
        """Tested by a branch in each stream, never by the same one."""
        n, s = self.tested_by.get("normal") or {}, self.tested_by.get("spinning") or {}
        return bool(n) and bool(s) and not set(n) & set(s)

    def rank_key(self):
        tested = bool(self.tested_by.get("normal")) and bool(self.tested_by.get("spinning"))
        return (not self.consistent, self.is_stack, not tested, not self.every_iteration,
                -self.spinning_reads, self.addr)

    def to_dict(self):
        return {"addr": self.addr, "size": self.size, "symbol": self.symbol,
                "normal_values": self.normal_values, "spinning_values": self.spinning_values,
                "normal_reads": self.normal_reads, "spinning_reads": self.spinning_reads,
                "spinning_iterations": self.iterations, "every_iteration": self.every_iteration,
                "consistent": self.consistent, "stack": self.is_stack, "split_sites": self.split_sites,
                "read_by": {k: [{"pc": pc, "asm": a, "function": f} for pc, (a, f) in sorted(v.items())]
                            for k, v in self.read_by.items()},
                "tested_by": {k: [{"pc": pc, "asm": a} for pc, a in sorted(v.items())]
                              for k, v in self.tested_by.items()},
                "bp_watch": self.watch}


def _conditional(asm):
    op = (asm or "").split(" ", 1)[0]
    return op.startswith(("j", "loop", "cmov")) and op != "jmp"


def _next_test(ins, k):
    """(pc, asm) of the first conditional branch within TEST_WINDOW after
    ins[k], or None.  A call first ends the search: the value went elsewhere
    (a counter stored back before the loop yields), not into a check."""
    for r in ins[k + 1:k + 1 + TEST_WINDOW]:
        asm = r.get("asm") or ""
        if asm.startswith("call"):
            return None
        if _conditional(asm):
            return r["pc"], asm
    return None


def _reads(ins):
    """(addr, size) -> [(value, k)] of the reading operands of one stream."""
    out = {}
    for k, r in enumerate(ins):
        for m in r.get("mem") or []:
            if "r" in (m.get("access") or "r") and isinstance(m.get("addr"), int) and m.get("value") is not None:
                out.setdefault((m["addr"], m.get("size")), []).append((m["value"], k, m.get("base")))
    return out


def _iterations(ins):
    counts = {}
    for r in ins:
        if _conditional(r.get("asm")):
            counts[r["pc"]] = counts.get(r["pc"], 0) + 1
    return max(counts.values(), default=0)


def find(normal, spinning, pid=None, resolve=None, limit=10):
    """Ranked [ValueFlag]: the addresses the two streams read differently.
    resolve(addr) -> "IMAGE:SYMBOL[+off]" or None, as for divergence.find."""
    streams = {"normal": divergence._stream(normal, "normal"), "spinning": divergence._stream(spinning, "spinning")}
    pid = pid or normal.get("pid") or spinning.get("pid")
    reads = {label: _reads(ins) for label, ins in streams.items()}
    iterations = _iterations(streams["spinning"])
    flags = []
    for key in reads["normal"].keys() & reads["spinning"].keys():
        f = ValueFlag(key[0], key[1], reads["spinning"][key][0][2], iterations=iterations)
        for label in ("normal", "spinning"):
            ins, values = streams[label], getattr(f, f"{label}_values")
            for value, k, _ in reads[label][key]:
                if value not in values:
                    values.append(value)
                f.read_by.setdefault(label, {})[ins[k]["pc"]] = (ins[k].get("asm"), ins[k].get("function"))
                test = _next_test(ins, k)
                if test:
                    f.tested_by.setdefault(label, {})[test[0]] = test[1]
            setattr(f, f"{label}_reads", len(reads[label][key]))
        if set(f.normal_values) == set(f.spinning_values):
            continue
        f.symbol = resolve(f.addr) if resolve and not f.is_stack else None
        f.watch = divergence._watch_line(pid, f)
        flags.append(f)
    flags.sort(key=ValueFlag.rank_key)
    return flags[:limit]
