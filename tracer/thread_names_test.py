"""argusd's names after a wrap (tracer/daemon/thread_names.c), checked on a simulated
ring by tests/programs/thread_names_check.c: after every chunk, each thread
with a record still in the ring has a name record still in the ring."""
import os
import subprocess

import pytest

from support.programs import program


@pytest.mark.parametrize("nchunks,seed", [(1, 0), (2, 1), (3, 2), (7, 3), (16, 4), (64, 5), (2048, 6)])
def test_every_thread_in_the_ring_keeps_a_name(nchunks, seed):
    exe = program("argus-thread-names-check")
    proc = subprocess.run([exe, str(nchunks), "60", str(seed)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("ok:")
    per_thread_lap = float(proc.stdout.split("(")[1].split()[0])
    assert per_thread_lap < 3            # about two names per thread per lap, not one per chunk
