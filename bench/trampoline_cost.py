#!/usr/bin/env python3
"""Per-event cost of a user-space tracepoint, side by side in one run:

  plain          an empty function call (the baseline)
  tramp          that call hooked by a trampoline that records its entry into
                 the thread's ring (dylib-instrument/): what the traced
                 thread pays; the ring is drained after the timing
  tramp_ret      entry and return records
  tramp_drained  tramp with a consumer draining concurrently (argusd's role;
                 on a busy 2-CPU machine an upper bound, with drops)
  uprobe         a uprobe on the same function whose BPF program writes the
                 same 48-byte record into a BPF ring buffer (needs root)
and LTTng-UST's published ~175 ns per event as a fixed reference.

Algorithm: ROUNDS interleaved rounds; in each, every configuration runs
argus-tramp-bench (dylib-instrument/bench/tramp_bench.c) once in a rotating
order, CALLS calls timed in the calling thread's CPU time
(CLOCK_THREAD_CPUTIME_ID: user and kernel time on its behalf, so the
uprobe's trap counts, and time the shared machine gave to others does not);
rings live on tmpfs
(/dev/shm), like argusd's run directory.  Reports the median ns per call and
the per-event cost = configuration - plain, with the goal (<= 20 ns) and the
reference.  Absolute numbers on a shared machine move; the side-by-side
medians are the result.

    sudo python3 bench/trampoline_cost.py [--rounds 5] [--calls 2000000] [--json FILE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

LTTNG_UST_NS = 175.0   # LTTng-UST's published per-event cost (lttng.org)
GOAL_NS = 20.0
CONFIGS = ("plain", "tramp", "tramp_ret", "tramp_drained", "uprobe")


def bench_binary():
    # a test program, not shipped: tests/native/run.sh --bench builds it (with
    # the BPF toolchain, scripts/setup.sh) into build/bench/test-programs/
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from support import programs
    try:
        return programs.program("argus-tramp-bench")
    except programs.ProgramBuildError as e:
        sys.exit(f"trampoline_cost: {str(e).splitlines()[0]} (see build/bench.build.log)")


def run_one(binary, config, calls):
    ring_dir = tempfile.mkdtemp(prefix="argus-tramp-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        proc = subprocess.run([binary, config, str(calls), ring_dir], capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(ring_dir, ignore_errors=True)
    if proc.returncode != 0:
        sys.exit(f"trampoline_cost: {config} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000000)
    ap.add_argument("--uprobe-calls", type=int, default=200000, help="uprobes are slow: fewer calls")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    if any(c not in CONFIGS for c in configs) or "plain" not in configs:
        sys.exit(f"trampoline_cost: --configs is a subset of {','.join(CONFIGS)} including plain")
    if "uprobe" in configs and os.geteuid() != 0:
        sys.exit("trampoline_cost: the uprobe configuration needs root (or --configs without uprobe)")
    binary = bench_binary()
    runs = {c: [] for c in configs}
    for r in range(args.rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for c in order:
            runs[c].append(run_one(binary, c, args.uprobe_calls if c == "uprobe" else args.calls))
    med = {c: statistics.median(x["ns_per_call"] for x in runs[c]) for c in configs}
    base = med["plain"]
    print(f"{'config':<15} {'ns/call':>9} {'ns/event':>9} {'lost':>9}   vs LTTng-UST {LTTNG_UST_NS:.0f} ns, goal {GOAL_NS:.0f} ns")
    for c in configs:
        events = 2 if c == "tramp_ret" else 1
        per_event = (med[c] - base) / events
        lost = sum(x["lost"] for x in runs[c])
        note = "" if c == "plain" else f"   {per_event / LTTNG_UST_NS:5.2f}x LTTng-UST"
        print(f"{c:<15} {med[c]:9.2f} {'' if c == 'plain' else f'{per_event:9.2f}':>9} {lost:9d}{note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "calls": args.calls, "median_ns_per_call": med,
                       "lttng_ust_ns": LTTNG_UST_NS, "goal_ns": GOAL_NS, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
