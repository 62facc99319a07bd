"""Splitting heuristics, message / timer edges and gap marks of the C core on
crafted sequences, with the exact vertices and edges expected."""
import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.graphbuild import summary
from support.crafted import Trace, ms, nr_of


def vertices(g, tid):
    u = g.utid_of_tid(tid)
    return [(int(g.seg.start[v]), int(g.seg.end[v]), G.START_KIND_NAMES[int(g.seg.start_kind[v])],
             G.END_KIND_NAMES[int(g.seg.end_kind[v])], G.SPLIT_NAMES[int(g.seg.split_kind[v])])
            for v in g.thread_segments(u)]


def edges(g):
    """(type, src tid, src start, dst tid, dst start, weak, ts) in table order."""
    e = g.edges
    return [(G.EDGE_TYPE_NAMES[int(e.type[k])], int(g.seg.tid[e.src[k]]), int(g.seg.start[e.src[k]]),
             int(g.seg.tid[e.dst[k]]), int(g.seg.start[e.dst[k]]), bool(e.weak[k]), int(e.ts[k]))
            for k in range(len(e))]


def exit_row(t, tid, at, name, ret):
    t.row(at, tid, schema.SYSCALL_EXIT, nr=nr_of(name), val=ret)


def test_event_loop_returns_split_even_without_blocking():
    t = Trace()
    t.thread(10, 10, "loop")
    t.thread(20, 20, "waker")
    t.run(10, 0)
    t.run(20, 0)
    t.syscall(10, ms(1), "poll", obj=3, ret=0)            # returns at once: a new iteration
    t.syscall(10, ms(2), "epoll_wait", obj=4, ret=1)
    t.syscall(10, ms(2.5), "poll", obj=3, ret=-4)         # EINTR: no iteration
    t.block(10, ms(3), "poll", "epoll_wait", obj=4)       # blocks: the blocking-wait criterion
    t.wake(20, 10, ms(5))
    t.run(10, ms(6), ret=1)                               # its return does not split again
    g = t.build(trace_end=ms(10))
    assert vertices(g, 10) == [
        (0, ms(1), "trace_start", "split", "none"),
        (ms(1), ms(2), "split", "split", "event_loop"),
        (ms(2), ms(3), "split", "blocked", "event_loop"),
        (ms(5), ms(10), "wakeup", "trace_end", "none")]
    assert edges(g) == [
        ("program_order", 10, 0, 10, ms(1), True, ms(1)),
        ("program_order", 10, ms(1), 10, ms(2), True, ms(2)),
        ("program_order", 10, ms(2), 10, ms(5), False, ms(5)),
        ("wakeup", 20, 0, 10, ms(5), False, ms(5))]
    assert g.stats["splits"] == {"blocking_wait": 1, "event_loop": 2, "peer_change": 0, "batch": 0,
                                 "callback": 0, "input": 0, "goroutine": 0}
    v1 = g.thread_segments(g.utid_of_tid(10))[1]
    first = g.rows[g.segment_rows(v1)[0]]
    assert first["type"] == schema.SYSCALL_EXIT and first["nr"] == nr_of("poll")   # the return opens it
    assert int(g.seg.cpu_ns[v1]) == ms(1)
    assert build_no_splits(t, ms(10)) == [(0, ms(3), "trace_start", "blocked", "none"),
                                          (ms(5), ms(10), "wakeup", "trace_end", "none")]


def build_no_splits(t, end):
    g = t.build(trace_end=end, splits=False)
    return vertices(g, 10)


