"""Where a symbol of an image lives in a running process.

Algorithm: find the image among pid's file mappings (by full path, by the
path's basename, or by the basename of a mapped file: "libc.so.6" finds
/usr/lib/x86_64-linux-gnu/libc.so.6); read its ELF with pyelftools (.symtab,
else .dynsym); the load bias is 0 for ET_EXEC and, for ET_DYN (PIE
executables, shared objects), the start of the mapping with file offset 0
minus the lowest PT_LOAD's page-aligned p_vaddr.  Runtime address = st_value
+ bias.  The ELF is read from /proc/PID/map_files when the path is not
visible to us (another mount namespace, a deleted file).

Invariants: an image mapped several times (two mount namespaces, a reloaded
library) resolves to its first mapping with offset 0; symbols of size 0 (asm
labels) are accepted with the watch size given by the caller.
"""
import os
from functools import lru_cache

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from argus.debugger import procmem
from argus.debugger.base import DebuggerError, WatchSpec
from argus.debugger.backends.lldb.dwarf import field_offset


def find_image(pid, image, mappings=None):
    """(path as mapped, [its mappings]) for IMAGE in pid, or DebuggerError.
    mappings: pid's maps when the caller has just read them."""
    ms = [m for m in (mappings if mappings is not None else procmem.maps(pid)) if m.path.startswith("/")]
    want = os.path.realpath(image) if "/" in image else None
    base = os.path.basename(image)
    for pred in ((lambda p: want is not None and (p == want or p == image)),
                 (lambda p: os.path.basename(p) == base),
                 (lambda p: os.path.basename(p).startswith(base + "."))):
        hits = [m for m in ms if pred(m.path)]
        if hits:
            path = hits[0].path
            return path, [m for m in ms if m.path == path]
    raise DebuggerError(f"image {image} is not loaded in process {pid}")


def _open_path(pid, path, mappings):
    if os.path.exists(path):
        return path
    m = mappings[0]
    alt = f"/proc/{pid}/map_files/{m.start:x}-{m.end:x}"
    if os.path.exists(alt):
        return alt
    raise DebuggerError(f"cannot open {path} (mapped in process {pid})")


@lru_cache(maxsize=64)
def elf_info(path, mtime):
    """(e_type, lowest PT_LOAD vaddr, {name: (value, size, type)}, sorted funcs)."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            loads = [s["p_vaddr"] & ~0xFFF for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
            syms = {}
            funcs = []
            for secname in (".dynsym", ".symtab"):   # .symtab last: it wins on duplicates
                sec = elf.get_section_by_name(secname)
                if sec is None:
                    continue
                for s in sec.iter_symbols():
                    if not s.name or s["st_shndx"] == "SHN_UNDEF":
                        continue
                    typ = s["st_info"]["type"]
                    syms[s.name] = (s["st_value"], s["st_size"], typ)
                    if typ in ("STT_FUNC", "STT_GNU_IFUNC") and s["st_value"]:
                        funcs.append((s["st_value"], s["st_size"], s.name))
            funcs.sort()
            return elf["e_type"], (min(loads) if loads else 0), syms, tuple(funcs)
    except (OSError, ELFError) as e:
        raise DebuggerError(f"cannot read ELF {path}: {e}") from None


class LoadedImage:
    """One ELF image as mapped in a process."""

    def __init__(self, pid, image, mappings=None):
        self.pid = pid
        self.path, self.mappings = find_image(pid, image, mappings)
        self.file = _open_path(pid, self.path, self.mappings)
        st = os.stat(self.file)
        self.e_type, low, self.syms, self.funcs = elf_info(self.file, st.st_mtime_ns)
        first = next((m for m in self.mappings if m.offset == 0), self.mappings[0])
        self.bias = 0 if self.e_type == "ET_EXEC" else first.start - low
        self.lo = min(m.start for m in self.mappings)
        self.hi = max(m.end for m in self.mappings)

    def symbol(self, name):
        """(runtime address, size, type) of a symbol, or DebuggerError."""
        hit = self.syms.get(name)
        if hit is None:
            raise DebuggerError(f"symbol {name} not found in {self.path}")
        value, size, typ = hit
        return value + self.bias, size, typ

    def function_at(self, addr):
        """(runtime start, size, name) of the function containing addr, or None."""
        import bisect
        v = addr - self.bias
        i = bisect.bisect_right(self.funcs, (v, float("inf"), "")) - 1
        while i >= 0:
            start, size, name = self.funcs[i]
            if start <= v < start + max(size, 1):
                return start + self.bias, size, name
            if start + size <= v and size:
                return None
            i -= 1
        return None


def resolve_watch(pid, image, symbol, size=None, address=None):
    """WatchSpec for IMAGE:SYMBOL in pid (address overrides the lookup).
    SYMBOL may name a struct field, `global.member.member` (needs debug info)."""
    procmem.check_process(pid)
    if address is not None:
        label = f"0x{address:x}" if not symbol else f"{image}:{symbol}"
        if size is None:      # the widest naturally aligned watch at that address
            size = next(n for n in (8, 4, 2, 1) if address % n == 0)
        return WatchSpec(address, size, label)
    img = LoadedImage(pid, image)
    # GCC names statics "x.0" / "x.lto_priv.0": a symbol that exists as written wins.
    name, *fields = [symbol] if symbol in img.syms else symbol.split(".")
    addr, symsize, typ = img.symbol(name)
    if typ in ("STT_FUNC", "STT_GNU_IFUNC"):
        raise DebuggerError(f"{name} in {img.path} is a function, not a variable")
    if fields:
        # SYMBOL.field.field: the layout comes from the image's DWARF, read through lldb.
        off, symsize = field_offset(img.file, name, fields)
        addr += off
    if size is None:
        size = symsize if symsize in (1, 2, 4, 8) else 8
        if symsize > 8 or symsize == 0:
            size = 8 if addr % 8 == 0 else 4 if addr % 4 == 0 else 1
    return WatchSpec(addr, size, f"{os.path.basename(img.path)}:{symbol}")


def image_at(pid, addr):
    """LoadedImage containing addr in pid, or None (anonymous memory, JIT)."""
    ms = procmem.maps(pid)
    for m in ms:
        if m.start <= addr < m.end and m.path.startswith("/"):
            try:
                return LoadedImage(pid, m.path, ms)
            except DebuggerError:
                return None
    return None


class ImageCache:
    """The images of pid met so far, by address range: an address inside one
    costs no /proc/PID/maps read; an image loaded later is found on a miss."""

    def __init__(self, pid):
        self.pid = pid
        self.images = []

    def at(self, addr):
        """LoadedImage containing addr, or None (see image_at)."""
        for img in self.images:
            if img.lo <= addr < img.hi:
                return img
        img = image_at(self.pid, addr)
        if img is not None:
            self.images.append(img)
        return img
