"""The session's answers survive the round trip `export FILE --answers` ->
`argus debug --answers FILE` (and --resume) exactly: a crafted demo-shaped
graph (support.crafted.demo_like: a weak edge, then a go-on question), a
real SQLite store, answers typed through the REPL's ask callback."""
import io
import json

from rich.console import Console

from argus.cli.repl.app import execute
from argus.cli.repl.context import ReplContext
from argus.cli.session import Store, read_answers_doc
from argus.diagnose import diagnose
from support import crafted as C
from support.crafted import ms


def _ctx(g, hang, store, presets=(), preset_rules=()):
    sid = store.create("crafted", hang, ms(2))
    ctx = ReplContext(g, hang, ms(2), store, sid, console=Console(file=io.StringIO(), width=200))
    ctx.presets, ctx.preset_rules = list(presets), list(preset_rules)
    return ctx


def _typed(*keys):
    keys = list(keys)
    return lambda q: keys.pop(0)


def _same(a, b):
    a, b = json.loads(json.dumps(a)), json.loads(json.dumps(b))
    a["metrics"].pop("mode"), b["metrics"].pop("mode")
    return a == b


def test_answers_round_trip_in_the_store_that_now_has_their_rule(tmp_path):
    """"n" to the weak edge makes a rule; replayed in the same store (the
    rule now there) the recorded "n" answers it again instead of the rule,
    so the go-on answer after it still lands on its question."""
    g = C.demo_like().build(trace_end=C.s(8))
    hang = diagnose(g, 100).hang
    store = Store(str(tmp_path / "s.db"))
    ctx = _ctx(g, hang, store)
    ctx.run_diagnosis(ask=_typed("zz", "n", "n"))       # a typo, then not causal; then no go-on
    assert [(a["kind"], a["answer"]) for a in store.answers(ctx.sid)] == [("weak", "n"), ("go_on", "n")]
    execute(ctx, f"export {tmp_path / 'a.json'} --answers")
    presets, made = read_answers_doc(str(tmp_path / "a.json"))
    assert presets == [{"kind": "weak", "answer": "n"}, {"kind": "go_on", "answer": "n"}] and len(made) == 1
    assert len(store.rules()) == 1
    replay = _ctx(g, hang, store, presets, made)
    replay.run_diagnosis()
    assert not replay.chooser.diverged and replay.report["queries"] == 2
    assert _same(replay.report, ctx.report)
    assert [(a["kind"], a["answer"]) for a in store.answers(replay.sid)] == [("weak", "n"), ("go_on", "n")]
    assert len(store.rules()) == 1                      # made again: the same rule, not a second one
    # --resume reads the same from the session itself
    resumed = _ctx(g, hang, store, store.answers(ctx.sid), store.rules_made(ctx.sid))
    resumed.run_diagnosis()
    assert not resumed.chooser.diverged and _same(resumed.report, ctx.report)


def test_diagnosing_another_vertex_keeps_the_hangs_answers(tmp_path):
    """`diagnose V` of another vertex asks its own questions; the session
    keeps the answers about its hang, which export --answers writes."""
    g = C.demo_like().build(trace_end=C.s(8))
    d = diagnose(g, 100)
    store = Store(str(tmp_path / "s.db"))
    ctx = _ctx(g, d.hang, store)
    ctx.ask = _typed("f", "y")
    execute(ctx, "diagnose")
    kept = store.answers(ctx.sid)
    assert [a["kind"] for a in kept] == ["weak", "go_on"]
    other = next(r.vertex for r in ctx.diagnosis.root_causes)
    ctx.ask = lambda q: ""
    execute(ctx, f"diagnose {other}")
    assert ctx.diagnosis.hang.vertex != d.hang.vertex
    assert store.answers(ctx.sid) == kept
    execute(ctx, f"export {tmp_path / 'a.json'} --answers")
    assert read_answers_doc(str(tmp_path / "a.json"))[0] == [{"kind": "weak", "answer": "f"},
                                                             {"kind": "go_on", "answer": "y"}]
