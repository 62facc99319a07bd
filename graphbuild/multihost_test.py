"""Merging several hosts' traces: names, send/receive matching, ids and
clocks, cross-host edges (crafted traces; the real ones: tests/test_multi_host.py)."""
import types

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.graphbuild import multihost as MH
from argus.graphbuild import build_graph
from support.crafted import Trace, ms

C, S = ("10.0.12.1", 40000), ("10.0.12.2", 8080)


def op(host, ts, send, local, remote, seq=None, n=100, tcp=True, tid=100):
    return MH.NetOp(host=host, ts=ts, pid=tid, tid=tid, fd=5, send=send, tcp=tcp, local=local, remote=remote,
                    seq=seq, nbytes=n)


def test_names_from_headers_made_unique():
    assert MH.host_names([("web", "aaaa1111", "/x/a.argus"), ("db", "bbbb", "/x/b.argus")]) == ["web", "db"]
    assert MH.host_names([("web", "aaaa1111x", "a"), ("web", "bbbb2222y", "b")]) == ["web/aaaa1111", "web/bbbb2222"]
    assert MH.host_names([("", "", "/x/a.argus"), ("web", "", "/y/b.argus")]) == ["a.argus", "web"]
    assert MH.host_names([("web", "", "/x/a.argus"), ("web", "", "/y/b.argus")]) == ["web[a.argus]", "web[b.argus]"]


def test_tcp_pairs_mirror_the_4_tuple_and_overlap_in_sequence():
    base = (1 << 32) - 150           # the flow's sequence numbers wrap inside the trace
    ops = [op(0, 10, True, C, S, seq=base, n=100),            # 0: bytes base .. base+100
           op(0, 20, True, C, S, seq=base + 100, n=100),      # 1: wraps past 2^32
           op(1, 30, False, S, C, seq=base, n=150),           # 2: reads all of 0 and half of 1
           op(1, 40, False, S, C, seq=(base + 150) % (1 << 32), n=50),   # 3: the rest of 1
           op(1, 50, False, S, ("10.0.12.9", 40000), seq=base, n=10),   # 4: another peer
           op(0, 60, False, C, S, seq=base, n=10)]                      # 5: the other direction: no send
    constraints, edges = MH.match_ops(ops)
    assert sorted(constraints) == [(0, 2), (1, 2), (1, 3)]
    assert sorted(edges) == [(1, 2), (1, 3)]          # each receive from the send of its last byte


def test_loopback_and_same_host_never_pair():
    lo_c, lo_s = ("127.0.0.1", 40000), ("127.0.0.1", 8080)
    ops = [op(0, 10, True, lo_c, lo_s, seq=1), op(1, 20, False, lo_s, lo_c, seq=1),
           op(0, 10, True, C, S, seq=1), op(0, 20, False, S, C, seq=1)]
    assert MH.match_ops(ops) == ([], [])


def test_udp_by_size_and_order_with_a_wildcard_local_address():
    srv_any = ("", 53)
    ops = [op(0, 10, True, C, ("10.0.12.2", 53), n=40, tcp=False),
           op(0, 11, True, C, ("10.0.12.2", 53), n=60, tcp=False),   # lost on the way
           op(0, 12, True, C, ("10.0.12.2", 53), n=40, tcp=False),
           op(1, 20, False, srv_any, C, n=40, tcp=False),
           op(1, 25, False, srv_any, C, n=40, tcp=False)]
    _, edges = MH.match_ops(ops)
    assert edges == [(0, 3), (2, 4)]


def _client_server(client_wake_ctx="softirq"):
    """host 0: a client blocks reading fd 5 from 1 ms and wakes at 10 ms
    (the network: softirq); host 1 (tids 100.. too): the server works
    1..9.9 ms and sends the reply at 9.9 ms."""
    a = Trace()
    a.thread(100, 100, "client")
    a.run(100, ms(0))
    a.syscall(100, ms(0.5), "write", obj=5, ret=10)
    a.block(100, ms(1), "read", "read", obj=5)
    a.wake(0, 100, ms(10), context=client_wake_ctx, irq="net")
    a.run(100, ms(10), ret=100)
    a.syscall(100, ms(10.1), "write", obj=1, ret=1)
    b = Trace()
    b.thread(100, 100, "server")
    b.run(100, ms(0))
    b.block(100, ms(0.2), "read", "read", obj=7)
    b.wake(0, 100, ms(0.6), context="softirq", irq="net")
    b.run(100, ms(0.6), ret=10)
    b.busy(100, ms(0.6), ms(9.9))
    b.syscall(100, ms(9.9), "write", obj=7, ret=100)
    b.block(100, ms(9.95), "read", "read", obj=7)

    def tr(t, host):
        rows = t.rows()
        return types.SimpleNamespace(rows=rows, nrows=len(rows), frames=np.zeros(0, np.uint64), strings=b"",
                                     first_ts=int(rows["ts_ns"][0]), last_ts=int(rows["ts_ns"][-1]),
                                     created_ns=0, created_realtime_ns=0, records_overwritten=0, records_lost=0,
                                     switches_unreported=0, torn_chunks=0, bad_records=0, warning="", hostname=host, boot_id="")
    ops = [op(0, ms(0.5), True, C, S, seq=1000, n=10), op(1, ms(0.6), False, S, C, seq=1000, n=10),
           op(1, ms(9.9), True, S, C, seq=5000, n=100), op(0, ms(10), False, C, S, seq=5000, n=100)]
    return [tr(a, "client-host"), tr(b, "server-host")], ops


