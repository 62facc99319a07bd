#!/usr/bin/env bash
# The C unit tests (ctest + cmocka) beside their units: the ring buffer
# (tracer/ringbuf/argus_rb_test.c), the shared radix sort (tracer/ringbuf/argus_radix_sort_test.c),
# the loaders' pid queue (tracer/daemon/platform/bpf_loader_util_test.c)
# and the graph core (graphbuild/core/argus_graph_test.c), and the property check
# of argusd's name refresh (tests/programs/thread_names_check.c).  Configures a build
# of the native parts without the eBPF tracer, builds it and runs ctest.
#   tests/native/run.sh              build/native; run by tests/test_native_units.py
#   tests/native/run.sh --sanitize   build/native-asan: ASan + UBSan, any finding fails (CI job, .ci/run)
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=build/native
flags=(-DARGUS_BUILD_BPF=OFF -DARGUS_NATIVE_TESTS=ON)
case "${1:-}" in
  "") ;;
  --sanitize) dir=build/native-asan; flags+=(-DARGUS_SANITIZE=ON) ;;
  *) echo "usage: tests/native/run.sh [--sanitize]" >&2; exit 2 ;;
esac
command -v cmake >/dev/null || { echo "native tests: cmake not found (scripts/setup.sh installs it)" >&2; exit 1; }

cmake -S . -B "$dir" "${flags[@]}" >"$dir.configure.log" 2>&1 || {
  cat "$dir.configure.log" >&2
  echo "native tests: configure failed (cmocka: scripts/setup.sh installs libcmocka-dev)" >&2
  exit 1
}
cmake --build "$dir" -j "$(nproc)" >"$dir.build.log" 2>&1 || { cat "$dir.build.log" >&2; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$dir" --output-on-failure