def test_peer_change_splits_between_two_peer_processes():
    t = Trace()
    t.thread(10, 10, "proxy")
    t.thread(20, 20, "A")
    t.thread(30, 30, "B")
    for tid in (10, 20, 30):
        t.run(tid, 0)
    t.block(30, ms(0.5), "read", "read", obj=4)           # B waits on its end (fd 4)
    t.block(10, ms(1), "read", "read", obj=5)             # the proxy waits for A (fd 5)
    t.syscall(20, ms(2), "write", obj=3)                  # A sends: learns (10, 5) <-> (20, 3)
    t.wake(20, 10, ms(2))
    exit_row(t, 20, ms(2), "write", 4)
    t.run(10, ms(3), ret=4)
    t.syscall(10, ms(4), "write", obj=6)                  # to B: (10, 6) <-> (30, 4) learned here
    t.wake(10, 30, ms(4))
    exit_row(t, 10, ms(4), "write", 4)
    t.run(30, ms(5), ret=4)
    t.syscall(10, ms(6), "read", obj=5, ret=4)            # peer A (the previous op's peer was unknown)
    t.syscall(10, ms(7), "write", obj=6, ret=4)           # peer B: {A} and {B} do not overlap -> split
    t.block(10, ms(8), "read", "read", obj=5)             # peer A again -> split at the wait's entry
    g = t.build(trace_end=ms(10))
    assert vertices(g, 10) == [
        (0, ms(1), "trace_start", "blocked", "none"),
        (ms(2), ms(7), "wakeup", "split", "none"),
        (ms(7), ms(8), "split", "split", "peer_change"),
        (ms(8), ms(8), "split", "blocked", "peer_change")]
    assert edges(g) == [
        ("program_order", 10, 0, 10, ms(2), False, ms(2)),
        ("wakeup", 20, 0, 10, ms(2), False, ms(2)),
        ("program_order", 30, 0, 30, ms(4), False, ms(4)),
        ("wakeup", 10, ms(2), 30, ms(4), False, ms(4)),
        ("program_order", 10, ms(2), 10, ms(7), True, ms(7)),
        ("program_order", 10, ms(7), 10, ms(8), True, ms(8))]
    assert g.stats["splits"]["peer_change"] == 2 and g.stats["learned_channels"] == 2
    weak = [x for x in edges(g) if x[5]]
    assert weak == [("program_order", 10, ms(2), 10, ms(7), True, ms(7)),
                    ("program_order", 10, ms(7), 10, ms(8), True, ms(8))]


def batch_trace():
    """Server 10 (fd 5) and client 20 (fd 3) on one socket.  The client's
    second request arrives while the server is still replying to the first."""
    t = Trace()
    t.thread(10, 10, "server")
    t.thread(20, 20, "client")
    t.run(10, 0)
    t.run(20, 0)
    t.block(10, ms(1), "read", "read", obj=5)
    t.syscall(20, ms(2), "write", obj=3)                  # request 1 wakes the server
    t.wake(20, 10, ms(2))
    exit_row(t, 20, ms(2), "write", 4)
    t.block(20, ms(2.5), "read", "read", obj=3)
    t.run(10, ms(3), ret=4)
    t.syscall(10, ms(4), "write", obj=5)                  # reply 1 wakes the client
    t.wake(10, 20, ms(4))
    exit_row(t, 10, ms(4), "write", 4)
    t.run(20, ms(4.5), ret=4)
    t.syscall(20, ms(5), "write", obj=3, ret=4)           # request 2: the server is running, no wakeup
    t.syscall(10, ms(6), "read", obj=5, ret=4)            # reply then receive back to back -> batch split
    t.block(10, ms(7), "read", "read", obj=5)
    return t


def test_batch_split_and_message_matched_without_wakeup():
    g = batch_trace().build(trace_end=ms(10))
    assert vertices(g, 10) == [
        (0, ms(1), "trace_start", "blocked", "none"),
        (ms(2), ms(6), "wakeup", "split", "none"),
        (ms(6), ms(7), "split", "blocked", "batch")]
    assert vertices(g, 20) == [
        (0, ms(2.5), "trace_start", "blocked", "none"),
        (ms(4), ms(10), "wakeup", "trace_end", "none")]
    assert edges(g) == [
        ("program_order", 10, 0, 10, ms(2), False, ms(2)),
        ("wakeup", 20, 0, 10, ms(2), False, ms(2)),
        ("program_order", 20, 0, 20, ms(4), False, ms(4)),
        ("wakeup", 10, ms(2), 20, ms(4), False, ms(4)),
        ("program_order", 10, ms(2), 10, ms(6), True, ms(6)),
        ("message", 20, ms(4), 10, ms(6), False, ms(6))]
    m = [k for k in range(g.num_edges) if g.edges.type[k] == G.EDGE_MESSAGE][0]
    assert int(g.edges.src_ts[m]) == ms(5) and int(g.edges.obj[m]) == 5
    assert g.stats["splits"]["batch"] == 1 and g.stats["message_edges"] == 1


