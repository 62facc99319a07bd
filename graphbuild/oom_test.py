"""The graph core running out of memory part-way through a build must fail
cleanly (GraphError / MemoryError), never corrupt the heap.

Regression: a push that failed in the middle of a row (a new thread's first
segment) left the thread's seg at -1, and the handler then wrote through
SG(g, -1), in front of the segment array; glibc aborted later ("free():
invalid pointer") -- only under memory pressure, so only sometimes.  Here the
pressure is real: a child process builds under RLIMIT_AS set a little above
its current address space, at many limits, on rows where every row opens a new
thread's first segment, so the allocation that fails is, at some limits, the
segment array's growth.  A child killed by a signal (SIGABRT from glibc,
SIGSEGV) fails the test.
"""
import subprocess
import sys

import pytest

CHILD = r"""
import resource, sys
import numpy as np
from argus.tracer import schema
from argus.graphbuild import build_graph, native_core

native_core.lib()
n, extra = int(sys.argv[1]), int(sys.argv[2])
rows = np.zeros(n, schema.ROW_DTYPE)
rows["ts_ns"] = np.arange(n, dtype=np.uint64) * 1000 + 1
rows["tid"] = rows["pid"] = np.arange(n, dtype=np.uint32) + 1000
rows["type"] = schema.SWITCH_IN     # an unknown thread switched in: a new thread and its first segment
vm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + extra, resource.RLIM_INFINITY))
try:
    g = build_graph(rows)
    print("built", g.num_vertices)
except (MemoryError, native_core.GraphError) as e:
    print("oom", str(e).splitlines()[0][:80])
"""

ROWS = 300_000
MIB = 1 << 20


def _build_under_limit(extra):
    return subprocess.run([sys.executable, "-c", CHILD, str(ROWS), str(extra)], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("extra_mib", [4, 8, 12, 16, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 384])
def test_build_out_of_memory_fails_cleanly(extra_mib):
    proc = _build_under_limit(extra_mib * MIB)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-2000:]}"
    assert proc.stdout.startswith(("built", "oom")), proc.stdout + proc.stderr


def test_some_limits_fail_and_a_large_one_builds():
    outcomes = {extra: _build_under_limit(extra * MIB).stdout.split()[0] for extra in (8, 4096)}
    assert outcomes == {8: "oom", 4096: "built"}
