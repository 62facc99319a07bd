"""The generated hang corpus (tests/hangzoo/, docs/scenarios.md "Generated
corpus") end to end on a few cases: the programs run under a private
daemon, Argus diagnoses each, and the runner scores and tabulates them.
Whether the diagnosis is right is the corpus's score, not this test's
verdict: it checks that the machinery ran and scored every case."""
import json
import os
import subprocess
import sys

from conftest import require_tracing

RUNNER = os.path.join(os.path.dirname(__file__), "hangzoo", "run.py")


def test_small_subset_is_traced_and_scored(tmp_path):
    require_tracing()
    out, md = tmp_path / "results.json", tmp_path / "score.md"
    proc = subprocess.run([sys.executable, RUNNER, "--fast", "--limit", "5", "--jobs", "5",
                           "--json", str(out), "--markdown", str(md)],
                          capture_output=True, text=True, timeout=900)
    print(proc.stdout)
    print(proc.stderr[-4000:])
    assert out.exists(), f"the runner wrote no results ({proc.returncode}): {proc.stderr[-2000:]}"
    results = json.loads(out.read_text())["results"]
    assert len(results) == 5
    errors = [f"{r['id']}: {r['reason']}" for r in results if r["status"] not in ("PASS", "FAIL")]
    assert not errors, "\n".join(errors)
    for r in results:
        assert r["root"] in ("yes", "listed", "no") and isinstance(r["agree"], bool), r["id"]
        assert len(r["truth"]["roles"]) == r["case"]["depth"] + 1
    table = md.read_text()
    for title in ("### By mechanism", "### By depth", "### By language"):
        assert title in table
    assert "| all | 5 |" in table
    assert proc.returncode == 0, proc.stderr[-2000:]
