#!/usr/bin/env python3
"""Time from `argus debug` start to its first question, on a full buffer.

Steps (as root, after `pip install .`; a private ARGUS_RUN_DIR /
ARGUS_STATE_DIR so a running daemon is never touched):
  1. record: `argus start --size SIZE` (default 2G, the default buffer size)
     and a busy workload until the buffer is full (records overwritten > 0,
     or --fill-seconds pass): copies of the bundled demo with its helper
     stuck yielding (sched_yield storms: 4 records per yield) on every CPU;
     then one demo run whose app hangs (run, 3 s), the hang to diagnose;
     `argus stop`.  --reuse FILE skips this and uses a recorded buffer.
  2. measure, --runs times, side by side:
       first_question  `argus debug --pid APP` in a pseudo-terminal (pexpect),
                       from spawn to the first question prompt (or to the
                       REPL prompt when nothing is asked)
       auto_report     `argus debug --pid APP --auto --json` to exit (the same
                       decode + graph build + diagnosis, no terminal)
Prints the figures (median, min, max seconds) and, with --json FILE, every
run.  Nothing is asserted: this reports a number (bench/README.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import pexpect

QUESTION = r"(predecessor|weak|baseline|go_on) #\d+ \[[^\]]*\]>|\(argus:\d+\)"


def argus(env, *args, check=True, **kw):
    p = subprocess.run([sys.executable, "-m", "argus.cli", *args], env=env, capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        sys.exit(f"argus {' '.join(args)} failed: {p.stderr.strip()}")
    return p


def native(name):
    import argus as A
    return os.path.join(A.NATIVE_DIR, name)


def record(env, buffer, size, fill_seconds):
    argus(env, "start", "--buffer", buffer, "--size", size)
    busy = []
    try:
        t0 = time.time()
        ncpu = os.cpu_count() or 1
        while time.time() - t0 < fill_seconds:
            while len(busy) < ncpu:
                busy.append(subprocess.Popen([native("argus-demo-hang"), "--requests", "3", "--hang-at", "1",
                                              "--hang-ms", "20000", "--interval-ms", "1", "--stuck", "yield"],
                                             stdout=subprocess.DEVNULL))
            time.sleep(2)
            busy = [p for p in busy if p.poll() is None]
            st = json.loads(argus(env, "status", "--json").stdout)
            over = st.get("overwritten") or 0
            print(f"  {time.time() - t0:5.0f} s  fill {st.get('fill', 0):.0%}  events {st.get('events', '?')}  "
                  f"overwritten {over}", flush=True)
            if over:
                break
        for p in busy:
            p.kill()
            p.wait()
        demo = subprocess.Popen([native("argus-demo-hang"), "--requests", "40", "--hang-at", "30", "--hang-ms",
                                 "3000", "--interval-ms", "20", "--stuck", "run"], stdout=subprocess.PIPE, text=True)
        info = json.loads(demo.stdout.readline())
        demo.stdout.read()
        demo.wait()
        time.sleep(1.5)
    finally:
        for p in busy:
            if p.poll() is None:
                p.kill()
        argus(env, "stop", check=False)
    return info


def first_question(env, buffer, pid, extra=()):
    t0 = time.perf_counter()
    child = pexpect.spawn(sys.executable, ["-m", "argus.cli", "debug", "--buffer", buffer, "--pid", str(pid),
                                           "--threshold", "1", *extra],
                          env=dict(env, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm"), encoding="utf-8", timeout=1800)
    child.expect(QUESTION)
    dt = time.perf_counter() - t0
    child.sendintr()
    child.sendeof()
    child.sendeof()
    try:
        child.expect(pexpect.EOF, timeout=120)
    finally:
        child.close(force=True)
    return dt


def timed(env, *args):
    t0 = time.perf_counter()
    argus(env, *args, timeout=1800)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--size", default="2G", help="buffer size (default 2G, argus start's default)")
    ap.add_argument("--fill-seconds", type=float, default=900, help="stop filling after this long (default 900)")
    ap.add_argument("--runs", type=int, default=3, help="measurements per figure (default 3)")
    ap.add_argument("--reuse", metavar="FILE", help="a recorded buffer (with --pid)")
    ap.add_argument("--pid", type=int, help="the hung app's pid in --reuse's buffer")
    ap.add_argument("--keep", metavar="FILE", help="keep the recorded buffer here")
    ap.add_argument("--json", metavar="FILE", help="write every run as JSON")
    ap.add_argument("--window", type=float, metavar="SECONDS",
                    help="pass `--window SECONDS` to argus debug (0: load the whole buffer, the pre-window "
                         "behaviour; default: argus debug's own default)")
    args = ap.parse_args()
    extra = () if args.window is None else ("--window", f"{args.window:g}")
    if os.geteuid() != 0:
        sys.exit("first_question.py: tracing needs root")
    tmp = tempfile.mkdtemp(prefix="argus-bench-")
    env = dict(os.environ, ARGUS_RUN_DIR=os.path.join(tmp, "run"), ARGUS_STATE_DIR=os.path.join(tmp, "state"),
               ARGUS_SESSION_DB=os.path.join(tmp, "sessions.db"))
    if args.reuse:
        if args.pid is None:
            sys.exit("--reuse needs --pid")
        buffer, pid = args.reuse, args.pid
    else:
        buffer = args.keep or os.path.join(tmp, "trace.argus")
        print(f"recording a full {args.size} buffer into {buffer} ...", flush=True)
        info = record(env, buffer, args.size, args.fill_seconds)
        pid = info["app_pid"]
    st = json.loads(argus(env, "status", "--buffer", buffer, "--json").stdout)
    print(f"hung app pid {pid}")
    print(f"buffer {buffer}: {json.dumps({k: st[k] for k in st if not isinstance(st[k], (dict, list))})}")
    runs = {"first_question": [], "auto_report": []}
    for i in range(args.runs):
        # alternate the order so the page cache favours neither figure
        order = ("first_question", "auto_report") if i % 2 == 0 else ("auto_report", "first_question")
        for k in order:
            if k == "first_question":
                runs[k].append(first_question(env, buffer, pid, extra))
            else:
                runs[k].append(timed(env, "debug", "--buffer", buffer, "--pid", str(pid), "--threshold", "1",
                                     "--auto", "--json", *extra))
        print(f"  first question {runs['first_question'][-1]:.2f} s, --auto report {runs['auto_report'][-1]:.2f} s",
              flush=True)
    print(f"\n{'figure':<16} {'median s':>9} {'min s':>7} {'max s':>7}   (buffer {os.path.getsize(buffer) / 2**30:.1f} GiB)")
    for k, v in runs.items():
        print(f"{k:<16} {statistics.median(v):9.2f} {min(v):7.2f} {max(v):7.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"buffer": buffer, "pid": pid, "status": st, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
