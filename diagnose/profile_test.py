"""CPU profiles from crafted CPU_SAMPLE rows whose stacks point into a real
library mapped the way this very process maps it (libc), named by libdw."""
import os

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from support import crafted as C
from argus.graphbuild import dwfl
from argus.diagnose import profile as P
from argus.tracer import schema

JIT_PID = 4194400       # above any pid_max: no real process has it


def _libc_mapping():
    """(path, start, end, pgoff) of this process's executable libc mapping."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "x" in parts[1] and os.path.basename(parts[5]).startswith("libc.so"):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                return parts[5], start, end, int(parts[2], 16)
    pytest.skip("no libc mapping")


def _runtime_pc(path, start, pgoff, name, inside=4):
    """Where `name` (+ inside) of the ELF file lands in that mapping."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        sym = next(s for s in elf.get_section_by_name(".dynsym").iter_symbols()
                   if s.name == name and s["st_info"]["type"] == "STT_FUNC")
        seg = next(sg for sg in elf.iter_segments() if sg["p_type"] == "PT_LOAD" and sg["p_flags"] & 1)
    off = sym["st_value"] - seg["p_vaddr"] + seg["p_offset"]
    return start + (off - pgoff) + inside


def _trace(path, start, end, pgoff, stacks, jit=None):
    """One thread 10/10 running 0..1 s with a CPU sample every 10 ms cycling through `stacks`
    (lists of user pcs, innermost first); MAPPING rows for the libc mapping (and jit's pid)."""
    t = C.Trace()
    t.thread(10, 10, "spin")
    t.run(10, 0)
    frames, strings = [], path.encode() + b"\0"
    t.row(0, 10, schema.MAPPING, obj=start, obj2=end, val=pgoff, aux=schema.MAP_EXEC, peer_tid=0,
          peer_pid=len(path))
    ids = []
    for k, st in enumerate(stacks):
        t.row(0, 10, schema.USER_STACK, obj=len(frames), aux=len(st), obj2=k + 1)
        frames += st
        ids.append(k + 1)
    for i in range(100):
        t.row(C.ms(10 * i + 5), 10, schema.CPU_SAMPLE, obj=ids[i % len(ids)], aux=10000)
    g = t.build(trace_end=C.s(1))
    g.frames = np.array(frames, np.uint64)
    g.strings = strings
    return g


@pytest.mark.skipif(not dwfl.available(), reason="libdw not installed")
def test_profile_names_functions_and_shares():
    path, start, end, pgoff = _libc_mapping()
    getpid, write, read = (_runtime_pc(path, start, pgoff, n) for n in ("getpid", "write", "read"))
    # 3 of 4 samples in getpid called from write (a made-up but well-formed call chain), 1 in read
    g = _trace(path, start, end, pgoff, [[getpid, write + 1], [getpid, write + 1], [getpid, write + 1],
                                         [read, write + 1]])
    utid = g.utid_of_tid(10)
    p = P.build_profile(g, utid, 0, C.s(1))
    assert p["samples"] == 100 and p["period_ns"] == 10_000_000 and p["cpu_ns"] == 1_000_000_000
    fns = {f["function"]: f for f in p["bottom_up"]}
    assert set(fns) == {"getpid", "read"} or {"__getpid", "__read"} & set(fns)
    top = p["bottom_up"][0]
    assert top["self"] == 75 and top["self_share"] == 0.75 and top["total"] == 75
    assert top["callers"][0]["function"] in ("write", "__write", "__libc_write")
    assert p["by_dso"][0]["dso"] == os.path.basename(path) and p["by_dso"][0]["self_share"] == 1.0
    root = p["top_down"][0]
    assert root["function"] == top["callers"][0]["function"] and root["samples"] == 100
    assert sorted(k["samples"] for k in root["children"]) == [25, 75]
    assert p["top"]["share"] >= 0.8
    assert sum(f["self"] for f in p["bottom_up"]) == p["samples"]
    assert P.build_profile(g, utid, C.s(2), C.s(3)) is None


def test_jit_frames_come_from_the_perf_map(tmp_path):
    path, start, end, pgoff = _libc_mapping()
    mp = f"/tmp/perf-{JIT_PID}.map"
    with open(mp, "w") as f:
        f.write("7f0000001000 100 py::spin:/app/loop.py\n7f0000002000 80 py::<module>:/app/loop.py\n")
    try:
        t = C.Trace()
        t.thread(JIT_PID, JIT_PID, "python3")
        t.run(JIT_PID, 0)
        t.row(0, JIT_PID, schema.USER_STACK, obj=0, aux=2, obj2=7)
        for i in range(10):
            t.row(C.ms(10 * i + 5), JIT_PID, schema.CPU_SAMPLE, obj=7, aux=10000)
        g = t.build(trace_end=C.s(1))
        g.frames = np.array([0x7F0000001010, 0x7F0000002011], np.uint64)
        g.strings = b""
        p = P.build_profile(g, g.utid_of_tid(JIT_PID), 0, C.s(1))
        assert p["bottom_up"][0]["function"] == "py::spin:/app/loop.py"
        assert p["bottom_up"][0]["dso"] == f"[perf-{JIT_PID}.map]"
        assert p["top_down"][0]["function"] == "py::<module>:/app/loop.py"
    finally:
        os.unlink(mp)


