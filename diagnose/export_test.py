"""The exporters (export_model, export_perfetto, export_chrome, export_dot,
report_html) on a real recorded trace (tests/data/golden.argus: a shell whose
main thread waits 67 ms for a pipeline of processes; its diagnosis walks
wakeup, spawn, message and weak program-order edges) and on a crafted trace
whose thread names are markup.  The Perfetto file is read back with the
perfetto package's protos (the published format), not with our writer."""
import argparse
import html.parser
import json
import pathlib

import pytest

from argus.cli import cmd_debug
from argus.diagnose import diagnose, export_chrome, export_dot, export_model as M, export_perfetto, report_html
from argus.diagnose.whatif import render_whatif
from argus.diagnose.report import to_json
from support import crafted as C

GOLDEN = str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus")
HOSTILE = "<b onclick=x>'&\""      # a comm holds 16 bytes


@pytest.fixture(scope="module")
def golden():
    """(graph, diagnosis) of the golden trace's shell hang, loaded the way
    `argus export` loads it (cmd_debug.open_context)."""
    p = argparse.ArgumentParser()
    cmd_debug.add_diagnosis_args(p, json=False)
    # --no-rules: the rules a user saved must not change the walk under test
    args = p.parse_args(["--buffer", GOLDEN, "--pid", "11628", "--threshold", "0.03", "--at", "0.05", "--no-rules"])
    args.auto = True
    ctx = cmd_debug.open_context(args)
    ctx.run_diagnosis(auto=True)
    return ctx


@pytest.fixture(scope="module")
def tl(golden):
    return M.timeline(golden.g, golden.diagnosis)


def test_timeline_holds_every_path_thread_edge_and_tiles_states(golden, tl):
    d = golden.diagnosis
    utids = [t["utid"] for t in tl["threads"]]
    assert utids[0] == d.hang.utid and len(set(utids)) == len(utids)
    assert {e.utid for e in d.path} | {r.utid for r in d.root_causes} == set(utids)
    flows = {f["eid"]: f for f in tl["flows"]}
    path_eids = [e.edge["eid"] for e in d.path if e.edge and e.edge.get("eid") is not None]
    assert len(path_eids) > 10
    types = set()
    for eid in path_eids:
        f = flows[eid]
        assert f["on_path"] and f["src_utid"] in utids and f["dst_utid"] in utids
        types.add(M.flow_name(f))
    assert {"wakeup", "spawn", "message", "program_order (weak)"} <= types
    for u, states in tl["states"].items():
        assert states, f"thread {u} has no states"
        for (s1, a1, b1, _), (s2, a2, b2, _) in zip(states, states[1:]):
            assert a1 < b1 <= a2 < b2
        assert tl["start"] <= states[0][1] and states[-1][2] <= tl["end"]
    # the hang itself: the spinning thread is blocked in wait4 over it
    h = tl["hang"]
    blocked = [x for x in tl["states"][h["utid"]] if x[0] == "blocked" and x[1] <= h["start"] + 1 and x[2] >= h["end"] - 1]
    assert blocked and blocked[0][3] == "wait4"


def test_lanes_never_overlap():
    items = [(0, 10), (5, 8), (10, 12), (7, 20), (0, 1)]
    lanes = M.lanes(items)
    for k in set(lanes):
        spans = sorted(items[i] for i in range(len(items)) if lanes[i] == k)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert max(lanes) == 2


def _perfetto(tl):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    trace = pb.Trace()
    trace.ParseFromString(export_perfetto.render(tl))
    return pb, trace


