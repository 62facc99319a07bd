"""Block type classification over a window, with its evidence."""
from support.crafted import Trace, ms, ETIMEDOUT
from argus.diagnose import blocktype as B

T = 10


def trace():
    t = Trace()
    t.thread(10, T, "t")
    t.thread(10, 11, "other")
    t.run(T, 0)
    return t


def cls(t, a=0, b=ms(1000), end=None):
    g = t.build(trace_end=end if end is not None else b)
    return g, B.classify(g, g.utid_of_tid(T), a, b)


def test_long_wait():
    t = trace()
    t.block(T, ms(300), "futex", "futex", obj=0xBEEF)
    t.wake(11, T, ms(900))
    t.run(11, ms(0))
    t.run(T, ms(900))
    g, c = cls(t)
    assert c.block_type == B.LONG_WAIT
    ev = c.evidence
    assert ev["cpu_ns"] == ms(400) and ev["cpu_share"] == 0.4 and ev["runnable_ns"] == 0
    lw = ev["longest_wait"]
    assert (lw["start_ns"], lw["end_ns"], lw["in_window_ns"], lw["reason"], lw["syscall"], lw["obj"], lw["what"]) == \
        (ms(300), ms(900), ms(600), "futex", "futex", 0xBEEF, "futex 0xbeef")
    assert ev["longest_wait_share"] == 0.6
    assert c.vertex == g.thread_segments(g.utid_of_tid(T))[0]


def test_long_wait_exactly_half_and_clipped_to_window():
    t = trace()
    t.block(T, ms(500), "read", "read", obj=7)          # ongoing to trace end (2 s)
    g, c = cls(t, 0, ms(1000), end=ms(2000))
    assert c.block_type == B.LONG_WAIT
    lw = c.evidence["longest_wait"]
    assert lw["in_window_ns"] == ms(500) and lw["ongoing"] and lw["end_ns"] == ms(2000)
    assert lw["what"] == "read(fd 7)"


def test_repeated_yield_from_yields():
    t = trace()
    for k in range(20):
        t.yield_(T, ms(25 + 50 * k), back=ms(25 + 50 * k) + 1000)
    g, c = cls(t)
    assert c.block_type == B.REPEATED_YIELD
    ev = c.evidence
    assert (ev["yields"], ev["short_waits"], ev["repeat_rate_per_s"], ev["mean_period_ns"]) == (20, 0, 20.0, ms(50))
    assert ev["cpu_share"] > 0.99          # busy too, but yielding wins (rule order)
    # all in one segment: yields do not split
    assert len(g.thread_segments(g.utid_of_tid(T))) == 1


def test_repeated_yield_from_short_sleeps():
    t = trace()
    for k in range(12):
        at = ms(80 * k + 10)
        t.block(T, at, "sleep", "nanosleep")
        t.timer_wake(T, at + ms(45))
    g, c = cls(t)
    assert c.block_type == B.REPEATED_YIELD
    ev = c.evidence
    assert (ev["yields"], ev["short_waits"], ev["timeouts"], ev["mean_period_ns"]) == (0, 12, 0, ms(80))


def test_computing_with_short_hand_offs_is_long_running():
    """Busy 94% of the window, with a 5 ms wait every 80 ms (a lock handed
    back and forth, a GIL): it computes, it does not poll."""
    t = trace()
    for k in range(12):
        at = ms(80 * k + 10)
        t.block(T, at, "futex", "futex", obj=0x44)
        t.wake(11, T, at + ms(5)).run(T, at + ms(5))
    g, c = cls(t)
    assert c.block_type == B.LONG_RUNNING
    assert (c.evidence["yields"], c.evidence["short_waits"], c.evidence["short_waits_woken"]) == (0, 12, 12)


def test_computing_with_a_runtimes_rare_yields_is_long_running():
    """The same, with two yields in the window (Go's scheduler yields now and
    then while it hands its Ps around): fewer than a repetition, so still
    computing; ten yields make a loop of them, and RepeatedYield."""
    for n, bt in ((2, B.LONG_RUNNING), (10, B.REPEATED_YIELD)):
        t = trace()
        for k in range(12):
            at = ms(80 * k + 10)
            if k < n:
                t.yield_(T, at - ms(2), back=at - ms(2) + 1000)
            t.block(T, at, "futex", "futex", obj=0x44)
            t.wake(11, T, at + ms(5)).run(T, at + ms(5))
        g, c = cls(t)
        assert (c.block_type, c.evidence["yields"]) == (bt, n)


