"""The wait model on crafted graphs: idle loop waits vs synchronous, pending and nested ones."""
import numpy as np
import pytest

from support.crafted import Trace, ms, s, us
from argus.diagnose import waits as W
from argus.diagnose import hangs as H

CLI, SRV, OTHER = 100, 200, 300
CFD, SFD = 5, 7


def client_server(server_work_s=3.0, trace_end_s=6.0, server_lock=False, client_sleeps_first=False):
    """A client (pid 100) whose only waits are poll() on its socket (fd 5, like
    libpq) and a server (pid 200) idling in epoll_wait(9).  At 1 s the client
    sends a request (waking the server) and polls; the server works
    `server_work_s` (with server_lock: waits that long in a nested epoll set
    (fd 11) until pid 300 wakes it) and replies.  Returns (trace, times)."""
    t = Trace()
    t.thread(CLI, CLI, "client")
    t.thread(SRV, SRV, "server")
    t.thread(OTHER, OTHER, "other")
    t.run(CLI, 0).block(CLI, ms(1), "poll", "poll", obj=CFD)
    t.run(SRV, 0).block(SRV, ms(1), "poll", "epoll_wait", obj=9)
    t.run(OTHER, 0).block(OTHER, ms(1), "sleep", "nanosleep")
    T = s(1)
    t.timer_wake(CLI, T)
    t.syscall(CLI, T + us(10), "write", obj=CFD, ret=40)
    t.wake(CLI, SRV, T + us(20))
    t.block(CLI, T + us(30), "poll", "poll", obj=CFD)
    t.run(SRV, T + us(30), ret=1)
    t.syscall(SRV, T + us(40), "read", obj=SFD, ret=40)
    X = T + s(server_work_s)
    if server_lock:
        t.block(SRV, T + us(50), "poll", "epoll_wait", obj=11)
        t.timer_wake(OTHER, X - us(10))
        t.wake(OTHER, SRV, X)
        t.block(OTHER, X + us(5), "sleep", "nanosleep")
        t.run(SRV, X + us(5), ret=1)
    else:
        t.busy(SRV, T + us(30), X, slice_ns=ms(10), gap_ns=us(50))
    t.syscall(SRV, X + us(10), "write", obj=SFD, ret=100)
    t.wake(SRV, CLI, X + us(20))
    t.block(SRV, X + us(30), "poll", "epoll_wait", obj=9)
    t.run(CLI, X + us(30), ret=1)
    t.syscall(CLI, X + us(40), "read", obj=CFD, ret=100)
    if client_sleeps_first:
        # the client sleeps 2.5 s, then sends its next request
        t.block(CLI, X + us(50), "sleep", "nanosleep")
        Y = X + s(2.5)
        t.timer_wake(CLI, Y)
        t.syscall(CLI, Y + us(10), "write", obj=CFD, ret=40)
        t.wake(CLI, SRV, Y + us(20))
        t.run(SRV, Y + us(30), ret=1)
        t.block(SRV, Y + us(60), "poll", "epoll_wait", obj=9)
    t.block(CLI, X + us(60) + (s(3) if client_sleeps_first else 0), "poll", "poll", obj=CFD)
    return t, {"req": T, "reply": X + us(20)}


def kind_of(g, tid, at):
    u = g.utid_of_tid(tid)
    return W.wait_kind(g, g.segment_at(u, at))[0]


def test_request_then_poll_is_synchronous_and_the_server_loop_idle():
    t, tm = client_server()
    g = t.build(trace_end=s(6))
    assert kind_of(g, CLI, tm["req"] + ms(1)) == W.SYNC
    assert kind_of(g, CLI, ms(10)) == W.IDLE          # nothing sent before the first poll
    assert kind_of(g, SRV, ms(10)) == W.IDLE
    assert kind_of(g, SRV, tm["reply"] + ms(1)) == W.IDLE
    (h,) = H.list_hangs(g, CLI)
    assert (h.kind, h.block_type, h.start_ns, h.end_ns) == ("wait", "LongWait", tm["req"] + us(30), tm["reply"])
    assert h.classification.evidence["wait_model"]["kind"] == W.SYNC
    assert g.seg.utid[h.classification.evidence["wait_model"]["callee"]] == g.utid_of_tid(SRV)


