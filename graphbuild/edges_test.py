"""Edges: program order, wakeups (culling, loopback, weak mutex heuristic),
spawns, data flags."""
from support import crafted as C
from support.crafted import Trace, ms, us


def edges(g, typ=None):
    out = []
    for e in range(g.num_edges):
        d = g.edge(e)
        if typ is None or d["type"] == typ:
            out.append((int(g.seg.tid[d["src"]]), d["src"], int(g.seg.tid[d["dst"]]), d["dst"], d["type"],
                        d["weak"], d["ts"]))
    return out


def proc():
    t = Trace()
    t.thread(10, 10, "a")
    t.thread(10, 11, "b")
    t.thread(20, 20, "c")
    return t


def test_wakeup_edge_from_waker_segment_containing_the_row():
    t = proc()
    t.run(10, ms(0)).block(10, ms(1), "read", "read", obj=3)
    t.run(11, ms(0)).block(11, ms(2), "futex", "futex", obj=0x40)
    t.wake(20, 11, ms(3))
    t.run(20, ms(2.5))
    t.run(11, ms(4))
    t.wake(11, 10, ms(5))
    t.run(10, ms(6))
    g = t.build()
    v = {tid: list(g.thread_segments(g.utid_of_tid(tid))) for tid in (10, 11, 20)}
    assert edges(g, "wakeup") == [
        (20, v[20][0], 11, v[11][1], "wakeup", False, ms(3)),
        (11, v[11][1], 10, v[10][1], "wakeup", False, ms(5)),
    ]
    assert edges(g, "program_order") == [      # edges are ordered by ts
        (11, v[11][0], 11, v[11][1], "program_order", False, ms(3)),
        (10, v[10][0], 10, v[10][1], "program_order", False, ms(5)),
    ]
    assert g.incoming_wakeup(v[10][1]) >= 0 and g.incoming_wakeup(v[10][0]) == -1


def test_kernel_wakeups_are_culled_with_wait_reason_labels():
    t = proc()
    t.run(10, ms(0)).block(10, ms(1), "sleep", "nanosleep")
    t.run(11, ms(0)).block(11, ms(1), "read", "recvfrom", obj=4)
    t.run(20, ms(0)).block(20, ms(1), "io", state="blocked_io")
    t.wake(0, 10, ms(2), "hardirq", "timer").run(10, ms(2))
    t.wake(20, 11, ms(1.5), "softirq", "net")          # 20 is interrupted, not sending
    t.run(11, ms(2))
    t.wake(0, 20, ms(3), "kthread")                      # tid 0 -> idle whatever the row says
    t.run(20, ms(3))
    t.block(10, ms(4), "sleep", "nanosleep")
    t.wake(11, 10, ms(5), "kthread").run(10, ms(5))      # a kworker woke it
    g = t.build()
    assert edges(g, "wakeup") == []
    assert g.stats["culled_wakeups"] == 4
    assert g.stats["culled_by_label"] == {"timer": 1, "net": 1, "idle": 1, "kthread": 1}
    labels = {tid: [g.start_label(v) for v in g.thread_segments(g.utid_of_tid(tid))] for tid in (10, 11, 20)}
    assert labels == {10: ["trace_start", "timer", "kthread"], 11: ["trace_start", "net"],
                      20: ["trace_start", "idle"]}


def test_loopback_net_softirq_inside_a_send_is_an_edge():
    t = proc()
    t.run(10, ms(0)).block(10, ms(1), "read", "recvfrom", obj=4)
    t.run(20, ms(0))
    t.syscall(20, ms(2), "sendto", obj=5)
    t.wake(20, 10, ms(2.1), "softirq", "net")
    t.syscall(20, ms(3), "sendto", obj=5, ret=10)        # exit of the earlier one is missing: fine
    t.run(10, ms(2.2))
    g = t.build()
    v20 = g.thread_segments(g.utid_of_tid(20))[0]
    v10 = g.thread_segments(g.utid_of_tid(10))[1]
    assert edges(g, "wakeup") == [(20, v20, 10, v10, "wakeup", False, ms(2.1))]
    assert g.stats["loopback_edges"] == 1 and g.stats["culled_wakeups"] == 0


