"""The test programs: built by the tests, never shipped.

The programs the tests run (tests/programs/*.c but the demo, the C test
programs beside dylib-instrument's units, argus-tramp-bench) are CMake
targets of ARGUS_TEST_PROGRAMS, which installs nothing: the wheel holds the
product only (tests/test_packaging.py checks it).  tests/native/run.sh builds
them into <build>/test-programs/ of the checkout: build/native (the C unit
tests' build, without the eBPF parts) for every program, build/bench (with
them) for argus-tramp-bench.  The build runs once per process and build
directory, under run.sh's lock, and is incremental, so a session pays only
for what changed.

ARGUS_TEST_PROGRAMS_DIR names a directory that already holds them (another
build of them): then nothing is built.
"""
import functools
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.path.join(ROOT, "tests", "native", "run.sh")
BENCH_ONLY = {"argus-tramp-bench"}   # needs the eBPF toolchain: build/bench


class ProgramBuildError(RuntimeError):
    """The test programs did not build: the build's own message, in one place."""


@functools.lru_cache(maxsize=None)
def build(bench=False):
    """Build the test programs (once per process); their directory."""
    given = os.environ.get("ARGUS_TEST_PROGRAMS_DIR")
    if given:
        return given
    proc = subprocess.run([RUN, "--bench" if bench else "--build-only"], cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode != 0:
        raise ProgramBuildError(f"tests/native/run.sh {'--bench' if bench else '--build-only'} failed "
                                f"({proc.returncode}):\n{(proc.stdout + proc.stderr)[-6000:]}")
    return os.path.join(ROOT, "build", "bench" if bench else "native", "test-programs")


def program(name):
    """Path of the test program `name` (argus-mutex-holder, ...), built if needed."""
    path = os.path.join(build(bench=name in BENCH_ONLY), name)
    if not os.path.exists(path):
        raise ProgramBuildError(f"{path} missing after the build: is {name} a target of ARGUS_TEST_PROGRAMS?")
    return path
