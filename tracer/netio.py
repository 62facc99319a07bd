"""Connection identity: the NET_IO records of a trace as send / receive records.

A NET_IO record (struct argus_ev_net_io in tracer/ringbuf/argus_event.h,
written by kext/linux/net_io.bpf.h) says which bytes one read / write /
send / recv family call moved on a TCP or UDP socket, with the 4-tuple seen
from its end.  The two ends of a transfer, traced on two hosts, match:

  - TCP: the mirrored 4-tuple (peer_key) and overlapping sequence ranges,
    [seq, seq + bytes) of a send and of the receive (modulo 2**32);
  - UDP: the mirrored 4-tuple, the size and the order of the datagrams.
    An unconnected socket bound to any address has local address 0.0.0.0
    (or ::): a wildcard, the datagram's real destination is not recorded.

IPv4 addresses are shown dotted whatever the socket's family (the record
keeps them v4-mapped), so a dual-stack end matches an IPv4 one.

Short records (schema v5): the tracer writes a socket's full record (88
bytes) when a process first moves bytes on it and then at most once a
second, and a 40-byte NET_IO_SHORT for the calls in between: no family,
ports or addresses, since they are the socket's own and do not change.
The decoder makes each a NET_IO row with pad = NET_TUPLE_COPIED and no
addresses; resolve_tuples (reader.decode_file runs it on every decode,
stream.GrowingWindow and tracer/focus.py on the rows they join, and
TupleCarry hands full rows on across stream.iter_windows) copies the family, ports and
address index of the nearest full row of the same socket into it, so every
reader sees NET_IO rows as before.  The socket is (pid, inode): the tracer
writes a full record in each process that uses a socket, and inode numbers
are reused across a machine's lifetime, so the nearest full row is the one
before the short row; after it only in a window that starts between two
full records (the tuple is the same before and after).  A short row with no
full row of its socket in the decode keeps zero ports, addresses
frames[index] = zeros and pad = NET_TUPLE_UNKNOWN: shown with an unknown
tuple (NetIo.local / remote None), matched to nothing, never dropped.

Implied rows (schema v6): a call whose bytes continue its thread's chain on
its socket (same thread, same direction, its seq the previous call's seq
plus bytes) gets no record at all; the tracer sets its exit record's
header.flags to the direction instead (kext/linux/net_io.bpf.h), and the
decoder puts that in the SYSCALL_EXIT row's pad.  rebuild_implied
(reader.decode_file runs it before resolve_tuples) makes each such exit the
NET_IO row its NET_IO_SHORT would have been, right after the exit: fd and
inode from the call's SYSCALL_ENTER (obj, obj2: the thread's previous
syscall row, with the same nr, pid and cpu), bytes from the exit's ret,
proto from the chain, seq = the previous row of the same (pid, tid, inode,
dir) + its bytes, i.e. the chain's last recorded row (its anchor) + the
bytes of the implied calls since.  The tracer flags a call only when all of
that is certainly in the trace (the enter and exit staged on the CPU of the
thread's lineage, no record lost on it since the anchor, the anchor less
than REFRESH_NS old); the reader still drops, never guesses, a row whose
anchor is missing, ANCHOR_MAX_NS or more before it, or on the other side of
the decode's torn chunks, and one whose enter is not its thread's previous
syscall row.  Then it clears every exit row's pad: the rows are the ones
the v5 records gave.  A window decode (since_ns) looks ANCHOR_MAX_NS back for
anchors (a second decode of NET_IO and syscall rows only).
"""
import functools
import ipaddress
from typing import NamedTuple

import numpy as np

from . import schema

# ARGUS_REFRESH_NS (kext/linux/argus_trace.h): a chain of calls on a socket
# (one thread, one direction) gets a record at least this often, so the
# anchor of every implied call is less than this before it.
REFRESH_NS = 1_000_000_000
# What a reader allows: REFRESH_NS by the tracer's clock, plus 1 ms for a
# trace whose times were rescaled since (tests/support/clockshift.py: drift).
ANCHOR_MAX_NS = REFRESH_NS + 1_000_000


