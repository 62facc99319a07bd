#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine for Argus: system packages for the eBPF
# build (clang, bpftool, libbpf), the test programs (redis, perf), then builds
# and installs the Python package `argus` (CMake via scikit-build-core).
# Idempotent; run as root (or with sudo).
#
#   ./scripts/setup.sh              installs the wheel (`pip install .`): users, CI
#   ./scripts/setup.sh --editable   developers: `pip install -e .`, Python edits
#                                   are live; rerun after C / BPF / CMake changes
set -euo pipefail
cd "$(dirname "$0")/.."

EDITABLE=()
case "${1:-}" in
  "") ;;
  -e|--editable) EDITABLE=(--no-build-isolation -e) ;;   # the build reuses build/ and this env's scikit-build-core
  *) echo "usage: $0 [--editable]" >&2; exit 2 ;;
esac

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

APT_PACKAGES=(
  build-essential cmake pkg-config
  clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev   # eBPF build (CO-RE)
  libclang-rt-dev                                       # libFuzzer + sanitizer runtimes: tests/fuzz/run.sh
  libcmocka-dev                                         # C unit tests (ctest): tests/native/run.sh
  linux-perf                                            # benchmarks: perf record / perf bench
  redis-server redis-tools                              # a real program that hangs, for tests
  nginx                                                 # tests/test_idle_loops.py: an idle nginx worker is not a hang
  tmux                                                  # driving terminal sessions in tests
  bpftrace xvfb python3-gi python3-gi-cairo gir1.2-gtk-3.0  # benchmarks: the bpftrace floor, the GTK redraw workload
  xdotool                                               # real key presses (XTEST) for the X11 input hook tests
  graphviz chromium                                     # argus export --svg; the HTML report test (playwright)
  libcapstone-dev                                       # dylib-instrument/: the trampoline relocator's disassembler
  libglib2.0-0                                          # a real GLib for the trampoline hook tests (argus run)
  libglib2.0-tests gnome-desktop-testing nodejs         # real programs under argus run: GLib's installed tests, node
  libdw1 xz-utils                                       # CPU profiles: symbols via libdw; .gnu_debugdata tests
  lld-16 llvm-16                                        # argus instrument tests: chained-fixup dylibs (ld64.lld), read back (llvm-objdump --dyld-info)
  podman runc busybox-static                            # tests/test_container_scope.py: a real container (runc: hybrid cgroup hosts), its image from busybox
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
echo "setup: building and installing argus"
$PY -m pip install -q --upgrade pip >/dev/null 2>&1 || true
# the build backend in this env too: --editable builds without isolation, and
# tests/test_packaging.py builds fresh clones the same way
$PY -m pip install -q "scikit-build-core>=0.10"
$PY -m pip install -q "${EDITABLE[@]}" ".[test,lldb]" ziglang   # lldb: lldb-for-pwndbg (docs/lldb.md); ziglang: zig cc for scripts/build-macos.sh
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
echo "setup: done ($(command -v argus || echo 'argus not on PATH'))"
