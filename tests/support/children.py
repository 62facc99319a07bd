"""Python children that report on their last stdout line: e2e tests run a
workload script as a real process and read back the pids, fds and timings
it prints as one JSON object."""
import json
import subprocess
import sys
import textwrap


def run_python_json(code, timeout=60):
    """Runs `code` (dedented) in a fresh interpreter; returns the JSON object
    on its last stdout line.  A child that fails fails the test with its
    stderr."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])
