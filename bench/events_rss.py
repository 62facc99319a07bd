#!/usr/bin/env python3
"""Peak RSS of `argus events` on a full ring buffer (target: < 300 MB on 2 GiB).

    sudo python3 bench/events_rss.py                          # fill a 2 GiB buffer, then measure
    sudo python3 bench/events_rss.py --trace /tmp/full.argus  # an existing buffer
    sudo python3 bench/events_rss.py --trace T --baseline "/path/to/old/venv/bin/argus"

Filling (unless --trace): `argus start` into --out with --size under a
private control directory (bench/graph_build.py's record(): perf bench sched
pipe, redis-benchmark, a compile loop) until `argus status` counts --events
records, so the buffer wraps and every chunk is full.

Measurement: each command runs as a child; its peak RSS is the kernel's
ru_maxrss from wait4 (the child alone), with its wall time.  Cases:
  filter   `argus events --type exit` (every record decoded, few printed):
           what a filtered look at a full buffer costs
  all      `argus events` to /dev/null (--all; every record formatted:
           minutes on a busy buffer)
--baseline runs the same cases with another argus command (e.g. the
previous build's) side by side, and --compare checks the two outputs are
byte-identical.  A benchmark, not a test: nothing is asserted.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, out_path):
    """(seconds, peak RSS bytes, sha256 of stdout, exit code) of one child."""
    t0 = time.perf_counter()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    secs = time.perf_counter() - t0
    digest = hashlib.sha256()
    with open(out_path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return secs, usage.ru_maxrss * 1024, digest.hexdigest(), proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", help="an existing buffer (default: record one into --out)")
    ap.add_argument("--out", default="/tmp/argus-bench-events.argus")
    ap.add_argument("--size", default="2G")
    ap.add_argument("--events", type=int, default=60_000_000, help="record until this many (default 60M: wraps 2G)")
    ap.add_argument("--argus", default="argus", help="the argus command measured (default: argus on PATH)")
    ap.add_argument("--baseline", help="another argus command, measured side by side")
    ap.add_argument("--all", action="store_true", help="also print every record (to a scratch file; slow)")
    ap.add_argument("--scratch", default="/tmp/argus-bench-events.out", help="where outputs go (default %(default)s)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = ap.parse_args()

    trace = args.trace
    if not trace:
        sys.path.insert(0, HERE)
        from graph_build import record

        record(args.out, args.size, args.events, args.argus)
        trace = args.out
    cases = [("filter", ["events", "--buffer", trace, "--type", "exit"])]
    if args.all:
        cases.append(("all", ["events", "--buffer", trace]))
    commands = [("this build", args.argus)] + ([("baseline", args.baseline)] if args.baseline else [])
    results = []
    for case, argv in cases:
        digests = {}
        for name, cmd in commands:
            secs, rss, digest, rc = run(cmd.split() + argv, f"{args.scratch}.{len(results)}")
            os.unlink(f"{args.scratch}.{len(results)}")
            digests[name] = digest
            results.append({"case": case, "build": name, "seconds": round(secs, 2), "peak_rss_mb": rss / 1e6,
                            "exit": rc, "sha256": digest})
            print(f"{case:<7} {name:<11} peak RSS {rss / 1e6:8.1f} MB   {secs:7.1f} s   exit {rc}", flush=True)
        if len(digests) == 2:
            print(f"{case:<7} outputs {'identical' if len(set(digests.values())) == 1 else 'DIFFER'}")
    st = json.loads(subprocess.run(args.argus.split() + ["status", "--json", "--buffer", trace], capture_output=True,
                                   text=True).stdout or "{}")
    print(f"buffer: {trace}, {st.get('present', 0):,} records present, {st.get('overwritten', 0):,} overwritten")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"trace": trace, "status": st, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
