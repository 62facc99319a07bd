"""Hangs from ring index entries (indexed.py): which intervals become hangs,
and the ranking's drops and tiers."""
import numpy as np

from argus.diagnose import indexed
from argus.tracer import ringindex as RI, schema

S = 1_000_000_000


def entries(*rows):
    e = np.zeros(len(rows), RI.ENTRY_DTYPE)
    for i, r in enumerate(rows):
        for k, v in r.items():
            e[k][i] = v
    e["seq"] = 1
    return e


def wait(pid, a, b, reason=schema.WAIT_READ, nr=0, obj=3, flags=0, comm=b"app"):
    return dict(pid=pid, tid=pid, start_ns=a, end_ns=b, kind=RI.KIND_WAIT, reason=reason, nr=nr, obj=obj,
                flags=flags, comm=comm, guess=1)


def span(pid, a, b, guess, flags=RI.FLAG_LOOP, comm=b"app"):
    return dict(pid=pid, tid=pid, start_ns=a, end_ns=b, kind=RI.KIND_OUT_OF_LOOP, reason=0, nr=schema.SYSCALL_NONE,
                flags=flags, comm=comm, guess=guess)


def test_a_long_wait_inside_a_span_is_the_hang_and_short_ones_are_not():
    e = entries(wait(10, 5 * S, 8 * S, flags=RI.FLAG_LOOP), span(10, 5 * S, 8 * S, 1), wait(11, 1 * S, 2 * S))
    hs = indexed.index_hangs(e, 2 * S, 0, 20 * S)
    assert [(h.pid, h.kind, h.block_type, h.start_ns, h.end_ns) for h in hs] == [(10, "wait", "LongWait", 5 * S, 8 * S)]
    assert hs[0].loop and hs[0].what() == "read(fd 3)"


def test_span_without_a_long_wait_is_a_stretch_with_the_guess():
    e = entries(span(10, 2 * S, 6 * S, 3), span(12, 1 * S, 5 * S, 1))
    hs = indexed.index_hangs(e, 2 * S, 0, 20 * S)
    assert [(h.pid, h.kind, h.block_type) for h in hs] == [(12, "wait", "LongWait"), (10, "stretch", "LongRunning")]


def test_ongoing_lasts_to_buffer_end_and_waits_from_before_the_buffer_are_left_out():
    e = entries(wait(10, 5 * S, 6 * S, flags=RI.FLAG_ONGOING), wait(11, 0, 9 * S))
    hs = indexed.index_hangs(e, 2 * S, 1 * S, 20 * S)
    assert [(h.pid, h.end_ns, h.ongoing) for h in hs] == [(10, 20 * S, True)]


def test_rank_drops_bystanders_and_tiers_the_rest():
    e = entries(wait(20, 1 * S, 5 * S, reason=schema.WAIT_CHILD),                    # a shell's child wait
                wait(21, 1 * S, 5 * S, obj=0),                                        # stdin
                wait(22, 1 * S, 4 * S, reason=schema.WAIT_SLEEP, nr=35),              # a batch job sleeps
                wait(23, 1 * S, 4 * S, reason=schema.WAIT_FUTEX, nr=202),             # synchronous: tier 1
                wait(24, 2 * S, 4 * S, flags=RI.FLAG_LOOP),                           # event loop: tier 0
                wait(25, 1 * S, 9 * S, comm=b"argusd", reason=schema.WAIT_FUTEX, nr=202),
                wait(26, 1 * S, 9 * S, comm=b"bash", reason=schema.WAIT_FUTEX, nr=202),
                wait(27, 1 * S, 9 * S, reason=schema.WAIT_PREEMPTED, flags=RI.FLAG_LOOP))        # stopped, not waiting
    ranked = indexed.rank(indexed.index_hangs(e, 2 * S, 0, 20 * S))
    assert [(h.pid, h.tier) for h in ranked] == [(24, 0), (23, 1)]
    assert [h.pid for h in indexed.listed(indexed.index_hangs(e, 2 * S, 0, 20 * S), top=1)] == [23]
    assert not indexed.ambiguous(ranked)