class NetIo(NamedTuple):
    ts_ns: int                 # the call's exit (CLOCK_MONOTONIC of the host that traced it)
    pid: int
    tid: int
    fd: int
    dir: str                   # 'send' | 'recv'
    proto: str                 # 'tcp' | 'udp'
    local: tuple               # (ip string, port) of this end
    remote: tuple              # (ip string, port) of the other end
    seq: object                # TCP: sequence number of the first byte moved (int); UDP: None
    bytes: int

    def peer_key(self):
        """The (proto, local, remote) the other end's records of this flow carry."""
        return (self.proto, self.remote, self.local)

    def key(self):
        """(proto, local, remote) of this end: equal to peer_key() of the other end."""
        return (self.proto, self.local, self.remote)


@functools.lru_cache(maxsize=4096)
def ip_text(raw):
    """16 bytes in network order -> '10.0.0.1' (v4-mapped) or an IPv6 string."""
    addr = ipaddress.IPv6Address(raw)
    return str(addr.ipv4_mapped) if addr.ipv4_mapped is not None else str(addr)


def _addresses(frames, index):
    """(local, remote) 16-byte addresses at frames[index:index + 4]; zero when out of bounds."""
    if index + 4 > len(frames):
        return bytes(16), bytes(16)
    raw = np.ascontiguousarray(frames[index:index + 4]).tobytes()
    return raw[:16], raw[16:]


def endpoints(row, frames):
    """((local ip, port), (remote ip, port)) of one NET_IO row (a numpy
    record or a {column: value} dict), its addresses from the decoder's
    frames side array."""
    col = functools.partial(schema.column, schema.NET_IO)
    local, remote = _addresses(frames, int(row[col("local_addr")]))
    return (ip_text(local), int(row[col("local_port")])), (ip_text(remote), int(row[col("remote_port")]))


