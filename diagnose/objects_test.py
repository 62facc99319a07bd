"""Object identity and the other end of a wait, on crafted traces."""
from support.crafted import Trace, ms, s
from argus.diagnose import diagnose, to_json
from argus.diagnose.objects import other_end_holders, polled_holders, wait_identity

PARENT, CHILD, OTHER = 100, 101, 300


def _parent_reads_a_pipe_its_child_fills(until):
    """The parent forks a child that computes (it never touched the pipe, so
    the tracer has no FD_INFO of it) and reads the pipe; an unrelated busy
    process runs too."""
    t = Trace()
    t.thread(PARENT, PARENT, "server")
    t.thread(OTHER, OTHER, "noise")
    t.run(PARENT, 0).run(OTHER, 0)
    t.busy(OTHER, ms(1), s(4), slice_ns=ms(10), gap_ns=ms(1))
    t.fd_info(PARENT, ms(5), 3, "pipe", 4242)
    t.fork(PARENT, CHILD, ms(10), "server", child_pid=CHILD)
    t.run(CHILD, ms(10))
    t.busy(CHILD, ms(10), s(3.5), slice_ns=ms(10), gap_ns=us_(50))
    t.block(PARENT, ms(20), "read", "read", obj=3)
    return t.build(until=until)


def us_(x):
    return int(x * 1000)


def test_an_ongoing_pipe_read_is_held_by_the_child_that_inherited_it():
    g = _parent_reads_a_pipe_its_child_fills(s(3))
    v = g.segment_at(g.utid_of_tid(PARENT), s(1))
    assert wait_identity(g, v) == (2, 4242)
    holders = other_end_holders(g, v, ms(20), s(3))
    assert [(int(g.threads.tid[o.utid]), o.kind, o.weak) for o in holders] == [(CHILD, "channel_peer", True)]
    j = to_json(diagnose(g, PARENT))
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(CHILD, "LongRunning", True)]
    assert "holds the other end of what server/100 waits on" in j["root_causes"][0]["why"]


def test_a_unix_socket_peer_is_found_through_fd_info():
    t = Trace()
    t.thread(10, 10, "client")
    t.thread(20, 20, "server")
    t.thread(20, 21, "handler")
    t.run(10, 0).run(20, 0).run(21, 0)
    t.fd_info(10, ms(1), 4, "socket", 7001, 7002, family=1)
    t.fd_info(21, ms(2), 9, "socket", 7002, 7001, family=1)      # the handler thread serves it
    t.busy(21, ms(3), s(3), slice_ns=ms(10), gap_ns=ms(1))
    t.block(20, ms(3), "poll", "epoll_wait", obj=5)
    t.block(10, ms(4), "read", "read", obj=4)
    g = t.build(until=s(3))
    v = g.segment_at(g.utid_of_tid(10), s(1))
    (o,) = other_end_holders(g, v, ms(4), s(3))
    assert int(g.threads.tid[o.utid]) == 21                 # the thread that used it, not the main one


def test_a_regular_file_has_no_other_end():
    t = Trace()
    t.thread(10, 10, "app")
    t.thread(11, 11, "child", ppid=10)
    t.run(10, 0).run(11, 0)
    t.fd_info(10, ms(1), 4, "regular", 55)
    t.block(10, ms(4), "read", "read", obj=4)
    g = t.build(until=s(3))
    v = g.segment_at(g.utid_of_tid(10), s(1))
    assert other_end_holders(g, v, ms(4), s(3)) == []


def test_a_poller_of_a_pipe_is_held_by_the_writer():
    """Non-blocking reads of a pipe between 5 ms sleeps (RepeatedYield): the
    process at the pipe's other end is the holder."""
    t = Trace()
    t.thread(10, 10, "poller")
    t.thread(20, 20, "writer")
    t.run(10, 0).run(20, 0)
    t.fd_info(10, ms(1), 3, "pipe", 4343)
    t.fd_info(20, ms(1), 4, "pipe", 4343)
    t.busy(20, ms(2), s(3), slice_ns=ms(10), gap_ns=ms(1))
    x = ms(10)
    while x < s(3):
        t.syscall(10, x, "read", obj=3, ret=-11)          # EAGAIN
        t.block(10, x + us_(20), "sleep", "nanosleep")
        t.timer_wake(10, x + ms(5))
        x += ms(5) + us_(100)
    g = t.build(until=s(3))
    j = to_json(diagnose(g, 10))
    assert j["spinning"]["block_type"] == "RepeatedYield"
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(20, "LongRunning", True)]


