"""The generator is deterministic for a seed, covers what the corpus
promises, and every mechanism's template builds and runs to completion in
every language that has it (untraced, no root needed)."""
import concurrent.futures
import json
import os
import select
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import programs  # noqa: E402
import gen  # noqa: E402
import score  # noqa: E402


def test_same_seed_same_cases_and_sources():
    a, b = gen.cases(7, 40), gen.cases(7, 40)
    assert [c.to_dict() for c in a] == [c.to_dict() for c in b]
    assert [programs.source(c) for c in a] == [programs.source(c) for c in b]
    assert [c.to_dict() for c in gen.cases(8, 40)] != [c.to_dict() for c in a]


def test_fast_set_is_the_head_of_the_full_set():
    full = gen.cases(1, gen.FULL_N)
    assert [c.id for c in gen.cases(1, gen.FAST_N)] == [c.id for c in full[:gen.FAST_N]]
    assert len({c.id for c in full}) == gen.FULL_N


def test_fast_set_covers_mechanisms_depths_languages():
    fast = gen.cases(1, gen.FAST_N)
    assert len(gen.LINKS) + len(gen.ROOTS) >= 15
    seen = set()
    for c in fast:
        seen |= set(c.mechanisms())
    assert seen == set(gen.MECHANISMS)
    assert {c.depth for c in fast} == {1, 2, 3, 4, 5}
    assert {c.lang for c in fast} == set(gen.ALL)
    assert {c.hung_type for c in fast} == {gen.LONG_WAIT, gen.REPEATED_YIELD}
    assert {c.root_type for c in fast} == {gen.LONG_WAIT, gen.LONG_RUNNING, gen.REPEATED_YIELD}
    for key in ("idle", "fd_reuse", "load", "baselines"):
        assert any(c.noise[key] for c in fast), key


def test_placement_respects_each_mechanism():
    for c in gen.cases(1, gen.FULL_N):
        assert c.placement[0] == "main" and len(c.placement) == c.depth + 1
        for i, name in enumerate(c.links, 1):
            want = gen.BY_NAME[name].placement
            assert want == "any" or c.placement[i] == want, (c.id, name)
            assert c.lang in gen.BY_NAME[name].langs
        if c.lang == gen.GO:
            assert c.hung_mode == "block" and set(c.placement[1:]) <= {"thread"}
            assert c.links.count("signal") <= 1


def _template_cases():
    """A depth-1 case per (language, link) in both hung modes the language
    has, and one per (language, root behaviour): short holds."""
    out, k = [], 900
    for lang in gen.ALL:
        for m in gen.LINKS:
            if lang not in m.langs:
                continue
            for mode in ("block", "poll") if lang != gen.GO else ("block",):
                where = m.placement if m.placement != "any" else ("process" if mode == "poll" and lang != gen.GO
                                                                   else "thread")
                noise = {"idle": mode == "poll", "fd_reuse": True, "load": mode == "block",
                         "baselines": m.token}
                out.append(gen.Case(id=f"{k}-{lang}-{m.name}-{mode}", seed=0, index=k, lang=lang, links=[m.name],
                                    root="sleep", placement=["main", where], hung_mode=mode, ongoing=False,
                                    hold_s=0.3, noise=noise, pinned=[True, mode == "block"]))
                k += 1
        for root in gen.ROOTS:
            out.append(gen.Case(id=f"{k}-{lang}-pipe-{root}", seed=0, index=k, lang=lang, links=["pipe", "mutex"],
                                root=root, placement=["main", "thread", "thread"], hung_mode="block",
                                ongoing=False, hold_s=0.3, noise={}, pinned=[True, True, False]))
            k += 1
    return out


def _run(case, tmp):
    scratch = os.path.join(tmp, case.id)
    os.makedirs(scratch)
    proc = subprocess.Popen(programs.command(case, scratch), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else ""
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        return f"{case.id}: did not end (the chain does not unwind)"
    if rc != 0 or not line:
        return f"{case.id}: exit {rc}, first line {line!r}: {proc.stderr.read()[-300:]}"
    roles = json.loads(line)["roles"]
    if len(roles) != case.depth + 1 or roles[0][0] != proc.pid or roles[0][1] != proc.pid:
        return f"{case.id}: roles {roles} (pid {proc.pid})"
    return None


def test_every_template_builds_and_unwinds(tmp_path):
    if not os.path.exists(programs.GO):
        pytest.skip("no go toolchain")
    cases = _template_cases()
    for c in cases:
        programs.build(c)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        errors = [e for e in pool.map(lambda c: _run(c, str(tmp_path)), cases) if e]
    assert not errors, "\n".join(errors)


def test_score_names_roles():
    case = gen.Case(id="x", seed=0, index=0, lang=gen.C, links=["pipe"], root="cpu", placement=["main", "thread"],
                    hung_mode="block", ongoing=False, hold_s=1, noise={})
    truth = {"roles": [[10, 10], [10, 11]], "load": 0}
    report = {"spinning": {"pid": 10, "tid": 10, "block_type": "LongWait", "start_ns": 0, "end_ns": 5},
              "root_causes": [{"pid": 10, "tid": 10, "block_type": "LongWait", "comm": "x"},
                              {"pid": 10, "tid": 11, "block_type": "LongRunning", "comm": "x", "primary": True}]}
    s = score.score_case(case, truth, report, [{"tid": 10, "start_ns": 1, "end_ns": 9}])
    assert (s["status"], s["root"], s["agree"], s["primary_role"]) == ("PASS", "yes", True, "R1")
    report["root_causes"][0]["primary"], report["root_causes"][1]["primary"] = True, False
    s = score.score_case(case, truth, report, [])
    assert (s["status"], s["root"], s["agree"], s["primary_role"]) == ("FAIL", "listed", False, "R0")


def test_unpinned_go_root_is_no_other_roles_thread():
    case = gen.Case(id="g", seed=0, index=0, lang=gen.GO, links=["mutex", "channel"], root="sleep",
                    placement=["main", "thread", "thread"], hung_mode="block", ongoing=False, hold_s=1, noise={},
                    pinned=[True, True, False])
    truth = {"roles": [[10, 10], [10, 12], [10, 0]], "load": 0}
    sp = {"pid": 10, "tid": 10, "block_type": "LongWait", "start_ns": 0, "end_ns": 5}
    for tid, want in ((13, "yes"), (12, "no"), (10, "no")):
        report = {"spinning": sp, "root_causes": [{"pid": 10, "tid": tid, "block_type": "LongWait",
                                                   "comm": "g", "primary": True}]}
        assert score.score_case(case, truth, report, [])["root"] == want, tid
    # the noise load is a goroutine locked to its own thread: a bystander
    truth["load"] = 14
    report = {"spinning": sp, "root_causes": [{"pid": 10, "tid": 14, "block_type": "LongRunning",
                                               "comm": "g", "primary": True}]}
    s = score.score_case(case, truth, report, [])
    assert (s["root"], s["primary_role"]) == ("no", "load")
