"""Hooks installed and removed while other threads run the hooked function
(the agent after a dlopen in a threaded program, and when tracing stops):
patch_race_test.c.  Before quiesce.c, a thread resuming between two
prologue instructions the jump had just replaced, or reading a patch that
spans two 8-byte words half-written, died with SIGSEGV (seen within a few
thousand rounds of either shape on this 2-CPU machine)."""
import platform
import subprocess

import pytest

from support.programs import program

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="trampolines run on x86_64 only")


@pytest.mark.parametrize("shape", ["multi", "straddle"])
def test_patching_under_running_threads(tmp_path, shape):
    proc = subprocess.run([program("argus-patch-race-test"), str(tmp_path), shape, "150", "3"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.returncode, proc.stdout + proc.stderr)
    # every round installed: the threads were stopped, not the hook refused
    assert proc.stdout.split() == ["ok", "150", "0"], proc.stdout
