"""Streams on crafted traces: a reader fed in pieces by one busy producer is
a LongWait on that producer, not a poller (issue 22, item 4)."""
from support.crafted import Trace, ms, us, s
from argus.diagnose import diagnose, to_json

READER, PRODUCER, OTHER = 10, 20, 30


def _stream(t, until=s(3)):
    """PRODUCER computes and writes a chunk every 15 ms; READER blocks in
    read(fd 3) between chunks; OTHER wakes READER once (noise)."""
    t.run(PRODUCER, 0)
    x = ms(100)
    while x < until:
        t.block(READER, x, "read", "read", obj=3)
        waker = OTHER if x == ms(400) else PRODUCER
        t.syscall(waker, x + ms(14), "write", obj=4).wake(waker, READER, x + ms(15)).run(READER, x + ms(15), ret=4096)
        x += ms(16)
    return x


def test_a_reader_fed_in_pieces_waits_on_its_producer():
    t = Trace()
    t.thread(READER, READER, "archiver")
    t.thread(PRODUCER, PRODUCER, "xz")
    t.thread(OTHER, OTHER, "noise")
    t.run(READER, 0).run(OTHER, 0)
    t.busy(PRODUCER, ms(1), s(3), slice_ns=ms(14), gap_ns=us(50))
    _stream(t)
    g = t.build(trace_end=s(3.2))
    j = to_json(diagnose(g, READER))
    sp = j["spinning"]
    assert sp["block_type"] == "LongWait" and sp["stream_from"]["comm"] == "xz"
    assert "pieces of read(fd 3), each ended by xz/20" in sp["longest_wait"]["what"]
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(PRODUCER, "LongRunning", True)]


def test_a_poller_woken_by_many_threads_is_no_stream():
    t = Trace()
    t.thread(READER, READER, "poller")
    for k in range(4):
        t.thread(40 + k, 40 + k, f"w{k}")
        t.run(40 + k, 0)
    t.run(READER, 0)
    x, k = ms(100), 0
    while x < s(3):
        t.block(READER, x, "read", "read", obj=3)
        w = 40 + k % 4
        t.wake(w, READER, x + ms(15)).run(READER, x + ms(15), ret=1)
        x += ms(16)
        k += 1
    g = t.build(trace_end=s(3.2))
    j = to_json(diagnose(g, READER))
    assert j["spinning"]["block_type"] == "RepeatedYield" and "stream_from" not in j["spinning"]
