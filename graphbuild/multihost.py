"""One event graph from the buffers of several hosts (`--buffer A --buffer B ...`).

Algorithm:
  1. hosts: each buffer's header names its host (hostname and boot id;
     the file name when the header has neither); names are made unique.
  2. net ops: the NET_IO rows (one per send / receive on an inet socket,
     with the 4-tuple and, for TCP, the sequence number of its first byte;
     tracer/netio.py reads them one by one, here they are columns) of every
     host whose far end another host holds (relevant_ops: a system-wide
     trace's other traffic is dropped before it costs a Python object).
  3. matching (match_ops): a TCP send on host X and a receive on host Y != X
     are the same bytes when their 4-tuples mirror each other and their
     sequence ranges overlap (32-bit sequence numbers unwrapped per flow);
     UDP datagrams by mirrored 4-tuple (a zero address is a wildcard), size
     and order.  Loopback addresses never match across hosts.  Each receive
     gets one edge from the send that supplied its last byte; every
     overlapping pair is a clock constraint.
  4. clocks (clocksync.synchronise): each host's offset and drift against
     host 0 from those constraints; every timestamp of host k is moved to
     host 0's clock (ts_ns, a TIMER's arm and monotonic expiry), which
     orders events across hosts.
  5. ids: pid, tid and every column that names a task get host index << 22
     (pid_max is at most 2^22), so host 0's ids are unchanged and the
     others' never collide; FD_INFO endpoints on loopback addresses get the
     host index too (127.0.0.1:80 of two hosts are two endpoints); side
     array indexes (stacks, mapping paths, wait sites) are shifted to the
     concatenated arrays.
  6. graph: build_graph over the merged rows, then a MESSAGE edge per
     matched receive from the sender's segment at the send to the
     receiver's segment at the receive.  When the receive is the first thing
     the receiver did after a blocking wait that no task's wakeup ended
     (the network's softirq woke it), the edge enters that segment at its
     start and is recorded as the wait's ending edge (g.in_wake), as a
     wakeup edge is on one host: Algorithm 1 follows it like one.
Invariants: one buffer never goes through here (its graph is unchanged);
g.hosts lists the hosts in buffer order, g.host_edges marks the cross-host
edges; host_of(id) / local_id(id) split a graph id.
"""
import dataclasses
import functools
import ipaddress
import os

import numpy as np

from argus.tracer import schema
from argus.graphbuild import clocksync
from argus.graphbuild.graph import EventGraph, Table, EDGE_MESSAGE, END_BLOCKED, NONE

HOST_SHIFT = 22
LOCAL_MASK = (1 << HOST_SHIFT) - 1
MAX_HOSTS = 1 << (32 - HOST_SHIFT)
WAKE_TASK = 0


def host_of(ident):
    return int(ident) >> HOST_SHIFT


def local_id(ident):
    return int(ident) & LOCAL_MASK


def global_id(host, ident):
    return (int(host) << HOST_SHIFT) | int(ident)


@dataclasses.dataclass
class Host:
    index: int
    name: str
    hostname: str
    boot_id: str
    path: str
    clock: clocksync.Clock = None
    first_ts: int = 0
    last_ts: int = 0


def host_names(entries):
    """Unique display names from [(hostname, boot_id, path)]: the hostname,
    with the boot id's first 8 characters when two hosts share it, with
    the file name when that is not enough or there is no hostname."""
    base = []
    for hostname, boot_id, path in entries:
        base.append(hostname or os.path.basename(path))
    names = list(base)
    for i, n in enumerate(base):
        same = [j for j, m in enumerate(base) if m == n]
        if len(same) > 1:
            bid = entries[i][1][:8]
            names[i] = f"{n}/{bid}" if bid else n
    snap = list(names)
    names = [f"{n}[{os.path.basename(entries[i][2])}]" if snap.count(n) > 1 else n for i, n in enumerate(snap)]
    snap = list(names)
    return [f"{n}#{i}" if snap.count(n) > 1 else n for i, n in enumerate(snap)]


# --- net ops and matching ---

@dataclasses.dataclass
class NetOp:
    host: int
    ts: int            # on its host's clock
    pid: int
    tid: int
    fd: int
    send: bool
    tcp: bool
    local: tuple       # (ip str, port)
    remote: tuple
    seq: object        # int (TCP) or None
    nbytes: int
    # when the call began (its SYSCALL_ENTER; ts when unknown): the clocks
    # bound a send by its start, because its exit (ts) may come after the
    # peer's receive returned on another CPU; a receive by its exit (ts)
    start: int = None

    @property
    def sent_by(self):
        """The latest time the data of a send can have left (its call's start)."""
        return self.ts if self.start is None else self.start


