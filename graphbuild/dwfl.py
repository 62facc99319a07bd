"""A thin ctypes binding to elfutils libdw's Dwfl: function names of
addresses in one ELF file.

Why a binding and not pyelftools: libdw reads the symbol tables in C and
already knows every place a stripped binary keeps names - .symtab, a
separate debug file found by build id or .gnu_debuglink under
/usr/lib/debug, the LZMA-compressed MiniDebugInfo in .gnu_debugdata, and
.dynsym last - which pyelftools would have to be taught one by one (and a
distribution library's 10^5 symbols take seconds in Python).  blazesym
would do the same but does not install here.  No debuginfod: DEBUGINFOD_URLS
is dropped from our environment before libdw is loaded, so symbolizing
never goes to the network.

For a pc inside no symbol (static functions of a stripped binary), the
.eh_frame FDE before it (pyelftools reads the CFI: libdw only hands out
per-row ranges, not FDE starts) names the function's start: "sub_<vaddr>"
is then a stable function identity, as disassemblers name such functions.

One Dwfl per file, reported at bias 0 (addresses are the file's own
virtual addresses: the caller maps a file offset through PT_LOAD first).
"""
import bisect
import ctypes
import ctypes.util
import os
import stat
from functools import lru_cache

_lib = None


class _Callbacks(ctypes.Structure):
    _fields_ = [("find_elf", ctypes.c_void_p), ("find_debuginfo", ctypes.c_void_p),
                ("section_address", ctypes.c_void_p), ("debuginfo_path", ctypes.c_void_p)]


def _load():
    """libdw, or None when it is not installed (names stay file+offset)."""
    global _lib
    if _lib is None:
        os.environ.pop("DEBUGINFOD_URLS", None)   # never fetch symbols over the network
        path = ctypes.util.find_library("dw") or "libdw.so.1"
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            _lib = False
            return None
        vp, cp = ctypes.c_void_p, ctypes.c_char_p
        lib.dwfl_begin.argtypes, lib.dwfl_begin.restype = [vp], vp
        lib.dwfl_report_begin.argtypes, lib.dwfl_report_begin.restype = [vp], None
        lib.dwfl_report_elf.argtypes = [vp, cp, cp, ctypes.c_int, ctypes.c_uint64, ctypes.c_bool]
        lib.dwfl_report_elf.restype = vp
        lib.dwfl_report_end.argtypes, lib.dwfl_report_end.restype = [vp, vp, vp], ctypes.c_int
        lib.dwfl_module_addrname.argtypes, lib.dwfl_module_addrname.restype = [vp, ctypes.c_uint64], cp
        lib.dwfl_end.argtypes, lib.dwfl_end.restype = [vp], None
        cb = _Callbacks(ctypes.cast(lib.dwfl_build_id_find_elf, vp).value,
                        ctypes.cast(lib.dwfl_standard_find_debuginfo, vp).value,
                        ctypes.cast(lib.dwfl_offline_section_address, vp).value, None)
        lib._callbacks = cb            # libdw keeps the pointer: keep the struct alive
        _lib = lib
    return _lib or None


def _open_regular_fd(path):
    """An fd of the file at path, opened without blocking (a FIFO put there
    since would block a plain open forever); OSError for anything but a
    regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return fd


@lru_cache(maxsize=64)
def fde_starts(path):
    """Sorted start addresses of the functions .eh_frame describes ([] when it has none)."""
    try:
        from elftools.dwarf.callframe import FDE
        from elftools.elf.elffile import ELFFile
        with os.fdopen(_open_regular_fd(path), "rb") as f:
            elf = ELFFile(f)
            if not elf.get_section_by_name(".eh_frame"):
                return []
            return sorted({e.header["initial_location"] for e in elf.get_dwarf_info().EH_CFI_entries()
                           if isinstance(e, FDE)})
    except Exception:  # missing, unreadable, not ELF, malformed CFI: no fallback names
        return []


def available():
    return _load() is not None


class ElfSymbols:
    """Function names of virtual addresses in one ELF file (closed by close()
    or on garbage collection).  names(vaddrs) -> [str or None]."""

    def __init__(self, path):
        self._dwfl = None
        self._mod = None
        self._path = path
        lib = _load()
        if lib is None:
            return
        dwfl = lib.dwfl_begin(ctypes.byref(lib._callbacks))
        if not dwfl:
            return
        self._dwfl = dwfl
        lib.dwfl_report_begin(dwfl)
        p = os.fsencode(path)
        try:
            fd = _open_regular_fd(path)     # libdw takes the fd (closed by dwfl_end)
        except OSError:
            fd = None
        if fd is not None:
            self._mod = lib.dwfl_report_elf(dwfl, os.path.basename(p), p, fd, 0, False)
        lib.dwfl_report_end(dwfl, None, None)

    def name(self, vaddr):
        if not self._mod:
            return None
        lib = _lib
        n = lib.dwfl_module_addrname(self._mod, vaddr)
        if n:
            return n.decode(errors="replace")
        start = self._fde_start(vaddr)
        return None if start is None else f"sub_{start:x}"

    def _fde_start(self, vaddr):
        starts = fde_starts(self._path)
        k = bisect.bisect_right(starts, vaddr) - 1
        return starts[k] if k >= 0 else None

    def names(self, vaddrs):
        return [self.name(int(v)) for v in vaddrs]

    def close(self):
        if self._dwfl and _lib:
            _lib.dwfl_end(self._dwfl)
        self._dwfl = self._mod = None

    def __del__(self):
        self.close()
