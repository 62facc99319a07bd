"""Hang detection: the spinning vertex of a thread."""
import pytest

from support.crafted import Trace, ms, s, us
from argus.diagnose import hangs as H
from argus.diagnose import blocktype as B

M, W = 10, 11


def main_thread_day(until=None):
    """Main thread 10 of pid 10 (11, of pid 20, wakes it):
       0.1-3.0 s   poll (idle, long: not a hang)
       3.0-5.5 s   busy on CPU, one 1 ms read inside     -> LongRunning stretch
       5.5-6.0 s   poll
       6.1-9.0 s   futex wait                             -> LongWait
       9.1-9.5 s   poll
       9.5-12.0 s  sched_yield every 20 ms                -> RepeatedYield stretch
       12.0-12.2 s poll
       12.3 s-     read(fd 9), still waiting at 15 s      -> LongWait, ongoing
    """
    t = Trace()
    t.thread(M, M, "main")
    t.thread(20, W, "waker")
    t.run(W, 0)
    t.run(M, 0)
    t.block(M, ms(100), "poll", "epoll_wait", obj=3)
    t.timer_wake(M, s(3))
    t.block(M, s(4), "read", "read", obj=4)
    t.wake(W, M, s(4) + ms(1)).run(M, s(4) + ms(1))
    t.block(M, s(5.5), "poll", "epoll_wait", obj=3)
    t.wake(W, M, s(6)).run(M, s(6))
    t.block(M, s(6.1), "futex", "futex", obj=0x7000)
    t.wake(W, M, s(9)).run(M, s(9))
    t.block(M, s(9.1), "poll", "epoll_wait", obj=3)
    t.wake(W, M, s(9.5)).run(M, s(9.5))
    for k in range(125):
        t.yield_(M, s(9.5) + ms(20 * k) + ms(10))
    t.block(M, s(12), "poll", "epoll_wait", obj=3)
    t.wake(W, M, s(12.2)).run(M, s(12.2))
    t.block(M, s(12.3), "read", "read", obj=9)
    return t.build(until=until, trace_end=None if until else s(15))


def summary(hs):
    return [(h.kind, h.block_type, h.start_ns, h.end_ns, h.ongoing) for h in hs]


def test_candidates_waits_and_stretches():
    g = main_thread_day()
    hs = H.list_hangs(g, M)
    assert summary(hs) == [
        ("stretch", B.LONG_RUNNING, s(3), s(5.5), False),
        ("wait", B.LONG_WAIT, s(6.1), s(9), False),
        ("stretch", B.REPEATED_YIELD, s(9.5), s(12), False),
        ("wait", B.LONG_WAIT, s(12.3), s(15), True),
    ]
    u = g.utid_of_tid(M)
    segs = g.thread_segments(u)
    lr = hs[0]
    assert lr.vertex == g.segment_at(u, s(3)) and lr.last_vertex == g.segment_at(u, s(5))
    assert lr.vertex != lr.last_vertex             # the short read split it, the stretch goes on
    assert hs[1].vertex == g.segment_at(u, s(6.05)) and hs[3].vertex == segs[-1]
    assert hs[2].classification.evidence["yields"] == 125


def test_choice_ongoing_then_at_then_longest():
    g = main_thread_day()
    assert summary([H.find_hang(g, M)]) == [("wait", B.LONG_WAIT, s(12.3), s(15), True)]
    assert H.find_hang(g, M, at=s(4)).kind == "stretch"
    assert H.find_hang(g, M, at=s(7)).start_ns == s(6.1)
    # cut before the last wait: nothing ongoing, the longest wins
    g = main_thread_day(until=s(12.25))
    assert summary([H.find_hang(g, M)]) == [("wait", B.LONG_WAIT, s(6.1), s(9), False)]


def test_threshold_is_configurable():
    g = main_thread_day()
    assert len(H.list_hangs(g, M, threshold_ns=s(2.6))) == 2
    assert [h.start_ns for h in H.list_hangs(g, M, threshold_ns=s(2.6))] == [s(6.1), s(12.3)]


