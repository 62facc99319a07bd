"""End to end, interactive: a real recorded hang of each block type (the
demo's helper stuck running, sleeping, yielding), diagnosed through the REPL
in a pseudo-terminal with the default answer to every question.  The root
cause must be the helper with the right block type, reached with at most 3
questions; the interactive and --auto path lengths (Table 2) are printed
(pytest -s) and must both be in the report's metrics."""
import json
import subprocess
import sys

import pytest

from conftest import require_tracing
from test_repl import Repl, record_demo, sessions

EXPECTED = {"run": "LongRunning", "sleep": "LongWait", "yield": "RepeatedYield"}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    require_tracing()
    tmp = tmp_path_factory.mktemp("real")
    return {k: record_demo(tmp, k) for k in EXPECTED}


@pytest.mark.parametrize("stuck", list(EXPECTED))
def test_root_cause_with_at_most_3_questions(recorded, tmp_path, stuck):
    runner, info = recorded[stuck]
    db = tmp_path / "sessions.db"
    r = Repl(runner, db, "--buffer", runner.buffer, "--pid", str(info["app_pid"]), "--threshold", "1")
    r.answer_all()
    report = tmp_path / "report.json"
    r.cmd(f"export {report}")
    assert r.finish() == 0
    j = json.loads(report.read_text())
    assert j["spinning"]["tid"] == info["app_tid"] and j["spinning"]["block_type"] == "LongWait"
    primary = [c for c in j["root_causes"] if c["primary"]][0]
    assert (primary["tid"], primary["block_type"]) == (info["helper_tid"], EXPECTED[stuck]), j["root_causes"]
    assert j["queries"] == len(r.questions) <= 3
    m = j["metrics"]
    auto = subprocess.run([sys.executable, "-m", "argus.cli", "debug", "--buffer", runner.buffer, "--pid",
                           str(info["app_pid"]), "--threshold", "1", "--auto", "--json"], env=runner.env,
                          capture_output=True, text=True, timeout=180)
    assert auto.returncode == 0, auto.stderr
    a = json.loads(auto.stdout)
    assert m["auto_path_len"] == len(a["path"]) and m["path_len"] == len(j["path"])
    assert a["queries"] == 0
    ss, aa, _ = sessions(str(db))
    assert len(ss) == 1 and json.loads(ss[0][3])["root_causes"] == j["root_causes"]
    print(f"\n[table2] {stuck}: block {EXPECTED[stuck]}, questions {j['queries']} ({r.questions}), "
          f"path interactive {m['path_len']}, --auto {m['auto_path_len']}, saved {m['saved_by_memory']}")
