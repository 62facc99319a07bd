"""End to end: `argus debug --window` loads only the end of the buffer first and
widens the window until the hang is inside it.  The demo hang is traced for
real, then the machine keeps producing events for longer than the window, so
the first window misses the hang and only widening can find it; the result
must be the whole-buffer diagnosis (--window 0)."""
import subprocess

from conftest import run_demo

from argus.tracer import reader

WINDOW_S = 5


def test_debug_widens_the_window_to_an_older_hang(tracing):
    info, rc = run_demo("--requests", "40", "--hang-at", "30", "--hang-ms", "3000",
                        "--interval-ms", "20", "--stuck", "sleep")
    assert rc == 0
    # Keep the trace going well past the window: short-lived processes and sleeps.
    subprocess.run(["sh", "-c", "i=0; while [ $i -lt 80 ]; do sleep 0.1; i=$((i+1)); done"], check=True)
    tracing.wait_drained()
    tracing.stop()

    args = ("debug", "--buffer", tracing.buffer, "--pid", str(info["app_pid"]), "--auto", "--json",
            "--threshold", "1")
    whole = tracing.json(*args, "--window", "0")
    windowed = tracing.json(*args, "--window", str(WINDOW_S))

    def brief(r):
        return {"spinning": {k: r["spinning"][k] for k in ("pid", "tid", "start_ns", "end_ns", "block_type")},
                "root_causes": [(c["comm"], c["pid"], c["tid"], c["block_type"]) for c in r["root_causes"]]}
    context = f"whole {brief(whole)} windowed {brief(windowed)}"
    spinning = windowed["spinning"]
    assert spinning["pid"] == info["app_pid"] and spinning["tid"] == info["app_tid"], context
    assert spinning["end_ns"] - spinning["start_ns"] >= 2_500_000_000, context
    last_ts = reader.buffer_stats(tracing.buffer)["last_ts"]
    assert last_ts - spinning["end_ns"] > WINDOW_S * 1e9, f"the hang must lie outside the first window: {context}"
    for key in ("start_ns", "end_ns", "block_type", "tid"):
        assert spinning[key] == whole["spinning"][key], context
    assert sorted((c["pid"], c["tid"], c["block_type"]) for c in windowed["root_causes"]) == \
        sorted((c["pid"], c["tid"], c["block_type"]) for c in whole["root_causes"]), context
    assert any(c["tid"] == info["helper_tid"] for c in windowed["root_causes"]), context


def test_hangs_window_zero_and_default_list_the_same_demo_hang(tracing):
    info, rc = run_demo("--requests", "40", "--hang-at", "30", "--hang-ms", "3000",
                        "--interval-ms", "20", "--stuck", "run")
    assert rc == 0
    tracing.wait_drained()
    tracing.stop()
    args = ("hangs", "--buffer", tracing.buffer, "--pid", str(info["app_pid"]), "--json", "--threshold", "1")
    whole = tracing.json(*args, "--window", "0")
    windowed = tracing.json(*args, "--window", "1")
    key = [(h["tid"], h["start_ns"], h["end_ns"]) for h in whole["hangs"]]
    assert key and key == [(h["tid"], h["start_ns"], h["end_ns"]) for h in windowed["hangs"]]
