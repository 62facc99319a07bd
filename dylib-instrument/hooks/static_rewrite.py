"""Static instrumentation: a copy of a shared library with its hooks built in.

The paper's way (`argus instrument LIB -o OUT`): the same trampolines as the
run-time agent, written into the file instead of into memory.

Algorithm (ELF .so and Mach-O dylib, x86_64 and arm64):
  1. pick the hooks of the spec for this library (its soname / install name,
     or hooks without a library whose symbol the library defines);
  2. add an executable segment with one TRAMP_SLOT-byte trampoline per hook
     and a writable segment with one pointer slot (the recorder's address);
  3. generate each trampoline at its final address with the C relocator
     (libargus-static-gen.so, dylib-instrument/static/static_tramp.c, through
     ctypes: relocation logic exists once, in C) and patch the function's
     entry with a branch to it; a prologue the relocator refuses leaves that
     function untouched (one warning line);
  4. ELF: a DT_NEEDED on libargus-static.so (absolute path) and a GLOB_DAT
     relocation of the slot against argus_static_enter, so the dynamic
     loader binds the recorder; nothing runs at load time besides that.
     The written file is read back: no bound slot (a library without a
     relocation table, where LIEF adds none) is an error, not a silent copy.
     Mach-O: an LC_LOAD_DYLIB on @loader_path/libargus-static.dylib and a
     bind of the slot against _argus_static_enter (classic dyld info or
     chained fixups; written by hand, static_rewrite_macho.py says why),
     read back the same way.  An empty slot makes a trampoline just run the
     function.
Invariants: bytes outside the patched entries and the added segments are
the input's; LIEF builds the output in memory (built_bytes), which is read
back there and then written as a new file in the output's verified
directory and renamed over OUT (tracer/safe_files.py: argus instrument runs as
root, and a path written after a check could be a symlink by then), with
the input's permission bits minus set-id bits.
LIEF does the container work (segments, symbols, relocations, load
commands): no hand-written ELF or Mach-O editing.
"""
import ctypes
import os

from argus.hooks import hookspec, static_rewrite_macho
from argus.tracer import native, safe_files
from argus.tracer.errors import ArgusError

ARCH_X86_64, ARCH_ARM64 = 1, 2
# the word a trampoline passes to the recorder (dylib-instrument/static/static_abi.h)
RET_TYPE_SHIFT, RET_OBJ_SHIFT, OBJ32 = 16, 24, 1 << 27
TRAMP_SLOT = 256          # bytes per trampoline (largest: arm64 with a far jump back, ~200)
CODE_WINDOW = 4096        # bytes of a function read for relocation and the branch-back scan
RECORDER_SYMBOL = "argus_static_enter"
# The Mach-O recorder is looked up next to the instrumented copy: this
# machine has no macOS install path to point at (the ELF copy names the
# absolute path of the installed libargus-static.so).
MACHO_RECORDER = "@loader_path/libargus-static.dylib"


def _native_part(name):
    """Path of a native part built by CMake (argus.tracer.native.native_dir)."""
    path = os.path.join(native.native_dir(), name)
    if not os.path.exists(path):
        raise ArgusError(f"missing native part {path}: reinstall Argus with `pip install .`")
    return path


class Generator:
    """ctypes face of libargus-static-gen.so."""

    def __init__(self):
        lib = ctypes.CDLL(_native_part("libargus-static-gen.so"))
        self._tramp = lib.argus_static_trampoline
        self._tramp.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t,
                                ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32,
                                ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t,
                                ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
        self._patch = lib.argus_static_entry_patch
        self._patch.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]
        self._strerror = lib.argus_static_strerror
        self._strerror.restype = ctypes.c_char_p

    def trampoline(self, arch, code, fn_size, fn_pc, tramp_pc, slot_pc, rtype, probe_id):
        """(trampoline bytes, entry patch bytes), or raises ValueError(reason)."""
        out = ctypes.create_string_buffer(TRAMP_SLOT)
        out_len, consumed = ctypes.c_size_t(), ctypes.c_size_t()
        err = self._tramp(arch, bytes(code), len(code), fn_size, fn_pc, tramp_pc, slot_pc, rtype, probe_id,
                          out, TRAMP_SLOT, ctypes.byref(out_len), ctypes.byref(consumed))
        if err:
            raise ValueError(self._strerror(err).decode())
        patch = ctypes.create_string_buffer(16)
        n = self._patch(arch, fn_pc, tramp_pc, patch, 16)
        if n < 0:
            raise ValueError(self._strerror(n).decode())
        return out.raw[:out_len.value], patch.raw[:n]


