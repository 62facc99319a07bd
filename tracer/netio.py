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
"""
import functools
import ipaddress
import os
from typing import NamedTuple

import numpy as np

from . import reader, schema


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


def net_io_rows(trace):
    """The NET_IO records of a trace, in time order, as NetIo tuples.

    trace: a reader.Trace (decode_file), or the path of a buffer, decoded
    here for NET_IO rows only."""
    if isinstance(trace, (str, bytes, os.PathLike)):
        trace = reader.decode_file(trace, types=[schema.NET_IO], keep_state=False)
    rows = trace.rows[trace.rows["type"] == schema.NET_IO]
    col = functools.partial(schema.column, schema.NET_IO)
    out = []
    for r in rows:
        local, remote = endpoints(r, trace.frames)
        proto = schema.NET_PROTO_NAMES.get(int(r[col("proto")]), str(int(r[col("proto")])))
        out.append(NetIo(
            ts_ns=int(r["ts_ns"]), pid=int(r["pid"]), tid=int(r["tid"]), fd=int(r[col("fd")]),
            dir=schema.NET_DIR_NAMES.get(int(r[col("dir")]), "?"), proto=proto,
            local=local, remote=remote,
            seq=int(r[col("seq")]) if proto == "tcp" else None,
            bytes=int(r[col("bytes")])))
    return out
