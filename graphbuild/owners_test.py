"""Ownership edges and wait sites of the graph core (core/argus_graph_owners.c,
core/argus_graph.c) on crafted rows: each rule, and where it must not fire.
The same records from real programs are checked in tests/test_ownership.py."""
import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from support.crafted import Trace, ms

HOLDER, POLLER = 100, 200
INODE = 4242
EAGAIN = -11


def file_lock(t, tid, at, type_, ret, kind=schema.LOCK_POSIX, holder_pid=0, wait=0, start=0, length=0):
    """fcntl(F_SETLK) entry + FILE_LOCK row + exit with ret."""
    t.syscall(tid, at, "fcntl", aux=6, obj=3, obj2=INODE)
    t.row(at, tid, schema.FILE_LOCK, aux=3, state=kind, reason=type_, peer_tid=wait, val=start, obj2=length,
          obj=INODE, peer_pid=holder_pid)
    t.row(at + 1000, tid, schema.SYSCALL_EXIT, nr=72, val=ret)


def owner_edges(g):
    e = g.edges
    sel = np.flatnonzero(e.type == G.EDGE_OWNERSHIP)
    return [(int(g.seg.tid[e.src[k]]), int(g.seg.tid[e.dst[k]]), G.OWNER_KIND_NAMES[int(e.owner_kind[k])],
             bool(e.weak[k]), int(e.ts[k])) for k in sel]


def two_processes():
    t = Trace()
    t.thread(HOLDER, HOLDER, "holder")
    t.thread(POLLER, POLLER, "poller")
    t.run(HOLDER, ms(1))
    t.run(POLLER, ms(1))
    return t


def test_failed_try_points_to_the_holder_seen_taking_the_lock():
    t = two_processes()
    file_lock(t, HOLDER, ms(2), schema.LOCK_WRITE, 0)            # taken inside the trace
    for k in range(3):                                           # try, fail, sleep
        file_lock(t, POLLER, ms(10 + 10 * k), schema.LOCK_WRITE, EAGAIN)
        t.block(POLLER, ms(11 + 10 * k), "sleep", "nanosleep")
        t.timer_wake(POLLER, ms(19 + 10 * k))
    file_lock(t, HOLDER, ms(45), schema.LOCK_UNLOCK, 0)
    file_lock(t, POLLER, ms(50), schema.LOCK_WRITE, 0)           # gets it: no edge
    g = t.build(trace_end=ms(60))
    edges = owner_edges(g)
    assert [(s, d, k, w) for s, d, k, w, _ in edges] == [(HOLDER, POLLER, "file_lock", False)] * 3
    # each edge enters the vertex that tried (and then slept), at the failed return
    for (_, _, _, _, ts), v in zip(edges, g.edges.dst[g.edges.type == G.EDGE_OWNERSHIP]):
        assert g.seg.start[v] <= ts <= g.seg.end[v] and g.seg.wait_reason[v] == schema.WAIT_SLEEP
    assert g.stats["ownership_edges"] == 3


def test_no_edge_without_a_conflict():
    t = two_processes()
    file_lock(t, HOLDER, ms(2), schema.LOCK_READ, 0, length=10)
    file_lock(t, POLLER, ms(5), schema.LOCK_READ, 0, length=10)  # two readers share
    file_lock(t, POLLER, ms(8), schema.LOCK_WRITE, EAGAIN, start=100, length=10)   # a range nobody holds
    g = t.build(trace_end=ms(20))
    assert owner_edges(g) == []


def test_the_kernels_holder_names_a_lock_taken_before_the_trace_and_exit_releases():
    t = two_processes()
    file_lock(t, POLLER, ms(5), schema.LOCK_WRITE, EAGAIN, holder_pid=HOLDER)
    t.exit(HOLDER, ms(8))
    file_lock(t, POLLER, ms(9), schema.LOCK_WRITE, EAGAIN, holder_pid=HOLDER)   # the holder is gone
    g = t.build(trace_end=ms(20))
    assert [e[:4] for e in owner_edges(g)] == [(HOLDER, POLLER, "file_lock", False)]


def test_blocking_request_gets_the_edge_at_its_wait():
    t = two_processes()
    file_lock(t, HOLDER, ms(2), schema.LOCK_WRITE, 0)
    t.syscall(POLLER, ms(5), "fcntl", aux=7, obj=3, obj2=INODE)
    t.row(ms(5), POLLER, schema.FILE_LOCK, aux=3, state=schema.LOCK_POSIX, reason=schema.LOCK_WRITE, peer_tid=1,
          obj=INODE)
    t.block(POLLER, ms(5), "syscall", "fcntl", enter=False)
    g = t.build(trace_end=ms(20))
    (edge,) = owner_edges(g)
    assert edge[:4] == (HOLDER, POLLER, "file_lock", False) and edge[4] == ms(5)
    v = int(g.edges.dst[g.edges.type == G.EDGE_OWNERSHIP][0])
    assert g.seg.end_kind[v] == G.END_BLOCKED and g.seg.wait_ongoing[v]


