"""Where a thread spent its CPU time over a window (Scaler's component
attribution), from the CPU_SAMPLE records of kext/linux/argus_sample.bpf.c.

Algorithm, for thread utid over [a, b]:
  1. its CPU_SAMPLE rows in [a, b] (rows of the thread's tid, searched in a
     per-graph index sorted by (tid, ts)); each stands for period_us of CPU;
  2. each sample's stack = its kernel frames (KERNEL_STACK row by id) then
     its user frames (USER_STACK row by (pid, id)), innermost first;
  3. each distinct (pid, pc) is named once (FrameNamer): a user pc through
     the process's MAPPING rows -> file offset -> virtual address (PT_LOAD)
     -> libdw (graphbuild/dwfl.py: symtab, debug file, .gnu_debugdata,
     dynsym, FDE start) ; a pc in no file mapping through the JIT's
     /tmp/perf-PID.map (CPython's `-X perf` trampolines name Python
     functions there as "py::function:file"); a vDSO pc through a copy of
     this machine's vDSO (the same image in every process of one kernel);
     a kernel frame (an offset from
     _stext) through /proc/kallsyms of this machine;
  4. counts: self (the innermost frame, bottom-up) and total (anywhere on
     the stack, once per sample) per function and per shared object; the
     top-down call tree from the outermost frame; for the top self
     functions, their direct callers (the bottom-up tree's first level).
Deeper user frames are return addresses: they are named at pc - 1, inside
the call instruction, as every unwinder does.  A deeper frame outside every
mapping ends the stack: the frame-pointer walk went through code built
without frame pointers and read garbage from there on.

Invariants: samples == sum of self counts == the root of the top-down tree;
every share is a fraction of the samples in the window; without samples the
profile is None (no sampler, or the thread never ran).
"""
import bisect
import os
import stat
from functools import lru_cache

import numpy as np

from argus.tracer import schema
from argus.diagnose.fmt import fmt_dur, fmt_pct
from argus.diagnose.stacks import symbolizer
from argus.graphbuild.dwfl import ElfSymbols
from argus.graphbuild.stacks import load_segments

MAX_TREE_DEPTH = 24
MIN_TREE_SHARE = 0.01       # top-down nodes below 1% of the samples are folded away
TOP_FUNCTIONS = 10
COVERAGE = 0.80             # "top functions": the fewest self functions reaching 80% of the samples,
TOP_COVERING_MAX = 10       # but no more than this many


# the row columns of the fields read here (schema.ROW_FIELDS)
_STACK_ID = schema.column(schema.USER_STACK, "stack_id")
_FRAMES = schema.column(schema.USER_STACK, "frames")
_NFRAMES = schema.column(schema.USER_STACK, "nframes")
_USER_ID = schema.column(schema.CPU_SAMPLE, "user_stack_id")
_KERNEL_ID = schema.column(schema.CPU_SAMPLE, "kernel_stack_id")


# --- sample rows ---
def _sample_index(g):
    """(row indices of CPU_SAMPLE rows sorted by (tid, ts), their tids, their ts), built once."""
    idx = g.derived.sample_index
    if idx is None:
        rows = g.rows
        sel = np.flatnonzero(rows["type"] == schema.CPU_SAMPLE)
        order = np.lexsort((rows["ts_ns"][sel], rows["tid"][sel]))
        sel = sel[order]
        idx = g.derived.sample_index = (sel, rows["tid"][sel].astype(np.int64),
                                             rows["ts_ns"][sel].astype(np.int64))
    return idx


def has_samples(g):
    return len(_sample_index(g)[0]) > 0


def sample_rows(g, utid, a, b):
    """Row indices of utid's CPU samples with a <= ts <= b, in time order."""
    sel, tids, ts = _sample_index(g)
    tid = int(g.threads.tid[utid])
    lo, hi = np.searchsorted(tids, tid, "left"), np.searchsorted(tids, tid, "right")
    t = ts[lo:hi]
    i, j = np.searchsorted(t, int(a), "left"), np.searchsorted(t, int(b), "right")
    return sel[lo + i:lo + j]


