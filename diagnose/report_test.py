"""Reports: the JSON schema and the plain-text rendering."""
import json

from support import crafted as C
from argus.diagnose import (diagnose, list_hangs, to_json, render_json, render_text, render_hangs_text,
                            hangs_to_json)
from argus.diagnose.report import fmt_dur, fmt_rel


def test_duration_formatting():
    assert [fmt_dur(x) for x in (0, 999, 1000, 999_499, 999_500, 999_949_999, 999_950_000, 5_000_050_000)] == \
        ["0 ns", "999 ns", "1 us", "999 us", "1.0 ms", "999.9 ms", "1.000 s", "5.000 s"]
    assert (fmt_rel(-1500), fmt_rel(2_500_000)) == ("-2 us", "+2.5 ms")


def test_json_schema_keys_and_types():
    t, info = C.client_daemon()
    d = diagnose(t.build(trace_end=info["trace_end"]), C.APP)
    j = json.loads(render_json(d))
    assert list(j) == ["schema", "spinning", "path", "root_causes", "queries", "metrics", "rules_fired", "compare", "notes",
                      "trace"]
    assert j["metrics"] == {"queries": 0, "path_len": len(j["path"]), "auto_path_len": len(j["path"]),
                            "saved_by_rules": 0, "saved_by_memory": 0, "mode": "auto"}
    assert j["schema"] == "argus.diagnosis/1"
    for k in ("pid", "tid", "comm", "start_ns", "end_ns", "block_type"):
        assert k in j["spinning"]
    for p in j["path"]:
        assert {"pid", "tid", "comm", "start_ns", "end_ns", "block_type", "edge_in"} <= set(p)
        assert p["edge_in"] is None or set(p["edge_in"]) == {"type", "weak"}
    assert j["path"][0]["edge_in"] is None
    for c in j["root_causes"]:
        assert {"pid", "tid", "comm", "block_type", "start_ns", "end_ns", "why", "depth", "primary"} <= set(c)
    assert sum(c["primary"] for c in j["root_causes"]) == 1
    assert isinstance(j["queries"], int)
    assert j == to_json(d)                                  # plain data: no numpy inside


def test_text_rendering_long_running():
    d = diagnose(C.editor_xorg(), 300)
    assert render_text(d) == """\
Hang in editor/300 (process editor/300): LongRunning for 3.000 s, ended at +3.000 s
  hang start = 1.000 s into the trace; times below are relative to it
  evidence: on CPU 99%, runnable 1%

Chain (spinning thread first, walking back along causality):
  #  thread      process     start   end       block type   edge in  role
  0  editor/300  editor/300  +0 ns   +3.000 s  LongRunning  -        spinning
  1  Xorg/400    Xorg/400    -20 us  +20 us    LongWait     wakeup   slice
  slice origin: culled (device) at Xorg/400

Root causes (by depth; * = primary: the deepest, the culprit of the culprit):
  * depth 0  editor/300 (process editor/300)  LongRunning  +0 ns .. +3.000 s
      busy on CPU 99% of the hang; work triggered by Xorg/400 (wakeup at +0 ns), device wakeup
      what-if: if it took no time at all (no baseline known: an upper bound), the hang would be 3.000 s shorter (0 ns instead of 3.000 s)

Queries: 0; path length 2 (automatic answers, as --auto)
"""


def test_text_rendering_cross_process_and_json_roundtrip():
    t, info = C.client_daemon()
    d = diagnose(t.build(trace_end=info["trace_end"]), C.APP)
    text = render_text(d)
    assert text == render_text(json.loads(render_json(d)))
    lines = text.splitlines()
    assert lines[0] == "Hang in app/100 (process app/100): LongWait for 5.000 s, ended at +5.000 s"
    assert lines[3] == "  baseline: a 250 us wait at -1.000 s (same thread, same object)"
    assert lines[6].split() == ["#", "thread", "process", "start", "end", "block", "type", "edge", "in", "role"]
    assert lines[8].split() == ["1", "app/100", "app/100", "+5.000", "s", "+5.000", "s", "LongWait",
                                "program_order", "slice"]      # the hang's own waker first
    assert lines[13].split() == ["6", "app/100", "app/100", "-999.8", "ms", "-999.7", "ms", "LongWait",
                                 "baseline", "baseline"]       # then a quick instance, as evidence
    assert lines[18].split() == ["11", "daemond/200", "daemond/200", "+30", "us", "+5.000", "s", "LongWait",
                                 "culprit", "culprit", "d1"]
    i = lines.index("Root causes (by depth; * = primary: the deepest, the culprit of the culprit):")
    assert lines[i + 1] == "    depth 1  daemond/200 (process daemond/200)  LongWait  +30 us .. +5.000 s"
    assert lines[i + 3].startswith("      what-if: if it took its baseline (200 us, baseline wait)")
    assert lines[i + 4] == "  * depth 2  helper/201 (process daemond/200)  LongRunning  +30 us .. +5.000 s"
    assert lines[-1] == "Queries: 0; path length 23 (automatic answers, as --auto)"


