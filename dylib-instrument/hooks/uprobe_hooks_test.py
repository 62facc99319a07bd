"""uprobe_hooks.py against the shipped spec and this machine's libraries."""
import ctypes
import json
import os
import sys

import pytest

from argus.hooks import hookspec, uprobe_hooks
from argus.tracer.errors import ArgusError


def test_shipped_ids_match_argus_run_order():
    # argus run numbers the whole shipped spec in file order (hookspec.load)
    everything = hookspec.load()
    got = uprobe_hooks.numbered_hooks(uprobe_hooks.spec_paths(["pthread"]))
    assert {h.symbol for _, h in got} >= {"pthread_mutex_lock", "pthread_mutex_unlock"}
    assert all(everything[pid][0] == h.symbol and everything[pid][3] == ("libc.so.6",) for pid, h in got)


def test_offset_is_where_the_function_is_in_the_file():
    """The bytes at the file offset are the bytes this process runs at the
    function's address: the offset a uprobe needs."""
    paths = uprobe_hooks.find_libraries(("libc.so.6",))
    assert len(paths) == 1 and paths[0].startswith("/")       # every process maps the one libc: one file
    path = paths[0]
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


def _libpython_of(program):
    """The libpython file program loads (DT_NEEDED, as this process resolved
    it), or None when the program links libpython in."""
    from elftools.elf.elffile import ELFFile
    with open(program, "rb") as f:
        dynamic = ELFFile(f).get_section_by_name(".dynamic")
        needed = [t.needed for t in dynamic.iter_tags("DT_NEEDED")] if dynamic else []
    name = next((n for n in needed if n.startswith("libpython3")), None)
    if name is None:
        return None
    with open("/proc/self/maps") as f:
        mapped = {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}
    return next((os.path.realpath(p) for p in mapped if os.path.basename(p) == name), None)


def test_cpython_hooks_land_in_every_python_here():
    """cpython.json's library alternatives: a python3.X program that links
    libpython in (Debian's, found in PATH as an ELF file that defines the
    API), and the libpython3.X.so.1.0 that a shared build loads (this
    interpreter's, when it is pyenv's: outside the loader cache, found
    because this process maps it).  Each file has both hooks under the
    same two probe ids; obj "process" (6) and return_obj "process" (7)
    reach argusd's list as the 7th and 8th fields."""
    listing, skipped = uprobe_hooks.hook_list(["cpython"])
    lines = [line.split("\t") for line in listing.splitlines()]
    assert not skipped and lines
    files = {f[4] for f in lines}
    for path in files:
        assert {(f[0], f[5]) for f in lines if f[4] == path} == {("0", "PyEval_SaveThread"),
                                                                    ("1", "PyEval_RestoreThread")}
    assert all(f[6:] == ["6", "0", "64", "-"] for f in lines if f[5] == "PyEval_SaveThread")
    assert all(f[6:] == ["6", "7", "64", "-"] for f in lines if f[5] == "PyEval_RestoreThread")
    assert not any("shims" in p for p in files)
    programs = {os.path.realpath(p) for p in uprobe_hooks._path_programs(("python3.[0-9][0-9]",))}
    for program in filter(uprobe_hooks._is_elf_here, programs):     # shims and wrappers are scripts
        assert (program in files) == (_libpython_of(program) is None), program
    me = _libpython_of(os.path.realpath(sys.executable))
    if me is None:
        pytest.skip(f"{sys.executable} links libpython in: no shared libpython to find")
    assert me in files


def test_mapped_files_are_matched_by_pattern_and_kept_once():
    """A library no loader-cache name matches is still found while a
    process maps it; the same file mapped by many processes is one entry."""
    got = uprobe_hooks.find_libraries(("libc.so.[0-9]",), {"getpid"})
    assert len(got) == 1 and os.path.basename(got[0]).startswith("libc")
    assert uprobe_hooks.find_libraries(("libargus-no-such-*.so",), {"getpid"}) == []
    libc_here = [p for p in uprobe_hooks._mapped_files(("libc.so.6",)) if p.startswith("/proc/")]
    assert libc_here == [], "a file of this mount namespace must keep its own path"


def test_gdbus_serials_keep_32_bits():
    listing, _ = uprobe_hooks.hook_list(["gdbus"])
    fields = {line.split("\t")[5]: line.split("\t") for line in listing.splitlines()}
    if not fields:
        pytest.skip("no libgio-2.0.so.0 here")
    assert fields["g_dbus_message_set_serial"][6:] == ["1", "0", "32", "-"]
    assert fields["g_dbus_message_get_reply_serial"][6:] == ["0", "0", "32", "-"]
