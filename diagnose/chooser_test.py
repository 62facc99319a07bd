"""The asking chooser on crafted graphs: every branch of InteractiveSlice
(one edge, several, weak, none, invalid input, EOF) and of Algorithm 1's
questions (baseline, go on, RepeatedYield advice), rules across traces,
replay of recorded answers, and the Table 2 metrics."""
import pytest

from support import crafted as C
from argus.graphbuild import graph as G
from support.crafted import Trace, ms, us, s
from argus.diagnose import diagnose, diagnose_hang, find_hang, to_json
from argus.diagnose.chooser import AskingChooser, Abort
from argus.diagnose.slice import AutoChooser, interactive_slice
from argus.diagnose import rules as R
from argus.diagnose.baseline import find_wait_baselines, group_by_signature

RD, A, B_, X = 10, 20, 30, 40


class Script:
    """A user who types the given answers, in order, and logs the questions."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.questions = []

    def __call__(self, q):
        self.questions.append(q)
        a = self.answers.pop(0)
        if isinstance(a, BaseException) or (isinstance(a, type) and issubclass(a, BaseException)):
            raise a
        return a


def seg(g, tid, k):
    return int(g.thread_segments(g.utid_of_tid(tid))[k])


def tids(g, res):
    return [int(g.seg.tid[v]) for v in res.vertices]


def flag_trace():
    """R is woken by A at 1 ms and reads flag F written by B (spawned by X):
    two incoming causal edges at R's end."""
    t = Trace()
    t.thread(10, RD, "reader")
    t.thread(20, A, "a")
    t.thread(10, X, "x")
    t.run(RD, 0).block(RD, us(100), "read", "read", obj=3)
    t.run(A, 0).block(A, us(200), "read", "recvfrom", obj=4)
    t.wake(0, A, us(500), "softirq", "net").run(A, us(600))
    t.wake(A, RD, ms(1)).run(RD, ms(1))
    t.run(X, 0).fork(X, 31, ms(2), "b-kid")
    t.run(31, ms(2.5)).flag_write(31, ms(3), 0xF)
    t.flag_read(RD, ms(4), 0xF, 1)
    return t.build()


def lock_trace(pid=20, t1=20, t2=21, names=("a", "a2")):
    """Two threads of one process hand a mutex back and forth: weak edges."""
    M = 0x500
    t = Trace()
    t.thread(pid, t1, names[0])
    t.thread(pid, t2, names[1])
    t.run(t1, 0).run(t2, 0)
    t.futex_wait(t2, ms(1), M)
    t.futex_wake(t1, ms(2), M).wake(t1, t2, ms(2.1)).run(t2, ms(2.2))
    t.futex_wait(t1, ms(3), M)
    t.futex_wake(t2, ms(4), M).wake(t2, t1, ms(4.1)).run(t1, ms(4.2))
    t.futex_wait(t2, ms(5), M)
    t.futex_wake(t1, ms(6), M).wake(t1, t2, ms(6.1)).run(t2, ms(6.2))
    return t.build()


# --- InteractiveSlice branches ---

def test_one_strong_edge_is_followed_without_a_question():
    g = flag_trace()
    ask = Script()
    ch = AskingChooser(g, ask=ask)
    res = interactive_slice(g, seg(g, RD, 1), ch)          # from its start: only A's wakeup
    assert tids(g, res) == [RD, A] and res.origin["kind"] == "culled"
    assert ask.questions == [] and ch.queries == 0


def test_several_edges_ask_and_the_pick_is_followed():
    g = flag_trace()
    r1 = seg(g, RD, 1)
    ask = Script("2")
    ch = AskingChooser(g, ask=ask)
    res = interactive_slice(g, r1, ch, cursor=int(g.seg.end[r1]))
    (q,) = ask.questions
    assert q.kind == "predecessor" and q.keys() == ["1", "2", "s"]
    assert "b-kid/31" in q.options[0][1] and "data_flag" in q.options[0][1]     # most recent first
    assert "a/20" in q.options[1][1] and "wakeup" in q.options[1][1]
    assert tids(g, res) == [RD, A] and ch.queries == 1
    assert ch.answers[0]["answer"] == "2" and ch.answers[0]["source"] == "user"


