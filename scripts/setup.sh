#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine for Argus: system packages for the eBPF
# build (clang, bpftool, libbpf), the test programs (redis, perf), then builds
# and installs the Python package `argus` (CMake via scikit-build-core).
# Idempotent; run as root (or with sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

APT_PACKAGES=(
  build-essential cmake pkg-config
  clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev   # eBPF build (CO-RE)
  libclang-rt-dev                                       # libFuzzer + sanitizer runtimes: tests/fuzz/run.sh
  linux-perf                                            # benchmarks: perf record / perf bench
  redis-server redis-tools                              # a real program that hangs, for tests
  tmux                                                  # driving terminal sessions in tests
  libdw1 xz-utils                                       # CPU profiles: symbols via libdw; .gnu_debugdata tests
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
$PY -m pip install -q ".[test,lldb]" ziglang   # lldb: lldb-for-pwndbg (docs/lldb.md); ziglang: zig cc for scripts/build-macos.sh
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
echo "setup: done ($(command -v argus || echo 'argus not on PATH'))"
