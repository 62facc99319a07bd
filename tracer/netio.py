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
"""
import functools
import ipaddress
from typing import NamedTuple

import numpy as np

from . import schema


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