def test_fork_and_wakeup_new_give_one_spawn_edge():
    t = proc()
    t.run(10, ms(0))
    t.fork(10, 12, ms(1), "kid")          # FORK + WAKEUP_NEW
    t.fork(10, 30, ms(2), "proc", child_pid=30, wake_new=False)
    t.run(12, ms(1.5))
    g = t.build()
    p = g.thread_segments(g.utid_of_tid(10))[0]
    k = g.thread_segments(g.utid_of_tid(12))[0]
    c = g.thread_segments(g.utid_of_tid(30))[0]
    assert edges(g, "spawn") == [(10, p, 12, k, "spawn", False, ms(1)), (10, p, 30, c, "spawn", False, ms(2))]
    assert g.processes[30] == {"name": "proc", "ppid": 10, "main_utid": g.utid_of_tid(30)}


def mutex_trace(lock_like=True):
    """Threads 10 and 11 take turns on one futex M (a mutex): each waits on it
    and each wakes the other on unlock.  With lock_like=False, 11 never waits
    on M (M used one way, like a condition variable signalled by 10)."""
    M = 0x5000
    t = proc()
    t.run(10, ms(0))
    t.run(11, ms(0))
    t.futex_wait(11, ms(1), M)                  # 11 blocks on M held by 10
    t.futex_wake(10, ms(2), M)
    t.wake(10, 11, ms(2.1))
    t.run(11, ms(2.2))
    if lock_like:
        t.futex_wait(10, ms(3), M)              # now 10 blocks, 11 holds
        t.futex_wake(11, ms(4), M)
        t.wake(11, 10, ms(4.1))
        t.run(10, ms(4.2))
    t.futex_wake(10, ms(5), 0x6000)             # a wake on another futex...
    t.futex_wait(11, ms(6), M)
    t.wake(10, 11, ms(7))                       # ...is not a wake of M: strong
    t.run(11, ms(7.1))
    return t.build()


def test_mutex_wakeups_are_weak():
    g = mutex_trace()
    got = [(a, b, w) for a, _, b, _, _, w, _ in edges(g, "wakeup")]
    assert got == [(10, 11, True), (11, 10, True), (10, 11, False)]
    assert g.stats["weak_edges"] == 2


def test_one_way_futex_stays_strong():
    g = mutex_trace(lock_like=False)
    assert [(a, b, w) for a, _, b, _, _, w, _ in edges(g, "wakeup")] == [(10, 11, False), (10, 11, False)]


def test_condition_variable_handshake_is_strong():
    t, _ = C.client_daemon(n_baseline=2, hang_s=0.001)
    g = t.build()
    assert g.stats["weak_edges"] == 0
    assert {(a, b) for a, _, b, _, _, _, _ in edges(g, "wakeup")} == {(100, 200), (200, 201), (201, 200), (200, 100)}


def test_data_flag_edges_last_write_to_first_observing_read():
    A = 0xAA00
    t = proc()
    t.run(10, ms(0)).run(11, ms(0))
    t.flag_read(11, ms(1), A)           # nothing written yet
    t.flag_write(10, ms(2), A)
    t.flag_read(10, ms(2.5), A)         # the writer itself: no edge
    t.flag_read(11, ms(3), A, 1)        # observes -> edge, episode 1..3 ms
    t.flag_read(11, ms(4), A, 1)        # same write again: no edge
    t.flag_write(10, ms(5), A, 2)
    t.flag_read(11, ms(6), A, 2)        # new write -> edge, episode 4..6 ms
    t.flag_read(11, ms(7), 0xBB00)      # another flag: nothing
    g = t.build()
    w = g.thread_segments(g.utid_of_tid(10))[0]
    r = g.thread_segments(g.utid_of_tid(11))[0]
    got = [(g.edge(e)["src"], g.edge(e)["dst"], g.edge(e)["ts"], g.edge(e)["src_ts"], g.edge(e)["wait_ns"],
            g.edge(e)["obj"]) for e in range(g.num_edges) if g.edge(e)["type"] == "data_flag"]
    assert got == [(w, r, ms(3), ms(2), ms(2), A), (w, r, ms(6), ms(5), ms(2), A)]