def test_timed_out_waits_count_even_when_long():
    t = trace()
    for k in range(12):
        at = ms(150 * k + 10)
        t.block(T, at, "futex", "futex", obj=0x44)
        t.timer_wake(T, at + ms(100), ret=ETIMEDOUT)
    g, c = cls(t, 0, ms(2000))
    assert c.block_type == B.REPEATED_YIELD
    assert (c.evidence["short_waits"], c.evidence["timeouts"], c.evidence["repeat_rate_per_s"]) == (12, 12, 6.0)


def test_poll_waits_are_idle_not_short_waits():
    t = trace()
    for k in range(15):
        at = ms(60 * k + 10)
        t.block(T, at, "poll", "epoll_wait", obj=3)
        t.timer_wake(T, at + ms(5))
    g, c = cls(t)
    assert c.evidence["short_waits"] == 0
    assert c.block_type == B.LONG_RUNNING          # 925 ms on CPU


def test_nine_repeats_are_not_enough():
    t = trace()
    for k in range(9):
        at = ms(100 * k + 10)
        t.block(T, at, "sleep", "nanosleep")
        t.timer_wake(T, at + ms(5))
    t.block(T, ms(950), "read", "read", obj=1)
    g, c = cls(t)
    assert c.evidence["short_waits"] == 9
    assert c.block_type == B.LONG_RUNNING


def test_long_running_counts_runnable():
    t = trace()
    t.preempt(T, ms(300))
    t.run(T, ms(500))                  # runnable 200 ms
    t.block(T, ms(600), "read", "read", obj=1)
    t.wake(11, T, ms(950)).run(11, 0)
    t.run(T, ms(950))
    g, c = cls(t)
    ev = c.evidence
    assert (ev["cpu_ns"], ev["runnable_ns"]) == (ms(450), ms(200))
    assert ev["longest_wait_share"] == 0.35
    assert c.block_type == B.LONG_RUNNING
    assert c.vertex == g.thread_segments(g.utid_of_tid(T))[0]


def test_normal():
    t = trace()
    for k in range(3):
        at = ms(100 + 300 * k)
        t.block(T, at, "read", "read", obj=1)
        t.wake(11, T, at + ms(200))
        t.run(T, at + ms(200))
    t.run(11, 0)
    g, c = cls(t)
    ev = c.evidence
    assert (ev["cpu_share"], ev["longest_wait_share"], ev["short_waits"]) == (0.4, 0.2, 0)
    assert c.block_type == B.NORMAL and not c.abnormal


def test_empty_window_is_normal():
    g, c = cls(trace(), ms(5), ms(5))
    assert c.block_type == B.NORMAL


def test_syscall_counts_and_flag_reads():
    t = trace()
    t.syscall(T, ms(1), "write", obj=1, ret=1)
    t.syscall(T, ms(2), "write", obj=1, ret=1)
    t.yield_(T, ms(3))
    t.flag_read(T, ms(4), 0xF0)
    t.flag_read(T, ms(5), 0xF0)
    t.flag_write(T, ms(6), 0xF8)
    g = t.build()
    u = g.utid_of_tid(T)
    assert B.syscall_counts(g, u, 0, ms(10)) == {"write": 2, "sched_yield": 1}
    assert B.syscall_counts(g, u, ms(1.5), ms(10)) == {"sched_yield": 1, "write": 1}
    assert B.flag_reads(g, u, 0, ms(10)) == {0xF0: 2}


