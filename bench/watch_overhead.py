#!/usr/bin/env python3
"""What a watched data flag costs the program, per recorded access: bp_watch
with perf_event_open breakpoints against bp_watch with lldb, against an
untraced baseline run side by side.

A small C target (compiled here with gcc) stores into and reads back a
global `bench_flag` N times (2 accesses per iteration: one write, one read)
after a go line on stdin, and prints the loop's CLOCK_MONOTONIC duration.
Each round runs, in rotating order: `bp_watch --mechanism perf` (woken for
every access: the default), the same with `--wakeup 16`, and `bp_watch
--mechanism lldb` (on fewer iterations: every access stops the target), each
next to an untraced run of the same size in the same round.  For a
mechanism, cost per access = (watched loop time - untraced loop time) /
accesses, and the ratio = watched loop time / untraced loop time.  bp_watch
runs exactly as a user runs it (the installed command, a real buffer), and
its summary says how many accesses it recorded and lost.

    sudo python3 bench/watch_overhead.py                  # 3 rounds
    sudo python3 bench/watch_overhead.py --quick --json out.json

A benchmark, not a test: it asserts nothing about timings.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
volatile long bench_flag;
int main(int argc, char **argv)
{
	long n = atol(argv[1]), sink = 0;
	char line[16];
	struct timespec a, b;
	printf("%d\n", 0); fflush(stdout);
	if (!fgets(line, sizeof line, stdin)) return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		bench_flag = i;
		sink += bench_flag;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%ld %ld\n", (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec), sink);
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin)) return 0;   /* wait until the watcher left */
	return 0;
}
"""


# configuration -> (bp_watch --mechanism, extra options)
CONFIGS = {"perf": ("perf", ()), "perf-wakeup16": ("perf", ("--wakeup", "16")), "lldb": ("lldb", ())}


def build_target(tmp):
    src, exe = os.path.join(tmp, "watch_target.c"), os.path.join(tmp, "watch_target")
    with open(src, "w") as f:
        f.write(TARGET_C)
    subprocess.run(["gcc", "-O1", "-rdynamic", "-o", exe, src], check=True)
    return exe


def run_once(exe, n, mechanism, buffer, bp_watch, extra=()):
    """(loop ns, bp_watch summary or None)."""
    t = subprocess.Popen([exe, str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    w = None
    try:
        t.stdout.readline()
        if mechanism:
            # stdout to a file: bp_watch prints every write, and a full pipe nobody reads
            # would block it while lldb holds the target stopped
            out_path = buffer + ".out"
            with open(out_path, "w") as out:
                w = subprocess.Popen([*bp_watch, str(t.pid), "watch_target", "bench_flag", "--json",
                                      "--buffer", buffer, "--mechanism", mechanism, *extra],
                                     stdout=out, stderr=subprocess.PIPE, text=True, start_new_session=True)
            line = w.stderr.readline()
            if "watching" not in line:
                raise RuntimeError(f"bp_watch did not start: {line.strip()} {w.stderr.read().strip()}")
        t.stdin.write("go\n")
        t.stdin.flush()
        loop_ns = int(t.stdout.readline().split()[0])
        summary = None
        if w is not None:
            w.send_signal(signal.SIGINT)     # bp_watch drains what the kernel holds, then stops
            w.communicate(timeout=120)
            with open(out_path) as f:
                summary = json.loads(f.read().strip().splitlines()[-1])
        t.stdin.write("bye\n")
        t.stdin.flush()
        t.wait(timeout=30)
        return loop_ns, summary
    finally:
        for p in (w, t):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 round, smaller loops")
    ap.add_argument("--perf-iterations", type=int, default=50000, help="loop iterations under perf (2 accesses each)")
    ap.add_argument("--lldb-iterations", type=int, default=1000, help="loop iterations under lldb (2 accesses each)")
    ap.add_argument("--mechanisms", default="perf,perf-wakeup16,lldb", help=f"subset of {','.join(CONFIGS)}")
    ap.add_argument("--bp-watch", default=None, help="bp_watch command (default: this Python's argus.cli.bp_watch)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("watch_overhead: needs root (hardware breakpoints, ptrace)", file=sys.stderr)
        return 1
    if not shutil.which("gcc"):
        print("watch_overhead: needs gcc", file=sys.stderr)
        return 1
    if args.quick:
        args.rounds, args.perf_iterations, args.lldb_iterations = 1, 20000, 300
    bp_watch = args.bp_watch.split() if args.bp_watch else [sys.executable, "-m", "argus.cli.bp_watch"]
    mechs = [m for m in args.mechanisms.split(",") if m]
    bad = [m for m in mechs if m not in CONFIGS]
    if bad:
        print(f"watch_overhead: unknown configuration {', '.join(bad)}", file=sys.stderr)
        return 1
    sizes = {"perf": args.perf_iterations, "perf-wakeup16": args.perf_iterations, "lldb": args.lldb_iterations}
    from argus.tracer.producer import create_buffer

    tmp = tempfile.mkdtemp(prefix="argus-watch-bench-")
    runs = []
    try:
        exe = build_target(tmp)
        buffer = os.path.join(tmp, "bench.argus")
        create_buffer(buffer, 256 << 20)
        for r in range(args.rounds):
            order = mechs[r % len(mechs):] + mechs[:r % len(mechs)]
            for m in order:
                n = sizes[m]
                base_ns, _ = run_once(exe, n, None, buffer, bp_watch)
                mech, extra = CONFIGS[m]
                ns, summary = run_once(exe, n, mech, buffer, bp_watch, extra)
                accesses = 2 * n
                rec = summary["writes"] + summary["reads"]
                runs.append({"round": r, "mechanism": m, "iterations": n, "accesses": accesses,
                             "untraced_ns": base_ns, "watched_ns": ns, "recorded": rec,
                             "lost": summary["lost"], "classified_by": summary["classified_by"],
                             "ns_per_access": (ns - base_ns) / accesses, "ratio": ns / max(base_ns, 1),
                             "untraced_ns_per_access": base_ns / accesses})
                print(f"round {r} {m:13}: {accesses} accesses, untraced {base_ns / 1e6:.2f} ms, watched "
                      f"{ns / 1e6:.2f} ms -> +{runs[-1]['ns_per_access']:.0f} ns/access "
                      f"(x{runs[-1]['ratio']:.0f}); recorded {rec}, lost {summary['lost']}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = {}
    for m in mechs:
        rs = [x for x in runs if x["mechanism"] == m]
        summary[m] = {"ns_per_access": statistics.median(x["ns_per_access"] for x in rs),
                      "ratio": statistics.median(x["ratio"] for x in rs),
                      "untraced_ns_per_access": statistics.median(x["untraced_ns_per_access"] for x in rs),
                      "recorded_share": statistics.median(x["recorded"] / x["accesses"] for x in rs)}
    print("\n| mechanism | added ns / access (median) | watched / untraced time | recorded |")
    print("|---|---|---|---|")
    for m, s in summary.items():
        print(f"| {m} | {s['ns_per_access']:,.0f} | x{s['ratio']:,.0f} | {100 * s['recorded_share']:.1f} % |")
    if "perf" in summary and "lldb" in summary:
        print(f"\nlldb / perf cost per access: x{summary['lldb']['ns_per_access'] / summary['perf']['ns_per_access']:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": runs, "summary": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
