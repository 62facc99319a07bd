"""What-if slack: the critical-path replay on hand-made dependency trees and
on crafted traces whose answers follow from their timings."""
from support import crafted as C
from argus.diagnose import diagnose
from argus.diagnose.report import render_text, to_json
from argus.diagnose.whatif import Node, link, replay


def tree(hang, **nodes):
    ns = {"hang": Node(*hang)}
    for k, (start, end, base, parent) in nodes.items():
        ns[k] = Node(start, end, base, parent)
    return link(ns, "hang")


def saves(nodes, k):
    return nodes["hang"].end - replay(nodes, "hang", k)


def test_one_culprit_shrinks_the_hang_by_its_excess():
    ns = tree((0, 100), c=(10, 90, 5, None))
    assert saves(ns, "c") == 75


def test_parallel_culprits_only_the_later_one_matters():
    ns = tree((0, 100), c1=(10, 90, 5, None), c2=(10, 60, 5, None))
    assert saves(ns, "c1") == 30          # c2 still holds the hang until 60 (+10 tail)
    assert saves(ns, "c2") == 0           # c1 ends later anyway: all slack


def test_nested_culprit_shifts_every_level_above_it():
    ns = tree((0, 100), d=(5, 95, 3, None), h=(10, 90, 5, "d"))
    assert saves(ns, "h") == 75           # d resumes at 15 (+5 tail), the hang at 20 (+5 tail)
    assert saves(ns, "d") == 87           # d itself at its baseline: ends at 8, the hang at 13


def test_unknown_baseline_is_an_upper_bound():
    ns = tree((0, 100), c=(10, 90, None, None))
    assert saves(ns, "c") == 80


def test_never_below_zero_or_above_the_hang():
    ns = tree((0, 100), c=(10, 20, 50, None))     # its baseline is longer than what it took
    assert saves(ns, "c") == 0
    ns = tree((0, 100), c=(0, 100, 0, None))
    assert saves(ns, "c") == 100


def test_client_daemon_whatif_matches_the_timings():
    """app waits on daemon, daemon on helper, helper runs hang_s (baseline runs
    and waits take microseconds): each root cause at its baseline leaves the
    hang as long as the chain around it."""
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    d = diagnose(g, C.APP, threshold_ns=int(1e9))
    by_tid = {int(g.threads.tid[r.utid]): r for r in d.root_causes}
    daemon, helper = by_tid[C.DAEMON], by_tid[C.HELPER]
    head = info["daemon_wait_start"] - info["app_wait_start"]        # before the culprits' window
    tail = info["app_wait_end"] - info["daemon_wait_end"]            # after it
    req = info["req"][-2]                                            # the last baseline request
    helper_base = (req + C.us(265)) - (req + C.us(45))               # its run on the baseline path
    daemon_base = C.us(200)                                          # its quick futex waits
    hang = info["app_wait_end"] - info["app_wait_start"]
    assert helper.whatif["baseline_ns"] == helper_base and helper.whatif["baseline_from"] == "baseline path"
    assert helper.whatif["hang_ns_after"] == head + helper_base + tail
    assert helper.whatif["saves_ns"] == hang - (head + helper_base + tail)
    assert daemon.whatif["baseline_ns"] == daemon_base
    assert daemon.whatif["hang_ns_after"] == head + daemon_base + tail
    j = to_json(d)
    assert all(c["whatif"] is not None for c in j["root_causes"])
    text = render_text(d)
    assert text.count("what-if:") == len(d.root_causes)
    assert text == render_text(to_json(d))


def test_long_running_hang_without_baseline_is_a_bound():
    g = C.editor_xorg()
    d = diagnose(g, 300, threshold_ns=int(1e9))
    r = d.root_causes[0]
    assert r.depth == 0 and r.whatif["bound"] and r.whatif["saves_ns"] == d.hang.end_ns - d.hang.start_ns
