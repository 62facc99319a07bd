"""End to end: `argus start --netns` / `--cgroup` record one namespace or one
cgroup only (issue 27, containers), with the wakeups that cross the boundary.

Two network namespaces, a workload in each (a parent and a child talking
over a pipe, then a FIFO hand-off with the test process, which lives
outside both), and two argusd instances with private run directories, each
limited to one namespace: each buffer holds its own workload's processes
and no other (the test process and the other namespace's workload appear
only as the outside end of a wakeup).  The --cgroup test moves a running
process into a cgroup v2 directory made for it, under a daemon limited to
that directory: the move itself (cgroup_attach_task) brings the process
into the recording, and the graph names its cgroup.
"""
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from argus.graphbuild.builder import build_graph_from_trace
from argus.tracer import reader, schema
from conftest import ArgusRunner, require_tracing
from support.cgroups import cgroup2_root

WORKLOAD = textwrap.dedent(r"""
    import json, os, sys, time
    fifo_in, fifo_out = sys.argv[1], sys.argv[2]
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        for _ in range(30):
            os.write(w, b"x"); time.sleep(0.005)
        os._exit(0)
    for _ in range(30):
        os.read(r, 1)
    os.waitpid(child, 0)
    fd = os.open(fifo_in, os.O_RDONLY)     # the outside wakes us
    os.read(fd, 1)
    out = os.open(fifo_out, os.O_WRONLY)   # we wake the outside
    time.sleep(0.3)                        # the reader is blocked in read by now
    os.write(out, b"y")
    print(json.dumps({"pids": [os.getpid(), child]}), flush=True)
""")

# rows whose header pid may be outside the scope: the waker of a wakeup
# into it (the wakee is inside), the task a timer armed inside interrupted;
# and the producer's own accounting (lost)
CROSSING = (schema.WAKEUP, schema.WAKEUP_NEW, schema.TIMER)


def own_pids(trace):
    rows = trace.rows[~np.isin(trace.rows["type"], CROSSING + (schema.LOST,))]
    return set(rows["pid"].tolist())


def timers_armed_outside(trace, inside):
    t = trace.rows[trace.rows["type"] == schema.TIMER]
    return set(t[schema.column(schema.TIMER, "arm_pid")].tolist()) - inside



def wakeups(trace):
    w = trace.rows[np.isin(trace.rows["type"], (schema.WAKEUP, schema.WAKEUP_NEW))]
    return list(zip(w["pid"].tolist(), w[schema.column(schema.WAKEUP, "wakee_pid")].tolist()))


def hand_off(fifo_in, fifo_out):
    """The test process's side: wake the workload, then be woken by it."""
    with open(fifo_in, "wb", buffering=0) as f:
        time.sleep(0.3)                    # the workload is blocked in read by now
        f.write(b"x")
    with open(fifo_out, "rb", buffering=0) as f:
        assert f.read(1) == b"y"


@pytest.fixture
def netns_pair():
    require_tracing()
    names = [f"argus-t{os.getpid()}-{k}" for k in "ab"]
    made = []
    try:
        for n in names:
            subprocess.run(["ip", "netns", "add", n], check=True)
            made.append(n)
        yield names
    finally:
        for n in made:
            subprocess.run(["ip", "netns", "del", n], check=False)


def start(runner, *scope):
    runner.run("start", "--buffer", runner.buffer, "--size", "256M", "--no-hang-detector", *scope)