def test_no_hang_is_a_clear_error():
    g = main_thread_day()
    with pytest.raises(H.NoHangError) as e:
        H.find_hang(g, M, threshold_ns=s(3))
    assert str(e.value) == "no hang >= 3 s found for the main thread of pid 10 in the trace window " \
                           "[0.000 s, 15.000 s]"
    with pytest.raises(H.NoHangError) as e:
        H.find_hang(g, M, at=s(1))
    assert str(e.value) == ("no hang >= 2 s found for the main thread of pid 10 in the trace window "
                            "[0.000 s, 15.000 s] at 1.000 s (hangs at: 3.000 s..5.500 s, 6.100 s..9.000 s, "
                            "9.500 s..12.000 s, 12.300 s..15.000 s)")


def test_unknown_pid_and_thread():
    g = main_thread_day()
    with pytest.raises(H.UnknownProcessError) as e:
        H.find_hang(g, 999999999)
    assert str(e.value) == "pid 999999999 not found in the trace [0.000 s, 15.000 s]"
    with pytest.raises(H.UnknownProcessError):
        H.find_hang(g, M, tid=12345)


def test_no_main_thread_uses_longest_hang_of_the_process():
    t = Trace()
    t.thread(50, 51, "worker-a")
    t.thread(50, 52, "worker-b")
    t.thread(60, 60, "other")
    t.run(60, 0)
    t.run(51, 0).block(51, s(1), "futex", "futex", obj=1)
    t.wake(60, 51, s(3.5)).run(51, s(3.5)).block(51, s(3.6), "futex", "futex", obj=1)
    t.run(52, 0).block(52, s(1), "read", "read", obj=2)
    t.wake(60, 52, s(5)).run(52, s(5)).block(52, s(5.1), "read", "read", obj=2)
    g = t.build(trace_end=s(6))
    h = H.find_hang(g, 50)      # 52 has the longest hang (4 s; 51's are 2.5 s and 2.4 s ongoing)
    assert (h.tid, h.start_ns, h.end_ns) == (52, s(1), s(5))
    h = H.find_hang(g, 50, at=s(5.5))
    assert (h.tid, h.start_ns, h.end_ns, h.ongoing) == (51, s(3.6), s(6), True)
    assert H.find_hang(g, 50, tid=51).tid == 51
    with pytest.raises(H.NoHangError) as e:
        H.find_hang(g, 50, threshold_ns=s(10))
    assert "pid 50 (no main thread in the trace; searched 2 threads)" in str(e.value)


def test_thread_silent_since_before_the_trace():
    t = Trace()
    t.thread(70, 70, "sleepy")
    t.thread(80, 80, "busy")
    t.run(80, 0)
    g = t.build(trace_end=s(10))
    with pytest.raises(H.NoHangError) as e:
        H.find_hang(g, 70)
    assert str(e.value).endswith("; no activity in the trace (blocked since before tracing started, reason unknown)")
    # the busy one: a LongRunning stretch over the whole trace, ongoing
    assert summary([H.find_hang(g, 80)]) == [("stretch", B.LONG_RUNNING, 0, s(10), True)]


def test_hang_to_dict():
    g = main_thread_day()
    d = H.find_hang(g, M).to_dict(g)
    assert {k: d[k] for k in ("pid", "tid", "comm", "process", "main", "kind", "block_type", "start_ns",
                              "end_ns", "dur_ns", "ongoing")} == \
        {"pid": M, "tid": M, "comm": "main", "process": "main", "main": True, "kind": "wait",
         "block_type": "LongWait", "start_ns": s(12.3), "end_ns": s(15), "dur_ns": s(2.7), "ongoing": True}


