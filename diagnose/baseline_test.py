"""Baseline search: similar waits that ended quickly after a task's wakeup."""
from support.crafted import Trace, ms, s
from argus.diagnose.baseline import find_wait_baselines

T, T2, T3, WK = 10, 11, 12, 20


def test_candidates_and_ranking():
    t = Trace()
    t.thread(10, T, "worker")
    t.thread(10, T2, "worker")       # same comm, same process
    t.thread(10, T3, "other")
    t.thread(20, WK, "server")
    t.run(WK, 0).run(T, 0).run(T2, 0).run(T3, 0)
    t.fd_info(T, 0, 5, "pipe", 77).fd_info(T, 0, 6, "pipe", 78)     # one process: T2 shares them

    def wait(tid, at, dur, reason="read", sc="read", obj=5, waker=WK):
        t.block(tid, at, reason, sc, obj=obj)
        if waker:
            t.wake(waker, tid, at + dur)
        else:
            t.wake(0, tid, at + dur, "hardirq", "timer")
        t.run(tid, at + dur)

    wait(T, s(0.5), ms(1))                          # same thread, same fd, older
    wait(T, s(1.0), ms(2))                          # same thread, same fd, most recent before
    wait(T, s(1.2), ms(300))                        # too slow (>= 2 s / 10)
    wait(T, s(1.4), ms(1), "futex", "futex", 0x9)   # other wait reason
    wait(T, s(1.6), ms(1), "read", "recvfrom")      # other syscall
    wait(T, s(2.0), ms(1), obj=6)                   # other fd
    wait(T, s(2.5), ms(1), waker=None)              # woken by a timer: no baseline
    wait(T2, s(2.8), ms(1))                         # peer thread
    wait(T3, s(2.9), ms(1))                         # other comm: never
    t.block(T, s(3), "read", "read", obj=5)         # the hang
    t.wake(WK, T, s(6)).run(T, s(6))
    wait(T, s(9), ms(1))                            # after the hang
    g = t.build()
    u = g.utid_of_tid(T)
    hang = g.segment_at(u, s(4))
    bl = find_wait_baselines(g, hang, s(2))
    got = [(int(g.seg.tid[b.vertex]), b.wait_start_ns, b.same_thread, b.same_obj, b.before_hang, b.wait_ns)
           for b in bl]
    assert got == [
        (T, s(1.0), True, True, True, ms(2)),
        (T, s(0.5), True, True, True, ms(1)),
        (T, s(9), True, True, False, ms(1)),
        (T, s(2.0), True, False, True, ms(1)),
        (T2, s(2.8), False, True, True, ms(1)),
    ]
    b = bl[0]
    assert b.successor == b.vertex + 1 and g.edge(b.edge)["dst"] == b.successor
    assert g.edge(b.edge)["type"] == "wakeup"
    assert b.syscall_overlap == 1.0
    d = b.to_dict(g)
    assert (d["tid"], d["comm"], d["start_ns"]) == (T, "worker", s(1.0))
    # a tighter threshold leaves only the 1 ms waits
    assert [x.wait_ns for x in find_wait_baselines(g, hang, ms(15))] == [ms(1)] * 4


def test_spurious_wakeup_inside_the_same_syscall_is_no_baseline():
    """The app's read() is woken by the server (e.g. socket buffer space freed)
    without data; the kernel puts it back to sleep inside the same read(): no
    SYSCALL_EXIT between the two waits.  The earlier, complete request is the
    baseline."""
    from argus.tracer import schema
    from support.crafted import nr_of
    t = Trace()
    t.thread(10, T, "app")
    t.thread(20, WK, "server")
    t.run(WK, 0).run(T, 0)
    t.block(T, s(1), "read", "read", obj=5)
    t.wake(WK, T, s(1) + ms(1)).run(T, s(1) + ms(1))          # complete: exit follows
    t.block(T, s(2), "read", "read", obj=5)
    t.wake(WK, T, s(2) + ms(1))
    t.row(s(2) + ms(1), T, schema.SWITCH_IN)                  # spurious: no exit ...
    t.row(s(2) + ms(1) + 10, T, schema.SWITCH_OUT, state=schema.STATE_BLOCKED,
          reason=schema.WAIT_READ, nr=nr_of("read"), obj=5)   # ... back to sleep: the hang
    t.wake(WK, T, s(5)).run(T, s(5))
    g = t.build()
    segs = g.thread_segments(g.utid_of_tid(T))
    assert [bool(g.seg.wait_done[v]) for v in segs[:-1]] == [True, False, True]
    bl = find_wait_baselines(g, segs[2], s(2))
    assert [b.wait_start_ns for b in bl] == [s(1)]


def test_same_object_is_the_kernel_object_not_the_fd_number():
    """fd 5 was a file at start-up (an interpreter reading its modules), then
    a pipe to a child: an earlier quick wait on fd 5 is not on the same
    object, and a wait on fd 8, a dup of the pipe, is."""
    t = Trace()
    t.thread(10, T, "worker")
    t.thread(20, WK, "server")
    t.run(WK, 0).run(T, 0)

    def wait(at, fd):
        t.block(T, at, "read", "read", obj=fd)
        t.wake(WK, T, at + ms(1)).run(T, at + ms(1))

    t.fd_info(T, s(0.1), 5, "regular", 555)
    wait(s(0.2), 5)                                  # the file: another object
    t.fd_info(T, s(0.9), 5, "pipe", 77).fd_info(T, s(0.9), 8, "pipe", 77)
    wait(s(1.5), 8)                                  # the same pipe through another fd
    t.block(T, s(3), "read", "read", obj=5)          # the hang, on the pipe
    t.wake(WK, T, s(6)).run(T, s(6))
    g = t.build()
    hang = g.segment_at(g.utid_of_tid(T), s(4))
    from argus.diagnose.objects import wait_identity
    assert wait_identity(g, hang) == (2, 77)
    same = {b.wait_start_ns: b.same_obj for b in find_wait_baselines(g, hang, s(2))}
    assert same == {s(0.2): False, s(1.5): True}
    ranked = [b.wait_start_ns for b in find_wait_baselines(g, hang, s(2))]
    assert ranked == [s(1.5), s(0.2)]       # the same object first, though its fd differs
