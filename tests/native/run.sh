#!/usr/bin/env bash
# The C unit tests (ctest + cmocka) beside their units: the ring buffer
# (tracer/ringbuf/argus_rb_test.c), the shared radix sort (tracer/ringbuf/argus_radix_sort_test.c),
# the loaders' pid queue (tracer/daemon/platform/bpf_loader_util_test.c)
# and the graph core (graphbuild/core/argus_graph_test.c), and the property check
# of argusd's name refresh (tests/programs/thread_names_check.c).  Configures a build
# of the native parts without the eBPF tracer, builds it and runs ctest.
# The same build makes the test programs the Python tests run (never shipped:
# ARGUS_TEST_PROGRAMS, into <build>/test-programs/).
#   tests/native/run.sh              build/native; run by tests/test_native_units.py
#   tests/native/run.sh --sanitize   build/native-asan: ASan + UBSan, any finding fails (CI job, .ci/run)
#   tests/native/run.sh --build-only build/native without ctest: the test programs
#                                    (tests/support/programs.py runs this)
#   tests/native/run.sh --bench      build/bench, with the eBPF parts, without ctest:
#                                    argus-tramp-bench (bench/trampoline_cost.py)
# One build at a time per build directory (flock on <dir>.lock): several
# pytest sessions in one checkout may ask for the test programs at once.
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=build/native
flags=(-DARGUS_BUILD_BPF=OFF -DARGUS_NATIVE_TESTS=ON)
run_ctest=1
targets=()
case "${1:-}" in
  "") ;;
  --sanitize) dir=build/native-asan; flags+=(-DARGUS_SANITIZE=ON) ;;
  --build-only) run_ctest=0 ;;
  --bench) dir=build/bench; flags=(-DARGUS_TEST_PROGRAMS=ON); run_ctest=0
           targets=(--target argus-tramp-bench argus_uprobe_bench_obj) ;;
  *) echo "usage: tests/native/run.sh [--sanitize | --build-only | --bench]" >&2; exit 2 ;;
esac
command -v cmake >/dev/null || { echo "native tests: cmake not found (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p build
exec 9>"$dir.lock"
flock 9

cmake -S . -B "$dir" "${flags[@]}" >"$dir.configure.log" 2>&1 || {
  cat "$dir.configure.log" >&2
  echo "native tests: configure failed (cmocka: scripts/setup.sh installs libcmocka-dev)" >&2
  exit 1
}
cmake --build "$dir" -j "$(nproc)" "${targets[@]}" >"$dir.build.log" 2>&1 || { cat "$dir.build.log" >&2; exit 1; }
[ "$run_ctest" = 1 ] || exit 0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$dir" --output-on-failure