def test_request_still_unanswered_at_trace_end_is_pending():
    t, tm = client_server()
    g = t.build(until=tm["req"] + s(2.5))
    assert kind_of(g, CLI, tm["req"] + ms(1)) == W.PENDING
    (h,) = H.list_hangs(g, CLI)
    assert h.ongoing and h.block_type == "LongWait"


def test_serving_server_blocked_outside_its_loop_is_crossed():
    """The server waits in a nested epoll set (a lock) before replying: the
    closure crosses that wait by program order (it is serving)."""
    t, tm = client_server(server_lock=True)
    g = t.build(trace_end=s(6))
    assert kind_of(g, CLI, tm["req"] + ms(1)) == W.SYNC
    assert kind_of(g, SRV, tm["req"] + ms(1)) == W.NESTED
    g2 = t.build(until=tm["req"] + s(2))
    assert kind_of(g2, CLI, tm["req"] + ms(1)) == W.PENDING


def test_reply_then_wait_for_a_client_that_slept_is_idle():
    """The server replied, then waited 2.5 s for the client's next request,
    sent after a timer: not downstream of the reply (a culled wakeup)."""
    t, tm = client_server(client_sleeps_first=True)
    g = t.build(trace_end=s(9))
    assert kind_of(g, SRV, tm["reply"] + ms(100)) == W.IDLE
    # the server's hangs: its 3 s of work, not its wait for the next request
    assert [(h.kind, h.block_type) for h in H.list_hangs(g, SRV)] == [("stretch", "LongRunning")]


def test_one_way_message_to_an_event_loop_does_not_connect():
    """The app writes to Xorg (no reply), goes idle; Xorg reads it and goes
    back to its loop; 3 s later a device interrupt makes Xorg send an event
    that wakes the app.  The app's wait is idle (Xorg's idle wait is not
    crossed by program order)."""
    t = Trace()
    t.thread(CLI, CLI, "app")
    t.thread(SRV, SRV, "Xorg")
    t.run(CLI, 0).block(CLI, ms(1), "poll", "poll", obj=3)
    t.run(SRV, 0).block(SRV, ms(1), "poll", "epoll_wait", obj=9)
    t.timer_wake(CLI, s(1))
    t.syscall(CLI, s(1) + us(10), "writev", obj=3, ret=32)
    t.wake(CLI, SRV, s(1) + us(20))
    t.block(CLI, s(1) + us(30), "poll", "poll", obj=3)
    t.run(SRV, s(1) + us(30), ret=1)
    t.block(SRV, s(1) + us(60), "poll", "epoll_wait", obj=9)
    t.wake(0, SRV, s(4), "hardirq", "device").run(SRV, s(4), ret=1)
    t.wake(SRV, CLI, s(4) + us(10))
    t.block(SRV, s(4) + us(20), "poll", "epoll_wait", obj=9)
    t.run(CLI, s(4) + us(20), ret=1)
    t.block(CLI, s(4) + us(60), "poll", "poll", obj=3)
    g = t.build(trace_end=s(5))
    assert kind_of(g, CLI, s(2)) == W.IDLE
    assert H.thread_hangs(g, g.utid_of_tid(CLI)) == []          # the idle model: no hang
    assert all(h.user_named for h in H.list_hangs(g, CLI))        # named by --pid: its longest wait, marked
    # cut while Xorg is back in its loop: nothing pending either
    assert kind_of(t.build(until=s(3)), CLI, s(2)) == W.IDLE


def test_daemon_back_on_its_queue_is_not_pending():
    """The loop hands a job to a daemon process (it wakes the daemon blocked
    on a futex in shared memory); the daemon finishes and waits on its queue
    again, without answering: the loop's next wait is idle; while the daemon
    still computes at trace end, it is pending."""
    REQ = 0x7000

    def handoff(daemon_done):
        t = Trace()
        t.thread(CLI, CLI, "ui")
        t.thread(SRV, SRV, "daemon")
        t.run(CLI, 0).block(CLI, ms(1), "poll", "epoll_wait", obj=3)
        t.run(SRV, 0).futex_wait(SRV, ms(1), REQ)
        t.timer_wake(CLI, s(1))
        t.futex_wake(CLI, s(1) + us(5), REQ)
        t.wake(CLI, SRV, s(1) + us(10))
        t.block(CLI, s(1) + us(20), "poll", "epoll_wait", obj=3)
        t.run(SRV, s(1) + us(20))
        if daemon_done:
            t.futex_wait(SRV, s(1) + ms(5), REQ)
        return t.build(trace_end=s(5))

    assert kind_of(handoff(True), CLI, s(2)) == W.IDLE
    assert kind_of(handoff(False), CLI, s(2)) == W.PENDING