def test_a_receive_that_blocked_gets_the_wakeup_edge_not_a_message_edge():
    g = batch_trace().build(trace_end=ms(10))
    # request 1 was delivered by a wakeup: no message edge duplicates it
    assert [x for x in edges(g) if x[0] == "message" and x[4] == ms(2)] == []


def test_io_uring_submit_and_wait_and_mmsg_pairs_are_batches():
    t = Trace()
    t.thread(10, 10, "ring")
    t.run(10, 0)
    t.syscall(10, ms(1), "io_uring_enter", aux=1, obj=7, obj2=4, ret=4)   # submit 4, reap >= 1: split
    t.syscall(10, ms(2), "io_uring_enter", aux=1, obj=7, obj2=0, ret=1)   # wait only: no split
    t.syscall(10, ms(3), "sendmmsg", obj=5, ret=2)
    t.syscall(10, ms(4), "recvmmsg", obj=5, ret=3)                        # replies then requests: split
    t.syscall(10, ms(5), "recvmmsg", obj=5, ret=3)                        # receive after receive: no split
    t.row(ms(6), 10, schema.SYSCALL_ENTER, nr=nr_of("io_uring_enter"), aux=1, obj=7, obj2=2)
    t.row(ms(6), 10, schema.SWITCH_OUT, state=schema.STATE_BLOCKED, reason=schema.WAIT_OTHER_SYSCALL,
          nr=nr_of("io_uring_enter"), obj=7)                              # blocks: the wait splits
    g = t.build(trace_end=ms(10))
    assert vertices(g, 10) == [
        (0, ms(1), "trace_start", "split", "none"),
        (ms(1), ms(4), "split", "split", "batch"),
        (ms(4), ms(6), "split", "blocked", "batch")]
    assert g.stats["splits"] == {"blocking_wait": 1, "event_loop": 0, "peer_change": 0, "batch": 2,
                                 "callback": 0, "input": 0, "goroutine": 0}
    assert [x[5] for x in edges(g)] == [True, True]


def test_timer_arm_to_fire_across_threads():
    t = Trace()
    t.thread(10, 10, "main")
    t.thread(10, 11, "armer")
    t.run(10, 0)
    t.run(11, 0)
    t.syscall(11, ms(1), "timerfd_settime", obj=7, obj2=ms(4), ret=0)
    t.block(11, ms(1.5), "sleep", "nanosleep")
    t.block(10, ms(2), "read", "read", obj=7)
    t.timer_wake(10, ms(5), ret=8)                         # hardirq timer: culled, labelled
    g = t.build(trace_end=ms(10))
    assert vertices(g, 10) == [(0, ms(2), "trace_start", "blocked", "none"),
                               (ms(5), ms(10), "wakeup", "trace_end", "none")]
    assert edges(g) == [("program_order", 10, 0, 10, ms(5), False, ms(5)),
                        ("timer", 11, 0, 10, ms(5), False, ms(5))]
    assert g.stats["culled_by_label"] == {"timer": 1} and g.stats["timer_edges"] == 1


def test_lost_regions_mark_segment_gaps():
    t = Trace()
    t.thread(10, 10, "app")
    t.thread(20, 20, "waker")
    t.run(10, 0)
    t.run(20, 0)
    t.block(10, ms(100), "read", "read", obj=3)
    t.wake(20, 10, ms(350))                                # inside [500 - 200, 500]
    t.run(10, ms(351), ret=1)
    t.lost(ms(500), 42)
    t.block(10, ms(600), "read", "read", obj=3)
    t.wake(20, 10, ms(700))
    t.run(10, ms(701), ret=1)
    g = t.build(trace_end=ms(1000))
    u = g.utid_of_tid(10)
    assert [bool(g.seg.gap[v]) for v in g.thread_segments(u)] == [False, True, False]
    assert g.stats["lost_records"] == 42 and g.stats["lost_regions"] == 1 and g.stats["gap_segments"] == 1
    g = t.build(trace_end=ms(1000), head_gap_end=ms(50))   # records overwritten before the first row
    assert [bool(g.seg.gap[v]) for v in g.thread_segments(u)] == [True, True, False]
    assert bool(g.seg.gap[g.thread_segments(g.utid_of_tid(20))[0]])


