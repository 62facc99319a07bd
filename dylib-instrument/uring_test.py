"""Per-thread rings with real threads and shared-memory files:
argus-uring-test (uring_test.c) writes from several producers into small
rings while one consumer drains through its own mapping (order, no silent
loss, wraps, 0600)."""
import subprocess

import pytest

from support.programs import program


@pytest.mark.parametrize("threads,count,ring_bytes", [(4, 200000, 8192), (2, 50000, 1 << 20)])
def test_rings_under_load(tmp_path, threads, count, ring_bytes):
    proc = subprocess.run([program("argus-uring-test"), str(tmp_path), str(threads), str(count), str(ring_bytes)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == f"{threads} passed, 0 failed"
    assert list(tmp_path.iterdir()) == []   # the test removes its rings