def test_nested_wait_site():
    """A main loop polling its context (first fd 3) runs a nested loop on a
    private context (first fd 11), like GLib's call_sync."""
    t = Trace()
    t.thread(CLI, CLI, "gtk")
    t.run(CLI, 0)
    now = ms(1)
    for k in range(6):
        t.block(CLI, now, "poll", "poll", obj=3)
        now += ms(100)
        t.timer_wake(CLI, now)
        now += ms(1)
    t.block(CLI, now, "poll", "poll", obj=11)
    t.timer_wake(CLI, now + s(3))
    t.block(CLI, now + s(3) + ms(1), "poll", "poll", obj=3)
    g = t.build(trace_end=now + s(4))
    assert kind_of(g, CLI, now + s(1)) == W.NESTED
    assert kind_of(g, CLI, ms(50)) == W.IDLE
    (h,) = H.list_hangs(g, CLI)
    assert h.block_type == "LongWait" and h.start_ns == now and h.end_ns == now + s(3)


def test_forked_child_is_not_a_request():
    """A shell forks a background job and waits for input in pselect6: the
    child sleeping on is not something the shell waits for."""
    t = Trace()
    t.thread(CLI, CLI, "bash")
    t.run(CLI, 0).block(CLI, ms(1), "poll", "pselect6", obj=1)
    t.timer_wake(CLI, s(1))
    t.fork(CLI, 150, s(1) + us(10), "sleep", child_pid=150)
    t.block(CLI, s(1) + us(20), "poll", "pselect6", obj=1)
    t.run(150, s(1) + us(30)).block(150, s(1) + us(40), "sleep", "clock_nanosleep")
    g = t.build(trace_end=s(5))
    assert kind_of(g, CLI, s(2)) == W.IDLE


@pytest.mark.parametrize("runnable_ns", [0, ms(30)])
def test_repolls_after_timeouts_are_one_pending_wait(runnable_ns):
    """curl's multi loop: after its request it polls with a 1 s timeout,
    re-polls without blocking (returns 0) and polls again until the answer:
    one wait from the request to the answer, synchronous.  Also when a
    loaded CPU keeps curl runnable 30 ms after each timeout: the gap
    between the pieces is time on CPU, not wall time."""
    t = Trace()
    t.thread(CLI, CLI, "curl")
    t.thread(SRV, SRV, "server")
    t.run(CLI, 0).block(CLI, ms(1), "poll", "poll", obj=CFD)
    t.run(SRV, 0).block(SRV, ms(1), "poll", "epoll_wait", obj=9)
    T = s(1)
    t.timer_wake(CLI, T)
    t.syscall(CLI, T + us(10), "sendto", obj=CFD, ret=40)
    t.wake(CLI, SRV, T + us(20))
    t.block(CLI, T + us(30), "poll", "poll", obj=CFD)
    t.run(SRV, T + us(30), ret=1)
    for k in range(1, 4):                 # three 1 s timeouts, each followed by a non-blocking re-poll
        t.timer_wake(CLI, T + s(k), delay=runnable_ns, ret=0)
        t.syscall(CLI, T + s(k) + runnable_ns + us(5), "poll", obj=CFD, ret=0)
        t.block(CLI, T + s(k) + runnable_ns + us(10), "poll", "poll", obj=CFD)
    X = T + s(3.5)
    t.busy(SRV, T + us(30), X, slice_ns=ms(10), gap_ns=us(50))
    t.syscall(SRV, X, "write", obj=SFD, ret=100)
    t.wake(SRV, CLI, X + us(10))
    t.block(SRV, X + us(20), "poll", "epoll_wait", obj=9)
    t.run(CLI, X + us(20), ret=1)
    t.block(CLI, X + ms(1), "poll", "poll", obj=CFD)
    g = t.build(trace_end=s(6))
    hs = H.list_hangs(g, CLI)
    assert [(h.kind, h.block_type, h.start_ns, h.end_ns) for h in hs] == \
        [("wait", "LongWait", T + us(30), X + us(10))]
    assert hs[0].classification.evidence["wait_model"]["kind"] == W.SYNC
    assert W.first_piece(g, hs[0].vertex) == g.segment_at(g.utid_of_tid(CLI), T + ms(1))


