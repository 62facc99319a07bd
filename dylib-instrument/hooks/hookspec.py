"""The hook spec: which functions the trampolines hook and what they record.

Data in dylib-instrument/hooks/*.json, beside this module: one file
per library (its soname: the symbols are taken from it; or a list of
alternatives, each a name or an fnmatch pattern such as
"libpython3.[0-9][0-9].so.1.0", for an API that several builds or versions
provide: a hook is installed in every one that is loaded), each hook naming
its symbol, the record type at entry and, optionally, at return, which
argument is the entry's obj ("obj_arg", default 0) and a function of no
arguments whose result stands for a NULL obj ("null_obj", e.g. GLib's
g_main_context_default).  "obj": "process" in place of an argument makes the
entry's obj one fixed key per process (OBJ_PROCESS: a process-wide lock whose
functions take no argument naming it, CPython's GIL), and "return_obj"
picks the return record's obj: "result" (default: the return value), an
argument index (saved at entry: pthread_cond_wait's cond) or "process";
"obj_bits": 32 keeps the low 32 bits of both (a 32-bit argument or result:
the ABI leaves the register's upper half undefined; GDBus serials).  For a
function returning a pointer to a record, "ret_deref" says how the return
record reads its obj through that pointer and which returns it keeps
(below).  `argus run` validates the files and flattens them into the
agent's hook list (one line per hook and library alternative: probe id,
symbol, entry type, return type, library, obj_arg, null_obj, return_obj,
obj_bits, ret_deref, tab separated; see dylib-instrument/agent.c).  Record types
are the schema's user-space tracepoint types (argus_ev_probe).
"""
import collections
import fnmatch
import json
import os
import re

from argus.tracer.errors import ArgusError

from argus.tracer import schema

# record type name -> number (tracer/ringbuf/argus_event.h via schema.py)
PROBE_TYPES = {schema.TYPE_NAMES[t]: t for t in schema.PROBE_TYPES}

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_.@]*$")
MAX_SYMBOL = 255  # the agent's buffer (dylib-instrument/agent.c)
MAX_OBJ_ARG = 5   # the integer argument registers the thunks save: x86_64 rdi..r9, arm64 x0..x5
OBJ_PROCESS = 6   # obj_arg code: the process key (tracer/ringbuf/argus_event.h ARGUS_OBJ_PROCESS)
# return_obj codes (dylib-instrument/hook.h): 0 the return value, 1-6 argument 0-5 saved at entry, 7 the process key
RETURN_RESULT, RETURN_PROCESS = 0, 7

# library: a tuple of alternatives (names or fnmatch patterns); ("-",) = the first definition in scope
Hook = collections.namedtuple("Hook", "symbol enter ret library obj_arg null_obj return_obj obj_bits ret_deref",
                              defaults=(0, "-", RETURN_RESULT, 64, "-"))

# ret_deref limits: dylib-instrument/ret_deref.h
DEREF_ALTS, DEREF_CONDS, DEREF_VALUES, DEREF_COPIES, DEREF_MAX_OFFSET = 4, 4, 8, 4, 4096
DEREF_MAX_TEXT = 767      # the agent's buffer for the text form (dylib-instrument/agent.c)
_WHOLE_WORD = ({"from": 0, "size": 8, "to": 0},)

# a soname or an fnmatch pattern of one, no path: no tab, no space, no slash
_LIBRARY = re.compile(r"(-|[A-Za-z0-9_\[][A-Za-z0-9_.+*?\[\]!-]*)$")
MAX_LIBRARY = 127        # the agent's buffer (dylib-instrument/agent.c)
MAX_ALTERNATIVES = 16


def matches(name, library):
    """Whether a soname or file name is one of a hook's library alternatives
    (names or fnmatch patterns)."""
    return any(fnmatch.fnmatchcase(name, p) for p in library)


def default_spec_dir():
    # the specs sit beside this module, in the checkout (editable install)
    # and in the wheel alike (argus/hooks/)
    return os.path.dirname(os.path.abspath(__file__))


def _type(value, where):
    if value not in PROBE_TYPES:
        raise ArgusError(f"{where}: unknown record type {value!r}; known: {', '.join(PROBE_TYPES)}")
    return PROBE_TYPES[value]


def _uint(d, key, where, top, default=None):
    v = d.get(key, default)
    if type(v) is not int or not 0 <= v <= top:
        raise ArgusError(f"{where}: \"{key}\" must be an integer 0-{top}")
    return v


