"""Hosts in the diagnosis, its JSON, text and exports: a crafted client on
one host waiting 3 s on a server busy on another."""
from argus.graphbuild import multihost as MH
from argus.diagnose import algorithm, hosts
from argus.diagnose import export_model as M
from argus.diagnose import export_perfetto
from argus.diagnose.report import render_text, to_json
from support.crafted import Trace, ms
from support.crafted_hosts import two_hosts as _hosts


def test_the_culprit_on_the_other_host_is_named_with_its_host():
    g = _hosts()
    d = algorithm.diagnose(g, 100, threshold_ns=ms(2000))
    j = to_json(d)
    assert j["spinning"]["host"] == "web" and j["spinning"]["pid"] == 100
    primary = [r for r in j["root_causes"] if r["primary"]][0]
    assert (primary["host"], primary["pid"], primary["block_type"]) == ("api", 100, "LongRunning")
    assert [h["name"] for h in j["hosts"]] == ["web", "api"] and j["hosts"][0]["reference"]
    assert j["chain_end"] is None                      # both ends traced
    text = render_text(j)
    assert "server/api:100" in text and "Hosts (2 buffers" in text


def test_an_untraced_peer_ends_the_chain_with_its_address():
    g = _hosts(with_server=False)
    j = to_json(algorithm.diagnose(g, 100, threshold_ns=ms(2000)))
    assert j["chain_end"]["address"] == "10.0.12.2:8080" and j["chain_end"]["host"] == "web"
    assert "connection to 10.0.12.2:8080" in render_text(j)


def test_one_buffer_has_no_hosts():
    t = Trace()
    t.thread(100, 100, "client")
    t.run(100, ms(0))
    t.block(100, ms(1), "read", "read", obj=5)
    t.wake(0, 100, ms(3001), context="softirq", irq="net")
    t.run(100, ms(3001))
    g = t.build()
    j = to_json(algorithm.diagnose(g, 100, threshold_ns=ms(2000)))
    assert "hosts" not in j and "chain_end" not in j and "host" not in j["spinning"]


def test_exports_group_processes_by_host_and_draw_the_cross_host_flow():
    g = _hosts()
    d = algorithm.diagnose(g, 100, threshold_ns=ms(2000))
    tl = M.timeline(g, d)
    assert {t["host"] for t in tl["threads"]} == {"web", "api"}
    cross = [f for f in tl["flows"] if f["cross_host"]]
    assert cross and all(M.flow_name(f).startswith("message (cross-host)") for f in cross)
    trace = export_perfetto.build_trace(tl)
    procs = {p.track_descriptor.process.process_name: p.track_descriptor.process for p in trace.packet
             if p.HasField("track_descriptor") and p.track_descriptor.HasField("process")}
    assert set(procs) == {"web: client", "api: server"}
    assert procs["api: server"].legacy_sort_index == 1 and "host=api" in procs["api: server"].process_labels
    assert hosts.graph_label(g, MH.global_id(1, 100)) == "api:100"


def test_chrome_json_names_and_sorts_processes_by_host():
    import json
    from argus.diagnose import export_chrome
    g = _hosts()
    tl = M.timeline(g, algorithm.diagnose(g, 100, threshold_ns=ms(2000)))
    out = export_chrome.render(tl)
    ev = json.loads(out)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    names = {e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    assert names == {"web: client", "api: server"}
    assert {e["args"]["sort_index"] for e in ev if e.get("name") == "process_sort_index"} == {0, 1}