def test_relay_is_followed_after_its_upstream_answers():
    """client -> proxy -> upstream: the proxy forwards the request and goes
    back to its loop; the upstream answers; the proxy reads part of it,
    waits in its loop again, and a culled net wakeup (the rest of the
    answer, held back by Nagle) makes it reply.  The client's wait is sync."""
    UP = 400
    t = Trace()
    t.thread(CLI, CLI, "client")
    t.thread(SRV, SRV, "proxy")
    t.thread(UP, UP, "upstream")
    for tid in (CLI, SRV, UP):
        t.run(tid, 0).block(tid, ms(1), "poll", "epoll_wait" if tid != CLI else "poll", obj=3)
    T = s(1)
    t.timer_wake(CLI, T)
    t.syscall(CLI, T + us(10), "sendto", obj=3, ret=40)
    t.wake(CLI, SRV, T + us(20))
    t.block(CLI, T + us(30), "poll", "poll", obj=3)
    t.run(SRV, T + us(30), ret=1)
    t.syscall(SRV, T + us(40), "sendto", obj=8, ret=40)
    t.wake(SRV, UP, T + us(50))
    t.block(SRV, T + us(60), "poll", "epoll_wait", obj=3)
    t.run(UP, T + us(60), ret=1)
    X = T + s(3)
    t.busy(UP, T + us(60), X, slice_ns=ms(10), gap_ns=us(50))
    t.syscall(UP, X, "sendto", obj=4, ret=100)
    t.wake(UP, SRV, X + us(10))
    t.block(UP, X + us(20), "poll", "epoll_wait", obj=3)
    t.run(SRV, X + us(20), ret=1)
    t.block(SRV, X + us(40), "poll", "epoll_wait", obj=3)
    t.wake(0, SRV, X + ms(40), "softirq", "net").run(SRV, X + ms(40), ret=1)
    t.syscall(SRV, X + ms(40) + us(10), "sendto", obj=7, ret=100)
    t.wake(SRV, CLI, X + ms(40) + us(20))
    t.block(SRV, X + ms(40) + us(30), "poll", "epoll_wait", obj=3)
    t.run(CLI, X + ms(40) + us(30), ret=1)
    t.block(CLI, X + ms(41), "poll", "poll", obj=3)
    g = t.build(trace_end=s(6))
    assert kind_of(g, CLI, T + ms(1)) == W.SYNC
    # the proxy itself waited for its upstream: synchronous too
    assert kind_of(g, SRV, T + ms(1)) == W.SYNC


def test_loop_site_ties_go_to_the_first_seen():
    """A backend seen once in its client loop (epoll fd 9) and once in a lock
    wait (epoll fd 4, a smaller fd): the loop is the one seen first."""
    t = Trace()
    t.thread(SRV, SRV, "postgres")
    t.run(SRV, 0).block(SRV, ms(1), "poll", "epoll_wait", obj=9)
    t.timer_wake(SRV, ms(10))
    t.block(SRV, ms(11), "poll", "epoll_wait", obj=4)
    g = t.build(trace_end=s(5))
    assert W.sites(g).loop_site(g.utid_of_tid(SRV)) == (W.site(g, g.segment_at(g.utid_of_tid(SRV), ms(5))))
    assert W.site(g, g.segment_at(g.utid_of_tid(SRV), ms(5)))[1] == 9


