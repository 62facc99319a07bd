"""dispatch_in: the callback a hang sits in, from callback_begin / _end rows."""
from argus.tracer import schema
from argus.graphbuild import graph as G
from support.crafted import Trace, ms
from argus.diagnose.dispatch import dispatch_in

T, CTX, FN = 100, 0x5000, 0xD00


def loop(ongoing=False):
    """Three dispatches: 1-2 ms, 3-40 ms (with a nested 10-11 ms one), 41 ms-(end)."""
    t = Trace()
    t.thread(T, T, "gui")
    t.run(T, 0)
    for a, b in ((1, 2), (3, 40), (10, 11), (41, None if ongoing else 42)):
        t.row(ms(a), T, schema.CALLBACK_BEGIN, obj=CTX, obj2=FN)
        if b is not None and a != 3:
            t.row(ms(b), T, schema.CALLBACK_END, obj=1, obj2=FN)
        if a == 10:
            t.row(ms(40), T, schema.CALLBACK_END, obj=1, obj2=FN)   # the outer one
    t.preempt(T, ms(45))
    return t.build()


def test_the_dispatch_covering_most_of_the_window():
    g = loop()
    u = g.utid_of_tid(T)
    d = dispatch_in(g, u, ms(5), ms(39))
    assert (d["start_ns"], d["end_ns"], d["ongoing"]) == (ms(3), ms(40), False)   # the outer, not the nested one
    assert d["obj"] == CTX and d["fn"] == FN and d["window_share"] == 1.0
    assert g.seg.start[d["vertex"]] == ms(3) and g.seg.split_kind[d["vertex"]] == G.SPLIT_CALLBACK
    assert dispatch_in(g, u, ms(2.2), ms(2.8)) is None        # between dispatches


def test_an_open_dispatch_is_ongoing_and_no_probes_give_none():
    g = loop(ongoing=True)
    d = dispatch_in(g, g.utid_of_tid(T), ms(41), ms(50))
    assert d["start_ns"] == ms(41) and d["ongoing"]
    t = Trace()
    t.thread(T, T, "plain")
    t.run(T, 0).preempt(T, ms(5))
    g = t.build()
    assert dispatch_in(g, g.utid_of_tid(T), 0, ms(5)) is None
