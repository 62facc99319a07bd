"""`argus start --uprobe-hooks`: the hook spec through uprobes, end to end.
A real daemon and a real GLib program that was already running when tracing
started (not under `argus run`): its dispatches are in the trace as
callback_begin / callback_end records with the hooked function's address and
the GMainContext as obj.  Hooks whose library or symbol is missing are
skipped with one line each, and tracing goes on."""
import json
import os
import subprocess
import sys

import pytest

from conftest import require_tracing
from test_probe_graph_e2e import GIL_CONTENTION, GIL_PYTHONS, gil_python

DISPATCHES = 20

# Loads GLib, says where g_main_context_dispatch and the default context are,
# waits for a line (tracing starts meanwhile), then runs a main loop that
# dispatches a 2 ms timeout DISPATCHES times, then stays until told (so the
# daemon can read its mappings).
GLIB_LOOP = """
import ctypes, json, os, sys
g = ctypes.CDLL('libglib-2.0.so.0')
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
g.g_main_loop_new.restype = ctypes.c_void_p
g.g_main_loop_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
g.g_main_loop_run.argtypes = [ctypes.c_void_p]
g.g_main_loop_quit.argtypes = [ctypes.c_void_p]
g.g_timeout_add.argtypes = [ctypes.c_uint, CB, ctypes.c_void_p]
g.g_main_context_default.restype = ctypes.c_void_p
print(json.dumps({"pid": os.getpid(),
                  "dispatch": ctypes.cast(g.g_main_context_dispatch, ctypes.c_void_p).value,
                  "context": g.g_main_context_default()}), flush=True)
sys.stdin.readline()
loop = g.g_main_loop_new(None, 0)
left = [%d]
def tick(_):
    left[0] -= 1
    if left[0] == 0:
        g.g_main_loop_quit(loop)
        return 0
    return 1
cb = CB(tick)
g.g_timeout_add(2, cb, None)
g.g_main_loop_run(loop)
print("done", flush=True)
sys.stdin.readline()
""" % DISPATCHES


def _events(argus_cli, pid):
    argus_cli.wait_drained()
    argus_cli.stop()
    out = argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(pid)).stdout
    return [json.loads(line) for line in out.splitlines()]


def test_glib_dispatches_of_a_running_process(argus_cli):
    require_tracing()
    prog = subprocess.Popen([sys.executable, "-c", GLIB_LOOP], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        info = json.loads(prog.stdout.readline())
        argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "1G", "--uprobe-hooks", "glib")
        prog.stdin.write("go\n")
        prog.stdin.flush()
        assert prog.stdout.readline().strip() == "done"
        argus_cli.wait_drained()
        prog.stdin.write("exit\n")
        prog.stdin.flush()
        assert prog.wait(timeout=60) == 0
    finally:
        if prog.poll() is None:
            prog.kill()
            prog.wait()
    events = _events(argus_cli, info["pid"])
    begins = [e for e in events if e["type"] == "callback_begin"]
    ends = [e for e in events if e["type"] == "callback_end"]
    assert len(begins) >= DISPATCHES and len(ends) >= DISPATCHES, (len(begins), len(ends))
    # fn: the function hooked, where this process has it; obj: its main context
    assert {e["fn"] for e in begins} == {info["dispatch"]}
    assert {e["fn"] for e in ends} == {info["dispatch"]}
    assert {e["obj"] for e in begins} == {info["context"]}
    from argus.hooks import hookspec
    dispatch_id = [h[0] for h in hookspec.load()].index("g_main_context_dispatch")   # as under argus run
    assert {e["probe_id"] for e in begins} == {dispatch_id}
    assert all(e["tid"] == info["pid"] and e["cpu"] != 0xFFFF for e in begins)
    # the daemon recorded the process's mappings: fn lies in libglib's text
    maps = [e for e in events if e["type"] == "mapping" and e["start"] <= info["dispatch"] < e["end"]]
    assert maps and "libglib-2.0.so" in maps[-1]["path"] and maps[-1]["prot"] & 4
    # each dispatch returns before the next begins
    marks = sorted((e["ts_ns"], e["type"]) for e in begins + ends)
    assert [t for _, t in marks[:4]] == ["callback_begin", "callback_end"] * 2


def test_missing_library_or_symbol_is_skipped(argus_cli, tmp_path):
    require_tracing()
    spec = tmp_path / "mixed.json"
    spec.write_text(json.dumps({"library": "libglib-2.0.so.0", "hooks": [
        {"symbol": "g_main_context_dispatch", "enter": "callback_begin"},
        {"symbol": "g_no_such_function_anywhere", "enter": "enqueue"}]}))
    nolib = tmp_path / "nolib.json"
    nolib.write_text(json.dumps({"library": "libargus-no-such-library.so.7", "hooks": [
        {"symbol": "f", "enter": "enqueue"}]}))
    out = argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "64M",
                        "--uprobe-hooks", str(spec), "--uprobe-hooks", str(nolib)).stdout
    lines = out.splitlines()
    assert len([l for l in lines if "g_no_such_function_anywhere" in l and "skipped" in l]) == 1
    assert len([l for l in lines if "libargus-no-such-library.so.7 not found" in l]) == 1
    assert any("tracing system-wide" in l for l in lines)
    with open(os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "uprobe-hooks")) as f:
        hooks = f.read().splitlines()
    assert len(hooks) == 1 and hooks[0].split("\t")[5] == "g_main_context_dispatch"
    assert os.stat(os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "uprobe-hooks")).st_mode & 0o077 == 0
    st = argus_cli.run("status").stdout
    assert "tracing" in st.lower()
    argus_cli.stop()