def test_switches_the_kernel_never_reported_are_a_gap_but_not_lost_records():
    t = Trace()
    t.thread(10, 10, "app")
    t.thread(20, 20, "waker")
    t.run(10, 0)
    t.run(20, 0)
    t.block(10, ms(100), "read", "read", obj=3)
    t.wake(20, 10, ms(350))
    t.run(10, ms(351), ret=1)
    t.lost(ms(500), 5, kind=schema.LOST_SWITCHES_UNREPORTED)
    t.block(10, ms(600), "read", "read", obj=3)
    t.wake(20, 10, ms(700))
    t.run(10, ms(701), ret=1)
    g = t.build(trace_end=ms(1000))
    u = g.utid_of_tid(10)
    assert [bool(g.seg.gap[v]) for v in g.thread_segments(u)] == [False, True, False]
    assert (g.stats["lost_records"], g.stats["unreported_switches"], g.stats["lost_regions"]) == (0, 5, 1)
    # `argus graph stats` names both counts
    assert "0 lost before the buffer, 5 switches the kernel never reported (1 lost region(s))" in \
        summary.format_summary(summary.graph_summary(g))


def fd_info(t, tid, at, fd, kind, inode, local, peer=0):
    """FD_INFO row (the tracer writes it just before the syscall that uses fd)."""
    t.row(at, tid, schema.FD_INFO, aux=fd, state=kind, obj=inode, obj2=local, val=peer)


def test_socket_identities_match_a_message_and_split_on_peer_change_without_any_wakeup():
    # unix socketpairs: proxy 10 <-> A 20 (inodes 101 / 201), proxy 10 <-> B 30 (inodes 102 / 301)
    t = Trace()
    t.thread(10, 10, "proxy")
    t.thread(20, 20, "A")
    t.thread(30, 30, "B")
    for tid in (10, 20, 30):
        t.run(tid, 0)
    fd_info(t, 20, ms(1), 3, schema.FD_SOCKET, 201, 201, 101)
    t.syscall(20, ms(1), "write", obj=3, obj2=201, ret=4)      # A -> proxy, the proxy is running
    fd_info(t, 10, ms(2), 5, schema.FD_SOCKET, 101, 101, 201)
    t.syscall(10, ms(2), "read", obj=5, obj2=101, ret=4)       # proxy receives it: message A -> proxy
    fd_info(t, 30, ms(0.5), 4, schema.FD_SOCKET, 301, 301, 102)
    fd_info(t, 10, ms(3), 6, schema.FD_SOCKET, 102, 102, 301)
    t.syscall(10, ms(3), "write", obj=6, obj2=102, ret=4)      # to B: {A} vs {B} -> split
    g = t.build(trace_end=ms(10))
    assert vertices(g, 10) == [(0, ms(3), "trace_start", "split", "none"),
                               (ms(3), ms(10), "split", "trace_end", "peer_change")]
    assert edges(g) == [("message", 20, 0, 10, 0, False, ms(2)),
                        ("program_order", 10, 0, 10, ms(3), True, ms(3))]
    assert g.stats["learned_channels"] == 0


SERVER, CLI_A, CLI_B = 0x7F00_0001_18EB, 0x7F00_0001_9C41, 0x7F00_0001_9C42   # 127.0.0.1:port ends


def test_a_tcp_servers_connections_share_their_local_end_but_not_their_messages():
    """Every socket a TCP server accepts has the listening address as its local
    end: a client's send must pair with the read of its own connection, not
    with the next read of any connection (redis serving a pipelining client
    between a producer's LPUSH and its read)."""
    t = Trace()
    t.thread(10, 10, "server")
    t.thread(20, 20, "producer")
    t.thread(30, 30, "pipeliner")
    for tid in (10, 20, 30):
        t.run(tid, 0)
    fd_info(t, 20, ms(0.5), 3, schema.FD_SOCKET, 201, CLI_A, SERVER)
    fd_info(t, 30, ms(0.5), 3, schema.FD_SOCKET, 301, CLI_B, SERVER)
    fd_info(t, 10, ms(0.5), 7, schema.FD_SOCKET, 107, SERVER, CLI_A)
    fd_info(t, 10, ms(0.5), 8, schema.FD_SOCKET, 108, SERVER, CLI_B)
    t.syscall(20, ms(1), "sendto", obj=3, obj2=201, ret=10)     # the producer's request
    t.syscall(30, ms(2), "sendto", obj=3, obj2=301, ret=10)     # a pipelined request
    t.syscall(10, ms(3), "read", obj=7, obj2=107, ret=10)       # the server reads the producer's
    g = t.build(trace_end=ms(10))
    assert [e for e in edges(g) if e[0] == "message"] == [("message", 20, 0, 10, 0, False, ms(3))]


