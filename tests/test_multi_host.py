"""Three hosts on one machine: one hang followed across them (issue 27).

Set-up: three network namespaces joined by veth pairs (ns1 - ns2 - ns3),
each process also in a UTS namespace of its own with its own hostname, so
each argusd's buffer header names a different host.  A client in ns1 asks
an HTTP service in ns2, which asks Redis in ns3; one request runs a Lua
busy loop in Redis (the hang: Redis's main thread LongRunning, the service
and the client waiting on it).  Three argusd, each limited with --netns to
its namespace, record into three buffers; a fourth, unlimited, records the
same hang on its own.  tests/support/clockshift.py then moves ns2's buffer
by +2.7 s and ns3's by -1.3 s, both with a drift of 100 ppm.

Checked: `argus debug --buffer A --buffer B --buffer C --pid CLIENT --auto
--json` names Redis's main thread in ns3, LongRunning; each offset is
within 100 us of the truth, inside bounds that contain it; the path and
root causes are those of the unlimited daemon's diagnosis.  Without ns3's
buffer, the chain ends at the service's connection to Redis's address.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import require_tracing
from argus.tracer import reader

HERE = os.path.dirname(os.path.abspath(__file__))
WEB = os.path.join(HERE, "drivers", "multihost_web.py")
CLIENT = os.path.join(HERE, "drivers", "multihost_client.py")
CLOCKSHIFT = os.path.join(HERE, "support", "clockshift.py")
SHIFTS = {2: (2.7, 100.0), 3: (-1.3, 100.0)}     # host -> (offset s, drift ppm)
NET12, NET23 = "10.27.12", "10.27.23"
HANG_S = 3


def sh(*cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, capture_output=True, text=True, **kw)


class Fleet:
    """ns1..ns3, veth ns1-ns2 and ns2-ns3; everything removed by close()."""

    def __init__(self, tag):
        self.ns = {i: f"argus-mh{tag}-{i}" for i in (1, 2, 3)}
        self.hostname = {i: f"mh{tag}-host{i}" for i in (1, 2, 3)}
        self.procs = []
        for n in self.ns.values():
            sh("ip", "netns", "add", n)
        a, b = f"mh{tag}a", f"mh{tag}b"
        c, d = f"mh{tag}c", f"mh{tag}d"
        sh("ip", "link", "add", a, "netns", self.ns[1], "type", "veth", "peer", "name", b, "netns", self.ns[2])
        sh("ip", "link", "add", c, "netns", self.ns[2], "type", "veth", "peer", "name", d, "netns", self.ns[3])
        for i, dev, addr in ((1, a, f"{NET12}.1/24"), (2, b, f"{NET12}.2/24"), (2, c, f"{NET23}.2/24"),
                             (3, d, f"{NET23}.3/24")):
            sh("ip", "-n", self.ns[i], "addr", "add", addr, "dev", dev)
            sh("ip", "-n", self.ns[i], "link", "set", dev, "up")
        for i in (1, 2, 3):
            sh("ip", "-n", self.ns[i], "link", "set", "lo", "up")

    def cmd(self, i, *argv):
        """argv in namespace i with its own hostname (a UTS namespace of its own)."""
        return ["ip", "netns", "exec", self.ns[i], "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', self.hostname[i], *argv]

    def spawn(self, i, *argv, **kw):
        p = subprocess.Popen(self.cmd(i, *argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for n in self.ns.values():
            sh("ip", "netns", "del", n, check=False)


def first_json(proc, timeout=30):
    line = proc.stdout.readline()
    assert line, f"no output: {proc.stderr.read() if proc.poll() is not None else ''}"
    return json.loads(line)


def wait_port(fleet, i, addr, port, timeout=20):
    probe = "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close()"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sh(*fleet.cmd(i, sys.executable, "-c", probe, addr, str(port)), check=False).returncode == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on {addr}:{port}")


def truth_offset(anchor, offset_s, ppm, created):
    """The reference clock minus the shifted clock at `anchor` (on the shifted
    clock): clockshift wrote t' = t + O + D (t - created)."""
    d = ppm * 1e-6
    t = (anchor - offset_s * 1e9 + d * created) / (1 + d)
    return t - anchor


def _same_chain(diag):
    path = [(p["pid"], p["tid"], p["block_type"]) for p in diag["path"]]
    causes = [(r["pid"], r["tid"], r["block_type"], r["primary"]) for r in diag["root_causes"]]
    return path, causes


@pytest.fixture
def fleet():
    require_tracing()
    if not shutil.which("redis-server"):
        pytest.skip("redis-server not installed (scripts/setup.sh installs it)")
    if not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("needs ip (iproute2) and unshare (util-linux)")
    f = Fleet(os.getpid() % 10000)
    try:
        yield f
    finally:
        f.close()


