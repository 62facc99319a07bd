"""cli/uprobe_hooks.py against the shipped spec and this machine's libraries."""
import ctypes
import json

import pytest

from argus.cli import hookspec, uprobe_hooks
from argus.cli.common import ArgusError


def test_shipped_ids_match_argus_run_order():
    # argus run numbers the whole shipped spec in file order (hookspec.load)
    everything = hookspec.load()
    got = uprobe_hooks.numbered_hooks(uprobe_hooks.spec_paths(["pthread"]))
    assert {h.symbol for _, h in got} >= {"pthread_mutex_lock", "pthread_mutex_unlock"}
    assert all(everything[pid][0] == h.symbol and everything[pid][3] == "libc.so.6" for pid, h in got)


def test_offset_is_where_the_function_is_in_the_file():
    """The bytes at the file offset are the bytes this process runs at the
    function's address: the offset a uprobe needs."""
    path = uprobe_hooks.find_library("libc.so.6")
    assert path and path.startswith("/")
    offsets = uprobe_hooks.symbol_offsets(path, {"getpid", "no_such_function_here"})
    assert set(offsets) == {"getpid"}
    with open(path, "rb") as f:
        f.seek(offsets["getpid"])
        in_file = f.read(16)
    addr = ctypes.cast(ctypes.CDLL("libc.so.6").getpid, ctypes.c_void_p).value
    assert ctypes.string_at(addr, 16) == in_file


def test_hook_list_skips_what_does_not_resolve(tmp_path):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"library": "libc.so.6", "hooks": [
        {"symbol": "getpid", "enter": "enqueue", "return": "probe_return"},
        {"symbol": "no_such_function_here", "enter": "enqueue"}]}))
    listing, skipped = uprobe_hooks.hook_list([str(spec)])
    fields = listing.splitlines()[0].split("\t")
    assert len(listing.splitlines()) == 1 and fields[0] == "0" and fields[1:3] == ["50", "56"]
    assert fields[5] == "getpid" and int(fields[3], 16) > 0
    assert fields[6:] == ["0", "0", "64", "-"]     # obj_arg, return_obj, obj_bits, no ret_deref
    assert len(skipped) == 1 and "no_such_function_here" in skipped[0]


def test_hook_list_carries_the_ret_deref():
    listing, skipped = uprobe_hooks.hook_list(["xcb"])
    if not listing:
        pytest.skip("libxcb.so.1 not installed")
    lines = [line.split("\t") for line in listing.splitlines()]
    assert {f[5] for f in lines} == {"xcb_wait_for_event", "xcb_poll_for_event", "xcb_poll_for_queued_event"}
    assert all(f[9].startswith("0:1:127:2.3.4.5;") for f in lines) and not skipped


def test_unknown_name():
    with pytest.raises(ArgusError, match="shipped: .*glib"):
        uprobe_hooks.spec_paths(["nosuch"])


def test_a_program_is_a_library_and_the_process_key_crosses_to_argusd():
    """cpython.json names the python3.11 program (it links libpython in):
    found in PATH as an ELF file; obj "process" (6) and return_obj
    "process" (7) reach argusd's list as the 7th and 8th fields."""
    import shutil
    if not shutil.which("python3.11"):
        pytest.skip("no python3.11 program here")
    listing, skipped = uprobe_hooks.hook_list(["cpython"])
    lines = [line.split("\t") for line in listing.splitlines()]
    assert not skipped and len(lines) == 2
    by_symbol = {f[5]: f for f in lines}
    assert by_symbol["PyEval_SaveThread"][6:] == ["6", "0", "64", "-"]
    assert by_symbol["PyEval_RestoreThread"][6:] == ["6", "7", "64", "-"]
    assert all(f[4].endswith("python3.11") and "shims" not in f[4] for f in lines)


def test_gdbus_serials_keep_32_bits():
    listing, _ = uprobe_hooks.hook_list(["gdbus"])
    fields = {line.split("\t")[5]: line.split("\t") for line in listing.splitlines()}
    if not fields:
        pytest.skip("no libgio-2.0.so.0 here")
    assert fields["g_dbus_message_set_serial"][6:] == ["1", "0", "32", "-"]
    assert fields["g_dbus_message_get_reply_serial"][6:] == ["0", "0", "32", "-"]
