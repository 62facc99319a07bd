"""End to end: NET_IO records let a send be matched to its receive (issue 27, connection identity).

A TCP client and server over loopback (send, sendmsg, write; recv, recv_into
with MSG_PEEK first, recvmsg, read), a UDP pair (a connected client, an
unconnected server answering with sendto), a TCP pair over ::1 and an IPv4
client of a dual-stack (AF_INET6) server run under argusd.  Every send the
trace holds is found on the other end: the receives with the mirrored
4-tuple cover exactly its sequence range (TCP), or the receive of the same
size comes in the same order (UDP).  The workload says which ports and fds
it used, so the records are checked against the truth, not against each
other only.
"""
import collections

from argus.tracer import netio, reader, schema
from conftest import require_tracing
from support.children import run_python_json

WORKLOAD = r"""
import json, os, socket
SIZES = [1, 100, 1500, 5000, 70000, 3]
out = {"pid": os.getpid()}

srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.bind(("127.0.0.1", 0)); srv.listen(1)
cli = socket.create_connection(srv.getsockname())
conn, _ = srv.accept()
sent = bytearray()
for i, n in enumerate(SIZES):
    data = bytes([i + 1]) * n
    if i % 3 == 0:
        cli.sendall(data)
    elif i % 3 == 1:
        assert cli.sendmsg([data[:n // 2], data[n // 2:]]) == n
    else:
        os.write(cli.fileno(), data)      # a short write is finished by the loop below
    got = bytearray()
    while len(got) < n:
        k = i % 4
        if k == 0:
            conn.recv(1, socket.MSG_PEEK)     # a peek moves nothing: no record
            got += conn.recv(n - len(got))
        elif k == 1:
            buf = bytearray(n - len(got)); m = conn.recv_into(buf); got += buf[:m]
        elif k == 2:
            got += conn.recvmsg(n - len(got))[0]
        else:
            got += os.read(conn.fileno(), n - len(got))
    assert got == data
    conn.sendall(b"ok" * (i + 1))         # the other direction
    back = b""
    while len(back) < 2 * (i + 1):
        back += cli.recv(64)
out["tcp"] = {"client": [cli.fileno(), cli.getsockname()[1]], "server": [conn.fileno(), srv.getsockname()[1]]}

us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); us.bind(("127.0.0.1", 0))
uc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); uc.connect(us.getsockname())
for n in (10, 700, 1400, 20):
    uc.send(b"u" * n)
    data, peer = us.recvfrom(4096)
    us.sendto(data[: n // 2 + 1], peer)
    assert len(uc.recv(4096)) == n // 2 + 1
out["udp"] = {"client": [uc.fileno(), uc.getsockname()[1]], "server": [us.fileno(), us.getsockname()[1]]}

def pair(family, bind, connect):
    s = socket.socket(family, socket.SOCK_STREAM); s.bind((bind, 0)); s.listen(1)
    c = socket.create_connection((connect, s.getsockname()[1])); a, _ = s.accept()
    c.sendall(b"v" * 300); got = b""
    while len(got) < 300:
        got += a.recv(300)
    a.sendall(b"w" * 40); assert len(c.recv(64)) == 40
    return [c.fileno(), c.getsockname()[1], a.fileno(), s.getsockname()[1]]
try:
    out["v6"] = pair(socket.AF_INET6, "::1", "::1")
except OSError:
    out["v6"] = None                           # no IPv6 loopback here
out["dual"] = pair(socket.AF_INET6, "::", "127.0.0.1")   # an IPv4 client of a dual-stack server
print(json.dumps(out))
"""


# Request / response on one connection, as a client and a server do (redis):
# most calls continue their thread's chain, so their NET_IO rows are implied
# (schema v6: rebuilt by the reader from the syscall rows).
PINGPONG = r"""
import json, os, socket
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.bind(("127.0.0.1", 0)); srv.listen(1)
cli = socket.create_connection(srv.getsockname())
conn, _ = srv.accept()
for i in range(3000):
    n = 1 + i % 200
    cli.sendall(b"q" * n)
    got = b""
    while len(got) < n:
        got += conn.recv(n - len(got)) if i % 2 else os.read(conn.fileno(), n - len(got))
    conn.sendall(b"r" * (n + 7))
    back = b""
    while len(back) < n + 7:
        back += cli.recv(4096)
print(json.dumps({"pid": os.getpid(), "fds": [cli.fileno(), conn.fileno()]}))
"""


