"""InteractiveSlice and the Chooser interface."""
from argus.tracer import schema
from argus.graphbuild import graph as G
from support.crafted import Trace, ms, us
from argus.diagnose.slice import AutoChooser, Chooser, input_slice, interactive_slice, MAX_HOPS

R, A, B_, X = 10, 20, 30, 40


def threads():
    t = Trace()
    t.thread(10, R, "reader")
    t.thread(20, A, "a")
    t.thread(30, B_, "b")
    t.thread(10, X, "x")          # same process as R: data flags are per process
    return t


def seg(g, tid, k):
    return int(g.thread_segments(g.utid_of_tid(tid))[k])


def tids(g, res):
    return [int(g.seg.tid[v]) for v in res.vertices]


class Oldest(Chooser):
    """Asks 'the user', who always picks the oldest edge and refuses weak ones."""

    def __init__(self):
        self.queries = 0
        self.asked = []

    def pick_predecessor(self, vertex, candidates):
        if len(candidates) > 1:
            self.queries += 1
        self.asked.append([c.type for c in candidates])
        return candidates[-1]

    def follow_weak(self, edge):
        self.queries += 1
        return False

    def pick_baseline(self, candidates):
        return candidates[-1]

    def go_on(self, root_cause):
        return False


def flag_trace():
    """R blocks, A wakes it at 1 ms; B writes flag F at 3 ms, R reads it at 4 ms.
    A was woken by a NET softirq (culled); B was spawned by X."""
    t = threads()
    t.run(R, 0).block(R, us(100), "read", "read", obj=3)
    t.run(A, 0).block(A, us(200), "read", "recvfrom", obj=4)
    t.wake(0, A, us(500), "softirq", "net").run(A, us(600))
    t.wake(A, R, ms(1)).run(R, ms(1))
    t.run(X, 0).fork(X, 31, ms(2), "b-kid")
    t.run(31, ms(2.5)).flag_write(31, ms(3), 0xF)
    t.flag_read(R, ms(4), 0xF, 1)
    return t.build()


def test_most_recent_edge_first_and_cursor():
    g = flag_trace()
    r1 = seg(g, R, 1)
    res = interactive_slice(g, r1, AutoChooser(), cursor=int(g.seg.end[r1]))
    assert tids(g, res) == [R, 31, X]
    assert [s.edge.type if s.edge else None for s in res.steps] == [None, "data_flag", "spawn"]
    assert res.origin["kind"] == "no_incoming_edge" and res.origin["label"] == "trace_start"
    # from the segment's start only the wakeup qualifies
    res = interactive_slice(g, r1, AutoChooser())
    assert tids(g, res) == [R, A]
    assert res.origin == {"kind": "culled", "label": "net", "vertex": seg(g, A, 1)}


def test_chooser_steers_and_counts_queries():
    g = flag_trace()
    r1 = seg(g, R, 1)
    ch = Oldest()
    res = interactive_slice(g, r1, ch, cursor=int(g.seg.end[r1]))
    assert tids(g, res) == [R, A]
    assert ch.asked == [["data_flag", "wakeup"]] and ch.queries == 1
    assert AutoChooser().queries == 0


def test_forced_first_edge():
    g = flag_trace()
    r1 = seg(g, R, 1)
    e = [int(x) for x in g.in_edges(r1) if g.edge(int(x))["type"] == "data_flag"][0]
    res = interactive_slice(g, r1, Oldest(), cursor=int(g.edges.ts[e]), first_edge=e)
    assert tids(g, res) == [R, 31, X]


def test_program_order_only_for_same_work():
    for gap, expect, origin in ((us(500), [R, R, A], "culled"), (ms(2), [R], "no_incoming_edge")):
        t = threads()
        t.run(R, 0).block(R, us(100), "read", "read", obj=3)
        t.run(A, 0).block(A, us(200), "read", "recvfrom", obj=4)
        t.wake(0, A, us(500), "hardirq", "device").run(A, us(600))
        t.wake(A, R, ms(1)).run(R, ms(1))
        t.block(R, ms(2), "futex", "futex", obj=0x10)
        t.run(R, ms(2) + gap)                                   # no wakeup recorded
        g = t.build()
        res = interactive_slice(g, seg(g, R, 2), AutoChooser())
        assert tids(g, res) == expect
        assert res.origin["kind"] == origin
        if gap < ms(1):
            assert [s.edge.type if s.edge else None for s in res.steps] == [None, "program_order", "wakeup"]
            assert res.origin["label"] == "device"
        else:
            assert res.origin["label"] == "switch_in"


