#!/usr/bin/env python3
"""Per-program BPF cost of two argus builds, side by side: the kernel's own
bpf_stats (run_time_ns / run_cnt of each program) over the same workloads.

Throughput ratios on a shared 2-vCPU machine move by tens of percent from run
to run; the time the BPF programs themselves take moves by a few ns.  For a
change to the BPF programs (new records, new checks on a hot path) this is the
number that says what the change costs.

Algorithm: enable kernel.bpf_stats_enabled (restored at the end); per round,
for each build in a rotating order: `argus start` in a private control dir,
find its programs as the ones that appeared with the names of interest (a
round in which another daemon started at the same moment is skipped: the
programs are ambiguous), run the workloads (perf bench sched pipe pinned to
CPU 0, redis-benchmark GET/SET against a private redis-server), read the
counters, `argus stop`.  Prints the median ns/run per program and build.

    sudo python3 bench/bpf_prog_cost.py --base /venv-old/bin/argus --after /venv-new/bin/argus
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

NAMES = ("sched_switch", "sched_waking", "sys_enter", "sys_exit")
STATS = "/proc/sys/kernel/bpf_stats_enabled"


def progs():
    out = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True, check=True).stdout
    return {p["id"]: p for p in json.loads(out)}


def workload(port, pipe_loops, requests):
    subprocess.run(["taskset", "-c", "0", "perf", "bench", "sched", "pipe", "-l", str(pipe_loops)],
                   capture_output=True, check=True)
    subprocess.run(["redis-benchmark", "-p", str(port), "-q", "-n", str(requests), "-t", "get,set", "-c", "20"],
                   capture_output=True, check=True)


def one_run(cmd, tmp, name, port, args):
    env = dict(os.environ, ARGUS_RUN_DIR=f"{tmp}/{name}/run", ARGUS_STATE_DIR=f"{tmp}/{name}/state")
    before = set(progs())
    subprocess.run(cmd + ["start", "--buffer", f"{tmp}/{name}.argus", "--size", "512M"], env=env, check=True,
                   capture_output=True)
    try:
        mine = {i: p for i, p in progs().items() if i not in before and p.get("name") in NAMES}
        if sorted(p["name"] for p in mine.values()) != sorted(NAMES):
            return None
        start = {i: (p.get("run_time_ns", 0), p.get("run_cnt", 0)) for i, p in mine.items()}
        workload(port, args.pipe_loops, args.requests)
        now = progs()
        out = {}
        for i, p in mine.items():
            dc = now[i].get("run_cnt", 0) - start[i][1]
            if dc:
                out[p["name"]] = ((now[i].get("run_time_ns", 0) - start[i][0]) / dc, dc)
        return out
    finally:
        subprocess.run(cmd + ["stop"], env=env, capture_output=True)
        try:
            os.unlink(f"{tmp}/{name}.argus")
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, metavar="CMD", help="argus command of the build before")
    ap.add_argument("--after", required=True, metavar="CMD", help="argus command of the build after")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--pipe-loops", type=int, default=100000)
    ap.add_argument("--requests", type=int, default=50000)
    ap.add_argument("--port", type=int, default=6391, help="port of the private redis-server")
    args = ap.parse_args()
    cmds = {"base": args.base.split(), "after": args.after.split()}
    try:
        old = open(STATS).read().strip()
    except OSError as e:
        sys.exit(f"bpf_prog_cost: cannot read {STATS}: {e.strerror} (needs root)")
    tmp = tempfile.mkdtemp(prefix="argus-bpfcost-")
    redis = None
    res = {c: {n: [] for n in NAMES} for c in cmds}
    try:
        with open(STATS, "w") as f:
            f.write("1")
        redis = subprocess.Popen(["redis-server", "--port", str(args.port), "--save", "", "--appendonly", "no"],
                                 stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        for r in range(args.rounds):
            for c in (list(cmds) if r % 2 == 0 else list(cmds)[::-1]):
                got = one_run(cmds[c], tmp, c, args.port, args)
                if got is None:
                    print(f"round {r + 1} {c}: another daemon started at the same time; skipped", file=sys.stderr)
                    continue
                for n, v in got.items():
                    res[c][n].append(v)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"bpf_prog_cost: failed to run the benchmark: {e}")
    finally:
        with open(STATS, "w") as f:
            f.write(old)
        if redis:
            redis.terminate()
            redis.wait()
    print("| program | base ns/run (range) | after ns/run (range) | runs per round |")
    print("|---|---:|---:|---:|")
    for n in NAMES:
        b, a = [x for x, _ in res["base"][n]], [x for x, _ in res["after"][n]]
        if not a or not b:
            continue
        cnt = statistics.median([k for _, k in res["after"][n]])
        print(f"| {n} | {statistics.median(b):.0f} ({min(b):.0f}–{max(b):.0f}) | "
              f"{statistics.median(a):.0f} ({min(a):.0f}–{max(a):.0f}) | {cnt:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