def _stack_tables(g):
    """({(pid, id): (first, n)} of USER_STACK rows, {id: (first, n)} of KERNEL_STACK rows)."""
    tabs = g.derived.sample_stacks
    if tabs is None:
        rows = g.rows
        user, kernel = {}, {}
        for i in np.flatnonzero(rows["type"] == schema.USER_STACK).tolist():
            r = rows[i]
            user[(int(r["pid"]), int(r[_STACK_ID]))] = (int(r[_FRAMES]), int(r[_NFRAMES]))
        for i in np.flatnonzero(rows["type"] == schema.KERNEL_STACK).tolist():
            r = rows[i]
            kernel[int(r[_STACK_ID])] = (int(r[_FRAMES]), int(r[_NFRAMES]))
        tabs = g.derived.sample_stacks = (user, kernel)
    return tabs


def raw_stacks(g, idx):
    """Per sample row: (ts, [(kind, pid, pc, depth)] innermost first), kind "k" (kernel offset)
    or "u" (user pc)."""
    user, kernel = _stack_tables(g)
    frames = g.frames
    nfr = len(frames)
    rows = g.rows
    out = []
    for i in np.asarray(idx).tolist():
        r = rows[i]
        pid = int(r["pid"])
        st = []
        k = kernel.get(int(r[_KERNEL_ID])) if int(r[_KERNEL_ID]) else None
        if k is not None:
            st += [("k", 0, int(frames[f]), d) for d, f in enumerate(range(k[0], min(k[0] + k[1], nfr)))]
        u = user.get((pid, int(r[_USER_ID]))) if int(r[_USER_ID]) else None
        if u is not None:
            st += [("u", pid, int(frames[f]), d) for d, f in enumerate(range(u[0], min(u[0] + u[1], nfr)))]
        out.append((int(r["ts_ns"]), st))
    return out


# --- naming frames ---
@lru_cache(maxsize=1)
def _kallsyms():
    """(sorted addresses, [(name, module)], _stext) of this machine's /proc/kallsyms; empty when unreadable.
    Hand-parsed: it is a three-column text table, and libdw's kernel reporting wants vmlinux files."""
    addrs, names, stext = [], [], 0
    try:
        with open("/proc/kallsyms") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3 or parts[1] not in "tTwW":
                    continue
                a = int(parts[0], 16)
                if parts[2] == "_stext":
                    stext = a
                if a:
                    addrs.append(a)
                    names.append((parts[2], parts[3].strip("[]") if len(parts) > 3 else ""))
    except OSError:
        return [], [], 0
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[k] for k in order], [names[k] for k in order], stext


def _perf_map(pid):
    """(sorted starts, [(end, name)]) of /tmp/perf-PID.map, written by JITs (V8, the JVM's agents,
    CPython -X perf): "START SIZE name" per line, hex.  Hand-parsed: no library reads this format."""
    path = f"/tmp/perf-{int(pid)}.map"
    entries = []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "r", errors="replace") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):     # a FIFO put there: never read from it
                return [], []
            for line in f:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) == 3:
                    try:
                        start, size = int(parts[0], 16), int(parts[1], 16)
                    except ValueError:
                        continue
                    entries.append((start, start + size, parts[2]))
    except OSError:
        return [], []
    entries.sort()
    return [e[0] for e in entries], [(e[1], e[2]) for e in entries]


@lru_cache(maxsize=1)
def _vdso_copy():
    """A file holding this machine's vDSO image (copied from our own [vdso] mapping, 0600, removed at
    exit), or None: every process of one kernel maps the same vDSO, so a trace read on the machine
    that recorded it names its frames (clock_gettime in a polling loop)."""
    import atexit
    import tempfile
    try:
        with open("/proc/self/maps") as f:
            line = next((l for l in f if l.rstrip().endswith("[vdso]")), None)
        if line is None:
            return None
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as mem:
            mem.seek(start)
            image = mem.read(end - start)
        fd, path = tempfile.mkstemp(prefix="argus-vdso-", suffix=".so")
        with os.fdopen(fd, "wb") as f:
            f.write(image)
        atexit.register(lambda: os.path.exists(path) and os.unlink(path))
        return path
    except (OSError, ValueError):
        return None