def test_cycle_stops():
    t = threads()
    t.run(R, 0).block(R, us(100), "read", "read", obj=3)
    t.run(X, 0)
    t.wake(X, R, ms(1)).run(R, ms(1))      # X woke R ...
    t.flag_write(R, ms(2), 0x9)            # ... R wrote a flag X reads later
    t.flag_read(X, ms(3), 0x9, 1)
    g = t.build()
    a0 = seg(g, X, 0)
    res = interactive_slice(g, a0, AutoChooser(), cursor=int(g.seg.end[a0]))
    assert tids(g, res) == [X, R]
    assert res.origin["kind"] == "cycle" and res.origin["cycle_vertex"] == a0


def test_max_hops():
    t = threads()
    t.run(R, 0).run(A, us(1)).block(A, us(2), "futex", "futex", obj=1)
    now = us(10)
    for k in range(40):                    # ping-pong: 80 wakeups
        t.wake(R, A, now).block(R, now + us(1), "futex", "futex", obj=2).run(A, now + us(2))
        t.wake(A, R, now + us(3)).block(A, now + us(4), "futex", "futex", obj=1).run(R, now + us(5))
        now += us(10)
    g = t.build()
    last = seg(g, R, -1)
    res = interactive_slice(g, last, AutoChooser())
    assert len(res.steps) == MAX_HOPS + 1 and res.origin["kind"] == "max_hops"
    assert len(set(res.vertices)) == len(res.vertices)


def test_weak_edge_can_be_declined():
    M = 0x500
    t = threads()
    t.thread(20, 21, "a2")
    t.run(A, 0).run(21, 0)
    t.futex_wait(21, ms(1), M)
    t.futex_wake(A, ms(2), M).wake(A, 21, ms(2.1)).run(21, ms(2.2))
    t.futex_wait(A, ms(3), M)
    t.futex_wake(21, ms(4), M).wake(21, A, ms(4.1)).run(A, ms(4.2))
    g = t.build()
    v = seg(g, A, 1)
    assert g.edge(g.incoming_wakeup(v))["weak"]
    assert tids(g, interactive_slice(g, v, AutoChooser())) == [A, 21, A]
    ch = Oldest()
    res = interactive_slice(g, v, ch)
    assert tids(g, res) == [A] and res.origin["kind"] == "weak_edge" and ch.queries == 1


def fd_info(t, tid, at, fd, kind, ident):
    """An FD_INFO row: fd of `kind` whose shared object (pipe inode) is ident."""
    col = {f: schema.column(schema.FD_INFO, f) for f in ("fd", "kind", "inode", "local")}
    t.row(at, tid, schema.FD_INFO, **{col["fd"]: fd, col["kind"]: kind, col["inode"]: ident, col["local"]: ident})


def test_message_edges_are_followed():
    """A write into a pipe whose reader is running (no wakeup carries it)
    makes a message edge; the slice follows it back to the writer
    (CAUSAL_TYPES: without it the reader's slice would end at trace start)."""
    t = Trace()
    t.thread(10, R, "reader")
    t.thread(20, A, "writer")
    t.run(R, 0)
    t.run(A, 0)
    fd_info(t, A, ms(0.5), 4, schema.FD_PIPE, 77)
    fd_info(t, R, ms(0.5), 3, schema.FD_PIPE, 77)
    t.syscall(A, ms(1), "write", obj=4, obj2=77, ret=1)
    t.syscall(R, ms(2), "read", obj=3, obj2=77, ret=1)
    g = t.build(trace_end=ms(10))
    v = seg(g, R, 0)
    assert [G.EDGE_TYPE_NAMES[int(g.edges.type[e])] for e in g.in_edges(v).tolist()] == ["message"]
    res = interactive_slice(g, v, AutoChooser(), cursor=ms(10))
    assert tids(g, res) == [R, A] and res.steps[1].edge.type == "message"
    assert res.origin["kind"] == "no_incoming_edge" and res.origin["label"] == "trace_start"


