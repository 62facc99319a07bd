"""Differential view on crafted traces: the hung wait against the quick
waits of the same operation."""
from support import crafted as C
from argus.diagnose import diagnose
from argus.diagnose.compare import compare, render_compare
from argus.diagnose.report import to_json


def test_hung_wait_names_object_peer_and_duration():
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    d = diagnose(g, C.APP, threshold_ns=int(1e9))
    c = compare(g, d.hang.vertex, int(1e9))
    assert len(c["baselines"]) == 4
    top = c["differences"][0]
    assert top["kind"] == "wait_duration"
    assert top["obj"] == C.APP_FD and top["peer"]["tid"] == C.DAEMON
    assert top["hung_ns"] == info["app_wait_end"] - info["app_wait_start"]
    assert top["baseline_ns"] == C.us(250)
    assert not [x for x in c["differences"] if x["kind"] in ("wait_object", "wait_peer")]
    lines = render_compare(c)
    assert "read(fd 5) (object fd 5, peer daemond/200) lasted 5.000 s, baselines 250 us" in "\n".join(lines)
    assert to_json(d)["compare"]["differences"][0]["kind"] == "wait_duration"


def test_running_vertex_against_the_same_work_done_quickly():
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    helper = g.utid_of_tid(C.HELPER)
    v = g.segment_at(helper, info["helper_start"] + C.ms(1))
    c = compare(g, v, int(1e9))
    assert c["baselines"], "the quick runs of the earlier requests"
    kinds = [x["kind"] for x in c["differences"]]
    assert "run_duration" in kinds


def test_no_baseline_says_so():
    g = C.editor_xorg()
    d = diagnose(g, 300, threshold_ns=int(1e9))
    c = compare(g, d.hang.vertex, int(1e9))
    assert c["baselines"] == [] and c["differences"] == [] and "no baseline" in c["note"]
