"""User stacks of vertices: the stack a vertex's thread blocked with.

This module builds g.stacks (rows -> frames -> symbols) and owns reading the
trace's ELF files (program headers, addr2line); diagnose/stacks.py reads the
built table for the diagnosis and never parses rows or files itself.

Algorithm:
  1. a vertex that ended at a blocking wait has that SWITCH_OUT as its last
     own row; the row's obj2 is the user stack id (0: none recorded);
  2. USER_STACK rows carry (pid, stack id) -> frames (the trace's frames side
     array: obj = first frame, aux = count), innermost first;
  3. each frame pc is symbolized through the process's MAPPING rows (start,
     end, file offset, path): file offset -> virtual address through the ELF
     file's PT_LOAD segments (pyelftools) -> function name by one batched
     `addr2line -f -C` per file.  Unknown: "file+0xoffset", or "0xpc"
     outside every mapping.
The result is a Table (seg, depth, pc, symbol), sorted by (seg, depth) —
what diagnose/stacks.py reads as `g.stacks`.  Vertices are joined to their
USER_STACK row with numpy (sort + searchsorted on (pid, stack id)); each
entry of the frames side array is symbolized once.

Invariants: work is per entry of the frames side array (one per distinct
stack) and per distinct ELF file, never per event; ELF files are only read,
never executed; a file that is gone or unreadable leaves its frames as
file+offset.
"""
import bisect
import os
import shutil
import stat
import subprocess

import numpy as np

from argus.tracer import schema
from argus.graphbuild.columns import END_BLOCKED, Table


def load_segments(path):
    """PT_LOAD (p_offset, p_filesz, p_vaddr) of an ELF file (pyelftools reads
    only the program headers); [] when the file is gone or not ELF."""
    try:
        from elftools.elf.elffile import ELFFile
        with _open_regular(path) as f:
            return [(sg["p_offset"], sg["p_filesz"], sg["p_vaddr"]) for sg in ELFFile(f).iter_segments()
                    if sg["p_type"] == "PT_LOAD"]
    except Exception:  # missing, unreadable, not ELF: leave its frames as file+offset
        return []


def file_vaddr(path, offset, loads=None):
    """The virtual address of file offset `offset` in ELF file `path` (its
    PT_LOAD segments, or `loads` when already read), or None outside them."""
    for p_off, size, vaddr in load_segments(path) if loads is None else loads:
        if p_off <= offset < p_off + size:
            return offset - p_off + vaddr
    return None


def _open_regular(path):
    """The file at a mapping's path, opened without blocking: whoever owned
    the mapped file may have put a FIFO or a device at that path since, which
    a plain open would wait on forever.  Anything but a regular file: OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return os.fdopen(fd, "rb")


def _function_names(path, vaddrs):
    """Function names of vaddrs in one ELF file, by one `addr2line -f -C`
    run (binutils reads the symbol tables and DWARF in C; parsing a
    million-symbol library in Python took seconds per file).  The path is an
    argv element, never a shell word, and the file is only read."""
    addr2line = shutil.which("addr2line")
    # a FIFO swapped in after this check is bounded by the timeout below
    if not addr2line or not vaddrs or not os.path.isfile(path):
        return [None] * len(vaddrs)
    try:
        out = subprocess.run([addr2line, "-f", "-C", "-e", path] + [f"{v:#x}" for v in vaddrs],
                             capture_output=True, text=True, timeout=60).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return [None] * len(vaddrs)
    names = out[0::2]
    if len(names) != len(vaddrs):
        return [None] * len(vaddrs)
    return [None if n == "??" else n for n in names]


class Symbolizer:
    """pc -> "function", "file+0xoffset" or "0xpc", for the pcs of one trace."""

    def __init__(self, g):
        rows = g.rows
        self._maps = {}
        for i in np.flatnonzero(rows["type"] == schema.MAPPING).tolist():
            m = schema.row_values(rows[i])
            self._maps.setdefault(int(rows[i]["pid"]), []).append(
                (m["start"], m["end"], m["pgoff"], schema.mapping_path(rows[i], g.strings)))
        for m in self._maps.values():
            m.sort()
        self._starts = {pid: [x[0] for x in m] for pid, m in self._maps.items()}

    def executable(self, pid):
        """The path of pid's lowest file mapping (its executable: executables
        load below their libraries and anonymous memory), or None."""
        files = [m[3] for m in self._maps.get(pid, ()) if m[3].startswith("/")]
        return files[0] if files else None

    def locate(self, pid, pc):
        """(path, file offset) of pc in pid's mappings, or None."""
        k = bisect.bisect_right(self._starts.get(pid, ()), pc) - 1
        if k >= 0:
            start, end, pgoff, path = self._maps[pid][k]
            if start <= pc < end:
                return path, pc - start + pgoff
        return None

    def symbolize(self, pids, pcs):
        """Names for parallel lists of pids and pcs."""
        out = [f"{pc:#x}" for pc in pcs]
        by_path = {}
        for k, (pid, pc) in enumerate(zip(pids, pcs)):
            loc = self.locate(pid, pc)
            if loc is not None:
                out[k] = f"{os.path.basename(loc[0])}+{loc[1]:#x}"
                by_path.setdefault(loc[0], []).append((k, loc[1]))
        for path, items in by_path.items():
            if not path.startswith("/") or not os.path.isfile(path):
                continue
            loads = load_segments(path)
            todo = [(k, va) for k, va in ((k, file_vaddr(path, off, loads)) for k, off in items) if va is not None]
            uniq = sorted({va for _, va in todo})
            names = dict(zip(uniq, _function_names(path, uniq)))
            for k, va in todo:
                if names.get(va):
                    out[k] = names[va]
        return out