def test_hangs_listing():
    g = C.editor_xorg()
    assert render_hangs_text(g, list_hangs(g, 300)) == (
        "thread           kind     block type   start    duration  what\n"
        "editor/300 main  stretch  LongRunning  1.000 s  3.000 s   cpu 99%, 0 yields\n")
    assert render_hangs_text(g, []) == "no hangs\n"
    j = hangs_to_json(g, list_hangs(g, 300))
    assert json.loads(json.dumps(j)) == j and j["schema"] == "argus.hangs/1"
    assert [(h["tid"], h["kind"], h["block_type"], h["start_ns"], h["main"]) for h in j["hangs"]] == \
        [(300, "stretch", "LongRunning", 1_000_020_000, True)]


def test_one_time_origin_with_wall_clock(monkeypatch):
    """debug's header and the hangs list print the same time for the same
    hang: seconds since the buffer's first timestamp (g.time_origin), with the
    wall clock from the header's realtime offset."""
    import time
    from argus.diagnose import list_hangs, render_hangs_text, hangs_to_json
    from argus.diagnose.report import fmt_trace_time
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    g = C.editor_xorg()
    g.time_origin = 500_000_000                      # the buffer began 0.5 s into the graph's clock
    g.wall_offset_ns = 1_700_000_000 * 10**9         # 2023-11-14 22:13:20 UTC at monotonic 0
    d = diagnose(g, 300)
    text = render_text(d)
    assert "hang start = 0.500 s (2023-11-14 22:13:21.000) into the trace" in text
    hangs = render_hangs_text(g, list_hangs(g, 300, threshold_ns=2_000_000_000))
    assert "0.500 s (2023-11-14 22:13:21.000)" in hangs
    assert fmt_trace_time(g, 1_000_020_000) == "0.500 s (2023-11-14 22:13:21.000)"
    j = to_json(d)
    assert j["trace"]["origin_ns"] == 500_000_000 and j["trace"]["wall_offset_ns"] == 1_700_000_000 * 10**9
    assert render_text(json.loads(render_json(d))) == text
    assert hangs_to_json(g, [])["trace"]["origin_ns"] == 500_000_000


def test_processes_name_their_container_in_reports_hangs_and_exports():
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    from argus.diagnose import export_chrome, export_dot, export_model as M, export_perfetto, report_html

    docker = "/system.slice/docker-" + "0123456789abcdef" * 4 + ".scope"
    t, info = C.client_daemon()
    t.proc_ns(200, 0, 77, docker, 4026532000)
    t.proc_ns(100, 0, 5, "/user.slice/user-0.slice/session-1.scope", 4026531840)
    g = t.build(trace_end=info["trace_end"])
    assert g.process_scope(200) == {"container": "docker:0123456789ab", "cgroup": docker, "netns": 4026532000}
    d = diagnose(g, C.APP)
    text = render_text(d)
    assert text.splitlines()[0].startswith("Hang in app/100 (process app/100 [session-1.scope]): ")
    assert "daemond/200 (process daemond/200 [docker:0123456789ab])" in text
    assert text == render_text(json.loads(render_json(d)))
    j = to_json(d)
    assert (j["spinning"]["container"], j["spinning"]["netns"]) == ("session-1.scope", 4026531840)
    hangs = render_hangs_text(g, list_hangs(g, C.APP)).splitlines()
    assert hangs[0].split()[:2] == ["where", "thread"]
    assert hangs[1].startswith("session-1.scope netns 4026531840  app/100 main")
    tl = M.timeline(g, d)
    trace = pb.Trace()
    trace.ParseFromString(export_perfetto.render(tl))
    labels = {p.track_descriptor.process.pid: list(p.track_descriptor.process.process_labels)
              for p in trace.packet if p.track_descriptor.HasField("process")}
    assert labels[200] == ["container=docker:0123456789ab", f"cgroup={docker}", "netns=4026532000"]
    page = report_html.render(to_json(d), tl, [], {}, export_dot.render_svg(tl))
    assert "daemond/200 [docker:0123456789ab]" in page
    chrome = json.loads(export_chrome.render(tl))
    assert {"ph": "M", "name": "process_labels", "pid": 200, "tid": 200,
            "args": {"labels": f"container=docker:0123456789ab,cgroup={docker},netns=4026532000"}} in \
        chrome["traceEvents"]
