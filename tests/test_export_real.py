"""End to end: trace the bundled demo hang with a private daemon, then
  - `argus export --perfetto` is read back with the perfetto package's protos
    (the published trace format): it holds the threads of the diagnosis path,
    their states over the hang (blocked, with the wait reason), and a flow
    for every causal step of the path (source thread -> destination thread),
    the path as a chain of named slices and the primary root cause marked;
  - `argus report --html` loads in headless Chromium (Debian's chromium,
    driven by playwright; no browser is downloaded) without console errors,
    and its timeline SVG and slice graph render (non-empty boxes, the graph
    image decoded); a screenshot goes to $ARGUS_ARTIFACTS (default
    build/artifacts, ignored by git) for CI;
  - the HTML report of the demo stuck on the CPU (`--stuck run`) carries
    what the text report says of its culprit: the demo's own function
    (helper_main, from the profile and its flame graph) and the culprit's
    what-if line, visible in Chromium; its screenshot is
    $ARGUS_ARTIFACTS/report-demo-run.png."""
import os
import pathlib
import shutil
import stat
from html import escape

import pytest

from conftest import IN_CI, run_demo

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def _traced_demo(tmp_path_factory, name, stuck):
    """(runner, demo info, `argus debug --json` report) of one traced demo hang."""
    from conftest import ArgusRunner, require_tracing
    require_tracing()
    runner = ArgusRunner(tmp_path_factory.mktemp(name))
    runner.env["ARGUS_SESSION_DB"] = str(runner.tmp / "sessions.db")     # no user's rules, no session left behind
    runner.start(size="256M")
    try:
        info, rc = run_demo("--requests", "40", "--hang-at", "30", "--hang-ms", "3000", "--interval-ms", "20",
                            "--stuck", stuck)
        assert rc == 0
        runner.wait_drained()
    finally:
        runner.stop()
    report = runner.json("debug", "--buffer", runner.buffer, "--pid", str(info["app_pid"]), "--auto", "--json",
                         "--threshold", "1")
    return runner, info, report


@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory):
    """The demo hang with its helper stuck sleeping."""
    return _traced_demo(tmp_path_factory, "export", "sleep")


def _pick(runner, info):
    return ["--buffer", runner.buffer, "--pid", str(info["app_pid"]), "--threshold", "1"]