def build_stacks(g):
    """Table(seg, depth, pc, symbol) of the user stacks vertices blocked with.
    Vectorized over vertices; symbolizes each entry of the frames side array
    once (one per distinct stack recorded), one addr2line run per file."""
    empty = Table(seg=np.zeros(0, np.int64), depth=np.zeros(0, np.int64), pc=np.zeros(0, np.uint64),
                    symbol=np.zeros(0, dtype=object))
    frames = g.frames
    if not len(frames) or not len(g.seg):
        return empty
    rows = g.rows
    seg = g.seg
    blocked = np.flatnonzero((seg.end_kind == END_BLOCKED) & (seg.row_hi > seg.row_lo))
    if not len(blocked):
        return empty
    last = g.thread_rows[seg.row_hi[blocked] - 1]
    stack_of = schema.column(schema.SWITCH_OUT, "user_stack_id")
    ok = (rows["type"][last] == schema.SWITCH_OUT) & (rows[stack_of][last] != 0)
    blocked, last = blocked[ok], last[ok]
    st = np.flatnonzero(rows["type"] == schema.USER_STACK)
    if not len(blocked) or not len(st):
        return empty
    key = np.dtype([("pid", "<u8"), ("sid", "<u8")])
    want = np.empty(len(last), key)
    want["pid"], want["sid"] = rows["pid"][last], rows[stack_of][last]
    have = np.empty(len(st), key)
    have["pid"], have["sid"] = rows["pid"][st], rows[schema.column(schema.USER_STACK, "stack_id")][st]
    order = np.argsort(have, order=("pid", "sid"), kind="stable")
    have_sorted = have[order]
    pos = np.searchsorted(have_sorted, want)
    pos_c = np.minimum(pos, len(have_sorted) - 1)
    found = (pos < len(have_sorted)) & (have_sorted[pos_c] == want)
    src = st[order[pos_c[found]]]            # the USER_STACK row of each vertex with a stack
    verts = blocked[found]
    n, idx, depth = _frame_runs(rows[src], len(frames))
    out_seg = np.repeat(verts, n)
    pcs = frames[idx]
    # symbolize each entry of the frames side array once (its USER_STACK row names the pid)
    frame_pid = np.zeros(len(frames), np.int64)
    sn, sidx, _ = _frame_runs(rows[st], len(frames))
    frame_pid[sidx] = np.repeat(rows["pid"][st].astype(np.int64), sn)
    names = np.array(Symbolizer(g).symbolize(frame_pid.tolist(), frames.tolist()), dtype=object)
    return Table(seg=out_seg.astype(np.int64), depth=depth, pc=pcs.astype(np.uint64), symbol=names[idx])


def _frame_runs(stack_rows, nframes):
    """USER_STACK rows name frames[obj : obj + aux]; returns (per row the run
    length clipped to the frames array, the flat frame indices of all runs,
    each index's depth within its run)."""
    first = stack_rows[schema.column(schema.USER_STACK, "frames")].astype(np.int64)
    n = np.clip(stack_rows[schema.column(schema.USER_STACK, "nframes")].astype(np.int64), 0,
                np.maximum(nframes - first, 0))
    depth = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
    return n, np.repeat(first, n) + depth, depth