def select_hooks(hooks, names, defines, warn=None):
    """[(probe_id, symbol, enter_type, return_type, word)] of the spec that
    concern this library; word is the rest of what the trampoline passes to
    the recorder (static/static_abi.h: return obj, obj_bits), return_type 0
    when the return cannot be recorded here.
    probe ids are spec indexes, as under `argus run` (hookspec.flatten).
    A hook recording another argument than the first is left out: the
    static trampolines record argument 0, and a wrong obj would pair records
    that have nothing to do with each other.  A NULL substitute (null_obj)
    is not applied here: NULL is recorded as 0, which pairs with nothing."""
    out = []
    for i, h in enumerate(hooks):
        h = hookspec.Hook(*h)
        sym, enter, ret = h.symbol, h.enter, h.ret
        if any(hookspec.matches(n, h.library) for n in names) or (h.library == ("-",) and defines(sym)):
            if h.obj_arg:
                if warn:
                    what = "the process key" if h.obj_arg == hookspec.OBJ_PROCESS else f"argument {h.obj_arg}"
                    warn(f"{sym}: its obj ({what}) needs `argus run`; skipped")
                continue
            if not enter:          # a return-only hook (e.g. ret_deref): its filter needs the agent
                if warn:
                    warn(f"{sym}: records only its return, which needs `argus run`; skipped")
                continue
            if ret and h.ret_deref not in ("-", "", None):
                if warn:
                    warn(f"{sym}: its return filter (ret_deref) needs `argus run`; entry only here")
                ret = 0
            word = (h.return_obj << RET_OBJ_SHIFT if ret else 0) | (OBJ32 if h.obj_bits == 32 else 0)
            out.append((i, sym, enter, ret, word))
    return out


def built_bytes(binary):
    """The rewritten binary as bytes, built by LIEF in memory
    (write_to_bytes, LIEF >= 0.17, which pyproject.toml requires): no path
    is written that another user could swap."""
    return bytes(binary.write_to_bytes())


def _write_output(data, src, out, check=None):
    """data (the instrumented library) as a new file at out, checked first
    (check(data) raises when it is not what we meant to write)."""
    mode = os.stat(src).st_mode & 0o777     # the input's permission bits, never set-id
    if check:
        check(data)
    safe_files.write_output(out, data, mode)


