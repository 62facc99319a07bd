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
  row cap  (max_rows) a long hang of a busy neighbourhood is tens of millions
          of rows, gigabytes once built: when the rows kept pass max_rows,
          the farthest processes (most hops) go, from the pieces kept so far
          and from the rest, until under it; when the hung process alone is
          over it, the window ends at that piece.  .focus_note says which.
Pass 1 is not folded into pass 2: the kept set needs every piece's edges
before the first piece's rows can be chosen, so one decode would hold every
piece's rows at once; pass 1 widens only wakeups, forks and snapshots
(about a fifth of pass 2's time on a busy 2 GiB buffer: 2.0 s against 10.8 s
for 10 s of it).

Invariants: every row of a kept process that one decode of the window
holds is kept, in the same order; memory is one piece's decode plus the
kept rows (at most max_rows).
"""
import dataclasses

import numpy as np

from . import netio, reader, schema, stream

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
    return set(_closure(*_edges(rows, pid), pid, tracer_pid))


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
    """{pid: hops from the target} of the processes kept (module doc)."""
    a, b = pairs[:, 0], pairs[:, 1]
    kthreads = set(kthreads)
    kthreads.add(KTHREADD_PID)
    stop = kthreads | ({int(tracer_pid)} if tracer_pid else set())
    hops = {int(pid): 0}
    frontier = {int(pid)}
    for hop in range(1, MAX_HOPS + 1):
        walk = np.fromiter(frontier - stop, np.int64)
        if not len(walk):
            break
        near = set(b[np.isin(a, walk)].tolist()) | set(a[np.isin(b, walk)].tolist())
        frontier = near - hops.keys()
        hops.update(dict.fromkeys(frontier, hop))
    hops.pop(0, None)
    return hops


def _pieces(path, since, until):
    table = stream.chunk_table(path)
    out = []
    for lo, hi, hint in stream.windows(table):
        if hi < since or lo > until:
            continue
        out.append((max(lo, since), min(hi, until), hint))
    return out or [(since, until, 1024)]


def _select(rows, keep):
    """The rows a focused decode keeps of rows (module doc), keep: pids."""
    typ = rows["type"]
    mine = np.isin(rows["pid"].astype(np.int64), keep)
    woken = np.isin(typ, _WAKEUPS) & np.isin(rows[schema.column(schema.WAKEUP, "wakee_pid")].astype(np.int64), keep)
    return rows[mine | woken | ~np.isin(typ, list(_ACTIVITY))]


def decode_focused(path, pid, since_ns=None, until_ns=None, tracer_pid=None, decode=None, max_rows=None):
    """A reader.Trace of the window [since_ns, until_ns] (None: unbounded)
    holding only the rows near process pid (module doc); .focus is the
    kept set of pids, .focus_note says what max_rows cut (module doc: "row
    cap").  decode(**kw) -> Trace: reader.decode_file by default (the CLI
    passes its one-line-error loader)."""
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
    hops = _closure(pairs, kthreads, pid, tracer_pid)
    reach = MAX_HOPS
    keep = np.fromiter(hops, np.int64)
    parts, frames, strings = [], [], []
    nf = ns = kept = 0
    first_window_ts = 0
    torn = bad = 0
    last = None
    cut_at = None
    for k, (lo, hi, hint) in enumerate(pieces):
        t = decode(since_ns=lo, until_ns=hi, keep_state=k == 0, rows_hint=hint)
        rows = t.rows
        ts = rows["ts_ns"]
        a = 0 if k == 0 else int(np.searchsorted(ts, np.uint64(lo), side="left"))
        b = len(rows) if k == len(pieces) - 1 else int(np.searchsorted(ts, np.uint64(hi), side="right"))
        rows = _select(rows[a:b], keep)                                 # a copy: the decode can go
        if nf or ns:
            stream._rebase(rows, nf, ns)
        parts.append(rows)
        kept += len(rows)
        frames.append(t.frames)
        strings.append(t.strings)
        nf, ns = nf + len(t.frames), ns + len(t.strings)
        if t.first_window_ts and (not first_window_ts or t.first_window_ts < first_window_ts):
            first_window_ts = int(t.first_window_ts)
        torn, bad = torn + int(t.torn_chunks), bad + int(t.bad_records)
        last = dataclasses.replace(t, rows=t.rows[:0])      # its fields, not its rows
        del t
        while max_rows and kept > max_rows and reach > 0:
            # over the cap: the farthest processes go, from every piece kept so far
            reach -= 1
            keep = np.fromiter((q for q, h in hops.items() if h <= reach), np.int64)
            parts = [_select(r, keep) for r in parts]
            kept = sum(len(r) for r in parts)
        if max_rows and kept > max_rows and k < len(pieces) - 1:
            cut_at = int(rows["ts_ns"][-1]) if len(rows) else hi     # the hung process alone is over the cap
            break
    rows = np.concatenate(parts) if len(parts) > 1 else parts[0]
    frames = np.concatenate(frames)
    if len(parts) > 1:   # a short NET_IO row's socket may have its full row in another piece
        frames = netio.resolve_tuples(rows, frames)
    note = ""
    if reach < MAX_HOPS:
        note = (f"the window's rows were capped at {max_rows:,}: kept the processes within {reach} of "
                f"{MAX_HOPS} wakeups or forks of the hung one ({len(keep)} of {len(hops)})")
    if cut_at is not None:
        note += ("; " if note else "the window's rows were capped at {:,}".format(max_rows) + ": ") + \
            f"the hung process alone fills the cap, so the window ends early, at trace clock {cut_at / 1e9:.3f} s"
    out = dataclasses.replace(
        last, rows=rows, nrows=len(rows), frames=frames, strings=b"".join(strings),
        window=(since, until if cut_at is None else cut_at), first_window_ts=first_window_ts, torn_chunks=torn,
        bad_records=bad, first_ts=int(rows["ts_ns"][0]) if len(rows) else 0,
        last_ts=int(rows["ts_ns"][-1]) if len(rows) else 0, focus=frozenset(keep.tolist()), focus_note=note)
    return out
