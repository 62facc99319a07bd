"""profile and compare on crafted graphs, through the REPL's own dispatch."""
import os

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from rich.console import Console

from argus.cli.repl import app
from argus.cli.repl.context import ReplContext
from argus.diagnose import find_hang
from support import crafted as C
from argus.graphbuild import dwfl
from argus.tracer import schema


def _ctx(g, pid):
    hang = find_hang(g, pid, threshold_ns=1_000_000_000)
    return ReplContext(g, hang, 1_000_000_000, console=Console(record=True, width=200, force_terminal=False))


def _libc_pc(name):
    """(path, start, end, pgoff, pc of `name`) in this process's libc mapping."""
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and "x" in p[1] and os.path.basename(p[5]).startswith("libc.so"):
                start, end = (int(x, 16) for x in p[0].split("-"))
                path, pgoff = p[5], int(p[2], 16)
                break
        else:
            pytest.skip("no libc mapping")
    with open(path, "rb") as f:
        elf = ELFFile(f)
        sym = next(s for s in elf.get_section_by_name(".dynsym").iter_symbols()
                   if s.name == name and s["st_info"]["type"] == "STT_FUNC")
        seg = next(sg for sg in elf.iter_segments() if sg["p_type"] == "PT_LOAD" and sg["p_flags"] & 1)
    return path, start, end, pgoff, start + sym["st_value"] - seg["p_vaddr"] + seg["p_offset"] - pgoff + 2


@pytest.mark.skipif(not dwfl.available(), reason="libdw not installed")
def test_profile_of_the_busy_editor():
    """editor/300 is busy 1 s .. 4 s: samples every 10 ms in libc's getpid."""
    path, start, end, pgoff, pc = _libc_pc("getpid")
    t = C.Trace()
    t.thread(300, 300, "editor")
    t.thread(400, 400, "Xorg")
    t.run(300, 0).block(300, C.ms(1), "poll", "epoll_wait", obj=3)
    t.wake(0, 300, C.s(1), "hardirq", "device").run(300, C.s(1))
    t.busy(300, C.s(1), C.s(4), slice_ns=C.ms(10), gap_ns=C.us(100))
    t.block(300, C.s(4), "poll", "epoll_wait", obj=3)
    t.row(0, 300, schema.MAPPING, obj=start, obj2=end, val=pgoff, aux=schema.MAP_EXEC, peer_tid=0,
          peer_pid=len(path))
    t.row(0, 300, schema.USER_STACK, obj=0, aux=1, obj2=9)
    for i in range(1, 300):
        t.row(C.s(1) + C.ms(10) * i, 300, schema.CPU_SAMPLE, obj=9, aux=10000)
    g = t.build(trace_end=C.s(5))
    g.frames, g.strings = np.array([pc], np.uint64), path.encode() + b"\0"
    ctx = _ctx(g, 300)
    app.execute(ctx, "diagnose --auto")
    app.execute(ctx, f"profile {ctx.hang.vertex} --depth 2")
    out = ctx.console.export_text()
    assert "what-if:" in out and "profile: 299 samples" in out
    assert "getpid" in out and os.path.basename(path) in out and "top-down:" in out
    app.execute(ctx, "profile --depth nope")
    assert "invalid int value" in ctx.console.export_text()


def test_profile_without_samples_says_how_to_get_them():
    ctx = _ctx(C.editor_xorg(), 300)
    app.execute(ctx, "profile")
    assert "no CPU samples" in ctx.console.export_text()


def test_compare_names_the_long_wait():
    t, info = C.client_daemon()
    ctx = _ctx(t.build(trace_end=info["trace_end"]), C.APP)
    app.execute(ctx, "compare")
    out = ctx.console.export_text()
    assert "Baselines: 4 quick instance(s)" in out
    assert "wait_duration" in out and "read(fd 5) (object fd 5, peer daemond/200) lasted 5.000 s" in out