class FrameNamer:
    """(pid, pc, kind) -> (function, shared object), each distinct frame named once."""

    def __init__(self, g):
        self._sym = symbolizer(g)
        self._elves = {}
        self._loads = {}
        self._perf_maps = {}
        self._cache = {}

    def _elf(self, path):
        if path in self._elves:
            return self._elves[path]
        real = _vdso_copy() if path == "[vdso]" else path
        e = ElfSymbols(real) if real and real.startswith("/") and os.path.isfile(real) else None
        self._elves[path] = e
        self._loads[path] = load_segments(real) if e is not None else []
        return e

    def name(self, kind, pid, pc):
        key = (kind, pid, pc)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._kernel(pc) if kind == "k" else self._user(pid, pc)
        return hit

    def _kernel(self, off):
        addrs, names, stext = _kallsyms()
        if not stext:
            return (f"kernel+{off:#x}", "[kernel]")
        a = (stext + off) & 0xFFFFFFFFFFFFFFFF
        k = bisect.bisect_right(addrs, a) - 1
        if k < 0:
            return (f"kernel+{off:#x}", "[kernel]")
        fn, mod = names[k]
        return (fn, f"[{mod}]" if mod else "[kernel]")

    def _user(self, pid, pc):
        loc = self._sym.locate(pid, pc)
        if loc is None:
            starts, ents = self._perf_maps.setdefault(pid, _perf_map(pid))
            k = bisect.bisect_right(starts, pc) - 1
            if k >= 0 and pc < ents[k][0]:
                return (ents[k][1], f"[perf-{pid}.map]")
            return (f"{pc:#x}", "[unknown]")
        path, off = loc
        dso = os.path.basename(path)
        elf = self._elf(path)
        if elf is not None:
            for p_off, size, va in self._loads.get(path, ()):
                if p_off <= off < p_off + size:
                    n = elf.name(off - p_off + va)
                    if n:
                        return (n, dso)
                    break
        return (f"{dso}+{off:#x}", dso)


def named_stacks(g, idx, namer=None):
    """Per sample: (ts, [(function, dso)] innermost first)."""
    namer = namer or FrameNamer(g)
    out = []
    for ts, st in raw_stacks(g, idx):
        named = []
        for kind, pid, pc, depth in st:
            # deeper user frames are return addresses: name the call instruction
            f = namer.name(kind, pid, pc - 1 if (kind == "u" and depth) else pc)
            if f[1] == "[unknown]" and depth:
                break       # outside every mapping: a frame-pointer walk through code built without them
            named.append(f)
        out.append((ts, named))
    return out


# --- the profile ---
def _share(n, total):
    return round(n / total, 4) if total else 0.0