def test_several_edges_stop_and_invalid_input_is_asked_again():
    g = flag_trace()
    r1 = seg(g, RD, 1)
    for typed in (["s"], ["what?", "s"], ["7", "zz", "s"]):
        ask = Script(*typed)
        ch = AskingChooser(g, ask=ask)
        res = interactive_slice(g, r1, ch, cursor=int(g.seg.end[r1]))
        assert tids(g, res) == [RD] and res.origin["kind"] == "stopped"
        assert ch.queries == 1 and ch.answers[0]["source"] == "user"
        # the same question, put again once per invalid answer, saying what was typed
        assert len(ask.questions) == len(typed) and ask.questions[-1].invalid == (typed[-2] if len(typed) > 1
                                                                                   else None)
    # a typo then a real answer: the walk follows the answer
    ch = AskingChooser(g, ask=Script("x", "2"))
    assert tids(g, interactive_slice(g, r1, ch, cursor=int(g.seg.end[r1]))) == [RD, A]


def test_enter_takes_the_default():
    g = flag_trace()
    r1 = seg(g, RD, 1)
    ch = AskingChooser(g, ask=Script(""))
    res = interactive_slice(g, r1, ch, cursor=int(g.seg.end[r1]))
    assert tids(g, res) == tids(g, interactive_slice(g, r1, AutoChooser(), cursor=int(g.seg.end[r1])))


def test_no_edge_stops_without_a_question():
    g = flag_trace()
    ch = AskingChooser(g, ask=Script())
    res = interactive_slice(g, seg(g, A, 1), ch)
    assert tids(g, res) == [A] and res.origin == {"kind": "culled", "label": "net", "vertex": seg(g, A, 1)}
    assert ch.queries == 0


@pytest.mark.parametrize("typed,follows", [("f", True), ("", True), ("s", False), ("n", False), ("x", False)])
def test_weak_edge_follow_or_stop(typed, follows):
    g = lock_trace()
    v = seg(g, 20, 1)
    assert g.edge(g.incoming_wakeup(v))["weak"]
    ask = Script(typed, "s") if typed != "x" else Script(typed, "s", "s")
    ch = AskingChooser(g, ask=ask)
    res = interactive_slice(g, v, ch)
    assert ask.questions[0].kind == "weak"
    if follows:
        assert tids(g, res)[:2] == [20, 21]
        # the next weak edge between the same two threads is not asked again
        assert len(ask.questions) == 1 and ch.saved == 1
    else:
        assert tids(g, res) == [20] and res.origin["kind"] == "weak_edge"
    assert [r["kind"] for r in ch.new_rules] == (["not_causal"] if typed == "n" else [])
    assert ch.answers[0]["source"] == "user"
    if typed == "x":                                   # asked again, then "s"
        assert ask.questions[1] is ask.questions[0] and ch.answers[0]["answer"] == "s"


def test_eof_or_ctrl_c_stops_and_mutes_later_questions():
    for exc in (EOFError, KeyboardInterrupt, Abort):
        g = flag_trace()
        r1 = seg(g, RD, 1)
        ask = Script(exc)
        ch = AskingChooser(g, ask=ask)
        res = interactive_slice(g, r1, ch, cursor=int(g.seg.end[r1]))
        assert res.origin["kind"] == "stopped" and ch.aborted and ch.queries == 0
        res = interactive_slice(g, r1, ch, cursor=int(g.seg.end[r1]))   # asks nobody any more
        assert res.origin["kind"] == "stopped" and len(ask.questions) == 1


# --- rules ---

def test_not_causal_rule_applies_to_another_trace_by_names():
    g1 = lock_trace()
    ch = AskingChooser(g1, ask=Script("n"))
    interactive_slice(g1, seg(g1, 20, 1), ch)
    (rule,) = ch.new_rules
    assert rule["key"] == {"src_process": "a", "src_thread": "a2", "dst_process": "a", "dst_thread": "a",
                           "edge_type": "wakeup", "wait": "futex"}
    # another run: other pids and tids, same names -> no question, stops
    g2 = lock_trace(pid=700, t1=700, t2=701)
    ask = Script()
    ch2 = AskingChooser(g2, ask=ask, rules=[rule])
    res = interactive_slice(g2, seg(g2, 700, 1), ch2)
    assert tids(g2, res) == [700] and ask.questions == [] and ch2.saved_by_rules == 1
    # other names -> the rule does not apply: asked
    g3 = lock_trace(names=("b", "b2"))
    ask = Script("f", "f")
    interactive_slice(g3, seg(g3, 20, 1), AskingChooser(g3, ask=ask, rules=[rule]))
    assert len(ask.questions) == 1


