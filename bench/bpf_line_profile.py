#!/usr/bin/env python3
"""Where inside each BPF program of an argus build the time goes, by source
line: the profile behind docs/benchmarks.md ("Tracing overhead").

bpf_stats says how long a program runs; this says which lines of it.  perf
samples the CPU the workload is pinned to (cpu-clock with call chains) while
argus traces it; each sample's call chain is walked from the leaf to the
first frame inside one of the build's programs, and that address is mapped
to a source line through the program's jited line info (the kernel keeps,
per line of the BPF source, the address its machine code starts at).  A
sample inside a helper or kfunc (the task-storage lookup, the clock, the
ring buffer) is thereby charged to the program line that called it: the
counts are inclusive.

Only programs that run with interrupts enabled can be profiled this way:
cpu-clock samples arrive by interrupt, so time spent with interrupts off
(sched_switch, sched_waking run under the runqueue and pi locks) is charged
to whatever re-enables them, outside the program.  Use bench/bpf_prog_cost.py
for those; sys_enter / sys_exit (the bulk of the BPF time) are profiled here.

The jited image and line info come from the kernel through libbpf
(bpf_obj_get_info_by_fd; the line strings from the program's BTF), read
while the daemon runs; no disassembler is needed.

    sudo python3 bench/bpf_line_profile.py [--argus CMD] [--programs sys_enter,sys_exit] [--top N]

bench/bpf_prog_cost.py gives each program's ns/run (perf's sampling interrupts
inflate run times measured during this profile, so it reports shares only).
"""
import argparse
import bisect
import collections
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

from bpf_prog_cost import progs   # bpftool's program list, by id

NAMES_DEFAULT = "sys_enter,sys_exit"


class ProgInfo(ctypes.Structure):
    # struct bpf_prog_info (include/uapi/linux/bpf.h), up to the fields used.
    _fields_ = [
        ("type", ctypes.c_uint32), ("id", ctypes.c_uint32), ("tag", ctypes.c_uint8 * 8),
        ("jited_prog_len", ctypes.c_uint32), ("xlated_prog_len", ctypes.c_uint32),
        ("jited_prog_insns", ctypes.c_uint64), ("xlated_prog_insns", ctypes.c_uint64),
        ("load_time", ctypes.c_uint64), ("created_by_uid", ctypes.c_uint32),
        ("nr_map_ids", ctypes.c_uint32), ("map_ids", ctypes.c_uint64),
        ("name", ctypes.c_char * 16), ("ifindex", ctypes.c_uint32), ("gpl", ctypes.c_uint32),
        ("netns_dev", ctypes.c_uint64), ("netns_ino", ctypes.c_uint64),
        ("nr_jited_ksyms", ctypes.c_uint32), ("nr_jited_func_lens", ctypes.c_uint32),
        ("jited_ksyms", ctypes.c_uint64), ("jited_func_lens", ctypes.c_uint64),
        ("btf_id", ctypes.c_uint32), ("func_info_rec_size", ctypes.c_uint32),
        ("func_info", ctypes.c_uint64), ("nr_func_info", ctypes.c_uint32),
        ("nr_line_info", ctypes.c_uint32), ("line_info", ctypes.c_uint64),
        ("jited_line_info", ctypes.c_uint64), ("nr_jited_line_info", ctypes.c_uint32),
        ("line_info_rec_size", ctypes.c_uint32), ("jited_line_info_rec_size", ctypes.c_uint32),
        ("nr_prog_tags", ctypes.c_uint32), ("prog_tags", ctypes.c_uint64),
        ("run_time_ns", ctypes.c_uint64), ("run_cnt", ctypes.c_uint64),
        ("recursion_misses", ctypes.c_uint64), ("verified_insns", ctypes.c_uint32),
        ("attach_btf_obj_id", ctypes.c_uint32), ("attach_btf_id", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


class LineInfo(ctypes.Structure):
    _fields_ = [("insn_off", ctypes.c_uint32), ("file_name_off", ctypes.c_uint32),
                ("line_off", ctypes.c_uint32), ("line_col", ctypes.c_uint32)]


def libbpf():
    lib = ctypes.CDLL("libbpf.so.1", use_errno=True)
    lib.bpf_prog_get_fd_by_id.argtypes = [ctypes.c_uint32]
    lib.bpf_obj_get_info_by_fd.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)]
    lib.btf__load_from_kernel_by_id.argtypes = [ctypes.c_uint32]
    lib.btf__load_from_kernel_by_id.restype = ctypes.c_void_p
    lib.btf__name_by_offset.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.btf__name_by_offset.restype = ctypes.c_char_p
    lib.btf__free.argtypes = [ctypes.c_void_p]
    return lib