def _deref(value, where, named):
    """The "ret_deref" of a hook as the agent's text form (ret_deref.h):

      "ret_deref": [                        alternatives, the first that matches decides
        {"when": [{"offset": 0, "size": 1, "mask": 127, "in": [2, 3, 4, 5]}, ...],
         "obj":  [{"from": 0, "size": 2, "to": 0}, ...]}, ...]

    A condition reads the size-byte (1, 2, 4, 8) little-endian unsigned value
    at offset in the returned record, ands it with mask (default: all bits)
    and needs it among "in" (1-8 values); all conditions of an alternative
    must hold (none: always).  obj is assembled from the copies (record bytes
    [from, from+size) to obj bytes [to, to+size); default: the 8 bytes at 0).
    A NULL return, or no alternative matching, records nothing.  A string
    names one of the file's "ret_derefs" (named lists, shared by hooks)."""
    if isinstance(value, str):
        if value not in named:
            raise ArgusError(f"{where}: \"ret_deref\" {value!r} is not one of the file's \"ret_derefs\"")
        value = named[value]
    if not isinstance(value, list) or not 1 <= len(value) <= DEREF_ALTS:
        raise ArgusError(f"{where}: \"ret_deref\" must be a list of 1-{DEREF_ALTS} alternatives")
    alts = []
    for k, alt in enumerate(value):
        w = f"{where}: ret_deref {k}"
        if not isinstance(alt, dict) or set(alt) - {"when", "obj", "doc"}:
            raise ArgusError(f"{w}: an alternative is an object with \"when\" and \"obj\"")
        when, obj = alt.get("when", []), alt.get("obj", list(_WHOLE_WORD))
        if not isinstance(when, list) or len(when) > DEREF_CONDS:
            raise ArgusError(f"{w}: \"when\" must be a list of at most {DEREF_CONDS} conditions")
        if not isinstance(obj, list) or not 1 <= len(obj) <= DEREF_COPIES:
            raise ArgusError(f"{w}: \"obj\" must be a list of 1-{DEREF_COPIES} copies")
        conds = []
        for c in when:
            if not isinstance(c, dict) or set(c) - {"offset", "size", "mask", "in"}:
                raise ArgusError(f"{w}: a condition has \"offset\", \"size\", \"mask\", \"in\"")
            size = _uint(c, "size", w, 8, 1)
            if size not in (1, 2, 4, 8):
                raise ArgusError(f"{w}: a condition's \"size\" must be 1, 2, 4 or 8")
            top = (1 << (8 * size)) - 1
            values = c.get("in")
            if (not isinstance(values, list) or not 1 <= len(values) <= DEREF_VALUES
                    or any(type(v) is not int or not 0 <= v <= top for v in values)):
                raise ArgusError(f"{w}: \"in\" must list 1-{DEREF_VALUES} values 0-{top}")
            conds.append(f"{_uint(c, 'offset', w, DEREF_MAX_OFFSET)}:{size}:{_uint(c, 'mask', w, top, top)}:"
                         + ".".join(map(str, values)))
        copies = []
        for c in obj:
            if not isinstance(c, dict) or set(c) - {"from", "size", "to"}:
                raise ArgusError(f"{w}: a copy has \"from\", \"size\", \"to\"")
            src, size, to = _uint(c, "from", w, DEREF_MAX_OFFSET), _uint(c, "size", w, 8), _uint(c, "to", w, 7, 0)
            if not size or to + size > 8:
                raise ArgusError(f"{w}: a copy must land inside obj's 8 bytes (to + size <= 8, size >= 1)")
            copies.append(f"{src}:{size}:{to}")
        alts.append(",".join(conds) + ";" + ",".join(copies))
    text = "|".join(alts)
    if len(text) > DEREF_MAX_TEXT:
        raise ArgusError(f"{where}: \"ret_deref\" is too large ({len(text)} characters as the agent reads it, "
                         f"at most {DEREF_MAX_TEXT}): fewer alternatives or values")
    return text


