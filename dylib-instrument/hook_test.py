"""Hooks on real code, run for real (x86_64): argus-hook-test (hook_test.c)
patches hand-written functions, calls them from 4 threads and drains the
per-thread rings it wrote (see hook_test.c for every check)."""
import os
import platform
import stat
import subprocess

import pytest

from support.programs import program

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="trampolines run on x86_64 only")


def test_hooks_record_and_keep_behaviour(tmp_path):
    proc = subprocess.run([program("argus-hook-test"), str(tmp_path), "--keep"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-2] == "17 passed, 0 failed"
    rings = sorted(tmp_path.glob("hook-test.*/*.ring"))
    assert len(rings) == 5   # main thread + 4 workers, one ring each
    pid = {r.name.split("-")[0] for r in rings}
    assert len(pid) == 1
    for r in rings:
        assert stat.S_IMODE(os.stat(r).st_mode) == 0o600
