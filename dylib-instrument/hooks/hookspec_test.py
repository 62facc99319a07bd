import json
import os
import re

import pytest

from argus.hooks import hookspec
from argus.tracer.errors import ArgusError


def test_types_are_the_schema_probe_types():
    assert hookspec.PROBE_TYPES["mutex_lock"] == 53
    assert set(hookspec.PROBE_TYPES) == {"callback_begin", "callback_end", "enqueue", "ipc_send", "ipc_recv",
                                         "mutex_lock", "mutex_unlock", "input", "probe_return"}


def test_shipped_specs_load_and_flatten():
    spec_dir = hookspec.default_spec_dir()      # the checkout: the specs beside the module
    paths = sorted(os.path.join(spec_dir, n) for n in os.listdir(spec_dir) if n.endswith(".json"))
    hooks = hookspec.load(paths)
    assert ("pthread_mutex_lock", 53, 56, ("libc.so.6",), 0, "-", 0, 64, "-") in hooks
    # a condition wait: its mutex released at entry, the cond (argument 0, code 1) named at return
    assert ("pthread_cond_wait", 54, 56, ("libc.so.6",), 1, "-", 1, 64, "-") in hooks
    # the GIL: no argument names it, both sides record the process key
    # in whichever CPython 3 has it: the program (Debian) or libpython (pyenv, Fedora), not 3.13t
    gil = {h.symbol: h for h in hooks if "python3.[0-9][0-9]" in h.library}
    assert gil["PyEval_RestoreThread"][1:] == (53, 56, gil["PyEval_RestoreThread"].library, hookspec.OBJ_PROCESS,
                                               "-", hookspec.RETURN_PROCESS, 64, "-")
    assert "libpython3.[0-9][0-9].so.1.0" in gil["PyEval_SaveThread"].library
    # GLib's enqueue side names the context its dispatch records, NULL = the default one
    assert ("g_source_attach", 50, 0, ("libglib-2.0.so.0",), 1, "g_main_context_default", 0, 64, "-") in hooks
    # X11 input: key / button events, core and XInput 2, through the returned event
    xcb = {h.symbol: h for h in hooks if h.library == ("libxcb.so.1",)}
    assert set(xcb) == {"xcb_wait_for_event", "xcb_poll_for_event", "xcb_poll_for_queued_event"}
    assert {(h.enter, h.ret) for h in xcb.values()} == {(0, hookspec.PROBE_TYPES["input"])}
    assert xcb["xcb_poll_for_event"].ret_deref == (
        "0:1:127:2.3.4.5;0:8:0|0:1:127:35,8:2:65535:2.3.4.5;8:1:0,16:1:1,2:2:2,12:4:4")
    flat = [line.split("\t") for line in hookspec.flatten(hooks).splitlines()]
    assert len(flat) == sum(len(h.library) for h in hooks)
    assert all(len(fields) == 10 for fields in flat)
    # a hook's library alternatives: a line each, under its one probe id
    restore = [f for f in flat if f[1] == "PyEval_RestoreThread"]
    assert len({f[0] for f in restore}) == 1 and [f[4] for f in restore] == list(gil["PyEval_RestoreThread"].library)


