"""The scenario harness: installs what a scenario needs, runs its real
software, records the hang with a private Argus daemon and scores the
diagnosis against the scenario's ground truth.

A scenario is one module in tests/scenarios/cases/ that defines
  SCENARIO  a `Scenario` (what is installed, the ground truth in words and
            block types, the features it exercises, a known-failure reason)
  setup(ctx)      starts the real software (before tracing starts)
  reproduce(ctx)  drives it into the hang while Argus records; returns a
                  `Truth` with the concrete pids / tids of this run
The harness owns everything else, so a scenario cannot score itself.

Invariants: every process a scenario starts goes through `Context.spawn` and
is terminated by `Context.close` (a scenario that raises leaves nothing
running); Argus runs with ARGUS_RUN_DIR / ARGUS_STATE_DIR under the
scenario's temporary directory, never the system daemon.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVERS = os.path.join(HERE, "drivers")
ANSWERS = os.path.join(HERE, "answers")
PY = sys.executable

LONG_WAIT, LONG_RUNNING, REPEATED_YIELD = "LongWait", "LongRunning", "RepeatedYield"


class ScenarioError(Exception):
    """A scenario could not be run (install failed, software did not start)."""


class Skip(Exception):
    """A capability the scenario needs is missing; the message says which."""


@dataclass
class Scenario:
    name: str
    summary: str
    hung: str                      # the hung thread, in words
    spinning_type: str             # block type of the spinning vertex
    root: str                      # the root cause a correct diagnosis names, in words
    root_type: str                 # its block type
    apt: tuple = ()                # Debian packages: (package, command or file that proves it)
    pip: tuple = ()                # PyPI packages: (package, importable module)
    npm: tuple = ()
    cross_process: bool = False
    gui: bool = False
    features: tuple = ()           # "batching_split", "weak_mutex_edge", "data_flag", "ownership"
    fast: bool = False             # part of the CI subset
    threshold_s: float = 2.0
    by_pid: bool = False           # argus debug gets only --pid: it must find the hung thread itself
    known_failure: Optional[str] = None   # why Argus gets it wrong (a missing capability)


@dataclass
class Truth:
    hung_pid: int
    hung_tid: int
    # acceptable root causes: (pid, tid) with tid None for "any thread of pid"
    roots: list
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------- installs

def _apt_missing(pkgs):
    missing = []
    for pkg, proof in pkgs:
        if proof and (shutil.which(proof) or os.path.exists(proof)):
            continue
        st = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
        if "install ok installed" not in st.stdout:
            missing.append(pkg)
    return missing


_apt_updated = False


def ensure_installed(sc):
    """apt / pip / npm installs of what `sc` declares, only when missing."""
    global _apt_updated
    missing = _apt_missing(sc.apt)
    if missing:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        if not _apt_updated:
            subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
            _apt_updated = True
        r = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                           env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise ScenarioError(f"apt-get install {' '.join(missing)} failed: {r.stderr.strip()[-300:]}")
    for pkg, module in sc.pip:
        if subprocess.run([PY, "-c", f"import {module}"], capture_output=True).returncode != 0:
            r = subprocess.run([PY, "-m", "pip", "install", "-q", pkg], capture_output=True, text=True)
            if r.returncode != 0:
                raise ScenarioError(f"pip install {pkg} failed: {r.stderr.strip()[-300:]}")
    for pkg in sc.npm:
        if not os.path.isdir(os.path.join(HERE, "node_modules", pkg)):
            r = subprocess.run(["npm", "install", "--silent", "--prefix", HERE, pkg], capture_output=True, text=True)
            if r.returncode != 0:
                raise ScenarioError(f"npm install {pkg} failed: {r.stderr.strip()[-300:]}")


# ---------------------------------------------------------------- context

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=20.0, proc=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise ScenarioError(f"{proc.args[0]} exited with {proc.returncode} before listening on {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise ScenarioError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s")


class Context:
    """Per-scenario scratch directory, ports and child processes."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.state = {}

    def path(self, *parts):
        p = os.path.join(self.tmp, *parts)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def spawn(self, args, **kw):
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        # Own process group: close() ends the software and whatever it forked.
        proc = subprocess.Popen(args, start_new_session=True, **kw)
        self.procs.append(proc)
        return proc

    def driver(self, name, *args, **kw):
        """Starts a driver script and reads the JSON line it prints first."""
        proc = self.spawn([PY, os.path.join(DRIVERS, name), *map(str, args)],
                          stdout=subprocess.PIPE, text=True, **kw)
        line = proc.stdout.readline()
        if not line:
            proc.wait(timeout=30)
            raise ScenarioError(f"driver {name} exited ({proc.returncode}) before reporting its pids")
        return proc, json.loads(line)

    def finish(self, proc, timeout=120):
        """Waits for a driver; its remaining output is JSON lines, merged."""
        out = proc.stdout.read() if proc.stdout else ""
        rc = proc.wait(timeout=timeout)
        if rc != 0:
            raise ScenarioError(f"{os.path.basename(str(proc.args[1] if len(proc.args) > 1 else proc.args[0]))} "
                                f"exited with {rc}")
        merged = {}
        for line in out.splitlines():
            if line.startswith("{"):
                merged.update(json.loads(line))
        return merged

    def close(self):
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=10)