def test_nothing_resolved_still_traces(argus_cli, tmp_path):
    require_tracing()
    nolib = tmp_path / "nolib.json"
    nolib.write_text(json.dumps({"library": "libargus-no-such-library.so.7", "hooks": [
        {"symbol": "f", "enter": "enqueue"}]}))
    out = argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "64M", "--uprobe-hooks", str(nolib)).stdout
    assert "no uprobe hook resolved" in out and "tracing system-wide" in out
    argus_cli.stop()


def test_unknown_spec_name_is_one_line(argus_cli):
    proc = argus_cli.run("start", "--buffer", argus_cli.buffer, "--uprobe-hooks", "nosuchspec", check=False)
    assert proc.returncode != 0
    assert proc.stderr.strip().count("\n") == 0 and "nosuchspec" in proc.stderr and "glib" in proc.stderr


def test_argusd_checks_the_hook_list(argus_cli, tmp_path):
    """The hook list is data: argusd skips each bad line, and each hook the
    kernel refuses, with one log line, and attaches the rest."""
    require_tracing()
    from argus.hooks import uprobe_hooks
    from conftest import native

    listing, _ = uprobe_hooks.hook_list(["glib"])
    good = listing.splitlines()[0]
    lines = [good,
             "1\t50\t0\t1000",                                              # 4 fields
             "2\t99\t0\t1000\t/usr/lib/x.so\tf",                           # not a probe type
             "3\t50\t0\t1000\tlib/x.so\tf",                                # relative path
             "4\t50\t0\tzz\t/usr/lib/x.so\tf",                             # offset not hex
             "5\t50\t0\t1000\t/nonexistent/libargus-none.so\tf",           # the kernel refuses it
             "6\t50\t56\t1000\t/usr/lib/x.so\tf\t0\t6",                # return_obj argument 5: unreadable
             "7\t0\t55\t1000\t/usr/lib/x.so\tf\t0\t0\t64\t0:1:255:2;0:9:0"]  # a ret_deref copy of 9 bytes
    hooks = tmp_path / "hooks"
    hooks.write_text("\n".join(lines) + "\n")
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    log = run / "argusd.log"
    read_fd, write_fd = os.pipe()
    subprocess.Popen([native("argusd"), "--buffer", argus_cli.buffer, "--size", str(64 << 20),
                      "--socket", str(run / "argusd.sock"), "--ready-fd", str(write_fd), "--log", str(log),
                      "--sample-hz", "0", "--uprobe-hooks", str(hooks)], pass_fds=(write_fd,),
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as r:
        assert r.readline().strip() == "ready"
    argus_cli.stop()
    text = log.read_text()
    for n, why in ((2, "needs 6 tab-separated fields (a 7th: obj_arg, an 8th: return_obj, a 9th: obj_bits, "
                       "a 10th: ret_deref)"), (3, "bad record type"),
                   (4, "library path is not absolute"), (5, "bad number"), (7, "bad return_obj (0-5, 7)"),
                   (8, "bad ret_deref")):
        assert text.count(f"uprobe hook list line {n} skipped: {why}") == 1, text
    assert text.count("uprobe hook 5 f in /nonexistent/libargus-none.so skipped: failed to attach uprobe") == 1
    assert "no uprobe hooks" not in text      # the good hook attached


@pytest.mark.parametrize("python", GIL_PYTHONS)
def test_gil_handover_through_uprobes(argus_cli, python):
    """hooks/cpython.json through uprobes (the hooks sit in the python3.11
    program itself, or in the libpython3.11.so.1.0 a shared build loads:
    pyenv's, outside the loader cache, found because the test's own
    interpreter maps it; "obj": "process" computed in the BPF program): a
    plain Python program's GIL drops and takes, and the graph's handover
    edges."""
    require_tracing()
    python = gil_python(python)
    from argus.graphbuild import graph as G
    from argus.graphbuild.builder import build_graph_from_trace
    from argus.tracer import reader
    import numpy as np
    argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "256M", "--uprobe-hooks", "cpython")
    out = subprocess.run([python, "-c", GIL_CONTENTION], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    ids = json.loads(out.stdout.splitlines()[-1])
    events = _events(argus_cli, ids["pid"])
    gil = [e for e in events if e.get("obj") == 1 and e["type"] in ("mutex_lock", "mutex_unlock", "probe_return")]
    assert gil and all(e["cpu"] != 0xFFFF for e in gil)          # the kernel's records, not a ring's
    # (system-wide: every python3.11 on the machine records too, and a busy
    # machine can overrun the BPF ring buffer, so not every round is asked for)
    assert {e["type"] for e in gil} == {"mutex_lock", "mutex_unlock", "probe_return"}
    assert {e["tid"] for e in gil} == {ids["main"], ids["worker"]}
    g = build_graph_from_trace(reader.decode_file(argus_cli.buffer, strict=False))
    tid, pid = g.threads.tid[g.seg.utid], g.threads.pid[g.seg.utid]
    e = g.edges
    handover = np.flatnonzero((e.type == G.EDGE_OWNERSHIP) & (e.owner_kind == G.OWNER_MUTEX) & (e.obj == 1)
                              & (pid[e.dst] == ids["pid"]))
    pairs = [(int(tid[e.src[k]]), int(tid[e.dst[k]])) for k in handover.tolist()]
    assert pairs.count((ids["worker"], ids["main"])) >= 1, pairs
