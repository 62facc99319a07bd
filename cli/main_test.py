"""main(): out of memory is one line on stderr and a non-zero exit, never a
traceback: `argus hangs` on the golden trace in a child process whose
address space is limited, after start-up, to a little more than it uses
(from nothing left to enough to finish)."""
import pathlib
import subprocess
import sys

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus"

CHILD = """
import resource, sys
# every module the command imports, before the limit: CPython importing a
# module with no memory left can raise SystemError instead of MemoryError
import numpy, argus.cli.main as m, argus.graphbuild, argus.diagnose, argus.cli.cmd_debug
import argus.tracer.reader, argus.diagnose.windowed, argus.graphbuild.builder
vm = next(int(l.split()[1]) << 10 for l in open("/proc/self/status") if l.startswith("VmSize:"))
limit = vm + int(sys.argv[1]) * (1 << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.exit(m.main(sys.argv[2:]))
"""


def test_out_of_memory_is_one_line():
    failed = 0
    for extra_mb in (0, 2, 5, 10, 20, 40, 80):
        p = subprocess.run([sys.executable, "-c", CHILD, str(extra_mb), "hangs", "--buffer", str(GOLDEN),
                            "--window", "0", "--threshold", "0.1"], capture_output=True, text=True, timeout=120)
        if p.returncode == 0:
            continue
        failed += 1
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        assert "Traceback" not in p.stderr and len(lines) == 1, (extra_mb, p.stderr[-2000:])
        assert lines[0].startswith("argus: ") and "memory" in lines[0], lines
    assert failed, "no limit was tight enough to run out of memory"
