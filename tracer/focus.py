"""A window decoded for one process's hang in little memory: only the rows of
the processes causally near it.

A busy machine writes a million events a second; the few seconds around a
hang are millions of rows, and decoding and building them all costs
gigabytes, while the hang's causal chain runs through a handful of
processes.  `argus debug` (the ring index named the hang's process) loads
such a window focused.

Algorithm:
  pass 1  decode the window in pieces (below) keeping only wakeup, fork
          and process-snapshot rows (a type mask: every record is framed,
          few are widened), reduced to distinct pairs per piece.  They make
          an undirected graph of processes: an edge per wakeup made in task
          context (waker pid -- wakee pid; interrupt and kthread wakeups name
          whoever was interrupted, not a cause) and per fork whose child is
          the target (its parent; its own children join through their
          wakeups only: a launcher such as a test runner forks busy work that
          is not its hang's).  The kept set is the target process and every
          process within MAX_HOPS edges of it, never walking on from a kernel
          thread (kthreadd's children: they wake everyone) or from the
          tracer's own pid; those are kept when adjacent.
  pass 2  decode the window in pieces of about stream.CHUNKS_PER_WINDOW
          chunks (stream.windows cut to the window), and keep of each piece
          the rows of kept processes, the wakeups of them, and every record
          that is not per-thread activity (names, snapshots, fds, mappings,
          data flags, futex states, file locks, lost records).  The first
          piece also keeps the state records from before the window and the
          last one its chunks' records after it, as one window decode does.
The pieces' time ranges are disjoint and in order, so their concatenation
is sorted; their side arrays (stacks, paths, wait sites) are appended and
the rows' offsets into them rebased.

Invariants: every row of a kept process that one decode of the window
holds is kept, in the same order; memory is one piece's decode plus the
kept rows.
"""
import dataclasses

import numpy as np

from . import reader, schema, stream

MAX_HOPS = 4
KTHREADD_PID = 2
_WAKEUPS = (schema.WAKEUP, schema.WAKEUP_NEW)
# per-thread activity: kept only for kept processes (everything else is kept whole)
_ACTIVITY = frozenset((schema.SWITCH_OUT, schema.SWITCH_IN, schema.SYSCALL_ENTER, schema.SYSCALL_EXIT,
                       schema.WAKEUP, schema.WAKEUP_NEW, schema.USER_STACK, schema.KERNEL_STACK,
                       schema.CPU_SAMPLE, schema.WAIT_SITE, schema.TIMER))
_U64_MAX = (1 << 64) - 1


def kept_pids(rows, pid, tracer_pid=None):
    """The processes within MAX_HOPS wakeup / fork edges of pid (module doc),
    from rows of types WAKEUP, WAKEUP_NEW, FORK, PROC_SNAPSHOT."""
    return _closure(*_edges(rows, pid), pid, tracer_pid)


def _edges(rows, pid):
    """(distinct (a, b) process pairs as two arrays, kernel-thread pids) of
    the wakeup / fork / snapshot rows."""
    wk = rows[np.isin(rows["type"], _WAKEUPS) & (rows[schema.column(schema.WAKEUP, "context")] == schema.WAKE_TASK)]
    fk = rows[rows["type"] == schema.FORK]
    child = fk[schema.column(schema.FORK, "child_pid")]
    own = child == pid
    a = np.concatenate([wk["pid"], fk["pid"][own]]).astype(np.int64)
    b = np.concatenate([wk[schema.column(schema.WAKEUP, "wakee_pid")], child[own]]).astype(np.int64)
    pairs = np.unique(np.stack([a, b], axis=1), axis=0) if len(a) else np.zeros((0, 2), np.int64)
    snap = rows[rows["type"] == schema.PROC_SNAPSHOT]
    kthreads = set(snap["pid"][snap[schema.column(schema.PROC_SNAPSHOT, "ppid")] == KTHREADD_PID].tolist())
    kthreads |= set(child[fk["pid"] == KTHREADD_PID].tolist())
    return pairs, kthreads


