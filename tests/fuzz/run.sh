#!/usr/bin/env bash
# Sanitizer fuzzing of the decoders of untrusted input (tests/fuzz/fuzz_decoders.c):
# builds each libFuzzer target with clang -fsanitize=fuzzer,address,undefined
# (UBSan findings abort), runs it for FUZZ_SECONDS (default 40) from a copy of
# its checked-in seed corpus (tests/fuzz/corpus/<target>/), prints the
# executions of each and the total, and fails on any crash, leak, sanitizer
# report or timeout.  Four targets: ~3 minutes.  Then the Python readers of
# input files (tests/fuzz/fuzz_inputs.py: the --answers file and the session
# database, a seeded mutation loop; target "inputs"): 0 crashes, 0 tracebacks.
#   tests/fuzz/run.sh                 all targets
#   FUZZ_SECONDS=5 tests/fuzz/run.sh rb_decode kdebug_v3
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-40}
CC=${FUZZ_CC:-clang}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(rb_decode rb_window kdebug_v1 kdebug_v3 inputs)

command -v "$CC" >/dev/null || { echo "fuzz: $CC not found (scripts/setup.sh installs clang)" >&2; exit 1; }
# Inputs are written to files: tmpfs when there is one (private dir, removed at exit).
base=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
work=$(mktemp -d "$base/argus-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

SOURCES=(tracer/ringbuf/argus_rb.c tracer/ringbuf/argus_decode.c tracer/kdebug/kdebug_decode.c tracer/kdebug/kdebug_file.c
         tests/fuzz/fuzz_decoders.c)
FLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -Itracer/ringbuf -Itracer/kdebug
       -Wall -Wextra -Wno-unused-parameter -Werror)

total=0
for t in "${TARGETS[@]}"; do
  if [ "$t" = inputs ]; then
    out=$(python3 tests/fuzz/fuzz_inputs.py --iterations 3000 --seconds "$SECONDS_EACH") || {
      echo "$out"; echo "fuzz: inputs FAILED" >&2; exit 1; }
    echo "$out"
    total=$((total + $(echo "$out" | sed -n 's/^fuzz: inputs: \([0-9]*\) executions.*/\1/p')))
    continue
  fi
  define=FUZZ_$(echo "$t" | tr '[:lower:]' '[:upper:]')
  if ! "$CC" "${FLAGS[@]}" -D"$define" "${SOURCES[@]}" -o "$work/$t" 2>"$work/$t.build.log"; then
    cat "$work/$t.build.log" >&2
    echo "fuzz: failed to build $t (libFuzzer needs libclang-rt-dev: scripts/setup.sh)" >&2
    exit 1
  fi
  mkdir -p "$work/$t.corpus" "$work/$t.files"
  seeds=tests/fuzz/corpus/$t
  [ -d "$seeds" ] || { echo "fuzz: no seed corpus $seeds" >&2; exit 1; }
  set +e
  ARGUS_FUZZ_DIR="$work/$t.files" "$work/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/$t-" "$work/$t.corpus" "$seeds" >"$work/$t.log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)
  execs=${execs:-0}
  total=$((total + execs))
  if [ $rc -ne 0 ]; then
    tail -60 "$work/$t.log" >&2
    for a in "$work/$t-"*; do [ -e "$a" ] && { mkdir -p fuzz-artifacts; cp "$a" fuzz-artifacts/; }; done
    echo "fuzz: $t FAILED after $execs executions (exit $rc); reproducer in fuzz-artifacts/" >&2
    exit 1
  fi
  echo "fuzz: $t: $execs executions in ${SECONDS_EACH}s, no crash"
done
echo "fuzz: total $total executions, 0 crashes"
