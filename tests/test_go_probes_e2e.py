"""Go goroutines handed over in user space, traced (issue 22): the Go
scheduler probes (argus_uprobe.bpf.c go_probe, attached by argusd when the
program execs) and the goroutine edges of the graph core lead `argus debug
--auto` from the hung main goroutine to the goroutine that held the mutex.

tests/programs/go_handover.go: main (locked to the main thread) waits on a
channel for goroutine A; A waits for a sync.Mutex that goroutine B holds
while it computes.  Neither A nor B is locked to a thread; the program says
at the end which threads they last ran on."""
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import require_tracing

HERE = os.path.dirname(os.path.abspath(__file__))
GO = shutil.which("go") or "/usr/local/go/bin/go"


@pytest.fixture(scope="module")
def go_handover(tmp_path_factory):
    if not os.access(GO, os.X_OK):
        pytest.skip("needs the Go toolchain")
    d = tmp_path_factory.mktemp("go")
    out = str(d / "go_handover")
    env = dict(os.environ, GO111MODULE="off", GOPROXY="off", GOCACHE=str(d / "cache"))
    subprocess.run([GO, "build", "-o", out, os.path.join(HERE, "programs", "go_handover.go")], env=env,
                   check=True, capture_output=True, timeout=300)
    return out


def run_handover(binary, hold_ms=3000):
    proc = subprocess.run([binary], env=dict(os.environ, HOLD_MS=str(hold_ms)), capture_output=True, text=True,
                          timeout=60, check=True)
    first, last = (json.loads(line) for line in proc.stdout.splitlines()[:2])
    return first, last


def _threads_of_b(rows, main_tid, b_tid):
    """The threads that ran goroutine B, from the records: B readied A
    (its unlock) on thread b_tid, A readied main; B moves between threads
    while it computes, and any of them stands for it."""
    def last_exec(tid, before):
        return [r for r in rows if r["type"] == "go_execute" and r["tid"] == tid and r["ts_ns"] < before][-1]

    main_g = [r for r in rows if r["type"] == "go_execute" and r["tid"] == main_tid][-1]["obj"]
    ready_main = [r for r in rows if r["type"] == "go_ready" and r["obj"] == main_g][-1]
    a_g = last_exec(ready_main["tid"], ready_main["ts_ns"])["obj"]
    ready_a = [r for r in rows if r["type"] == "go_ready" and r["obj"] == a_g and r["ts_ns"] < ready_main["ts_ns"]][-1]
    assert ready_a["tid"] == b_tid
    b_g = last_exec(b_tid, ready_a["ts_ns"])["obj"]
    return {r["tid"] for r in rows if r["type"] == "go_execute" and r["obj"] == b_g} - {main_tid}


def test_a_mutex_held_by_an_unlocked_goroutine_is_found_through_its_goroutines(argus_cli, go_handover):
    require_tracing()
    tracing = argus_cli
    tracing.run("start", "--buffer", tracing.buffer, "--size", "1G", "--go-probes")
    first, last = run_handover(go_handover)
    tracing.wait_drained()
    pid = first["pid"]
    rows = [json.loads(line) for line in tracing.run("events", "--pid", str(pid), "--type", "go_execute",
                                                      "--type", "go_ready", "--json").stdout.splitlines()]
    execs = [r for r in rows if r["type"] == "go_execute"]
    assert any(e["tid"] == first["main"] for e in execs), "no goroutine ran on the main thread"
    b_threads = _threads_of_b(rows, first["main"], last["b"])

    report = tracing.json("debug", "--pid", str(pid), "--auto", "--json")
    assert "Go scheduler probes" in (tracing.tmp / "run" / "argusd.log").read_text()
    assert report["spinning"]["tid"] == first["main"]
    primary = [c for c in report["root_causes"] if c.get("primary")]
    assert primary and primary[0]["tid"] in b_threads and primary[0]["block_type"] == "LongRunning", \
        (b_threads, report["root_causes"])
    # the walk left the main thread by the goroutine's hand-over, not a kernel wakeup of some M
    handovers = [p["edge_in"]["goroutine"] for p in report["path"] if p["edge_in"] and p["edge_in"].get("goroutine")]
    assert handovers, [p["edge_in"] for p in report["path"]]
    text = tracing.run("debug", "--pid", str(pid), "--auto").stdout
    assert f"goroutine {handovers[0]}" in text


