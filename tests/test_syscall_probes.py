"""End to end: the two ways argusd hooks syscalls (tracer/daemon/platform/platform_linux.c).

fentry/fexit on the traced syscalls' entry points where the kernel allows
trampolines, else the raw_syscalls tracepoints.  Both must write the same
records for the same work: a pipe ping-pong between two processes is traced
once per way and the (syscall, fd, inode, ret) sequences of each side compared.
`argus status` says which way is live; asking for fentry on a kernel that
refuses it is one clear line and a non-zero exit, not a silent fallback.
"""

import pytest

from argus.tracer import reader, schema, syscalls
from conftest import ArgusRunner, no_traceback, require_tracing
from support.children import run_python_json

PING_PONG = """
    import json, os
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    child = os.fork()
    if child == 0:
        for _ in range(50):
            os.write(b_w, os.read(a_r, 1))
        os._exit(0)
    for _ in range(50):
        os.write(a_w, b"x")
        assert os.read(b_r, 1) == b"x"
    os.waitpid(child, 0)
    print(json.dumps({"parent": os.getpid(), "child": child, "fds": [a_r, a_w, b_r, b_w],
                      "inodes": [os.fstat(a_r).st_ino, os.fstat(b_r).st_ino]}))
"""


def traced_ping_pong(runner, probes):
    """Starts argus hooking syscalls `probes` way, runs the ping-pong, and returns
    (status, info, {pid: [(nr, fd, inode, ret), ...]}) for its read/write calls."""
    args = ["start", "--buffer", runner.buffer, "--size", "256M", "--force"]
    if probes:
        args += ["--syscall-probes", probes]
    runner.run(*args)
    try:
        status = runner.status()
        info = run_python_json(PING_PONG)
        runner.wait_drained()
    finally:
        runner.stop()
    trace = reader.decode_file(runner.buffer, strict=False)
    r = trace.rows
    rw = {syscalls.NUMBERS["read"], syscalls.NUMBERS["write"]}
    calls = {}
    for pid in (info["parent"], info["child"]):
        mine = r[(r["pid"] == pid) & ((r["type"] == schema.SYSCALL_ENTER) | (r["type"] == schema.SYSCALL_EXIT))]
        seq, enter = [], None
        for row in mine:
            if int(row["nr"]) not in rw:
                continue
            if row["type"] == schema.SYSCALL_ENTER:
                enter = row
            elif enter is not None and int(enter["obj2"]) in info["inodes"]:
                seq.append((int(enter["nr"]), int(enter["obj"]), int(enter["obj2"]), int(row["val"])))
                enter = None
        calls[pid] = seq
    return status, info, calls


def fentry_refused(runner):
    """The reason this kernel refuses fentry syscall probes, or None."""
    proc = runner.run("start", "--buffer", runner.buffer, "--size", "64M", "--force",
                      "--syscall-probes", "fentry", check=False)
    if proc.returncode == 0:
        runner.stop()
        return None
    line = no_traceback(proc)
    assert "failed to hook syscalls with fentry" in line, line
    return line


def test_auto_status_names_the_probes(tmp_path):
    """auto takes fentry where the kernel allows it (the default is tracepoint)."""
    require_tracing()
    runner = ArgusRunner(tmp_path)
    runner.run("start", "--buffer", runner.buffer, "--size", "64M", "--syscall-probes", "auto")
    try:
        st = runner.status()
        text = runner.run("status").stdout
    finally:
        runner.stop()
    assert st["syscall_probes"] in ("fentry", "tracepoint")
    assert (st["syscall_functions"] > 0) == (st["syscall_probes"] == "fentry")
    assert "syscalls:" in text


def test_tracepoints_trace_every_read_and_write(tmp_path):
    require_tracing()
    status, info, calls = traced_ping_pong(ArgusRunner(tmp_path), "tracepoint")
    assert status["syscall_probes"] == "tracepoint"
    a_r, a_w, b_r, b_w = info["fds"]
    ino_a, ino_b = info["inodes"]
    read, write = syscalls.NUMBERS["read"], syscalls.NUMBERS["write"]
    assert calls[info["parent"]] == [(write, a_w, ino_a, 1), (read, b_r, ino_b, 1)] * 50
    assert calls[info["child"]] == [(read, a_r, ino_a, 1), (write, b_w, ino_b, 1)] * 50


def test_fentry_writes_what_the_tracepoints_write(tmp_path):
    require_tracing()
    runner = ArgusRunner(tmp_path)
    why = fentry_refused(runner)
    if why:
        pytest.skip(f"this kernel refuses fentry ({why}); the tracepoint test covers the fallback")
    status, info, fentry_calls = traced_ping_pong(runner, "fentry")
    assert status["syscall_probes"] == "fentry" and status["syscall_functions"] > 0
    _, info_tp, tp_calls = traced_ping_pong(runner, "tracepoint")
    # Same program, same fds and inode order: only pids and inode numbers differ.
    for who in ("parent", "child"):
        def shape(seq, inodes):
            return [(nr, fd, inodes.index(ino), ret) for nr, fd, ino, ret in seq]
        assert shape(fentry_calls[info[who]], info["inodes"]) == shape(tp_calls[info_tp[who]], info_tp["inodes"])
    assert len(fentry_calls[info["parent"]]) == 100
