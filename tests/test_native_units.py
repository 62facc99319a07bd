"""The C unit tests beside their units, run by the README's test command: the
ring buffer (tracer/ringbuf/argus_rb_test.c), the shared radix sort
(tracer/ringbuf/argus_radix_sort_test.c), the loaders' pid queue
(tracer/daemon/platform/bpf_loader_util_test.c), argusd's verified-directory writer
(tracer/daemon/safe_dir_test.c) and the graph core
(graphbuild/core/argus_graph_test.c), cmocka programs registered with ctest,
and the property check of argusd's name refresh (tests/programs/thread_names_check.c).
tests/native/run.sh configures and builds them (build/native) and runs ctest;
CI also runs them under ASan + UBSan (tests/native/run.sh --sanitize, .ci/run)."""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(ROOT, "tests", "native", "run.sh")
UNITS = {"argus_rb", "argus_radix_sort", "argus_graph", "thread_names", "bpf_loader_util",
         # dylib-instrument/: relocation tables as data, random bytes, hooks, the per-thread rings
         "reloc_x86_64", "reloc_arm64", "reloc_random", "hook_x86_64", "thunk_arm64", "uring_load",
         "ret_deref",   # the spec's ret_deref as data (dylib-instrument/ret_deref_test.c)
         "safe_dir",    # the verified-directory-fd writer of argusd (tracer/daemon/safe_dir_test.c)
         "cgroup_path",  # argusd's --cgroup / --netns scope and cgroup paths (tracer/daemon/cgroup_path_test.c)
         # more of argusd: the ring index, the recording tier, the Go runtime's offsets
         "hang_index", "detail_tier", "go_runtime"}


def test_native_unit_tests_pass():
    proc = subprocess.run([RUN], cwd=ROOT, capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"tests/native/run.sh failed ({proc.returncode}):\n{out[-8000:]}"
    passed = set(re.findall(r"Test +#\d+: (\S+) \.+ +Passed", out))
    assert passed == UNITS, f"ctest ran {sorted(passed)}, expected {sorted(UNITS)}:\n{out[-4000:]}"
    assert "100% tests passed" in out