def test_wait_split_by_spurious_wakeups_is_one_hang():
    """read() woken every 1.5 s without data (the kernel sleeps again inside
    the syscall): three pieces, none >= 2 s, one 4.5 s hang."""
    from argus.tracer import schema
    from support.crafted import nr_of
    t = Trace()
    t.thread(M, M, "main")
    t.thread(20, W, "other")
    t.run(W, 0).run(M, 0)
    t.block(M, s(1), "read", "read", obj=5)
    for k in (1, 2):
        at = s(1 + 1.5 * k)
        t.wake(W, M, at)
        t.row(at + 10, M, schema.SWITCH_IN)
        t.row(at + 20, M, schema.SWITCH_OUT, state=schema.STATE_BLOCKED, reason=schema.WAIT_READ,
              nr=nr_of("read"), obj=5)
    t.wake(W, M, s(5.5)).run(M, s(5.5))
    t.block(M, s(6), "poll", "epoll_wait", obj=3)
    g = t.build(trace_end=s(7))
    (h,) = H.list_hangs(g, M)
    assert (h.kind, h.block_type, h.start_ns, h.end_ns, h.ongoing) == ("wait", B.LONG_WAIT, s(1), s(5.5), False)
    lw = h.classification.evidence["longest_wait"]
    assert (lw["pieces"], lw["start_ns"], lw["dur_ns"], lw["what"]) == (3, s(1), s(4.5), "read(fd 5)")
    assert h.vertex == g.segment_at(g.utid_of_tid(M), s(5))


def test_hang_for_vertex():
    g = main_thread_day()
    u = g.utid_of_tid(M)
    v = g.segment_at(u, s(7))
    h = H.hang_for_vertex(g, v)
    assert (h.kind, h.block_type, h.start_ns, h.end_ns, h.vertex) == ("wait", B.LONG_WAIT, s(6.1), s(9), v)
    v = g.segment_at(u, s(4.5))                       # ends in the 5.5-6.0 s poll
    h = H.hang_for_vertex(g, v)
    assert (h.kind, h.block_type, h.start_ns, h.end_ns) == ("wait", B.LONG_WAIT, s(5.5), s(6))
    v = g.thread_segments(u)[-1]
    h = H.hang_for_vertex(g, v)
    assert (h.kind, h.start_ns, h.end_ns, h.ongoing) == ("wait", s(12.3), s(15), True)
    w = g.thread_segments(g.utid_of_tid(W))[0]          # never blocks: its running span
    h = H.hang_for_vertex(g, w)
    assert (h.kind, h.block_type, h.start_ns, h.end_ns, h.ongoing) == ("stretch", B.LONG_RUNNING, 0, s(15), True)


def test_tid_and_at_name_the_vertex_even_when_idle():
    """--tid with --at on an idle poll: the hang is the wait there, marked
    user_named (the report says so); without --tid it is still no hang."""
    from argus.diagnose.algorithm import diagnose
    from argus.diagnose.report import render_text, to_json
    g = main_thread_day()
    with pytest.raises(H.NoHangError):
        H.find_hang(g, M, at=s(1))
    h = H.find_hang(g, M, tid=M, at=s(1))
    assert (h.kind, h.start_ns, h.end_ns, h.user_named) == ("wait", ms(100), s(3), True)
    assert h.classification.evidence["wait_model"]["kind"] == "idle"
    j = to_json(diagnose(g, M, tid=M, at=s(1)))
    assert j["spinning"]["user_named"] is True and j["spinning"]["start_ns"] == ms(100)
    assert "named by you (--tid and --at)" in render_text(j)
    # inside a hang the tool found: that hang, not marked
    assert not H.find_hang(g, M, tid=M, at=s(7)).user_named
    # in the running part of a vertex: its span
    h = H.find_hang(g, M, tid=M, at=s(12.25))
    assert (h.kind, h.start_ns, h.end_ns, h.user_named) == ("stretch", s(12.2), s(12.3), True)


