#!/usr/bin/env python3
"""What the Go scheduler probes cost a busy Go program, side by side:

  untraced    no daemon
  traced      `argus start --no-go-probes` (the kernel records only)
  go_probes   `argus start` (its default: runtime.ready / execute / park_m
              uprobes on each Go executable, argus_uprobe.bpf.c go_probe)

The workload (written and built here with the installed `go`, standard
library only) is two goroutines passing a token over unbuffered channels,
ROUNDTRIPS round trips: each round trip is two parks, two readies and two
executes, i.e. two goroutine switches, the thing the probes fire on.  With
GOMAXPROCS=1 every switch stays in user space (the worst case for the
probes: nothing else costs); with the default the runtime also wakes Ms.
The program times itself in CPU time (user + system of all its threads,
getrusage: a uprobe's trap counts, time the shared machine gave to others
does not) and prints CPU ns per switch.

Algorithm: ROUNDS interleaved rounds; in each, every configuration runs the
program once per GOMAXPROCS setting in a rotating order (a fresh private
daemon per traced run, started before the program so its exec is seen).
Reports the median ns per switch and the added cost per switch against
the previous configuration.  Absolute numbers on a shared machine move; the
side-by-side medians are the result.

    sudo python3 bench/go_probes.py [--rounds 5] [--roundtrips 200000] [--json FILE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CONFIGS = ("untraced", "traced", "go_probes")
PROCS = (1, 2)

PROGRAM = r'''package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func cpuNs() int64 { // user + system time of every thread of the process
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
	}()
	start := cpuNs()
	for i := 0; i < n; i++ {
		ping <- i
		<-pong
	}
	fmt.Println(float64(cpuNs()-start) / float64(2*n))
}
'''


def build(tmp):
    go = shutil.which("go") or "/usr/local/go/bin/go"
    src = os.path.join(tmp, "pingpong.go")
    with open(src, "w") as f:
        f.write(PROGRAM)
    out = os.path.join(tmp, "pingpong")
    env = dict(os.environ, GO111MODULE="off", GOPROXY="off", GOCACHE=os.path.join(tmp, "gocache"))
    proc = subprocess.run([go, "build", "-o", out, src], env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"go_probes: go build failed: {proc.stderr.strip()}")
    return out


def argus(env, *args):
    proc = subprocess.run([sys.executable, "-m", "argus.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)
    if proc.returncode:
        sys.exit(f"go_probes: argus {' '.join(args)} failed: {(proc.stderr or proc.stdout).strip()}")


def run_one(binary, config, procs, roundtrips, tmp):
    env = dict(os.environ, GOMAXPROCS=str(procs))
    actl = dict(os.environ, ARGUS_RUN_DIR=os.path.join(tmp, "run"), ARGUS_STATE_DIR=os.path.join(tmp, "state"))
    if config != "untraced":
        buf = os.path.join(tmp, "trace.argus")
        argus(actl, "start", "--buffer", buf, "--size", "256M", "--no-hang-detector",
              *(["--no-go-probes"] if config == "traced" else []))
    try:
        out = subprocess.run([binary, str(roundtrips)], env=env, capture_output=True, text=True, timeout=600)
    finally:
        if config != "untraced":
            argus(actl, "stop")
            os.unlink(os.path.join(tmp, "trace.argus"))
    if out.returncode:
        sys.exit(f"go_probes: the workload failed: {out.stderr.strip()}")
    return float(out.stdout.split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--roundtrips", type=int, default=200000)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("go_probes: tracing needs root")
    tmp = tempfile.mkdtemp(prefix="argus-go-probes-")
    try:
        binary = build(tmp)
        runs = {(c, p): [] for c in CONFIGS for p in PROCS}
        for r in range(args.rounds):
            order = CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]
            for c in order:
                for p in PROCS:
                    runs[(c, p)].append(run_one(binary, c, p, args.roundtrips, tmp))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in runs.items()}
    print("| GOMAXPROCS | untraced CPU ns/switch | traced (no Go probes) | traced + Go probes | Go probes add |")
    print("|---|---|---|---|---|")
    for p in PROCS:
        u, t, g = med[("untraced", p)], med[("traced", p)], med[("go_probes", p)]
        print(f"| {p} | {u:.0f} | {t:.0f} | {g:.0f} | {g - t:+.0f} ns ({(g - t) / t * 100:+.0f}%) |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"roundtrips": args.roundtrips, "rounds": args.rounds,
                       "runs": {f"{c}/{p}": v for (c, p), v in runs.items()},
                       "median_ns_per_switch": {f"{c}/{p}": m for (c, p), m in med.items()}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
