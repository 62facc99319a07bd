#!/usr/bin/env python3
"""GLib's own installed tests (Debian libglib2.0-tests) with and without the
trampoline agent, side by side: the pass/fail/skip counts must be the same.

    sudo python3 tests/realworld/glib_installed_tests.py [--parallel 2] [--runs 1] [--json FILE] [TEST...]

Each run executes `gnome-desktop-testing-runner` over the suite (or the named
tests, e.g. glib/mainloop.test) twice: plainly, then under `argus run --`
with a private tracing daemon (its own run/state dirs, started and stopped
here).  The runner forks every test, and LD_PRELOAD passes the agent on to
each of them.  After the agent run the daemon's trace is read back: the
callback_begin records made by processes other than the runner itself show
that the agent was in the tests (a run where it was not cannot pass).

Tests whose result differs between the two runs are re-run alone, REPEAT
times each way, so that a test that is flaky on a loaded machine can be told
from one the agent breaks; the counts reported are those of the full runs.
Exit status 0 when the counts are equal, or when every test that differed
also failed without the agent in its re-runs; 1 otherwise ("suspects").

Prints a table and, with --json, writes
  {"runs": [{"without": {...}, "with": {...}, "callback_pids": N, "callback_comms": [...]}],
   "reruns": {test: {"without": {"PASS": n, ...}, "with": {...}}}, "suspects": [test...], "equal": bool}
where each side is {"pass", "fail", "skip", "total", "seconds", "results": {test: PASS|FAIL|SKIP}}.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

RUNNER = "gnome-desktop-testing-runner"
RUNNER_COMM = RUNNER[:15]             # a process's comm: 15 characters
RESULT = re.compile(r"^(PASS|FAIL|SKIP(?:PED)?): (\S+)")
SUMMARY = re.compile(r"^SUMMARY: total=(\d+); passed=(\d+); skipped=(\d+); failed=(\d+)", re.M)


def parse_results(text):
    """{test: PASS|FAIL|SKIP} from the runner's output."""
    results = {}
    for line in text.splitlines():
        m = RESULT.match(line)
        if m:
            results[m.group(2)] = m.group(1)[:4]
    return results


def side(text, seconds):
    """The runner's own SUMMARY counts (per-test lines of parallel tests can
    interleave with test output), and the per-test results for the diff."""
    results = parse_results(text)
    m = SUMMARY.search(text)
    if m:
        total, passed, skipped, failed = map(int, m.groups())
    else:   # the runner itself died: count what it reported
        c = collections.Counter(results.values())
        total, passed, skipped, failed = len(results), c["PASS"], c["SKIP"], c["FAIL"]
    return {"pass": passed, "fail": failed, "skip": skipped, "total": total,
            "seconds": round(seconds, 1), "results": results}


class Daemon:
    """A private argus daemon: its own run and state dirs, stopped on exit."""

    def __init__(self, tmp, size):
        self.tmp = tmp
        self.buffer = os.path.join(tmp, "trace.argus")
        self.env = dict(os.environ, ARGUS_RUN_DIR=os.path.join(tmp, "run"),
                        ARGUS_STATE_DIR=os.path.join(tmp, "state"))
        self.size = size

    def argus(self, *args, check=True, timeout=600, capture=True):
        proc = subprocess.run([sys.executable, "-m", "argus.cli", *args], env=self.env, text=True,
                              capture_output=capture, timeout=timeout)
        if check and proc.returncode != 0:
            raise SystemExit(f"glib_installed_tests: argus {args[0]} failed: {(proc.stderr or '').strip()}")
        return proc

    def __enter__(self):
        # only what the check reads: scheduler events and the probe records
        # (system-wide syscalls, stacks and samples of a busy machine would
        # wrap the buffer over the first tests' records)
        self.argus("start", "--buffer", self.buffer, "--size", self.size, "--no-syscalls", "--no-stacks",
                   "--no-sample", "--no-hang-detector")
        return self

    def __exit__(self, *exc):
        self.argus("stop", check=False)

    def callback_processes(self):
        """{pid: comm} of the processes with callback_begin records, the runner left out."""
        out = self.argus("events", "--buffer", self.buffer, "--type", "callback_begin", "--json").stdout
        pids = {}
        for line in out.splitlines():
            e = json.loads(line)
            if e.get("comm") != RUNNER_COMM:
                pids[e["pid"]] = e.get("comm", "")
        return pids


def run_suite(cmd_prefix, env, args, tests):
    cmd = [*cmd_prefix, RUNNER, "--parallel", str(args.parallel), "--timeout", str(args.timeout), *(tests or ["glib"])]
    t0 = time.monotonic()
    # output into a file, not a pipe: a process a test leaves behind (a
    # dbus-daemon, a hung test subprocess) keeps the runner's stdout open
    # after the runner exits, and a pipe reader would wait for it
    with tempfile.TemporaryFile("w+") as out:
        subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        seconds = time.monotonic() - t0
        out.seek(0)
        text = out.read()
    if args.log_dir:
        name = "with" if cmd_prefix else "without"
        with open(os.path.join(args.log_dir, f"{name}-{int(time.time())}.log"), "w") as f:
            f.write(text)
    return text, seconds


