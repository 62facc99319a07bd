"""`argus demo`: the built-in default job — trace the bundled demo hang and
diagnose it.

The demo (tests/programs/demo_hang.c) is an app whose main thread waits on a
daemon process whose worker waits on a helper thread that gets stuck.  The
command starts tracing (reusing a running daemon, else a private one on a
demo buffer that it stops afterwards), runs the demo, and prints the
diagnosis of the app's hang together with what the right answer is.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from argus.cli import cmd_debug, cmd_start, control
from argus.cli.common import ArgusError, STATE_DIR, native_path

DEMO_BUFFER = os.path.join(STATE_DIR, "demo.argus")


def register(sub):
    p = sub.add_parser("demo", help="trace and diagnose the bundled demo hang (app -> daemon -> stuck helper)")
    p.add_argument("--stuck", choices=["run", "sleep", "yield"], default="run",
                   help="how the daemon's helper thread gets stuck (default run: busy on the CPU)")
    p.add_argument("--hang-ms", type=int, default=3000, help="how long the hang lasts (default 3000)")
    p.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    p.set_defaults(func=run)


EXPECTED = {"run": "LongRunning", "sleep": "LongWait", "yield": "RepeatedYield"}


def run(args):
    if args.hang_ms < 1500:
        raise ArgusError("--hang-ms must be at least 1500 (the demo diagnoses hangs of 1 s or more)")
    running = control.status()
    # an existing demo buffer is continued at its own size (start never re-creates a trace)
    size = None if running or os.path.exists(DEMO_BUFFER) else "256M"
    buffer, started = cmd_start.start_daemon(None if running else DEMO_BUFFER, size)
    try:
        info = _run_demo(args)
        time.sleep(1.0)   # let the daemon drain the kernel's ring buffer into the file
        if not args.json:
            print(f"argus: traced the demo: app pid {info['app_pid']} -> daemon pid {info['daemon_pid']} "
                  f"-> helper thread {info['helper_tid']} stuck ({args.stuck}, {args.hang_ms} ms)\n")
        argv = ["--buffer", buffer, "--pid", str(info["app_pid"]), "--auto", "--threshold", "1"]
        rc = _debug(argv + (["--json"] if args.json else []))
        if not args.json:
            print(f"\nexpected: root cause demo-helper (tid {info['helper_tid']}) {EXPECTED[args.stuck]}")
        return rc
    finally:
        if started:
            cmd_start.stop_daemon()


def _debug(argv):
    """`argus debug ARGV` through cmd_debug's own parser (not cli/main.py,
    which imports this module); an ArgusError goes up to main() as usual."""
    parser = argparse.ArgumentParser(prog="argus")
    cmd_debug.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["debug"] + argv)
    return args.func(args) or 0


def _run_demo(args):
    exe = native_path("argus-demo-hang")
    cmd = [exe, "--requests", "40", "--hang-at", "30", "--hang-ms", str(args.hang_ms),
           "--interval-ms", "20", "--stuck", args.stuck]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(proc.stdout.readline() or "null")
        proc.stdout.read()
        rc = proc.wait(timeout=args.hang_ms / 1000 + 60)
    except (ValueError, subprocess.TimeoutExpired):
        proc.kill()
        raise ArgusError("the demo program did not run as expected")
    if rc != 0 or not info:
        raise ArgusError(f"the demo program failed (exit {rc})")
    return info