def test_loop_waiting_for_its_own_worker_pool_is_idle():
    """node / libuv: the loop hands a job to a pool thread and waits in its
    loop; the pool thread computes (or answers through the loop's eventfd):
    the loop stays responsive, its wait is idle.  The worker woke from one
    word of a glibc condition variable and waits on the adjacent one: home."""
    REQ = 0x7000
    t = Trace()
    t.thread(CLI, CLI, "node")
    t.thread(CLI, CLI + 1, "libuv-worker")
    t.run(CLI, 0).block(CLI, ms(1), "poll", "epoll_wait", obj=3)
    t.run(CLI + 1, 0).futex_wait(CLI + 1, ms(1), REQ)
    t.timer_wake(CLI, s(1))
    t.futex_wake(CLI, s(1) + us(5), REQ)
    t.wake(CLI, CLI + 1, s(1) + us(10))
    t.block(CLI, s(1) + us(20), "poll", "epoll_wait", obj=3)
    t.run(CLI + 1, s(1) + us(20))
    t.busy(CLI + 1, s(1) + us(20), s(4), slice_ns=ms(10), gap_ns=us(50))
    t.syscall(CLI + 1, s(4), "write", obj=9, ret=8)
    t.wake(CLI + 1, CLI, s(4) + us(10))
    t.futex_wait(CLI + 1, s(4) + us(20), REQ + 4)
    t.run(CLI, s(4) + us(20), ret=1)
    t.block(CLI, s(4) + ms(1), "poll", "epoll_wait", obj=3)
    g = t.build(trace_end=s(6))
    assert kind_of(g, CLI, s(2)) == W.IDLE
    assert kind_of(t.build(until=s(3)), CLI, s(2)) == W.IDLE
    assert H.thread_hangs(g, g.utid_of_tid(CLI)) == []
    assert all(h.user_named for h in H.list_hangs(g, CLI, tid=CLI))


def test_wait_sites_and_wait_fds_keep_separate_caches():
    """waits.sites(g) and g.wait_fds(v) both cache per graph; they once used
    the same attribute (g._wait_sites) for different objects, so whichever
    ran second failed.  Both orders, on one loop's poll wait site."""
    from support.crafted import Trace as CraftedTrace
    from argus.tracer import schema as S

    def graph():
        t = CraftedTrace()
        t.thread(10, 10, "loop")
        t.run(10, ms(1))
        t.syscall(10, ms(3), "poll", obj=5, aux=250, obj2=2)
        fds = {S.column(S.WAIT_SITE, "fds"): 0, S.column(S.WAIT_SITE, "nkept"): 2}
        t.row(ms(3), 10, S.WAIT_SITE, nr=7, aux=250, peer_pid=2, obj2=0xABC1, **fds)
        t.row(ms(3), 10, S.SWITCH_OUT, state=S.STATE_BLOCKED, reason=S.WAIT_POLL, nr=7, obj=5)
        t.timer_wake(10, ms(9))
        g = t.build(trace_end=ms(20))
        g.frames = np.array([5 | 1 << 32, 6 | 4 << 32], np.uint64)      # (fd, POLLIN), (fd, POLLOUT)
        return g, int(np.flatnonzero(g.seg.wait_reason == S.WAIT_POLL)[0])

    for first_sites in (True, False):
        g, v = graph()
        if first_sites:
            W.sites(g)
        assert g.wait_fds(v) == [(5, 1), (6, 4)]
        assert W.sites(g).loop_site(g.seg.utid[v]) is not None


# --- a futex waited for again after timeouts (rewait_continues) ---

LOCK, OTHER_WORD = 0x7000, 0x9000


def timed_monitor_wait(pieces_ms, between=None, worker_busy=True, last_woken=True, word_of=None):
    """HotSpot's contended monitor entry: the main thread (pid 100) parks on a
    futex with timeouts (pieces_ms, each ending -ETIMEDOUT), waking the
    runtime's internal mutex (nobody waits: 0) between tries, while a worker
    (tid 101) holds the monitor computing; the worker's exit unparks the last
    try.  between(t, at) adds what else the thread does between tries;
    word_of(k) the futex of try k.  Returns (trace, hang start, hang end)."""
    t = Trace()
    t.thread(CLI, CLI, "java")
    t.thread(CLI, CLI + 1, "worker")
    t.run(CLI, 0).block(CLI, ms(1), "poll", "epoll_wait", obj=3)
    t.run(CLI + 1, 0)
    t.thread(CLI, CLI + 2, "pool")
    t.run(CLI + 2, 0).futex_wait(CLI + 2, ms(1), OTHER_WORD)
    T = s(1)
    t.timer_wake(CLI, T)
    at = T + us(10)
    start = at
    for k, piece in enumerate(pieces_ms):
        t.block(CLI, at, "futex", "futex", obj=word_of(k) if word_of else LOCK, aux=C_FUTEX_WAIT_BITSET)
        at += ms(piece)
        last = k == len(pieces_ms) - 1
        if last and last_woken:
            t.wake_and_run(CLI + 1, CLI, at, ret=0)
            end = at
            break
        t.timer_wake(CLI, at, ret=-W.ETIMEDOUT)
        end = at
        at += us(20)
        t.syscall(CLI, at, "futex", aux=129, obj=LOCK + 0x100, ret=0)       # FUTEX_WAKE of nobody
        if between:
            between(t, at + us(5))
        at += us(20)
    if worker_busy:
        t.busy(CLI + 1, 0, end, slice_ns=ms(10), gap_ns=us(50))
    t.block(CLI, end + ms(1), "poll", "epoll_wait", obj=3)
    return t, start, end