def test_merged_ids_keep_hosts_apart_and_a_reply_ends_the_wait():
    traces, ops = _client_server()
    m = MH.merge(traces, ["a", "b"], ops=ops)
    assert [h.name for h in m.hosts] == ["client-host", "server-host"]
    assert set(np.unique(m.rows["tid"]).tolist()) - {0} == {100, MH.global_id(1, 100)}
    g = MH.add_host_edges(build_graph(m.rows), m)
    assert g.stats["host_edges"] == 2
    client = g.utid_of_tid(100)
    server = g.utid_of_tid(MH.global_id(1, 100))
    v = g.segment_at(client, ms(5))                      # the client's wait
    n = g.next_segment(v)
    e = int(g.in_wake[n])
    assert e >= 0 and g.edges.type[e] == G.EDGE_MESSAGE and g.host_edges[e]
    assert int(g.seg.utid[g.edges.src[e]]) == server
    assert g.edges.ts[e] == g.seg.start[n]


def test_a_task_wakeup_from_outside_the_namespace_becomes_the_network():
    traces, ops = _client_server(client_wake_ctx="task")
    rows = traces[0].rows
    w = rows["type"] == schema.WAKEUP
    rows["tid"][w] = 4242                 # the sender, in another namespace of the same kernel
    rows["pid"][w] = 4242
    m = MH.merge(traces, ["a", "b"], ops=ops)
    assert not np.isin(m.rows["tid"], (4242, MH.global_id(0, 4242))).any()
    g = MH.add_host_edges(build_graph(m.rows), m)
    v = g.segment_at(g.utid_of_tid(100), ms(5))
    e = int(g.in_wake[g.next_segment(v)])
    assert g.host_edges[e]


def test_loopback_endpoints_of_two_hosts_differ():
    ep = (0x7F000001 << 16) | 6379
    rows = schema.empty_rows(1)
    rows["type"] = schema.FD_INFO
    rows["reason"] = 2
    rows["obj2"] = ep
    a = MH.remap_rows(rows, 0, None)
    b = MH.remap_rows(rows, 1, None)
    assert int(a["obj2"][0]) != int(b["obj2"][0])
    assert MH.endpoint_text(a["obj2"][0]) == "127.0.0.1:6379"


def test_clock_moves_every_timestamp_to_the_reference():
    from argus.graphbuild.clocksync import Clock
    rows = schema.empty_rows(2)
    rows["ts_ns"] = [1_000, 2_000_000_000]
    rows["type"] = [schema.SWITCH_IN, schema.TIMER]
    rows["obj2"][1] = 1_500_000_000
    rows["nr"][1] = 1
    rows["val"][1] = 2_000_000_000
    clk = Clock(c=-500.0, d=1000.0, anchor=0, method="convex-hull")    # 1 ppm
    out = MH.remap_rows(rows, 1, clk)
    assert out["ts_ns"].tolist() == [500, 2_000_000_000 - 500 + 2000]
    assert int(out["obj2"][1]) == 1_500_000_000 - 500 + 1500
    assert int(out["val"][1]) == 2_000_000_000 - 500 + 2000


def test_a_send_bounds_the_clocks_by_its_calls_start():
    """A send's exit can come after the peer's receive returned on another
    CPU: the clocks take the send's SYSCALL_ENTER (tests/test_multi_host.py
    saw the truth fall 0.5 us outside the bounds with exit times)."""
    rows = np.zeros(4, schema.ROW_DTYPE)
    rows["type"] = [schema.SYSCALL_ENTER, schema.SYSCALL_ENTER, schema.SYSCALL_ENTER, schema.NET_IO]
    rows["tid"] = [100, 200, 100, 100]
    rows["ts_ns"] = [ms(1), ms(4), ms(5), ms(9)]
    net = rows[rows["type"] == schema.NET_IO]
    assert MH._call_starts(types.SimpleNamespace(rows=rows), net).tolist() == [ms(5)]
    send = MH.NetOp(0, ms(9), 100, 100, 5, True, True, C, S, 1000, 10, start=ms(5))
    recv = op(1, ms(8), False, S, C, seq=1000, n=10)
    assert MH.clock_pairs([send, recv], [(0, 1)]) == {(0, 1): [(ms(5), ms(8))]}
    alone = op(0, ms(9), True, C, S, seq=1000, n=10)          # no enter recorded: its exit
    assert MH.clock_pairs([alone, recv], [(0, 1)]) == {(0, 1): [(ms(9), ms(8))]}