def build_profile(g, utid, a, b, top=TOP_FUNCTIONS):
    """The CPU profile of utid over [a, b] as plain data (root_causes[].profile, docs/profile.md),
    or None when the window has no samples."""
    idx = sample_rows(g, utid, a, b)
    if not len(idx):
        return None
    periods = g.rows["aux"][idx].astype(np.int64)
    period_ns = int(np.median(periods)) * 1000 if len(periods) else 0
    stacks = named_stacks(g, idx)
    n = len(stacks)
    self_fn, total_fn, self_dso, total_dso, callers = {}, {}, {}, {}, {}
    tree = {"function": "all", "dso": "", "samples": 0, "children": {}}
    in_kernel = int(np.count_nonzero(g.rows["state"][idx]))
    for _, st in stacks:
        leaf = st[0] if st else ("[no stack]", "[unknown]")
        self_fn[leaf] = self_fn.get(leaf, 0) + 1
        self_dso[leaf[1]] = self_dso.get(leaf[1], 0) + 1
        for f in set(st) or {leaf}:
            total_fn[f] = total_fn.get(f, 0) + 1
        for d in {f[1] for f in st} or {leaf[1]}:
            total_dso[d] = total_dso.get(d, 0) + 1
        caller = st[1] if len(st) > 1 else None
        if caller is not None:
            c = callers.setdefault(leaf, {})
            c[caller] = c.get(caller, 0) + 1
        node = tree
        node["samples"] += 1
        for f in reversed(st[-MAX_TREE_DEPTH:] if st else [leaf]):
            child = node["children"].get(f)
            if child is None:
                child = node["children"][f] = {"function": f[0], "dso": f[1], "samples": 0, "children": {}}
            child["samples"] += 1
            node = child
    by_fn = sorted(self_fn.items(), key=lambda kv: (-kv[1], kv[0]))
    functions = [{"function": f[0], "dso": f[1], "self": c, "self_share": _share(c, n),
                  "total": total_fn.get(f, c), "total_share": _share(total_fn.get(f, c), n),
                  "callers": [{"function": k[0], "dso": k[1], "samples": v, "share": _share(v, c)}
                              for k, v in sorted(callers.get(f, {}).items(), key=lambda kv: -kv[1])[:3]]}
                 for f, c in by_fn[:top]]
    top_n, acc = 0, 0
    for _, c in by_fn:
        top_n += 1
        acc += c
        if acc >= COVERAGE * n or top_n >= TOP_COVERING_MAX:
            break
    inclusive = sorted(total_fn.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return {
        "samples": n,
        "period_ns": period_ns,
        "cpu_ns": n * period_ns,
        "window_ns": int(b - a),
        "in_kernel_share": _share(in_kernel, n),
        "top": {"functions": [f[0] for f, _ in by_fn[:top_n]], "share": _share(acc, n)},
        "by_dso": [{"dso": d, "self": c, "self_share": _share(c, n), "total": total_dso.get(d, c),
                    "total_share": _share(total_dso.get(d, c), n)}
                   for d, c in sorted(self_dso.items(), key=lambda kv: (-kv[1], kv[0]))[:top]],
        "bottom_up": functions,
        "top_down": _prune(tree, n)["children"],
        "inclusive": [{"function": f[0], "dso": f[1], "samples": c, "share": _share(c, n)} for f, c in inclusive],
    }


def _prune(node, n, depth=0):
    kids = [k for k in node["children"].values() if k["samples"] >= MIN_TREE_SHARE * n]
    kids.sort(key=lambda k: (-k["samples"], k["function"]))
    out = {"function": node["function"], "dso": node["dso"], "samples": node["samples"],
           "share": _share(node["samples"], n)}
    out["children"] = [_prune(k, n, depth + 1) for k in kids] if depth < MAX_TREE_DEPTH else []
    return out


# --- text ---
def render_profile(p, indent="      ", tree_depth=6, bottom_up=8):
    """Lines of a profile for the text report and the REPL."""
    if not p:
        return [indent + "profile: no CPU samples in this window (tracing without the sampler?)"]
    out = [indent + f"profile: {p['samples']} samples ({fmt_dur(p['cpu_ns'])} of CPU, one every "
           f"{fmt_dur(p['period_ns'])}), {fmt_pct(p['in_kernel_share'])} in the kernel; top functions "
           f"({fmt_pct(p['top']['share'])} of the samples): {', '.join(p['top']['functions'])}"]
    out.append(indent + "  by shared object: " + ", ".join(
        f"{d['dso']} {fmt_pct(d['self_share'])}" for d in p["by_dso"][:5]))
    out.append(indent + "  bottom-up (self, total, called from):")
    for f in p["bottom_up"][:bottom_up]:
        via = ", ".join(c["function"] for c in f["callers"][:2])
        out.append(indent + f"    {fmt_pct(f['self_share']):>4} {fmt_pct(f['total_share']):>4}  "
                   f"{f['function']} ({f['dso']})" + (f"  <- {via}" if via else ""))
    if tree_depth:
        out.append(indent + "  top-down:")

        def walk(nodes, d):
            for k in nodes:
                out.append(indent + "    " + "  " * d + f"{fmt_pct(k['share']):>4}  {k['function']} ({k['dso']})")
                if d + 1 < tree_depth:
                    walk(k["children"], d + 1)
        walk(p["top_down"], 0)
    return out
