import json
import os
import re

import pytest

from argus.cli import hookspec
from argus.cli.common import ArgusError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_types_are_the_schema_probe_types():
    assert hookspec.PROBE_TYPES["mutex_lock"] == 53
    assert set(hookspec.PROBE_TYPES) == {"callback_begin", "callback_end", "enqueue", "ipc_send", "ipc_recv",
                                         "mutex_lock", "mutex_unlock", "input", "probe_return"}


def test_shipped_specs_load_and_flatten():
    spec_dir = os.path.join(REPO, "dylib-instrument", "hooks")
    paths = sorted(os.path.join(spec_dir, n) for n in os.listdir(spec_dir))
    hooks = hookspec.load(paths)
    assert ("pthread_mutex_lock", 53, 56, "libc.so.6", 0, "-", 0, 64) in hooks
    # a condition wait: its mutex released at entry, the cond (argument 0, code 1) named at return
    assert ("pthread_cond_wait", 54, 56, "libc.so.6", 1, "-", 1, 64) in hooks
    # the GIL: no argument names it, both sides record the process key
    assert ("PyEval_RestoreThread", 53, 56, "python3.11", hookspec.OBJ_PROCESS, "-", hookspec.RETURN_PROCESS, 64) in hooks
    # GLib's enqueue side names the context its dispatch records, NULL = the default one
    assert ("g_source_attach", 50, 0, "libglib-2.0.so.0", 1, "g_main_context_default", 0, 64) in hooks
    flat = hookspec.flatten(hooks).splitlines()
    assert len(flat) == len(hooks)
    assert all(len(line.split("\t")) == 9 for line in flat)


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