def test_kernel_frames_are_offsets_from_stext():
    addrs, names, stext = P._kallsyms()
    if not stext:
        pytest.skip("/proc/kallsyms hides addresses (not root)")
    k = names.index(next(n for n in names if n[0] == "schedule"))
    off = addrs[k] - stext + 8
    namer = P.FrameNamer(C.editor_xorg())
    assert namer.name("k", 0, off) == ("schedule", "[kernel]")


def test_stripped_static_function_is_named_by_its_fde(tmp_path):
    """A pc in no symbol: the .eh_frame FDE that covers it names the function's start."""
    import shutil
    import subprocess
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    src = tmp_path / "s.c"
    src.write_text("static int __attribute__((noinline)) hidden(int x) { return x * 3 + 1; }\n"
                   "int main(int c, char **v) { (void)v; return hidden(c); }\n")
    exe = tmp_path / "s"
    subprocess.run([cc, "-O1", "-o", str(exe), str(src)], check=True)
    with open(exe, "rb") as f:
        hidden = next(s["st_value"] for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()
                      if s.name == "hidden")
    subprocess.run(["strip", str(exe)], check=True)
    syms = dwfl.ElfSymbols(str(exe))
    assert syms.name(hidden + 1) == f"sub_{hidden:x}"


def test_minidebuginfo_names_a_static_function_of_a_stripped_binary(tmp_path):
    """.gnu_debugdata (an xz-compressed ELF with the static functions' symbols,
    as Fedora ships every binary) is read by libdw when .symtab is gone."""
    import shutil
    import subprocess
    tools = [shutil.which(t) for t in ("cc", "objcopy", "strip", "xz", "nm")]
    if not all(tools) or not dwfl.available():
        pytest.skip("needs cc, binutils, xz and libdw")
    src = tmp_path / "m.c"
    src.write_text("static int __attribute__((noinline)) tucked_away(int x) { return x * 5 + 2; }\n"
                   "int main(int c, char **v) { (void)v; return tucked_away(c); }\n")
    exe, mini = tmp_path / "m", tmp_path / "mini"
    subprocess.run(["cc", "-O1", "-o", str(exe), str(src)], check=True)
    with open(exe, "rb") as f:
        addr = next(s["st_value"] for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()
                    if s.name == "tucked_away")
    (tmp_path / "keep").write_text("tucked_away\n")
    subprocess.run(["objcopy", "--only-keep-debug", str(exe), str(mini)], check=True)
    subprocess.run(["objcopy", "-S", "--keep-symbols", str(tmp_path / "keep"), str(mini)], check=True)
    subprocess.run(["xz", "-f", str(mini)], check=True)
    subprocess.run(["strip", "--strip-all", str(exe)], check=True)
    subprocess.run(["objcopy", "--add-section", f".gnu_debugdata={mini}.xz", str(exe)], check=True)
    with open(exe, "rb") as f:
        elf = ELFFile(f)
        assert elf.get_section_by_name(".symtab") is None and elf.get_section_by_name(".gnu_debugdata")
    assert dwfl.ElfSymbols(str(exe)).name(addr + 1) == "tucked_away"


def test_vdso_frames_are_named_from_this_machines_vdso():
    path = P._vdso_copy()
    if path is None or not dwfl.available():
        pytest.skip("no [vdso] mapping or no libdw")
    with open(path, "rb") as f:
        sym = next((s for s in ELFFile(f).get_section_by_name(".dynsym").iter_symbols()
                    if s.name.endswith("clock_gettime")), None)
    if sym is None:
        pytest.skip("this vDSO has no clock_gettime")
    t = C.Trace()
    t.thread(10, 10, "poller")
    t.run(10, 0)
    base = 0x7FFF00000000
    t.row(0, 10, schema.MAPPING, obj=base, obj2=base + 0x2000, val=0, aux=schema.MAP_EXEC, peer_tid=0, peer_pid=6)
    t.row(0, 10, schema.USER_STACK, obj=0, aux=1, obj2=5)
    for i in range(20):
        t.row(C.ms(10 * i + 5), 10, schema.CPU_SAMPLE, obj=5, aux=10000)
    g = t.build(trace_end=C.s(1))
    g.frames, g.strings = np.array([base + sym["st_value"] + 3], np.uint64), b"[vdso]\0"
    p = P.build_profile(g, g.utid_of_tid(10), 0, C.s(1))
    lead = p["bottom_up"][0]
    assert lead["function"].endswith("clock_gettime") and lead["dso"] == "[vdso]"   # or its __vdso_ alias