def test_flock_between_threads_of_one_process_conflicts_posix_does_not():
    """flock() locks belong to the open file: a thread that opened the file
    on its own (fd 5) blocks on the lock another thread of its process took
    through fd 3.  POSIX locks belong to the process: no edge there."""
    for kind, edges in ((schema.LOCK_FLOCK, [(HOLDER, 101, "file_lock", False)]), (schema.LOCK_POSIX, [])):
        t = Trace()
        t.thread(HOLDER, HOLDER, "main").thread(HOLDER, 101, "worker")
        t.run(HOLDER, ms(1)).run(101, ms(1))
        file_lock(t, HOLDER, ms(2), schema.LOCK_WRITE, 0, kind=kind)
        t.syscall(101, ms(5), "flock", aux=2, obj=5, obj2=INODE)
        t.row(ms(5), 101, schema.FILE_LOCK, aux=5, state=kind, reason=schema.LOCK_WRITE, peer_tid=1, obj=INODE)
        t.block(101, ms(5), "syscall", "flock", enter=False)
        g = t.build(trace_end=ms(20))
        assert [e[:4] for e in owner_edges(g)] == edges


MUTEX = 0x7F0000001000
W1, W2, OTHER = 101, 102, 300


def futex_process():
    t = Trace()
    for tid in (HOLDER, W1, W2):
        t.thread(HOLDER, tid, f"t{tid}")
    t.thread(OTHER, OTHER, "other")
    for tid in (HOLDER, W1, W2, OTHER):
        t.run(tid, ms(1))
    return t


def futex_wait_with_state(t, tid, at, owner, word=2, flags=schema.FUTEX_OWNER_READ, op=0):
    t.syscall(tid, at, "futex", aux=op | 128, obj=MUTEX)
    t.row(at, tid, schema.FUTEX_STATE, obj=MUTEX, val=word, peer_tid=owner, nr=op, state=flags)
    t.block(tid, at, "futex", "futex", obj=MUTEX, enter=False)


def test_futex_owner_from_the_word_or_the_glibc_owner_field():
    t = futex_process()
    futex_wait_with_state(t, W1, ms(5), HOLDER)                                      # glibc: weak
    futex_wait_with_state(t, W2, ms(6), 0, word=0x80000000 | HOLDER, flags=schema.FUTEX_PI, op=6)  # PI: strong
    g = t.build(trace_end=ms(20))
    assert sorted(e[:4] for e in owner_edges(g)) == [(HOLDER, W1, "futex_owner", True),
                                                     (HOLDER, W2, "futex_owner", False)]


def test_futex_owner_must_be_a_live_thread_of_the_same_process():
    t = futex_process()
    futex_wait_with_state(t, W1, ms(5), OTHER)        # another process's tid: garbage beside the word
    t.exit(W2, ms(4))
    futex_wait_with_state(t, HOLDER, ms(6), W2)       # a dead thread
    g = t.build(trace_end=ms(20))
    assert owner_edges(g) == []


def test_futex_channel_learned_from_a_wake_that_ended_a_wait_on_the_same_word():
    t = futex_process()
    t.futex_wait(W1, ms(2), MUTEX)
    t.syscall(HOLDER, ms(3), "futex", aux=1 | 128, obj=MUTEX)     # FUTEX_WAKE
    t.wake_and_run(HOLDER, W1, ms(3))
    t.row(ms(3), HOLDER, schema.SYSCALL_EXIT, nr=202, val=1)
    t.futex_wait(W1, ms(5), MUTEX)                                # waits again: the holder has it
    t.futex_wait(W2, ms(6), MUTEX + 8)                            # another word: nothing learned
    g = t.build(trace_end=ms(20))
    assert [e[:4] for e in owner_edges(g)] == [(HOLDER, W1, "futex_channel", True)]


def test_wait_site_timeout_stack_and_action_before_the_wait():
    t = Trace()
    t.thread(HOLDER, HOLDER, "loop")
    t.run(HOLDER, ms(1))
    t.syscall(HOLDER, ms(2), "write", obj=5, aux=10, ret=10)      # the request
    t.syscall(HOLDER, ms(3), "poll", obj=5, aux=250, obj2=2)
    t.row(ms(3), HOLDER, schema.WAIT_SITE, nr=7, aux=250, peer_pid=2, obj2=0xABC1, obj=0, peer_tid=2)
    t.row(ms(3), HOLDER, schema.SWITCH_OUT, state=schema.STATE_BLOCKED, reason=schema.WAIT_POLL, nr=7, obj=5,
          obj2=0x5171)
    t.timer_wake(HOLDER, ms(9))
    t.block(HOLDER, ms(10), "poll", "poll", obj=5, aux=-1)       # same site again: no new WAIT_SITE row
    g = t.build(trace_end=ms(20))
    v1, v2 = [int(v) for v in np.flatnonzero(g.seg.wait_reason == schema.WAIT_POLL)]
    assert (int(g.seg.wait_site[v1]), int(g.seg.wait_timeout_ms[v1]), int(g.seg.wait_stack[v1])) == \
        (0xABC1, 250, 0x5171)
    assert (int(g.seg.act_kind[v1]), int(g.seg.act_obj[v1]), int(g.seg.act_ts[v1])) == (G.ACT_SEND, 5, ms(2))
    assert (int(g.seg.wait_site[v2]), int(g.seg.wait_timeout_ms[v2])) == (0xABC1, -1)
    assert g.seg.act_kind[v2] == G.ACT_NONE                       # nothing since the last wait ended
    assert g.seg.wait_timeout_ms[0] == G.TIMEOUT_NA or g.seg.wait_reason[0] == schema.WAIT_POLL