def test_two_daemons_each_record_only_their_network_namespace(tmp_path, netns_pair):
    runners = [ArgusRunner(tmp_path / n) for n in netns_pair]
    procs = []
    try:
        # a path for one, the bare name `ip netns` knows for the other
        for r, ns in zip(runners, (f"/var/run/netns/{netns_pair[0]}", netns_pair[1])):
            r.tmp.mkdir(parents=True, exist_ok=True)
            start(r, "--netns", ns)
            assert r.status()["scope_netns"] == os.stat(f"/var/run/netns/{os.path.basename(ns)}").st_ino
        fifos = []
        for n in netns_pair:
            pair = (str(tmp_path / f"{n}.in"), str(tmp_path / f"{n}.out"))
            for f in pair:
                os.mkfifo(f)
            fifos.append(pair)
            procs.append(subprocess.Popen(["ip", "netns", "exec", n, sys.executable, "-c", WORKLOAD, *pair],
                                          stdout=subprocess.PIPE, text=True))
        for pair in fifos:
            hand_off(*pair)
        truth = [set(json.loads(p.communicate(timeout=60)[0])["pids"]) for p in procs]
        for r in runners:
            r.wait_drained()
    finally:
        for p in procs:
            p.kill() if p.poll() is None else None
        for r in runners:
            r.stop()
    me = os.getpid()
    for k, r in enumerate(runners):
        trace = reader.decode_file(r.buffer)
        mine, other = truth[k], truth[1 - k]
        own = own_pids(trace)
        assert mine <= own, f"namespace {k}: workload {mine} missing from {sorted(own)}"
        assert own <= mine, f"namespace {k}: processes from outside recorded: {sorted(own - mine)}"
        assert not timers_armed_outside(trace, mine)
        w = wakeups(trace)
        assert any(a == me and b in mine for a, b in w), "the outside waking the workload is missing"
        assert any(a in mine and b == me for a, b in w), "the workload waking the outside is missing"
        # a wakeup between two tasks outside is not recorded (one between
        # the two workloads may be: a kernel lock they share crosses both)
        assert all(a in mine or b in mine for a, b in w), "a wakeup with no end inside was recorded"
        assert not own & other
        # where each process lives: its namespace's inode, in the records
        ns = trace.rows[trace.rows["type"] == schema.PROC_NS]
        inode = os.stat(f"/var/run/netns/{netns_pair[k]}").st_ino
        assert {int(x) for x in ns["obj2"][np.isin(ns["pid"], list(mine))]} == {inode}


# the workload, once the test moved it into the cgroup
MOVED = "import sys\nsys.stdin.readline()\n" + WORKLOAD


def test_cgroup_scope_records_a_process_moved_into_it(tmp_path):
    require_tracing()
    name = f"argus-t{os.getpid()}"
    root = cgroup2_root()
    if root is None:
        pytest.skip("no cgroup v2 file system mounted")
    cg = os.path.join(root, name)
    os.mkdir(cg)
    runner = ArgusRunner(tmp_path)
    proc = bystander = None
    try:
        start(runner, "--cgroup", cg)
        bystander = subprocess.Popen([sys.executable, "-c", "import time\nfor _ in range(40): time.sleep(0.01)"])
        fifos = (str(tmp_path / "in"), str(tmp_path / "out"))
        for f in fifos:
            os.mkfifo(f)
        proc = subprocess.Popen([sys.executable, "-c", MOVED, *fifos], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True)
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(proc.pid))
        proc.stdin.write("go\n")
        proc.stdin.close()
        hand_off(*fifos)
        truth = set(json.loads(proc.stdout.read())["pids"])
        proc.wait(timeout=60)
        bystander.wait(timeout=60)
        runner.wait_drained()
    finally:
        for p in (proc, bystander):
            if p is not None and p.poll() is None:
                p.kill()
        runner.stop()
        os.rmdir(cg)
    trace = reader.decode_file(runner.buffer)
    own = own_pids(trace)
    assert truth <= own, f"the moved process and its child {truth} missing from {sorted(own)}"
    assert own <= truth, f"processes outside the cgroup recorded: {sorted(own - truth)}"
    assert not timers_armed_outside(trace, truth)
    w, me = wakeups(trace), os.getpid()
    assert any(a == me and b in truth for a, b in w), "the outside waking the workload is missing"
    assert any(a in truth and b == me for a, b in w), "the workload waking the outside is missing"
    assert all(a in truth or b in truth for a, b in w), "a wakeup with no end inside was recorded"
    g = build_graph_from_trace(trace)
    for pid in truth:
        # named although it came in after its exec (comm: the name it was exec'd by)
        assert g.process_name(pid) == os.path.basename(sys.executable)[:15]
        assert g.process_scope(pid)["cgroup"] == f"/{name}"
        assert g.process_scope(pid)["netns"] == os.stat("/proc/self/ns/net").st_ino


def test_bad_scope_is_one_line(tmp_path):
    require_tracing()
    runner = ArgusRunner(tmp_path)
    try:
        for flag, value, words in (("--netns", "/nonexistent/ns", "bad --netns"),
                                   ("--cgroup", "/no-such-cgroup-here", "bad --cgroup")):
            proc = runner.run("start", "--buffer", runner.buffer, "--size", "64M", flag, value, check=False)
            assert proc.returncode != 0 and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    finally:
        runner.stop()       # had a start succeeded
