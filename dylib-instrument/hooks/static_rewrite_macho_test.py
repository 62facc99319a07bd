"""The hand-written fixups of static_rewrite_macho.py, as bytes (a bind entry,
a chained-fixups payload with one more import and chain start): what
dyld's and LLVM's decoders read (the rewrite itself is checked on dylibs
built with zig and ld64.lld in tests/test_instrument.py)."""
import struct

import pytest

from argus.hooks.static_rewrite_macho import bind_entry, chained_bind_pointer, chained_payload, uleb128


def test_uleb128():
    assert uleb128(0) == b"\x00"
    assert uleb128(127) == b"\x7f"
    assert uleb128(128) == b"\x80\x01"
    assert uleb128(0x4000) == b"\x80\x80\x01"


def test_bind_entry_small_ordinal():
    # SET_DYLIB_ORDINAL_IMM 2, SET_SYMBOL_TRAILING_FLAGS_IMM 0 + name, SET_TYPE_IMM pointer,
    # SET_SEGMENT_AND_OFFSET_ULEB seg 4 offset 0, DO_BIND
    assert bind_entry(2, "_argus_static_enter", 4, 0) == (
        b"\x12\x40_argus_static_enter\x00\x51\x74\x00\x90")


def test_bind_entry_large_ordinal_and_offset():
    # an ordinal above 15 takes SET_DYLIB_ORDINAL_ULEB; the offset is a ULEB
    assert bind_entry(20, "_f", 3, 0x208) == b"\x20\x14\x40_f\x00\x51\x73\x88\x04\x90"


def test_bind_entry_segment_index_must_fit_the_opcode():
    with pytest.raises(ValueError):
        bind_entry(1, "_f", 16, 0)


def _payload():
    """A chained-fixups payload as ld64 writes one: 3 segments, fixups in
    segment 1 (DYLD_CHAINED_PTR_64_OFFSET, 16 KiB pages), one import _puts
    from ordinal 1."""
    header = struct.pack("<7I", 0, 32, 72, 76, 1, 1, 0) + b"\0" * 4
    starts = struct.pack("<4I", 3, 0, 16, 0) + struct.pack("<IHHQIHH", 24, 0x4000, 6, 0x4000, 0, 1, 0)
    return header + starts + struct.pack("<I", 1 | 1 << 9) + b"\0_puts\0"


def test_chained_payload_adds_an_import_and_a_chain_start():
    new, index = chained_payload(_payload(), 2, 0x8000, 0x1000, 2, "_argus_static_enter")
    assert index == 1
    # header: same starts offset, the imports after the grown starts, one more import
    assert struct.unpack_from("<7I", new) == (0, 32, 32 + 64, 32 + 64 + 8, 2, 1, 0)
    # seg_info[2] points at the new starts_in_segment, which follows the old one
    assert struct.unpack_from("<4I", new, 32) == (3, 0, 16, 40)
    assert new[32 + 16:32 + 40] == _payload()[48:72]                      # segment 1 unchanged
    # the new one: one page of the file's page size and pointer format, chain at offset 0
    assert struct.unpack_from("<IHHQIHH", new, 32 + 40) == (24, 0x4000, 6, 0x8000, 0, 1, 0)
    # imports: _puts unchanged, then ordinal 2 with its name after the old pool
    assert struct.unpack_from("<2I", new, 96) == (1 | 1 << 9, 2 | 7 << 9)
    assert new[104:] == b"\0_puts\0_argus_static_enter\0"


def test_chained_payload_refuses_arm64e_and_a_used_segment():
    arm64e = bytearray(_payload())
    struct.pack_into("<H", arm64e, 48 + 6, 1)                              # DYLD_CHAINED_PTR_ARM64E
    with pytest.raises(ValueError, match="pointer format"):
        chained_payload(bytes(arm64e), 2, 0x8000, 0x4000, 2, "_f")
    with pytest.raises(ValueError, match="chain-starts"):
        chained_payload(_payload(), 1, 0x4000, 0x4000, 2, "_f")


def test_chained_bind_pointer():
    # dyld_chained_ptr_64_bind: bind bit 63, next 0 (end of chain), addend 0, import index
    assert chained_bind_pointer(1) == 0x8000000000000001
    with pytest.raises(ValueError):
        chained_bind_pointer(1 << 24)