def test_perfetto_read_back_with_the_published_protos(golden, tl):
    pb, trace = _perfetto(tl)
    tracks, events = {}, []
    for p in trace.packet:
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        elif p.HasField("track_event"):
            events.append((p.timestamp, p.track_event))
    thread_track = {td.thread.tid: u for u, td in tracks.items() if td.HasField("thread")}
    assert set(thread_track) == {t["tid"] for t in tl["threads"]}
    owner = {}                           # any track -> the tid of the thread track it hangs under
    for u, td in tracks.items():
        if td.HasField("thread"):
            owner[u] = td.thread.tid
    for u, td in tracks.items():
        if td.parent_uuid in owner:
            owner[u] = owner[td.parent_uuid]
    # timestamps never go back, every begin has its end on the same track
    assert [ts for ts, _ in events] == sorted(ts for ts, _ in events)
    depth = {}
    for _, ev in events:
        if ev.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            depth[ev.track_uuid] = depth.get(ev.track_uuid, 0) + 1
        elif ev.type == pb.TrackEvent.TYPE_SLICE_END:
            depth[ev.track_uuid] -= 1
            assert depth[ev.track_uuid] >= 0
    assert set(depth.values()) <= {0}
    # states: the spinning thread is "Blocked: wait4" over the hang
    h = golden.hang
    states = [(ts, ev.name) for ts, ev in events if "argus.thread_state" in ev.categories
              and owner[ev.track_uuid] == h.tid and ev.type == pb.TrackEvent.TYPE_SLICE_BEGIN]
    assert ("Blocked: wait4" in {n for _, n in states}) and {"Running"} <= {n for _, n in states}
    assert any(n == "Blocked: wait4" and ts <= h.start_ns for ts, n in states)
    # flows: every edge the path took, from its source thread to its destination thread
    out_by_flow, in_by_flow = {}, {}
    for _, ev in events:
        for f in ev.flow_ids:
            out_by_flow[f] = (owner[ev.track_uuid], ev.name, list(ev.categories))
        for f in ev.terminating_flow_ids:
            in_by_flow[f] = owner[ev.track_uuid]
    g = golden.g
    for e in golden.diagnosis.path:
        if not e.edge or e.edge.get("eid") is None:
            continue
        eid = e.edge["eid"]
        fid = (eid << 1) | 1
        src, dst = int(g.seg.utid[int(g.edges.src[eid])]), int(g.seg.utid[int(g.edges.dst[eid])])
        assert out_by_flow[fid][0] == int(g.threads.tid[src]) and in_by_flow[fid] == int(g.threads.tid[dst])
        assert out_by_flow[fid][1].startswith(e.edge["type"])
        cat = out_by_flow[fid][2][0]
        assert cat.endswith(".path") and (".weak" in cat) == bool(e.edge["weak"])
    # the diagnosis chain: one named slice per path step, chained by flows, root causes marked
    path_slices = {ev.name: ev for _, ev in events if "argus.diagnosis" in ev.categories}
    for i, p in enumerate(tl["path"]):
        assert M.path_label(p) in path_slices
        if i and p["edge_type"] is not None:
            assert (i + 1) << 1 in path_slices[M.path_label(p)].flow_ids
            assert (i + 1) << 1 in path_slices[M.path_label(tl["path"][i - 1])].terminating_flow_ids
    roots = [ev for _, ev in events if "argus.diagnosis.root_cause" in ev.categories]
    assert len(roots) == len(golden.diagnosis.root_causes)
    assert sum(ev.name.startswith("PRIMARY ROOT CAUSE") for ev in roots) == 1


def test_chrome_json_has_the_same_content(tl):
    data = json.loads(export_chrome.render(tl))
    ev = data["traceEvents"]
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    for t in tl["threads"]:
        assert {M.thread_label(t), f"{M.thread_label(t)} state", f"{M.thread_label(t)} diagnosis"} <= names
    starts = {e["id"] for e in ev if e["ph"] == "s"}
    ends = {e["id"] for e in ev if e["ph"] == "f"}
    assert starts == ends
    assert {(f["eid"] << 1) | 1 for f in tl["flows"]} <= starts
    xs = [e for e in ev if e["ph"] == "X"]
    assert all(e["dur"] >= 0 for e in xs)
    assert sum(e["name"].startswith("PRIMARY ROOT CAUSE") for e in xs) == 1
    assert any(e["name"] == "Blocked: wait4" and e["cat"] == "argus.thread_state" for e in xs)


def test_dot_and_svg(tl):
    src = export_dot.render_dot(tl)
    for p in tl["path"]:
        assert f"v{p['vertex']}" in src
    assert "PRIMARY ROOT CAUSE" in src and "style=dashed" in src    # a weak edge is drawn apart
    svg = export_dot.render_svg(tl)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "PRIMARY ROOT CAUSE" in svg


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _hostile_diagnosis():
    t, info = C.client_daemon()
    t.rename(C.HELPER, 1, HOSTILE)
    t.rename(C.DAEMON, 1, "</svg><script>")
    g = t.build(trace_end=info["trace_end"])
    return g, diagnose(g, C.APP)


def test_html_escapes_every_name_and_runs_no_script():
    g, d = _hostile_diagnosis()
    tl = M.timeline(g, d)
    assert HOSTILE in {t["comm"] for t in tl["threads"]}
    page = report_html.render(to_json(d), tl, [], {}, export_dot.render_svg(tl))
    assert HOSTILE not in page and "<script" not in page and "<b " not in page
    assert "&lt;b onclick=x&gt;&#x27;&amp;&quot;" in page
    p = _Tags()
    p.feed(page)
    tags = {t for t, _ in p.tags}
    assert "script" not in tags and "img" in tags
    imgs = [a for t, a in p.tags if t == "img"]
    assert all(a["src"].startswith("data:image/svg+xml;base64,") for a in imgs)
    assert not any(k.startswith("on") for _, a in p.tags for k in a)
    # the DOT source quotes the names as text, never as HTML labels
    src = export_dot.render_dot(tl)
    assert "<b onclick" in src and "label=<" not in src


