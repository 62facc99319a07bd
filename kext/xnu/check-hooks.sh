#!/usr/bin/env bash
# Type-checks our hooks (argus_trace.c) against a real xnu source tree's
# headers with clang -fsyntax-only, for arm64 and x86_64.  No Apple toolchain
# is needed, but this is not xnu's build: a handful of headers that xnu's
# build generates from its configuration are replaced by "option off" stubs
# (mach_assert.h, mach_ldebug.h, san/kasan.h, san/kcov_data.h), and the
# scheduler options are guessed per architecture.
#
#   kext/xnu/check-hooks.sh XNU_TREE     (xnu-11417.101.15)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "${1:?usage: check-hooks.sh XNU_TREE}" && pwd)
[ -f "$tree/osfmk/kern/sched_prim.c" ] || { echo "check-hooks: $tree is not an xnu source tree" >&2; exit 1; }
command -v clang >/dev/null || { echo "check-hooks: clang is required" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/gen/san" "$work/kern"
echo "#define MACH_ASSERT 0" > "$work/gen/mach_assert.h"
echo "#define MACH_LDEBUG 0" > "$work/gen/mach_ldebug.h"
: > "$work/gen/san/kasan.h"
: > "$work/gen/san/kcov_data.h"
# our hooks, where apply.sh installs them
cp "$here/argus_trace.h" "$here/argus_trace.c" "$work/kern/"

res=$(clang -print-resource-dir)
common=(-fsyntax-only -nostdinc -std=gnu11 -Werror=implicit-function-declaration
        -DKERNEL -DKERNEL_PRIVATE -DXNU_KERNEL_PRIVATE -DMACH_KERNEL_PRIVATE -DMACH_KERNEL -DPRIVATE
        -DAPPLE -DXNU_TARGET_OS_OSX=1 -DCONFIG_SCHED_CLUTCH=1 -DCONFIG_SCHED_TIMESHARE_CORE=1
        -I"$work" -I"$tree/osfmk" -I"$tree/bsd" -I"$tree/libkern" -I"$tree/EXTERNAL_HEADERS"
        -I"$tree/pexpert" -I"$tree" -I"$tree/san" -I"$tree/security" -I"$tree/iokit"
        -I"$tree/osfmk/libsa" -I"$work/gen" -isystem "$res/include")
clang -target arm64-apple-macos14 -D__arm64__ -DARM64_BOARD_CONFIG_T8103 -DCONFIG_SCHED_EDGE=1 \
    "${common[@]}" "$work/kern/argus_trace.c"
echo "check-hooks: argus_trace.c type-checks against $tree (arm64)"
clang -target x86_64-apple-macos14 "${common[@]}" "$work/kern/argus_trace.c"
echo "check-hooks: argus_trace.c type-checks against $tree (x86_64)"
