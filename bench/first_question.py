#!/usr/bin/env python3
"""Seconds to the first answer on a full, busy buffer: `argus hangs` and
`argus debug --auto` (no --pid), before and after, against `cat BUFFER`.

Steps (as root, after `pip install .`; a private ARGUS_RUN_DIR /
ARGUS_STATE_DIR so a running daemon is never touched):
  1. record: `argus start --size SIZE` (default 2G) and two busy workloads
     (`perf bench sched pipe`: a context-switch storm through a pipe; `perf
     bench sched messaging -p`: groups of senders and receivers) until
     the buffer is full (records overwritten > 0, or --fill-seconds pass);
     then, the workloads still running, one demo run whose app's main thread
     hangs 3 s in a synchronous request (the hang to find, in the buffer's
     last seconds); then the workloads stop and tracing stays live (the
     daemon runs on through the measurements).  --reuse FILE --pid PID skips
     this and reads a recorded buffer.
  2. measure, --runs times for "after" (this package) and --before-runs
     times for "before" (--before DIR: an older package's directory put first
     on PYTHONPATH, e.g. a `git worktree` of an older commit laid out as
     argus/; --before-native DIR: its libargus_core.so, e.g. `cmake --build
     B --target argus_core` of that worktree), "after" runs first (the
     daemon traces on, so the ring moves on meanwhile), then "before":
       hangs        `argus hangs --threshold 1 --top 100000`: seconds until the hung app's
                    line is printed, whether it was, and the child's peak RSS
       debug_first  `argus debug --auto --threshold 1`: seconds until its first
                    line about the hang it explains (the index's line on
                    stderr; before: the report's first line), whether the
                    output names the hung app at all ("app": other hangs on
                    a shared machine may rank first, the app then in the
                    top three), whether that first line does ("picked"),
                    and peak RSS of the whole run
       cat          `cat BUFFER > /dev/null`: the ratio's denominator
Peak RSS is the child's ru_maxrss (os.wait4).  Prints a table (median, min,
max; ratio of medians to cat's; the 1-minute load average at the runs'
starts: the machine may be shared) and, with --json FILE, every run.  Nothing is
asserted: this reports numbers (bench/README.md).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time


# --before / --after run the package in that directory: an editable install's
# import hook (scikit-build-core redirects `argus.*` to the checkout) would win
# over PYTHONPATH, so the launcher takes it off sys.meta_path first
DIR_LAUNCH = ("import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path "
              "if 'Redirecting' not in type(f).__name__]; runpy.run_module('argus.cli', run_name='__main__')")
ARGUS = [sys.executable, "-m", "argus.cli"]     # the "after" command (main() changes it for --after)
APP = ""                                        # "demo-app/PID": the hang to find (main() sets it)
# the first line `argus debug` prints about the hang: the index's (this version), or the report's
DEBUG_FIRST = re.compile(rb"argus: the hang of |^Hang in ", re.M)


def argus(env, *args, check=True, **kw):
    p = subprocess.run([*ARGUS, *args], env=env, capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        sys.exit(f"argus {' '.join(args)} failed: {p.stderr.strip()}")
    return p


def native(name):
    import argus as A
    return os.path.join(os.environ.get("ARGUS_NATIVE_DIR") or A.NATIVE_DIR, name)


def busy_workloads():
    # each in a session of its own: both fork, and the whole group is killed
    pipe = subprocess.Popen(["perf", "bench", "sched", "pipe", "-l", str(10 ** 10)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    # groups of senders and receivers over pipes: hackbench, no event loop to hang
    messaging = subprocess.Popen(["perf", "bench", "sched", "messaging", "-p", "-g", "1", "-l", str(10 ** 9)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    return [pipe, messaging]


def record(env, buffer, size, fill_seconds):
    """Fills the buffer while busy, then records the demo hang; tracing stays on."""
    argus(env, "start", "--buffer", buffer, "--size", size)
    busy = busy_workloads()
    try:
        t0 = time.time()
        while time.time() - t0 < fill_seconds:
            time.sleep(2)
            p = argus(env, "status", "--json", check=False)
            if p.returncode:            # a daemon too busy to answer its socket in time: ask again
                print(f"  status: {p.stderr.strip()}", flush=True)
                continue
            st = json.loads(p.stdout)
            over = st.get("overwritten") or 0
            print(f"  {time.time() - t0:5.0f} s  fill {st.get('fill', 0):.0%}  events {st.get('events', '?'):,}  "
                  f"events/s {st.get('events_per_s', 0):,.0f}  overwritten {over:,}", flush=True)
            if over:
                break
        demo = subprocess.Popen([native("argus-demo-hang"), "--requests", "40", "--hang-at", "30", "--hang-ms",
                                 "3000", "--interval-ms", "20", "--stuck", "run"], stdout=subprocess.PIPE, text=True)
        info = json.loads(demo.stdout.readline())
        demo.stdout.read()
        demo.wait()
        time.sleep(1.5)
    finally:
        for p in busy:
            try:
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
            p.wait()
    return info


def timed_child(cmd, env, marker, timeout=1800):
    """(seconds to the first output containing marker or None, total seconds,
    peak RSS MiB, exit code, whether the hung app was named anywhere, whether
    the line with the marker names it: the hang picked, 1-minute load average
    at the start, the end of its stderr) of cmd.  marker: a string, or a compiled pattern.  Reader threads take stdout and stderr
    as they come while this thread waits in wait4: a bench that polled its
    children would be an event loop hung in a nested poll, a candidate of
    the very `argus debug` it times."""
    find = marker.search if hasattr(marker, "search") else (lambda b: marker.encode() in b)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    got = {"first": None, "line": b"", "out": b"", "err": b""}
    lock = threading.Lock()

    def drain(f, key):
        for line in iter(f.readline, b""):
            with lock:
                got[key] += line
                if got["first"] is None and find(line):
                    got["first"] = time.perf_counter() - t0
                    got["line"] = line

    readers = [threading.Thread(target=drain, args=(p.stdout, "out"), daemon=True),
               threading.Thread(target=drain, args=(p.stderr, "err"), daemon=True)]
    for r in readers:
        r.start()
    killer = threading.Timer(timeout, p.kill)
    killer.start()
    _, status, ru = os.wait4(p.pid, 0)
    killer.cancel()
    total = time.perf_counter() - t0
    for r in readers:
        r.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    rc = p.returncode
    if rc:
        print(f"    {' '.join(cmd[-6:])}: rc {rc}: {got['err'].decode(errors='replace').strip()[-300:]}", flush=True)
    return (got["first"], total, ru.ru_maxrss / 1024.0, rc, APP.encode() in got["out"] + got["err"],
            APP.encode() in got["line"], load, got["err"].decode(errors="replace")[-3000:])


def cat_seconds(buffer):
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        subprocess.run(["cat", buffer], stdout=null, check=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--size", default="2G", help="buffer size (default 2G, argus start's default)")
    ap.add_argument("--fill-seconds", type=float, default=900, help="stop filling after this long (default 900)")
    ap.add_argument("--runs", type=int, default=5, help="runs of this package per figure (default 5)")
    ap.add_argument("--before", metavar="DIR", help="an older package (DIR/argus/...) to measure side by side")
    ap.add_argument("--before-native", metavar="DIR",
                    help="ARGUS_NATIVE_DIR for --before (its own libargus_core.so: the decoder's structs change "
                         "between versions; default: this build's)")
    ap.add_argument("--after", metavar="DIR", help="measure (and record with) the package in DIR/argus/ "
                    "instead of the installed one (e.g. a worktree of this commit with its own build)")
    ap.add_argument("--after-native", metavar="DIR", help="ARGUS_NATIVE_DIR for --after (its argusd, demo, library)")
    ap.add_argument("--before-runs", type=int, default=2, help="runs of --before per figure (default 2: minutes each)")
    ap.add_argument("--reuse", metavar="FILE", help="a recorded buffer (with --pid)")
    ap.add_argument("--pid", type=int, help="the hung app's pid in --reuse's buffer")
    ap.add_argument("--keep", metavar="FILE", help="record the buffer here (kept)")
    ap.add_argument("--json", metavar="FILE", help="write every run as JSON")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("first_question.py: tracing needs root")
    global ARGUS
    tmp = tempfile.mkdtemp(prefix="argus-bench-")
    env = dict(os.environ, ARGUS_RUN_DIR=os.path.join(tmp, "run"), ARGUS_STATE_DIR=os.path.join(tmp, "state"),
               ARGUS_SESSION_DB=os.path.join(tmp, "sessions.db"))
    if args.after:
        ARGUS = [sys.executable, "-c", DIR_LAUNCH]
        env["PYTHONPATH"] = os.path.abspath(args.after)
    if args.after_native:
        env["ARGUS_NATIVE_DIR"] = os.environ["ARGUS_NATIVE_DIR"] = os.path.abspath(args.after_native)
    live = False
    if args.reuse:
        if args.pid is None:
            sys.exit("--reuse needs --pid")
        buffer, pid = args.reuse, args.pid
    else:
        buffer = args.keep or os.path.join(tmp, "trace.argus")
        print(f"recording a full, busy {args.size} buffer into {buffer} ...", flush=True)
    try:
        if not args.reuse:
            live = True             # stopped in finally, whatever happens while recording
            pid = record(env, buffer, args.size, args.fill_seconds)["app_pid"]
        st = json.loads(argus(env, "status", "--buffer", buffer, "--json").stdout)
        print(f"hung app pid {pid}; tracing live: {live}")
        print(f"buffer {buffer}: " + json.dumps({k: st[k] for k in st if not isinstance(st[k], (dict, list))}))
        variants = [("after", env, args.runs)]
        if args.before:
            import argus as A
            benv = dict(env, PYTHONPATH=os.path.abspath(args.before),
                        ARGUS_NATIVE_DIR=os.path.abspath(args.before_native or A.NATIVE_DIR))
            variants.append(("before", benv, args.before_runs))
        launch = {"after": ARGUS, "before": [sys.executable, "-c", DIR_LAUNCH]}
        global APP
        marker = APP = f"demo-app/{pid}"
        runs = {f"{v}_{k}": [] for v, _, _ in variants for k in ("hangs", "debug_first")}
        runs["cat"] = []
        for name, venv, n in variants:
            for i in range(n):
                runs["cat"].append(cat_seconds(buffer))   # the page cache is warm for every figure alike
                base = launch[name]
                h = timed_child(base + ["hangs", "--buffer", buffer, "--threshold", "1", "--top", "100000"], venv,
                                marker)
                d = timed_child(base + ["debug", "--buffer", buffer, "--auto", "--threshold", "1"], venv, DEBUG_FIRST)
                runs[f"{name}_hangs"].append(h)
                runs[f"{name}_debug_first"].append(d)
                print(f"  {name:6} run {i + 1}: hangs {fmt(h)}; debug first line {fmt(d)}; cat {runs['cat'][-1]:.2f} s",
                      flush=True)
        cat = statistics.median(runs["cat"])
        print(f"\n{'figure':<20} {'found':>5} {'median s':>9} {'min s':>7} {'max s':>7} {'x cat':>7} "
              f"{'peak RSS MiB':>13} {'total s':>8} {'app':>5} {'picked':>6} {'load':>9}   (buffer {os.path.getsize(buffer) / 2**30:.1f} GiB, "
              f"cat {cat:.2f} s median)")
        for k, v in runs.items():
            if k == "cat" or not v:
                continue
            found = [r[0] for r in v if r[0] is not None]
            shown = found or [r[1] for r in v]
            med = statistics.median(shown)
            print(f"{k:<20} {len(found)}/{len(v):<3} {med:9.2f} {min(shown):7.2f} {max(shown):7.2f} {med / cat:7.1f} "
                  f"{max(r[2] for r in v):13.0f} {statistics.median(r[1] for r in v):8.2f} "
                  f"{sum(1 for r in v if r[4])}/{len(v):<3} {sum(1 for r in v if r[5])}/{len(v):<4} "
                  f"{min(r[6] for r in v):4.1f}-{max(r[6] for r in v):<4.1f}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"buffer": buffer, "pid": pid, "status": st, "runs": runs}, f, indent=1)
    finally:
        if live:
            argus(env, "stop", check=False)


def fmt(r):
    first, total, rss, rc, named, picked, load, _ = r
    return ((f"{first:.2f} s" if first is not None else "not found") +
            f" (total {total:.1f} s, {rss:.0f} MiB, rc {rc}, {'names' if named else 'does not name'} the app, "
            f"{'picks' if picked else 'does not pick'} it, load {load:.1f})")


if __name__ == "__main__":
    main()