def test_perfetto_export_holds_what_the_path_needs(demo_trace):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    runner, info, report = demo_trace
    out = runner.tmp / "demo.pftrace"
    runner.run("export", *_pick(runner, info), "--perfetto", str(out))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    trace = pb.Trace()
    trace.ParseFromString(out.read_bytes())

    tracks, events = {}, []
    for p in trace.packet:
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        elif p.HasField("track_event"):
            events.append((p.timestamp, p.track_event))
    owner = {u: td.thread.tid for u, td in tracks.items() if td.HasField("thread")}
    for u, td in tracks.items():
        if td.parent_uuid in owner:
            owner[u] = owner[td.parent_uuid]
    threads = {td.thread.tid: td.thread for td in tracks.values() if td.HasField("thread")}
    # threads: every thread on the path, with its process and name
    assert {p["tid"] for p in report["path"]} <= set(threads)
    assert threads[info["helper_tid"]].pid == info["daemon_pid"]
    assert threads[info["helper_tid"]].thread_name == "demo-helper"

    # states: over the hang the app is blocked in read, the helper in its sleep
    s = report["spinning"]

    def state_over(tid, a, b):
        """The name of the state slice of tid that covers the middle of [a, b]."""
        mid, begun = (a + b) // 2, {}
        for ts, ev in events:
            if owner.get(ev.track_uuid) != tid or not tracks[ev.track_uuid].name.endswith(" state"):
                continue
            if ev.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                begun[ev.track_uuid] = (ts, ev.name)
            elif ev.type == pb.TrackEvent.TYPE_SLICE_END:
                t0, name = begun.pop(ev.track_uuid)
                if t0 <= mid <= ts:
                    return name
        return None
    app_state = state_over(info["app_tid"], s["start_ns"], s["end_ns"])
    assert app_state.startswith("Blocked: read(fd"), app_state
    helper = next(r for r in report["root_causes"] if r["tid"] == info["helper_tid"])
    helper_state = state_over(info["helper_tid"], helper["start_ns"], helper["end_ns"])
    assert helper_state.startswith("Blocked: clock_nanosleep"), helper_state
    names = {ev.name for _, ev in events if "argus.thread_state" in ev.categories}
    assert {"Running"} <= names and any(n.startswith("Blocked: futex") for n in names)

    # flows: each causal step of the path, from the cause's thread to the effect's
    flows_out, flows_in = {}, {}
    for _, ev in events:
        for f in ev.flow_ids:
            flows_out.setdefault(f, []).append((owner[ev.track_uuid], ev.name, tuple(ev.categories)))
        for f in ev.terminating_flow_ids:
            flows_in.setdefault(f, []).append(owner[ev.track_uuid])
    edge_flows = [(src[0], flows_in[f][0], src[1], src[2][0]) for f, srcs in flows_out.items() if f & 1
                  for src in srcs if f in flows_in]
    path = report["path"]
    for i in range(1, len(path)):
        e = path[i]["edge_in"]
        if e is None or e["type"] in ("baseline", "culprit", "program_order"):
            continue
        want = (path[i]["tid"], path[i - 1]["tid"])
        assert any((src, dst) == want and name.startswith(e["type"]) and cat.endswith(".path")
                   and ((".weak" in cat) == e["weak"]) for src, dst, name, cat in edge_flows), (i, e, want)
    assert any(".weak" in cat for *_, cat in edge_flows)          # weak edges are styled apart
    # the diagnosis chain: one named slice per step, linked by flows; the primary root cause marked
    diag = {}
    for _, ev in events:
        if "argus.diagnosis" in ev.categories:
            index = int(ev.name.split(":")[0].removeprefix("path #"))
            diag[index] = (owner[ev.track_uuid], ev)
    assert sorted(diag) == list(range(len(path)))
    for i, p in enumerate(path):
        tid, ev = diag[i]
        assert tid == p["tid"] and ev.name.startswith(f"path #{i}: {p['block_type']} ({p['role']}")
        if i and p["edge_in"] is not None:          # cause i -> effect i - 1: one flow id, 2 (i + 1)
            assert (i + 1) << 1 in ev.flow_ids and (i + 1) << 1 in diag[i - 1][1].terminating_flow_ids
    roots = [(owner[ev.track_uuid], ev.name) for _, ev in events if "argus.diagnosis.root_cause" in ev.categories]
    assert (info["helper_tid"], "PRIMARY ROOT CAUSE (depth 2): LongWait") in roots


def _launch(p):
    if not os.path.exists(CHROMIUM):
        if IN_CI:
            pytest.fail("chromium is missing: scripts/setup.sh installs it")
        pytest.skip("needs Debian's chromium")
    return p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])


