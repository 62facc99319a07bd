#!/usr/bin/env python3
"""The hang detector's cost per record on a real trace (bench/hang_detector_cost.c).

Builds the C program with the detector's own sources, then runs it --runs
times on TRACE: each run times the drain's copy of every record (argus_rb_write
into a private ring) with and without hang_detector_observe, passes
interleaved, best pass of each.  Prints the runs and the medians.

    sudo python3 bench/hang_detector_cost.py /var/lib/argus/trace.argus --runs 7

A benchmark, not a test: it asserts nothing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    rb = os.path.join(ROOT, "tracer", "ringbuf")
    dm = os.path.join(ROOT, "tracer", "daemon")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "hang_detector_cost")
        subprocess.run(["cc", "-O2", "-D_GNU_SOURCE", "-std=gnu11", f"-I{rb}", f"-I{dm}",
                        f"-I{os.path.join(dm, 'platform')}", f"-I{os.path.join(ROOT, 'tracer', 'kdebug')}",
                        os.path.join(ROOT, "bench", "hang_detector_cost.c"), os.path.join(dm, "hang_detector.c"), os.path.join(dm, "hang_index.c"),
                        os.path.join(dm, "snapshot_writer.c"), os.path.join(dm, "safe_dir.c"), os.path.join(dm, "argusd_ctx.c"),
                        os.path.join(rb, "argus_rb.c"), os.path.join(rb, "argus_decode.c"), "-o", exe], check=True)
        runs = []
        for _ in range(args.runs):
            out = subprocess.run([exe, args.trace, str(args.passes)], capture_output=True, text=True)
            if out.returncode:
                sys.exit(out.stderr.strip())
            runs.append(json.loads(out.stdout))
            print(out.stdout.strip(), flush=True)
    med = {k: round(statistics.median(r[k] for r in runs), 2)
           for k in ("copy_ns_per_record", "copy_and_detector_ns_per_record", "detector_ns_per_record")}
    print(json.dumps({"records": runs[0]["records"], "runs": len(runs), "median": med}))


if __name__ == "__main__":
    main()