def test_an_unconnected_receiver_takes_the_last_send_to_its_address():
    """A datagram server's unconnected socket knows no peer: any client's send
    to its address is its next receive."""
    t = Trace()
    t.thread(10, 10, "resolver")
    t.thread(20, 20, "client")
    t.run(10, 0)
    t.run(20, 0)
    fd_info(t, 20, ms(0.5), 3, schema.FD_SOCKET, 201, CLI_A, SERVER)
    fd_info(t, 10, ms(0.5), 5, schema.FD_SOCKET, 105, SERVER, 0)
    t.syscall(20, ms(1), "sendto", obj=3, obj2=201, ret=30)
    t.syscall(10, ms(2), "recvfrom", obj=5, obj2=105, ret=30)
    g = t.build(trace_end=ms(10))
    assert [e for e in edges(g) if e[0] == "message"] == [("message", 20, 0, 10, 0, False, ms(2))]


def test_pipe_identity_is_the_shared_inode_and_regular_files_are_not_messages():
    t = Trace()
    t.thread(10, 10, "reader")
    t.thread(20, 20, "writer")
    t.run(10, 0)
    t.run(20, 0)
    fd_info(t, 20, ms(0.5), 4, schema.FD_PIPE, 77, 77)
    fd_info(t, 10, ms(0.5), 3, schema.FD_PIPE, 77, 77)
    t.syscall(20, ms(1), "write", obj=4, obj2=77, ret=1)
    t.syscall(10, ms(2), "read", obj=3, obj2=77, ret=1)        # the same pipe: message 20 -> 10
    fd_info(t, 10, ms(3), 9, schema.FD_REGULAR, 555, 555)
    t.syscall(10, ms(3), "write", obj=9, obj2=555, ret=100)    # a file: no peer, no split, no message
    t.syscall(10, ms(4), "read", obj=9, obj2=555, ret=100)
    g = t.build(trace_end=ms(10))
    assert vertices(g, 10) == [(0, ms(10), "trace_start", "trace_end", "none")]
    assert edges(g) == [("message", 20, 0, 10, 0, False, ms(2))]


def test_timer_fire_record_links_the_arming_thread_to_the_woken_one():
    t = Trace()
    t.thread(10, 10, "sleeper")
    t.thread(10, 11, "armer")
    t.run(10, 0)
    t.run(11, 0)
    t.block(10, ms(1), "futex", "futex", obj=0x10, aux=128)    # waits; the timer that ends it was armed by 11
    t.block(11, ms(2), "sleep", "nanosleep")
    timer_id = 0xA21C762EFAF90FC2
    t.row(ms(5), 11, schema.TIMER, state=schema.TIMER_FIRE, obj=timer_id, obj2=ms(0.5), peer_pid=10, peer_tid=11)
    t.row(ms(5), 0, schema.WAKEUP, peer_pid=10, peer_tid=10, reason=schema.WAKE_HARDIRQ, irq=schema.IRQ_TIMER,
          aux=int(np.uint32(timer_id & 0xFFFFFFFF).view(np.int32)))   # irq_vec: the id's low 32 bits
    t.run(10, ms(5))
    g = t.build(trace_end=ms(10))
    assert edges(g) == [("program_order", 10, 0, 10, ms(5), False, ms(5)),
                        ("timer", 11, 0, 10, ms(5), False, ms(5))]
    e = [k for k in range(g.num_edges) if g.edges.type[k] == G.EDGE_TIMER][0]
    assert int(g.edges.src_ts[e]) == ms(0.5)
    assert g.stats["culled_by_label"] == {"timer": 1}
