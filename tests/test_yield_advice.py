"""The RepeatedYield advice on real traces (issue 24): a real image and
symbol whenever the trace has a stack of the loop, else what is missing.

tests/programs/split_poll.c, built with cc -O1, spins on `split_ready`
(sched_yield + usleep 1 ms) for 2.5 s and also bumps a counter each round,
`split_polls`, which it reads more often than the flag: the flag is the
global a branch tests after reading it, and the advice must name it.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import ArgusRunner, require_tracing

SOURCE = os.path.join(os.path.dirname(__file__), "programs", "split_poll.c")


def _record(tmp_path, *start_args):
    """(runner, pid): split_poll traced spinning 2.5 s, then released."""
    require_tracing()
    if not shutil.which("cc"):
        pytest.skip("needs cc")
    exe = str(tmp_path / "argus-split-poll")
    subprocess.run(["cc", "-O1", "-fno-omit-frame-pointer", "-o", exe, SOURCE], check=True)
    runner = ArgusRunner(tmp_path)
    runner.run("start", "--buffer", runner.buffer, "--size", "256M", *start_args)
    try:
        prog = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
        pid = json.loads(prog.stdout.readline())["pid"]
        time.sleep(2.5)
        os.kill(pid, signal.SIGUSR2)          # the flag: the spin ends
        time.sleep(0.3)
        os.kill(pid, signal.SIGUSR1)
        assert prog.wait(timeout=30) == 0
        runner.wait_drained()
    finally:
        runner.stop()
    return runner, pid


def _primary(runner, pid):
    p = subprocess.run([sys.executable, "-m", "argus.cli", "debug", "--buffer", runner.buffer, "--pid", str(pid),
                        "--threshold", "1", "--auto", "--json"], env=runner.env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    (rc,) = [c for c in json.loads(p.stdout)["root_causes"] if c["primary"]]
    assert (rc["tid"], rc["block_type"]) == (pid, "RepeatedYield"), rc
    return rc


def test_advice_names_the_tested_flag_from_the_stack(tmp_path):
    runner, pid = _record(tmp_path)
    rc = _primary(runner, pid)
    assert rc["advice"] == f"bp_watch {pid} argus-split-poll split_ready", rc
    assert "split_wait" in rc["why"]


def test_advice_without_stacks_says_what_is_missing(tmp_path):
    runner, pid = _record(tmp_path, "--no-stacks")
    rc = _primary(runner, pid)
    assert rc["advice"] is None
    assert "IMAGE" not in rc["why"] and "SYMBOL" not in rc["why"]
    assert (f"polling a data flag the trace does not name (the trace has no user stack of the loop and no "
            f"mapping of process {pid}") in rc["why"], rc["why"]