def _ip(a):
    """An address as text: v4-mapped IPv6 as IPv4, zero as ""."""
    if isinstance(a, (bytes, bytearray, np.ndarray)):
        a = bytes(a)
        a = ipaddress.ip_address(a) if len(a) in (4, 16) else a.hex()
    if isinstance(a, str):
        return _ip_text(a)
    return _ip_obj(a)


@functools.lru_cache(maxsize=65536)     # a trace holds few distinct addresses and millions of records
def _ip_text(a):
    return _ip_obj(a)


def _ip_obj(a):
    try:
        ip = ipaddress.ip_address(a) if not isinstance(a, (ipaddress.IPv4Address, ipaddress.IPv6Address)) else a
    except ValueError:
        return str(a)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return "" if ip.is_unspecified else str(ip)


_ENDPOINT = np.dtype([("hi", "<u8"), ("lo", "<u8"), ("port", "<u2")])


def _net_arrays(trace, host):
    """The NET_IO rows of a trace as columns (addresses from the frames side
    array: 4 words, local then remote, 16 bytes each in network order), so
    the many a system-wide trace holds are filtered before any becomes a
    Python object.  A short record whose socket had no full record in the
    decode (tracer/netio.py: unknown tuple) names no connection to match."""
    net = schema.NET_IO
    rows = trace.rows[(trace.rows["type"] == net) & (trace.rows["pad"] != schema.NET_TUPLE_UNKNOWN)]
    if not len(rows):
        return None
    col = lambda name: rows[schema.column(net, name)]     # noqa: E731
    idx = col("local_addr").astype(np.int64)
    frames = np.asarray(trace.frames, dtype=np.uint64)
    ok = (idx >= 0) & (idx + 4 <= len(frames))
    rows, idx = rows[ok], idx[ok]
    col = lambda name: rows[schema.column(net, name)]     # noqa: E731
    words = frames[idx[:, None] + np.arange(4)] if len(idx) else np.zeros((0, 4), np.uint64)
    local = np.zeros(len(rows), _ENDPOINT)
    remote = np.zeros(len(rows), _ENDPOINT)
    local["hi"], local["lo"], local["port"] = words[:, 0], words[:, 1], col("local_port")
    remote["hi"], remote["lo"], remote["port"] = words[:, 2], words[:, 3], col("remote_port")
    return {"host": host, "ts": rows["ts_ns"].astype(np.int64), "start": _call_starts(trace, rows),
            "pid": rows["pid"], "tid": rows["tid"], "fd": col("fd"), "send": col("dir") == schema.NET_SEND, "tcp": col("proto") == 6,
            "seq": col("seq"), "bytes": col("bytes"), "local": local, "remote": remote}


def _call_starts(trace, net_rows):
    """Per NET_IO row, the ts of its thread's latest SYSCALL_ENTER at or
    before it (the call it closes), or its own ts when none is recorded."""
    ts = net_rows["ts_ns"].astype(np.int64)
    out = ts.copy()
    enters = trace.rows[trace.rows["type"] == schema.SYSCALL_ENTER]
    if not len(enters):
        return out
    etid = enters["tid"]
    ets = enters["ts_ns"].astype(np.int64)
    order = np.lexsort((ets, etid))
    etid, ets = etid[order], ets[order]
    for tid in np.unique(net_rows["tid"]).tolist():
        lo, hi = np.searchsorted(etid, tid, "left"), np.searchsorted(etid, tid, "right")
        if lo == hi:
            continue
        sel = np.flatnonzero(net_rows["tid"] == tid)
        k = np.searchsorted(ets[lo:hi], ts[sel], "right") - 1
        found = k >= 0
        out[sel[found]] = ets[lo:hi][k[found]]
    return out


@functools.lru_cache(maxsize=65536)
def _addr_text(hi, lo):
    return _ip(int(hi).to_bytes(8, "little") + int(lo).to_bytes(8, "little"))