def test_go_programs_are_not_probed_unless_asked(tracing, go_handover):
    """Off by default: three uprobe traps per goroutine switch (bench/go_probes.py)."""
    first, _ = run_handover(go_handover, hold_ms=200)
    tracing.wait_drained()
    rows = tracing.run("events", "--pid", str(first["pid"]), "--type", "go_execute", "--json").stdout.split()
    assert rows == [] and "Go scheduler probes" not in (tracing.tmp / "run" / "argusd.log").read_text()


PARKED_CHAIN = r'''package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

func main() {
	runtime.LockOSThread()
	c1, c2 := make(chan int), make(chan int)
	tids := make(chan [2]int, 2)
	go func() { runtime.LockOSThread(); tids <- [2]int{1, syscall.Gettid()}; <-c2; c1 <- 1 }()
	go func() { runtime.LockOSThread(); tids <- [2]int{2, syscall.Gettid()}; time.Sleep(time.Hour); c2 <- 1 }()
	ids := map[string]int{"pid": os.Getpid(), "main": syscall.Gettid()}
	for k := 0; k < 2; k++ {
		x := <-tids
		ids[fmt.Sprint("r", x[0])] = x[1]
	}
	line, _ := json.Marshal(ids)
	fmt.Println(string(line))
	<-c1
}
'''


def _snapshot_rows(tracing, pid, deadline_s=30):
    """The go_snapshot rows of pid (the helper reads the DWARF once per build: a moment)."""
    deadline = time.monotonic() + deadline_s
    while True:
        tracing.wait_drained()
        snap = [json.loads(line) for line in tracing.run("events", "--pid", str(pid), "--type", "go_snapshot",
                                                         "--json").stdout.splitlines()]
        if snap or time.monotonic() > deadline:
            return snap
        time.sleep(0.5)


def test_goroutines_parked_before_the_probes_are_snapshot_and_followed(argus_cli, tmp_path):
    """Goroutines each locked to its own thread, parked before the probes
    attach (main on a channel for role 1, role 1 on a channel for role 2,
    role 2 in a Sleep), so no GO_* row shows any of them.  argusd's snapshot
    (tracer/gosnap.py) names each wait: for a program running before `argus
    start` (found at start), and for one started later (its exec; the
    probes come on 0.2-0.5 s after it).  For the latter, the walk goes from
    main to role 2, not through the start-up hand-offs on the main thread's
    park futex."""
    require_tracing()
    if not os.access(GO, os.X_OK):
        pytest.skip("needs the Go toolchain")
    (tmp_path / "chain.go").write_text(PARKED_CHAIN)
    binary = str(tmp_path / "chain")
    env = dict(os.environ, GO111MODULE="off", GOPROXY="off", GOCACHE=str(tmp_path / "cache"))
    subprocess.run([GO, "build", "-o", binary, str(tmp_path / "chain.go")], env=env, check=True,
                   capture_output=True, timeout=300)
    # another file (inode) for the late one: argusd probes per executable, and
    # a process of a file probed already is probed from its exec (no snapshot)
    late = str(tmp_path / "chain_late")
    shutil.copy(binary, late)
    procs = []
    try:
        procs.append(subprocess.Popen([binary], stdout=subprocess.PIPE, text=True))
        early = json.loads(procs[0].stdout.readline())
        tracing = argus_cli
        tracing.run("start", "--buffer", tracing.buffer, "--size", "1G", "--go-probes")
        procs.append(subprocess.Popen([late], stdout=subprocess.PIPE, text=True))
        ids = json.loads(procs[1].stdout.readline())
        for who in (early, ids):
            snap = _snapshot_rows(tracing, who["pid"])
            locked = {r["tid"]: (r["wait"], r["timer"]) for r in snap if r["locked"]}
            assert locked == {who["main"]: ("chan receive", False), who["r1"]: ("chan receive", False),
                              who["r2"]: ("sleep", False)}, snap
        time.sleep(3)       # a hang of the threshold's length inside the trace
        report = tracing.json("debug", "--pid", str(ids["pid"]), "--auto", "--json")
        assert report["spinning"]["tid"] == ids["main"]
        primary = [c for c in report["root_causes"] if c.get("primary")]
        assert [(c["tid"], c["block_type"]) for c in primary] == [(ids["r2"], "LongWait")], report["root_causes"]
        assert "parked before the probes: sleep" in primary[0]["why"]
    finally:
        for p in procs:
            p.kill()
            p.wait()
