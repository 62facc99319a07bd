"""Mach-O: bind the recorder slot of an instrumented dylib.

What LIEF does not provide: its Python API adds a dylib load command
(Binary.add_library) but has no way to create a binding, and its builder
re-encodes the fixups from the ones it parsed (a raw DyldInfo.bind_opcodes
set before writing is dropped).  So this module writes the one missing
fixup by hand, on the bytes LIEF built, in whichever format the dylib uses.

Algorithm:
  1. read the built bytes back with LIEF: the segment index of the slot,
     the ordinal of the recorder's LC_LOAD_DYLIB, __LINKEDIT (last segment,
     ending at the end of the file), and the fixup command;
  2. classic dyld info (LC_DYLD_INFO_ONLY; zig's and older Apple linkers):
     new bind stream = our entry (ordinal, symbol, type pointer, segment and
     offset, DO_BIND), then the file's own stream unchanged.  Our entry sets
     every state field a later entry could inherit except the addend, which
     it leaves at its initial 0, so the old stream decodes as before;
     chained fixups (LC_DYLD_CHAINED_FIXUPS; Apple ld's default for macOS
     12+): the same payload with one more import (the recorder's ordinal and
     name, appended to the imports table and the symbol pool) and a
     starts_in_segment for the slot's segment (one page, its chain starting
     at offset 0, the pointer format of the file's other segments); the slot
     itself holds the chain's only entry, a bind of that import;
  3. append the new stream / payload to the end of the bytes (inside
     __LINKEDIT, which grows: filesize, and vmsize rounded up to the page
     size) and point the command at it.  The old bytes stay, unreferenced.
Invariants: nothing before the end of the input file moves except the
slot's 8 bytes; only the fixup command's offset and size and __LINKEDIT's
sizes change.  The caller reads the result back with LIEF (and tests with
llvm-objdump --bind) before writing it (tracer/safe_files.py): all of this is in
memory, so no file is written by path.

Refused (one line): arm64e pointer formats (authenticated pointers), a
compressed symbol pool, a code signature (the caller removes it first: the
rewrite invalidates it anyway), a __LINKEDIT that does not end the file.
"""
import struct

from argus.tracer.errors import ArgusError

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