def _place(gen, arch, hooks, lookup, read, tramp_va, slot_va, warn):
    """Trampoline bytes for the segment and {entry address: patch bytes}."""
    code_bytes = bytearray(b"\xcc" * (TRAMP_SLOT * len(hooks)) if arch == ARCH_X86_64
                           else b"\x00\x00\x20\xd4" * (TRAMP_SLOT * len(hooks) // 4))   # int3 / brk #0
    patches = {}
    for n, (probe_id, sym, enter, ret, word) in enumerate(hooks):
        if ret and arch != ARCH_X86_64:
            warn(f"{sym}: return records need the run-time agent (argus run) on arm64; entry only here")
            ret = 0
        va, size = lookup(sym)
        if va in patches:
            warn(f"{sym}: hook skipped: an alias of a function hooked already")
            continue
        code = read(va, min(size, CODE_WINDOW) if size else 64)
        at = tramp_va + n * TRAMP_SLOT
        try:
            tramp, patch = gen.trampoline(arch, code, size, va, at, slot_va,
                                          enter | ret << RET_TYPE_SHIFT | (word if ret else word & OBJ32), probe_id)
        except ValueError as e:
            warn(f"{sym}: hook skipped: {e}")
            continue
        code_bytes[n * TRAMP_SLOT:n * TRAMP_SLOT + len(tramp)] = tramp
        patches[va] = patch
    return bytes(code_bytes), patches


def instrument(src, out, hooks, warn):
    """Writes the instrumented copy; returns the number of hooks placed."""
    try:
        import lief
    except ImportError:
        raise ArgusError("argus instrument needs LIEF (pip install lief; scripts/setup.sh installs it)")
    lief.logging.disable()
    try:
        with open(src, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ArgusError(f"cannot read {src}: {e.strerror}")
    if magic == b"\x7fELF":
        return _instrument_elf(lief, src, out, hooks, warn)
    if magic in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return _instrument_macho(lief, src, out, hooks, warn)
    raise ArgusError(f"{src} is not an ELF shared library or a Mach-O dylib")


def _instrument_elf(lief, src, out, spec, warn):
    b = lief.ELF.parse(src)
    if b is None or b.header.file_type != lief.ELF.Header.FILE_TYPE.DYN:
        raise ArgusError(f"{src} is not an ELF shared library")
    machine = b.header.machine_type
    if machine == lief.ELF.ARCH.X86_64:
        arch, reloc_type = ARCH_X86_64, lief.ELF.Relocation.TYPE.X86_64_GLOB_DAT
    elif machine == lief.ELF.ARCH.AARCH64:
        arch, reloc_type = ARCH_ARM64, lief.ELF.Relocation.TYPE.AARCH64_GLOB_DAT
    else:
        raise ArgusError(f"{src}: unsupported architecture {machine.name}")
    soname = os.path.basename(src)
    for e in b.dynamic_entries:
        if e.tag == lief.ELF.DynamicEntry.TAG.SONAME:
            soname = e.name
        elif e.tag == lief.ELF.DynamicEntry.TAG.NEEDED and e.name.endswith("/libargus-static.so"):
            raise ArgusError(f"{src} is already instrumented")

    def defined(sym):
        s = b.get_dynamic_symbol(sym)
        return s is not None and s.shndx != 0 and s.type == lief.ELF.Symbol.TYPE.FUNC

    hooks = select_hooks(spec, {soname, os.path.basename(src)}, defined, warn)
    if not hooks:
        raise ArgusError(f"the hook spec has no hook for {soname}")
    for _, sym, *_ in hooks:
        if not defined(sym):
            raise ArgusError(f"{src}: no function {sym} defined (hook spec for {soname})")
    hooks = [h for h in hooks if h[2] or warn(f"{h[1]}: return-only hook needs `argus run`; skipped")]
    gen = Generator()

    code_seg = lief.ELF.Segment()
    code_seg.type = lief.ELF.Segment.TYPE.LOAD
    code_seg.flags = lief.ELF.Segment.FLAGS.R | lief.ELF.Segment.FLAGS.X
    code_seg.alignment = 0x1000
    code_seg.content = [0] * (TRAMP_SLOT * max(len(hooks), 1))
    code_seg = b.add(code_seg)
    slot_seg = lief.ELF.Segment()
    slot_seg.type = lief.ELF.Segment.TYPE.LOAD
    slot_seg.flags = lief.ELF.Segment.FLAGS.R | lief.ELF.Segment.FLAGS.W
    slot_seg.alignment = 0x1000
    slot_seg.content = [0] * 8
    slot_seg = b.add(slot_seg)

    def lookup(sym):
        s = b.get_dynamic_symbol(sym)
        return s.value, s.size

    def read(va, n):
        return bytes(b.get_content_from_virtual_address(va, n))

    code, patches = _place(gen, arch, hooks, lookup, read, code_seg.virtual_address,
                           slot_seg.virtual_address, warn)
    if not patches:
        raise ArgusError(f"{src}: no hook could be placed")
    b.patch_address(code_seg.virtual_address, list(code))
    for va, patch in patches.items():
        b.patch_address(va, list(patch))

    sym = lief.ELF.Symbol()
    sym.name = RECORDER_SYMBOL
    sym.type = lief.ELF.Symbol.TYPE.FUNC
    sym.binding = lief.ELF.Symbol.BINDING.GLOBAL
    sym = b.add_dynamic_symbol(sym)
    rel = lief.ELF.Relocation(slot_seg.virtual_address, reloc_type, lief.ELF.Relocation.ENCODING.RELA)
    rel.symbol = sym
    b.add_dynamic_relocation(rel)
    b.add_library(_native_part("libargus-static.so"))

    def bound(data):
        # LIEF adds a relocation only to an existing relocation table: a
        # library without one would load with the slot empty, silently
        back = lief.ELF.parse(data)
        if back is None or back.get(lief.ELF.DynamicEntry.TAG.RELA) is None or not any(
                r.has_symbol and r.symbol.name == RECORDER_SYMBOL for r in back.dynamic_relocations):
            raise ArgusError(f"{src}: cannot bind the recorder (the library has no dynamic relocation table)")

    _write_output(built_bytes(b), src, out, bound)
    return len(patches)


def _instrument_macho(lief, src, out, spec, warn):
    fat = lief.MachO.parse(src)
    if fat is None:
        raise ArgusError(f"{src} is not a readable Mach-O file")
    if fat.size != 1:
        raise ArgusError(f"{src}: universal binaries are not supported (thin it with lipo first)")
    b = fat.at(0)
    if b.header.file_type != lief.MachO.Header.FILE_TYPE.DYLIB:
        raise ArgusError(f"{src} is not a Mach-O dylib")
    cpu = b.header.cpu_type
    if cpu == lief.MachO.Header.CPU_TYPE.X86_64:
        arch = ARCH_X86_64
    elif cpu == lief.MachO.Header.CPU_TYPE.ARM64:
        arch = ARCH_ARM64
    else:
        raise ArgusError(f"{src}: unsupported CPU {cpu.name}")
    if b.get_segment("__ARGUS_TEXT") is not None:
        raise ArgusError(f"{src} is already instrumented")
    # two segment commands with one section each and a dylib command; without
    # that room LIEF shifts the file's contents by a page and leaves the
    # symbol table pointing at the old addresses
    room = 2 * (72 + 80) + 24 + (len(MACHO_RECORDER) + 1 + 7) // 8 * 8
    if b.available_command_space < room:
        raise ArgusError(f"{src}: no room for the new load commands ({b.available_command_space} bytes free, "
                         f"{room} needed): relink it with -headerpad_max_install_names")
    if not b.has_dyld_chained_fixups and not b.has_dyld_info:
        raise ArgusError(f"{src}: the dylib has neither dyld info nor chained fixups to bind the recorder with")
    ids = [c.name for c in b.commands if c.command == lief.MachO.LoadCommand.TYPE.ID_DYLIB]
    install_name = ids[0] if ids else os.path.basename(src)
    names = {install_name, os.path.basename(install_name), os.path.basename(src)}

    def symbol(sym):
        s = b.get_symbol("_" + sym)
        return s if s is not None and s.value else None

    hooks = select_hooks(spec, names, lambda s: symbol(s) is not None, warn)
    if not hooks:
        raise ArgusError(f"the hook spec has no hook for {install_name}")
    for _, sym, *_ in hooks:
        if symbol(sym) is None:
            raise ArgusError(f"{src}: no function {sym} defined (hook spec for {install_name})")
    hooks = [h for h in hooks if h[2] or warn(f"{h[1]}: return-only hook needs `argus run`; skipped")]
    gen = Generator()

    # one section per segment: tools that name a fixup by its section
    # (llvm-objdump --bind) need one, dyld does not
    text = lief.MachO.SegmentCommand("__ARGUS_TEXT")
    text.init_protection = text.max_protection = 5          # r-x
    code_sec = lief.MachO.Section.create("__argus_tramp", [0] * (TRAMP_SLOT * max(len(hooks), 1)))
    code_sec.flags = lief.MachO.Section.FLAGS.PURE_INSTRUCTIONS | lief.MachO.Section.FLAGS.SOME_INSTRUCTIONS
    code_sec.alignment = 4                                  # 2^4
    text.add_section(code_sec)
    text = b.add(text)
    data = lief.MachO.SegmentCommand("__ARGUS_DATA")
    data.init_protection = data.max_protection = 3          # rw-
    slot_sec = lief.MachO.Section.create("__argus_slot", [0] * 8)
    slot_sec.alignment = 3
    data.add_section(slot_sec)
    data = b.add(data)
    tramp_va, slot_va = text.virtual_address, data.virtual_address

    def lookup(sym):
        s = symbol(sym)
        return s.value, 0    # Mach-O symbols carry no size

    def read(va, n):
        return bytes(b.get_content_from_virtual_address(va, n))

    code, patches = _place(gen, arch, hooks, lookup, read, tramp_va, slot_va, warn)
    if not patches:
        raise ArgusError(f"{src}: no hook could be placed")
    b.patch_address(tramp_va, list(code))
    for va, patch in patches.items():
        b.patch_address(va, list(patch))
    b.add_library(MACHO_RECORDER)
    if b.has_code_signature:
        b.remove_signature()        # invalid after the rewrite: re-signed on the Mac (codesign -f -s -)
    page_size = b.page_size

    data = static_rewrite_macho.add_bind(lief, built_bytes(b), out, "__ARGUS_DATA", "_" + RECORDER_SYMBOL,
                                         MACHO_RECORDER, page_size)

    def bound(data):
        back = lief.MachO.parse(data)
        back = back.at(0) if back is not None else None
        slot = back.get_segment("__ARGUS_DATA") if back is not None else None
        if slot is None or not any(
                x.address == slot.virtual_address and x.has_symbol and x.symbol.name == "_" + RECORDER_SYMBOL
                and x.has_library and x.library.name == MACHO_RECORDER for x in back.bindings):
            raise ArgusError(f"{src}: cannot bind the recorder (the written dylib does not read back bound)")

    _write_output(data, src, out, bound)
    return len(patches)
