"""A goroutine's own wait (goroutines.py): a goroutine not locked to a
thread sleeps 3 s with no thread waiting for it; the M that ran it after
its timer fired is named LongWait for it, not the hung main thread itself.

The crafted process: M0 (the main thread, its goroutine G0 locked to it),
M1 that runs G1 until G1 sleeps, M2 the M that polls the network and
runs Go's timers."""
from argus.tracer import schema
from argus.diagnose import diagnose, to_json
from argus.diagnose import goroutines as GR
from support.crafted import Trace, ms, s

P, M0, M1, M2, M3 = 500, 500, 501, 502, 503
G0, G1 = 0xC000000100, 0xC000000200
FUTEX = 0x7000
WAKE = s(3)


def go(t, at, tid, kind, g):
    return t.row(at, tid, kind, obj=g, obj2=0xC000000999, cpu=0)


def sleeper(go_rows=True, first_ready=False, late=False):
    """G1 parks in a Sleep at 1 ms (first_ready: before the probes were on,
    its first row is the timer's ready; late: no GO_* row at all before
    it, the probes came on at 3 s); G0 waits for it on a channel from
    2 ms; at 3 s Go's timer on M2 readies G1, which sends to G0."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    if go_rows and not late:
        go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
        if not first_ready:
            go(t, ms(0.2), M1, schema.GO_EXECUTE, G1)
            go(t, ms(1), M1, schema.GO_PARK, G1)
    t.exit(M1, ms(1.01))
    for k in range(1, 30):     # M2 polls the network until Go's next timer, every 100 ms
        t.block(M2, ms(100 * k - 99.5), "poll", "epoll_pwait", obj=3)
        t.timer_wake(M2, ms(100 * k), ret=0)
    t.block(M2, ms(2900.5), "poll", "epoll_pwait", obj=3)
    if go_rows and not late:
        go(t, ms(2), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(2.01), FUTEX)
    t.timer_wake(M2, WAKE)
    if go_rows:
        go(t, WAKE + ms(0.01), M2, schema.GO_READY, G1)
        go(t, WAKE + ms(0.02), M2, schema.GO_EXECUTE, G1)
        go(t, WAKE + ms(0.03), M2, schema.GO_READY, G0)
    t.futex_wake(M2, WAKE + ms(0.04), FUTEX)
    t.wake(M2, M0, WAKE + ms(0.04))
    if go_rows:
        go(t, WAKE + ms(0.05), M2, schema.GO_PARK, G1)
    t.block(M2, WAKE + ms(0.06), "poll", "epoll_pwait", obj=3)
    t.run(M0, WAKE + ms(0.1))
    if go_rows:
        go(t, WAKE + ms(0.11), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, WAKE + ms(100))
    return t.build(trace_end=WAKE + ms(200))


def test_the_goroutines_wait_before_its_stint():
    g = sleeper()
    v = g.segment_at(g.utid_of_tid(M2), WAKE + ms(0.03))
    w = GR.stint_wait(g, v, s(1))
    assert (w["goroutine"], w["park_ts"], w["end_ts"], w["ended_by"]) == (G1, ms(1), WAKE + ms(0.01), "runtime")
    assert GR.stint_wait(g, v, s(5)) is None           # shorter than the threshold
    g = sleeper(first_ready=True)
    v = g.segment_at(g.utid_of_tid(M2), WAKE + ms(0.03))
    w = GR.stint_wait(g, v, s(1))
    assert w["before_probes"] and w["park_ts"] == ms(0.1)  # parked since the first GO_* row at least
    g = sleeper(first_ready=True, late=True)
    v = g.segment_at(g.utid_of_tid(M2), WAKE + ms(0.03))
    w = GR.stint_wait(g, v, s(0.05))
    # Go's timers ran it: parked since M2 began the timed wait that its timer ended
    assert w["before_probes"] and w["park_ts"] == ms(2900.5) and w["ended_by"] == "runtime"


def test_the_m_that_ran_a_goroutine_after_its_long_sleep_is_named_for_it():
    j = to_json(diagnose(sleeper(), P))
    assert j["spinning"]["tid"] == M0
    primary = [c for c in j["root_causes"] if c["primary"]]
    assert [(c["tid"], c["block_type"]) for c in primary] == [(M2, "LongWait")]
    assert primary[0]["why"].startswith(f"LongWait on goroutine {G1:#x} parked (readied by Go's timers) for 2.999 s")


def test_without_go_rows_no_thread_stands_for_the_sleeper():
    j = to_json(diagnose(sleeper(go_rows=False), P))
    assert M2 not in [c["tid"] for c in j["root_causes"]]


def test_a_ready_first_on_its_thread_is_a_goroutines_when_another_parks_next():
    """M1's first GO_* row readies G0, its next parks GX that ran there: the
    probes came on while GX ran, and GX readied G0 (not Go's timers)."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
    go(t, ms(1), M0, schema.GO_PARK, G0)
    go(t, ms(50), M1, schema.GO_READY, G0)
    go(t, ms(50.01), M1, schema.GO_PARK, G1)
    go(t, ms(50.1), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, ms(60))
    g = t.build(trace_end=ms(70))
    w = GR.wait_before(g, P, G0, ms(50.1))
    assert (w["park_ts"], w["ready_tid"], w["ended_by"]) == (ms(1), M1, "goroutine")


def test_a_locked_goroutines_sleep_ends_with_gos_timers():
    """G0, locked to M0, sleeps from 1 ms; Go's timers on M2 ready it at 3 s
    and M2 wakes M0: the wait is the cause (timer_ended), where a wait that
    a goroutine's send ended (sleeper: G1 readied G0) is not."""
    t = Trace()
    for tid, name in ((M0, "main"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
    go(t, ms(0.2), M2, schema.GO_EXECUTE, G1)
    go(t, ms(0.3), M2, schema.GO_PARK, G1)
    go(t, ms(1), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(1.01), FUTEX)
    go(t, WAKE, M2, schema.GO_READY, G0)
    t.futex_wake(M2, WAKE + ms(0.01), FUTEX)
    t.wake(M2, M0, WAKE + ms(0.01))
    t.run(M0, WAKE + ms(0.02))
    go(t, WAKE + ms(0.03), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, WAKE + ms(10))
    g = t.build(trace_end=WAKE + ms(20))
    assert GR.timer_ended(g, g.segment_at(g.utid_of_tid(M0), ms(2)))
    g = sleeper()
    assert not GR.timer_ended(g, g.segment_at(g.utid_of_tid(M0), ms(5)))


def with_sysmon(go_rows=True):
    """sleeper() plus M3, Go's sysmon: it never runs a goroutine and polls
    in short sleeps (nanosleep, every 10 ms) the whole time."""
    t = Trace()
    for tid, name in ((M0, "main"), (M3, "m3")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    if go_rows:
        go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
    for k in range(1, 300):
        t.block(M3, ms(10 * k - 9.98), "sleep", "nanosleep")
        t.timer_wake(M3, ms(10 * k), ret=0)
    t.preempt(M0, s(3))
    return t.build(trace_end=s(3))


def test_a_go_thread_that_never_runs_a_goroutine_is_the_runtimes_relay():
    from types import SimpleNamespace
    from argus.diagnose import blocktype as B
    from argus.diagnose.algorithm import _Run
    for go_rows in (True, False):
        g = with_sysmon(go_rows)
        u = g.utid_of_tid(M3)
        c = B.classify(g, u, ms(1), s(3))
        assert c.block_type == "RepeatedYield"
        run = _Run(g, SimpleNamespace(start_ns=0, utid=g.utid_of_tid(M0)), None, s(2))
        # with the probes on, M3 never ran a goroutine: the runtime's (walked through);
        # without them it is a poller with a backoff sleep (a cause)
        assert run.relay(c) is go_rows and GR.runtime_thread(g, u) is go_rows


def sender_then_receiver_on_one_m():
    """G1 reads a socket from before the probes came on (no GO_* row of it
    until it runs again) and G0 waits on a channel for it.  At 3 s Go's
    timers ready G2 on M2, which writes the socket and parks; the
    netpoller hands G1 to the same M2: G1 reads, readies G0 and parks."""
    from graphbuild.heuristics_test import fd_info
    t = Trace()
    for tid, name in ((M0, "main"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    fd_info(t, M2, ms(0.5), 4, schema.FD_SOCKET, 101, 101, 102)
    fd_info(t, M2, ms(0.5), 5, schema.FD_SOCKET, 102, 102, 101)
    go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
    go(t, ms(1), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(1.01), FUTEX)
    t.block(M2, ms(2), "poll", "epoll_pwait", obj=3)
    t.timer_wake(M2, WAKE)
    go(t, WAKE + ms(0.01), M2, schema.GO_READY, G2)
    go(t, WAKE + ms(0.02), M2, schema.GO_EXECUTE, G2)
    t.syscall(M2, WAKE + ms(0.03), "write", obj=5, obj2=102, ret=1)
    go(t, WAKE + ms(0.04), M2, schema.GO_PARK, G2)
    go(t, WAKE + ms(0.05), M2, schema.GO_EXECUTE, G1)
    t.syscall(M2, WAKE + ms(0.06), "read", obj=4, obj2=101, ret=1)
    go(t, WAKE + ms(0.07), M2, schema.GO_READY, G0)
    t.futex_wake(M2, WAKE + ms(0.08), FUTEX)
    t.wake(M2, M0, WAKE + ms(0.08))
    go(t, WAKE + ms(0.09), M2, schema.GO_PARK, G1)
    t.block(M2, WAKE + ms(0.1), "poll", "epoll_pwait", obj=3)
    t.run(M0, WAKE + ms(0.1))
    go(t, WAKE + ms(0.11), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, WAKE + ms(100))
    return t.build(trace_end=WAKE + ms(200))


G2 = 0xC000000300


def test_a_sender_that_ran_on_the_same_m_just_before_is_the_cause():
    g = sender_then_receiver_on_one_m()
    m2 = g.utid_of_tid(M2)
    v = g.segment_at(m2, WAKE + ms(0.065))
    assert GR.stint(g, v)[0] == G1
    w = GR.stint_wait(g, v, s(1))
    # G1 waited from the process's first GO_* row until G2, on the same M, sent
    assert (w["goroutine"], w["ended_by"], w["ready_ts"]) == (G1, "netpoller", WAKE + ms(0.03))
    j = to_json(diagnose(g, P))
    primary = [c for c in j["root_causes"] if c["primary"]]
    assert [(c["tid"], c["block_type"]) for c in primary] == [(M2, "LongWait")]
    assert primary[0]["why"].startswith(f"LongWait on goroutine {G1:#x} parked (readied by Go's netpoller)")


# --- goroutines parked before the probes (GO_SNAPSHOT rows) ---

M4, M5 = 504, 505
GR1, GR2 = 0xC000000400, 0xC000000500
CH1, CH2 = 0xC000010000, 0xC000020000
PARK_FUTEX = {M0: 0x7100, M1: 0x7200, M2: 0x7300, M4: 0x7400}


def locked_chain(root="cpu", go_rows_after=False, snapshot=True):
    """The corpus's shape: main goroutine G0 (locked to M0) waits on
    channel CH1 for role 1 (G1, locked to M1), which waits on CH2 for role 2
    (G2, locked to M2), whose root is `root` ("cpu": M2 computes; "sleep":
    G2 sleeps).  Every goroutine parked within the first millisecond, long
    before the probes attached at 300 ms, and stays parked; each M sleeps on
    its own park futex.  M4 is a spare M (idle, futex); start-up hand-offs
    (M1 and M4 waking M0 on its park futex at 0.5 ms) are the only earlier
    waits of M0 on the same futex.  The snapshot at 300 ms names each
    locked goroutine's wait."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1"), (M2, "m2"), (M4, "m4")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    # start-up: M0 parks (readyCh) and M4 hands it over, twice
    for k, waker in enumerate((M4, M1)):
        t.futex_wait(M0, ms(0.1 + 0.2 * k), PARK_FUTEX[M0])
        t.futex_wake(waker, ms(0.2 + 0.2 * k), PARK_FUTEX[M0])
        t.wake(waker, M0, ms(0.2 + 0.2 * k))
        t.run(M0, ms(0.21 + 0.2 * k))
    t.futex_wait(M0, ms(0.9), PARK_FUTEX[M0])
    t.futex_wait(M1, ms(0.8), PARK_FUTEX[M1])
    t.futex_wait(M4, ms(0.7), PARK_FUTEX[M4])
    if root == "cpu":
        t.busy(M2, ms(1), s(5))
    else:
        t.futex_wait(M2, ms(0.95), PARK_FUTEX[M2])
    if snapshot:
        t.go_snapshot(ms(300), M0, G0, 1, "chan receive", CH1)
        t.go_snapshot(ms(300), M1, G1, 7, "chan receive", CH2)
        if root == "sleep":
            t.go_snapshot(ms(300), M2, G2, 8, "sleep")
        t.go_snapshot(ms(300), P, GR1, 2, "force gc (idle)", locked=False)
    if go_rows_after:           # G1 runs again after the snapshot: seen afterwards
        go(t, s(1), M1, schema.GO_EXECUTE, G1)
        go(t, s(1.001), M1, schema.GO_PARK, G1)
    return t.build(trace_end=s(5))


def test_a_locked_goroutine_parked_before_the_probes_is_its_ms_wait():
    g = locked_chain()
    p = GR.parked_locked(g, g.utid_of_tid(M1), s(5))
    assert (p["goid"], p["g"], p["wait"], p["wait_obj"], p["kind"], p["park_ts"]) == \
        (7, G1, "chan receive", CH2, "process", ms(300))
    assert GR.parked_locked(g, g.utid_of_tid(M1), ms(299)) is None      # before the snapshot
    assert GR.parked_locked(g, g.utid_of_tid(M4), s(5)) is None         # no goroutine locked there
    assert GR.describe_parked(p) == f"goroutine 7 locked here, parked before the probes: chan receive on channel {CH2:#x}"
    assert p["fd"] == -1
    assert GR.describe_parked(dict(p, wait="IO wait", wait_obj=0, fd=9)).endswith("IO wait on fd 9")
    g = locked_chain(root="sleep")
    assert GR.parked_locked(g, g.utid_of_tid(M2), s(5))["kind"] == "timer"
    # seen afterwards: it ran at 1 s and parked again on M1 (a reason unknown)
    g = locked_chain(go_rows_after=True)
    p = GR.parked_locked(g, g.utid_of_tid(M1), s(5))
    assert p["parked_again"] and p["park_ts"] == s(1.001) and p["wait"] == "parked"
    assert GR.parked_locked(g, g.utid_of_tid(M1), s(1.0005)) is None   # running then


def test_the_walk_follows_a_parked_chain_to_its_root_not_start_up_hand_offs():
    for root, block in (("cpu", "LongRunning"), ("sleep", "LongWait")):
        j = to_json(diagnose(locked_chain(root=root), P))
        assert j["spinning"]["tid"] == M0
        primary = [c for c in j["root_causes"] if c["primary"]]
        assert [(c["tid"], c["block_type"]) for c in primary] == [(M2, block)], (root, j["root_causes"])
        tids = [c["tid"] for c in j["root_causes"]]
        assert M4 not in tids                 # the spare M (idle) and the start-up waker are not causes
        if root == "sleep":
            assert "goroutine 8 locked here, parked before the probes: sleep" in primary[0]["why"]


def chain_to_a_sleeper(sleeper=True):
    """G0 (locked to M0) waits on CH1 for G1 (locked to M1), which waits on
    CH2; the goroutine that sends on CH2 is G2, locked to no thread and
    asleep (time.Sleep) since before the probes, and still asleep when the
    trace ends (the hang is in progress).  M4 is a spare M (idle, futex);
    M5 computes all along (a goroutine locked to it, unrelated load).  With
    `sleeper` False the snapshot did not see G2 (it was running then)."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1"), (M4, "m4"), (M5, "load")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    t.futex_wait(M0, ms(0.9), PARK_FUTEX[M0])
    t.futex_wait(M1, ms(0.8), PARK_FUTEX[M1])
    t.futex_wait(M4, ms(0.7), PARK_FUTEX[M4])
    t.busy(M5, ms(1), s(5))
    t.go_snapshot(ms(300), M0, G0, 1, "chan receive", CH1)
    t.go_snapshot(ms(300), M1, G1, 7, "chan receive", CH2)
    if sleeper:
        t.go_snapshot(ms(300), P, G2, 8, "sleep", locked=False)
    t.go_snapshot(ms(300), P, GR1, 2, "force gc (idle)", locked=False)
    return t.build(trace_end=s(5))


def test_a_goroutine_asleep_on_a_timer_comes_before_a_busy_thread():
    g = chain_to_a_sleeper()
    assert [(x["goid"], x["wait"]) for x in GR.timer_sleepers(g, P, s(5))] == [(8, "sleep")]
    assert GR.timer_sleepers(g, P, ms(299)) == []                # before the snapshot
    j = to_json(diagnose(g, P))
    primary = [c for c in j["root_causes"] if c["primary"]]
    # the idle M stands for the sleeper: the end of the chain, not walked further
    assert [(c["tid"], c["block_type"]) for c in primary] == [(M4, "LongWait")], j["root_causes"]
    assert "stands for goroutine 8, locked to no thread and asleep on a timer" in primary[0]["why"]
    assert M5 not in [c["tid"] for c in j["root_causes"]]
    # without the sleeper the busy thread is the likeliest sender, as before
    j = to_json(diagnose(chain_to_a_sleeper(sleeper=False), P))
    primary = [c for c in j["root_causes"] if c["primary"]]
    assert [(c["tid"], c["block_type"]) for c in primary] == [(M5, "LongRunning")], j["root_causes"]


def test_a_sleeper_seen_again_after_the_snapshot_is_not_asleep():
    t = Trace()
    t.thread(P, M0, "main")
    t.run(M0, 0)
    t.go_snapshot(ms(300), P, G2, 8, "sleep", locked=False)
    go(t, s(1), M0, schema.GO_READY, G2)         # its timer fired at 1 s
    g = t.build(trace_end=s(5))
    assert [x["goid"] for x in GR.timer_sleepers(g, P, ms(900))] == [8]
    assert GR.timer_sleepers(g, P, s(2)) == []


def sleeper_readied_by_a_busy_m(snapshot=True):
    """G0 (locked to M0) waits on CH1 for G2 (locked to M2), which the
    snapshot saw asleep ("sleep") since before the probes.  At 3.5 s Go's
    timer fires on M3, woken by the busy load thread M5, while M3 still
    counts as running goroutine GR2: its ready of G2 looks like GR2's
    doing.  G2 then sends to G0."""
    t = Trace()
    for tid, name in ((M0, "main"), (M2, "m2"), (M3, "m3"), (M5, "load")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    t.busy(M5, 0, s(5))
    go(t, ms(0.5), M3, schema.GO_EXECUTE, GR2)
    t.futex_wait(M3, ms(0.6), 0x7500)
    t.futex_wait(M0, ms(0.9), PARK_FUTEX[M0])
    t.futex_wait(M2, ms(0.95), PARK_FUTEX[M2])
    if snapshot:
        t.go_snapshot(ms(300), M0, G0, 1, "chan receive", CH1)
        t.go_snapshot(ms(300), M2, G2, 8, "sleep")
    t.futex_wake(M5, s(3.5), 0x7500).wake(M5, M3, s(3.5)).run(M3, s(3.5) + ms(0.005))
    go(t, s(3.5) + ms(0.01), M3, schema.GO_READY, G2)
    t.futex_wake(M3, s(3.5) + ms(0.012), PARK_FUTEX[M2]).wake(M3, M2, s(3.5) + ms(0.012))
    t.futex_wait(M3, s(3.5) + ms(0.02), 0x7500)
    t.run(M2, s(3.5) + ms(0.015))
    go(t, s(3.5) + ms(0.016), M2, schema.GO_EXECUTE, G2)
    go(t, s(3.5) + ms(0.02), M2, schema.GO_READY, G0)
    t.futex_wake(M2, s(3.5) + ms(0.022), PARK_FUTEX[M0]).wake(M2, M0, s(3.5) + ms(0.022))
    go(t, s(3.5) + ms(0.03), M2, schema.GO_PARK, G2)
    t.futex_wait(M2, s(3.5) + ms(0.031), PARK_FUTEX[M2])
    t.run(M0, s(3.5) + ms(0.025))
    go(t, s(3.5) + ms(0.026), M0, schema.GO_EXECUTE, G0)
    return t.build(trace_end=s(5))


def test_a_locked_goroutine_asleep_on_a_timer_ends_the_chain_whoever_ran_the_timer():
    g = sleeper_readied_by_a_busy_m()
    m2 = g.utid_of_tid(M2)
    v = g.segment_at(m2, s(2))
    assert GR.timer_park_readied(g, v)
    j = to_json(diagnose(g, P))
    primary = [c for c in j["root_causes"] if c["primary"]]
    assert [(c["tid"], c["block_type"]) for c in primary] == [(M2, "LongWait")], j["root_causes"]
    assert M5 not in [c["tid"] for c in j["root_causes"]]
    # without the snapshot nothing says G2 slept: the ready is M3's goroutine's
    g = sleeper_readied_by_a_busy_m(snapshot=False)
    assert not GR.timer_park_readied(g, g.segment_at(g.utid_of_tid(M2), s(2)))


def test_a_sleep_the_snapshot_saw_end_before_the_wait_is_not_the_waits():
    """The snapshot saw G2 asleep at 300 ms (a quick round before the hang);
    its timer readied it at 400 ms and it ran, then its M waited from 500 ms
    on something else: that wait is not the sleep's."""
    t = Trace()
    for tid, name in ((M2, "m2"), (M3, "m3")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    t.futex_wait(M2, ms(0.95), PARK_FUTEX[M2])
    t.go_snapshot(ms(300), M2, G2, 8, "sleep")
    go(t, ms(400), M3, schema.GO_READY, G2)
    t.futex_wake(M3, ms(400), PARK_FUTEX[M2]).wake(M3, M2, ms(400)).run(M2, ms(401))
    go(t, ms(402), M2, schema.GO_EXECUTE, G2)
    go(t, ms(499), M2, schema.GO_PARK, G2)
    t.futex_wait(M2, ms(500), PARK_FUTEX[M2])
    g = t.build(trace_end=s(5))
    m2 = g.utid_of_tid(M2)
    assert GR.timer_park_readied(g, g.segment_at(m2, ms(200)))      # the sleep's own wait
    assert not GR.timer_park_readied(g, g.segment_at(m2, s(2)))     # a later wait


def test_without_the_snapshot_the_rule_is_off():
    g = locked_chain(snapshot=False)
    assert GR.parked_locked(g, g.utid_of_tid(M1), s(5)) is None
    from argus.diagnose import blocktype as B
    c = B.classify(g, g.utid_of_tid(M4), s(1), s(5))
    assert not GR.idle_m(g, c, s(5))


def test_an_io_wait_with_its_fd_goes_to_the_other_process_first():
    """Main goroutine G0 (locked to M0) parked in the netpoller on fd 4, a
    unix socket whose other end (fd 5 of process Q) a busy server thread
    holds: the walk goes there, not to the Go program's own threads."""
    from graphbuild.heuristics_test import fd_info
    Q, S = 600, 601
    t = Trace()
    for pid, tid, name in ((P, M0, "main"), (P, M1, "m1"), (Q, S, "server")):
        t.thread(pid, tid, name)
        t.run(tid, 0)
    fd_info(t, M0, ms(0.2), 4, schema.FD_SOCKET, 101, 101, 102)
    fd_info(t, S, ms(0.2), 5, schema.FD_SOCKET, 102, 102, 101)
    t.futex_wait(M0, ms(0.9), PARK_FUTEX[M0])
    t.futex_wait(M1, ms(0.8), PARK_FUTEX[M1])
    t.busy(S, ms(1), s(5))
    t.row(ms(300), M0, schema.GO_SNAPSHOT, obj=G0, obj2=0, val=0, nr=1, aux=4, state=4, reason=0,
          irq=schema.GO_SNAP_LOCKED | schema.GO_SNAP_FD, peer_tid=0, peer_pid=0)
    t.go_snapshot(ms(300), M1, G1, 7, "chan receive", CH2)
    g = t.build(trace_end=s(5))
    assert GR.parked_locked(g, g.utid_of_tid(M0), s(5))["fd"] == 4
    j = to_json(diagnose(g, P))
    assert j["spinning"]["tid"] == M0
    primary = [c for c in j["root_causes"] if c["primary"]]
    assert [(c["tid"], c["block_type"]) for c in primary] == [(S, "LongRunning")], j["root_causes"]
    assert [c["depth"] for c in primary] == [1] and j["spinning"]["owner"]["kind"] != "goroutine_peer"


def test_a_goroutine_that_ran_between_the_attach_and_the_read_parked_there():
    """The probes attached at 300 ms, gosnap read G1 at 900 ms: G1 ran at
    500 ms and parked again at 501 ms, before the read, so the snapshot's
    reason is that park's (not "parked again"), since 501 ms."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    t.futex_wait(M1, ms(0.8), PARK_FUTEX[M1])
    go(t, ms(500), M1, schema.GO_EXECUTE, G1)
    go(t, ms(501), M1, schema.GO_PARK, G1)
    t.go_snapshot(ms(900), M1, G1, 7, "chan receive", CH2, since=ms(300))
    t.preempt(M0, s(3))
    g = t.build(trace_end=s(3))
    p = GR.parked_locked(g, g.utid_of_tid(M1), s(3))
    assert (p["wait"], p["park_ts"], p["parked_again"]) == ("chan receive", ms(501), False)


def test_a_file_lock_held_by_its_own_go_process():
    """lock_held_in_process: M0 of a Go program blocks in flock on inode 77
    and the kernel names a holder process: its own (a goroutine's lock, the
    inode), another one (None), or its own without goroutines in sight (a C
    program's thread that the graph core names: None)."""
    def build(holder, go_rows=True):
        t = Trace()
        t.thread(P, M0, "main").thread(P, M1, "m1")
        t.run(M0, 0).run(M1, 0)
        if go_rows:
            go(t, ms(0.5), M1, schema.GO_EXECUTE, G1)
        t.row(ms(2), M0, schema.SYSCALL_ENTER, nr=73, aux=2, obj=5)
        t.row(ms(2), M0, schema.FILE_LOCK, aux=5, state=schema.LOCK_FLOCK, reason=schema.LOCK_WRITE, peer_tid=1,
              obj=77, peer_pid=holder)
        t.block(M0, ms(2), "syscall", "flock", enter=False)
        g = t.build(trace_end=s(3))
        return g, g.segment_at(g.utid_of_tid(M0), s(1))
    g, v = build(P)
    assert GR.lock_held_in_process(g, v) == 77
    g, v = build(999)
    assert GR.lock_held_in_process(g, v) is None
    g, v = build(P, go_rows=False)
    assert GR.lock_held_in_process(g, v) is None


def test_a_goroutine_the_snapshot_saw_parked_waited_since_then():
    """G1 has no GO_* row before Go's timer readies it at 3 s (the probes
    came on late, and nothing ran meanwhile); the snapshot read at 300 ms,
    though, saw it parked (not locked to any M): its wait began by then at
    the latest, not when M2 began its last timed wait (2.9005 s)."""
    def build(snapshot):
        t = Trace()
        for tid, name in ((M0, "main"), (M2, "m2")):
            t.thread(P, tid, name)
            t.run(tid, 0)
        if snapshot:
            t.go_snapshot(ms(300), P, G1, 9, "chan receive", wait_obj=0xC000000777, locked=False, timer=True)
        t.futex_wait(M0, ms(2), FUTEX)
        t.block(M2, ms(2900.5), "poll", "epoll_pwait", obj=3)
        t.timer_wake(M2, WAKE)
        go(t, WAKE + ms(0.01), M2, schema.GO_READY, G1)
        go(t, WAKE + ms(0.02), M2, schema.GO_EXECUTE, G1)
        t.preempt(M2, WAKE + ms(1))
        return t.build(trace_end=WAKE + ms(200))
    g = build(snapshot=True)
    v = g.segment_at(g.utid_of_tid(M2), WAKE + ms(0.03))
    w = GR.stint_wait(g, v, s(1))
    assert (w["park_ts"], w["ended_by"], w["before_probes"]) == (ms(300), "runtime", True)
    assert GR.snapshot_since(g, P, G1, ms(299)) is None           # not read yet
    g = build(snapshot=False)
    v = g.segment_at(g.utid_of_tid(M2), WAKE + ms(0.03))
    assert GR.stint_wait(g, v, s(1)) is None                       # bounded by M2's last timed wait


def unpinned_sleeper_woken_through_a_busy_m():
    """G1, locked to no thread, parks in a Sleep on M1 at 1 ms; G0 (locked
    to M0) waits for it on a channel.  M2 is an idle M on its park futex,
    which the busy load thread M5 (its own goroutine locked to it,
    computing) wakes every 100 ms at a preemption point (the runtime's
    wakep): M2 spins and parks again.  5 ms before 3 s, M5 wakes it once
    more; M2 spins, backs off in a 20 us nanosleep, then runs Go's timers:
    it readies G1 (no goroutine ran on M2 before: the runtime's ready),
    runs it, and G1 sends to G0.  Case 162's shape (fourteenth session)."""
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "m1"), (M2, "m2"), (M5, "load")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    t.busy(M5, 0, s(5), slice_ns=ms(10), gap_ns=ms(0.05))
    go(t, ms(0.05), M5, schema.GO_EXECUTE, GR2)
    go(t, ms(0.1), M0, schema.GO_EXECUTE, G0)
    go(t, ms(0.2), M1, schema.GO_EXECUTE, G1)
    go(t, ms(1), M1, schema.GO_PARK, G1)
    t.futex_wait(M1, ms(1.01), PARK_FUTEX[M1])
    t.futex_wait(M2, ms(1.5), PARK_FUTEX[M2])
    go(t, ms(2), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(2.01), PARK_FUTEX[M0])
    for k in range(1, 29):     # M5 hands M2 work now and then: M2 spins and parks again
        at = ms(100 * k)
        t.futex_wake(M5, at, PARK_FUTEX[M2]).wake(M5, M2, at).run(M2, at + ms(0.005))
        t.futex_wait(M2, at + ms(0.02), PARK_FUTEX[M2])
    W = WAKE - ms(5)          # M2 spins 5 ms looking for work, then runs the timers
    t.futex_wake(M5, W, PARK_FUTEX[M2]).wake(M5, M2, W)
    t.run(M2, W + ms(0.005))
    t.block(M2, WAKE - ms(0.02), "sleep", "nanosleep")     # the spinning M's usleep(3) backoff
    t.timer_wake(M2, WAKE)
    go(t, WAKE + ms(0.01), M2, schema.GO_READY, G1)
    go(t, WAKE + ms(0.02), M2, schema.GO_EXECUTE, G1)
    go(t, WAKE + ms(0.03), M2, schema.GO_READY, G0)
    t.futex_wake(M2, WAKE + ms(0.04), PARK_FUTEX[M0]).wake(M2, M0, WAKE + ms(0.04))
    go(t, WAKE + ms(0.05), M2, schema.GO_PARK, G1)
    t.futex_wait(M2, WAKE + ms(0.06), PARK_FUTEX[M2])
    t.run(M0, WAKE + ms(0.1))
    go(t, WAKE + ms(0.11), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, WAKE + ms(100))
    return t.build(trace_end=s(5))


def test_an_unpinned_goroutine_the_runtime_readied_ends_the_chain():
    """The M that ran G1 is named LongWait for G1's sleep, and nothing
    behind it: the load thread that woke that M only handed the runtime a
    thread to run the timer on.  Without the rule the load thread is a
    depth-1 root found after M2, so primary (case 162)."""
    g = unpinned_sleeper_woken_through_a_busy_m()
    v = g.segment_at(g.utid_of_tid(M2), WAKE + ms(0.03))
    assert GR.stint_wait(g, v, s(1))["ended_by"] == "runtime"
    j = to_json(diagnose(g, P))
    assert j["spinning"]["tid"] == M0
    primary = [c for c in j["root_causes"] if c["primary"]]
    assert [(c["tid"], c["block_type"]) for c in primary] == [(M2, "LongWait")], j["root_causes"]
    assert M5 not in [c["tid"] for c in j["root_causes"]]
