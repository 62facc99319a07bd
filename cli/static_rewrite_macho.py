"""Mach-O: bind the recorder slot of an instrumented dylib (classic dyld info).

What LIEF does not provide: its Python API adds a dylib load command
(Binary.add_library) but has no way to create a binding, and its builder
re-encodes the bind opcodes from the bindings it parsed (a raw
DyldInfo.bind_opcodes set before writing is dropped).  So this module
writes the one missing bind entry by hand, after LIEF wrote the file:

Algorithm:
  1. read the written file back with LIEF: the LC_DYLD_INFO(_ONLY) command,
     the segment index of the slot, the ordinal of the recorder's
     LC_LOAD_DYLIB, __LINKEDIT (last segment, ending at the end of the file);
  2. new bind stream = our entry (ordinal, symbol, type pointer, segment and
     offset, DO_BIND), then the file's own stream unchanged.  Our entry sets
     every state field a later entry could inherit except the addend, which
     it leaves at its initial 0, so the old stream decodes as before;
  3. append it to the end of the file (inside __LINKEDIT, which grows:
     filesize, and vmsize rounded up to the page size) and point bind_off /
     bind_size at it.  The old stream's bytes stay, unreferenced.
Invariants: nothing before the end of the input file moves; only four
integers of two load commands change.  The caller reads the result back
with LIEF (and tests with llvm-objdump --bind) before renaming it into place.

Not handled (one line, refused): LC_DYLD_CHAINED_FIXUPS (Apple ld's default
since macOS 12 for arm64; zig's linker writes dyld info), a code signature
(the caller removes it first: the rewrite invalidates it anyway), a
__LINKEDIT that does not end the file.
"""
import struct

from argus.cli.common import ArgusError

# <mach-o/loader.h>
BIND_TYPE_POINTER = 1
BIND_OPCODE_SET_DYLIB_ORDINAL_IMM = 0x10
BIND_OPCODE_SET_DYLIB_ORDINAL_ULEB = 0x20
BIND_OPCODE_SET_SYMBOL_TRAILING_FLAGS_IMM = 0x40
BIND_OPCODE_SET_TYPE_IMM = 0x50
BIND_OPCODE_SET_SEGMENT_AND_OFFSET_ULEB = 0x70
BIND_OPCODE_DO_BIND = 0x90
DYLD_INFO_BIND_OFF = 16        # struct dyld_info_command: cmd, cmdsize, rebase_off, rebase_size, bind_off, bind_size
SEGMENT64_VMSIZE = 32          # struct segment_command_64: cmd, cmdsize, segname[16], vmaddr, vmsize, fileoff, filesize
SEGMENT64_FILESIZE = 48
DYLIB_LOADS = ("LOAD_DYLIB", "LOAD_WEAK_DYLIB", "REEXPORT_DYLIB", "LOAD_UPWARD_DYLIB", "LAZY_LOAD_DYLIB")


def uleb128(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def bind_entry(ordinal, symbol, segment_index, segment_offset):
    """Bind opcodes for one pointer at segment_index:segment_offset to
    symbol from the dylib with this (1-based) ordinal."""
    if not 0 <= segment_index <= 15:
        raise ValueError(f"segment index {segment_index} does not fit a bind opcode")
    out = bytearray()
    if 1 <= ordinal <= 15:
        out.append(BIND_OPCODE_SET_DYLIB_ORDINAL_IMM | ordinal)
    else:
        out += bytes([BIND_OPCODE_SET_DYLIB_ORDINAL_ULEB]) + uleb128(ordinal)
    out += bytes([BIND_OPCODE_SET_SYMBOL_TRAILING_FLAGS_IMM]) + symbol.encode() + b"\0"
    out.append(BIND_OPCODE_SET_TYPE_IMM | BIND_TYPE_POINTER)
    out += bytes([BIND_OPCODE_SET_SEGMENT_AND_OFFSET_ULEB | segment_index]) + uleb128(segment_offset)
    out.append(BIND_OPCODE_DO_BIND)
    return bytes(out)


def dylib_ordinal(binary, install_name):
    """1-based ordinal of the dylib load command naming install_name (LC_ID_DYLIB is not counted)."""
    n = 0
    for c in binary.commands:
        if c.command.name in DYLIB_LOADS:
            n += 1
            if c.name == install_name:
                return n
    return 0


def add_bind(lief, path, segment_name, symbol, install_name, page_size):
    """Binds the pointer at the start of segment_name in the dylib at path
    (written by LIEF) to symbol from install_name, in place."""
    b = lief.MachO.parse(path).at(0)
    if b.has_dyld_chained_fixups:
        raise ArgusError(f"{path}: the dylib uses chained fixups (LC_DYLD_CHAINED_FIXUPS), "
                         "not supported yet: relink it with -Wl,-no_fixup_chains")
    if not b.has_dyld_info:
        raise ArgusError(f"{path}: the dylib has no dyld info (LC_DYLD_INFO) to bind the recorder with")
    if b.has_code_signature:
        raise ArgusError(f"{path}: a code signature is still present")
    names = [s.name for s in b.segments]
    ordinal = dylib_ordinal(b, install_name)
    if segment_name not in names or not ordinal or names[-1] != "__LINKEDIT":
        raise ArgusError(f"{path}: unexpected layout after the rewrite")
    linkedit = b.get_segment("__LINKEDIT")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if linkedit.file_offset + linkedit.file_size != len(data):
        raise ArgusError(f"{path}: __LINKEDIT does not end the file")
    bind_off, bind_size = b.dyld_info.bind
    stream = bind_entry(ordinal, symbol, names.index(segment_name), 0) + bytes(data[bind_off:bind_off + bind_size])
    if bind_size == 0:
        stream += b"\0"                               # BIND_OPCODE_DONE
    data += b"\0" * (-len(data) % 8)
    new_off = len(data)
    data += stream + b"\0" * (-len(stream) % 8)
    filesize = len(data) - linkedit.file_offset
    vmsize = max(linkedit.virtual_size, -(-filesize // page_size) * page_size)
    struct.pack_into("<II", data, b.dyld_info.command_offset + DYLD_INFO_BIND_OFF, new_off, len(stream))
    struct.pack_into("<Q", data, linkedit.command_offset + SEGMENT64_VMSIZE, vmsize)
    struct.pack_into("<Q", data, linkedit.command_offset + SEGMENT64_FILESIZE, filesize)
    with open(path, "wb") as f:
        f.write(data)
