#!/usr/bin/env python3
"""Import time of a crafted 5 MB kdebug file (`argus import-kdebug`'s worst case).

    python3 bench/kdebug_crafted.py                      # this build
    python3 bench/kdebug_crafted.py --native OLD_DIR     # ... and a baseline libargus_core.so, side by side

The file (written with tests/support/kdebug_gen.py, V3 layout) is what an
attacker would craft against the two costs issue 16 measured: a thread map of
--threads entries with distinct pids (the main-thread check was pairwise:
quadratic in the map) and --lost lost-events markers after each of which
the decoder forgot every thread's wait (a walk of the whole thread table per
marker).  Both are linear now; the target is < 1 s for 5 MB.

Each measurement runs in a fresh child process (ARGUS_NATIVE_DIR selects the
library), best of --repeat.  A benchmark, not a test: nothing is asserted
about time.  A child that runs past --timeout is stopped and reported as such.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def craft(path, threads, lost):
    # the generator is test scaffolding (tests/support), not installed
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from support import kdebug_gen as g

    t = g.KdTrace()
    for i in range(threads):
        t.thread(0x1000000 + i, 1000 + i, f"p{i % 1000}")
    ns = 1000
    for i in range(lost):
        t.block(ns, 0, 0x1000000 + i % threads)   # a wait to forget
        t.lost(ns + 1)
        ns += 10
    t.write_v3(path)
    return os.path.getsize(path)


def child(trace):
    from argus.tracer import kdebug

    out = trace + ".argus"
    start = time.perf_counter()
    res = kdebug.import_trace(trace, out)
    elapsed = time.perf_counter() - start
    os.unlink(out)
    print(json.dumps({"seconds": elapsed, "records": res.records, "threads": res.threads,
                      "lost_markers": res.lost_markers}))


def measure(trace, native, repeat, timeout):
    env = dict(os.environ)
    if native:
        env["ARGUS_NATIVE_DIR"] = native
    best = None
    for _ in range(repeat):
        try:
            out = subprocess.run([sys.executable, __file__, "--child", trace], env=env, capture_output=True,
                                 text=True, timeout=timeout, check=True).stdout
        except subprocess.TimeoutExpired:
            return {"seconds": None, "timeout": timeout}
        run = json.loads(out)
        if best is None or run["seconds"] < best["seconds"]:
            best = run
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=80_000, help="thread map entries, distinct pids (default 80k)")
    ap.add_argument("--lost", type=int, default=19_000, help="lost-events markers (default 19k)")
    ap.add_argument("--native", metavar="DIR", help="also measure the libargus_core.so in DIR (baseline)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600, help="per run, seconds (default 600)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0
    with tempfile.TemporaryDirectory(prefix="argus-kdcraft-") as tmp:
        trace = os.path.join(tmp, "crafted.trace")
        size = craft(trace, args.threads, args.lost)
        print(f"crafted V3 file: {size / 1e6:.1f} MB, {args.threads} thread map entries, {args.lost} lost markers")
        rows = [("this build", measure(trace, None, args.repeat, args.timeout))]
        if args.native:
            rows.append((f"baseline ({args.native})", measure(trace, args.native, 1, args.timeout)))
        for name, r in rows:
            secs = f"{r['seconds']:.3f} s" if r.get("seconds") is not None else f"> {r['timeout']:.0f} s (stopped)"
            print(f"{name:<40} import {secs}")
        if len(rows) == 2 and rows[1][1].get("seconds") and rows[0][1]["seconds"]:
            print(f"speed-up: {rows[1][1]['seconds'] / rows[0][1]['seconds']:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