def resolve_tuples(rows, frames):
    """Gives the NET_IO rows of short records (pad NET_TUPLE_COPIED or
    NET_TUPLE_UNKNOWN) the family, ports and address index of the nearest
    full NET_IO row (pad NET_TUPLE_OWN) with the same (pid, inode): the
    last one before, else the first one after; pad becomes COPIED, or
    UNKNOWN with zero ports and family and the index of 4 zero words.
    rows: time-sorted, changed in place.  Returns frames, with 4 zero words
    appended when some row needed them and frames had none at its end."""
    net = np.flatnonzero(rows["type"] == schema.NET_IO)
    if not len(net):
        return frames
    pad = rows["pad"][net]
    short, full = net[pad != schema.NET_TUPLE_OWN], net[pad == schema.NET_TUPLE_OWN]
    if not len(short):
        return frames
    # A full row of an inode above 32 bits is no socket a short record names.
    full = full[rows["obj2"][full] >> np.uint64(32) == 0]
    key = lambda idx: rows["pid"][idx].astype(np.uint64) << np.uint64(32) | rows["obj2"][idx]   # noqa: E731
    found = np.zeros(len(short), bool)
    if len(full):
        # (socket id, row index) as one number, ordered like the pair.
        ids = np.unique(np.concatenate([key(full), key(short)]), return_inverse=True)[1].astype(np.uint64)
        span = np.uint64(len(rows) + 1)
        fpos = ids[:len(full)] * span + full.astype(np.uint64)
        order = np.argsort(fpos)
        fpos, full = fpos[order], full[order]
        sid = ids[len(full):]
        at = np.searchsorted(fpos, sid * span + short.astype(np.uint64))
        before, after = np.maximum(at - 1, 0), np.minimum(at, len(full) - 1)
        has_before = (at > 0) & (fpos[before] // span == sid)
        has_after = (at < len(full)) & (fpos[after] // span == sid)
        found = has_before | has_after
        src = np.where(has_before, full[before], full[after])[found]
        for col in ("irq", "peer_pid", "nr", "obj"):      # family, local_port, remote_port, addresses
            rows[col][short[found]] = rows[col][src]
    rows["pad"][short[found]] = schema.NET_TUPLE_COPIED
    lost = short[~found]
    if len(lost):
        zero = len(frames) - 4
        if zero < 0 or frames[zero:].any():
            zero, frames = len(frames), np.concatenate([frames, np.zeros(4, np.uint64)])
        for col in ("irq", "peer_pid", "nr"):
            rows[col][lost] = 0
        rows["obj"][lost] = zero
        rows["pad"][lost] = schema.NET_TUPLE_UNKNOWN
    return frames


class TupleCarry:
    """The last full NET_IO row of each socket in the earlier windows of a
    pass over a buffer (stream.iter_windows), for the short rows of a later
    window whose socket has no full row in theirs: the nearest full row
    before them, as one decode of the whole buffer would find."""

    def __init__(self):
        self.last = {}          # (pid, inode) -> (family, local_port, remote_port, 4 address words)

    def apply(self, rows, frames):
        """Resolves the window's unknown rows from the earlier windows, then
        remembers its full rows.  rows: changed in place; returns frames."""
        net = rows["type"] == schema.NET_IO
        lost = np.flatnonzero(net & (rows["pad"] == schema.NET_TUPLE_UNKNOWN))
        known = [(i, self.last.get((int(rows["pid"][i]), int(rows["obj2"][i])))) for i in lost.tolist()]
        known = [(i, v) for i, v in known if v is not None]
        if known:
            base = len(frames)
            frames = np.concatenate([frames, np.concatenate([v[3] for _, v in known])])
            for k, (i, (family, lport, rport, _)) in enumerate(known):
                rows["irq"][i], rows["peer_pid"][i], rows["nr"][i] = family, lport, rport
                rows["obj"][i] = base + 4 * k
                rows["pad"][i] = schema.NET_TUPLE_COPIED
        full = np.flatnonzero(net & (rows["pad"] == schema.NET_TUPLE_OWN))
        if len(full):
            keys = rows["pid"][full].astype(np.uint64) << np.uint64(32) | rows["obj2"][full]
            _, last = np.unique(keys[::-1], return_index=True)     # the last row of each socket
            for i in full[len(full) - 1 - last].tolist():
                at = int(rows["obj"][i])
                words = frames[at:at + 4].copy() if at + 4 <= len(frames) else np.zeros(4, np.uint64)
                self.last[(int(rows["pid"][i]), int(rows["obj2"][i]))] = (
                    rows["irq"][i], rows["peer_pid"][i], rows["nr"][i], words)
        return frames


def tuple_known(row):
    """Whether a NET_IO row has its 4-tuple (all but short rows whose socket
    had no full record in the decode)."""
    return int(row["pad"]) != schema.NET_TUPLE_UNKNOWN


def net_io_rows(trace):
    """The NET_IO records of a reader.Trace, in time order, as NetIo tuples
    (local and remote None when the tuple is unknown)."""
    rows = trace.rows[trace.rows["type"] == schema.NET_IO]
    col = functools.partial(schema.column, schema.NET_IO)
    out = []
    for r in rows:
        local, remote = endpoints(r, trace.frames) if tuple_known(r) else (None, None)
        proto = schema.NET_PROTO_NAMES.get(int(r[col("proto")]), str(int(r[col("proto")])))
        out.append(NetIo(
            ts_ns=int(r["ts_ns"]), pid=int(r["pid"]), tid=int(r["tid"]), fd=int(r[col("fd")]),
            dir=schema.NET_DIR_NAMES.get(int(r[col("dir")]), "?"), proto=proto,
            local=local, remote=remote,
            seq=int(r[col("seq")]) if proto == "tcp" else None,
            bytes=int(r[col("bytes")])))
    return out


def _implied_calls(rows, lo=0, hi=(1 << 64) - 1):
    """The flagged SYSCALL_EXIT rows of rows (ts in [lo, hi]) whose enter is
    the thread's previous syscall row (same pid, nr and cpu): (exit row
    indexes, enter row indexes)."""
    typ = rows["type"]
    ex = np.flatnonzero((typ == schema.SYSCALL_EXIT) & (rows["pad"] != 0))
    if len(ex) and (lo > 0 or hi < (1 << 64) - 1):
        ts = rows["ts_ns"][ex]
        ex = ex[(ts >= np.uint64(lo)) & (ts <= np.uint64(hi))]
    if not len(ex):
        return ex, ex
    sysr = np.flatnonzero((typ == schema.SYSCALL_ENTER) | (typ == schema.SYSCALL_EXIT))
    keys = np.sort(rows["tid"][sysr].astype(np.uint64) << np.uint64(32) | sysr.astype(np.uint64))
    at = np.searchsorted(keys, rows["tid"][ex].astype(np.uint64) << np.uint64(32) | ex.astype(np.uint64))
    prev = keys[np.maximum(at - 1, 0)]
    en = (prev & np.uint64(0xFFFFFFFF)).astype(np.int64)
    ok = ((at > 0) & (prev >> np.uint64(32) == rows["tid"][ex]) & (typ[en] == schema.SYSCALL_ENTER)
          & (rows["pid"][en] == rows["pid"][ex]) & (rows["nr"][en] == rows["nr"][ex])
          & (rows["cpu"][en] == rows["cpu"][ex]))
    return ex[ok], en[ok]


def _companions(rows, ex):
    """Per flagged exit, the index of the NET_IO row the tracer also wrote
    for it (its test hook ARGUS_NET_IO_VERIFY: the same thread and ts, just
    after the exit), else -1."""
    out = np.full(len(ex), -1, np.int64)
    for k in (1, 2, 3):
        at = np.minimum(ex + k, len(rows) - 1)
        hit = ((out < 0) & (ex + k < len(rows)) & (rows["type"][at] == schema.NET_IO)
               & (rows["tid"][at] == rows["tid"][ex]) & (rows["ts_ns"][at] == rows["ts_ns"][ex]))
        out[hit] = at[hit]
    return out


def _solve(rows, ex, en, torn=(0, 0), net=None):
    """seq, proto and validity of the implied calls (ex, en: _implied_calls)
    from the NET_IO rows of rows (or those of net) and each other (module
    doc)."""
    if net is None:
        net = np.flatnonzero(rows["type"] == schema.NET_IO)
    n_a = len(net)
    col = functools.partial(schema.column, schema.NET_IO)
    pid = np.concatenate([rows["pid"][net], rows["pid"][ex]]).astype(np.uint64)
    tid = np.concatenate([rows["tid"][net], rows["tid"][ex]]).astype(np.uint64)
    inode = np.concatenate([rows[col("inode")][net], rows["obj2"][en]]).astype(np.uint64)
    dirs = np.concatenate([rows[col("dir")][net], rows["pad"][ex]]).astype(np.uint64)
    ts = np.concatenate([rows["ts_ns"][net], rows["ts_ns"][ex]]).astype(np.uint64)
    nbytes = np.concatenate([rows[col("bytes")][net], rows["val"][ex]]).astype(np.int64) & 0xFFFFFFFF
    pos = np.concatenate([net, ex]).astype(np.int64)          # ties: the file's order
    order = np.lexsort((pos, ts, dirs, inode, tid, pid))
    pid, tid, inode, dirs, ts, nbytes = (a[order] for a in (pid, tid, inode, dirs, ts, nbytes))
    n = len(order)
    idx = np.arange(n)
    anchor = order < n_a
    new = np.ones(n, bool)
    new[1:] = (pid[1:] != pid[:-1]) | (tid[1:] != tid[:-1]) | (inode[1:] != inode[:-1]) | (dirs[1:] != dirs[:-1])
    start = np.maximum.accumulate(np.where(new, idx, 0))
    a = np.maximum.accumulate(np.where(anchor, idx, -1))
    ok = a >= start
    a = np.maximum(a, 0)
    ok &= ts - ts[a] < np.uint64(ANCHOR_MAX_NS)
    if torn[0] or torn[1]:
        ok &= ~((ts >= np.uint64(torn[0])) & (ts[a] <= np.uint64(torn[1])))
    src = net[np.minimum(order[a], max(n_a - 1, 0))] if n_a else np.zeros(n, np.int64)
    proto = rows[col("proto")][src] if n_a else np.zeros(n, np.uint8)
    before = np.cumsum(nbytes) - nbytes                      # bytes of the group's earlier items, + a constant
    seq = (rows[col("seq")][src].astype(np.int64) + before - before[a]) & 0xFFFFFFFF if n_a else np.zeros(n, np.int64)
    seq = np.where(proto == 6, seq, 0)
    back = np.empty(n, np.int64)
    back[order] = idx                                        # item -> sorted place
    mine = back[n_a:]
    return ok[mine], seq[mine], proto[mine]


class Rebuilt(NamedTuple):
    """What rebuild_implied did: rows inserted; and in a trace of the test
    hook (a record beside each implied call): rows checked against their
    record, how many differed, how many it could not rebuild."""
    implied: int = 0
    verified: int = 0
    mismatched: int = 0
    unresolved: int = 0


def rebuild_implied(rows, torn=(0, 0), lookback=None, window=None):
    """rows with the NET_IO rows of their implied calls inserted (module
    doc), and a Rebuilt; every SYSCALL_EXIT row's pad cleared.  rows:
    time-sorted (a decode's); returned as is when no exit is flagged, else
    a new array.  torn: the decode's torn chunks' (first, last) ts, (0, 0)
    when none.  window: (since, until) of a window decode, whose exits
    outside it get no row; lookback: then the rows of [since - ANCHOR_MAX_NS,
    since) (syscall and NET_IO rows at least), where their anchors are."""
    typ = rows["type"]
    flagged = (typ == schema.SYSCALL_EXIT) & (rows["pad"] != 0)
    if not flagged.any():
        return rows, Rebuilt()
    src, off, since, until = rows, 0, 0, (1 << 64) - 1
    if window is not None:
        since, until = window
        if lookback is not None:
            lb = lookback[lookback["ts_ns"] < np.uint64(since)]
            keep = np.isin(rows["type"], (schema.SYSCALL_ENTER, schema.SYSCALL_EXIT, schema.NET_IO))
            keep &= rows["ts_ns"] >= np.uint64(since)
            back = np.flatnonzero(keep)
            src = np.concatenate([lb, rows[back]])
            off = len(lb)
    # every implied call is a link of its chain; rows only for the window's
    ex, en = _implied_calls(src)
    out_idx = ex
    stats = Rebuilt()
    if len(ex):
        comp = _companions(src, ex)
        net = None
        if (comp >= 0).any():
            # the test hook's records are not anchors: each row is rebuilt
            # as without them, then checked against its record
            net = np.setdiff1d(np.flatnonzero(src["type"] == schema.NET_IO), comp[comp >= 0])
        ok, seq, proto = _solve(src, ex, en, torn, net)
        ts = src["ts_ns"][ex]
        inside = (ts >= np.uint64(since)) & (ts <= np.uint64(until))
        if net is not None:
            c = comp >= 0
            col = functools.partial(schema.column, schema.NET_IO)
            got = (src[col("seq")][comp] == seq) & (src[col("bytes")][comp] == (src["val"][ex] & 0xFFFFFFFF)) & (
                src[col("dir")][comp] == src["pad"][ex]) & (src[col("proto")][comp] == proto) & (
                src[col("inode")][comp] == src["obj2"][en]) & (
                src[col("fd")][comp] == (src["obj"][en] & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32))
            stats = stats._replace(verified=int((c & inside & ok).sum()),
                                   mismatched=int((c & inside & ok & ~got).sum()),
                                   unresolved=int((c & inside & ~ok).sum()))
            ok &= ~c                                   # its record is its row
        ok &= inside
        ex, en, seq, proto = ex[ok], en[ok], seq[ok], proto[ok]
        out_idx = ex if src is rows else back[ex - off]
    new = np.zeros(len(ex), schema.ROW_DTYPE)
    if len(ex):
        col = functools.partial(schema.column, schema.NET_IO)
        new["ts_ns"] = src["ts_ns"][ex]
        new["pid"] = src["pid"][ex]
        new["tid"] = src["tid"][ex]
        new["cpu"] = src["cpu"][ex]
        new["type"] = schema.NET_IO
        new["pad"] = schema.NET_TUPLE_COPIED
        new[col("fd")] = (src["obj"][en] & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
        new[col("dir")] = src["pad"][ex]
        new[col("proto")] = proto
        new[col("bytes")] = src["val"][ex] & 0xFFFFFFFF
        new[col("seq")] = seq
        new[col("inode")] = src["obj2"][en]
        new["obj"] = np.uint64((1 << 64) - 1)             # no addresses yet: resolve_tuples
        rows = np.insert(rows, np.asarray(out_idx, np.int64) + 1, new)
    else:
        rows = rows.copy() if not rows.flags.writeable else rows
    rows["pad"][rows["type"] == schema.SYSCALL_EXIT] = 0
    return rows, stats._replace(implied=len(new))
