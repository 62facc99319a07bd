"""The Python mirrors cannot drift from the C headers.

Parses tracer/argus_event.h, tracer/argus_decode.h and tracer/argus_rb.h with
small regexes and compares enum values, struct argus_row (order, offsets,
sizes, signedness) and the ctypes Structures of native.py.  The Python modules
are loaded from this source tree, not from an installed copy.
"""
import ctypes
import importlib.util
import pathlib
import re

import pytest

HERE = pathlib.Path(__file__).resolve().parent
TRACER = HERE.parent


def load_source_module(name):
    spec = importlib.util.spec_from_file_location(f"argus_src_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


schema = load_source_module("schema")
native = load_source_module("native")

C_TYPES = {  # C type -> (size, numpy kind)
    "uint8_t": (1, "u"), "uint16_t": (2, "u"), "uint32_t": (4, "u"), "uint64_t": (8, "u"),
    "int32_t": (4, "i"), "int64_t": (8, "i"), "char": (1, "S"), "int": (4, "i"),
    "__u8": (1, "u"), "__u16": (2, "u"), "__u32": (4, "u"), "__u64": (8, "u"),
    "__s32": (4, "i"), "__s64": (8, "i"),
}


def header_text(name):
    text = (TRACER / name).read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def parse_enum(text, enum_name):
    body = re.search(rf"enum {enum_name}\s*{{(.*?)}};", text, re.S)
    assert body, f"enum {enum_name} not found"
    return {name: int(value, 0) for name, value in re.findall(r"(\w+)\s*=\s*(\w+)", body.group(1))}


def parse_struct(text, struct_name):
    """[(name, c_type, count, size, kind)] for each member, expanding `T a, b;` and arrays."""
    body = re.search(rf"struct {struct_name}\s*{{(.*?)}};", text, re.S)
    assert body, f"struct {struct_name} not found"
    fields = []
    for decl in filter(None, (d.strip() for d in body.group(1).split(";"))):
        m = re.match(r"(struct \w+|\w+)\s*(.*)", decl, re.S)
        c_type, declarators = m.group(1), m.group(2)
        for declarator in declarators.split(","):
            dm = re.match(r"\s*(\*?)\s*(\w+)\s*(?:\[(\w+)\])?\s*$", declarator)
            assert dm, f"cannot parse {decl!r} in struct {struct_name}"
            pointer, name, count = dm.groups()
            count = int(count, 0) if count and count[0].isdigit() else (16 if count else 1)
            if pointer:
                size, kind = 8, "P"
            else:
                size, kind = C_TYPES[c_type]
            fields.append((name, c_type, count, size, kind))
    return fields


def c_layout(fields):
    """Offsets with the x86_64 SysV rules (natural alignment) and the total size."""
    offset, align, layout = 0, 1, []
    for name, _, count, size, kind in fields:
        offset = (offset + size - 1) // size * size
        layout.append((name, offset, size * count, kind))
        offset += size * count
        align = max(align, size)
    return layout, (offset + align - 1) // align * align


EVENT_H = header_text("argus_event.h")


@pytest.mark.parametrize("enum_name, prefix, py_prefix", [
    ("argus_event_type", "ARGUS_EV_", ""),
    ("argus_task_state", "ARGUS_STATE_", "STATE_"),
    ("argus_wait_reason", "ARGUS_WAIT_", "WAIT_"),
    ("argus_wake_context", "ARGUS_WAKE_", "WAKE_"),
    ("argus_irq_kind", "ARGUS_IRQ_", "IRQ_"),
    ("argus_fd_kind", "ARGUS_FD_", "FD_"),
    ("argus_timer_kind", "ARGUS_TIMER_", "TIMER_"),
    ("argus_map_prot", "ARGUS_MAP_", "MAP_"),
    ("argus_lock_kind", "ARGUS_LOCK_", "LOCK_"),
    ("argus_lock_type", "ARGUS_LOCK_", "LOCK_"),
    ("argus_futex_state_flags", "ARGUS_FUTEX_", "FUTEX_"),
])
def test_enum_values_match_the_header(enum_name, prefix, py_prefix):
    values = parse_enum(EVENT_H, enum_name)
    values.pop("ARGUS_EV_TYPE_MAX", None)
    assert values, enum_name
    for c_name, value in values.items():
        py_name = py_prefix + c_name[len(prefix):]
        assert getattr(schema, py_name, None) == value, f"schema.{py_name} != {c_name} ({value})"


def test_name_tables_cover_every_enum_value():
    assert set(schema.TYPE_NAMES) == set(parse_enum(EVENT_H, "argus_event_type").values()) - {
        parse_enum(EVENT_H, "argus_event_type")["ARGUS_EV_TYPE_MAX"]}
    assert set(schema.STATE_NAMES) == set(parse_enum(EVENT_H, "argus_task_state").values())
    assert set(schema.WAIT_NAMES) == set(parse_enum(EVENT_H, "argus_wait_reason").values())
    assert set(schema.WAKE_CONTEXT_NAMES) == set(parse_enum(EVENT_H, "argus_wake_context").values())
    assert set(schema.IRQ_NAMES) == set(parse_enum(EVENT_H, "argus_irq_kind").values())
    assert set(schema.FD_KIND_NAMES) == set(parse_enum(EVENT_H, "argus_fd_kind").values())
    assert set(schema.TIMER_KIND_NAMES) == set(parse_enum(EVENT_H, "argus_timer_kind").values())
    assert set(schema.LOCK_KIND_NAMES) == set(parse_enum(EVENT_H, "argus_lock_kind").values())
    assert set(schema.LOCK_TYPE_NAMES) == set(parse_enum(EVENT_H, "argus_lock_type").values())
    assert schema.TYPE_BY_NAME == {v: k for k, v in schema.TYPE_NAMES.items()}


def test_defines_match_the_header():
    defines = dict(re.findall(r"#define\s+(ARGUS_\w+)\s+(\w+)", EVENT_H))
    assert schema.SCHEMA_VERSION == int(defines["ARGUS_SCHEMA_VERSION"])
    assert schema.SYSCALL_NONE == int(defines["ARGUS_SYSCALL_NONE"].rstrip("uU"), 0)
    assert schema.SWITCH_OUT_BASE_SIZE == int(defines["ARGUS_SWITCH_OUT_BASE_SIZE"])
    assert schema.USER_STACK_MAX_FRAMES == int(defines["ARGUS_USER_STACK_MAX_FRAMES"])
    assert schema.MAPPING_MAX_PATH == int(defines["ARGUS_MAPPING_MAX_PATH"])
    assert schema.WAIT_SITE_MAX_FDS == int(defines["ARGUS_WAIT_SITE_MAX_FDS"])
    assert schema.FUTEX_TID_MASK == int(defines["ARGUS_FUTEX_TID_MASK"].rstrip("uU"), 0)


@pytest.mark.parametrize("struct_name, size", [
    ("argus_ev_switch_out", 48), ("argus_ev_fd_info", 56), ("argus_ev_timer", 64),
    ("argus_ev_user_stack", 256), ("argus_ev_mapping", 256),
    ("argus_ev_wait_site", 96), ("argus_ev_futex_state", 48), ("argus_ev_file_lock", 64), ("argus_ev_probe", 48),
])
def test_new_record_layouts(struct_name, size):
    """Sizes the BPF side, the decoder and docs/event-schema.md rely on."""
    text = EVENT_H.replace("ARGUS_USER_STACK_MAX_FRAMES", str(schema.USER_STACK_MAX_FRAMES)).replace(
        "ARGUS_MAPPING_MAX_PATH", str(schema.MAPPING_MAX_PATH)).replace(
        "ARGUS_WAIT_SITE_MAX_FDS", str(schema.WAIT_SITE_MAX_FDS))
    # The 24-byte header, as three words (its own layout is checked by the ring buffer tests).
    text = text.replace("struct argus_event_header h;", "__u64 h_ts, h_ids, h_rest;")
    fields = parse_struct(text, struct_name)
    assert c_layout(fields)[1] == size
    if struct_name == "argus_ev_switch_out":
        offsets = dict((name, off) for name, off, *_ in c_layout(fields)[0])
        assert offsets["user_stack_id"] == schema.SWITCH_OUT_BASE_SIZE


def test_row_dtype_matches_struct_argus_row():
    layout, size = c_layout(parse_struct(header_text("argus_decode.h"), "argus_row"))
    dtype = schema.ROW_DTYPE
    assert [name for name, *_ in layout] == list(dtype.names)
    for name, offset, nbytes, kind in layout:
        field, field_offset = dtype.fields[name][:2]
        assert (field_offset, field.itemsize, field.kind) == (offset, nbytes, kind), name
    assert dtype.itemsize == size == 80


@pytest.mark.parametrize("header, struct_name, mirror", [
    ("argus_decode.h", "argus_decode_result", "DecodeResult"),
    ("argus_decode.h", "argus_decode_opts", "DecodeOpts"),
    ("argus_rb.h", "argus_rb_stats", "RbStats"),
    ("argus_rb.h", "argus_rb_file_header", "RbFileHeader"),
    ("argus_rb.h", "argus_rb_chunk_header", "RbChunkHeader"),
    ("argus_rb.h", "argus_rb_producer", "RbProducer"),
])
def test_ctypes_mirrors_match_the_c_structs(header, struct_name, mirror):
    layout, size = c_layout(parse_struct(header_text(header), struct_name))
    cls = getattr(native, mirror)
    assert [name for name, *_ in layout] == [f[0] for f in cls._fields_]
    for name, offset, nbytes, _ in layout:
        descriptor = getattr(cls, name)
        assert (descriptor.offset, descriptor.size) == (offset, nbytes), f"{mirror}.{name}"
    assert ctypes.sizeof(cls) == size


def test_parser_sees_a_deliberate_drift():
    """The checks above are only worth something if the parser reads real layouts."""
    text = "struct argus_row { uint64_t ts_ns; uint16_t pid; char comm[16]; };"
    layout, size = c_layout(parse_struct(text, "argus_row"))
    assert layout == [("ts_ns", 0, 8, "u"), ("pid", 8, 2, "u"), ("comm", 10, 16, "S")]
    assert size == 32
    assert [n for n, *_ in c_layout(parse_struct(header_text("argus_decode.h"), "argus_row"))[0]] != \
        ["ts_ns", "tid", "pid"] + list(schema.ROW_DTYPE.names[3:])