def test_a_pair_between_threads_falls_back_to_the_waiters_own_threads():
    """A socketpair between two threads of one process; the holder has not
    used its end yet (no FD_INFO of it): the waiter's other threads hold it."""
    t = Trace()
    t.thread(10, 10, "app")
    t.thread(10, 11, "worker")
    t.thread(30, 30, "other")                            # an unrelated busy process: never
    t.run(10, 0).run(11, 0).run(30, 0)
    t.busy(30, ms(1), s(3), slice_ns=ms(10), gap_ns=ms(1))
    t.busy(11, ms(2), s(3), slice_ns=ms(10), gap_ns=ms(2))
    t.fd_info(10, ms(3), 5, "socket", 8001, 8002, family=1)
    t.block(10, ms(4), "read", "read", obj=5)
    g = t.build(until=s(3))
    v = g.segment_at(g.utid_of_tid(10), s(1))
    assert [int(g.threads.tid[o.utid]) for o in other_end_holders(g, v, ms(4), s(3))] == [11]


def test_a_polled_fd_last_recorded_as_a_regular_file_was_reused():
    """fd 3 was a regular file at start-up (an interpreter's module), then
    became a pipe to a child with no new record (select's fds are not
    recorded): a poll that blocks on it cannot be on a file, so the record
    is stale and the child that inherited the fd is the holder.  A read that
    blocks on a file keeps its record (no task holds a file's other end)."""
    for reason, syscall, holders in (("poll", "poll", [(CHILD, "channel_peer")]), ("read", "read", [])):
        t = Trace()
        t.thread(PARENT, PARENT, "server")
        t.run(PARENT, 0)
        t.fd_info(PARENT, ms(1), 3, "regular", 77)
        t.fork(PARENT, CHILD, ms(10), "server", child_pid=CHILD)
        t.run(CHILD, ms(10))
        t.busy(CHILD, ms(10), s(3), slice_ns=ms(10), gap_ns=us_(50))
        t.block(PARENT, ms(20), reason, syscall, obj=3)
        g = t.build(until=s(3))
        v = g.segment_at(g.utid_of_tid(PARENT), s(1))
        found = other_end_holders(g, v, ms(20), s(3))
        assert [(int(g.threads.tid[o.utid]), o.kind) for o in found] == holders


def test_a_waitpid_that_names_one_child_is_held_by_that_child_only():
    """The parent waits for child 102 (wait4's pid argument) while child 101,
    busier, computes too: only the named child holds the wait; with pid -1
    (any child) both do, the busiest first."""
    for want, holders in ((102, [102]), (-1, [101, 102])):
        t = Trace()
        t.thread(PARENT, PARENT, "server")
        t.run(PARENT, 0)
        for kid, gap in ((101, us_(20)), (102, ms(5))):
            t.fork(PARENT, kid, ms(1), "server", child_pid=kid)
            t.run(kid, ms(1))
            t.busy(kid, ms(1), s(3), slice_ns=ms(10), gap_ns=gap)
        t.block(PARENT, ms(5), "child", "wait4", obj=want & (2**64 - 1))     # the row keeps the raw argument
        g = t.build(until=s(3))
        v = g.segment_at(g.utid_of_tid(PARENT), s(1))
        found = other_end_holders(g, v, ms(5), s(3))
        assert [int(g.threads.tid[o.utid]) for o in found] == holders