def test_html_report_renders_in_headless_chromium(demo_trace):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if IN_CI:
            pytest.fail("playwright is missing: scripts/setup.sh installs it")
        pytest.skip("needs playwright")
    runner, info, report = demo_trace
    page_path = runner.tmp / "report.html"
    runner.run("report", "--html", str(page_path), *_pick(runner, info))
    assert stat.S_IMODE(os.stat(page_path).st_mode) == 0o600
    artifacts = pathlib.Path(os.environ.get("ARGUS_ARTIFACTS") or ROOT / "build" / "artifacts")
    artifacts.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            problems = []
            page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning")
                    else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
            page.goto(page_path.as_uri(), wait_until="load")
            assert problems == []
            box = page.locator("svg#timeline").bounding_box()
            assert box and box["width"] > 500 and box["height"] > 100
            assert page.locator("svg#timeline rect.state").count() > 3
            widths = page.eval_on_selector_all("svg#timeline rect.state",
                                               "els => els.map(e => e.getBoundingClientRect().width)")
            assert max(widths) > 10
            assert page.locator("svg#timeline rect.path").count() == len(report["path"])
            assert page.locator("svg#timeline rect.root").count() == len(report["root_causes"])
            graph = page.locator("img#slice-graph")
            assert graph.evaluate("img => img.complete && img.naturalWidth > 0")
            assert graph.bounding_box()["height"] > 100
            assert page.locator("table#chain tr").count() == len(report["path"]) + 1
            text = page.inner_text("body")
            assert "demo-helper" in text and "PRIMARY" in text and "Questions asked" in text
            assert "argus lldb-script --pid" in text          # how to get the lldb results, per root cause
            # what the text report says of each root cause: its what-if, its profile
            assert page.locator(".root-cause .whatif").count() == \
                sum(1 for r in report["root_causes"] if r.get("whatif")) > 0
            for r in report["root_causes"]:
                if r.get("profile"):
                    assert r["profile"]["top"]["functions"][0] in text
                    assert page.locator(f"svg#flame-{r['tid']} rect").count() > 0
            page.screenshot(path=str(artifacts / "report-demo.png"), full_page=True)
        finally:
            browser.close()
    shutil.copy(page_path, artifacts / "report-demo.html")
    assert (artifacts / "report-demo.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def demo_run_trace(tmp_path_factory):
    """The demo hang with its helper stuck on the CPU."""
    return _traced_demo(tmp_path_factory, "export-run", "run")


def test_html_report_names_the_culprits_function_and_what_if(demo_run_trace):
    """The demo's culprit (demo-helper, LongRunning) in the HTML report: its
    profile's top function is the demo's own helper_main (the binary is not
    stripped), shown in the page and in its inline flame graph, and its
    what-if line as the text report words it.  Off a terminal, `report`
    says one line per phase on stderr.  The screenshot
    ($ARGUS_ARTIFACTS/report-demo-run.png, default build/artifacts/, which
    git ignores) shows the answer under the title (the primary root cause,
    its top function, its what-if) and the root-cause section with the
    flame graph further down."""
    from playwright.sync_api import sync_playwright
    from argus.diagnose.whatif import render_whatif
    runner, info, report = demo_run_trace
    (culprit,) = [r for r in report["root_causes"] if r["primary"]]
    assert culprit["tid"] == info["helper_tid"] and culprit["block_type"] == "LongRunning", culprit
    assert culprit["profile"]["top"]["functions"][0] == "helper_main", culprit["profile"]["top"]
    whatif = render_whatif(culprit["whatif"])
    assert whatif and whatif.startswith("what-if: ")
    page_path = runner.tmp / "report.html"
    p = runner.run("report", "--html", str(page_path), *_pick(runner, info))
    phases = [line for line in p.stderr.splitlines() if line.strip()]
    # off a terminal: one line per phase (the rates only when the load took over a second: cli/progress.py)
    verbs = [line.split()[1] for line in phases]
    assert verbs[-1] == "wrote" and verbs[:-1] in ([], ["decoded", "built"]), p.stderr
    assert all(sum(w in line for w in ("decoded ", "built ", "wrote ")) == 1 for line in phases), p.stderr
    html = page_path.read_text()
    assert "helper_main" in html and escape(whatif) in html
    artifacts = pathlib.Path(os.environ.get("ARGUS_ARTIFACTS") or ROOT / "build" / "artifacts")
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "report-demo-run.png"
    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.as_uri(), wait_until="load")
            text = page.inner_text("body")
            assert whatif in " ".join(text.split()) and "helper_main" in text
            answer = page.inner_text("#answer")
            assert "demo-helper" in answer and "LongRunning" in answer and "helper_main" in answer, answer
            assert page.locator(f"svg#flame-{culprit['tid']} rect").count() > 0
            assert page.locator(f"svg#flame-{culprit['tid']} title", has_text="helper_main").count() > 0
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