def test_long_run_is_carved_out_of_a_yielding_stretch():
    """A Tcl-like loop idles in 50 ms timed futex waits (not POLL) and runs a
    3 s callback without blocking: the hang is the callback (LongRunning),
    not a RepeatedYield stretch over the idle waits around it."""
    t = Trace()
    t.thread(M, M, "wish")
    t.run(M, 0)
    now = ms(10)

    def idle(now, n):
        for _ in range(n):
            t.block(M, now, "futex", "futex", obj=0x9000)
            now += ms(50)
            t.timer_wake(M, now, ret=-110)
            now += ms(1)
        return now
    now = idle(now, 40)
    cb = now
    t.busy(M, cb, cb + s(3), slice_ns=ms(10), gap_ns=us(50))
    now = idle(cb + s(3), 30)           # 1.5 s: below the threshold
    g = t.build(trace_end=now + ms(10))
    hs = H.list_hangs(g, M)
    assert [(h.kind, h.block_type, h.start_ns) for h in hs] == [("stretch", B.LONG_RUNNING, cb - ms(1))]
    assert hs[0].end_ns == cb + s(3)


# --- a main thread that only joins another (the JVM launcher) ---

def launcher(main_joins=True):
    """pid 500's first thread starts 501 (the program's real main) and joins
    it: a futex wait on 501's tid word, flagged thread_exit.  501 computes
    from 1 s to 4 s, then waits in its loop until trace end."""
    from argus.tracer import schema
    L, J, WORD = 500, 501, 0x7F00_0000_0990
    t = Trace()
    t.thread(L, L, "java")
    t.thread(L, J, "java")
    t.run(L, 0).run(J, 0)
    t.syscall(L, ms(1), "futex", aux=137, obj=WORD)
    if main_joins:
        t.row(ms(1), L, schema.FUTEX_STATE, obj=WORD, val=J, peer_tid=J, nr=9, state=schema.FUTEX_THREAD_EXIT)
    t.block(L, ms(1), "futex", "futex", obj=WORD, enter=False)
    t.block(J, ms(2), "poll", "epoll_wait", obj=4)
    t.timer_wake(J, s(1))
    t.busy(J, s(1), s(4), slice_ns=ms(10), gap_ns=us(50))
    t.block(J, s(4), "poll", "epoll_wait", obj=4)
    return t.build(trace_end=s(6)), L, J


def test_a_main_thread_that_joins_stands_for_the_joined_thread():
    g, L, J = launcher()
    h = H.find_hang(g, L)
    assert (h.tid, h.block_type, h.start_ns) == (J, "LongRunning", s(1))
    assert h.classification.evidence["joined_by"]["tid"] == L
    # named with --tid, the join is the hang; without the thread_exit flag, too
    assert (H.find_hang(g, L, tid=L).tid, H.find_hang(g, L, tid=L).block_type) == (L, "LongWait")
    g, L, J = launcher(main_joins=False)
    assert H.find_hang(g, L).tid == L


def test_a_named_threads_longest_wait_is_its_hang_when_the_model_finds_none():
    """An event loop's poll that the idle model calls idle: `hangs --pid` and
    `debug --pid` both take it, marked as named by the user (issue 22, item 5)."""
    from support.crafted import Trace, ms, s
    from argus.diagnose.hangs import find_hang, list_hangs
    t = Trace()
    t.thread(10, 10, "loop")
    t.thread(20, 20, "peer")
    t.run(10, 0).run(20, 0)
    for k in range(8):                                   # an event loop: quick polls woken by the peer
        t.block(10, ms(100 * k + 1), "poll", "poll", obj=3)
        t.wake(20, 10, ms(100 * k + 2)).run(10, ms(100 * k + 2))
    t.block(10, s(1), "poll", "poll", obj=3)             # the long one: nothing tells it from idleness
    t.wake(20, 10, s(4)).run(10, s(4))
    g = t.build(until=s(5))
    listed = list_hangs(g, 10)
    h = find_hang(g, 10)
    assert [(x.start_ns, x.end_ns) for x in listed] == [(h.start_ns, h.end_ns)] == [(s(1), s(4))]
    assert h.user_named and h.classification.evidence["named_longest_wait"]