def test_an_inherited_fd_goes_first_to_the_child_that_talked_with_the_waiter():
    """Two children inherited the pipe and neither used it yet: LOAD only
    computes since its fork; WORKER reported to the parent (a wakeup) and
    then blocked.  WORKER ranks first although LOAD is busier: exchange with
    the waiter's process since the fork outranks CPU."""
    load, worker = 101, 102
    t = Trace()
    t.thread(PARENT, PARENT, "server")
    t.run(PARENT, 0)
    t.fd_info(PARENT, ms(1), 3, "pipe", 4242)
    t.fork(PARENT, load, ms(2), "server", child_pid=load)
    t.run(load, ms(2))
    t.busy(load, ms(2), s(3), slice_ns=ms(10), gap_ns=us_(50))
    t.fork(PARENT, worker, ms(3), "server", child_pid=worker)
    t.block(PARENT, ms(4), "read", "read", obj=4)        # the worker's ready line
    t.run(worker, ms(5))
    t.wake_and_run(worker, PARENT, ms(6))
    t.block(worker, ms(7), "futex", "futex", obj=0x1000)
    t.block(PARENT, ms(20), "read", "read", obj=3)
    g = t.build(until=s(3))
    v = g.segment_at(g.utid_of_tid(PARENT), s(1))
    found = other_end_holders(g, v, ms(20), s(3))
    assert [int(g.threads.tid[o.utid]) for o in found] == [worker, load]


def test_a_poller_of_a_childs_exit_is_held_by_the_child_it_names():
    """The parent polls wait4(102, WNOHANG) between 5 ms sleeps (each call
    returns 0: not exited yet) while child 102 computes and child 101, busier,
    is unrelated load: the named child is the holder and the root cause."""
    t = Trace()
    t.thread(PARENT, PARENT, "server")
    t.run(PARENT, 0)
    for kid, gap in ((101, us_(20)), (102, ms(1))):
        t.fork(PARENT, kid, ms(1), "server", child_pid=kid)
        t.run(kid, ms(1))
        t.busy(kid, ms(1), s(3), slice_ns=ms(10), gap_ns=gap)
    x = ms(10)
    while x < s(3):
        t.syscall(PARENT, x, "wait4", obj=102, aux=1, ret=0)        # WNOHANG: nobody exited
        t.block(PARENT, x + us_(20), "sleep", "nanosleep")
        t.timer_wake(PARENT, x + ms(5))
        x += ms(5) + us_(100)
    g = t.build(until=s(3))
    u = g.utid_of_tid(PARENT)
    assert [(int(g.threads.tid[o.utid]), o.kind) for o in polled_holders(g, u, ms(10), s(3))] == [(102, "child")]
    j = to_json(diagnose(g, PARENT))
    assert j["spinning"]["block_type"] == "RepeatedYield"
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(102, "LongRunning", True)]


def test_a_child_that_never_talked_ranks_after_the_waiters_own_threads():
    """A socketpair between the main thread and its worker thread (the
    worker has not used its end yet; the main thread handed it its job, a
    wakeup), a load child, busier, forked after the pair was made, and an
    idle pool thread parked on its condition variable since before: the
    child inherited the fd but exchanged nothing with the process since its
    fork, so the worker ranks first; the parked thread, which never dealt
    with the waiter, ranks after the child."""
    load, worker, parked = 101, 103, 104
    t = Trace()
    t.thread(PARENT, PARENT, "app")
    t.thread(PARENT, worker, "worker")
    t.thread(PARENT, parked, "pool")
    t.run(PARENT, 0).run(worker, 0).run(parked, 0)
    t.busy(parked, 0, ms(1), slice_ns=ms(1))
    t.futex_wait(parked, ms(1), 0x77)
    t.fd_info(PARENT, ms(1), 5, "socket", 8001, 8002, family=1)
    t.fork(PARENT, load, ms(2), "app", child_pid=load)
    t.run(load, ms(2))
    t.busy(load, ms(2), s(3), slice_ns=ms(10), gap_ns=us_(20))
    t.futex_wait(worker, ms(2), 0x88)
    t.futex_wake(PARENT, ms(3), 0x88).wake(PARENT, worker, ms(3) + us_(1)).run(worker, ms(3) + us_(2))
    t.busy(worker, ms(3) + us_(2), s(3), slice_ns=ms(10), gap_ns=ms(2))
    t.block(PARENT, ms(4), "read", "read", obj=5)
    g = t.build(until=s(3))
    v = g.segment_at(g.utid_of_tid(PARENT), s(1))
    assert [int(g.threads.tid[o.utid]) for o in other_end_holders(g, v, ms(4), s(3))] == [worker, load, parked]
