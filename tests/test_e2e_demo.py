"""End to end: trace the bundled cross-process demo hang for real, then check
that `argus debug --json` names the stuck helper thread with the right block
type, for each way the helper can be stuck."""
import pytest

from conftest import run_demo

EXPECTED = {"run": "LongRunning", "sleep": "LongWait", "yield": "RepeatedYield"}


@pytest.mark.parametrize("stuck", ["run", "sleep", "yield"])
def test_demo_root_cause_is_helper(tracing, stuck):
    info, rc = run_demo("--requests", "40", "--hang-at", "30", "--hang-ms", "3000",
                        "--interval-ms", "20", "--stuck", stuck)
    assert rc == 0
    tracing.wait_drained()
    report = tracing.json("debug", "--buffer", tracing.buffer, "--pid", str(info["app_pid"]),
                          "--auto", "--json", "--threshold", "1")
    assert report["schema"] == "argus.diagnosis/1"
    spinning = report["spinning"]
    assert spinning["pid"] == info["app_pid"] and spinning["tid"] == info["app_tid"]
    assert spinning["block_type"] == "LongWait"
    assert spinning["end_ns"] - spinning["start_ns"] >= 2_500_000_000
    causes = {(c["pid"], c["tid"]): c for c in report["root_causes"]}
    helper = causes.get((info["daemon_pid"], info["helper_tid"]))
    assert helper is not None, f"helper thread not among root causes: {report['root_causes']}"
    assert helper["block_type"] == EXPECTED[stuck]
    assert helper["comm"] == "demo-helper"
    if stuck == "run":
        # the installed demo keeps its symbol table (pyproject: install.strip =
        # false): the helper's profile names the demo's own functions
        prof = helper["profile"]
        assert prof, "no CPU profile of the computing helper"
        own = [f["function"] for f in prof["bottom_up"] if "demo-hang" in f["dso"]]
        assert own and not any(f.startswith("sub_") or "+0x" in f for f in own), prof["bottom_up"][:5]
    # The chain crosses processes: app -> daemon main -> helper.
    tids = [p["tid"] for p in report["path"]]
    assert info["daemon_tid"] in tids and info["helper_tid"] in tids
    assert report["queries"] == 0


def test_events_show_the_demo(tracing):
    info, rc = run_demo("--requests", "5", "--hang-at", "99", "--interval-ms", "5")
    assert rc == 0
    tracing.wait_drained()
    import json
    proc = tracing.run("events", "--buffer", tracing.buffer, "--pid", str(info["daemon_pid"]), "--json")
    events = [json.loads(l) for l in proc.stdout.splitlines()]
    types = {e["type"] for e in events}
    assert {"switch_out", "switch_in", "wakeup", "syscall_enter", "syscall_exit"} <= types
    # A wakeup of the app by the daemon, from task context, exists.
    assert any(e["type"] == "wakeup" and e["tid"] == info["daemon_tid"] and e["wakee_tid"] == info["app_tid"]
               and e["context"] == "task" for e in events)
    names = {e["comm"] for e in events if e["tid"] == info["helper_tid"]}
    assert names == {"demo-helper"}