def test_html_lists_questions_answers_and_lldb_results(golden, tl, tmp_path):
    answers = golden.chooser.answers
    lldb = {(r["pid"], r["tid"]): [{"path": str(tmp_path / "x.json"), "instructions": [1, 2], "calls": [],
                                    "function": "main"}] for r in golden.report["root_causes"][:1]}
    page = report_html.render(golden.report, tl, answers, lldb, None)
    p = _Tags()
    p.feed(page)
    ids = {a.get("id") for _, a in p.tags}
    assert {"timeline", "chain", "title"} <= ids
    asked = [a for a in answers if a.get("question")]
    if asked:
        assert "questions" in ids and report_html.esc(asked[0]["question"].splitlines()[0]) in page
    links = [a["href"] for t, a in p.tags if t == "a" and "lldb" in a.get("class", "")]
    assert links == ["file://" + str(tmp_path / "x.json")]
    assert page.count("<tr>") >= len(golden.report["path"]) + 1


def test_timeline_pools_states_shorter_than_a_pixel():
    # a thread that polls: 100k running / runnable / blocked intervals of 1-3 us, then a long wait
    states, t = [], 0
    for k in range(100_000):
        for state, d in (("running", 1_000), ("runnable", 3_000), ("blocked", 2_000)):
            states.append((state, t, t + d, "poll" if state == "blocked" else None))
            t += d
    states.append(("blocked", t, t + 600_000_000, "read(fd 3)"))
    drawn = report_html._per_pixel(states, 0, (t + 600_000_000) / 800)
    assert len(drawn) <= 2 * 800
    assert drawn[-1] == ("blocked", t, t + 600_000_000, "read(fd 3)")          # a long interval stays as it is
    assert {s for s, *_ in drawn[:-1]} == {"runnable"}                         # the dominant state of each pixel
    assert all(a[2] <= b[1] for a, b in zip(drawn, drawn[1:]))


def test_exports_escape_control_bytes_and_bidi_overrides():
    t, info = C.client_daemon()
    t.rename(C.HELPER, 1, "\x1b[2Jx\x07\u202egnp")
    g = t.build(trace_end=info["trace_end"])
    tl = M.timeline(g, diagnose(g, C.APP))
    svg = export_dot.render_svg(tl)
    page = report_html.render(to_json(diagnose(g, C.APP)), tl, [], {}, svg)
    for text in (page, export_dot.render_dot(tl), svg.decode() if isinstance(svg, bytes) else svg):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\e[2Jx\\x07\\u202egnp" in page
    assert "\\\\e[2Jx\\\\x07\\\\u202egnp" in export_dot.render_dot(tl)    # DOT escapes the backslash


def test_html_carries_each_root_causes_whatif_profile_and_the_compare(golden, tl):
    page = report_html.render(golden.report, tl, golden.chooser.answers, {}, None)
    assert any(r.get("whatif") for r in golden.report["root_causes"])
    for r in golden.report["root_causes"]:
        w = render_whatif(r.get("whatif"))
        if w:
            assert report_html.esc(w) in page
        if r.get("profile"):
            assert f"id='flame-{r['tid']}'" in page
            assert report_html.esc(r["profile"]["top"]["functions"][0]) in page
    if golden.report.get("compare"):
        assert "id='compare'" in page


def test_html_says_the_primary_root_cause_first():
    """Under the title, before the timeline and the chain: the primary root
    cause, its what-if and its top function, linked to its section."""
    from support import crafted as C
    g = C.gil_like(release=False)
    j = to_json(diagnose(g, 10))
    (r,) = [r for r in j["root_causes"] if r["primary"]]
    r["whatif"] = {"baseline_ns": 1000, "baseline_from": "baseline path", "saves_ns": 5, "hang_ns_after": 7,
                   "bound": False}
    page = report_html.render(j, M.timeline(g, diagnose(g, 10)), [], {}, None)
    head = page[:page.index('id="timeline"')]
    assert "id='answer'" in head and f"{r['comm']}/{r['tid']}" in head and "LongRunning" in head
    assert report_html.esc(render_whatif(r["whatif"])) in head
    assert "href='#root-causes'" in head and "id='root-causes'" in page
    r["profile"] = {"top": {"functions": ["spin_<here>"]}}          # its top function, escaped
    assert "spin_&lt;here&gt;" in report_html._answer(j)


def test_flame_graph_draws_the_top_down_tree_escaped():
    p = {"top_down": [{"function": "main", "dso": "app", "share": 1.0, "samples": 10, "children": [
        {"function": "<b onclick=x>", "dso": "app", "share": 0.6, "samples": 6, "children": []},
        {"function": "tiny", "dso": "libc", "share": 0.0005, "samples": 0, "children": []}]}]}
    svg = report_html.flame_svg(p, "f")
    assert svg.count("<rect") == 2 and "height='34'" in svg          # two rows; the 0.05% node left out
    assert "<b onclick" not in svg and "&lt;b onclick=x&gt;" in svg
    assert "width='900.0'" in svg and "width='540.0'" in svg
