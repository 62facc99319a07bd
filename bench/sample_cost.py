#!/usr/bin/env python3
"""What the CPU sampler costs, side by side with sampling off: the sampler's
BPF program time (the kernel's own run_time_ns / run_cnt) and the daemon's
CPU time, as a share of the machine's CPU time, while every CPU is busy.

Throughput ratios on a shared 2-vCPU machine move by tens of percent from
run to run (bench/overhead.py --configs argus,argus-nosample measures them
too); a 99 Hz sampler costs far less than that noise, so this bench measures
the cost where it is paid: in the perf_event program (per sample) and in
argusd (draining the records, reading /proc/PID/maps of sampled processes).

Algorithm: hold BPF_ENABLE_STATS (a reference on the kernel's stats switch,
released when the fd closes: other benchmarks toggling the sysctl are not
disturbed); per round, for each config (sampling at --hz, sampling off) in a
rotating order: `argus start` in a private control dir, run one
argus-cpu-culprit per CPU for --seconds (every CPU on-CPU: the most samples
per second there can be), read the sample_cpu program's counters and
argusd's utime + stime, `argus stop`.  cost = (BPF ns + daemon CPU ns) /
(seconds x CPUs); the sampler's share = cost(on) - cost(off).

    sudo python3 bench/sample_cost.py --argus /venv/bin/argus --rounds 5
"""
import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0
NR_BPF = {"x86_64": 321, "aarch64": 280}


def enable_stats():
    """An fd that keeps BPF run-time stats on while open."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 2)(BPF_STATS_RUN_TIME, 0)
    fd = libc.syscall(NR_BPF[platform.machine()], BPF_ENABLE_STATS, ctypes.byref(attr), ctypes.sizeof(attr))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "BPF_ENABLE_STATS")
    return fd


def progs():
    out = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True, check=True).stdout
    return {p["id"]: p for p in json.loads(out)}


def cpu_ns(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def one_run(argus, tmp, name, hz, culprit, seconds):
    env = dict(os.environ, ARGUS_RUN_DIR=f"{tmp}/{name}/run", ARGUS_STATE_DIR=f"{tmp}/{name}/state")
    before = set(progs())
    subprocess.run(argus + ["start", "--buffer", f"{tmp}/{name}.argus", "--size", "512M", "--sample-hz", str(hz)],
                   env=env, check=True, capture_output=True)
    try:
        st = json.loads(subprocess.run(argus + ["status", "--json"], env=env, capture_output=True, text=True,
                                       check=True).stdout)
        daemon = int(st["pid"])
        mine = [p for i, p in progs().items() if i not in before and p.get("name") == "sample_cpu"]
        if len(mine) != (1 if hz else 0):
            return None       # another sampling daemon started at the same moment: whose program is whose?
        c0 = cpu_ns(daemon)
        p0 = {p["id"]: (p.get("run_cnt", 0), p.get("run_time_ns", 0)) for p in mine}
        t0 = time.monotonic()
        procs = [subprocess.Popen([culprit, str(seconds), "0"], stdout=subprocess.DEVNULL)
                 for _ in range(os.cpu_count())]
        for p in procs:
            p.wait()
        wall = time.monotonic() - t0
        c1 = cpu_ns(daemon)
        now = progs()
        if len([p for i, p in now.items() if i not in before and p.get("name") == "sample_cpu"]) != len(mine):
            return None       # another sampler came up during the run
        runs = sum(now[i].get("run_cnt", 0) - p0[i][0] for i in p0 if i in now)
        bpf_ns = sum(now[i].get("run_time_ns", 0) - p0[i][1] for i in p0 if i in now)
    finally:
        subprocess.run(argus + ["stop"], env=env, capture_output=True)
        try:
            os.unlink(f"{tmp}/{name}.argus")
        except OSError:
            pass
    capacity = wall * os.cpu_count() * 1e9
    return {"samples": runs, "bpf_ns": bpf_ns, "daemon_ns": c1 - c0, "wall_s": wall,
            "ns_per_sample": bpf_ns / runs if runs else None,
            "cost": (bpf_ns + c1 - c0) / capacity}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--argus", default="argus", help="argus command (default: argus on PATH)")
    ap.add_argument("--hz", type=int, default=99, help="sampling frequency of the 'on' config (default 99)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10.0, help="workload length per run (default 10)")
    ap.add_argument("--json", metavar="FILE", help="write every run and the summary as JSON")
    args = ap.parse_args()
    argus = args.argus.split()
    # argus-cpu-culprit is a test program, not shipped: the tests build it
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from support import programs
    try:
        culprit = programs.program("argus-cpu-culprit")
    except programs.ProgramBuildError as e:
        sys.exit(f"sample_cost: {str(e).splitlines()[0]} (see build/native.build.log)")
    fd = enable_stats()
    runs = {"on": [], "off": []}
    with tempfile.TemporaryDirectory(prefix="argus-samplecost-") as tmp:
        try:
            for r in range(args.rounds):
                order = ["on", "off"] if r % 2 == 0 else ["off", "on"]
                for name in order:
                    res = one_run(argus, tmp, name, args.hz if name == "on" else 0, culprit, args.seconds)
                    if res is None:
                        print(f"round {r + 1} {name}: skipped (another sampler appeared)", file=sys.stderr)
                        continue
                    runs[name].append(res)
                    print(f"round {r + 1} {name:<3} samples {res['samples']:>6}  bpf {res['bpf_ns'] / 1e6:8.2f} ms"
                          f"  ns/sample {res['ns_per_sample'] or 0:8.0f}  argusd {res['daemon_ns'] / 1e6:8.1f} ms"
                          f"  cost {res['cost'] * 100:.3f}% of the CPUs", file=sys.stderr, flush=True)
        finally:
            os.close(fd)
    med = {k: statistics.median(x["cost"] for x in v) for k, v in runs.items()}
    nsps = statistics.median(x["ns_per_sample"] for x in runs["on"] if x["ns_per_sample"])
    sps = statistics.median(x["samples"] / x["wall_s"] for x in runs["on"])
    summary = {"hz": args.hz, "cpus": os.cpu_count(), "rounds": args.rounds, "seconds": args.seconds,
               "samples_per_s": round(sps, 1), "bpf_ns_per_sample": round(nsps),
               "cost_on": med["on"], "cost_off": med["off"], "sampler_share": med["on"] - med["off"]}
    print(json.dumps(summary, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": runs, "summary": summary}, f, indent=2)


if __name__ == "__main__":
    main()