def test_not_causal_rule_removes_the_ambiguity():
    g = flag_trace()
    r1 = seg(g, RD, 1)
    e_flag = [int(x) for x in g.in_edges(r1) if g.edge(int(x))["type"] == "data_flag"][0]
    from argus.diagnose.slice import EdgeRef
    rule = R.not_causal_rule(g, EdgeRef.of(g, e_flag))
    ask = Script()
    ch = AskingChooser(g, ask=ask, rules=[rule])
    res = interactive_slice(g, r1, ch, cursor=int(g.seg.end[r1]))
    assert tids(g, res) == [RD, A] and ask.questions == [] and ch.saved_by_rules == 1


# --- Algorithm 1 questions ---

def test_cross_process_asks_go_on_for_longwait_culprits_only():
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    ask = Script("y")
    d = diagnose(g, C.APP, chooser=AskingChooser(g, ask=ask))
    kinds = [q.kind for q in ask.questions]
    assert kinds == ["go_on"]                     # daemon (LongWait): asked; helper (LongRunning): not
    assert "daemond/200" in ask.questions[0].text
    j = to_json(d)
    assert [c["tid"] for c in j["root_causes"]] == [C.DAEMON, C.HELPER]
    assert j["queries"] == 1 and j["metrics"]["path_len"] == j["metrics"]["auto_path_len"] == len(j["path"])


def test_go_on_no_stops_the_recursion_and_shortens_the_path():
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    d = diagnose(g, C.APP, chooser=AskingChooser(g, ask=Script("n")))
    j = to_json(d)
    # the helper is on the app's baseline path too: a depth-1 cause; not the
    # culprit of the culprit (depth 2) any more
    assert [(c["tid"], c["depth"]) for c in j["root_causes"]] == [(C.DAEMON, 1), (C.HELPER, 1)]
    assert j["metrics"]["path_len"] < j["metrics"]["auto_path_len"] == 23   # own path + baseline evidence
    assert j["metrics"]["mode"] == "interactive" and j["queries"] == 1


def two_wakers():
    """The worker wakes on a timer and reads; the read is answered by server
    S most of the time and by server T once: two kinds of baseline, equally
    similar (same syscalls, no other message peers)."""
    W, S, T = 10, 20, 30
    t = Trace()
    t.thread(10, W, "worker")
    t.thread(20, S, "server")
    t.thread(30, T, "cache")
    t.run(S, 0).run(T, 0).run(W, 0)
    for k, waker in enumerate((S, T, S)):
        at = s(1 + k)
        t.block(W, at - ms(500), "sleep", "nanosleep")          # each request starts on a timer
        t.timer_wake(W, at - ms(10))
        t.block(W, at, "read", "read", obj=5)
        t.wake(waker, W, at + ms(1)).run(W, at + ms(1))
    t.block(W, s(4.5), "sleep", "nanosleep")
    t.timer_wake(W, s(4.99))
    t.block(W, s(5), "read", "read", obj=5)
    t.wake(S, W, s(9)).run(W, s(9))
    # cut before the answer: a hang that ended is explained by its own waker,
    # a baseline is the walk only while it is still going on
    return t.build(until=s(8)), W


def test_baseline_question_when_several_kinds():
    g, W = two_wakers()
    hang = find_hang(g, 10, at=s(6))
    cands = find_wait_baselines(g, hang.vertex, s(2), hang_start=hang.start_ns)
    assert len(cands) == 3 and len(group_by_signature(g, cands)) == 2
    ask = Script("2")
    d = diagnose_hang(g, hang, chooser=AskingChooser(g, ask=ask, t0=hang.start_ns))
    (q,) = [q for q in ask.questions if q.kind == "baseline"]
    assert q.keys() == ["1", "2", "n"]
    assert "server/20" in q.options[0][1] and "cache/30" in q.options[1][1]
    assert to_json(d)["spinning"]["baseline"]["start_ns"] == s(2)       # the cache one
    # "n": no baseline
    d = diagnose_hang(g, hang, chooser=AskingChooser(g, ask=Script("n")))
    assert to_json(d)["spinning"]["baseline"] is None