def test_timer_edges_are_not_followed():
    """A timer armed by another thread wakes R (a hardirq wakeup: culled).
    The graph has the timer edge (arm -> fire), but the slice stops at the
    kernel wakeup labelled "timer": a timer is the wait's deadline, not what
    it waited for (CAUSAL_TYPES)."""
    t = Trace()
    t.thread(10, R, "sleeper")
    t.thread(10, X, "armer")
    t.run(R, 0)
    t.run(X, 0)
    t.syscall(X, ms(1), "timerfd_settime", obj=7, obj2=ms(4), ret=0)
    t.block(X, ms(1.5), "sleep", "nanosleep")
    t.block(R, ms(2), "read", "read", obj=7)
    t.timer_wake(R, ms(5), ret=8)
    g = t.build(trace_end=ms(10))
    v = seg(g, R, 1)
    assert sorted(G.EDGE_TYPE_NAMES[int(g.edges.type[e])] for e in g.in_edges(v).tolist()) == \
        ["program_order", "timer"]
    res = interactive_slice(g, v, AutoChooser())
    assert tids(g, res) == [R]
    assert (res.origin["kind"], res.origin["label"]) == ("culled", "timer")


def test_an_input_vertex_stops_the_slice():
    """A GUI thread woken by another thread reads a key press (an INPUT
    probe row, `argus run`) and then computes: the graph opens a vertex at the
    input (split kind input) and the slice of the work stops there, origin
    "input" (the key press that started it), instead of walking on to the
    waker of the loop's wait."""
    def trace(with_input):
        t = threads()
        t.run(A, 0).block(R, 0, "read", "poll", obj=3)
        t.wake(A, R, ms(1)).run(R, ms(1))
        if with_input:
            t.row(ms(1.5), R, schema.INPUT, obj=0x1234, obj2=0xABC, nr=0)
        t.run(R, ms(2), until=ms(50), preempt=True)
        return t.build()

    g = trace(True)
    assert g.stats["splits"]["input"] == 1
    v = seg(g, R, -1)
    assert g.seg.split_kind[v] == G.SPLIT_INPUT and g.seg.start[v] == ms(1.5)
    res = interactive_slice(g, v, AutoChooser())
    assert tids(g, res) == [R] and res.origin["kind"] == "input" and res.origin["vertex"] == v
    g = trace(False)
    res = interactive_slice(g, seg(g, R, -1), AutoChooser())
    assert tids(g, res) == [R, A] and res.origin["kind"] != "input"


def test_work_since_an_input_is_sliced_to_it():
    """GDK reads a key press (INPUT row) in its source's check, dispatches it
    (CALLBACK_BEGIN), the handler waits briefly for a reply of another
    thread, then computes.  The walk from the computing vertex goes to the
    replier; input_slice goes to the input.  After an idle gap (>= 1 ms
    blocked) or without an input: None."""
    def trace(with_input, idle_ms=0.2):
        t = threads()
        t.run(R, 0)
        if with_input:
            t.row(ms(1), R, schema.INPUT, obj=0x4102, obj2=0xABC, nr=0)
        t.row(ms(1.1), R, schema.CALLBACK_BEGIN, obj=0x5000, obj2=0xD00, nr=1)
        t.run(A, ms(1)).block(R, ms(2), "read", "poll", obj=3)
        t.wake(A, R, ms(2 + idle_ms)).run(R, ms(2 + idle_ms), until=ms(60), preempt=True)
        return t.build()

    g = trace(True)
    v = seg(g, R, -1)
    assert A in tids(g, interactive_slice(g, v, AutoChooser()))     # the reply's thread, not the key press
    res = input_slice(g, v)
    assert tids(g, res) == [R] and res.origin["kind"] == "input"
    assert g.seg.split_kind[res.origin["vertex"]] == G.SPLIT_INPUT and g.seg.start[res.origin["vertex"]] == ms(1)
    assert input_slice(g, res.origin["vertex"]).vertices == [res.origin["vertex"]]
    g = trace(False)
    assert input_slice(g, seg(g, R, -1)) is None
    g = trace(True, idle_ms=5)
    assert input_slice(g, seg(g, R, -1)) is None
    # the same 5 ms block inside the dispatch (begun at 1.1 ms): the callback's own wait
    assert input_slice(g, seg(g, R, -1), dispatch_start=ms(1.1)).origin["kind"] == "input"


