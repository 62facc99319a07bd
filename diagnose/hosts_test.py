"""Hosts in the diagnosis, its JSON, text and exports: a crafted client on
one host waiting 3 s on a server busy on another."""
import types

import numpy as np

from argus.tracer import schema
from argus.graphbuild import build_graph
from argus.graphbuild import multihost as MH
from argus.diagnose import algorithm, hosts
from argus.diagnose import export_model as M
from argus.diagnose import export_perfetto
from argus.diagnose.report import render_text, to_json
from support.crafted import Trace, ms

C, S = ("10.0.12.1", 40000), ("10.0.12.2", 8080)


def ep(addr):
    a, b, c, d = (int(x) for x in addr[0].split("."))
    return (((a << 24) | (b << 16) | (c << 8) | d) << 16) | addr[1]


def _trace(t, host):
    rows = t.rows()
    return types.SimpleNamespace(rows=rows, nrows=len(rows), frames=np.zeros(0, np.uint64), strings=b"",
                                 first_ts=int(rows["ts_ns"][0]), last_ts=int(rows["ts_ns"][-1]), created_ns=0,
                                 created_realtime_ns=0, records_overwritten=0, records_lost=0, torn_chunks=0,
                                 bad_records=0, warning="", hostname=host, boot_id="")


def _hosts(with_server=True):
    a = Trace()
    a.thread(100, 100, "client")
    a.run(100, ms(0))
    a.fd_info(100, ms(0.4), 5, "socket", ep(C), peer=ep(S), family=2)
    a.syscall(100, ms(0.5), "write", obj=5, ret=10)
    a.block(100, ms(1), "read", "read", obj=5)
    a.wake(0, 100, ms(3001), context="softirq", irq="net")
    a.run(100, ms(3001), ret=100)
    a.syscall(100, ms(3002), "write", obj=1, ret=1)
    b = Trace()
    b.thread(100, 100, "server")
    b.run(100, ms(0))
    b.fd_info(100, ms(0.1), 7, "socket", ep(S), peer=ep(C), family=2)
    b.block(100, ms(0.2), "read", "read", obj=7)
    b.wake(0, 100, ms(0.6), context="softirq", irq="net")
    b.run(100, ms(0.6), ret=10)
    b.busy(100, ms(0.6), ms(3000))
    b.syscall(100, ms(3000), "write", obj=7, ret=100)
    b.block(100, ms(3000.5), "read", "read", obj=7)
    ops = [MH.NetOp(0, ms(0.5), 100, 100, 5, True, True, C, S, 1000, 10),
           MH.NetOp(1, ms(0.6), 100, 100, 7, False, True, S, C, 1000, 10),
           MH.NetOp(1, ms(3000), 100, 100, 7, True, True, S, C, 5000, 100),
           MH.NetOp(0, ms(3001), 100, 100, 5, False, True, C, S, 5000, 100)]
    traces = [_trace(a, "web"), _trace(b, "api")]
    if not with_server:
        traces, ops = traces[:1], [o for o in ops if o.host == 0]
    m = MH.merge(traces, ["a.argus", "b.argus"][:len(traces)], ops=ops)
    g = MH.add_host_edges(build_graph(m.rows, trace_start=m.first_ts, trace_end=m.last_ts), m)
    g.time_origin = m.first_ts
    return g


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
