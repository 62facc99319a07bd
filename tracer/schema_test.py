"""The Python mirrors cannot drift from the C headers.

Parses tracer/ringbuf/argus_event.h, tracer/ringbuf/argus_decode.h and tracer/ringbuf/argus_rb.h with
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
TRACER = HERE


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
    text = (TRACER / "ringbuf" / name).read_text()
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
    ("argus_net_dir", "ARGUS_NET_", "NET_"),
    ("argus_lost_kind", "ARGUS_LOST_", "LOST_"),
    ("argus_go_snapshot_flags", "ARGUS_GO_SNAP_", "GO_SNAP_"),
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
        parse_enum(EVENT_H, "argus_event_type")["ARGUS_EV_TYPE_MAX"]} - set(schema.RECORD_ONLY_TYPES)
    assert set(schema.STATE_NAMES) == set(parse_enum(EVENT_H, "argus_task_state").values())
    assert set(schema.WAIT_NAMES) == set(parse_enum(EVENT_H, "argus_wait_reason").values())
    assert set(schema.WAKE_CONTEXT_NAMES) == set(parse_enum(EVENT_H, "argus_wake_context").values())
    assert set(schema.IRQ_NAMES) == set(parse_enum(EVENT_H, "argus_irq_kind").values())
    assert set(schema.FD_KIND_NAMES) == set(parse_enum(EVENT_H, "argus_fd_kind").values())
    assert set(schema.TIMER_KIND_NAMES) == set(parse_enum(EVENT_H, "argus_timer_kind").values())
    assert set(schema.LOCK_KIND_NAMES) == set(parse_enum(EVENT_H, "argus_lock_kind").values())
    assert set(schema.LOCK_TYPE_NAMES) == set(parse_enum(EVENT_H, "argus_lock_type").values())
    assert set(schema.NET_DIR_NAMES) == set(parse_enum(EVENT_H, "argus_net_dir").values())
    assert set(schema.LOST_KIND_NAMES) == set(parse_enum(EVENT_H, "argus_lost_kind").values())
    assert schema.TYPE_BY_NAME == {v: k for k, v in schema.TYPE_NAMES.items()}


def test_defines_match_the_header():
    defines = dict(re.findall(r"#define\s+(ARGUS_\w+)\s+(\w+)", EVENT_H))
    assert schema.SCHEMA_VERSION == int(defines["ARGUS_SCHEMA_VERSION"])
    assert schema.SYSCALL_NONE == int(defines["ARGUS_SYSCALL_NONE"].rstrip("uU"), 0)
    assert schema.SWITCH_OUT_BASE_SIZE == int(defines["ARGUS_SWITCH_OUT_BASE_SIZE"])
    assert schema.SWITCH_BASE_SIZE == int(defines["ARGUS_SWITCH_BASE_SIZE"])
    assert schema.SYSCALL_ENTER_SHORT_SIZE == int(defines["ARGUS_SYSCALL_ENTER_SHORT_SIZE"])
    assert schema.SYSCALL_SIZE == int(defines["ARGUS_SYSCALL_SIZE"])
    assert schema.USER_STACK_MAX_FRAMES == int(defines["ARGUS_USER_STACK_MAX_FRAMES"])
    assert schema.MAPPING_MAX_PATH == int(defines["ARGUS_MAPPING_MAX_PATH"])
    assert schema.WAIT_SITE_MAX_FDS == int(defines["ARGUS_WAIT_SITE_MAX_FDS"])
    assert schema.GO_SNAP_WAIT_LEN == int(defines["ARGUS_GO_SNAP_WAIT_LEN"])
    assert schema.FUTEX_TID_MASK == int(defines["ARGUS_FUTEX_TID_MASK"].rstrip("uU"), 0)
    assert schema.HF_NET_IO_MASK == int(defines["ARGUS_HF_NET_IO_MASK"])


@pytest.mark.parametrize("struct_name, size", [
    ("argus_ev_switch_out", 48), ("argus_ev_switch", 56), ("argus_ev_syscall_enter_short", 40), ("argus_ev_syscall", 48), ("argus_ev_fd_info", 56), ("argus_ev_timer", 64),
    ("argus_ev_user_stack", 256), ("argus_ev_mapping", 256),
    ("argus_ev_wait_site", 96), ("argus_ev_futex_state", 48), ("argus_ev_file_lock", 64), ("argus_ev_probe", 48),
    ("argus_ev_net_io", 88), ("argus_ev_net_io_short", 40), ("argus_ev_lost", 40), ("argus_ev_go_snapshot", 96),
])
def test_new_record_layouts(struct_name, size):
    """Sizes the BPF side, the decoder and docs/event-schema.md rely on."""
    text = EVENT_H.replace("ARGUS_USER_STACK_MAX_FRAMES", str(schema.USER_STACK_MAX_FRAMES)).replace(
        "ARGUS_MAPPING_MAX_PATH", str(schema.MAPPING_MAX_PATH)).replace(
        "ARGUS_WAIT_SITE_MAX_FDS", str(schema.WAIT_SITE_MAX_FDS)).replace(
        "ARGUS_GO_SNAP_WAIT_LEN", str(schema.GO_SNAP_WAIT_LEN))
    # The 24-byte header, as three words (its own layout is checked by the ring buffer tests).
    text = text.replace("struct argus_event_header h;", "__u64 h_ts, h_ids, h_rest;")
    fields = parse_struct(text, struct_name)
    assert c_layout(fields)[1] == size
    if struct_name == "argus_ev_switch_out":
        offsets = dict((name, off) for name, off, *_ in c_layout(fields)[0])
        assert offsets["user_stack_id"] == schema.SWITCH_OUT_BASE_SIZE
    if struct_name == "argus_ev_switch":
        offsets = dict((name, off) for name, off, *_ in c_layout(fields)[0])
        assert offsets["user_stack_id"] == schema.SWITCH_BASE_SIZE
        out = dict((name, off) for name, off, *_ in c_layout(parse_struct(text, "argus_ev_switch_out"))[0])
        # the switch-out side has switch_out's layout (the hang detector and split rely on it)
        assert all(offsets[m] == out[m] for m in ("state", "wait_reason", "prio", "syscall_nr", "wait_obj"))
    if struct_name == "argus_ev_syscall":
        offsets = dict((name, off) for name, off, *_ in c_layout(fields)[0])
        enter = dict((name, off) for name, off, *_ in c_layout(parse_struct(text, "argus_ev_syscall_enter_short"))[0])
        # the enter side keeps the 40-byte enter's layout: the BPF side rewrites that record in place
        assert all(offsets[m] == enter[m] for m in ("nr", "aux", "obj", "obj2"))


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


CTYPE_OF = {"__u8": "u8", "__u16": "u16", "__u32": "u32", "__u64": "u64", "__s32": "s32", "__s64": "s64"}


def c_function_body(text, name):
    m = re.search(rf"\n[^\n]*\b{name}\s*\([^)]*\)\s*\n?{{", text)
    assert m, f"{name}() not found"
    depth, i = 1, m.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


def decoder_widening():
    """{event type: ({column: payload member or None for a side index}, record struct)}
    from argus_decode.c: widen()'s `case ARGUS_EV_X:` blocks and
    widen_side()'s `r->type == ARGUS_EV_X` branches, each `r->col = ... e->member`
    (None: the value is a side-array index) or memcpy(r->comm, ... ->comm)."""
    text = header_text("argus_decode.c")
    out = {}
    for fn, label in (("widen", r"case ARGUS_EV_(\w+):"), ("widen_side", r"r->type == ARGUS_EV_(\w+)")):
        parts = re.split(label, c_function_body(text, fn))
        pending = []
        for name, block in zip(parts[1::2], parts[2::2]):
            pending.append(getattr(schema, name))
            assigns = {col: (re.search(r"->(\w+)\s*(?:!=\s*0)?\s*$", expr) or [None, None])[1]
                       if re.search(r"\b(e|rec\))->", expr) else None
                       for col, expr in re.findall(r"\br->(\w+)\s*=\s*([^;]+);", block)}
            assigns.update({col: "comm" for col in re.findall(r"memcpy\(r->(\w+),[^;]*->comm\b", block)})
            if not assigns:
                continue                          # a case that falls through to the next
            struct = re.search(r"struct (argus_ev_\w+)", block).group(1)
            for t in pending:
                cols, _ = out.setdefault(t, ({}, struct))
                cols.update(assigns)
            pending = []
    return out


def test_row_fields_match_the_decoder():
    """ROW_FIELDS says what argus_decode.c writes into each column, per type,
    and each field's C type is the member's in argus_event.h."""
    widening = decoder_widening()
    event_h = EVENT_H.replace("ARGUS_USER_STACK_MAX_FRAMES", "1").replace(
        "ARGUS_MAPPING_MAX_PATH", "1").replace("ARGUS_WAIT_SITE_MAX_FDS", "1").replace(
        "ARGUS_COMM_LEN", "16").replace("struct argus_event_header h;", "__u64 h;")
    # A NET_IO_SHORT record is a NET_IO row: each member it has goes to the
    # column NET_IO's member of the same name goes to, in a type no wider.
    short_cols, short_struct = widening.pop(schema.NET_IO_SHORT)
    net_cols = widening[schema.NET_IO][0]
    short_members = {name: c_type for name, c_type, *_ in parse_struct(event_h, short_struct)}
    net_members = {name: c_type for name, c_type, *_ in parse_struct(event_h, widening[schema.NET_IO][1])}
    short_set = {col: name for col, name in short_cols.items() if name}
    assert short_set and all(net_cols[col] == name for col, name in short_set.items()), short_set
    assert set(short_set.values()) == set(short_members) - {"h"}
    for name in set(short_members) - {"h"}:
        assert int(re.sub(r"\D", "", short_members[name])) <= int(re.sub(r"\D", "", net_members[name])), name
    assert set(widening) == set(schema.TYPE_NAMES) == set(schema.ROW_FIELDS)
    for t, (cols, struct) in widening.items():
        fields = schema.ROW_FIELDS[t]
        mapped = {f.column: (None if f.ctype == "side" else f.name) for f in fields}
        assert mapped == cols, f"{schema.TYPE_NAMES[t]}: schema {mapped} != decoder {cols}"
        members = {name: c_type for name, c_type, *_ in parse_struct(event_h, struct)}
        for f in fields:
            if f.ctype == "side":
                continue
            want = "comm" if members[f.name] == "char" else CTYPE_OF[members[f.name]]
            assert f.ctype == want, f"{schema.TYPE_NAMES[t]}.{f.name}: {f.ctype} != {members[f.name]}"
            assert f.column in schema.ROW_DTYPE.names
            assert schema.column(t, f.name) == f.column


def test_switch_split_copies_every_member_by_name():
    """argus_split_switch makes the SWITCH_OUT and SWITCH_IN records a SWITCH
    record stands for: every switch_out member from the SWITCH member of the
    same name, and the switch-in side's task from next_pid / next_tid with
    prev = the header's task.  So ROW_FIELDS of SWITCH_OUT / SWITCH_IN (checked
    against widen() above) hold for the rows of SWITCH records too."""
    body = c_function_body(header_text("argus_decode.c"), "argus_split_switch")
    copies = dict(re.findall(r"\b(o->\w+(?:\.\w+)?|i->\w+(?:\.\w+)?)\s*=\s*e->([\w.]+);", body))
    event_h = EVENT_H.replace("struct argus_event_header h;", "__u64 h;")
    out_members = [name for name, *_ in parse_struct(event_h, "argus_ev_switch_out") if name != "h"]
    switch_members = {name for name, *_ in parse_struct(event_h, "argus_ev_switch")}
    for m in out_members:
        assert copies.get(f"o->{m}") == m and m in switch_members, m
    assert copies["o->h"] == "h" and copies["i->h"] == "h"
    assert (copies["i->h.pid"], copies["i->h.tid"]) == ("next_pid", "next_tid")
    assert (copies["i->prev_pid"], copies["i->prev_tid"]) == ("h.pid", "h.tid")
    assert "ARGUS_EV_SWITCH_OUT" in body and "ARGUS_EV_SWITCH_IN" in body


def test_syscall_split_copies_every_member_by_name():
    """argus_split_syscall makes the SYSCALL_ENTER and SYSCALL_EXIT records a
    SYSCALL record stands for: every member of the 40-byte enter and of the
    32-byte exit from the SYSCALL member of the same name (the exit's ts is
    the enter's plus exit_delta_ns).  So ROW_FIELDS of SYSCALL_ENTER /
    SYSCALL_EXIT hold for the rows of SYSCALL records too."""
    body = c_function_body(header_text("argus_decode.c"), "argus_split_syscall")
    copies = dict(re.findall(r"\b((?:enter|exit)->\w+(?:\.\w+)?)\s*=\s*e->([\w.]+);", body))
    event_h = EVENT_H.replace("struct argus_event_header h;", "__u64 h;")
    syscall_members = {name for name, *_ in parse_struct(event_h, "argus_ev_syscall")}
    for side, struct in (("enter", "argus_ev_syscall_enter_short"), ("exit", "argus_ev_syscall_exit_short")):
        for m in [name for name, *_ in parse_struct(event_h, struct) if name != "h"]:
            assert copies.get(f"{side}->{m}") == m and m in syscall_members, (side, m)
        assert copies[f"{side}->h"] == "h"
    assert re.search(r"exit->h\.ts_ns\s*=\s*e->h\.ts_ns\s*\+\s*e->exit_delta_ns;", body)
    assert "ARGUS_EV_SYSCALL_ENTER" in body and "ARGUS_EV_SYSCALL_EXIT" in body


def test_the_field_map_parser_sees_the_columns_change_meaning():
    """The parser reads real assignments: peer_tid is five different things."""
    widening = decoder_widening()
    assert {widening[t][0]["peer_tid"] for t in (schema.WAKEUP, schema.SWITCH_IN, schema.FORK, schema.TIMER,
                                                 schema.MAPPING)} == {
        "wakee_tid", "prev_tid", "child_tid", "arm_tid", None}
    with pytest.raises(KeyError):
        schema.column(schema.WAKEUP, "child_tid")


def test_row_values_restore_the_c_types():
    row = schema.empty_rows(1)[0]
    row["type"], row["val"], row["obj2"], row["aux"] = schema.FD_INFO, -1, 7, -3
    assert schema.row_values(row)["peer"] == 2**64 - 1 and schema.row_values(row)["fd"] == -3
    row["type"] = schema.FILE_LOCK
    row["obj2"] = 2**64 - 1
    assert schema.row_values(row)["len"] == -1


def test_futex_constants_match_the_graph_core():
    """The futex command mask has one home per language: the C core's copy
    (argus_graph_int.h) is checked here."""
    core = (TRACER.parent / "graphbuild" / "core" / "argus_graph_int.h").read_text()
    assert int(re.search(r"#define FUTEX_OP_MASK\s+(\w+)", core).group(1), 0) == schema.FUTEX_CMD_MASK
    assert schema.futex_op_name(128 | schema.FUTEX_WAIT_BITSET) == "WAIT_BITSET"
    assert set(schema.FUTEX_OP_NAMES) == set(range(14))
