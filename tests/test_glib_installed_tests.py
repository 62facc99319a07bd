"""GLib's own installed tests (Debian libglib2.0-tests) with and without the
trampoline agent (issue 10, real-world safety), through
tests/realworld/glib_installed_tests.py: the pass/fail/skip counts must be
the same, and the agent must have recorded callback_begin records from the
test processes (so a run in which it was not loaded cannot pass).

The whole suite (287 tests) takes ~5 min each way on 2 loaded CPUs, so this
test runs the GLib tests that exercise the hooked points hardest (main loops,
sources added across threads, thread pools, GTask, GDBus peers, spawning,
fork + exec); ARGUS_GLIB_TESTS=all runs the whole suite, as .ci/run does
through the script itself."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import IN_CI, require_tracing

SCRIPT = os.path.join(os.path.dirname(__file__), "realworld", "glib_installed_tests.py")
TESTS = ["mainloop", "timeout", "contexts", "642026", "thread-pool", "asyncqueue", "cond", "private",
         "task", "cancellable", "signals", "spawn-multithreaded", "spawn-singlethread", "gsubprocess",
         "gdbus-peer", "gdbus-export", "unix-streams"]


def test_glib_installed_tests_same_counts_under_agent(tmp_path):
    if not shutil.which("gnome-desktop-testing-runner") or not os.path.isdir("/usr/libexec/installed-tests/glib"):
        if IN_CI:
            pytest.fail("libglib2.0-tests / gnome-desktop-testing missing: scripts/setup.sh installs them")
        pytest.skip("libglib2.0-tests / gnome-desktop-testing not installed")
    require_tracing()
    which = [] if os.environ.get("ARGUS_GLIB_TESTS") == "all" else [f"glib/{t}.test" for t in TESTS]
    report_file = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, SCRIPT, "--json", str(report_file), *which],
                          capture_output=True, text=True, timeout=3600)
    assert report_file.exists(), proc.stderr
    report = json.loads(report_file.read_text())
    run = report["runs"][0]
    assert run["without"]["total"] > 0, proc.stdout
    if which:
        assert run["without"]["total"] == len(which), proc.stdout
    for k in ("pass", "fail", "skip", "total"):
        assert run["with"][k] == run["without"][k], proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the agent was in the tests: most of them dispatch a main loop
    assert run["callback_pids"] >= run["with"]["total"] // 2, run
