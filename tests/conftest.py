"""Fixtures for the end-to-end tests: a real tracing daemon in a private
control directory, the installed `argus` command, and the native test programs.

Tests that trace need root and a kernel with BTF; without them they skip, and
in CI (CI=true, run as root) a skip for those reasons is turned into a failure
so a broken environment cannot pass silently.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import argus

IN_CI = os.environ.get("CI") == "true"


def _can_trace():
    return os.geteuid() == 0 and os.path.exists("/sys/kernel/btf/vmlinux")


def require_tracing():
    if not _can_trace():
        if IN_CI:
            pytest.fail("CI must run as root on a kernel with BTF")
        pytest.skip("needs root and a kernel with BTF")


def native(name):
    """A shipped native part (argusd, argus-demo-hang, the libraries)."""
    path = os.path.join(argus.NATIVE_DIR, name)
    assert os.path.exists(path), f"{path} missing: build with pip install . (a test program is not shipped: " \
                                 f"support.programs.program builds it)"
    return path


class ArgusRunner:
    """Runs the installed `argus` command with a private control directory."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.env = dict(os.environ, ARGUS_RUN_DIR=str(tmp / "run"), ARGUS_STATE_DIR=str(tmp / "state"))
        self.buffer = str(tmp / "trace.argus")

    def run(self, *args, check=True, timeout=180):
        cmd = [sys.executable, "-m", "argus.cli", *args]
        proc = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"argus {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}{proc.stdout}")
        return proc

    def json(self, *args, **kw):
        proc = self.run(*args, **kw)
        return json.loads(proc.stdout)

    def start(self, size="1G"):
        self.run("start", "--buffer", self.buffer, "--size", size)
        return self

    def status(self):
        return self.json("status", "--json")

    def stop(self):
        self.run("stop", check=False)

    def daemon_pids(self):
        """The argusd processes of this runner (found by their --socket in its
        run directory, so a daemon whose control socket no longer answers, or
        that was started in another namespace, is found too)."""
        run = str(self.tmp / "run") + os.sep
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    argv = [a.decode(errors="replace") for a in f.read().split(b"\0")]
            except (OSError, ValueError):
                continue
            if os.path.basename(argv[0]) == "argusd" and \
                    any(a == "--socket" and b.startswith(run) for a, b in zip(argv, argv[1:])):
                found.append(int(name))
        return found

    def ensure_stopped(self, grace=15.0):
        """`argus stop`, then SIGKILL for a daemon of this runner still there
        after `grace` seconds (a hung or unreachable one)."""
        try:
            self.stop()
        except (subprocess.SubprocessError, OSError):
            pass
        deadline = time.monotonic() + grace
        while self.daemon_pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in self.daemon_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait_drained(self, seconds=1.5):
        # The daemon drains the BPF ring buffer continuously; give it a beat so
        # the last records of the workload are in the file.
        time.sleep(seconds)


@pytest.fixture
def argus_cli(tmp_path):
    runner = ArgusRunner(tmp_path)
    yield runner
    runner.ensure_stopped()     # a daemon that ignores `argus stop` is killed, never left behind


@pytest.fixture
def argus_daemons():
    """A factory of ArgusRunner (its argument: the runner's private
    directory) whose daemons are all stopped at teardown, killed when `argus
    stop` does not end them: a failed or interrupted test leaves none
    running (pytest tears fixtures down on Ctrl-C too)."""
    made = []

    def make(tmp):
        made.append(ArgusRunner(tmp))
        return made[-1]
    yield make
    for r in made:
        r.ensure_stopped()


@pytest.fixture
def tracing(argus_cli):
    require_tracing()
    argus_cli.start()
    return argus_cli


def run_demo(*args, timeout=120):
    """Runs the bundled demo hang; returns (info dict from its first line, exit code)."""
    proc = subprocess.Popen([native("argus-demo-hang"), *args], stdout=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    info = json.loads(first)
    proc.stdout.read()
    rc = proc.wait(timeout=timeout)
    return info, rc


def no_traceback(proc):
    text = proc.stderr + proc.stdout
    assert "Traceback" not in text, text
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got: {proc.stderr!r}"
    return lines[0]