def test_an_input_read_inside_the_dispatch_is_the_slice_origin():
    """The toolkit reads the key inside its dispatch (GDK's dispatch reads
    the X queue), waits for a reply, then computes: that input is the origin."""
    t = threads()
    t.run(R, 0)
    t.row(ms(1), R, schema.CALLBACK_BEGIN, obj=0x5000, obj2=0xD00, nr=1)
    t.row(ms(1.5), R, schema.INPUT, obj=0x4102, obj2=0xABC, nr=0)
    t.run(A, ms(1)).block(R, ms(2), "read", "poll", obj=3)
    t.wake(A, R, ms(2.3)).run(R, ms(2.3), until=ms(60), preempt=True)
    g = t.build()
    res = input_slice(g, seg(g, R, -1))
    assert res.vertices == [int(g.segment_at(g.utid_of_tid(R), ms(1.5)))] and res.origin["kind"] == "input"


def test_a_short_timed_pause_is_walked_through():
    """A is woken by B at 1 ms, runs, sleeps 50 us (a timer ends it: a
    scheduler's backoff), then wakes R.  The pause is inside A's work: the
    slice goes on to B.  With a 5 ms sleep instead, the timer is where A's
    work began (origin "timer")."""
    for pause, reaches_b in ((us(50), True), (ms(5), False)):
        t = threads()
        t.run(R, 0).block(R, us(100), "read", "read", obj=3)
        t.run(B_, 0).block(B_, ms(8), "read", "read", obj=5)
        t.run(A, 0).block(A, us(200), "futex", "futex", obj=0x10)
        t.wake(B_, A, ms(1)).run(A, ms(1))
        t.block(A, ms(1) + us(100), "sleep", "nanosleep")
        t.timer_wake(A, ms(1) + us(100) + pause)
        t.wake(A, R, ms(1) + us(150) + pause).run(R, ms(1) + us(150) + pause)
        g = t.build(trace_end=ms(20))
        res = interactive_slice(g, seg(g, R, 1), AutoChooser())
        if reaches_b:
            assert tids(g, res) == [R, A, A, B_]
        else:
            assert tids(g, res) == [R, A] and res.origin["kind"] == "culled" and res.origin["label"] == "timer"


def test_data_ranks_before_the_in_process_hand_off_that_delivered_it():
    """A (pid 20) writes a pipe R reads; R (pid 10) sleeps on a futex and is
    woken 200 us later by X, another thread of its own process (a
    user-space scheduler handing the ready data on), then reads the byte
    just after: the slice follows the message to A, not the hand-off to X.
    With the write 5 ms before the wakeup, the wakeup is what let R go."""
    for gap, first in ((us(200), A), (ms(5), X)):
        t = threads()
        t.run(R, 0).run(A, 0).run(X, 0)
        fd_info(t, A, ms(0.5), 4, schema.FD_PIPE, 77)
        fd_info(t, R, ms(0.5), 3, schema.FD_PIPE, 77)
        t.futex_wait(R, ms(1), 0x50)
        w = ms(20)
        t.syscall(A, w - gap, "write", obj=4, obj2=77, ret=1)
        t.futex_wake(X, w, 0x50).wake(X, R, w).run(R, w + us(5))
        t.syscall(R, w + us(20), "read", obj=3, obj2=77, ret=1)
        g = t.build(trace_end=ms(40))
        v = seg(g, R, 1)
        res = interactive_slice(g, v, AutoChooser())
        assert tids(g, res)[:2] == [R, first]