def traced_workload(runner, workload=WORKLOAD, env=None):
    runner.env.update(env or {})
    runner.run("start", "--buffer", runner.buffer, "--size", "256M", "--force")
    try:
        info = run_python_json(workload, timeout=120)
        runner.wait_drained()
    finally:
        runner.stop()
    trace = reader.decode_file(runner.buffer, strict=False)
    rows = [r for r in netio.net_io_rows(trace) if r.pid == info["pid"]]
    # each NET_IO follows its call's exit, with the exit's thread and ts
    exits = trace.rows[(trace.rows["type"] == schema.SYSCALL_EXIT) & (trace.rows["pid"] == info["pid"])]
    assert {(r.tid, r.ts_ns) for r in rows} <= set(zip(exits["tid"].tolist(), exits["ts_ns"].tolist()))
    return info, rows, trace


def covered(send, recvs):
    """Whether the receives' [seq, seq + bytes) ranges tile the send's range exactly."""
    want, end = send.seq, (send.seq + send.bytes) % (1 << 32)
    for r in sorted(recvs, key=lambda r: r.ts_ns):
        lo, hi = r.seq, (r.seq + r.bytes) % (1 << 32)
        if lo == want or (lo - want) % (1 << 32) > (1 << 31) > (hi - want) % (1 << 32) > 0:
            want = hi                      # starts at (or straddles) the next byte wanted
        if want == end:
            return True
    return False


def stream_covered(sends, recvs):
    """One writer, one reader: the receives, in order, are contiguous and
    hold exactly the sends' byte range (each send covered, in one pass)."""
    recvs = sorted(recvs, key=lambda r: r.ts_ns)
    assert recvs and recvs[0].seq == sends[0].seq
    assert all((a.seq + a.bytes) % (1 << 32) == b.seq for a, b in zip(recvs, recvs[1:]))
    assert sum(r.bytes for r in recvs) == sum(r.bytes for r in sends)


def test_tcp_and_udp_sends_match_their_receives(argus_cli):
    require_tracing()
    info, rows, trace = traced_workload(argus_cli)
    assert trace.net_io_implied > 0           # schema v6: rows rebuilt from the calls' syscall rows
    by_key = collections.defaultdict(list)
    for r in rows:
        by_key[(r.key(), r.dir)].append(r)

    (c_fd, c_port), (s_fd, s_port) = info["tcp"]["client"], info["tcp"]["server"]
    tcp = [r for r in rows if r.proto == "tcp" and r.fd in (c_fd, s_fd)]     # the first pair's (all stay open)
    assert {(r.fd, r.local, r.remote) for r in tcp} == {
        (c_fd, ("127.0.0.1", c_port), ("127.0.0.1", s_port)), (s_fd, ("127.0.0.1", s_port), ("127.0.0.1", c_port))}
    sends = [r for r in tcp if r.dir == "send"]
    assert sum(r.bytes for r in sends if r.fd == c_fd) == 1 + 100 + 1500 + 5000 + 70000 + 3
    assert sum(r.bytes for r in sends if r.fd == s_fd) == 2 * sum(range(1, 7))
    for s in sends:
        recvs = by_key[(s.peer_key(), "recv")]
        assert covered(s, recvs), (s, recvs)
    # the receives hold exactly the bytes sent: the peeks left none behind
    for fd in (c_fd, s_fd):
        peer_fd = s_fd if fd == c_fd else c_fd
        assert sum(r.bytes for r in sends if r.fd == fd) == sum(
            r.bytes for r in tcp if r.dir == "recv" and r.fd == peer_fd)
    # one writer: each send starts where the last one ended
    for fd in (c_fd, s_fd):
        mine = [r for r in sends if r.fd == fd]
        assert all((a.seq + a.bytes) % (1 << 32) == b.seq for a, b in zip(mine, mine[1:]))

    (uc_fd, uc_port), (us_fd, us_port) = info["udp"]["client"], info["udp"]["server"]
    udp = [r for r in rows if r.proto == "udp"]
    client, server = ("127.0.0.1", uc_port), ("127.0.0.1", us_port)
    assert all(r.seq is None for r in udp)
    for fd, local, remote in ((uc_fd, client, server), (us_fd, server, client)):
        mine = [r for r in udp if r.fd == fd]
        assert mine and all(r.local == local and r.remote == remote for r in mine), mine
    for s_key in ((("udp", client, server), "send"), (("udp", server, client), "send")):
        sends = by_key[s_key]
        recvs = by_key[((s_key[0][0], s_key[0][2], s_key[0][1]), "recv")]
        assert [r.bytes for r in sends] == [r.bytes for r in recvs] != []
    assert [r.bytes for r in by_key[(("udp", client, server), "send")]] == [10, 700, 1400, 20]

    # IPv6 in full, and an IPv4 client of an AF_INET6 server: both ends see 127.0.0.1
    for name, host in (("v6", "::1"), ("dual", "127.0.0.1")):
        if info[name] is None:
            continue
        c_fd, c_port, a_fd, a_port = info[name]
        c_end, a_end = (host, c_port), (host, a_port)
        flows = {(r.fd, r.dir): r for r in rows if r.local in (c_end, a_end) and r.remote in (c_end, a_end)}
        send, recv = flows[(c_fd, "send")], flows[(a_fd, "recv")]
        assert (send.local, send.remote, recv.local, recv.remote) == (c_end, a_end, a_end, c_end), name
        assert (send.seq, send.bytes, recv.seq, recv.bytes) == (recv.seq, 300, send.seq, 300), name
        assert flows[(a_fd, "send")].seq == flows[(c_fd, "recv")].seq, name


