"""Go's scheduler in the graph core (argus_graph_probes.c, "go"): a
goroutine readied by one thread and run by another gives a strong wakeup
edge from the readier, not from the spare M that the runtime had wake.

The crafted process: M0 (the main thread, its goroutine G0 locked to it),
M1 running goroutine G1, M2 a spare M, M3 a worker M running GA then GB;
GS the runtime's signal receiver (signalled).
"""
import pytest

from argus.tracer import schema
from argus.graphbuild import graph as G
from support.crafted import Trace, ms, compare_with_oracle

P, M0, M1, M2, M3 = 500, 500, 501, 502, 503
G0, G1, GA, GB, GS = 0xC000000100, 0xC000000200, 0xC000000300, 0xC000000400, 0xC000000500
FUTEX = 0x7000


def go(t, at, tid, kind, g):
    return t.row(at, tid, kind, obj=g, obj2=0xC000000999, cpu=0)


def handover(go_rows=True, rows_only=False):
    """G0 parks on M0 at 1 ms (M0 sleeps in a futex); G1 on M1 readies it at
    50 ms and parks; the spare M2, woken by M1, does the futex wake of M0,
    which then runs G0 again."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    if go_rows:
        go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
        go(t, ms(0.2), M1, schema.GO_EXECUTE, G1)
        go(t, ms(1), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(1.01), FUTEX)
    t.futex_wait(M2, ms(0.5), FUTEX + 8)
    if go_rows:
        go(t, ms(50), M1, schema.GO_READY, G0)
    t.wake_and_run(M1, M2, ms(50.05), delay=1000)
    if go_rows:
        go(t, ms(50.1), M1, schema.GO_PARK, G1)
    t.futex_wait(M1, ms(50.2), FUTEX + 16)
    t.wake(M2, M0, ms(50.25))
    t.run(M0, ms(50.26))
    if go_rows:
        go(t, ms(50.27), M0, schema.GO_EXECUTE, G0)
    t.futex_wait(M2, ms(50.3), FUTEX + 8)
    t.preempt(M0, ms(60))
    return t.rows() if rows_only else t.build()


def _wake_into(g, tid, at):
    v = g.segment_at(g.utid_of_tid(tid), at)
    return v, g.incoming_wakeup(v)


def test_the_goroutines_readier_wakes_it_not_the_spare_m():
    g = handover()
    v, e = _wake_into(g, M0, ms(55))
    assert e >= 0 and g.seg.start[v] == ms(50.25)
    src = int(g.edges.src[e])
    assert int(g.seg.tid[src]) == M1 and g.seg.start[src] <= ms(50) < g.seg.end[src] + 1
    assert int(g.edges.type[e]) == G.EDGE_WAKEUP and not g.edges.weak[e]
    assert int(g.edges.src_ts[e]) == ms(50) and int(g.edges.obj[e]) == G0
    assert g.stats["go_edges"] == 1


def test_without_go_rows_the_kernel_wakeup_names_the_spare_m():
    g = handover(go_rows=False)
    v, e = _wake_into(g, M0, ms(55))
    assert int(g.seg.tid[int(g.edges.src[e])]) == M2 and g.stats["go_edges"] == 0


def worker(ready_by_goroutine=True, resume=False, rows_only=False):
    """M3 runs GA, parks it at 10 ms and runs GB at 10.01 ms (resume: GA
    again without a park or a ready of it, as after a preemption).  GB was readied at 5 ms by M1, running G1
    (or, ready_by_goroutine=False, after G1 parked: the runtime's timer)."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1"), (M3, "m3")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    go(t, ms(1), M3, schema.GO_EXECUTE, GA)
    go(t, ms(1), M1, schema.GO_EXECUTE, G1)
    if not ready_by_goroutine:
        go(t, ms(4), M1, schema.GO_PARK, G1)
    go(t, ms(5), M1, schema.GO_READY, GB)
    t.futex_wait(M1, ms(6), FUTEX)
    if not resume:
        go(t, ms(10), M3, schema.GO_PARK, GA)
    go(t, ms(10.01), M3, schema.GO_EXECUTE, GA if resume else GB)
    t.preempt(M3, ms(20))
    t.preempt(M0, ms(20))
    return t.rows() if rows_only else t.build()


def test_another_goroutine_on_a_running_m_starts_a_vertex_from_its_readier():
    g = worker()
    u = g.utid_of_tid(M3)
    v = g.segment_at(u, ms(15))
    assert g.seg.start[v] == ms(10.01) and g.seg.split_kind[v] == G.SPLIT_GOROUTINE
    e = g.incoming_wakeup(v)
    assert e >= 0 and int(g.seg.tid[int(g.edges.src[e])]) == M1 and int(g.edges.obj[e]) == GB
    assert g.stats["splits"]["goroutine"] == 1


def test_a_ready_by_the_runtime_names_no_cause():
    g = worker(ready_by_goroutine=False)
    v = g.segment_at(g.utid_of_tid(M3), ms(15))
    assert g.seg.split_kind[v] == G.SPLIT_GOROUTINE and g.incoming_wakeup(v) < 0
    assert g.stats["go_edges"] == 0


def test_the_same_goroutine_resumed_is_no_boundary():
    g = worker(resume=True)
    u = g.utid_of_tid(M3)
    assert g.segment_at(u, ms(15)) == g.segment_at(u, ms(2))
    assert g.stats["splits"]["goroutine"] == 0


def test_the_python_reference_agrees():
    """tests/support/reference makes the same cuts and goroutine edges (splits=False)."""
    for rows in (handover(rows_only=True), worker(rows_only=True), worker(False, rows_only=True),
                 worker(resume=True, rows_only=True)):
        py, nat = compare_with_oracle(rows)
    assert py.stats["go_edges"] == nat.stats["go_edges"] == 0     # the last: a resume, no hand-over
    py, nat = compare_with_oracle(handover(rows_only=True))
    assert py.stats["go_edges"] == 1
    for interrupted in (True, False):
        py, nat = compare_with_oracle(signalled(interrupted, rows_only=True))
        assert py.stats["go_edges"] == nat.stats["go_edges"] == 1


def netpolled(go_rows=True, readied=False, late=False):
    """G0 (locked to M0) reads a socket with nothing in it, parks at 1 ms
    (M0 sleeps in a futex).  G1 on M1 writes the peer end at 40 ms; at 50 ms
    the spare M2 polls the network (no GO_READY: Go's netpoll readies
    through injectglist) and wakes M0, which runs G0: it reads the byte.
    readied: a GO_READY of G0 by M1's goroutine comes before the execute
    (then the goroutine edge names M1 as before).  late: G0's first row is
    that execute (the probes came on while it was parked)."""
    from graphbuild.heuristics_test import fd_info
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    fd_info(t, M0, ms(0.5), 4, schema.FD_SOCKET, 101, 101, 102)
    fd_info(t, M1, ms(0.5), 5, schema.FD_SOCKET, 102, 102, 101)
    if go_rows and not late:
        go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
    if go_rows:
        go(t, ms(0.2), M1, schema.GO_EXECUTE, G1)
    t.syscall(M0, ms(0.9), "read", obj=4, obj2=101, ret=-11)
    if go_rows and not late:
        go(t, ms(1), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(1.01), FUTEX)
    t.futex_wait(M2, ms(0.5), FUTEX + 8)
    t.syscall(M1, ms(40), "write", obj=5, obj2=102, ret=1)
    if go_rows and readied:
        go(t, ms(41), M1, schema.GO_READY, G0)
    t.futex_wait(M1, ms(45), FUTEX + 16)
    t.timer_wake(M2, ms(50))
    t.futex_wake(M2, ms(50.1), FUTEX)
    t.wake(M2, M0, ms(50.1))
    t.futex_wait(M2, ms(50.2), FUTEX + 8)
    t.run(M0, ms(50.3))
    if go_rows:
        go(t, ms(50.4), M0, schema.GO_EXECUTE, G0)
    t.syscall(M0, ms(50.5), "read", obj=4, obj2=101, ret=1)
    t.preempt(M0, ms(60))
    return t.build()


@pytest.mark.parametrize("late", [False, True])
def test_a_goroutine_the_netpoller_readied_is_woken_by_the_sender_of_what_it_reads(late):
    g = netpolled(late=late)
    v, e = _wake_into(g, M0, ms(55))
    assert e >= 0 and g.seg.start[v] == ms(50.1)
    assert int(g.seg.tid[int(g.edges.src[e])]) == M1 and int(g.edges.src_ts[e]) == ms(40)
    assert int(g.edges.type[e]) == G.EDGE_WAKEUP and int(g.edges.obj[e]) == G0
    assert g.stats["go_edges"] == 1


def test_without_go_rows_the_poller_m_stays_the_waker():
    g = netpolled(go_rows=False)
    v, e = _wake_into(g, M0, ms(55))
    assert int(g.seg.tid[int(g.edges.src[e])]) == M2 and g.stats["go_edges"] == 0


def test_a_goroutine_readied_by_name_keeps_its_readier():
    g = netpolled(readied=True)
    v, e = _wake_into(g, M0, ms(55))
    assert int(g.seg.tid[int(g.edges.src[e])]) == M1 and int(g.edges.src_ts[e]) == ms(41)


def timed(go_rows=True, first_row_ready=False):
    """G0 (locked to M0) parks in a Sleep at 1 ms (M0 sleeps in a futex);
    at 50 ms Go's timers on M2 ready it: M2 runs no goroutine (its last
    goroutine parked), then it does the futex wake of M0, which runs G0.
    first_row_ready: M2's ready is its first GO_* row, and its next one is
    the park of goroutine GA that was running there (a goroutine's ready)."""
    t = Trace()
    for tid, name in ((M0, "main"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    if go_rows:
        go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
        if not first_row_ready:
            go(t, ms(0.2), M2, schema.GO_EXECUTE, GA)
            go(t, ms(0.3), M2, schema.GO_PARK, GA)
        go(t, ms(1), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(1.01), FUTEX)
    if go_rows:
        go(t, ms(50), M2, schema.GO_READY, G0)
        if first_row_ready:
            go(t, ms(50.01), M2, schema.GO_PARK, GA)
    t.futex_wake(M2, ms(50.1), FUTEX)
    t.wake(M2, M0, ms(50.1))
    t.run(M0, ms(50.2))
    if go_rows:
        go(t, ms(50.3), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, ms(60))
    t.preempt(M2, ms(60))
    return t.build()


def test_a_goroutine_gos_timers_readied_has_no_waker():
    g = timed()
    v, e = _wake_into(g, M0, ms(55))
    assert g.seg.start[v] == ms(50.1) and e < 0 and g.start_label(v) == "timer"
    g = timed(go_rows=False)
    v, e = _wake_into(g, M0, ms(55))
    assert e >= 0 and int(g.seg.tid[int(g.edges.src[e])]) == M2


def test_a_ready_that_is_its_threads_first_row_is_settled_by_its_next():
    g = timed(first_row_ready=True)
    v, e = _wake_into(g, M0, ms(55))
    assert e >= 0 and int(g.seg.tid[int(g.edges.src[e])]) == M2 and int(g.edges.obj[e]) == G0
    assert int(g.edges.src_ts[e]) == ms(50) and g.stats["go_edges"] == 1


def signalled(interrupted=True, rows_only=False):
    """G0 (locked to M0) waits on a channel that signal.Notify feeds: it
    parks at 1 ms and M0 sleeps in a futex.  M2, the runtime's signal
    receiver, runs GS and sleeps in its note's futex.  At 50 ms M1 sends a
    signal and the kernel delivers it to M0: its futex returns -ERESTARTSYS,
    M0 runs Go's handler, which wakes M2 (futex wake), and is preempted; M2
    readies G0 and M0 runs it.  interrupted=False: the same rows but the
    futex returns 0 (M1's wakeup a futex wake, as a spare M's)."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
    go(t, ms(0.2), M2, schema.GO_EXECUTE, GS)
    go(t, ms(1), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(1.01), FUTEX)
    t.futex_wait(M2, ms(0.5), FUTEX + 8)
    t.wake(M1, M0, ms(50))
    t.run(M0, ms(50.02), ret=-512 if interrupted else 0)
    t.futex_wake(M0, ms(50.04), FUTEX + 8)
    t.wake(M0, M2, ms(50.04))
    t.preempt(M0, ms(50.05))
    t.run(M2, ms(50.05))
    go(t, ms(50.07), M2, schema.GO_READY, G0)
    t.futex_wait(M2, ms(50.1), FUTEX + 8)
    t.run(M0, ms(50.1))
    go(t, ms(50.12), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, ms(60))
    t.preempt(M1, ms(60))
    return t.rows() if rows_only else t.build()


def test_a_signal_that_ended_the_ms_wait_stays_its_waker():
    """The hung wait of M0 ended when M1's signal interrupted it (not when
    a spare M's futex wake did): M1 stays its waker; G0's readier M2 (woken
    by M0's own handler) wakes the stint cut at the execute, no cycle."""
    from argus.diagnose.waits import ending_edge
    g = signalled()
    u = g.utid_of_tid(M0)
    hung = g.segment_at(u, ms(20))
    e = ending_edge(g, hung)
    assert e >= 0 and int(g.seg.tid[int(g.edges.src[e])]) == M1 and g.seg.start[g.next_segment(hung)] == ms(50)
    assert int(g.edges.type[e]) == G.EDGE_WAKEUP and int(g.edges.obj[e]) != G0
    v, e = _wake_into(g, M0, ms(55))
    assert g.seg.start[v] == ms(50.12) and g.seg.split_kind[v] == G.SPLIT_GOROUTINE
    assert e >= 0 and int(g.seg.tid[int(g.edges.src[e])]) == M2 and int(g.edges.obj[e]) == G0
    assert int(g.edges.src_ts[e]) == ms(50.07)
    assert g.stats["go_edges"] == 1 and g.stats["splits"]["goroutine"] == 1


def test_an_m_a_futex_woke_for_its_goroutine_still_takes_the_readiers_edge():
    g = signalled(interrupted=False)
    v, e = _wake_into(g, M0, ms(55))
    assert g.seg.start[v] == ms(50) and int(g.seg.tid[int(g.edges.src[e])]) == M2
    assert int(g.edges.obj[e]) == G0 and g.stats["splits"]["goroutine"] == 0
