"""Segments: where vertices start and end, what they hold."""
import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from support.crafted import Trace, ms, us, nr_of, ETIMEDOUT


def seg_of(g, tid):
    u = g.utid_of_tid(tid)
    return [g.vertex(v) for v in g.thread_segments(u)]


def two_threads():
    t = Trace()
    t.thread(10, 10, "main")
    t.thread(10, 11, "worker")
    return t


def test_segment_splits_at_blocking_wait_not_at_preemption_or_yield():
    t = two_threads()
    t.run(10, ms(0))
    t.preempt(10, ms(1))                  # preempted: runnable 1 ms
    t.run(10, ms(2))
    t.yield_(10, ms(3), back=ms(4))       # yields: runnable 1 ms
    t.block(10, ms(5), "futex", "futex", obj=0x1000)
    t.wake(11, 10, ms(8))
    t.run(11, ms(0))
    t.run(10, ms(9))
    t.block(10, ms(10), "io", state="blocked_io")
    g = t.build(trace_end=ms(20))
    s = seg_of(g, 10)
    assert [(x["start"], x["end"], x["end_kind"]) for x in s] == [
        (0, ms(5), "blocked"), (ms(8), ms(10), "blocked")]
    a, b = s
    assert a["cpu_ns"] == ms(3) and a["runnable_ns"] == ms(2)
    assert a["preempts"] == 1 and a["yields"] == 1
    assert (a["wait_start"], a["wait_end"], a["wait_reason"], a["wait_nr"], a["wait_obj"]) == \
        (ms(5), ms(8), schema.WAIT_FUTEX, nr_of("futex"), 0x1000)
    assert a["wait_state"] == schema.STATE_BLOCKED and not a["wait_ongoing"]
    assert b["start_label"] == "task" and b["start_kind"] == G.START_WAKEUP
    assert b["cpu_ns"] == ms(1) and b["runnable_ns"] == ms(1)    # woken at 8, on CPU at 9
    assert b["wait_state"] == schema.STATE_BLOCKED_IO and b["wait_reason"] == schema.WAIT_IO
    assert b["wait_ongoing"] and b["wait_end"] == ms(20)
    assert b["wait_nr"] == schema.SYSCALL_NONE
    # the waker keeps running: one segment to trace end
    w = seg_of(g, 11)
    assert [(x["start"], x["end"], x["end_kind"], x["cpu_ns"]) for x in w] == [(0, ms(20), "trace_end", ms(20))]


def test_switch_in_without_wakeup_starts_a_segment():
    t = two_threads()
    t.run(10, ms(0))
    t.block(10, ms(1), "sleep", "nanosleep")
    t.run(10, ms(3))
    g = t.build(trace_end=ms(4))
    s = seg_of(g, 10)
    assert [(x["start"], x["start_label"]) for x in s] == [(0, "trace_start"), (ms(3), "switch_in")]
    assert s[0]["wait_end"] == ms(3)


def test_only_first_wakeup_ends_the_wait():
    t = two_threads()
    t.run(10, ms(0)).block(10, ms(1), "read", "read", obj=3)
    t.run(11, ms(0))
    t.wake(11, 10, ms(2))
    t.wake(11, 10, ms(2.5))        # already runnable: ignored
    t.run(10, ms(3))
    t.wake(11, 10, ms(3.5))        # running: ignored
    g = t.build()
    s = seg_of(g, 10)
    assert [x["start"] for x in s] == [0, ms(2)]
    assert g.stats["ignored_wakeups"] == 2
    assert sum(1 for e in range(g.num_edges) if g.edge(e)["type"] == "wakeup") == 1


def test_thread_blocked_before_trace_gets_placeholder():
    t = two_threads()
    t.thread(20, 20, "idle")               # snapshot only: blocked the whole trace
    t.run(11, ms(0))
    t.wake(11, 10, ms(5))                  # 10's first row: it was blocked
    t.run(10, ms(6))
    g = t.build(trace_end=ms(10))
    s = seg_of(g, 10)
    assert [(x["start"], x["end"], x["start_label"], x["wait_known"]) for x in s] == [
        (0, 0, "pre_trace", False), (ms(5), ms(10), "task", True)]
    assert s[0]["wait_start"] == 0 and s[0]["wait_end"] == ms(5)
    i = seg_of(g, 20)
    assert [(x["start_label"], x["wait_end"], x["wait_ongoing"], x["wait_known"]) for x in i] == [
        ("pre_trace", ms(10), True, False)]


def test_timed_out_wait_is_flagged():
    t = two_threads()
    t.run(10, ms(0))
    t.block(10, ms(1), "futex", "futex", obj=0x10, aux=0)
    t.timer_wake(10, ms(11), ret=ETIMEDOUT)
    t.block(10, ms(12), "futex", "futex", obj=0x10, aux=0)
    t.timer_wake(10, ms(13), ret=0)
    g = t.build()
    s = seg_of(g, 10)
    assert [x["wait_timedout"] for x in s] == [True, False, False]
    assert s[1]["start_label"] == "timer"


def test_exit_and_fork_lifetime():
    t = two_threads()
    t.run(10, ms(0))
    t.fork(10, 12, ms(1), "child")
    t.run(12, ms(2))
    t.exit(12, ms(4))
    g = t.build(trace_end=ms(10))
    s = seg_of(g, 12)
    assert [(x["start"], x["end"], x["start_label"], x["end_kind"], x["cpu_ns"], x["runnable_ns"]) for x in s] == [
        (ms(1), ms(4), "thread_start", "exit", ms(2), ms(1))]


