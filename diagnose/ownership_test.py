"""ownership.owners on crafted graphs: which edges count (the victim's, in
the window, or into one waiting vertex), grouping by holder thread, and the
ranking strong > weak, most tries, most CPU."""
from support import crafted as C
from support.crafted import Trace, ms, us, s
from argus.diagnose import ownership as OW


def test_one_strong_holder_from_every_try():
    t, info = C.lock_poller(holder="wait")
    g = t.build(trace_end=info["trace_end"])
    u = g.utid_of_tid(C.POLLER)
    (o,) = OW.owners(g, u, info["hang_start"], info["unlock"])
    assert (int(g.threads.tid[o.utid]), o.kind, o.weak, o.obj) == (C.HOLDER, "file_lock", False, C.LOCK_INODE)
    assert o.tries == 300
    assert int(g.edges.ts[o.edge]) == max(int(x) for x in g.edges.ts[OW.ownership_edges(
        g, u, info["hang_start"], info["unlock"])])
    assert o.vertex == int(g.edges.src[o.edge]) and int(g.seg.tid[o.vertex]) == C.HOLDER
    # outside the window, or for another thread: nothing
    assert OW.owners(g, u, 0, info["hang_start"]) == []
    assert OW.owners(g, g.utid_of_tid(C.HOLDER), 0, info["trace_end"]) == []


def test_strong_ranks_before_more_tries():
    t, info = C.lock_poller(holder="wait", strong=True, other="channel")
    g = t.build(trace_end=info["trace_end"])
    os_ = OW.owners(g, g.utid_of_tid(C.POLLER), info["hang_start"], info["unlock"])
    assert [(int(g.threads.tid[o.utid]), o.kind, o.weak, o.tries) for o in os_] == [
        (C.HOLDER, "file_lock", False, 300), (C.OTHER, "futex_channel", True, 100)]


def test_among_weak_holders_most_tries_then_most_cpu():
    t, info = C.lock_poller(holder="wait", strong=False, other="channel")
    g = t.build(trace_end=info["trace_end"])
    os_ = OW.owners(g, g.utid_of_tid(C.POLLER), info["hang_start"], info["unlock"])
    assert [int(g.threads.tid[o.utid]) for o in os_] == [C.HOLDER, C.OTHER]      # 300 tries vs 100
    # equal tries: the one on the CPU (other, busy) beats the one blocked in read (holder)
    t = Trace()
    t.thread(1, 1, "victim").thread(2, 2, "sleeper").thread(3, 3, "spinner")
    t.run(2, 0).block(2, ms(1), "sleep", "nanosleep")
    t.run(3, 0).busy(3, 0, s(2), slice_ns=ms(10), gap_ns=us(100))
    t.run(1, 0).futex_wait(1, ms(5), 0xAB)
    t.own(2, 1, ms(5), "futex_channel", weak=True, obj=0xAB).own(3, 1, ms(5), "futex_channel", weak=True, obj=0xAB)
    g = t.build(trace_end=s(2))
    v = int(g.thread_segments(g.utid_of_tid(1))[0])
    os_ = OW.owners(g, g.utid_of_tid(1), s(1), s(2), vertex=v)     # edges before the window still count
    assert [int(g.threads.tid[o.utid]) for o in os_] == [3, 2]
    assert os_[0].cpu_ns > s(0.9) and os_[1].cpu_ns == 0


def test_no_ownership_edges():
    g = C.yield_app(flags=False)
    assert OW.owners(g, g.utid_of_tid(600), 0, s(8)) == []


def test_release_waker_of_the_polled_futex():
    g = C.gil_like(other_process_wakes=True)
    u = g.utid_of_tid(10)
    assert OW.polled_addresses(g, u, s(1), s(4)) == [0x7000]
    assert OW.owners(g, u, s(1), s(4)) == []
    (o,) = OW.release_owners(g, u, s(1), s(4))
    assert (int(g.threads.tid[o.utid]), o.edge, o.kind, o.weak, o.tries, o.obj, o.ts) == \
        (11, -1, "futex_channel", True, 1, 0x7000, s(4))
    assert int(g.seg.tid[o.vertex]) == 11 and g.seg.start[o.vertex] <= s(4)
    e = o.edge_ref(g, 5)
    assert (e.eid, e.src, e.dst, e.type, e.weak, e.ts) == (-1, o.vertex, 5, "ownership", True, s(4))
    # the hold still going on at trace end: no release, nobody named
    g = C.gil_like(release=False)
    assert OW.release_owners(g, g.utid_of_tid(10), s(1), s(4)) == []


def test_a_join_after_a_polling_loop_is_no_holder_of_what_was_polled():
    """The demo's yield mode: a helper polls a flag with sched_yield until a
    timer thread sets it, then joins that thread (a short join: the thread is
    still exiting).  The join's thread_exit edge explains the join's wait
    only, not the polling before it."""
    from argus.tracer import schema
    P, T, WORD = 40, 41, 0x7000_0990
    t = Trace()
    t.thread(P, P, "helper")
    t.thread(P, T, "timer")
    t.run(P, 0).run(T, 0)
    t.block(T, ms(1), "sleep", "clock_nanosleep")
    now = ms(2)
    while now < s(3):
        t.yield_(P, now)
        now += us(500)
    t.timer_wake(T, s(3))
    t.syscall(P, s(3) + us(10), "futex", aux=137, obj=WORD)
    t.row(s(3) + us(10), P, schema.FUTEX_STATE, obj=WORD, val=T, peer_tid=T, nr=9, state=schema.FUTEX_THREAD_EXIT)
    t.block(P, s(3) + us(10), "futex", "futex", obj=WORD, enter=False)
    t.wake_and_run(T, P, s(3) + us(50))
    g = t.build(trace_end=s(4))
    u = g.utid_of_tid(P)
    assert OW.owners(g, u, ms(2), s(3) + us(50)) == []
    join = g.segment_at(u, s(3) + us(20))
    (o,) = OW.owners(g, u, ms(2), s(3) + us(50), vertex=join)
    assert (int(g.threads.tid[o.utid]), o.kind, o.weak) == (T, "thread_exit", False)
