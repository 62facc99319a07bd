"""What the call stacks of vertices say, for the diagnosis.

g.stacks (Table seg, depth, pc, symbol, innermost first; built on first use
by graphbuild/stacks.py, which alone reads rows and ELF files) is the user
stack each vertex blocked with, when the trace recorded stacks and the loader
gave the builder the trace's frames (build_graph's side=).
They are shown in questions, used by the baseline similarity and by the
bp_watch advice of a RepeatedYield root cause:
  loop_vertex      of a thread's vertices that blocked inside [a, b] with a
                   stack, one with the stack seen most often (a polling loop
                   blocks in the same place every round: usleep, futex);
  flag_candidates  walk that stack innermost first, skipping the C runtime
                   (libc, libpthread, the dynamic loader): the first frame
                   whose function (or a direct callee) reads global
                   variables names the IMAGE and SYMBOL candidates
                   (debugger/datarefs.py disassembles the ELF file).
  flag_candidates_from_maps  without a stack, the process's executable (its
                   lowest file mapping in the trace's MAPPING records): its
                   functions that call a polling wait (POLL_CALLS) and the
                   globals they read (datarefs.pollers).
Both say in "missing" why no symbol was found.  Without stacks every other
function here returns [] / None.
"""
import os

import numpy as np
from argus.graphbuild.stacks import Symbolizer, file_vaddr

RUNTIME_PREFIXES = ("libc.so", "libc-", "libpthread", "ld-linux", "ld-musl", "libc.musl", "ld64.so")
# the library calls a polling loop waits with between two reads of its flag
POLL_CALLS = frozenset({"sched_yield", "pthread_yield", "thrd_yield", "usleep", "nanosleep", "clock_nanosleep",
                        "sleep", "thrd_sleep", "poll", "ppoll", "select", "pselect", "g_usleep"})


def top_frames(g, v, n=5):
    st = g.stacks
    if len(st) == 0:
        return []
    sel = st.seg == int(v)
    syms = st.symbol[sel][:n]
    return [s.decode(errors="replace") if isinstance(s, bytes) else str(s) for s in syms]


def has_stacks(g):
    return len(g.stacks) > 0


def loop_vertex(g, utid, a, b):
    """The vertex of utid blocked in [a, b] whose stack is the most frequent
    one there (the latest of them), or -1."""
    if not has_stacks(g):
        return -1
    st = g.stacks
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
    ends = g.seg.end[st.seg.clip(0, len(g.seg) - 1)]
    sel = (st.seg >= lo) & (st.seg < hi) & (ends >= a) & (ends <= b)
    if not np.any(sel):
        return -1
    by_stack = {}
    for v, pc in zip(st.seg[sel].tolist(), st.pc[sel].tolist()):
        by_stack.setdefault(v, []).append(pc)
    counts = {}
    for v, pcs in by_stack.items():
        key = tuple(pcs)
        n, last = counts.get(key, (0, -1))
        counts[key] = (n + 1, max(last, v))
    return max(counts.values())[1]


def symbolizer(g):
    """The graph's Symbolizer (its MAPPING records), built once."""
    s = g.derived.symbolizer
    if s is None:
        s = g.derived.symbolizer = Symbolizer(g)
    return s


def _runtime(path):
    return os.path.basename(path).startswith(RUNTIME_PREFIXES)


def flag_candidates(g, utid, a, b):
    """{"image", "function", "symbols", "stack"} for a polling thread, from the
    stack of its loop: IMAGE the basename of the first non-runtime frame's
    file whose function reads globals, SYMBOL candidates those globals; None
    without stacks.  "symbols" may be empty (stack known, no global found)."""
    # local for start-up time: datarefs pulls in capstone and pyelftools (~80 ms)
    from argus.debugger.datarefs import globals_read
    v = loop_vertex(g, utid, a, b)
    if v < 0:
        return None
    frames = top_frames(g, v, 8)
    st = g.stacks
    pcs = st.pc[st.seg == v].tolist()
    pid = int(g.threads.pid[utid])
    sym = symbolizer(g)
    first = None
    for depth, pc in enumerate(pcs):
        loc = sym.locate(pid, int(pc))
        if loc is None or _runtime(loc[0]) or not os.path.isfile(loc[0]):
            continue
        path, off = loc
        va = file_vaddr(path, off)
        if va is None:
            continue
        fn, names = globals_read(path, va, return_address=depth > 0)
        cand = {"image": os.path.basename(path), "function": fn, "symbols": names[:5], "stack": frames}
        if names:
            return cand
        first = first or cand
    if first is not None:
        first["missing"] = (f"{first['function'] or 'the loop'} in {first['image']} reads no global variable "
                            f"directly (a heap flag, or one reached through the GOT)")
        return first
    return {"image": None, "function": None, "symbols": [], "stack": frames,
            "missing": "the loop's stack has no frame in a file readable here outside the C runtime"}


def flag_candidates_from_maps(g, utid):
    """{"image", "function", "symbols", "stack": [], "missing"} from the
    executable of utid's process when the trace has no stack of the loop
    but maps the process; None without a mapping."""
    # local for start-up time: datarefs pulls in capstone and pyelftools (~80 ms)
    from argus.debugger.datarefs import pollers
    pid = int(g.threads.pid[utid])
    path = symbolizer(g).executable(pid)
    if path is None:
        return None
    image = os.path.basename(path)
    out = {"image": image, "function": None, "symbols": [], "stack": [], "missing": None}
    if not os.path.isfile(path):
        out["missing"] = f"no user stack of the loop, and its executable {path} is not readable here"
        return out
    found = pollers(path, POLL_CALLS)
    if not found:
        out["missing"] = (f"no user stack of the loop, and no function of {image} both calls a polling wait "
                          f"(sched_yield, usleep, poll, ...) and reads a global")
        return out
    out["function"], out["symbols"] = found[0][0], found[0][1][:5]
    return out