def test_rebuilt_rows_equal_the_records_they_stand_for(argus_cli):
    """The test hook ARGUS_NET_IO_VERIFY=1 makes the tracer write the short
    record of every call it implies too: the reader rebuilds each such row
    without it and compares (tracer/netio.py).  Then a request / response
    loop where most rows are implied, checked against the truth as above."""
    require_tracing()
    info, rows, trace = traced_workload(argus_cli, PINGPONG, env={"ARGUS_NET_IO_VERIFY": "1"})
    check = trace.net_io_check
    assert check.verified > 1000 and check.mismatched == 0 and check.unresolved == 0, check
    cli_fd, conn_fd = info["fds"]
    want = {cli_fd: sum(1 + i % 200 for i in range(3000)), conn_fd: sum(8 + i % 200 for i in range(3000))}
    by_key = collections.defaultdict(list)
    for r in rows:
        by_key[(r.key(), r.dir)].append(r)
    for fd, total in want.items():
        sends = [r for r in rows if r.fd == fd and r.dir == "send"]
        assert sum(r.bytes for r in sends) == total
        assert all((a.seq + a.bytes) % (1 << 32) == b.seq for a, b in zip(sends, sends[1:]))
        stream_covered(sends, by_key[(sends[0].peer_key(), "recv")])


def test_implied_rows_without_the_hook(argus_cli):
    """The same loop as the tracer runs by default: most rows implied, and
    every send still covered by its receives."""
    require_tracing()
    info, rows, trace = traced_workload(argus_cli, PINGPONG)
    assert trace.net_io_implied > len(rows) // 2, (trace.net_io_implied, len(rows))
    by_key = collections.defaultdict(list)
    for r in rows:
        by_key[(r.key(), r.dir)].append(r)
    for fd in info["fds"]:
        sends = [r for r in rows if r.fd == fd and r.dir == "send"]
        assert len(sends) >= 3000
        assert all((a.seq + a.bytes) % (1 << 32) == b.seq for a, b in zip(sends, sends[1:]))
        stream_covered(sends, by_key[(sends[0].peer_key(), "recv")])


# More connections than the tracer's per-CPU TCP slots (NET_IO_SLOTS, 256 in
# kext/linux/net_io.bpf.h), served round robin as a busy server serves them:
# sockets take each other's slots, so calls are decided from the slot, from
# net_io_seen after an eviction (with the evicted chains written back), and
# again from a refilled slot.
MANY = r"""
import json, os, socket
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.bind(("127.0.0.1", 0)); srv.listen(512)
pairs = []
for _ in range(300):
    c = socket.create_connection(srv.getsockname()); a, _ = srv.accept(); pairs.append((c, a))
for i in range(12):
    for j, (c, a) in enumerate(pairs):
        n = 1 + (i * 7 + j) % 90
        c.sendall(b"m" * n)
        got = b""
        while len(got) < n:
            got += a.recv(n - len(got))
        a.sendall(b"n" * (n + 3))
        back = b""
        while len(back) < n + 3:
            back += c.recv(4096)
print(json.dumps({"pid": os.getpid(), "fds": [[c.fileno(), a.fileno()] for c, a in pairs]}))
"""


def test_rebuilt_rows_with_more_sockets_than_slots(argus_cli):
    """ARGUS_NET_IO_VERIFY=1 over the round robin: every implied row the
    reader rebuilds equals the record written beside it, and every send is
    covered by its receives."""
    require_tracing()
    info, rows, trace = traced_workload(argus_cli, MANY, env={"ARGUS_NET_IO_VERIFY": "1"})
    check = trace.net_io_check
    assert check.verified > 1000 and check.mismatched == 0 and check.unresolved == 0, check
    by_key = collections.defaultdict(list)
    for r in rows:
        by_key[(r.key(), r.dir)].append(r)
    for j, (c_fd, a_fd) in enumerate(info["fds"]):
        for fd, extra in ((c_fd, 0), (a_fd, 3)):
            sends = [r for r in rows if r.fd == fd and r.dir == "send"]
            assert sum(r.bytes for r in sends) == sum(1 + (i * 7 + j) % 90 + extra for i in range(12)), (fd, sends)
            assert all((a.seq + a.bytes) % (1 << 32) == b.seq for a, b in zip(sends, sends[1:]))
            stream_covered(sends, by_key[(sends[0].peer_key(), "recv")])
