#!/usr/bin/env bash
# Cross-compiles the macOS native parts with `zig cc` (PyPI package ziglang):
# argusd (kdebug event source, tracer/daemon/platform/platform_macos.c) and libargus_core
# (ring buffer, row decoder, kdebug decoder and importer) for arm64 and
# x86_64 Macs, compiled AND linked against zig's bundled libSystem stubs.
#
#   scripts/build-macos.sh [OUT_DIR]     (default build/macos)
#
# Outputs OUT_DIR/<arch>/argusd, OUT_DIR/<arch>/libargus_core.dylib and
# OUT_DIR/<arch>/libargus-static.dylib (the recorder of dylibs instrumented
# by `argus instrument`) for arch in aarch64 x86_64.  Nothing here runs on Linux; tests/test_macos_cross.py
# checks that the outputs are Mach-O files for the right CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${1:-build/macos}
PY=${PYTHON:-python3}
if ! $PY -c "import ziglang" 2>/dev/null; then
  echo "build-macos: the ziglang package is missing: $PY -m pip install ziglang" >&2
  exit 1
fi

CORE="tracer/ringbuf/argus_rb.c tracer/ringbuf/argus_decode.c tracer/kdebug/kdebug_decode.c tracer/kdebug/kdebug_file.c"
D=tracer/daemon
# argusd: every role file of tracer/daemon/ (all but the unit tests), as
# CMake's argusd target has them, and the macOS event source
DAEMON="$D/platform/platform_macos.c"
for f in "$D"/*.c; do
  case $f in *_test.c) ;; *) DAEMON="$DAEMON $f" ;; esac
done
CFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -Werror -Itracer/ringbuf -Itracer/kdebug -I$D -I$D/platform -Idylib-instrument)
TRAMP="dylib-instrument/disasm.c dylib-instrument/reader.c dylib-instrument/relocator.c
  dylib-instrument/arch/x86_64/x86_writer.c dylib-instrument/arch/x86_64/x86_relocator.c
  dylib-instrument/arch/arm64/arm64_writer.c dylib-instrument/arch/arm64/arm64_relocator.c
  dylib-instrument/uring.c"

for arch in aarch64 x86_64; do
  dir="$OUT/$arch"
  mkdir -p "$dir"
  target="$arch-macos"
  # shellcheck disable=SC2086
  $PY -m ziglang cc -target "$target" "${CFLAGS[@]}" -shared -fPIC \
      -Wl,-install_name,@rpath/libargus_core.dylib -o "$dir/libargus_core.dylib" $CORE
  # shellcheck disable=SC2086
  $PY -m ziglang cc -target "$target" "${CFLAGS[@]}" \
      -o "$dir/argusd" $DAEMON dylib-instrument/uring.c $CORE
  # The recorder of statically instrumented dylibs: exports
  # _argus_static_enter and nothing else of its own (hidden visibility);
  # -mgeneral-regs-only as on Linux (it runs inside trampolines).  The
  # instrumented copy loads it as @loader_path/libargus-static.dylib.
  $PY -m ziglang cc -target "$target" "${CFLAGS[@]}" -shared -fPIC -mgeneral-regs-only -fvisibility=hidden \
      -Wl,-install_name,@loader_path/libargus-static.dylib -o "$dir/libargus-static.dylib" \
      dylib-instrument/static/static_probe.c dylib-instrument/recorder.c dylib-instrument/uring.c
  # The trampoline engine's portable part (capstone seam, reader, relocator,
  # both architectures' writers and relocators, the per-thread ring), as
  # objects in an archive: capstone itself is linked on the Mac.  Only
  # capstone's headers come from this machine, through a directory holding
  # nothing else (its other headers are Linux ones).
  mkdir -p "$dir/tramp" "$OUT/capstone-include"
  # pkg-config's includedir is the directory holding capstone.h (Debian)
  ln -sfn "$(pkg-config --variable=includedir capstone)" "$OUT/capstone-include/capstone"
  objs=()
  for src in $TRAMP; do
    obj="$dir/tramp/$(basename "${src%.c}").o"
    $PY -m ziglang cc -target "$target" "${CFLAGS[@]}" -isystem "$OUT/capstone-include" -c "$src" -o "$obj"
    objs+=("$obj")
  done
  rm -f "$dir/libargus_tramp_engine.a"
  $PY -m ziglang ar rcs "$dir/libargus_tramp_engine.a" "${objs[@]}"
  echo "build-macos: $dir/argusd $dir/libargus_core.dylib $dir/libargus-static.dylib $dir/libargus_tramp_engine.a"
done