def agent_prefix():
    return [sys.executable, "-m", "argus.cli", "run", "--"]


def one_run(args, tests):
    without = side(*run_suite([], dict(os.environ), args, tests))
    with tempfile.TemporaryDirectory(prefix="argus-glibtests-") as tmp:
        os.chmod(tmp, 0o700)
        with Daemon(tmp, args.size) as d:
            with_agent = side(*run_suite(agent_prefix(), d.env, args, tests))
            time.sleep(1.5)   # the daemon drains the rings every 10 ms; give the last ones a beat
            d.argus("stop")
            procs = d.callback_processes()
    return {"without": without, "with": with_agent, "callback_pids": len(procs),
            "callback_comms": sorted(set(procs.values()))}


def rerun(args, test):
    """A test that differed, alone, REPEAT times each way."""
    out = {"without": collections.Counter(), "with": collections.Counter()}
    with tempfile.TemporaryDirectory(prefix="argus-glibtests-") as tmp:
        os.chmod(tmp, 0o700)
        with Daemon(tmp, "256M") as d:
            for _ in range(args.repeat):
                out["without"].update(parse_results(run_suite([], dict(os.environ), args, [test])[0]).values())
                out["with"].update(parse_results(run_suite(agent_prefix(), d.env, args, [test])[0]).values())
    return {k: dict(v) for k, v in out.items()}


def print_table(report):
    print(f"{'run':>4} {'agent':>8} {'pass':>5} {'fail':>5} {'skip':>5} {'total':>6} {'seconds':>8}")
    for i, r in enumerate(report["runs"], 1):
        for name in ("without", "with"):
            s = r[name]
            print(f"{i:>4} {name:>8} {s['pass']:>5} {s['fail']:>5} {s['skip']:>5} {s['total']:>6} {s['seconds']:>8}")
        print(f"     callback_begin records from {r['callback_pids']} test processes")
        a, b = r["without"]["results"], r["with"]["results"]
        for t in sorted(set(a) | set(b)):
            if a.get(t) != b.get(t):
                print(f"     differs: {t}: without {a.get(t, '-')}, with {b.get(t, '-')}")
    for t, counts in report["reruns"].items():
        print(f"rerun {t}: without {counts['without']}, with {counts['with']}")
    if report["equal"]:
        print("counts equal")
    elif report["suspects"]:
        print(f"counts DIFFER; failing only with the agent: {' '.join(report['suspects'])}")
    else:
        print("counts differ, by tests that also fail without the agent when re-run (flaky here)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="*", help="tests to run (runner prefixes, e.g. glib/mainloop.test); default: glib")
    ap.add_argument("--parallel", type=int, default=2, help="tests at a time (runner -p)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test (runner --timeout)")
    ap.add_argument("--runs", type=int, default=1, help="full runs each way")
    ap.add_argument("--repeat", type=int, default=3, help="re-runs of each test that differed, each way")
    ap.add_argument("--size", default="2G", help="the daemon's trace buffer")
    ap.add_argument("--json", metavar="FILE", help="write the report here")
    ap.add_argument("--log-dir", metavar="DIR", help="keep each run's runner output here")
    args = ap.parse_args(argv)
    if not shutil.which(RUNNER) or not os.path.isdir("/usr/libexec/installed-tests/glib"):
        print("glib_installed_tests: needs gnome-desktop-testing and libglib2.0-tests (scripts/setup.sh)", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("glib_installed_tests: needs root (the tracing daemon)", file=sys.stderr)
        return 2
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
    runs = [one_run(args, args.tests) for _ in range(args.runs)]
    differing = sorted({t for r in runs for t in set(r["without"]["results"]) | set(r["with"]["results"])
                        if r["without"]["results"].get(t) != r["with"]["results"].get(t)})
    reruns = {t: rerun(args, t) for t in differing if args.repeat}
    # a test the agent breaks fails alone with it and never without it; one
    # that also fails without it is flaky on this machine, not the agent's
    failed_with = {t for r in runs for t in differing if r["with"]["results"].get(t, "FAIL") == "FAIL"}
    suspects = [t for t in differing if t in failed_with and
                (t not in reruns or (reruns[t]["with"].get("FAIL", 0) and not reruns[t]["without"].get("FAIL", 0)))]
    report = {"runs": runs, "reruns": reruns, "suspects": suspects,
              "equal": all(all(r["without"][k] == r["with"][k] for k in ("pass", "fail", "skip")) for r in runs)}
    print_table(report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if report["equal"] or not suspects else 1


if __name__ == "__main__":
    sys.exit(main())
