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
counters, `argus stop`.  Prints the median ns/run per program and build, and
with --all every program of the build (the interrupt-state programs too),
with its runs and its total time over the workloads: where the nanoseconds go.

    sudo python3 bench/bpf_prog_cost.py --base /venv-old/bin/argus --after /venv-new/bin/argus
    sudo python3 bench/bpf_prog_cost.py --build main=/venv-main/bin/argus --build x=... --all
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

NAMES = ("sched_switch", "sched_waking", "sys_enter", "sys_exit")
STATS = "/proc/sys/kernel/bpf_stats_enabled"
SLOT = re.compile(r"^(sys_enter|sys_exit)_[0-7][0-7]$")


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
        mine = {i: p for i, p in progs().items() if i not in before and p.get("type") == "tracing"}
        if sorted(p["name"] for p in mine.values() if p["name"] in NAMES) != sorted(NAMES) or \
                len({p["name"] for p in mine.values()}) != len(mine):
            return None
        start = {i: (p.get("run_time_ns", 0), p.get("run_cnt", 0)) for i, p in mine.items()}
        workload(port, args.pipe_loops, args.requests)
        now = progs()
        sums = {}
        for i, p in mine.items():
            dc = now[i].get("run_cnt", 0) - start[i][1]
            if dc:
                # fentry/fexit syscall slots (sys_enter_00 .. sys_exit_77), one per
                # hooked syscall, count as one program each way.
                key = SLOT.sub(r"\1 (fentry)", p["name"])
                t, k = sums.get(key, (0, 0))
                sums[key] = (t + now[i].get("run_time_ns", 0) - start[i][0], k + dc)
        return {n: (t / k, k) for n, (t, k) in sums.items()}
    finally:
        subprocess.run(cmd + ["stop"], env=env, capture_output=True)
        try:
            os.unlink(f"{tmp}/{name}.argus")
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", metavar="CMD", help="argus command of the build before")
    ap.add_argument("--after", metavar="CMD", help="argus command of the build after")
    ap.add_argument("--build", action="append", default=[], metavar="NAME=CMD",
                    help="a named build (repeatable), instead of or besides --base/--after")
    ap.add_argument("--all", action="store_true", help="report every program, with runs and total ms per round")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--pipe-loops", type=int, default=100000)
    ap.add_argument("--requests", type=int, default=50000)
    ap.add_argument("--port", type=int, default=6391, help="port of the private redis-server")
    args = ap.parse_args()
    cmds = {}
    if args.base:
        cmds["base"] = args.base.split()
    if args.after:
        cmds["after"] = args.after.split()
    for b in args.build:
        name, sep, cmd = b.partition("=")
        if not sep or not name or not cmd:
            sys.exit(f"bpf_prog_cost: --build wants NAME=CMD, got {b!r}")
        cmds[name] = cmd.split()
    if len(cmds) < 1:
        sys.exit("bpf_prog_cost: give --base/--after or at least one --build NAME=CMD")
    try:
        old = open(STATS).read().strip()
    except OSError as e:
        sys.exit(f"bpf_prog_cost: cannot read {STATS}: {e.strerror} (needs root)")
    tmp = tempfile.mkdtemp(prefix="argus-bpfcost-")
    redis = None
    res = {c: {} for c in cmds}
    try:
        with open(STATS, "w") as f:
            f.write("1")
        redis = subprocess.Popen(["redis-server", "--port", str(args.port), "--save", "", "--appendonly", "no"],
                                 stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        for r in range(args.rounds):
            order = list(cmds)
            k = r % len(order)
            for c in order[k:] + order[:k]:
                got = one_run(cmds[c], tmp, c, args.port, args)
                if got is None:
                    print(f"round {r + 1} {c}: another daemon started at the same time; skipped", file=sys.stderr)
                    continue
                for n, v in got.items():
                    res[c].setdefault(n, []).append(v)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"bpf_prog_cost: failed to run the benchmark: {e}")
    finally:
        with open(STATS, "w") as f:
            f.write(old)
        if redis:
            redis.terminate()
            redis.wait()
    names = list(cmds)
    progs_seen = sorted({n for c in names for n in res[c]},
                        key=lambda n: (n not in NAMES, -max(statistics.median([x * k for x, k in res[c][n]])
                                                          for c in names if res[c].get(n))))
    if not args.all:
        progs_seen = [n for n in NAMES if n in progs_seen]
    print("| program | " + " | ".join(f"{c} ns/run (range)" for c in names) + " | runs per round | "
          + " | ".join(f"{c} ms per round" for c in names) + " |")
    print("|---|" + "---:|" * (2 * len(names) + 1))
    for n in progs_seen:
        cells, totals, cnt = [], [], None
        for c in names:
            v = res[c].get(n, [])
            if not v:
                cells.append("–")
                totals.append("–")
                continue
            xs = [x for x, _ in v]
            cnt = statistics.median([k for _, k in v])
            cells.append(f"{statistics.median(xs):.0f} ({min(xs):.0f}–{max(xs):.0f})")
            totals.append(f"{statistics.median([x * k for x, k in v]) / 1e6:.1f}")
        print(f"| {n} | " + " | ".join(cells) + f" | {cnt:,.0f} | " + " | ".join(totals) + " |")
    for c in names:
        rounds = len(res[c].get("sched_switch", []))
        print(f"{c}: {rounds} rounds", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
