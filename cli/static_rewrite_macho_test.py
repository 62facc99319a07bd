"""The hand-written bind entry of static_rewrite_macho.py, as bytes: what
dyld's and LLVM's bind-opcode decoders read (the rewrite itself is checked
on zig-built dylibs in tests/test_instrument.py)."""
import pytest

from argus.cli.static_rewrite_macho import bind_entry, uleb128


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