def ops_from_arrays(arr, keep):
    """NetOps of the rows of arr (_net_arrays) where keep (all when empty)."""
    if arr is None:
        return []
    sel = np.flatnonzero(keep) if len(keep) else np.arange(len(arr["ts"]))
    out = []
    for i in sel.tolist():
        lo, re = arr["local"][i], arr["remote"][i]
        tcp = bool(arr["tcp"][i])
        out.append(NetOp(host=arr["host"], ts=int(arr["ts"][i]), pid=int(arr["pid"][i]), tid=int(arr["tid"][i]),
                         fd=int(arr["fd"][i]), send=bool(arr["send"][i]), tcp=tcp,
                         local=(_addr_text(lo["hi"], lo["lo"]), int(lo["port"])),
                         remote=(_addr_text(re["hi"], re["lo"]), int(re["port"])),
                         seq=int(arr["seq"][i]) if tcp else None, nbytes=int(arr["bytes"][i]),
                         start=int(arr["start"][i])))
    return out


def relevant_ops(traces):
    """The NetOps of every host that may match one of another host: the
    remote end of a TCP op is some other host's local end; a UDP op's
    remote port is some other host's local port (addresses may be
    wildcards there)."""
    arrs = [_net_arrays(t, k) for k, t in enumerate(traces)]
    ends = {}
    ports = {}
    for k, a in enumerate(arrs):
        if a is None:
            continue
        ends[k] = set(a["local"].tolist())
        ports[k] = set(a["local"]["port"].tolist())
    ops = []
    for k, a in enumerate(arrs):
        if a is None:
            continue
        others = set().union(*(v for h, v in ends.items() if h != k)) if len(ends) > 1 else set()
        oports = set().union(*(v for h, v in ports.items() if h != k)) if len(ports) > 1 else set()
        if not others:
            continue
        remote = a["remote"].tolist()
        keep = np.fromiter(((r in others) if t else (r[2] in oports)
                            for r, t in zip(remote, a["tcp"].tolist())), bool, len(remote))
        ops.extend(ops_from_arrays(a, keep))
    return ops


@functools.lru_cache(maxsize=65536)
def _loopback(ip):
    try:
        return bool(ip) and ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


def match_ops(ops):
    """Matched send -> receive pairs across hosts: (constraints, edges).
    constraints: [(send index, receive index)] for every overlapping pair;
    edges: [(send index, receive index)], one per receive (the send of its
    last byte for TCP)."""
    constraints, edges = [], []
    # only flows whose far end some other host holds can match: drop the
    # rest first (a system-wide trace talks to the world far more than to
    # the other traced hosts)
    locals_of = {}
    for o in ops:
        locals_of.setdefault(o.local, set()).add(o.host)
        locals_of.setdefault(("", o.local[1]), set()).add(o.host)
    ops_idx = [i for i, o in enumerate(ops)
               if (locals_of.get(o.remote, set()) | (set() if o.tcp else locals_of.get(("", o.remote[1]), set())))
               - {o.host}]
    sends = {}
    for i in ops_idx:
        o = ops[i]
        if o.send and not (_loopback(o.local[0]) or _loopback(o.remote[0])):
            sends.setdefault((o.tcp, o.local, o.remote), []).append(i)
    tcp_index = {}
    for key, idx in sends.items():
        if key[0]:
            base = ops[idx[0]].seq or 0
            starts = np.array([((ops[i].seq or 0) - base) % (1 << 32) for i in idx], dtype=np.int64)
            order = np.argsort(starts, kind="stable")
            tcp_index[key] = (base, starts[order], np.array(idx)[order])
    udp_next = {}
    for j in ops_idx:
        o = ops[j]
        if o.send or _loopback(o.local[0]) or _loopback(o.remote[0]):
            continue
        if o.tcp:
            ent = tcp_index.get((True, o.remote, o.local))
            if ent is None or o.seq is None:
                continue
            base, starts, idx = ent
            b = (o.seq - base) % (1 << 32)
            if b >= 1 << 31:
                b -= 1 << 32                      # bytes sent before the first send traced
            e = b + o.nbytes
            # sends starting before the receive's end that end after its start
            k = int(np.searchsorted(starts, e, side="left"))
            last = None
            for m in range(k - 1, -1, -1):
                i = int(idx[m])
                if ops[i].host == o.host:
                    continue
                if starts[m] + ops[i].nbytes > b:
                    constraints.append((i, j))
                    if last is None:
                        last = i
                elif starts[m] + (1 << 20) < b:     # sends are at most a MiB: nothing earlier overlaps
                    break
            if last is not None:
                edges.append((last, j))
        else:
            cands = [key for key in sends if not key[0] and _mirror(key, o)]
            for key in cands:
                idx = sends[key]
                p = udp_next.get(key, 0)
                for q in range(p, min(len(idx), p + 64)):
                    i = idx[q]
                    if ops[i].host != o.host and ops[i].nbytes == o.nbytes:
                        constraints.append((i, j))
                        edges.append((i, j))
                        udp_next[key] = q + 1
                        break
                else:
                    continue
                break
    return constraints, edges