@pytest.mark.parametrize("spec,message", [
    ({"hooks": [{"symbol": "f", "enter": "nope"}]}, "unknown record type 'nope'"),
    ({"hooks": [{"symbol": "f; rm -rf", "enter": "enqueue"}]}, "needs a \"symbol\""),
    ({"hooks": [{"symbol": "f"}]}, "records nothing"),
    ({"nohooks": 1}, "needs a list"),
    ({"hooks": [{"symbol": "f" * 256, "enter": "enqueue"}]}, "at most 255 characters"),
    ({"hooks": [{"symbol": "f", "enter": "enqueue", "obj_arg": 6}]}, "must be an argument index 0-5"),
    ({"hooks": [{"symbol": "f", "enter": "enqueue", "obj_arg": "1"}]}, "must be an argument index 0-5"),
    ({"hooks": [{"symbol": "f", "enter": "enqueue", "null_obj": "a b"}]}, "must name a function"),
    ({"hooks": [{"symbol": "f", "enter": "enqueue", "obj_bits": 16}]}, "\"obj_bits\" must be 32 or 64"),
    ({"hooks": [{"symbol": "f", "enter": "enqueue", "obj": "thread"}]}, "\"obj\" can only be \"process\""),
    ({"hooks": [{"symbol": "f", "enter": "enqueue", "obj": "process", "obj_arg": 1}]}, "excludes \"obj_arg\""),
    ({"hooks": [{"symbol": "f", "enter": "enqueue", "return_obj": 0}]}, "needs a \"return\" record"),
    ({"hooks": [{"symbol": "f", "return": "probe_return", "return_obj": 6}]}, "\"return_obj\" must be"),
    ({"hooks": [{"symbol": "f", "return": "probe_return", "return_obj": "arg"}]}, "\"return_obj\" must be"),
    ({"library": "../evil lib", "hooks": [{"symbol": "f", "enter": "enqueue"}]}, "must be a soname"),
    ({"library": ["libx.so.1", "/lib/liby.so"], "hooks": [{"symbol": "f", "enter": "enqueue"}]}, "must be a soname"),
    ({"library": ["-", "libx.so.1"], "hooks": [{"symbol": "f", "enter": "enqueue"}]}, "must be a soname"),
    ({"library": [], "hooks": [{"symbol": "f", "enter": "enqueue"}]}, "list of 1-16"),
    ({"library": ["libx.so.%d" % i for i in range(17)], "hooks": [{"symbol": "f", "enter": "enqueue"}]},
     "list of 1-16"),
    ({"library": ["lib\tx.so"], "hooks": [{"symbol": "f", "enter": "enqueue"}]}, "must be a soname"),
    ({"hooks": [{"symbol": "f", "enter": "input", "ret_deref": [{"when": []}]}]}, "needs a \"return\""),
    ({"hooks": [{"symbol": "f", "return": "input", "return_obj": 0, "ret_deref": [{"when": []}]}]},
     "excludes \"return_obj\""),
    ({"hooks": [{"symbol": "f", "return": "input", "ret_deref": []}]}, "list of 1-4 alternatives"),
    ({"hooks": [{"symbol": "f", "return": "input", "ret_deref": "nope"}]}, "not one of the file's"),
    ({"hooks": [{"symbol": "f", "return": "input", "ret_deref": [{"when": [{"offset": 0, "size": 3, "in": [1]}]}]}]},
     "must be 1, 2, 4 or 8"),
    ({"hooks": [{"symbol": "f", "return": "input", "ret_deref": [{"when": [{"offset": 0, "size": 1, "in": [256]}]}]}]},
     "values 0-255"),
    ({"hooks": [{"symbol": "f", "return": "input", "ret_deref": [{"when": [{"offset": 5000, "in": [1]}]}]}]},
     "\"offset\" must be an integer 0-4096"),
    ({"hooks": [{"symbol": "f", "return": "input", "ret_deref": [{"obj": [{"from": 0, "size": 4, "to": 6}]}]}]},
     "inside obj's 8 bytes"),
    ({"hooks": [{"symbol": "f", "return": "input", "ret_deref": [{"when": [], "eval": "x"}]}]},
     "an object with \"when\" and \"obj\""),
    ({"hooks": [{"symbol": "f", "return": "input", "ret_deref": [
        {"when": [{"offset": 4096, "size": 8, "in": [2 ** 64 - 1 - k for k in range(8)]}] * 4}] * 4}]},
     "is too large"),
])
def test_bad_specs_are_one_clear_error(tmp_path, spec, message):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(spec))
    with pytest.raises(ArgusError, match=re.escape(message)):
        hookspec.load([str(p)])


def test_not_json(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("{")
    with pytest.raises(ArgusError, match="not valid JSON"):
        hookspec.load([str(p)])


def test_ret_deref_text_form(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"ret_derefs": {"ev": [
        {"when": [{"offset": 0, "size": 2, "mask": 255, "in": [7, 9]}], "obj": [{"from": 4, "size": 4, "to": 0}]},
        {}]},
        "hooks": [{"symbol": "f", "return": "input", "ret_deref": "ev"},
                  {"symbol": "g", "return": "probe_return", "ret_deref": [{"when": [{"offset": 3, "in": [1]}]}]}]}))
    f, g = hookspec.load([str(p)])
    assert f.ret_deref == "0:2:255:7.9;4:4:0|;0:8:0"      # an empty alternative: always, the 8 bytes at 0
    assert g.ret_deref == "3:1:255:1;0:8:0"
