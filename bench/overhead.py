#!/usr/bin/env python3
"""Tracing overhead of Argus, against an untraced baseline and `perf record`.

For each workload, every round runs the workload once untraced, once while
`argus start` traces system-wide, and once while `perf record -a` records the
same tracepoints; the order of the three rotates from round to round, so
slow drifts of a noisy machine hit every configuration alike.  Each traced
result is divided by the untraced result *of the same round*; the report
gives the medians of the throughputs and of those per-round ratios.

    sudo python3 bench/overhead.py                 # 5 rounds, all workloads
    sudo python3 bench/overhead.py --quick         # 1 short round, to try it out
    sudo python3 bench/overhead.py --rounds 9 --json results.json

See bench/README.md for what every column means.  This is a benchmark, not a
test: it asserts nothing about timings.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import resource
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PERF_EVENTS = [
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup_new",
    "raw_syscalls:sys_enter",
    "raw_syscalls:sys_exit",
    "sched:sched_process_fork",
    "sched:sched_process_exec",
    "sched:sched_process_exit",
]

# The floor of what an eBPF tracer costs: two tracepoints, a per-CPU count each.
BPFTRACE_SCRIPT = ("BEGIN { printf(\"live\\n\"); } "
                   "tracepoint:sched:sched_switch { @switch = count(); } "
                   "tracepoint:sched:sched_waking { @waking = count(); }")

ALL_CONFIGS = ["untraced", "argus", "perf", "bpftrace", "argus-nosample", "argus-lean", "argus-auto"]
# argus start --detail per config (docs/linux-tracer.md, "Detail tiers"): `--detail full,lean,auto`
DETAIL_CONFIGS = {"full": "argus", "lean": "argus-lean", "auto": "argus-auto"}
DEFAULT_CONFIGS = ["untraced", "argus", "perf"]
ALL_WORKLOADS = ["pipe", "pipe-1cpu", "redis", "build", "gtk"]
DEFAULT_WORKLOADS = ["pipe", "pipe-1cpu", "redis", "build"]

# Sizes of the workloads: (full, --quick).
SIZES = {
    "pipe_loops": (200000, 20000),
    "redis_requests": (200000, 20000),
    "build_compiles": (50, 10),
    "gtk_frames": (3000, 300),
}

WORKLOAD_TIMEOUT_S = 900


class BenchError(Exception):
    """A failure that ends the benchmark; printed as one line."""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# --------------------------------------------------------------------------
# Process bookkeeping: everything we start is remembered and killed on exit.
# --------------------------------------------------------------------------

class Procs:
    def __init__(self):
        self.live = []

    def popen(self, cmd, **kw):
        kw.setdefault("stdin", subprocess.DEVNULL)
        # Own session: a Ctrl-C in the terminal reaches only us, and we take
        # down each child's whole process group ourselves, in order.
        kw.setdefault("start_new_session", True)
        p = subprocess.Popen(cmd, **kw)
        self.live.append(p)
        return p

    def pids(self):
        return {p.pid for p in self.live}

    def forget(self, p):
        if p in self.live:
            self.live.remove(p)

    def run(self, cmd, timeout=WORKLOAD_TIMEOUT_S, env=None, cwd=None, check=True):
        """Run to completion; returns (rc, stdout, stderr, wall seconds)."""
        t0 = time.monotonic()
        p = self.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, cwd=cwd, text=True, errors="replace")
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(p)
            raise BenchError(f"timed out after {timeout} s: {' '.join(cmd)}")
        wall = time.monotonic() - t0
        self.forget(p)
        if check and p.returncode != 0:
            last = (err.strip() or out.strip()).splitlines()[-1:] or ["(no output)"]
            raise BenchError(f"{' '.join(cmd)} exited {p.returncode}: {last[0]}")
        return p.returncode, out, err, wall

    def kill(self, p, sig=signal.SIGTERM, grace=3.0):
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=5)
        self.forget(p)

    def kill_all(self):
        for p in list(reversed(self.live)):
            try:
                self.kill(p)
            except Exception as e:  # keep cleaning up the others
                log(f"bench: could not stop pid {p.pid}: {e}")


# --------------------------------------------------------------------------
# Tracers
# --------------------------------------------------------------------------

class Untraced:
    name = "untraced"

    def start(self):
        pass

    def stop(self):
        return {}

    def cleanup(self):
        pass


class ArgusTracer:
    """`argus start` / `argus status --json` / `argus stop` in a private control dir."""

    def __init__(self, argus_cmd, tmp, procs, size, name="argus", start_args=()):
        self.name = name
        self.start_args = list(start_args)   # e.g. --no-sample, --sample-hz N
        self.cmd = argus_cmd
        self.procs = procs
        self.size = size
        # each argus configuration (argus, argus-base) has its own buffer and control dir
        self.tmp = tmp if name == "argus" else os.path.join(tmp, name)
        os.makedirs(self.tmp, exist_ok=True)
        self.buffer = os.path.join(self.tmp, "bench.argus")
        self.env = dict(os.environ,
                        ARGUS_RUN_DIR=os.path.join(self.tmp, "run"),
                        ARGUS_STATE_DIR=os.path.join(self.tmp, "state"))
        self.live = False
        self.t_start = None

    def _argus(self, *args, timeout=120, check=True):
        return self.procs.run(self.cmd + list(args), timeout=timeout, env=self.env, check=check)

    def start(self):
        if os.path.exists(self.buffer):
            os.unlink(self.buffer)
        self.live = True  # from here on, cleanup must stop a daemon
        self._argus("start", "--buffer", self.buffer, "--size", self.size, *self.start_args)
        self.daemon_pid, self.cpu0 = None, None
        try:
            self.daemon_pid = json.loads(self._argus("status", "--json")[1]).get("pid")
            self.cpu0 = _proc_cpu_s(self.daemon_pid)
        except (ValueError, BenchError):
            pass
        self.t_start = time.monotonic()

    def stop(self):
        cpu1 = _proc_cpu_s(self.daemon_pid)
        _, out, _, _ = self._argus("status", "--json")
        window = time.monotonic() - self.t_start
        try:
            st = json.loads(out)
        except ValueError:
            raise BenchError(f"`argus status --json` printed no JSON: {out.strip()[:200]}")
        self._argus("stop", timeout=60)
        self.live = False
        events = st.get("events")
        res = {
            "events": events,
            "bytes": st.get("bytes"),
            "bytes_per_event": st.get("bytes_per_event"),
            "lost": st.get("lost"),   # records Argus dropped
            # switches the kernel never reported: its holes, not drops (counted in lost from 3693d81 until split)
            "switches_unreported": st.get("switches_unreported"),
            "overwritten": st.get("overwritten"),
            "events_per_s": st.get("events_per_s"),   # the daemon's own recent rate
            "window_s": round(window, 3),
            "events_per_window_s": (events / window) if events is not None and window > 0 else None,
            "buffer_file_bytes": _disk_usage(self.buffer),
            # argusd's own CPU time (user + system) while the workload ran
            "daemon_cpu_s": (cpu1 - self.cpu0) if cpu1 is not None and self.cpu0 is not None else None,
            # the recording tier (--detail): how long each was in force, and the switches (auto)
            "lean_s": st.get("lean_s"),
            "full_s": st.get("full_s"),
            "detail_switches": st.get("detail_switches"),
        }
        if res["daemon_cpu_s"] is not None and events:
            res["daemon_ns_per_event"] = res["daemon_cpu_s"] * 1e9 / events
        try:
            os.unlink(self.buffer)
        except OSError:
            pass
        return res

    def cleanup(self):
        if not self.live:
            return
        try:
            self._argus("stop", timeout=30, check=False)
        except BenchError:
            pass
        self.live = False
        # If `argus start` was interrupted before the daemon said "ready", the
        # daemon may run without answering stop yet: find the argusd that
        # *we* started by its unique socket path and end it by pid.
        sock = os.path.join(self.tmp, "run")
        for pid in _pids_with_arg(sock):
            try:
                os.kill(pid, signal.SIGTERM)
                log(f"bench: ended leftover argusd pid {pid}")
            except ProcessLookupError:
                pass


class PerfTracer:
    """`perf record -a` of the same tracepoints, enabled through a control fifo
    so that recording is known to be live before the workload starts."""

    name = "perf"

    def __init__(self, perf, tmp, procs, mmap_pages=None):
        self.perf = perf
        self.tmp = tmp
        self.procs = procs
        self.mmap_pages = mmap_pages
        self.data = os.path.join(tmp, "perf.data")
        self.ctl = os.path.join(tmp, "perf.ctl")
        self.ack = os.path.join(tmp, "perf.ack")
        self.p = None
        self.err = None
        self.t_start = None

    def start(self):
        for f in (self.data, self.ctl, self.ack):
            if os.path.exists(f):
                os.unlink(f)
        os.mkfifo(self.ctl, 0o600)
        os.mkfifo(self.ack, 0o600)
        # O_RDWR on a fifo never blocks, so a perf that dies at startup
        # cannot hang us.
        ctl_fd = os.open(self.ctl, os.O_RDWR)
        ack_fd = os.open(self.ack, os.O_RDWR | os.O_NONBLOCK)
        self.err = tempfile.TemporaryFile(dir=self.tmp)
        cmd = [self.perf, "record", "-a", "-e", ",".join(PERF_EVENTS), "-o", self.data,
               "-D", "-1", "--control", f"fifo:{self.ctl},{self.ack}"]
        if self.mmap_pages:
            cmd += ["-m", str(self.mmap_pages)]
        try:
            self.p = self.procs.popen(cmd, stdout=subprocess.DEVNULL, stderr=self.err)
            os.write(ctl_fd, b"enable\n")
            deadline = time.monotonic() + 60
            got = b""
            while b"ack" not in got:
                if self.p.poll() is not None:
                    raise BenchError(f"perf record exited {self.p.returncode}: {self._stderr_tail()}")
                if time.monotonic() > deadline:
                    raise BenchError("perf record did not acknowledge 'enable' within 60 s")
                r, _, _ = select.select([ack_fd], [], [], 0.2)
                if r:
                    try:
                        got += os.read(ack_fd, 64)
                    except BlockingIOError:
                        pass
        finally:
            os.close(ctl_fd)
            os.close(ack_fd)
        self.t_start = time.monotonic()

    def _stderr_tail(self):
        self.err.seek(0)
        text = self.err.read().decode(errors="replace").strip()
        return text.splitlines()[-1] if text else "(no output)"

    def stop(self):
        window = time.monotonic() - self.t_start
        self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(timeout=300)
        except subprocess.TimeoutExpired:
            raise BenchError("perf record did not finish writing within 300 s of SIGINT")
        self.procs.forget(self.p)
        self.err.seek(0)
        text = self.err.read().decode(errors="replace")
        self.err.close()
        m = re.search(r"Captured and wrote ([\d.]+) MB .*?\((\d+) samples\)", text)
        samples = int(m.group(2)) if m else None
        size = os.path.getsize(self.data) if os.path.exists(self.data) else None
        counts = perf_data_counts(self.data) if size else {}
        if samples is None:
            samples = counts.get("samples")
        lost = counts.get("lost")
        res = {
            "samples": samples,
            "data_bytes": size,
            "bytes_per_sample": (size / samples) if size and samples else None,
            "lost": lost,
            "lost_records": counts.get("lost_records"),
            "window_s": round(window, 3),
            "samples_per_s": (samples / window) if samples is not None and window > 0 else None,
        }
        for f in (self.data, self.ctl, self.ack):
            try:
                os.unlink(f)
            except OSError:
                pass
        return res

    def cleanup(self):
        if self.p is not None and self.p.poll() is None:
            self.procs.kill(self.p, sig=signal.SIGINT, grace=10)


class BpftraceTracer:
    """A minimal bpftrace script counting sched_switch and sched_waking per
    CPU: what attaching any eBPF program to the two busiest tracepoints costs.
    Live once its BEGIN probe has printed (after every probe is attached)."""

    name = "bpftrace"

    def __init__(self, bpftrace, tmp, procs):
        self.bpftrace = bpftrace
        self.tmp = tmp
        self.procs = procs
        self.p = None
        self.out = None
        self.t_start = None

    def start(self):
        # bpftrace finds tracepoints through tracefs (perf mounts it on its own).
        if not os.path.isdir("/sys/kernel/tracing/events"):
            subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], capture_output=True)
            log("bench: mounted tracefs on /sys/kernel/tracing for bpftrace")
        self.out = tempfile.TemporaryFile(dir=self.tmp)
        self.p = self.procs.popen([self.bpftrace, "-e", BPFTRACE_SCRIPT], stdout=self.out,
                                  stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            self.out.seek(0)
            if re.search(rb"^live$", self.out.read(), re.M):
                break
            if self.p.poll() is not None:
                raise BenchError(f"bpftrace exited {self.p.returncode}: {self._tail()}")
            if time.monotonic() > deadline:
                raise BenchError("bpftrace did not attach within 60 s")
            time.sleep(0.05)
        self.t_start = time.monotonic()

    def _tail(self):
        self.out.seek(0)
        text = self.out.read().decode(errors="replace").strip()
        return text.splitlines()[-1] if text else "(no output)"

    def stop(self):
        window = time.monotonic() - self.t_start
        self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # Seen once here (2026-11-24): bpftrace hung after SIGINT.  The
            # workload's throughput was measured while it was attached, so
            # the run keeps its ratio and only loses bpftrace's counts.
            self.p.kill()
            self.p.wait(timeout=30)
            self.procs.forget(self.p)
            self.out.close()
            log("bench: bpftrace did not exit within 60 s of SIGINT; killed, its counts are lost for this run")
            return {"samples": None, "window_s": round(window, 3), "samples_per_s": None,
                    "note": "killed: no exit within 60 s of SIGINT"}
        self.procs.forget(self.p)
        self.out.seek(0)
        text = self.out.read().decode(errors="replace")
        self.out.close()
        hits = sum(int(n) for n in re.findall(r"^@\w+: (\d+)", text, re.M))
        return {"samples": hits, "window_s": round(window, 3),
                "samples_per_s": hits / window if window > 0 else None}

    def cleanup(self):
        if self.p is not None and self.p.poll() is None:
            self.procs.kill(self.p, sig=signal.SIGINT, grace=10)


PERF_RECORD_LOST = 2
PERF_RECORD_SAMPLE = 9
PERF_RECORD_LOST_SAMPLES = 13


def perf_data_counts(path):
    """Samples and lost samples in a perf.data file, from its record headers.

    Walks the data section (struct perf_event_header {u32 type; u16 misc;
    u16 size}).  The samples the kernel dropped because perf's mmap ring was
    full are in PERF_RECORD_LOST records (written as it happens); perf >= 6.0
    also writes, at the end, one PERF_RECORD_LOST_SAMPLES per event with the
    counter's own total of the same drops: the two sums agree, so the larger
    one is the count (not their sum).  Much faster than `perf script | wc -l`
    or `perf report -D`; `perf report --stats` only counts LOST *records*.
    """
    import mmap
    import struct
    with open(path, "rb") as f:
        head = f.read(104)
        if len(head) < 104 or head[:8] != b"PERFILE2":
            return {}
        data_off, data_size = struct.unpack_from("<QQ", head, 40)
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            end = min(data_off + data_size, len(mm))
            pos = data_off
            samples = lost = lost_samples = lost_records = 0
            unpack = struct.Struct("<IHH").unpack_from
            while pos + 8 <= end:
                typ, _misc, size = unpack(mm, pos)
                if size < 8:
                    break
                if typ == PERF_RECORD_SAMPLE:
                    samples += 1
                elif typ == PERF_RECORD_LOST:
                    lost += struct.unpack_from("<Q", mm, pos + 16)[0]
                    lost_records += 1
                elif typ == PERF_RECORD_LOST_SAMPLES:
                    lost_samples += struct.unpack_from("<Q", mm, pos + 8)[0]
                pos += size
    return {"samples": samples, "lost": max(lost, lost_samples), "lost_records": lost_records}


def foreign_tracers(tmp, own_pids):
    """System-wide tracers that we did not start: other argusd daemons (tests,
    a user's daemon), `perf record -a`, `perf trace`, bpftrace, trace-cmd.
    Their probes fire for every configuration, untraced included, so they
    both slow the baseline and dilute the ratios."""
    found = []
    me = os.getpid()
    for d in glob.glob("/proc/[0-9]*"):
        pid = int(os.path.basename(d))
        if pid == me or pid in own_pids:
            continue
        try:
            with open(os.path.join(d, "cmdline"), "rb") as f:
                raw = f.read()
        except OSError:
            continue
        if not raw or tmp.encode() in raw:
            continue
        args = [a.decode(errors="replace") for a in raw.rstrip(b"\0").split(b"\0")]
        exe = os.path.basename(args[0])
        sub = args[1] if len(args) > 1 else ""
        if (exe.startswith("argusd") or exe in ("bpftrace", "trace-cmd")
                or (exe.startswith("perf") and sub in ("trace", "sched", "lock", "kwork"))
                or (exe.startswith("perf") and sub in ("record", "top")
                    and any(a in ("-a", "--all-cpus") or (a.startswith("-") and not a.startswith("--")
                                                          and "a" in a[1:] and a[1:].isalpha())
                            for a in args[2:]))):
            found.append(f"{pid} {' '.join(args)[:120]}")
    return found


def _loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _proc_cpu_s(pid):
    """User + system CPU seconds of a process, from /proc/PID/stat."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _children_cpu_s():
    """CPU seconds (user + system) of our waited-for children so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


# Per CPU second of the workload's own processes (`ops/cpu-s` etc.): the
# tracing cost charged to the traced tasks (the hooks run in their context),
# without the time they waited for a CPU.  On a loaded shared machine the
# wall-clock rates mostly measure the other load; these do not.

def _disk_usage(path):
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return None


def _pids_with_arg(fragment):
    pids = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(os.path.join(d, "cmdline"), "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if any(fragment.encode() in a for a in args):
            pid = int(os.path.basename(d))
            if pid != os.getpid():
                pids.append(pid)
    return pids


# --------------------------------------------------------------------------
# Workloads: run() returns {metric: value}, every metric higher-is-better.
# --------------------------------------------------------------------------

class PipeWorkload:
    """perf bench sched pipe: two processes ping-pong a byte; pure wakeups."""

    def __init__(self, name, perf, procs, loops, cpus=None):
        self.name = name
        self.perf = perf
        self.procs = procs
        self.loops = loops
        self.cpus = cpus
        self.metrics = ["ops/s", "ops/cpu-s"]
        pin = f"taskset -c {cpus} " if cpus else ""
        self.describe = f"{pin}perf bench sched pipe -l {loops}"

    def setup(self):
        pass

    def run(self):
        cmd = [self.perf, "bench", "sched", "pipe", "-l", str(self.loops)]
        if self.cpus:
            cmd = ["taskset", "-c", self.cpus] + cmd
        cpu0 = _children_cpu_s()
        _, out, _, wall = self.procs.run(cmd)
        cpu = _children_cpu_s() - cpu0
        m = re.search(r"([\d.]+)\s+ops/sec", out)
        if m:
            ops = float(m.group(1))
        else:
            m = re.search(r"([\d.]+)\s+usecs/op", out)
            if not m:
                raise BenchError(f"cannot parse perf bench output: {out.strip()[-200:]}")
            ops = 1e6 / float(m.group(1))
        return {"ops/s": ops, "ops/cpu-s": self.loops / cpu if cpu > 0 else None}, wall

    def teardown(self):
        pass


class RedisWorkload:
    """redis-server on 127.0.0.1 driven by redis-benchmark (SET and GET)."""

    name = "redis"

    def __init__(self, procs, tmp, requests):
        self.procs = procs
        self.tmp = tmp
        self.requests = requests
        self.metrics = ["SET req/s", "GET req/s", "req/cpu-s"]
        self.server = None
        self.port = None
        self.describe = f"redis-benchmark -q -n {requests} -t get,set -P 1 -c 20"

    def setup(self):
        for exe in ("redis-server", "redis-benchmark"):
            if not shutil.which(exe):
                raise BenchError(f"{exe} not found: apt-get install -y redis-server redis-tools")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        d = os.path.join(self.tmp, "redis")
        os.makedirs(d, exist_ok=True)
        self.server = self.procs.popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
             "--save", "", "--appendonly", "no", "--daemonize", "no",
             "--dir", d, "--logfile", os.path.join(d, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            if self.server.poll() is not None:
                raise BenchError(f"redis-server exited {self.server.returncode} (see {d}/redis.log)")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as c:
                    c.sendall(b"PING\r\n")
                    if c.recv(64).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"redis-server on port {self.port} did not answer PING")
            time.sleep(0.1)
        self.describe += f" (port {self.port})"

    def run(self):
        cpu0 = _children_cpu_s() + (_proc_cpu_s(self.server.pid) or 0.0)
        _, out, err, wall = self.procs.run(
            ["redis-benchmark", "-h", "127.0.0.1", "-p", str(self.port), "-q",
             "-n", str(self.requests), "-t", "get,set", "-P", "1", "-c", "20"])
        res = {}
        for line in re.split(r"[\r\n]+", out):
            m = re.match(r"\s*(SET|GET):\s*([\d.]+)\s+requests per second", line)
            if m:
                res[f"{m.group(1)} req/s"] = float(m.group(2))
        cpu = _children_cpu_s() + (_proc_cpu_s(self.server.pid) or 0.0) - cpu0
        if set(res) != set(self.metrics) - {"req/cpu-s"}:
            raise BenchError(f"cannot parse redis-benchmark output: {out.strip()[-200:]!r}")
        # client and server together, SET and GET
        res["req/cpu-s"] = 2 * self.requests / cpu if cpu > 0 else None
        return res, wall

    def teardown(self):
        if self.server is not None:
            self.procs.kill(self.server)
            self.server = None


BUILD_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; int key; char name[32]; };

static struct node *push(struct node *head, int key) {
    struct node *n = malloc(sizeof *n);
    if (!n) abort();
    n->next = head; n->key = key;
    snprintf(n->name, sizeof n->name, "node-%d", key);
    return n;
}

static int cmp(const void *a, const void *b) {
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

int work(int n) {
    struct node *head = NULL;
    int *keys = calloc((size_t)n, sizeof *keys), sum = 0;
    for (int i = 0; i < n; i++) { head = push(head, (i * 7919) % n); keys[i] = head->key; }
    qsort(keys, (size_t)n, sizeof *keys, cmp);
    while (head) { struct node *next = head->next; sum += (int)strlen(head->name); free(head); head = next; }
    for (int i = 0; i < n; i++) sum += keys[i];
    free(keys);
    return sum;
}
"""


class BuildWorkload:
    """gcc -O2 -c on a small C file, N times in a row: fork/exec/exit heavy."""

    name = "build"

    def __init__(self, procs, tmp, compiles):
        self.procs = procs
        self.tmp = tmp
        self.compiles = compiles
        self.metrics = ["compiles/s", "compiles/cpu-s"]
        self.dir = os.path.join(tmp, "build")
        self.describe = f"gcc -O2 -c small.c, {compiles} times"

    def setup(self):
        self.cc = shutil.which("gcc") or shutil.which("cc")
        if not self.cc:
            raise BenchError("gcc not found: apt-get install -y gcc")
        os.makedirs(self.dir, exist_ok=True)
        with open(os.path.join(self.dir, "small.c"), "w") as f:
            f.write(BUILD_SOURCE)

    def run(self):
        src = os.path.join(self.dir, "small.c")
        obj = os.path.join(self.dir, "small.o")
        t0, cpu0 = time.monotonic(), _children_cpu_s()
        for _ in range(self.compiles):
            self.procs.run([self.cc, "-O2", "-c", src, "-o", obj])
        wall = time.monotonic() - t0
        cpu = _children_cpu_s() - cpu0
        return {"compiles/s": self.compiles / wall, "compiles/cpu-s": self.compiles / cpu if cpu > 0 else None}, wall

    def teardown(self):
        pass


class GtkWorkload:
    """A GTK 3 window redrawing under a private Xvfb (bench/gtk_redraw.py):
    an interactive desktop application's X11 round trips, main-loop polls
    and drawing."""

    name = "gtk"
    PY = "/usr/bin/python3"   # Debian's python3-gi is built for the system interpreter

    def __init__(self, procs, tmp, frames):
        self.procs = procs
        self.tmp = tmp
        self.frames = frames
        self.metrics = ["frames/s"]
        self.xvfb = None
        self.display = None
        self.describe = f"bench/gtk_redraw.py {frames} under Xvfb"

    def setup(self):
        if not shutil.which("Xvfb"):
            raise BenchError("Xvfb not found: apt-get install -y xvfb")
        r = subprocess.run([self.PY, "-c", "import gi; gi.require_version('Gtk', '3.0'); "
                            "from gi.repository import Gtk; import cairo"], capture_output=True)
        if r.returncode:
            raise BenchError("GTK 3 for Python not found: apt-get install -y python3-gi python3-gi-cairo "
                             "gir1.2-gtk-3.0")
        for n in range(150, 200):
            if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
                break
        else:
            raise BenchError("no free X display number")
        self.xvfb = self.procs.popen(["Xvfb", f":{n}", "-screen", "0", "800x600x24", "-nolisten", "tcp"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            if self.xvfb.poll() is not None or time.monotonic() > deadline:
                raise BenchError("Xvfb did not start")
            time.sleep(0.05)
        self.display = f":{n}"
        self.describe += f" {self.display}"

    def run(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gtk_redraw.py")
        _, out, _, wall = self.procs.run([self.PY, script, str(self.frames)],
                                         env=dict(os.environ, DISPLAY=self.display))
        m = re.search(r"frames/s ([\d.]+)", out)
        if not m:
            raise BenchError(f"cannot parse gtk_redraw.py output: {out.strip()[-200:]}")
        return {"frames/s": float(m.group(1))}, wall

    def teardown(self):
        if self.xvfb is not None:
            self.procs.kill(self.xvfb)
            self.xvfb = None


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

def find_perf(explicit=None):
    cands = [explicit] if explicit else []
    cands += [shutil.which("perf")] + sorted(glob.glob("/usr/bin/perf_*"), reverse=True)
    for c in cands:
        if not c:
            continue
        try:
            r = subprocess.run([c, "--version"], capture_output=True, text=True, timeout=20)
        except OSError:
            continue
        if r.returncode == 0 and r.stdout.startswith("perf version"):
            return c, r.stdout.strip()
    return None, None


def find_argus(explicit=None):
    if explicit:
        return explicit.split()
    exe = shutil.which("argus")
    return [exe] if exe else None


def git_rev():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        r = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip() or None
    except OSError:
        return None


def start_tracer(tr, attempts=3, pause_s=10):
    """Start a tracer; retry a failed start (a shared machine's argus may be
    reinstalled under us).  Returns the number of failed attempts."""
    for i in range(attempts):
        try:
            tr.start()
            return i
        except BenchError as e:
            tr.cleanup()
            if i == attempts - 1:
                raise
            log(f"bench:   {tr.name} did not start ({e}); retrying in {pause_s} s")
            time.sleep(pause_s)


def run_bench(args, procs, tmp, report):
    perf, perf_version = find_perf(args.perf)
    if not perf:
        raise BenchError("perf not found (perf, /usr/bin/perf_*): apt-get install -y linux-perf")
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in configs:
        if c not in ALL_CONFIGS:
            raise BenchError(f"unknown config {c!r}: choose from {','.join(ALL_CONFIGS)}")
    if "untraced" not in configs:
        configs.insert(0, "untraced")
    notes = []
    argus_cmd = find_argus(args.argus)
    for c in ("argus-nosample", "argus-lean", "argus-auto"):
        if not argus_cmd and c in configs:
            configs.remove(c)
    if "argus" in configs and not argus_cmd:
        if args.configs_given:
            raise BenchError("argus not found on PATH: `cd /work/main && pip install .` (or --argus CMD)")
        notes.append("argus is not installed: the argus configuration was skipped")
        configs.remove("argus")
    if os.path.exists("/run/argus/argusd.sock"):
        notes.append("a system argusd (/run/argus) was running during the benchmark: it adds "
                     "tracing overhead to every configuration")

    tracers = {"untraced": Untraced()}
    sample = ["--sample-hz", str(args.sample_hz)] if args.sample_hz is not None else []
    if "argus" in configs:
        tracers["argus"] = ArgusTracer(argus_cmd, tmp, procs, args.argus_size, start_args=sample)
    if "argus-nosample" in configs:
        # the same build without CPU samples: the sampler's own cost, side by side
        tracers["argus-nosample"] = ArgusTracer(argus_cmd, tmp, procs, args.argus_size, "argus-nosample",
                                                start_args=["--no-sample"])
    for tier in ("lean", "auto"):
        name = DETAIL_CONFIGS[tier]
        if name in configs:
            # the same build in another recording tier, side by side
            tracers[name] = ArgusTracer(argus_cmd, tmp, procs, args.argus_size, name,
                                        start_args=sample + ["--detail", tier])
    if args.argus_base:
        # a second build (e.g. main's, in its own venv), interleaved with the rest: before/after side by side
        configs.insert(configs.index("argus") if "argus" in configs else len(configs), "argus-base")
        base_args = ["--detail", args.base_detail] if args.base_detail else []
        tracers["argus-base"] = ArgusTracer(args.argus_base.split(), tmp, procs, args.argus_size, "argus-base",
                                            start_args=sample + base_args)
    if "perf" in configs:
        tracers["perf"] = PerfTracer(perf, tmp, procs, args.perf_mmap)
    if "bpftrace" in configs:
        bpftrace = shutil.which("bpftrace")
        if not bpftrace:
            raise BenchError("bpftrace not found: apt-get install -y bpftrace")
        tracers["bpftrace"] = BpftraceTracer(bpftrace, tmp, procs)
    _TRACERS.extend(tracers.values())  # for _cleanup on error or Ctrl-C

    q = 1 if args.quick else 0
    loops = args.pipe_loops or SIZES["pipe_loops"][q]
    builders = {
        "pipe": lambda: PipeWorkload("pipe", perf, procs, loops),
        "pipe-1cpu": lambda: PipeWorkload("pipe-1cpu", perf, procs, loops, cpus="0"),
        "redis": lambda: RedisWorkload(procs, tmp, args.redis_requests or SIZES["redis_requests"][q]),
        "build": lambda: BuildWorkload(procs, tmp, args.build_compiles or SIZES["build_compiles"][q]),
        "gtk": lambda: GtkWorkload(procs, tmp, args.gtk_frames or SIZES["gtk_frames"][q]),
    }
    wnames = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in wnames:
        if w not in builders:
            raise BenchError(f"unknown workload {w!r}: choose from {','.join(ALL_WORKLOADS)}")

    meta = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host_kernel": platform.release(),
        "cpus": os.cpu_count(),
        "perf": perf_version,
        "perf_events": PERF_EVENTS,
        "argus_cmd": argus_cmd,
        "argus_base_cmd": args.argus_base.split() if args.argus_base else None,
        "argus_buffer_size": args.argus_size,
        "git_rev": git_rev(),
        "rounds": args.rounds,
        "warmup": args.warmup,
        "quick": args.quick,
        "configs": configs,
        "notes": notes,
    }
    for n in notes:
        log(f"bench: note: {n}")
    log(f"bench: {perf_version}; kernel {meta['host_kernel']}; {meta['cpus']} CPUs; "
        f"{args.rounds} round(s); configs {', '.join(configs)}")

    results = report["results"]
    report["meta"] = meta
    for wname in wnames:
        wl = builders[wname]()
        wl.setup()
        try:
            log(f"bench: workload {wname}: {wl.describe}")
            for i in range(args.warmup):
                vals, wall = wl.run()
                log(f"bench:   warmup {i + 1}: " + _fmt_vals(vals) + f" ({wall:.1f} s)")
            runs = []
            for r in range(args.rounds):
                wait_quiet(tmp, procs, args.quiet_wait)
                k = r % len(configs)
                order = configs[k:] + configs[:k]
                for cname in order:
                    tr = tracers[cname]
                    foreign = foreign_tracers(tmp, procs.pids())
                    retries = start_tracer(tr)
                    try:
                        vals, wall = wl.run()
                    except BaseException:
                        tr.cleanup()
                        raise
                    foreign = sorted(set(foreign) | set(foreign_tracers(tmp, procs.pids())))
                    stats = tr.stop()
                    runs.append({"round": r + 1, "config": cname, "values": vals,
                                 "wall_s": round(wall, 3), "tracer": stats or {},
                                 "foreign_tracers": foreign, "loadavg_1m": _loadavg(),
                                 "start_retries": retries})
                    if foreign:
                        log(f"bench:   (a foreign tracer ran during this run: {foreign[0]}"
                            + (f" and {len(foreign) - 1} more" if len(foreign) > 1 else "") + ")")
                    extra = ""
                    if cname.startswith("argus"):
                        extra = (f"  events {_n(stats.get('events'))}, lost {_n(stats.get('lost'))}, "
                                 f"unreported {_n(stats.get('switches_unreported'))}, "
                                 f"{_f(stats.get('bytes_per_event'), 1)} B/event")
                    elif cname == "perf":
                        extra = (f"  samples {_n(stats.get('samples'))}, lost {_n(stats.get('lost'))}, "
                                 f"{_mb(stats.get('data_bytes'))}")
                    log(f"bench:   round {r + 1} {cname:<10} " + _fmt_vals(vals) + f" ({wall:.1f} s){extra}")
        finally:
            wl.teardown()
        dirty = sorted({run["round"] for run in runs if run["foreign_tracers"]})
        used = runs
        if args.clean_only and dirty:
            used = [run for run in runs if run["round"] not in dirty]
            if not used:
                log(f"bench: note: every round of {wname} had a foreign tracer; summarizing all of them")
                used = runs
        results.append({"workload": wname, "command": wl.describe, "metrics": wl.metrics,
                        "runs": runs, "rounds_with_foreign_tracers": dirty,
                        "rounds_summarized": sorted({run["round"] for run in used}),
                        "summary": summarize(used, wl.metrics, configs)})
    report["complete"] = True
    return report


def wait_quiet(tmp, procs, limit_s):
    """Before a round: wait up to limit_s for foreign system-wide tracers to end."""
    found = foreign_tracers(tmp, procs.pids())
    if not found or limit_s <= 0:
        return
    log(f"bench:   waiting up to {limit_s:.0f} s for a foreign tracer to end: {found[0]}")
    deadline = time.monotonic() + limit_s
    while found and time.monotonic() < deadline:
        time.sleep(1)
        found = foreign_tracers(tmp, procs.pids())
    if found:
        log("bench:   still there; going on (the round is flagged)")


def summarize(runs, metrics, configs):
    """Per metric and config: median value; per traced config: per-round ratios."""
    out = {}
    for m in metrics:
        by = {c: {} for c in configs}
        for run in runs:
            by[run["config"]][run["round"]] = run["values"].get(m)
        base = by["untraced"]
        ms = {}
        for c in configs:
            vals = [by[c][r] for r in sorted(by[c])]
            ratios = [by[c][r] / base[r] for r in sorted(by[c]) if base.get(r) and by[c][r] is not None]
            ms[c] = {
                "values": vals,
                "median": median(vals),
                "ratios": [round(x, 4) for x in ratios],
                "ratio_median": median(ratios),
                "ratio_min": min(ratios) if ratios else None,
                "ratio_max": max(ratios) if ratios else None,
                "ratio_of_medians": (median(vals) / median(base.values())) if vals and base else None,
            }
        out[m] = ms
    tracer = {}
    for c in configs:
        if c == "untraced":
            continue
        rs = [run["tracer"] for run in runs if run["config"] == c]
        keys = sorted({k for r in rs for k in r})
        tracer[c] = {k: median([r.get(k) for r in rs if isinstance(r.get(k), (int, float))]) for k in keys}
    out["_tracer"] = tracer
    return out


# ---- formatting ----------------------------------------------------------

def _n(x):
    return "-" if x is None else f"{x:,.0f}"


def _f(x, d=2):
    return "-" if x is None else f"{x:.{d}f}"


def _mb(x):
    return "-" if x is None else f"{x / 1e6:,.1f} MB"


def _fmt_vals(vals):
    return ", ".join(f"{k} {v:,.1f}" if v is not None else f"{k} -" for k, v in vals.items())


def render_table(report):
    cols = ["workload", "metric", "config", "median", "ratio", "ratio range",
            "events", "events/s", "B/event", "lost", "unreported", "trace size"]
    rows = []
    for res in report["results"]:
        s = res["summary"]
        first = True
        for m in res["metrics"]:
            for c in report["meta"]["configs"]:
                ms = s[m][c]
                row = [res["workload"] if first else "", m if c == "untraced" else "", c,
                       _n(ms["median"])]
                if c == "untraced":
                    row += ["1.00", "", "", "", "", "", "", ""]
                else:
                    row += [_f(ms["ratio_median"]),
                            f"{_f(ms['ratio_min'])}-{_f(ms['ratio_max'])}"]
                    t = s["_tracer"].get(c, {})
                    if m == res["metrics"][0]:
                        if c.startswith("argus"):
                            row += [_n(t.get("events")), _n(t.get("events_per_window_s")),
                                    _f(t.get("bytes_per_event"), 1), _n(t.get("lost")),
                                    _n(t.get("switches_unreported")), _mb(t.get("bytes"))]
                        else:
                            row += [_n(t.get("samples")), _n(t.get("samples_per_s")),
                                    _f(t.get("bytes_per_sample"), 1), _n(t.get("lost")), "-",
                                    _mb(t.get("data_bytes"))]
                    else:
                        row += ["\"", "\"", "\"", "\"", "\"", "\""]
                rows.append(row)
                first = False
    widths = [max(len(str(r[i])) for r in rows + [cols]) for i in range(len(cols))]
    right = {3, 4, 5, 6, 7, 8, 9, 10, 11}

    def fmt(r):
        return "  ".join(str(v).rjust(widths[i]) if i in right else str(v).ljust(widths[i])
                         for i, v in enumerate(r)).rstrip()

    lines = [fmt(cols), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    return "\n".join(lines)


def render_markdown(report):
    """The same table as Markdown, for docs/benchmarks.md (--markdown)."""
    lines = ["| workload | metric | config | median | ratio (range) | events | events/s | bytes/event | lost "
             "| unreported | trace size | daemon CPU |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for res in report["results"]:
        s = res["summary"]
        for m in res["metrics"]:
            for c in report["meta"]["configs"]:
                ms = s[m][c]
                if c == "untraced":
                    lines.append(f"| {res['workload']} | {m} | untraced | {_n(ms['median'])} | 1.00 | | | | | | | |")
                    continue
                t = s["_tracer"].get(c, {})
                rr = f"{_f(ms['ratio_median'])} ({_f(ms['ratio_min'])}–{_f(ms['ratio_max'])})"
                if m != res["metrics"][0]:
                    tail = "″ | ″ | ″ | ″ | ″ | ″ | ″"
                elif c.startswith("argus"):
                    cpu = t.get("daemon_cpu_s")
                    share = f"{100 * cpu / t['window_s']:.1f}%" if cpu is not None and t.get("window_s") else "-"
                    tail = (f"{_n(t.get('events'))} | {_n(t.get('events_per_window_s'))} | "
                            f"{_f(t.get('bytes_per_event'), 1)} | {_n(t.get('lost'))} | "
                            f"{_n(t.get('switches_unreported'))} | {_mb(t.get('bytes'))} | {share}")
                elif c == "bpftrace":
                    tail = f"{_n(t.get('samples'))} (counted) | {_n(t.get('samples_per_s'))} | | | | |"
                else:
                    tail = (f"{_n(t.get('samples'))} | {_n(t.get('samples_per_s'))} | "
                            f"{_f(t.get('bytes_per_sample'), 1)} | {_n(t.get('lost'))} | | "
                            f"{_mb(t.get('data_bytes'))} | ")
                lines.append(f"| {res['workload']} | {m} | {c} | {_n(ms['median'])} | {rr} | {tail} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Tracing overhead of Argus vs. untraced vs. perf record, interleaved rounds.")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5; 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help="1 round with small workloads, to try it out")
    ap.add_argument("--warmup", type=int, default=None,
                    help="untraced warm-up runs per workload, discarded (default 1)")
    ap.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                    help=f"comma-separated subset of {','.join(ALL_WORKLOADS)} (default {','.join(DEFAULT_WORKLOADS)})")
    ap.add_argument("--configs", default=None,
                    help=f"comma-separated subset of {','.join(ALL_CONFIGS)} "
                         f"(default {','.join(DEFAULT_CONFIGS)}; untraced always runs)")
    ap.add_argument("--detail", default=None, metavar="TIERS",
                    help="argus recording tiers to measure side by side, comma-separated of full, lean, auto "
                         "(configs argus, argus-lean, argus-auto; added to --configs)")
    ap.add_argument("--sample-hz", type=int, default=None, metavar="HZ",
                    help="argus start --sample-hz for the argus config (default: argus's own, 99)")
    ap.add_argument("--json", metavar="FILE", help="write every run and the summary as JSON")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    ap.add_argument("--argus", metavar="CMD", help="argus command (default: argus on PATH)")
    ap.add_argument("--argus-base", metavar="CMD",
                    help="a second argus command measured as config argus-base in the same interleaved rounds "
                         "(e.g. the build before a change, from another venv)")
    ap.add_argument("--base-detail", choices=("full", "lean", "auto"), default=None,
                    help="argus start --detail for the argus-base config (default: the base build's own; "
                         "e.g. the empty-programs build in lean, for the lean tier's floor)")
    ap.add_argument("--argus-size", default="1G", help="argus ring-buffer size (default 1G)")
    ap.add_argument("--perf", metavar="PATH", help="perf binary (default: perf, /usr/bin/perf_*)")
    ap.add_argument("--perf-mmap", metavar="PAGES", help="perf record -m (default: perf's own)")
    ap.add_argument("--pipe-loops", type=int, help="perf bench sched pipe -l (default 200000)")
    ap.add_argument("--redis-requests", type=int, help="redis-benchmark -n (default 200000)")
    ap.add_argument("--build-compiles", type=int, help="compiles per build run (default 50)")
    ap.add_argument("--gtk-frames", type=int, help="frames per gtk run (default 3000)")
    ap.add_argument("--quiet-wait", type=float, default=None, metavar="S",
                    help="before each round, wait up to S s for foreign system-wide tracers "
                         "(other argusd, perf record -a, bpftrace) to end (default 120; 10 with --quick)")
    ap.add_argument("--clean-only", action="store_true",
                    help="summarize only the rounds in which no foreign tracer ran (when there are any)")
    ap.add_argument("--keep-tmp", action="store_true", help="keep the temporary directory")
    args = ap.parse_args(argv)
    args.configs_given = args.configs is not None or args.detail is not None
    if args.configs is None:
        args.configs = ",".join(DEFAULT_CONFIGS if args.detail is None else ["untraced", "perf"])
    if args.detail is not None:
        tiers = [t.strip() for t in args.detail.split(",") if t.strip()]
        bad = [t for t in tiers if t not in DETAIL_CONFIGS]
        if bad or not tiers:
            ap.error(f"bad --detail {args.detail!r}: give full, lean and/or auto, comma-separated")
        have = args.configs.split(",")
        args.configs = ",".join(have + [DETAIL_CONFIGS[t] for t in tiers if DETAIL_CONFIGS[t] not in have])
    if args.rounds is None:
        args.rounds = 1 if args.quick else 5
    if args.warmup is None:
        args.warmup = 1
    if args.quiet_wait is None:
        args.quiet_wait = 10 if args.quick else 120
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")

    if os.geteuid() != 0:
        print("bench: needs root (system-wide tracing with eBPF and perf): run with sudo", file=sys.stderr)
        return 1

    procs = Procs()
    tmp = tempfile.mkdtemp(prefix="argus-bench-")

    def on_term(signum, frame):
        raise KeyboardInterrupt

    # Ctrl-C interrupts even when started with SIGINT ignored (e.g. `cmd &`).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    old_term = signal.signal(signal.SIGTERM, on_term)
    old_hup = signal.signal(signal.SIGHUP, on_term)
    report = {"meta": None, "results": [], "complete": False}
    rc = 0
    try:
        run_bench(args, procs, tmp, report)
    except KeyboardInterrupt:
        log("bench: interrupted; cleaning up")
        rc = 130
    except BenchError as e:
        log(f"bench: {e}")
        rc = 1
    finally:
        # No second Ctrl-C may leave a tracer running half-stopped.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _cleanup(procs, tmp, args)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGHUP, old_hup)
        if not args.keep_tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            log(f"bench: kept {tmp}")
    if report["meta"] is None or not report["results"]:
        return rc
    if not report["complete"]:
        log("bench: the table below has only the workloads that finished")
    print()
    m = report["meta"]
    print(f"Argus tracing overhead — {m['date']}, kernel {m['host_kernel']}, {m['cpus']} CPUs, "
          f"{m['perf']}, {m['rounds']} round(s), git {m['git_rev']}")
    for res in report["results"]:
        dirty = res["rounds_with_foreign_tracers"]
        extra = ""
        if dirty:
            extra = (f"  [a foreign tracer ran in round(s) {','.join(map(str, dirty))}; "
                     f"summarized rounds {','.join(map(str, res['rounds_summarized']))}]")
        print(f"  {res['workload']}: {res['command']}{extra}")
    print()
    print(render_table(report))
    print()
    print("ratio = traced / untraced throughput of the same round, median over rounds "
          "(1.00 = no overhead, 0.93 = 7% slower); range = min-max over rounds.")
    print("events/s = events / traced wall time; for perf, events = samples and size = perf.data.")
    for n in m["notes"]:
        print(f"note: {n}")
    if args.markdown:
        print()
        print(render_markdown(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nwrote {args.json}")
    return rc


_TRACERS = []


def _cleanup(procs, tmp, args):
    # Tracers first (argus stop; perf record gets SIGINT), then everything else.
    for t in _TRACERS:
        try:
            t.cleanup()
        except Exception as e:
            log(f"bench: cleanup of {t.name} failed: {e}")
    procs.kill_all()


if __name__ == "__main__":
    sys.exit(main())