def _mirror(key, recv):
    """A UDP send's (local, remote) mirrors the receive's (zero address: any)."""
    _, sl, sr = key
    return (sl[1] == recv.remote[1] and sr[1] == recv.local[1] and
            (not sl[0] or not recv.remote[0] or sl[0] == recv.remote[0]) and
            (not sr[0] or not recv.local[0] or sr[0] == recv.local[0]))


def clock_pairs(ops, constraints):
    """{(sender host, receiver host): [(t_send, t_recv)]}, each on its own clock."""
    out = {}
    for i, j in constraints:
        s, r = ops[i], ops[j]
        out.setdefault((s.host, r.host), []).append((s.sent_by, r.ts))
    return out


# --- rows ---

_TASK_COLUMNS = {   # row type -> columns that name a task of the recording host
    schema.SWITCH_IN: ("peer_pid", "peer_tid"), schema.WAKEUP: ("peer_pid", "peer_tid"),
    schema.WAKEUP_NEW: ("peer_pid", "peer_tid"), schema.FORK: ("peer_pid", "peer_tid"),
    schema.PROC_SNAPSHOT: ("peer_pid",), schema.TIMER: ("peer_pid", "peer_tid"),
    schema.FILE_LOCK: ("peer_pid",), schema.DETAIL: ("peer_tid",),
}


def _loopback_endpoint(ep):
    """An FD_INFO inet endpoint ((IPv4 << 16) | port) on 127/8."""
    return (ep >> np.uint64(40)) == np.uint64(127)


ACTOR_ONLY_TYPES = (schema.WAKEUP, schema.WAKEUP_NEW, schema.TIMER)


def foreign_actors(rows):
    """Rows whose actor is no task of this host: a WAKEUP or a TIMER fire
    by a task that does nothing else here (no switch, syscall, snapshot,
    name ...).  A buffer limited to a namespace (argus start --netns) holds
    the wakeups of its tasks by tasks outside it, and timers that fired
    while one ran; on separate machines that is the network's softirq or
    an interrupt, and it is made one: no task of the wrong host (a
    phantom) stands for the sender, the cross-host edge does."""
    t = rows["type"]
    own = ~np.isin(t, ACTOR_ONLY_TYPES)
    tids = np.unique(np.concatenate([rows["tid"][own], rows["peer_tid"][t == schema.FORK]]))
    if not len(tids):
        return np.zeros(len(rows), bool)
    return np.isin(t, ACTOR_ONLY_TYPES) & (rows["tid"] != 0) & ~np.isin(rows["tid"], tids)


def remap_rows(rows, host, clock, frames_base=0, strings_base=0):
    """A copy of one host's rows in the merged graph's ids and clock (module doc, 4-5)."""
    rows = rows.copy()
    fw = foreign_actors(rows)
    if fw.any():
        task = fw & np.isin(rows["type"], (schema.WAKEUP, schema.WAKEUP_NEW)) & (rows["reason"] == schema.WAKE_TASK)
        rows["reason"][task] = schema.WAKE_SOFTIRQ
        rows["irq"][task] = schema.IRQ_NET
        rows["pid"][fw] = 0
        rows["tid"][fw] = 0
    h = np.uint32(host << HOST_SHIFT)
    if host:
        for col in ("pid", "tid"):
            nz = rows[col] != 0
            rows[col][nz] |= h
        for t, cols in _TASK_COLUMNS.items():
            sel = rows["type"] == t
            for col in cols:
                nz = sel & (rows[col] != 0)
                rows[col][nz] |= h
        fs = rows["type"] == schema.FUTEX_STATE
        owner = rows["peer_tid"][fs]
        tid = owner & np.uint32(schema.FUTEX_TID_MASK)
        rows["peer_tid"][fs] = np.where(tid != 0, owner | h, owner)
    fi = (rows["type"] == schema.FD_INFO) & (rows["reason"] == 2)      # AF_INET
    for col in ("obj2", "val"):
        v = rows[col][fi].astype(np.uint64)
        lb = _loopback_endpoint(v)
        v[lb] |= np.uint64(host + 1) << np.uint64(56)    # 127.x is never a real endpoint of another host
        rows[col][fi] = v.astype(rows[col].dtype)
    if clock is not None and clock.method not in ("reference", "unsynchronised"):
        rows["ts_ns"] = np.maximum(clock.to_ref(rows["ts_ns"]), 0).astype(np.uint64)
        tm = rows["type"] == schema.TIMER
        if tm.any():
            rows["obj2"][tm] = np.maximum(clock.to_ref(rows["obj2"][tm]), 0).astype(np.uint64)
            mono = tm & np.isin(rows["nr"], (1, 7))      # CLOCK_MONOTONIC, CLOCK_BOOTTIME
            rows["val"][mono] = clock.to_ref(rows["val"][mono].astype(np.int64))
    if frames_base:
        for t in (schema.USER_STACK, schema.KERNEL_STACK, schema.WAIT_SITE):
            sel = rows["type"] == t
            rows["obj"][sel] += np.uint64(frames_base)
        col = schema.column(schema.NET_IO, "local_addr")      # its addresses sit in the frames side array
        sel = rows["type"] == schema.NET_IO
        rows[col][sel] += rows[col].dtype.type(frames_base)
    if strings_base:
        sel = rows["type"] == schema.MAPPING
        rows["peer_tid"][sel] += np.uint32(strings_base)
    return rows