def test_backoff_sleeps_are_repeated_yield():
    """A thread polling with growing sleeps (1..100 ms, like SQLite's busy
    handler) over a 3 s window is RepeatedYield, though most sleeps last
    longer than 20 ms; the same thread sleeping 1 s at a time is not."""
    from support.crafted import Trace, ms, s as sec

    def poller(step_ms):
        t = Trace()
        t.thread(700, 700, "poller")
        now = 0
        k = 0
        backoff = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50]
        t.run(700, 0)
        while now < sec(3):
            nap = ms(step_ms if step_ms else (backoff[k] if k < len(backoff) else 100))
            t.block(700, now + ms(1) // 10, "sleep", "clock_nanosleep")
            t.wake(0, 700, now + ms(1) // 10 + nap, "hardirq", "timer").run(700, now + ms(1) // 10 + nap)
            now += ms(1) // 10 + nap
            k += 1
        return t.build(trace_end=sec(4))

    g = poller(None)
    c = B.classify(g, 0, 0, sec(3))
    assert c.block_type == B.REPEATED_YIELD, c.evidence
    assert c.evidence["short_waits"] >= 30
    g = poller(1000)
    assert B.classify(g, 0, 0, sec(3)).block_type != B.REPEATED_YIELD


def stepped(state):
    """T spins on the CPU for 1 s while a debugger single-steps it from 100 ms
    to 900 ms: a tracer stop of 60 us after every 40 us of running (8000
    stops); `state` is how the switch-outs record the stop (traced, or other
    as in traces recorded before the traced state existed)."""
    t = trace()
    for k in range(8000):
        at = ms(100) + k * 100_000
        t.row(at + 40_000, T, B.schema.SWITCH_OUT, state=state)
        t.wake(11, T, at + 99_000)
        t.row(at + 100_000, T, B.schema.SWITCH_IN)
    return t


def test_single_stepped_spinner_stays_long_running():
    """Tracer stops are not yields or waits: a thread on CPU for all the time
    the debugger let it run is LongRunning, in new traces (state traced) and
    old ones (state other)."""
    for state in (B.schema.STATE_TRACED, B.schema.STATE_OTHER):
        g, c = cls(stepped(state))
        ev = c.evidence
        assert c.block_type == B.LONG_RUNNING, (state, ev)
        assert ev["short_waits"] == 0 and ev["yields"] == 0 and ev["longest_wait"] is None
        assert abs(ev["stopped_ns"] - 8000 * 60_000) <= 8000 * 1_000       # other: until the wakeup
        assert ev["cpu_share"] >= 0.95 and ev["runnable_share"] < 0.05
    # the traced stops do not even split the thread's vertex
    g, _ = cls(stepped(B.schema.STATE_TRACED))
    assert len(g.thread_segments(g.utid_of_tid(T))) == 1


def test_a_thread_stopped_all_window_is_normal():
    t = trace()
    t.row(ms(10), T, B.schema.SWITCH_OUT, state=B.schema.STATE_TRACED)
    g, c = cls(t, a=ms(100), b=ms(900))
    assert c.block_type == B.NORMAL and c.evidence["stopped_ns"] == ms(800)


def test_a_device_paced_loop_runnable_after_each_completion_stays_repeated_yield():
    """An fsync loop on a loaded machine: each wait ended by the disk's
    interrupt, then runnable for most of the gap before it runs: busy by
    the numbers, but the device paces it (blocktype.device_paced)."""
    t = trace()
    for k in range(200):
        at = ms(5 * k + 10)
        t.block(T, at, "io", "fsync")
        t.wake(0, T, at + ms(0.2), "softirq", "block")
        t.run(T, at + ms(4.5))
    g, c = cls(t)
    assert c.evidence["runnable_share"] > 0.8 and c.evidence["short_waits_kernel"] == c.evidence["short_waits"]
    assert c.block_type == B.REPEATED_YIELD


def test_computing_with_page_ins_is_long_running():
    """On CPU nearly all the window, with short waits the disk ended (a
    service reading its files as it starts): it computes, it is not paced
    by the device."""
    t = trace()
    for k in range(20):
        at = ms(40 * k + 10)
        t.block(T, at, "io", "read")
        t.wake(0, T, at + ms(0.3), "softirq", "block")
        t.run(T, at + ms(0.3))
    g, c = cls(t)
    assert c.evidence["short_waits_kernel"] == 20 and c.evidence["cpu_share"] > 0.9
    assert not B.device_paced(c.evidence) and c.block_type == B.LONG_RUNNING