def test_rows_belong_to_their_segment():
    t = two_threads()
    t.run(10, ms(0))
    t.syscall(10, ms(0.5), "write", obj=4, ret=1)
    t.block(10, ms(1), "read", "read", obj=3)
    t.run(11, ms(0)).wake(11, 10, ms(2))
    t.run(10, ms(3))
    t.syscall(10, ms(3.5), "sendto", obj=4, ret=1)
    g = t.build()
    u = g.utid_of_tid(10)
    v0, v1 = g.thread_segments(u)
    types0 = [schema.TYPE_NAMES[x] for x in g.rows[g.segment_rows(v0)]["type"]]
    types1 = [schema.TYPE_NAMES[x] for x in g.rows[g.segment_rows(v1)]["type"]]
    assert types0 == ["switch_in", "syscall_enter", "syscall_exit", "syscall_enter", "switch_out"]
    assert types1 == ["switch_in", "syscall_exit", "syscall_enter", "syscall_exit"]
    assert g.segment_syscalls(v0) == {nr_of("write"): 1, nr_of("read"): 1}
    assert g.segment_syscalls(v1) == {nr_of("sendto"): 1}
    assert np.array_equal(g.thread_rows_of(u), np.concatenate([g.segment_rows(v0), g.segment_rows(v1)]))


def test_running_and_runnable_intervals():
    t = two_threads()
    t.run(10, ms(1))
    t.preempt(10, ms(2))
    t.run(10, ms(4))
    t.block(10, ms(5), "sleep", "nanosleep")
    g = t.build(trace_end=ms(6))
    u = g.utid_of_tid(10)
    run = g.running
    sel = slice(g.run_lo[u], g.run_hi[u])
    assert list(zip(run.start[sel].tolist(), run.end[sel].tolist())) == [(ms(1), ms(2)), (ms(4), ms(5))]
    sel = slice(g.rbl_lo[u], g.rbl_hi[u])
    assert list(zip(g.runnable.start[sel].tolist(), g.runnable.end[sel].tolist())) == [(ms(2), ms(4))]


def test_exiting_thread_runs_until_its_dead_switch_out():
    t = two_threads()
    t.run(11, ms(0)).block(11, ms(1), "child", "wait4")
    t.run(10, ms(0))
    t.row(ms(2), 10, schema.EXIT, val=0, state=1)
    t.wake(10, 11, ms(2.5))                    # the exiting thread wakes its parent
    t.row(ms(3), 10, schema.SWITCH_OUT, state=schema.STATE_DEAD)
    t.run(11, ms(3))
    g = t.build(trace_end=ms(5))
    assert len(g.utids_of_tid(10)) == 1 and g.stats["tid_reuse"] == 0
    (s10,) = seg_of(g, 10)
    assert (s10["start"], s10["end"], s10["end_kind"], s10["cpu_ns"]) == (0, ms(3), "exit", ms(3))
    assert g.threads.end_ts[g.utid_of_tid(10)] == ms(2)
    wake = [g.edge(e) for e in range(g.num_edges) if g.edge(e)["type"] == "wakeup"]
    assert [(int(g.seg.tid[w["src"]]), int(g.seg.tid[w["dst"]])) for w in wake] == [(10, 11)]


def test_tracer_stops_do_not_end_a_segment():
    """A ptrace stop (state traced) is runnable time without a boundary, and
    the tracer's wakeup of the stopped thread is no edge; the C core and the
    Python reference agree."""
    from support.crafted import compare_with_oracle
    t = two_threads()
    t.run(10, ms(0)).run(11, ms(0))
    for k in range(3):
        t.row(ms(1 + k), 10, schema.SWITCH_OUT, state=schema.STATE_TRACED)
        t.wake(11, 10, ms(1.5 + k))
        t.row(ms(1.6 + k), 10, schema.SWITCH_IN)
    t.block(10, ms(5), "read", "read", obj=3)
    g = t.build(trace_end=ms(6))
    (s10,) = seg_of(g, 10)
    assert (s10["start"], s10["end"], s10["end_kind"], s10["cpu_ns"]) == (0, ms(5), "blocked", ms(5) - 3 * ms(0.6))
    u = g.utid_of_tid(10)
    sel = slice(g.rbl_lo[u], g.rbl_hi[u])
    assert list(zip(g.runnable.start[sel].tolist(), g.runnable.end[sel].tolist())) == \
        [(ms(1 + k), ms(1.6 + k)) for k in range(3)]
    assert not [e for e in range(g.num_edges) if g.edge(e)["type"] == "wakeup"]
    compare_with_oracle(t.rows(), trace_end=ms(6))


def test_a_sleeping_thread_s_own_row_ends_its_wait_when_the_switch_in_went_unreported():
    """main sleeps from 1 ms; the kernel runs it again at 3 s without a
    switch-in record (no tracepoint fired), so its next own row, the
    sleep's exit, ends the wait there, not its next recorded switch-in.
    A rename by another thread, an interrupt's wakeup naming it and rows
    at the switch-out's own ts say nothing about it running."""
    t = two_threads()
    t.run(10, ms(0)).run(11, ms(0))
    t.row(ms(1), 10, schema.WAIT_SITE)                     # at the switch-out: part of it
    t.block(10, ms(1), "sleep", "nanosleep")
    t.row(ms(1), 10, schema.USER_STACK)
    t.rename(10, ms(500), "renamed")                       # pthread_setname_np by 11
    t.wake(10, 11, ms(600), "hardirq", "timer")            # an interrupt "on" 10
    t.row(ms(3000), 10, schema.SYSCALL_EXIT, nr=nr_of("nanosleep"), val=0)
    t.preempt(10, ms(3001))
    t.run(10, ms(3100))
    g = t.build(trace_end=ms(3200))
    s = seg_of(g, 10)
    assert [(x["start"], x["start_label"]) for x in s] == [(0, "trace_start"), (ms(3000), "switch_in")]
    assert s[0]["wait_end"] == ms(3000)
