"""symbols: resolve in a live process (this one) and compare with where the
dynamic loader really put things (ctypes), for a shared object (libc, ASLR)
and for the interpreter's own globals; one-line errors otherwise."""
import ctypes
import ctypes.util
import os

import pytest

from argus.debugger import symbols
from argus.debugger.base import DebuggerError


def test_shared_object_variable_matches_the_loader():
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    real = ctypes.addressof(ctypes.c_void_p.in_dll(libc, "environ"))
    spec = symbols.resolve_watch(os.getpid(), "libc.so.6", "environ")
    assert spec.addr == real and spec.size == 8 and spec.label == "libc.so.6:environ"


def test_prefix_basename_and_python_runtime():
    real = ctypes.addressof(ctypes.c_int.in_dll(ctypes.pythonapi, "_PyRuntime"))
    img = None
    for m in symbols.procmem.maps(os.getpid()):
        if "libpython" in m.path:
            img = m.path
            break
    image = os.path.basename(img) if img else "python3"
    addr, size, typ = symbols.LoadedImage(os.getpid(), image).symbol("_PyRuntime")
    assert addr == real and typ == "STT_OBJECT" and size > 1000
    assert symbols.resolve_watch(os.getpid(), "libc.so", "environ").addr == \
        symbols.resolve_watch(os.getpid(), "libc.so.6", "environ").addr


def test_function_at_and_errors():
    img = symbols.LoadedImage(os.getpid(), "libc.so.6")
    start, size, _ = img.symbol("getpid")[0], None, None
    fn = img.function_at(start + 1)
    assert fn is not None and fn[0] == start
    with pytest.raises(DebuggerError, match="symbol no_such_symbol_x not found in"):
        img.symbol("no_such_symbol_x")
    with pytest.raises(DebuggerError, match="is not loaded in process"):
        symbols.find_image(os.getpid(), "libnot_there.so")
    with pytest.raises(DebuggerError, match="is a function, not a variable"):
        symbols.resolve_watch(os.getpid(), "libc.so.6", "getpid")
    with pytest.raises(DebuggerError, match="no such process"):
        symbols.resolve_watch(999999999, "libc.so.6", "environ")


def test_address_size_defaults_to_the_widest_aligned():
    pid = os.getpid()
    assert [symbols.resolve_watch(pid, None, None, address=a).size for a in (0x1000, 0x1004, 0x1002, 0x1001)] == \
        [8, 4, 2, 1]
    assert symbols.resolve_watch(pid, None, None, size=2, address=0x1004).size == 2