class _Linkedit:
    """The built dylib (bytes), to which bytes are appended inside __LINKEDIT.
    path: only the name for messages."""

    def __init__(self, lief, data, path, segment_name, install_name):
        b = lief.MachO.parse(bytes(data)).at(0)
        if b.has_code_signature:
            raise ArgusError(f"{path}: a code signature is still present")
        self.binary, self.path = b, path
        self.names = [s.name for s in b.segments]
        self.ordinal = dylib_ordinal(b, install_name)
        if segment_name not in self.names or not self.ordinal or self.names[-1] != "__LINKEDIT":
            raise ArgusError(f"{path}: unexpected layout after the rewrite")
        self.segment = b.get_segment(segment_name)
        self.linkedit = b.get_segment("__LINKEDIT")
        self.data = bytearray(data)
        if self.linkedit.file_offset + self.linkedit.file_size != len(self.data):
            raise ArgusError(f"{path}: __LINKEDIT does not end the file")

    def append(self, blob):
        """File offset of blob, appended 8-aligned inside __LINKEDIT."""
        self.data += b"\0" * (-len(self.data) % 8)
        off = len(self.data)
        self.data += blob + b"\0" * (-len(blob) % 8)
        return off

    def save(self, page_size):
        filesize = len(self.data) - self.linkedit.file_offset
        vmsize = max(self.linkedit.virtual_size, -(-filesize // page_size) * page_size)
        struct.pack_into("<Q", self.data, self.linkedit.command_offset + SEGMENT64_VMSIZE, vmsize)
        struct.pack_into("<Q", self.data, self.linkedit.command_offset + SEGMENT64_FILESIZE, filesize)
        return bytes(self.data)


def add_bind(lief, data, path, segment_name, symbol, install_name, page_size):
    """The dylib data (bytes built by LIEF; path: the output, for messages)
    with the pointer at the start of segment_name bound to symbol from
    install_name, as new bytes."""
    f = _Linkedit(lief, data, path, segment_name, install_name)
    b = f.binary
    if b.has_dyld_chained_fixups:
        _add_chained_bind(f, symbol)
    elif b.has_dyld_info:
        bind_off, bind_size = b.dyld_info.bind
        stream = bind_entry(f.ordinal, symbol, f.names.index(segment_name), 0) + bytes(
            f.data[bind_off:bind_off + bind_size])
        if bind_size == 0:
            stream += b"\0"                               # BIND_OPCODE_DONE
        off = f.append(stream)
        struct.pack_into("<II", f.data, b.dyld_info.command_offset + DYLD_INFO_BIND_OFF, off, len(stream))
    else:
        raise ArgusError(f"{path}: the dylib has neither dyld info nor chained fixups to bind the recorder with")
    return f.save(page_size)


# <mach-o/fixup-chains.h>
CHAINED_HEADER = struct.Struct("<7I")      # fixups_version, starts_offset, imports_offset, symbols_offset,
#                                            imports_count, imports_format, symbols_format
CHAINED_STARTS_IN_SEGMENT = struct.Struct("<IHHQIH")  # size, page_size, pointer_format, segment_offset,
#                                                       max_valid_pointer, page_count (then page_start[])
DYLD_CHAINED_IMPORT, DYLD_CHAINED_IMPORT_ADDEND, DYLD_CHAINED_IMPORT_ADDEND64 = 1, 2, 3
DYLD_CHAINED_PTR_64, DYLD_CHAINED_PTR_64_OFFSET = 2, 6   # both bind as dyld_chained_ptr_64_bind
LINKEDIT_DATA_DATAOFF = 8                  # struct linkedit_data_command: cmd, cmdsize, dataoff, datasize


def chained_import(fmt, ordinal, name_offset):
    """One entry of the imports table."""
    if fmt in (DYLD_CHAINED_IMPORT, DYLD_CHAINED_IMPORT_ADDEND):
        if ordinal > 0xFF or name_offset >= 1 << 23:
            raise ValueError("import does not fit DYLD_CHAINED_IMPORT")
        entry = struct.pack("<I", ordinal | name_offset << 9)
        return entry + (struct.pack("<i", 0) if fmt == DYLD_CHAINED_IMPORT_ADDEND else b"")
    return struct.pack("<QQ", ordinal | name_offset << 32, 0)


def chained_bind_pointer(import_index):
    """dyld_chained_ptr_64_bind: ordinal:24 addend:8 reserved:19 next:12 bind:1; last of its chain."""
    if import_index >= 1 << 24:
        raise ValueError("import index does not fit a 64-bit bind pointer")
    return 1 << 63 | import_index


def chained_payload(payload, segment_index, segment_offset, page_size, ordinal, symbol):
    """(new LC_DYLD_CHAINED_FIXUPS payload, index of the new import)."""
    (version, starts_off, imports_off, symbols_off, count, imports_fmt,
     symbols_fmt) = CHAINED_HEADER.unpack_from(payload, 0)
    if symbols_fmt != 0:
        raise ValueError("compressed symbol pool")
    if imports_fmt not in (DYLD_CHAINED_IMPORT, DYLD_CHAINED_IMPORT_ADDEND, DYLD_CHAINED_IMPORT_ADDEND64):
        raise ValueError(f"imports format {imports_fmt}")
    seg_count = struct.unpack_from("<I", payload, starts_off)[0]
    seg_info = list(struct.unpack_from(f"<{seg_count}I", payload, starts_off + 4))
    if segment_index >= seg_count or seg_info[segment_index]:
        raise ValueError("the slot's segment has no free chain-starts entry")
    formats = {struct.unpack_from("<H", payload, starts_off + o + 6)[0] for o in seg_info if o}
    if not formats <= {DYLD_CHAINED_PTR_64, DYLD_CHAINED_PTR_64_OFFSET}:
        raise ValueError(f"pointer format {sorted(formats)} (arm64e and 32-bit formats are not handled)")
    pointer_format = min(formats) if formats else DYLD_CHAINED_PTR_64_OFFSET
    page_sizes = {struct.unpack_from("<H", payload, starts_off + o + 4)[0] for o in seg_info if o}
    page_size = min(page_sizes) if page_sizes else page_size     # as the file's other segments
    starts = bytearray(payload[starts_off:imports_off])
    starts += b"\0" * (-len(starts) % 8)
    seg_info[segment_index] = len(starts)
    struct.pack_into(f"<{seg_count}I", starts, 4, *seg_info)
    # one page; its chain starts at offset 0 (the slot) and holds only the slot
    starts += CHAINED_STARTS_IN_SEGMENT.pack(CHAINED_STARTS_IN_SEGMENT.size + 2, page_size, pointer_format,
                                             segment_offset, 0, 1) + struct.pack("<H", 0)
    starts += b"\0" * (-len(starts) % 8)
    symbols = bytes(payload[symbols_off:])
    imports = bytes(payload[imports_off:symbols_off])
    entry_size = {DYLD_CHAINED_IMPORT: 4, DYLD_CHAINED_IMPORT_ADDEND: 8, DYLD_CHAINED_IMPORT_ADDEND64: 16}[imports_fmt]
    imports = imports[:count * entry_size] + chained_import(imports_fmt, ordinal, len(symbols))
    symbols += symbol.encode() + b"\0"
    new_imports_off = starts_off + len(starts)
    header = CHAINED_HEADER.pack(version, starts_off, new_imports_off, new_imports_off + len(imports),
                                 count + 1, imports_fmt, symbols_fmt)
    out = bytearray(payload[:starts_off])
    out[:CHAINED_HEADER.size] = header
    return bytes(out + starts + imports + symbols), count


def _add_chained_bind(f, symbol):
    b = f.binary
    cf = b.dyld_chained_fixups
    payload = bytes(f.data[cf.data_offset:cf.data_offset + cf.data_size])
    base = b.get_segment("__TEXT").virtual_address
    try:
        new, index = chained_payload(payload, f.names.index(f.segment.name), f.segment.virtual_address - base,
                                     b.page_size, f.ordinal, symbol)
    except ValueError as e:
        raise ArgusError(f"{f.path}: cannot add the recorder to the chained fixups: {e}")
    struct.pack_into("<Q", f.data, f.segment.file_offset, chained_bind_pointer(index))
    off = f.append(new)
    struct.pack_into("<II", f.data, cf.command_offset + LINKEDIT_DATA_DATAOFF, off, len(new))