@dataclasses.dataclass
class Merged:
    """What graph building needs of several buffers, like one reader.Trace."""
    path: str
    rows: np.ndarray
    frames: np.ndarray
    strings: bytes
    hosts: list
    ops: list
    edges: list            # [(send op, receive op)]
    first_ts: int
    last_ts: int
    created_ns: int
    created_realtime_ns: int
    records_overwritten: int = 0
    records_lost: int = 0
    switches_unreported: int = 0
    torn_chunks: int = 0
    bad_records: int = 0
    warning: str = ""
    focus: object = None
    window: object = None
    first_window_ts: int = 0
    torn_first_ts: int = 0
    torn_last_ts: int = 0

    @property
    def nrows(self):
        return len(self.rows)

    @property
    def wall_offset_ns(self):
        return int(self.created_realtime_ns) - int(self.created_ns) if self.created_realtime_ns else None

    def wall_ns(self, ts_ns):
        return ts_ns - self.created_ns + self.created_realtime_ns


def merge(traces, paths, ops=None):
    """Merged from decoded reader.Traces (one per host, host 0 the reference);
    ops: the NetOps when already known (default: relevant_ops of the traces)."""
    if len(traces) > MAX_HOSTS:
        raise ValueError(f"at most {MAX_HOSTS} buffers can be merged")
    names = host_names([(t.hostname or "", t.boot_id or "", p) for t, p in zip(traces, paths)])
    if ops is None:
        ops = relevant_ops(traces)
    constraints, edges = match_ops(ops)
    clocks = clocksync.synchronise(len(traces), clock_pairs(ops, constraints))
    hosts, parts, frames, strings = [], [], [], []
    fbase = sbase = 0
    for k, (t, p) in enumerate(zip(traces, paths)):
        clk = clocks[k]
        hosts.append(Host(index=k, name=names[k], hostname=t.hostname or "", boot_id=t.boot_id or "",
                          path=str(p), clock=clk,
                          first_ts=int(clk.to_ref(t.first_ts)) if t.nrows else 0,
                          last_ts=int(clk.to_ref(t.last_ts)) if t.nrows else 0))
        parts.append(remap_rows(t.rows, k, clk, fbase, sbase))
        frames.append(np.asarray(t.frames, dtype=np.uint64))
        strings.append(bytes(t.strings))
        fbase += len(t.frames)
        sbase += len(t.strings)
    rows = np.concatenate(parts) if parts else schema.empty_rows(0)
    rows = rows[np.argsort(rows["ts_ns"], kind="stable")]
    live = [h for h, t in zip(hosts, traces) if t.nrows]
    ref = traces[0]
    return Merged(path=" + ".join(str(p) for p in paths), rows=rows,
                  frames=np.concatenate(frames) if frames else np.zeros(0, np.uint64),
                  strings=b"".join(strings), hosts=hosts, ops=ops, edges=edges,
                  first_ts=min((h.first_ts for h in live), default=0),
                  last_ts=max((h.last_ts for h in live), default=0),
                  created_ns=int(ref.created_ns), created_realtime_ns=int(ref.created_realtime_ns),
                  records_overwritten=sum(int(t.records_overwritten) for t in traces),
                  records_lost=sum(int(t.records_lost) for t in traces),
                  switches_unreported=sum(int(t.switches_unreported) for t in traces),
                  torn_chunks=sum(int(t.torn_chunks) for t in traces),
                  bad_records=sum(int(t.bad_records) for t in traces),
                  warning="; ".join(t.warning for t in traces if t.warning))