def prog_lines(lib, prog_id):
    """[(start address, file, line, text)] sorted by address, and the
    program's [(start, end)] address ranges (one per BPF function)."""
    fd = lib.bpf_prog_get_fd_by_id(prog_id)
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"failed to open BPF program {prog_id}")
    try:
        info = ProgInfo()
        size = ctypes.c_uint32(ctypes.sizeof(info))
        if lib.bpf_obj_get_info_by_fd(fd, ctypes.byref(info), ctypes.byref(size)):
            raise OSError(ctypes.get_errno(), f"failed to read info of BPF program {prog_id}")
        n_li, n_jli, n_ks = info.nr_line_info, info.nr_jited_line_info, info.nr_jited_ksyms
        li = (LineInfo * n_li)()
        jli = (ctypes.c_uint64 * n_jli)()
        ks = (ctypes.c_uint64 * n_ks)()
        lens = (ctypes.c_uint32 * n_ks)()
        again = ProgInfo()
        again.nr_line_info, again.line_info_rec_size = n_li, ctypes.sizeof(LineInfo)
        again.line_info = ctypes.addressof(li)
        again.nr_jited_line_info, again.jited_line_info_rec_size = n_jli, 8
        again.jited_line_info = ctypes.addressof(jli)
        again.nr_jited_ksyms, again.jited_ksyms = n_ks, ctypes.addressof(ks)
        again.nr_jited_func_lens, again.jited_func_lens = n_ks, ctypes.addressof(lens)
        size = ctypes.c_uint32(ctypes.sizeof(again))
        if lib.bpf_obj_get_info_by_fd(fd, ctypes.byref(again), ctypes.byref(size)):
            raise OSError(ctypes.get_errno(), f"failed to read line info of BPF program {prog_id}")
    finally:
        os.close(fd)
    btf = lib.btf__load_from_kernel_by_id(info.btf_id)
    if not btf:
        raise OSError(ctypes.get_errno(), f"failed to load BTF {info.btf_id} of BPF program {prog_id}")
    try:
        def name(off):
            s = lib.btf__name_by_offset(btf, off)
            return s.decode(errors="replace") if s else "?"
        lines = []
        for i in range(min(n_li, n_jli)):
            r = li[i]
            lines.append((jli[i], os.path.basename(name(r.file_name_off)), r.line_col >> 10,
                          name(r.line_off).strip()))
    finally:
        lib.btf__free(btf)
    lines.sort()
    ranges = [(ks[i], ks[i] + lens[i]) for i in range(n_ks)]
    return lines, ranges


def find_progs(names, since_ids):
    """The newest program of each name that is not in since_ids."""
    found = {}
    for i, p in progs().items():
        if i not in since_ids and p.get("name") in names:
            found[p["name"]] = max(found.get(p["name"], 0), i)
    return found


def chains(perf_data):
    """Each sample's call chain, leaf first, as a list of addresses."""
    out = subprocess.run(["perf", "script", "-i", perf_data, "-F", "ip"], capture_output=True,
                         text=True, check=True).stdout
    cur = []
    for line in out.splitlines():
        s = line.strip()
        if not s:
            if cur:
                yield cur
            cur = []
            continue
        try:
            cur.append(int(s.split()[0], 16))
        except ValueError:
            pass
    if cur:
        yield cur


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--argus", default="argus", help="argus command of the build to profile")
    ap.add_argument("--programs", default=NAMES_DEFAULT, help="comma-separated program names")
    ap.add_argument("--pipe-loops", type=int, default=300000)
    ap.add_argument("--freq", type=int, default=20000, help="perf sampling frequency (Hz)")
    ap.add_argument("--top", type=int, default=25, help="lines shown per program")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bpf_line_profile: needs root (BPF program info, perf -a)")
    for tool in ("perf", "bpftool", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"bpf_line_profile: {tool} not found (scripts/setup.sh installs it)")
    names = set(args.programs.split(","))
    lib = libbpf()
    with tempfile.TemporaryDirectory(prefix="argus-lineprof-") as tmp:
        env = dict(os.environ, ARGUS_RUN_DIR=f"{tmp}/run", ARGUS_STATE_DIR=f"{tmp}/state")
        before = set(progs())
        started = subprocess.run(args.argus.split() + ["start", "--buffer", f"{tmp}/t.argus", "--size", "1G"],
                                 env=env, capture_output=True, text=True)
        if started.returncode:
            sys.exit(f"bpf_line_profile: argus start failed: {started.stderr.strip()[-300:]}")
        try:
            ours = find_progs(names, before)
            if not ours:
                sys.exit("bpf_line_profile: no program of that name appeared after argus start")
            tables = {n: prog_lines(lib, i) for n, i in ours.items()}
            subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.freq), "-C", "0", "-g",
                            "-o", f"{tmp}/perf.data", "--", "taskset", "-c", "0", "perf", "bench", "sched",
                            "pipe", "-l", str(args.pipe_loops)], check=True, capture_output=True)
        finally:
            subprocess.run(args.argus.split() + ["stop"], env=env, capture_output=True)
        total = 0
        per = {n: collections.Counter() for n in tables}
        line_starts = {n: [ln[0] for ln in t[0]] for n, t in tables.items()}
        for chain in chains(f"{tmp}/perf.data"):
            total += 1
            for addr in chain:
                hit = None
                for n, (lines, ranges) in tables.items():
                    if any(lo <= addr < hi for lo, hi in ranges):
                        hit = n
                        break
                if hit is None:
                    continue
                lines, starts = tables[hit][0], line_starts[hit]
                i = bisect.bisect_right(starts, addr)   # the last line starting at or before addr
                key = lines[i - 1][1:] if i else ("?", 0, "?")
                per[hit][key] += 1
                break
    print(f"samples on CPU 0: {total:,} at {args.freq} Hz over `perf bench sched pipe -l {args.pipe_loops}`")
    for n, counter in per.items():
        s = sum(counter.values())
        print(f"\n{n}: {s:,} samples ({100 * s / max(total, 1):.1f}% of CPU 0)")
        print(f"{'share':>6} {'samples':>8}  line")
        for (f, ln, text), k in counter.most_common(args.top):
            print(f"{100 * k / max(s, 1):5.1f}% {k:8,}  {f}:{ln}  {text[:90]}")


if __name__ == "__main__":
    main()
