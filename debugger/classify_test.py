"""classify.AccessClassifier.insn_kind: hand-assembled x86-64 bytes in, access kind out."""
import capstone
import pytest

from argus.debugger.classify import AccessClassifier

CASES = [
    ("890500100000", "write"),        # mov dword ptr [rip + 0x1000], eax
    ("8b0500100000", "read"),         # mov eax, dword ptr [rip + 0x1000]
    ("8300 01", "write"),             # add dword ptr [rax], 1
    ("833800", "read"),               # cmp dword ptr [rax], 0
    ("f00fb10a", "write"),            # lock cmpxchg dword ptr [rdx], ecx (capstone says read)
    ("f00fc10a", "write"),            # lock xadd dword ptr [rdx], ecx
    ("488d0500100000", None),         # lea rax, [rip + 0x1000]: no access
    ("8707", "write"),                # xchg dword ptr [rdi], eax
    ("c70500100000 01000000", "write"),   # mov dword ptr [rip + 0x1000], 1
    ("0fb605 00100000", "read"),      # movzx eax, byte ptr [rip + 0x1000]
    ("01c8", None),                   # add eax, ecx: no memory operand
]


@pytest.mark.parametrize("hexbytes,kind", CASES)
def test_insn_kind(hexbytes, kind):
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    insn = next(md.disasm(bytes.fromhex(hexbytes.replace(" ", "")), 0x1000, 1))
    assert AccessClassifier.insn_kind(insn) == kind


def test_value_fallback_without_symbols():
    c = AccessClassifier(pid=0)
    c.by_pc = {0x10: None, 0x20: None}      # no function covers these pcs
    assert c.classify(0x5000, 0x10, 0) == ("read", "value")    # first sight: nothing to compare
    assert c.classify(0x5000, 0x10, 0) == ("read", "value")
    assert c.classify(0x5000, 0x20, 1) == ("write", "value")
    assert c.classify(0x5000, 0x10, 1) == ("read", "value")
