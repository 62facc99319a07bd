#!/usr/bin/env bash
# GLib's own installed tests with and without the trampoline agent, side by
# side (issue 10, real-world safety): the counts must match.  Slow (~10 min
# each on 2 CPUs), so not part of the pytest run.
#   apt-get install libglib2.0-tests gnome-desktop-testing
#   dylib-instrument/tests/glib_installed_tests.sh [PYTHON]
# The agent records into a private ring directory that nothing drains (full
# rings drop records; that is fine here): this checks behaviour, not events.
set -euo pipefail
PY=${1:-python3}
command -v gnome-desktop-testing-runner >/dev/null ||
  { echo "glib-tests: gnome-desktop-testing-runner missing (apt-get install gnome-desktop-testing libglib2.0-tests)" >&2; exit 1; }
native=$($PY -c 'import argus; print(argus.NATIVE_DIR)')
work=$(mktemp -d /dev/shm/argus-glib-tests.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/rings"
$PY -c 'import sys; from argus.cli import hookspec; sys.stdout.write(hookspec.flatten(hookspec.load()))' > "$work/hooks.list"

summary() { grep '^SUMMARY' "$1" | tail -1; }
gnome-desktop-testing-runner --parallel=2 glib > "$work/plain.log" 2>&1 || true
ARGUS_URING_DIR="$work/rings" ARGUS_HOOKS="$work/hooks.list" LD_PRELOAD="$native/libargus-agent.so" \
  gnome-desktop-testing-runner --parallel=2 glib > "$work/agent.log" 2>&1 || true
echo "without the agent: $(summary "$work/plain.log")"
echo "with the agent:    $(summary "$work/agent.log")"
diff <(grep -E '^(PASS|FAIL|SKIP)' "$work/plain.log" | sort) <(grep -E '^(PASS|FAIL|SKIP)' "$work/agent.log" | sort) &&
  echo "same results per test"