def test_one_hang_across_three_hosts(fleet, tmp_path, argus_daemons):
    runners = {}
    for i in (1, 2, 3, 0):
        r = argus_daemons(tmp_path / f"argus{i}")      # each stopped (killed if need be) at teardown
        r.buffer = str(tmp_path / f"host{i}.argus")
        runners[i] = r
    redis = fleet.spawn(3, shutil.which("redis-server"), "--port", "6379", "--bind", f"{NET23}.3",
                        "--save", "", "--appendonly", "no", "--protected-mode", "no")
    wait_port(fleet, 3, f"{NET23}.3", 6379)
    web = fleet.spawn(2, sys.executable, WEB, f"{NET12}.2", "8080", f"{NET23}.3", "6379")
    first_json(web)
    wait_port(fleet, 2, f"{NET12}.2", 8080)
    flag = str(tmp_path / "client")
    client = fleet.spawn(1, sys.executable, CLIENT, f"{NET12}.2", "8080", str(HANG_S), flag)
    client_pid = first_json(client)["pid"]
    for i in (1, 2, 3):
        r = runners[i]
        proc = sh(*fleet.cmd(i, sys.executable, "-m", "argus.cli", "start", "--buffer", r.buffer, "--size", "128M",
                             "--netns", f"/var/run/netns/{fleet.ns[i]}"), env=r.env, check=False, timeout=120)
        assert proc.returncode == 0, proc.stderr
    runners[0].run("start", "--buffer", runners[0].buffer, "--size", "512M")      # the one unlimited daemon
    open(flag + ".go", "w").close()
    assert '"done"' in client.stdout.readline(), client.stderr.read()
    assert redis.poll() is None and web.poll() is None
    time.sleep(1.5)                                 # the daemons drain the last records
    for r in runners.values():
        r.ensure_stopped()                          # the buffers are read below
    open(flag + ".end", "w").close()
    out, err = client.communicate(timeout=30)
    assert client.returncode == 0, err

    created = {i: reader.decode_file(runners[i].buffer, types=[]).created_ns for i in (2, 3)}
    buf = {1: runners[1].buffer}
    for i, (off, ppm) in SHIFTS.items():
        buf[i] = str(tmp_path / f"host{i}.shifted.argus")
        sh(sys.executable, CLOCKSHIFT, runners[i].buffer, buf[i], "--offset", str(off), "--ppm", str(ppm))

    cli = runners[0]
    merged = cli.json("debug", "--buffer", buf[1], "--buffer", buf[2], "--buffer", buf[3], "--pid", str(client_pid),
                      "--auto", "--json", timeout=600)
    hosts = {h["name"]: h for h in merged["hosts"]}
    assert set(hosts) == set(fleet.hostname.values()), hosts
    primary = [r for r in merged["root_causes"] if r["primary"]][0]
    assert primary["host"] == fleet.hostname[3], merged["root_causes"]
    assert primary["process"].startswith("redis-server") and primary["block_type"] == "LongRunning"
    assert merged["spinning"]["host"] == fleet.hostname[1] and merged["spinning"]["pid"] == client_pid
    for i, (off, ppm) in SHIFTS.items():
        h = hosts[fleet.hostname[i]]
        truth = truth_offset(h["anchor_ns"], off, ppm, created[i])
        lo, hi = h["offset_bounds_ns"]
        assert abs(h["offset_ns"] - truth) < 100_000, (h, truth)
        assert lo <= truth <= hi, (h, truth)
        assert abs(h["drift_ppm"] - (-ppm / (1 + ppm * 1e-6))) < 50, h
        print(f"\nhost {i} shifted {off:+} s, {ppm} ppm: offset {h['offset_ns']} ns, truth {truth:.0f} ns "
              f"(error {h['offset_ns'] - truth:+.0f} ns), bounds [{lo}, {hi}], drift {h['drift_ppm']:.1f} ppm, "
              f"{h['pairs']} pairs")

    # hangs, export and report take the same buffers
    three = ["--buffer", buf[1], "--buffer", buf[2], "--buffer", buf[3]]
    listed = cli.json("hangs", *three, "--pid", f"{fleet.hostname[3]}:{primary['pid']}", "--json", timeout=600)
    assert [h["name"] for h in listed["hosts"]] == [fleet.hostname[i] for i in (1, 2, 3)]
    assert listed["hangs"] and all(h["host"] == fleet.hostname[3] for h in listed["hangs"])
    page = tmp_path / "hang.html"
    cli.run("report", *three, "--pid", str(client_pid), "--html", str(page), timeout=600)
    assert all(f"{fleet.hostname[i]}:" in page.read_text() for i in (1, 2, 3))
    pf = tmp_path / "hang.pftrace"
    cli.run("export", *three, "--pid", str(client_pid), "--perfetto", str(pf), timeout=600)
    assert all(f"{fleet.hostname[i]}: ".encode() in pf.read_bytes() for i in (1, 2, 3))
    assert b"message (cross-host)" in pf.read_bytes()

    single = cli.json("debug", "--buffer", runners[0].buffer, "--pid", str(client_pid), "--auto", "--json",
                      timeout=600)
    assert _same_chain(merged) == _same_chain(single), (merged["path"], single["path"])

    # ns3 untraced: the chain ends at the service's connection to Redis, by address
    partial = cli.json("debug", "--buffer", buf[1], "--buffer", buf[2], "--pid", str(client_pid), "--auto",
                       "--json", timeout=600)
    end = partial["chain_end"]
    assert end is not None and end["address"] == f"{NET23}.3:6379", partial
    assert end["host"] == fleet.hostname[2]