# --- cross-host edges ---

def _utid_at(g, tid, ts):
    utids = g.utids_of_tid(tid)
    if not utids:
        return NONE
    th = g.threads
    for u in utids:
        if th.start_ts[u] <= ts and (th.end_ts[u] < 0 or ts <= th.end_ts[u]):
            return u
    return utids[-1]


def add_host_edges(g, merged):
    """g with a MESSAGE edge per matched cross-host receive (module doc, 6);
    g.hosts and g.host_edges set."""
    ops = merged.ops
    clocks = [h.clock for h in merged.hosts]
    new = {k: [] for k in g.edges.names}
    seen = set()
    wake_of = {}
    seg = g.seg
    for i, j in merged.edges:
        s, r = ops[i], ops[j]
        su = _utid_at(g, global_id(s.host, s.tid) if s.host else s.tid, int(clocks[s.host].to_ref(s.ts)))
        ru = _utid_at(g, global_id(r.host, r.tid) if r.host else r.tid, int(clocks[r.host].to_ref(r.ts)))
        if su == NONE or ru == NONE:
            continue
        sts, rts = int(clocks[s.host].to_ref(s.ts)), int(clocks[r.host].to_ref(r.ts))
        src, dst = g.segment_at(su, sts), g.segment_at(ru, rts)
        if src == NONE or dst == NONE or src == dst or (src, dst) in seen:
            continue
        seen.add((src, dst))
        ts = max(rts, sts)
        prev = dst - 1
        ends_wait = (prev >= 0 and int(seg.utid[prev]) == ru and int(seg.end_kind[prev]) == END_BLOCKED
                     and g.in_wake[dst] < 0 and dst not in wake_of)
        if ends_wait:
            ts = int(seg.start[dst])
        if sts > ts and ts >= int(seg.start[src]):
            sts = ts          # the clocks' residual error put the send after the wake it caused
        row = dict(src=src, dst=dst, type=EDGE_MESSAGE, weak=False, ts=ts, src_ts=sts, row=-1, ctx=WAKE_TASK,
                   obj=r.fd, wait_ns=0, owner_kind=0)
        for k in new:
            new[k].append(row.get(k, 0))
        if ends_wait:
            wake_of[dst] = len(new["src"]) - 1
    old = g.edges.columns()
    n_old = len(g.edges)
    cols = {k: np.concatenate([old[k], np.asarray(new[k], dtype=old[k].dtype)]) for k in old}
    order = np.lexsort((cols["src"], cols["type"], cols["ts"]))
    cols = {k: v[order] for k, v in cols.items()}
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    out = EventGraph(rows=g.rows, trace_start=g.trace_start, trace_end=g.trace_end, threads=g.threads,
                     processes=g.processes, seg=g.seg, thread_rows=g.thread_rows, thread_rows_ptr=g.thread_rows_ptr,
                     edges=Table(**cols), running=g.running, runnable=g.runnable, yields=g.yields, flags=g.flags,
                     stats=g.stats, roles=g.roles, frames=g.frames, strings=g.strings)
    host_edges = np.zeros(len(order), bool)
    host_edges[rank[n_old:]] = True
    for dst, k in wake_of.items():
        out.in_wake[dst] = rank[n_old + k]
    out.host_edges = host_edges
    out.hosts = merged.hosts
    out.stats["host_edges"] = int(host_edges.sum())
    return out


def traced_endpoints(g):
    """FD_INFO inet endpoints that some traced process holds as its local end."""
    r = g.rows
    fi = (r["type"] == schema.FD_INFO) & (r["state"] == schema.FD_SOCKET)
    return set(r["obj2"][fi].astype(np.uint64).tolist())


def endpoint_text(ep):
    """An FD_INFO inet endpoint as address:port (IPv6 ones are folded: a hash)."""
    ep = int(ep)
    port = ep & 0xFFFF
    addr = ep >> 16
    if ep >> 63:
        return f"[ipv6 #{addr & ((1 << 47) - 1):x}]:{port}"
    return f"{ipaddress.IPv4Address(addr & 0xFFFFFFFF)}:{port}"
