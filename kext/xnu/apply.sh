#!/usr/bin/env bash
# Applies the Argus wait/wakeup tracepoints to an xnu source tree:
# copies our hooks (argus_trace.h, argus_trace.c) into osfmk/kern/ and applies
# the minimal diff for the release it was written against.
#
#   kext/xnu/apply.sh [--check] XNU_TREE
#
# --check only verifies that the diff applies (nothing is written).  The tree
# must be xnu-11417.101.15 (or close enough for a 1-line-context diff).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
tree=${1:?usage: apply.sh [--check] XNU_TREE}
[ -f "$tree/osfmk/kern/sched_prim.c" ] || { echo "apply: $tree is not an xnu source tree" >&2; exit 1; }
patch_file="$here/xnu-11417.101.15.patch"
if [ $check -eq 1 ]; then
  patch -p1 --dry-run --forward -d "$tree" < "$patch_file"
  exit 0
fi
patch -p1 --forward -d "$tree" < "$patch_file"
install -m 0644 "$here/argus_trace.h" "$tree/osfmk/kern/argus_trace.h"
install -m 0644 "$here/argus_trace.c" "$tree/osfmk/kern/argus_trace.c"
echo "apply: Argus tracepoints added to $tree (osfmk/kern/argus_trace.[ch])"