def test_first_line_names_the_hang():
    h = indexed.index_hangs(entries(wait(10, 5 * S, 8 * S, flags=RI.FLAG_LOOP)), 2 * S, 0, 20 * S)[0]
    h.tier, h.why = 0, "event loop"
    line = indexed.first_line(h, 0, None)
    assert "app/10" in line and "LongWait for 3" in line and "5.000 s" in line


def test_an_idle_poll_is_no_hang_by_itself():
    # a launcher's loop polls its children's pipes at a second site (a span the detector
    # guessed LongWait, its longest wait a poll), later than a loop thread's one-off read
    e = entries(wait(30, 1 * S, 4 * S, flags=RI.FLAG_LOOP),
                dict(span(31, 2 * S, 9 * S, 1), reason=schema.WAIT_POLL))
    ranked = indexed.rank(indexed.index_hangs(e, 2 * S, 0, 20 * S))
    assert [(h.pid, h.tier) for h in ranked] == [(30, 0), (31, 2)]
    assert "poll" in ranked[1].why


def test_a_wait_that_recurs_at_one_site_is_routine_without_a_loop():
    # a parent without an event loop that reads its child's output over the threshold again and
    # again (fd 5), and a one-off synchronous read of another thread: the one-off is the hang
    e = entries(wait(40, 1 * S, 4 * S, obj=5), wait(40, 5 * S, 8 * S, obj=5),
                wait(40, 9 * S, 12 * S, obj=5, flags=RI.FLAG_ONGOING), wait(41, 2 * S, 6 * S, obj=3))
    ranked = indexed.rank(indexed.index_hangs(e, 2 * S, 0, 20 * S))
    assert [(h.pid, h.tier) for h in ranked][:2] == [(41, 1), (40, 2)]
    assert "routinely (3 waits" in ranked[1].why
    # an event loop out of its loop in the same wait again and again hangs each time
    loop = entries(*(dict(wait(42, a * S, (a + 3) * S, obj=5), flags=RI.FLAG_LOOP) for a in (1, 5, 9)))
    assert {h.tier for h in indexed.rank(indexed.index_hangs(loop, 2 * S, 0, 20 * S))} == {0}


def test_a_wait_is_an_event_loops_by_its_own_flag():
    # a thread that ran a loop once (its first wait) and now only waits in futexes: a synchronous
    # wait, ranked after another loop thread's hang that ended earlier
    e = entries(wait(50, 1 * S, 4 * S, flags=RI.FLAG_LOOP, reason=schema.WAIT_FUTEX, nr=202, obj=7),
                wait(50, 5 * S, 19 * S, flags=RI.FLAG_ONGOING, reason=schema.WAIT_FUTEX, nr=202, obj=8),
                wait(51, 2 * S, 6 * S, flags=RI.FLAG_LOOP))
    ranked = indexed.rank(indexed.index_hangs(e, 2 * S, 0, 20 * S))
    assert [(h.pid, h.tier, h.start_ns) for h in ranked] == [(51, 0, 2 * S), (50, 0, 1 * S), (50, 1, 5 * S)]


def test_a_spans_read_is_not_standard_input():
    # the detector's span of a loop out of its loop in a read, its wait entry missing: no fd is
    # known (obj 0), which is not fd 0
    e = entries(dict(span(60, 2 * S, 5 * S, 1), reason=schema.WAIT_READ))
    ranked = indexed.rank(indexed.index_hangs(e, 2 * S, 0, 20 * S))
    assert [(h.pid, h.tier) for h in ranked] == [(60, 0)]


def test_a_waiting_span_from_before_the_buffer_is_left_out_like_a_wait():
    # the graph cannot confirm a wait whose start was overwritten; a busy span is cut instead
    e = entries(dict(span(70, 0, 9 * S, 1), reason=schema.WAIT_FUTEX), span(71, 0, 9 * S, 3))
    hs = indexed.index_hangs(e, 2 * S, 1 * S, 20 * S)
    assert [(h.pid, h.start_ns) for h in hs] == [(71, 1 * S)]