def load_file(path):
    """The hooks of one spec file as Hook tuples."""
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except OSError as e:
        raise ArgusError(f"cannot read hook spec {path}: {e.strerror}")
    except (ValueError, UnicodeDecodeError) as e:
        raise ArgusError(f"hook spec {path} is not valid JSON: {e}")
    hooks = spec.get("hooks") if isinstance(spec, dict) else None
    if not isinstance(hooks, list):
        raise ArgusError(f"hook spec {path}: needs a list \"hooks\"")
    library = spec.get("library", "-")
    library = tuple(library) if isinstance(library, list) else (library,)
    if (not 1 <= len(library) <= MAX_ALTERNATIVES
            or not all(isinstance(n, str) and len(n) <= MAX_LIBRARY and _LIBRARY.match(n) for n in library)
            or ("-" in library and len(library) > 1)):
        raise ArgusError(f"hook spec {path}: \"library\" must be a soname such as libc.so.6, or a list of 1-"
                         f"{MAX_ALTERNATIVES} sonames or patterns (\"libpython3.[0-9][0-9].so.1.0\")")
    named = spec.get("ret_derefs", {})
    if not isinstance(named, dict):
        raise ArgusError(f"hook spec {path}: \"ret_derefs\" must map names to ret_deref lists")
    out = []
    for i, h in enumerate(hooks):
        where = f"{path}: hook {i}"
        if (not isinstance(h, dict) or not isinstance(h.get("symbol"), str) or not _SYMBOL.match(h["symbol"])
                or len(h["symbol"]) > MAX_SYMBOL):
            raise ArgusError(f"{where}: needs a \"symbol\" (a C identifier or mangled C++ name, "
                             f"at most {MAX_SYMBOL} characters)")
        enter = _type(h["enter"], where) if "enter" in h else 0
        ret = _type(h["return"], where) if "return" in h else 0
        if not enter and not ret:
            raise ArgusError(f"{where}: records nothing (give \"enter\" or \"return\")")
        obj_arg = h.get("obj_arg", 0)
        if type(obj_arg) is not int or not 0 <= obj_arg <= MAX_OBJ_ARG:
            raise ArgusError(f"{where}: \"obj_arg\" must be an argument index 0-{MAX_OBJ_ARG}")
        if "obj" in h:
            if h["obj"] != "process" or "obj_arg" in h:
                raise ArgusError(f"{where}: \"obj\" can only be \"process\" (and excludes \"obj_arg\")")
            obj_arg = OBJ_PROCESS
        return_obj = h.get("return_obj", "result")
        if return_obj == "result":
            return_obj = RETURN_RESULT
        elif return_obj == "process":
            return_obj = RETURN_PROCESS
        elif type(return_obj) is int and 0 <= return_obj <= MAX_OBJ_ARG:
            return_obj += 1
        else:
            raise ArgusError(f"{where}: \"return_obj\" must be \"result\", \"process\" or an argument index "
                             f"0-{MAX_OBJ_ARG}")
        if return_obj != RETURN_RESULT and not ret:
            raise ArgusError(f"{where}: \"return_obj\" needs a \"return\" record")
        obj_bits = h.get("obj_bits", 64)
        if obj_bits not in (32, 64) or type(obj_bits) is not int:
            raise ArgusError(f"{where}: \"obj_bits\" must be 32 or 64")
        null_obj = h.get("null_obj", "-")
        if null_obj != "-" and (not isinstance(null_obj, str) or not _SYMBOL.match(null_obj)):
            raise ArgusError(f"{where}: \"null_obj\" must name a function (a C identifier)")
        deref = "-"
        if "ret_deref" in h:
            if not ret:
                raise ArgusError(f"{where}: \"ret_deref\" needs a \"return\" record type")
            if return_obj != RETURN_RESULT:
                raise ArgusError(f"{where}: \"ret_deref\" reads the returned pointer: it excludes \"return_obj\"")
            deref = _deref(h["ret_deref"], where, named)
        out.append(Hook(h["symbol"], enter, ret, library, obj_arg, null_obj, return_obj, obj_bits, deref))
    return out


def load(paths=None):
    """Every hook of the given files (default: the installed spec), in order."""
    if paths is None:
        d = default_spec_dir()
        try:
            paths = sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".json"))
        except OSError as e:
            raise ArgusError(f"cannot list the hook spec directory {d}: {e.strerror}")
    hooks = []
    for p in paths:
        hooks.extend(load_file(p))
    if not hooks:
        raise ArgusError("the hook spec has no hooks")
    return hooks


def flatten(hooks):
    """The agent's hook list: probe id = index in the spec; a hook with several
    library alternatives is a line for each, under the one probe id (the
    agent installs each that is loaded, once per function)."""
    return "".join(f"{i}\t{h.symbol}\t{h.enter}\t{h.ret}\t{lib}\t{h.obj_arg}\t{h.null_obj}"
                   f"\t{h.return_obj}\t{h.obj_bits}\t{h.ret_deref}\n"
                   for i, h in enumerate(hooks) for lib in h.library)
