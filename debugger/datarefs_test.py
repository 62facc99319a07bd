"""Globals a function reads, from the real flag_handshake binary (built with
the package): its poll loop reads `handshake_flag`; from a return address in
main, the function main was calling when the stack was walked comes first."""
import os

import pytest

import argus
from argus.debugger.datarefs import globals_read
from argus.debugger.symbols import elf_info

BIN = os.path.join(argus.NATIVE_DIR, "argus-flag-handshake")


def sym(name):
    _, _, syms, _ = elf_info(BIN, os.stat(BIN).st_mtime_ns)
    return syms[name][0]


@pytest.mark.skipif(not os.path.exists(BIN), reason="needs the built test programs")
def test_poll_loop_reads_the_flag():
    assert globals_read(BIN, sym("handshake_wait") + 1) == ("handshake_wait", ["handshake_flag"])
    fn, names = globals_read(BIN, sym("handshake_worker") + 1)
    assert fn == "handshake_worker" and "handshake_flag" in names


@pytest.mark.skipif(not os.path.exists(BIN), reason="needs the built test programs")
def test_return_address_names_the_callee_first():
    import capstone
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    start = sym("main")
    with open(BIN, "rb") as f:
        from elftools.elf.elffile import ELFFile
        elf = ELFFile(f)
        text = elf.get_section_by_name(".text")
        code = text.data()[start - text["sh_addr"]:start - text["sh_addr"] + 4096]
    ret = next(i.address + i.size for i in md.disasm(code, start)
               if i.mnemonic == "call" and i.op_str == hex(sym("handshake_wait")))
    fn, names = globals_read(BIN, ret, return_address=True)
    assert fn == "handshake_wait" and names[0] == "handshake_flag"


def test_unreadable_or_unknown():
    assert globals_read("/nonexistent", 0x1000) == (None, [])
    assert globals_read(BIN if os.path.exists(BIN) else "/bin/true", 1) == (None, [])