def test_one_kind_of_baseline_is_not_asked():
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    ask = Script("y")
    diagnose(g, C.APP, chooser=AskingChooser(g, ask=ask))
    assert "baseline" not in [q.kind for q in ask.questions]


def test_repeated_yield_without_flags_advice_and_flag_rule():
    g = C.yield_app(flags=False, worker_pid=601)
    d = diagnose(g, 600, chooser=AskingChooser(g, ask=Script()))
    (rc,) = to_json(d)["root_causes"]
    assert rc["advice"] is None and "does not name" in rc["why"]      # no stack, no mapping
    rule = R.data_flag_rule("ui", "ui", {"image": "/usr/bin/ui", "symbol": "work_done"})
    ch = AskingChooser(g, ask=Script(), rules=[rule])
    j = to_json(diagnose(g, 600, chooser=ch))
    assert j["root_causes"][0]["advice"] == "bp_watch 600 /usr/bin/ui work_done"
    assert j["metrics"]["saved_by_rules"] == 1
    assert "marked in an earlier session" in j["root_causes"][0]["why"]


def test_repeated_yield_advice_lists_polled_futex_addresses():
    t = Trace()
    t.thread(600, 600, "ui")
    t.thread(600, 601, "worker")
    t.run(601, 0).block(601, ms(1), "poll", "epoll_wait", obj=9)
    t.run(600, 0).block(600, ms(1), "poll", "epoll_wait", obj=3)
    t.timer_wake(600, s(1))
    now = s(1) + us(10)
    while now < s(4):                     # futex_wait with a 1 ms timeout on 0xBEEF, again and again
        t.futex_wait(600, now, 0xBEEF)
        t.timer_wake(600, now + ms(1), ret=C.ETIMEDOUT)
        now += ms(2)
    t.block(600, s(4), "poll", "epoll_wait", obj=3)
    g = t.build(trace_end=s(5))
    j = to_json(diagnose(g, 600, chooser=AskingChooser(g, ask=Script())))
    rc = j["root_causes"][0]
    assert rc["block_type"] == "RepeatedYield" and "addresses polled 0xbeef" in rc["why"]


# --- replay ---

def test_replayed_answers_give_the_same_result():
    g, W = two_wakers()
    hang = find_hang(g, 10, at=s(6))
    live = AskingChooser(g, ask=Script("2"))
    j1 = to_json(diagnose_hang(g, hang, chooser=live))
    replay = AskingChooser(g, presets=[{"kind": a["kind"], "answer": a["answer"]} for a in live.answers])
    j2 = to_json(diagnose_hang(g, hang, chooser=replay))
    assert j1["path"] == j2["path"] and j1["root_causes"] == j2["root_causes"]
    assert j2["queries"] == j1["queries"] == 1 and j2["metrics"]["mode"] == "replay"


def test_replay_that_diverges_is_dropped():
    g, W = two_wakers()
    hang = find_hang(g, 10, at=s(6))
    ch = AskingChooser(g, presets=[{"kind": "go_on", "answer": "n"}, {"kind": "baseline", "answer": "2"}])
    j = to_json(diagnose_hang(g, hang, chooser=ch))
    assert ch.diverged and ch.presets == []
    assert j["spinning"]["baseline"]["start_ns"] == s(3)       # the automatic choice: most recent


