"""The static trampoline generator (libargus-static-gen.so through ctypes)
on known bytes, and which hooks of a spec concern a library."""
import capstone
import pytest

from argus.hooks import static_rewrite
from argus.hooks.static_rewrite import ARCH_ARM64, ARCH_X86_64


@pytest.fixture(scope="module")
def gen():
    return static_rewrite.Generator()


def _x86(code, at):
    """[(mnemonic, operands, absolute address of a [rip+d] operand or None)]"""
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    out = []
    for i in md.disasm(code, at):
        rip = [i.address + i.size + op.mem.disp for op in i.operands
               if op.type == capstone.CS_OP_MEM and op.mem.base == capstone.x86.X86_REG_RIP]
        out.append((i.mnemonic, i.op_str, rip[0] if rip else None))
    return out


def test_x86_rip_relative_prologue_is_relocated(gen):
    # push rbx; mov rax, [rip+0x2ee9] at 0x1110 (reads 0x1118 + 0x2ee9); then ret
    code = bytes.fromhex("53488b05e92e0000") + b"\xc3"
    tramp, patch = gen.trampoline(ARCH_X86_64, code, len(code), 0x1110, 0x6000, 0x7000, 48, 3)
    assert patch == b"\xe9" + (0x6000 - 0x1115).to_bytes(4, "little", signed=True)
    insns = _x86(tramp, 0x6000)
    assert ("lea", 0x1110) in [(m, a) for m, _, a in insns]          # rdx = fn
    assert ("mov", 0x7000) in [(m, a) for m, _, a in insns]          # rax = the slot
    assert ("movabs", "rdi, 0x30", None) in insns and ("movabs", "rsi, 3", None) in insns
    i = insns.index(("pop", "rdi", None))
    push, mov, back = insns[i + 1:i + 4]
    assert push[:2] == ("push", "rbx")
    assert mov[0] == "mov" and mov[2] == 0x1118 + 0x2ee9                     # the moved load reads the same address
    assert back[0] == "jmp" and int(back[1], 16) == 0x1110 + 8       # back after the moved bytes


@pytest.mark.parametrize("arch,code,reason", [
    (ARCH_X86_64, b"\xc3", "function ends"),                 # a lone ret
    (ARCH_ARM64, bytes.fromhex("5f7c5fc8") * 2, "refused"),   # ldxr: exclusive monitor
])
def test_refused_prologue_is_a_reason(gen, arch, code, reason):
    with pytest.raises(ValueError) as e:
        gen.trampoline(arch, code, 0, 0x1000, 0x8000, 0x9000, 48, 0)
    assert e.value.args[0]


def test_out_of_reach_slot_is_refused(gen):
    with pytest.raises(ValueError):
        gen.trampoline(ARCH_X86_64, bytes.fromhex("554889e5") + b"\x90" * 8, 12, 0x1000, 0x8000,
                       0x8000 + (3 << 31), 48, 0)


def test_x86_return_hook_has_a_return_stub(gen):
    """A hook with a return record (static_abi.h's word): the entry passes
    the saved registers (r8 = rsp) and the stub's address (r9); the stub,
    after the jump back, calls the slot again with bit 31 set and the result
    (rcx = rax) and returns through the address the recorder wrote."""
    code = bytes.fromhex("534889fb") + b"\x90" * 8                # push rbx; mov rbx, rdi
    word = 48 | 49 << 16
    tramp, _ = gen.trampoline(ARCH_X86_64, code, len(code), 0x1110, 0x6000, 0x7000, word, 3)
    insns = _x86(tramp, 0x6000)
    addrs = [i.address for i in capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64).disasm(tramp, 0x6000)]
    back = next(k for k, (m, o, a) in enumerate(insns) if m == "jmp" and int(o, 16) == 0x1110 + 5)
    assert ("mov", "r8, rsp", None) in insns[:back]
    assert [a for m, o, a in insns if m == "lea" and o.startswith("r9,")] == [addrs[back + 1]]
    stub = insns[back + 1:]
    assert [m for m, _, _ in stub[:4]] == ["sub", "push", "push", "sub"]
    assert ("mov", "rcx, rax", None) in stub and ("movabs", f"rdi, {hex(word | 1 << 31)}", None) in stub
    assert ("mov", 0x7000) in [(m, a) for m, _, a in stub]          # the slot again
    assert [m for m, _, _ in stub[-4:]] == ["add", "pop", "pop", "ret"]
    plain, _ = gen.trampoline(ARCH_X86_64, code, len(code), 0x1110, 0x6000, 0x7000, 48, 3)
    assert not [o for m, o, _ in _x86(plain, 0x6000) if m in ("lea", "mov") and o.startswith(("r9,", "r8,"))]


def test_select_hooks_return_word():
    from argus.hooks.hookspec import Hook
    spec = [Hook("a", 48, 49, ("libx.so.1",)), Hook("b", 48, 49, ("libx.so.1",), 0, "-", 7, 32),
            Hook("c", 48, 49, ("libx.so.1",), 0, "-", 1, 64, "xcb")]
    warned = []
    picked = static_rewrite.select_hooks(spec, {"libx.so.1"}, lambda s: True, warned.append)
    assert picked == [(0, "a", 48, 49, 0), (1, "b", 48, 49, 7 << 24 | 1 << 27), (2, "c", 48, 0, 0)]
    assert warned == ["c: its return filter (ret_deref) needs `argus run`; entry only here"]


def test_select_hooks_by_soname_or_definition():
    spec = [("a", 48, 0, ("libx.so.1",)), ("b", 50, 0, ("liby.so",)), ("c", 50, 0, ("-",)), ("d", 50, 0, ("-",)),
            ("e", 50, 0, ("libz.so.1", "libx.so.[0-9]"))]      # alternatives: a pattern matches the soname
    picked = static_rewrite.select_hooks(spec, {"libx.so.1"}, lambda s: s == "c")
    assert picked == [(0, "a", 48, 0, 0), (2, "c", 50, 0, 0), (4, "e", 50, 0, 0)]    # probe ids are spec indexes


def test_hooks_whose_obj_needs_the_agent_are_left_out():
    from argus.hooks.hookspec import Hook
    spec = [Hook("a", 50, 0, ("libx.so.1",)), Hook("b", 50, 0, ("libx.so.1",), 1, "-"),
            Hook("c", 50, 0, ("libx.so.1",), 0, "ctx_default")]
    warned = []
    picked = static_rewrite.select_hooks(spec, {"libx.so.1"}, lambda s: True, warned.append)
    assert picked == [(0, "a", 50, 0, 0), (2, "c", 50, 0, 0)]     # null_obj: NULL stays 0 here
    assert warned == ["b: its obj (argument 1) needs `argus run`; skipped"]