def _closure(pairs, kthreads, pid, tracer_pid=None):
    a, b = pairs[:, 0], pairs[:, 1]
    kthreads = set(kthreads)
    kthreads.add(KTHREADD_PID)
    stop = kthreads | ({int(tracer_pid)} if tracer_pid else set())
    keep = {int(pid)}
    frontier = {int(pid)}
    for _ in range(MAX_HOPS):
        walk = np.fromiter(frontier - stop, np.int64)
        if not len(walk):
            break
        near = set(b[np.isin(a, walk)].tolist()) | set(a[np.isin(b, walk)].tolist())
        frontier = near - keep
        keep |= near
    keep.discard(0)
    return keep


def _pieces(path, since, until):
    table = stream.chunk_table(path)
    out = []
    for lo, hi, hint in stream.windows(table):
        if hi < since or lo > until:
            continue
        out.append((max(lo, since), min(hi, until), hint))
    return out or [(since, until, 1024)]


def decode_focused(path, pid, since_ns=None, until_ns=None, tracer_pid=None, decode=None):
    """A reader.Trace of the window [since_ns, until_ns] (None: unbounded)
    holding only the rows near process pid (module doc); .focus is the
    kept set of pids.  decode(**kw) -> Trace: reader.decode_file by default
    (the CLI passes its one-line-error loader)."""
    decode = decode or (lambda **kw: reader.decode_file(path, strict=False, **kw))
    since = 0 if since_ns is None else int(since_ns)
    until = _U64_MAX if until_ns is None else int(until_ns)
    pieces = _pieces(path, since, until)
    pairs, kthreads = [], set()
    for k, (lo, hi, hint) in enumerate(pieces):
        near = decode(since_ns=lo, until_ns=hi, keep_state=k == 0, rows_hint=4096,
                      types=_WAKEUPS + (schema.FORK, schema.PROC_SNAPSHOT))
        p, kt = _edges(near.rows, pid)
        pairs.append(p)
        kthreads |= kt
        del near
    pairs = np.unique(np.concatenate(pairs), axis=0)
    keep = np.fromiter(_closure(pairs, kthreads, pid, tracer_pid), np.int64)
    parts, frames, strings = [], [], []
    nf = ns = 0
    first_window_ts = 0
    torn = bad = 0
    last = None
    for k, (lo, hi, hint) in enumerate(pieces):
        t = decode(since_ns=lo, until_ns=hi, keep_state=k == 0, rows_hint=hint)
        rows = t.rows
        ts = rows["ts_ns"]
        a = 0 if k == 0 else int(np.searchsorted(ts, np.uint64(lo), side="left"))
        b = len(rows) if k == len(pieces) - 1 else int(np.searchsorted(ts, np.uint64(hi), side="right"))
        rows = rows[a:b]
        typ = rows["type"]
        mine = np.isin(rows["pid"].astype(np.int64), keep)
        woken = np.isin(typ, _WAKEUPS) & np.isin(rows[schema.column(schema.WAKEUP, "wakee_pid")].astype(np.int64),
                                                 keep)
        rows = rows[mine | woken | ~np.isin(typ, list(_ACTIVITY))]      # a copy: the decode can go
        if nf or ns:
            stream._rebase(rows, nf, ns)
        parts.append(rows)
        frames.append(t.frames)
        strings.append(t.strings)
        nf, ns = nf + len(t.frames), ns + len(t.strings)
        if t.first_window_ts and (not first_window_ts or t.first_window_ts < first_window_ts):
            first_window_ts = int(t.first_window_ts)
        torn, bad = torn + int(t.torn_chunks), bad + int(t.bad_records)
        last = t
    rows = np.concatenate(parts) if len(parts) > 1 else parts[0]
    out = dataclasses.replace(
        last, rows=rows, nrows=len(rows), frames=np.concatenate(frames), strings=b"".join(strings),
        window=(since, until), first_window_ts=first_window_ts, torn_chunks=torn, bad_records=bad,
        first_ts=int(rows["ts_ns"][0]) if len(rows) else 0, last_ts=int(rows["ts_ns"][-1]) if len(rows) else 0,
        focus=frozenset(keep.tolist()))
    return out
