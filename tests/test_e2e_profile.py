"""End to end: CPU samples explain a LongRunning root cause (issue 13).

A C program with frame pointers (argus-cpu-culprit) and a stripped
distribution binary (redis-server running a Lua loop) are traced with the
sampler on; the diagnosis names the busy thread, its profile's top
functions cover >= 80% of its samples in the hang window, every root cause
has its what-if slack in --json and text, `argus compare` names the
differing wait, and `argus export --speedscope` writes a flame graph."""
import json
import os
import stat
import subprocess
import sys

import pytest

from support.programs import program
from test_e2e_redis import redis_server  # noqa: F401  (fixture)

DRIVER = os.path.join(os.path.dirname(__file__), "drivers", "redis_busy_script.py")


def run_culprit(seconds=2.5):
    proc = subprocess.Popen([program("argus-cpu-culprit"), str(seconds)], stdout=subprocess.PIPE, text=True)
    info = json.loads(proc.stdout.readline())
    proc.stdout.read()
    assert proc.wait(timeout=60) == 0
    return info


@pytest.fixture
def culprit_trace(tracing):
    info = run_culprit()
    tracing.wait_drained()
    return tracing, info


def test_cpu_culprit_profile_whatif_and_text(culprit_trace):
    tracing, info = culprit_trace
    args = ("debug", "--buffer", tracing.buffer, "--pid", str(info["pid"]), "--auto", "--threshold", "1")
    report = tracing.json(*args, "--json")
    assert report["spinning"]["block_type"] == "LongWait"
    worker = [c for c in report["root_causes"] if c["tid"] == info["worker_tid"]]
    assert worker and worker[0]["block_type"] == "LongRunning", report["root_causes"]
    p = worker[0]["profile"]
    assert p and p["samples"] >= 20, p
    assert "mix_round" in p["top"]["functions"], p["top"]
    assert p["top"]["share"] >= 0.8
    assert p["by_dso"][0]["dso"] == "argus-cpu-culprit"
    assert any(n["function"] == "start_thread" or n["children"] for n in p["top_down"])
    for c in report["root_causes"]:
        w = c["whatif"]
        assert w is not None and 0 <= w["saves_ns"] <= report["spinning"]["dur_ns"]
    w = worker[0]["whatif"]
    assert not w["bound"] and w["baseline_ns"] < 100_000_000 and w["saves_ns"] > 2_000_000_000
    text = tracing.run(*args).stdout
    assert text.count("what-if:") == len(report["root_causes"])
    assert "profile:" in text and "mix_round" in text


def test_compare_names_the_differing_wait(culprit_trace):
    tracing, info = culprit_trace
    c = tracing.json("compare", "--buffer", tracing.buffer, "--pid", str(info["pid"]), "--threshold", "1", "--json")
    assert c["schema"] == "argus.compare/1" and c["baselines"]
    top = c["differences"][0]
    assert top["kind"] == "wait_duration", c["differences"]
    assert top["what"].startswith("read(fd ") and top["peer"]["tid"] == info["worker_tid"]
    assert top["hung_ns"] > 2_000_000_000 and top["baseline_ns"] < 100_000_000
    text = tracing.run("compare", "--buffer", tracing.buffer, "--pid", str(info["pid"]), "--threshold", "1").stdout
    assert "wait_duration" in text and f"peer argus-cpu-culpr/{info['worker_tid']}" in text


def test_speedscope_export(culprit_trace, tmp_path):
    tracing, info = culprit_trace
    out = tmp_path / "hang.speedscope.json"
    tracing.run("export", "--buffer", tracing.buffer, "--pid", str(info["pid"]), "--threshold", "1",
                "--speedscope", str(out))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    doc = json.loads(out.read_text())
    assert doc["$schema"].endswith("file-format-schema.json") and doc["profiles"]
    prof = doc["profiles"][0]
    assert prof["type"] == "sampled" and len(prof["samples"]) == len(prof["weights"]) > 0
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert "mix_round" in names
    assert all(0 <= k < len(names) for s in prof["samples"] for k in s)
    bad = tracing.run("export", "--buffer", tracing.buffer, "--pid", str(info["pid"]), "--threshold", "1",
                      "--speedscope", str(tmp_path / "no" / "such" / "dir.json"), check=False)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "does not exist" in bad.stderr


def test_stripped_redis_lua_profile(tracing, redis_server):  # noqa: F811
    server, port = redis_server
    client = subprocess.Popen([sys.executable, DRIVER, str(port), "2.5", "tight"], stdout=subprocess.PIPE, text=True)
    info = json.loads(client.stdout.readline())
    client.stdout.read()
    assert client.wait(timeout=60) == 0
    tracing.wait_drained()
    report = tracing.json("debug", "--buffer", tracing.buffer, "--pid", str(info["client_pid"]), "--auto", "--json",
                          "--threshold", "1")
    main = [c for c in report["root_causes"] if c["tid"] == server.pid]
    assert main and main[0]["block_type"] == "LongRunning", report["root_causes"]
    p = main[0]["profile"]
    assert p and p["samples"] >= 20 and p["top"]["share"] >= 0.8, p and p["top"]
    # the Lua VM's loop: a static function of the stripped binary, named by its FDE (or a dynsym name)
    lead = p["bottom_up"][0]
    assert lead["dso"].startswith("redis-") and not lead["function"].startswith("0x"), lead
    assert main[0]["whatif"] is not None


def test_no_sample_leaves_samples_out(argus_cli):
    from conftest import require_tracing
    require_tracing()
    argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "64M", "--no-sample")
    run_culprit(0.3)
    argus_cli.wait_drained(0.5)
    argus_cli.stop()
    out = argus_cli.run("events", "--buffer", argus_cli.buffer, "--type", "cpu_sample", "--limit", "1").stdout
    assert out.strip() == ""
    bad = argus_cli.run("start", "--buffer", argus_cli.buffer, "--sample-hz", "fast", check=False)
    assert bad.returncode != 0 and "bad --sample-hz" in bad.stderr and "Traceback" not in bad.stderr