def test_a_clearly_less_similar_kind_of_baseline_is_not_asked():
    """As two_wakers, but the request that the cache answered ran other
    syscalls first: its kind of baseline is much less similar, so there is
    nothing to ask."""
    W, S, T = 10, 20, 30
    t = Trace()
    t.thread(10, W, "worker")
    t.thread(20, S, "server")
    t.thread(30, T, "cache")
    t.run(S, 0).run(T, 0).run(W, 0)
    for k, waker in enumerate((S, T, S)):
        at = s(1 + k)
        t.block(W, at - ms(500), "sleep", "nanosleep")
        t.timer_wake(W, at - ms(10))
        if waker == T:
            for j in range(6):
                t.syscall(W, at - ms(5) + us(j), "openat", ret=3)
        t.block(W, at, "read", "read", obj=5)
        t.wake(waker, W, at + ms(1)).run(W, at + ms(1))
    t.block(W, s(4.5), "sleep", "nanosleep")
    t.timer_wake(W, s(4.99))
    t.block(W, s(5), "read", "read", obj=5)
    t.wake(S, W, s(9)).run(W, s(9))
    g = t.build(until=s(8))
    hang = find_hang(g, 10, at=s(6))
    cands = find_wait_baselines(g, hang.vertex, s(2), hang_start=hang.start_ns)
    sims = {int(b.wait_start_ns): b.similarity for b in cands}
    assert sims[s(2)] < sims[s(3)] - 0.25
    ask = Script()
    d = diagnose_hang(g, hang, chooser=AskingChooser(g, ask=ask))
    assert "baseline" not in [q.kind for q in ask.questions]
    assert to_json(d)["spinning"]["baseline"]["start_ns"] == s(3)


def test_go_on_is_not_asked_for_a_yielding_culprit_without_flags():
    from argus.diagnose.algorithm import RootCause
    g = C.yield_app(flags=False)
    u = g.utid_of_tid(600)
    ask = Script()
    assert AskingChooser(g, ask=ask).go_on(RootCause(u, 0, "RepeatedYield", s(4), s(7), "", 1)) is True
    assert ask.questions == []
    g = C.yield_app(flags=True)
    u = g.utid_of_tid(600)
    ask = Script("n")
    assert AskingChooser(g, ask=ask).go_on(RootCause(u, 0, "RepeatedYield", s(4), s(7), "", 1)) is False
    assert [q.kind for q in ask.questions] == ["go_on"]


# --- weak split (program-order) edges ---

def split_rule():
    """The split graph, its vertex after the split, and the not-causal rule
    a user's "n" makes for the weak program-order edge into it."""
    g = C.split_loop()
    v = seg(g, 10, 2)
    ch = AskingChooser(g, ask=Script("n"))
    interactive_slice(g, v, ch)
    (rule,) = ch.new_rules
    return g, v, rule


def test_weak_split_edge_is_asked_and_rules_answer_it():
    g, v, rule = split_rule()                                       # opened by the split at 3 ms
    assert G.START_KIND_NAMES[int(g.seg.start_kind[v])] == "split"
    # automatic: followed back to the vertex the waker woke, and on to the waker
    assert tids(g, interactive_slice(g, v, AutoChooser())) == [10, 10, 11]
    # asked: a weak question naming the split
    ask = Script("s")
    ch = AskingChooser(g, ask=ask)
    res = interactive_slice(g, v, ch)
    (q,) = ask.questions
    assert q.kind == "weak" and "program-order" in q.text and "event_loop" in q.text
    assert tids(g, res) == [10] and res.origin["kind"] == "weak_edge"
    ask = Script("f")
    assert tids(g, interactive_slice(g, v, AskingChooser(g, ask=ask))) == [10, 10, 11]
    # "n" makes a rule; with it, nobody is asked and the walk stops there
    assert rule["key"]["edge_type"] == "program_order"
    ask = Script()
    ch = AskingChooser(g, ask=ask, rules=[rule])
    res = interactive_slice(g, v, ch)
    assert ask.questions == [] and tids(g, res) == [10] and ch.saved_by_rules == 1
    assert ch.rules.fired[0]["kind"] == "not_causal" and "program_order" in ch.rules.fired[0]["effect"]


def test_rules_apply_in_auto_mode_and_are_reported():
    """No ask callback, no presets: the automatic answers, with the rules."""
    g, v, rule = split_rule()
    seen = []
    auto = AskingChooser(g, rules=[dict(rule, id=7)], on_rule=seen.append)
    assert auto.mode == "auto"
    assert tids(g, interactive_slice(g, v, auto)) == [10] and auto.queries == 0
    assert seen == auto.rules.fired and seen[0]["id"] == 7 and seen[0]["undo"] == "argus rules rm 7"


