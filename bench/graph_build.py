#!/usr/bin/env python3
"""Graph build throughput: decode + segments + edges on a real trace of
>= 20M events, against the per-row Python loop it replaced.

    sudo python3 bench/graph_build.py                      # record ~20M events, then measure
    sudo python3 bench/graph_build.py --trace /tmp/big.argus --repeat 3
    sudo python3 bench/graph_build.py --trace T --json out.json --markdown

Recording (unless --trace names an existing buffer): `argus start` in a
private control directory (ARGUS_RUN_DIR / ARGUS_STATE_DIR under a temporary
directory) into --out with --size, while a busy workload runs (perf bench sched
pipe in a loop, redis-benchmark against a private redis-server, a compile loop)
until `argus status --json` counts --events events; then everything it started
is stopped (by process group of each child it spawned).

Measurement, --repeat times, each in a fresh child process:
  decode   argus.tracer.reader.decode_file (the C decoder): wall and CPU time,
           peak RSS of the phase (VmHWM, reset through /proc/self/clear_refs)
  build    argus.graphbuild.build_graph (the C graph core + numpy), same figures
The Python loop (tests/support/reference) and the C core run side by side on the same
slice of rows (--slice, default 400k) in one process, best of 3 each; the
report gives their ratio.  This is a benchmark, not a test: nothing is
asserted about timings.
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

# tests/support (the Python reference engine) is not installed: the repo copy
TESTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests")

HERE = os.path.dirname(os.path.abspath(__file__))


# ----------------------------------------------------------------- recording

def _spawn(cmd, **kw):
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            **kw)


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)   # the child's own session: only what it started
            except ProcessLookupError:
                pass
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def record(out, size, target, argus_cmd, graph_workloads=False):
    tmp = tempfile.mkdtemp(prefix="argus-graph-bench-")
    env = dict(os.environ, ARGUS_RUN_DIR=os.path.join(tmp, "run"), ARGUS_STATE_DIR=os.path.join(tmp, "state"))
    argus = argus_cmd.split()
    procs = []
    started = False
    try:
        subprocess.run(argus + ["start", "--buffer", out, "--size", size], env=env, check=True)
        started = True
        if shutil.which("perf"):
            procs.append(_spawn(["sh", "-c", "while :; do perf bench sched pipe -l 200000; done"]))
        if shutil.which("redis-server") and shutil.which("redis-benchmark"):
            procs.append(_spawn(["redis-server", "--port", "6391", "--save", "", "--appendonly", "no"]))
            time.sleep(0.5)
            procs.append(_spawn(["sh", "-c", "while :; do redis-benchmark -p 6391 -q -n 100000 -c 8 "
                                 "-t set,get,lpush; done"]))
        src = os.path.join(tmp, "unit.c")
        with open(src, "w") as f:
            f.write("int f(int x) { return x * 3; }\n")
        procs.append(_spawn(["sh", "-c", f"while :; do cc -O2 -c {src} -o {tmp}/unit.o; done"]))
        if graph_workloads:
            # tests/data/graph_workloads.c: a batching server, a proxy between two
            # peers, an event loop, timerfds, mutex contention (every heuristic)
            exe = os.path.join(tmp, "argus-gw")
            subprocess.run(["cc", "-O2", "-pthread", "-o", exe,
                            os.path.join(HERE, "..", "tests", "data", "graph_workloads.c")], check=True)
            procs.append(_spawn(["sh", "-c", f"while :; do for m in batch proxy poll timer mutex; do {exe} $m; "
                                 "sleep 0.2; done; done"]))
        t0 = time.time()
        while True:
            time.sleep(2)
            st = json.loads(subprocess.run(argus + ["status", "--json"], env=env, capture_output=True, text=True,
                                           check=True).stdout)
            n = int(st.get("events", 0))
            print(f"  recording: {n:,} events after {time.time() - t0:.0f} s", file=sys.stderr)
            if n >= target:
                break
    finally:
        _stop(procs)
        if started:
            time.sleep(1.5)   # the daemon drains its kernel buffer
            subprocess.run(argus + ["stop"], env=env)
        shutil.rmtree(tmp, ignore_errors=True)


# -------------------------------------------------------------- measurement

def _hwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) * 1024
    return 0


def _rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_hwm():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")          # resets VmHWM to the current RSS (Linux >= 4.0)


def _cpu():
    t = os.times()
    return t.user + t.system


def measure_child(trace_path):
    """One decode + build in this (fresh) process; prints a JSON line."""
    from argus.tracer import reader
    from argus.graphbuild.builder import build_graph_from_trace

    base = _rss()
    _reset_hwm()
    w0, c0 = time.perf_counter(), _cpu()
    tr = reader.decode_file(trace_path, strict=False)
    w1, c1 = time.perf_counter(), _cpu()
    decode_hwm = _hwm()
    _reset_hwm()
    g = build_graph_from_trace(tr)
    w2, c2 = time.perf_counter(), _cpu()
    build_hwm = _hwm()
    print(json.dumps({
        "events": int(tr.nrows), "vertices": g.num_vertices, "edges": g.num_edges,
        "decode_wall": w1 - w0, "decode_cpu": c1 - c0, "build_wall": w2 - w1, "build_cpu": c2 - c1,
        "decode_hwm": decode_hwm, "build_hwm": build_hwm, "python_base_rss": base,
        "overwritten": int(tr.records_overwritten),
    }))


def compare_child(trace_path, nslice):
    """The Python loop and the C core on the same slice, best of 3 each."""
    from argus.tracer import reader
    from argus.graphbuild import build_graph
    sys.path.insert(0, TESTS_DIR)
    from support import reference        # the Python loop: test scaffolding, not shipped

    tr = reader.decode_file(trace_path, strict=False)
    rows = tr.rows[:nslice].copy()
    del tr
    best = {"python": float("inf"), "native": float("inf")}
    engines = {"python": reference.build_graph, "native": lambda r: build_graph(r, splits=False)}
    for _ in range(3):
        for engine in ("python", "native"):
            t0 = time.perf_counter()
            g = engines[engine](rows)
            best[engine] = min(best[engine], time.perf_counter() - t0)
            del g
    t0 = time.perf_counter()
    build_graph(rows)
    with_heuristics = time.perf_counter() - t0
    print(json.dumps({"rows": len(rows), "python_s": best["python"], "native_s": best["native"],
                      "native_heuristics_s": with_heuristics}))


def _child(mode, *args):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), f"--child-{mode}", *args],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", help="an existing ring buffer to measure (default: record one into --out)")
    ap.add_argument("--out", default="/tmp/argus-bench-graph.argus", help="where to record (default %(default)s)")
    ap.add_argument("--size", default="2G", help="buffer size when recording (default %(default)s)")
    ap.add_argument("--events", type=int, default=20_000_000, help="record until this many events (default 20M)")
    ap.add_argument("--repeat", type=int, default=3, help="measurement runs, each in a fresh process (default 3)")
    ap.add_argument("--slice", type=int, default=400_000, help="rows for the Python-loop comparison (default 400k)")
    ap.add_argument("--argus", default="argus", help="the argus command (default: argus on PATH)")
    ap.add_argument("--graph-workloads", action="store_true",
                    help="also run tests/data/graph_workloads.c in a loop while recording (every heuristic fires)")
    ap.add_argument("--json", metavar="FILE", help="write every run and the summary as JSON")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    ap.add_argument("--child-measure", metavar="TRACE", help=argparse.SUPPRESS)
    ap.add_argument("--child-compare", nargs=2, metavar=("TRACE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_measure:
        return measure_child(args.child_measure)
    if args.child_compare:
        return compare_child(args.child_compare[0], int(args.child_compare[1]))

    trace = args.trace
    if not trace:
        if os.geteuid() != 0:
            print("graph_build: recording needs root (or pass --trace FILE)", file=sys.stderr)
            return 1
        record(args.out, args.size, args.events, args.argus, args.graph_workloads)
        trace = args.out
    if not os.path.exists(trace):
        print(f"graph_build: no trace at {trace}", file=sys.stderr)
        return 1

    # warm the page cache so every run reads the file from memory alike
    with open(trace, "rb") as f:
        while f.read(1 << 24):
            pass
    runs = [_child("measure", trace) for _ in range(args.repeat)]
    cmp_ = _child("compare", trace, str(args.slice))

    n = runs[0]["events"]

    def best(key):
        return min(r[key] for r in runs)

    def med(key):
        return statistics.median(r[key] for r in runs)

    summary = {
        "trace": trace, "events": n, "vertices": runs[0]["vertices"], "edges": runs[0]["edges"],
        "records_overwritten": runs[0]["overwritten"],
        "decode_events_per_s": n / best("decode_wall"), "decode_events_per_cpu_s": n / best("decode_cpu"),
        "build_events_per_s": n / best("build_wall"), "build_events_per_cpu_s": n / best("build_cpu"),
        "total_events_per_s": n / min(r["decode_wall"] + r["build_wall"] for r in runs),
        "total_events_per_cpu_s": n / min(r["decode_cpu"] + r["build_cpu"] for r in runs),
        "median_total_events_per_s": n / statistics.median(r["decode_wall"] + r["build_wall"] for r in runs),
        "decode_peak_bytes_per_event": med("decode_hwm") / n,
        "build_peak_bytes_per_event": med("build_hwm") / n,
        "peak_bytes_per_event": max(med("decode_hwm"), med("build_hwm")) / n,
        "python_loop": cmp_,
        "python_loop_us_per_row": cmp_["python_s"] / cmp_["rows"] * 1e6,
        "native_us_per_row_slice": cmp_["native_s"] / cmp_["rows"] * 1e6,
        "speedup_vs_python_loop": cmp_["python_s"] / cmp_["native_s"],
    }
    rows = [
        ("events", f"{n:,}"),
        ("vertices / edges", f"{summary['vertices']:,} / {summary['edges']:,}"),
        ("decode", f"{summary['decode_events_per_s'] / 1e6:.2f} M events/s wall, "
                   f"{summary['decode_events_per_cpu_s'] / 1e6:.2f} M/s CPU; peak RSS "
                   f"{summary['decode_peak_bytes_per_event']:.0f} B/event"),
        ("build (segments + edges + CSR)", f"{summary['build_events_per_s'] / 1e6:.2f} M events/s wall, "
                                           f"{summary['build_events_per_cpu_s'] / 1e6:.2f} M/s CPU; peak RSS "
                                           f"{summary['build_peak_bytes_per_event']:.0f} B/event"),
        ("decode + build", f"{summary['total_events_per_s'] / 1e6:.2f} M events/s wall (median "
                           f"{summary['median_total_events_per_s'] / 1e6:.2f}), "
                           f"{summary['total_events_per_cpu_s'] / 1e6:.2f} M/s CPU"),
        ("peak RSS", f"{summary['peak_bytes_per_event']:.0f} B/event"),
        (f"Python loop, {cmp_['rows']:,}-row slice", f"{summary['python_loop_us_per_row']:.2f} us/row vs C core "
                                                     f"{summary['native_us_per_row_slice']:.3f} us/row: "
                                                     f"{summary['speedup_vs_python_loop']:.0f}x"),
    ]
    w = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"{a:<{w}}  {b}")
    if args.markdown:
        print("\n| measure | value |\n|---|---|")
        for a, b in rows:
            print(f"| {a} | {b} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": runs, "compare": cmp_, "summary": summary}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
