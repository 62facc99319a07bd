"""The trace survives the daemon (kill -9), and bad input gets one clear line
and a non-zero exit, never a traceback."""
import os
import signal
import time

import pytest

from conftest import no_traceback, run_demo


def test_kill_9_leaves_a_readable_buffer(tracing):
    info, rc = run_demo("--requests", "30", "--hang-at", "20", "--hang-ms", "2500", "--interval-ms", "10")
    assert rc == 0
    tracing.wait_drained()
    daemon_pid = tracing.status()["pid"]
    os.kill(daemon_pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and os.path.exists(f"/proc/{daemon_pid}"):
        time.sleep(0.05)
    report = tracing.json("debug", "--buffer", tracing.buffer, "--pid", str(info["app_pid"]),
                          "--auto", "--json", "--threshold", "1")
    assert any(c["tid"] == info["helper_tid"] and c["block_type"] == "LongRunning"
               for c in report["root_causes"])
    st = tracing.json("status", "--json", "--buffer", tracing.buffer)
    assert st["tracing"] is False and st["events"] > 0


def test_missing_buffer(argus_cli, tmp_path):
    proc = argus_cli.run("debug", "--buffer", str(tmp_path / "nope.argus"), "--pid", "1", check=False)
    assert proc.returncode != 0
    assert "nope.argus" in no_traceback(proc)


def test_truncated_buffer(tracing, tmp_path):
    run_demo("--requests", "3", "--hang-at", "99")
    tracing.wait_drained(0.5)
    tracing.stop()
    cut = tmp_path / "cut.argus"
    with open(tracing.buffer, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(1 << 20))
    for cmd in (["debug", "--pid", "1"], ["events"]):
        proc = tracing.run(*cmd, "--buffer", str(cut), check=False)
        assert proc.returncode != 0
        assert "truncated" in no_traceback(proc)


def test_garbage_buffer(argus_cli, tmp_path):
    junk = tmp_path / "junk.argus"
    junk.write_bytes(os.urandom(1 << 16))
    proc = argus_cli.run("events", "--buffer", str(junk), check=False)
    assert proc.returncode != 0
    no_traceback(proc)


def test_unknown_pid_and_no_hang(tracing):
    info, rc = run_demo("--requests", "5", "--hang-at", "99", "--interval-ms", "5")
    tracing.wait_drained()
    proc = tracing.run("debug", "--buffer", tracing.buffer, "--pid", "999999999", check=False)
    assert proc.returncode != 0
    assert "999999999" in no_traceback(proc)
    proc = tracing.run("debug", "--buffer", tracing.buffer, "--pid", str(info["app_pid"]), check=False)
    assert proc.returncode != 0
    assert "no hang" in no_traceback(proc)