C_FUTEX_WAIT_BITSET = 137       # FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG


def test_timed_out_futex_rewaits_are_one_long_wait():
    """1 s tries, the last unparked by the holder: one LongWait from the first
    try, whose last piece ended with the worker's wakeup."""
    t, start, end = timed_monitor_wait([512, 1000, 1000, 1000, 400])
    g = t.build(trace_end=s(6))
    (h,) = H.list_hangs(g, CLI, CLI)
    assert (h.kind, h.block_type, h.start_ns, h.end_ns) == ("wait", "LongWait", start, end)
    assert h.classification.evidence["longest_wait"]["pieces"] == 5
    assert W.first_piece(g, h.vertex) == g.segment_at(g.utid_of_tid(CLI), start + us(1))


def test_a_condition_variables_two_words_are_one_futex():
    t, start, end = timed_monitor_wait([1000, 1000, 1000], word_of=lambda k: LOCK + 4 * (k % 2))
    (h,) = H.list_hangs(t.build(trace_end=s(6)), CLI, CLI)
    assert (h.block_type, h.start_ns, h.classification.evidence["longest_wait"]["pieces"]) == ("LongWait", start, 3)


def test_polling_tries_and_broken_rewaits_stay_apart():
    """Short timed tries poll a data flag (RepeatedYield, algorithm_test has the
    advice); another futex, another syscall between tries, or a wake that woke
    somebody is not the same wait: no piece reaches the 2 s threshold."""
    short, _, _ = timed_monitor_wait([100] * 30)
    g = short.build(trace_end=s(6))
    assert [h.kind for h in H.list_hangs(g, CLI, CLI) if h.kind == "wait"] == []

    def other_syscall(t, at):
        t.syscall(CLI, at, "write", obj=1, ret=10)

    def woke_somebody(t, at):
        t.syscall(CLI, at, "futex", aux=129, obj=OTHER_WORD, ret=1)
        t.wake_and_run(CLI, CLI + 2, at + us(1))
        t.futex_wait(CLI + 2, at + us(3), OTHER_WORD)

    for variant in (dict(between=other_syscall), dict(between=woke_somebody),
                    dict(word_of=lambda k: LOCK + 64 * k)):
        t, _, _ = timed_monitor_wait([1000] * 4, **variant)
        hangs = H.list_hangs(t.build(trace_end=s(6)), CLI, CLI)
        assert [h for h in hangs if h.kind == "wait"] == [], variant


def test_a_try_that_failed_otherwise_breaks_the_wait():
    """-EAGAIN from a futex wait between tries: the word changed under it."""
    def eagain(t, at):
        t.syscall(CLI, at, "futex", aux=C_FUTEX_WAIT_BITSET, obj=LOCK, ret=-11)
    t, _, _ = timed_monitor_wait([1000] * 4, between=eagain)
    assert [h for h in H.list_hangs(t.build(trace_end=s(6)), CLI, CLI) if h.kind == "wait"] == []


def test_a_timer_callback_between_two_polls_is_no_repoll():
    """An event loop's poll times out (returns 0) and a timer callback computes
    3 s without a syscall before the next poll: that is work, not a wait."""
    t = Trace()
    t.thread(CLI, CLI, "app")
    t.run(CLI, 0).block(CLI, ms(1), "poll", "poll", obj=CFD)
    t.timer_wake(CLI, s(1), ret=0)
    t.busy(CLI, s(1), s(4), slice_ns=ms(10), gap_ns=us(50))
    t.block(CLI, s(4), "poll", "poll", obj=CFD)
    g = t.build(trace_end=s(6))
    assert [(h.kind, h.block_type, h.start_ns) for h in H.list_hangs(g, CLI)] == [("stretch", "LongRunning", s(1))]