def threads_of(pid):
    """{tid: comm} of a live process."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                out[int(tid)] = f.read().strip()
        except OSError:
            pass
    return out


def children_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


# ---------------------------------------------------------------- argus

class Argus:
    """The installed `argus` with a private control directory (as tests/conftest.py)."""

    def __init__(self, tmp):
        self.env = dict(os.environ, ARGUS_RUN_DIR=os.path.join(tmp, "run"),
                        ARGUS_STATE_DIR=os.path.join(tmp, "state"),
                        # sessions and the rules they teach stay private to the run
                        ARGUS_SESSION_DB=os.path.join(tmp, "sessions.db"))
        self.buffer = os.path.join(tmp, "trace.argus")

    def run(self, *args, timeout=600, check=True):
        proc = subprocess.run([PY, "-m", "argus.cli", *map(str, args)], env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise ScenarioError(f"argus {args[0]} failed ({proc.returncode}): "
                                f"{(proc.stderr or proc.stdout).strip()[-400:]}")
        return proc

    def start(self, size="1G", tries=6, flags=("--go-probes",)):   # Go programs' goroutines followed
        # Other work reinstalls the package now and then; a start that fails
        # while that happens is retried, not scored.
        for attempt in range(tries):
            proc = self.run("start", "--buffer", self.buffer, "--size", size, *flags, check=False)
            if proc.returncode == 0:
                try:
                    self.daemon_pid = json.loads(self.run("status", "--json", check=False).stdout).get("pid")
                except ValueError:
                    self.daemon_pid = None
                return
            time.sleep(10)
        raise ScenarioError(f"argus start failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-300:]}")

    daemon_pid = None

    def tracing(self):
        """Is our daemon still tracing? (Something outside may have ended it.)"""
        proc = self.run("status", "--json", check=False)
        try:
            return bool(json.loads(proc.stdout).get("tracing"))
        except ValueError:
            return False

    def stop(self):
        self.run("stop", check=False)
        # A stop that failed (say, a package reinstalled under us) must not
        # leave a system-wide tracer running: end our own daemon by its pid,
        # after checking it is still the one writing our buffer.
        pid, self.daemon_pid = self.daemon_pid, None
        if not pid:
            return
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                ours = self.buffer.encode() in f.read()
        except OSError:
            return
        if ours:
            os.kill(pid, signal.SIGTERM)
            for _ in range(50):
                if not os.path.exists(f"/proc/{pid}"):
                    return
                time.sleep(0.1)
            os.kill(pid, signal.SIGKILL)

    def events(self):
        proc = self.run("status", "--buffer", self.buffer, "--json", check=False)
        try:
            return json.loads(proc.stdout).get("events")
        except ValueError:
            return None

    def help(self, *cmd):
        return self.run(*cmd, "--help", check=False).stdout


def bp_watch_exe():
    """The bp_watch installed beside this interpreter (a venv's own), else on PATH."""
    mine = os.path.join(os.path.dirname(PY), "bp_watch")
    return mine if os.path.exists(mine) else shutil.which("bp_watch")


def bp_watch_available():
    exe = bp_watch_exe()
    if not exe:
        return False
    r = subprocess.run([exe, "--help"], capture_output=True, text=True)
    return r.returncode == 0
