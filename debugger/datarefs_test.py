"""Globals a function reads, from the real flag_handshake binary (built with
the package): its poll loop reads `handshake_flag`; from a return address in
main, the function main was calling when the stack was walked comes first."""
import os
import shutil
import subprocess

import pytest

from argus.debugger.datarefs import globals_read, pollers
from argus.debugger.symbols import elf_info
from support.programs import program

BIN = program("argus-flag-handshake")   # a test program: built by the tests, not shipped


def sym(name):
    _, _, syms, _ = elf_info(BIN, os.stat(BIN).st_mtime_ns)
    return syms[name][0]


@pytest.mark.skipif(not os.path.exists(BIN), reason="needs the built test programs")
def test_poll_loop_reads_the_flag():
    assert globals_read(BIN, sym("handshake_wait") + 1) == ("handshake_wait", ["handshake_flag"])
    fn, names = globals_read(BIN, sym("handshake_worker") + 1)
    assert fn == "handshake_worker" and "handshake_flag" not in names   # it only stores the flag
    assert "worker_tid" not in names and "start_ms" in names


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


@pytest.mark.skipif(not os.path.exists(BIN), reason="needs the built test programs")
def test_pollers_without_a_stack():
    """The functions calling sched_yield / usleep through the PLT, with the
    globals they read: the poll loop's flag first (its read is tested)."""
    found = pollers(BIN, {"sched_yield", "usleep"})
    assert found[0] == ("handshake_wait", ["handshake_flag"])
    assert [f for f, _ in found] == ["handshake_wait", "main"]     # main yields until the worker runs
    assert pollers(BIN, {"no_such_import"}) == []
    assert pollers("/nonexistent/file", {"usleep"}) == []


def test_pollers_of_a_rotated_loop(tmp_path):
    """gcc -O1's rotated loop (tests/programs/split_poll.c): the flag is
    tested at two sites, the counter only bumped; the flag ranks first."""
    if not shutil.which("cc"):
        pytest.skip("needs cc")
    src = os.path.join(os.path.dirname(__file__), "..", "tests", "programs", "split_poll.c")
    exe = str(tmp_path / "split")
    subprocess.run(["cc", "-O1", "-o", exe, src], check=True)
    assert pollers(exe, {"usleep"})[0] == ("split_wait", ["split_ready", "split_polls"])