def test_rule_scoped_by_build_id():
    g, v, rule = split_rule()
    g.derived.build_ids = {10: "aa11"}             # as read from the executable
    other = dict(rule, scope={"build_id": "bb22"})      # made for another build of the program
    assert tids(g, interactive_slice(g, v, AskingChooser(g, rules=[other]))) == [10, 10, 11]
    same = dict(rule, scope={"build_id": "aa11"})
    assert tids(g, interactive_slice(g, v, AskingChooser(g, rules=[same]))) == [10]
    g.derived.build_ids = {10: None}               # unknown build: names decide
    assert tids(g, interactive_slice(g, v, AskingChooser(g, rules=[other]))) == [10]


# --- ownership: several holders -> a question ---

def lock_poller_graph(**kw):
    t, info = C.lock_poller(**kw)
    return t.build(trace_end=info["trace_end"])


@pytest.mark.parametrize("typed, root", [("1", (C.HOLDER, "LongWait")), ("2", (C.OTHER, "LongRunning")),
                                         ("", (C.HOLDER, "LongWait")), ("n", (C.POLLER, "RepeatedYield"))])
def test_several_holders_ask_which_one(typed, root):
    g = lock_poller_graph(holder="wait", other="channel")
    ask = Script(typed, "n")                  # "n": do not go on from a LongWait holder
    ch = AskingChooser(g, ask=ask)
    j = to_json(diagnose(g, C.POLLER, chooser=ch))
    q = ask.questions[0]
    assert [q.kind for q in ask.questions] == ["owner"] + (["go_on"] if root[1] == "LongWait" else [])
    assert q.kind == "owner" and q.keys() == ["1", "2", "n"] and q.default == "1"
    assert q.options[0][1].startswith("holder/800 in holder/800  file_lock, 300 tries point at it")
    assert q.options[1][1].startswith("other/900 in other/900  futex_channel (weak), 100 tries")
    assert [(c["tid"], c["block_type"]) for c in j["root_causes"]] == [root]
    assert j["queries"] == len(ask.questions)
    if typed == "n":
        assert j["root_causes"][0]["advice"] is None and "does not name" in j["root_causes"][0]["why"]
    assert ch.answers[0]["kind"] == "owner"


def test_one_holder_strong_is_not_asked_weak_asks_follow():
    g = lock_poller_graph(holder="wait")
    ask = Script("n")
    j = to_json(diagnose(g, C.POLLER, chooser=AskingChooser(g, ask=ask)))
    assert [q.kind for q in ask.questions] == ["go_on"] and j["root_causes"][0]["tid"] == C.HOLDER
    g = lock_poller_graph(holder="wait", strong=False)
    ask = Script("s")
    j = to_json(diagnose(g, C.POLLER, chooser=AskingChooser(g, ask=ask)))
    assert [q.kind for q in ask.questions] == ["weak"]
    assert [(c["tid"], c["depth"]) for c in j["root_causes"]] == [(C.POLLER, 0)]


def test_not_causal_rule_drops_a_holder():
    g = lock_poller_graph(holder="wait", other="channel")
    from argus.diagnose.ownership import owners
    o = owners(g, g.utid_of_tid(C.POLLER), s(0.5), s(3.5))[1]           # the weak channel holder
    from argus.diagnose.slice import EdgeRef
    rule = R.not_causal_rule(g, EdgeRef.of(g, o.edge))
    ask = Script("n")
    ch = AskingChooser(g, ask=ask, rules=[rule])
    j = to_json(diagnose(g, C.POLLER, chooser=ch))
    assert [q.kind for q in ask.questions] == ["go_on"] and ch.saved_by_rules == 1
    assert j["root_causes"][0]["tid"] == C.HOLDER


def test_owner_answers_replay():
    from argus.diagnose.chooser import auto_answers_of
    g = lock_poller_graph(holder="wait", other="channel")
    ch = AskingChooser(g, ask=Script("2"))         # other/900 is LongRunning: no go_on question
    diagnose(g, C.POLLER, chooser=ch)
    assert auto_answers_of(ch) == [{"kind": "owner", "answer": "2"}]
    j = to_json(diagnose(g, C.POLLER, chooser=AskingChooser(g, presets=auto_answers_of(ch))))
    assert j["root_causes"][0]["tid"] == C.OTHER and j["queries"] == 1
