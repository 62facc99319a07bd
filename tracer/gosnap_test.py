"""gosnap.py on real Go programs built here (go is installed on the
project's machines; skipped without it): the struct offsets from the
binary's DWARF, compressed or not, and one walk of a running program's
goroutines (read from its memory, no tracing), then the records through
the real ring buffer and decoder."""
import json
import os
import shutil
import subprocess
import time

import pytest

from argus.tracer import gosnap, producer, reader, schema

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain")

PROGRAM = r'''package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
)

func main() {
	ch := make(chan int)
	var mu sync.Mutex
	mu.Lock()
	tidc := make(chan int)
	go func() { runtime.LockOSThread(); tidc <- syscall.Gettid(); <-ch }()
	tid := <-tidc
	go func() { mu.Lock() }()
	go func() { time.Sleep(time.Hour) }()
	go func() { <-time.NewTimer(time.Hour).C }()
	go func() { select { case <-ch: case <-time.After(time.Hour): } }()
	var p [2]int
	syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	r := os.NewFile(uintptr(p[0]), "r") // non-blocking: the netpoller's
	go func() { b := make([]byte, 1); r.Read(b) }()
	time.Sleep(200 * time.Millisecond)
	fmt.Printf("%d %d %p %d\n", os.Getpid(), tid, ch, p[0])
	select {}
}
'''


def build(tmp, name, *ldflags, go="1.23"):
    d = tmp / name
    d.mkdir()
    (d / "main.go").write_text(PROGRAM)
    # go 1.23+: synchronous timer channels (hchan.timer set); before: asynchronous ones
    (d / "go.mod").write_text(f"module gosnaptest\n\ngo {go}\n")
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod")
    cmd = ["go", "build", "-o", str(d / "prog")] + (["-ldflags=" + " ".join(ldflags)] if ldflags else []) + ["."]
    subprocess.run(cmd, cwd=d, env=env, check=True, capture_output=True, timeout=300)
    return str(d / "prog")


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gosnap")
    return {"default": build(tmp, "default"), "plain": build(tmp, "plain", "-compressdwarf=false"),
            "async": build(tmp, "async", go="1.21")}


def start(path):
    p = subprocess.Popen([path], stdout=subprocess.PIPE, text=True)
    try:
        pid, tid, ch, fd = p.stdout.readline().split()
        yield int(pid), int(tid), int(ch, 16), int(fd)
    finally:
        p.kill()
        p.wait()


@pytest.fixture()
def running(binaries):
    yield from start(binaries["default"])


def compressed(path):
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        sec = ELFFile(f).get_section_by_name(".debug_info") or ELFFile(f).get_section_by_name(".zdebug_info")
        return sec is not None and (sec.name.startswith(".z") or bool(sec["sh_flags"] & 0x800))


def test_offsets_come_from_the_dwarf_compressed_or_not(binaries):
    lay = gosnap.read_layout(binaries["default"])
    plain = gosnap.read_layout(binaries["plain"])
    assert not compressed(binaries["plain"])
    # the same build but for the DWARF's compression: the same layout
    assert lay["structs"] == plain["structs"] and lay["statuses"] == plain["statuses"]
    assert lay["wait_reasons"] == plain["wait_reasons"]
    g = lay["structs"]["runtime.g"]
    assert {"goid", "atomicstatus", "waitreason", "lockedm", "waiting"} <= set(g["fields"])
    offs = sorted(off for off, _ in g["fields"].values())
    assert len(set(offs)) == len(offs) and offs[-1] < g["size"]
    assert g["fields"]["goid"][1] == 8 and g["fields"]["waitreason"][1] == 1
    assert lay["structs"]["runtime.m"]["fields"]["procid"][1] == 8
    assert lay["statuses"]["_Gwaiting"] == 4 and lay["statuses"]["_Grunning"] == 2
    assert {"chan receive", "select", "sleep", "sync.Mutex.Lock", "select (no cases)"} <= set(lay["wait_reasons"])
    assert lay["wait_reasons"][0] == ""         # waitReasonZero
    assert lay["symbols"]["runtime.allgs"][1] == 24


def test_a_stripped_binary_is_refused(binaries, tmp_path):
    out = tmp_path / "stripped"
    subprocess.run(["objcopy", "--strip-debug", binaries["plain"], str(out)], check=True)
    with pytest.raises(gosnap.LayoutError):
        gosnap.read_layout(str(out))


def test_the_parked_goroutines_of_a_running_program(running, tmp_path, monkeypatch):
    pid, tid, ch, fd = running
    monkeypatch.setenv("ARGUS_GO_LAYOUT_CACHE", str(tmp_path / "cache"))
    gors, info = gosnap.snapshot(pid)
    assert info["layout_from"] == "dwarf" and info["skipped"] == 0
    by = {}
    for g in gors:
        assert g["status"] == 4 and g["goid"] > 0
        by.setdefault(g["wait"], []).append(g)
    locked = [g for g in gors if g["locked_tid"]]
    # the main goroutine is not locked: no LockOSThread in it
    assert [(g["locked_tid"], g["wait"], g["wait_obj"]) for g in locked] == [(tid, "chan receive", ch)]
    assert len(by["sync.Mutex.Lock"]) == 1 and len(by["sleep"]) == 1 and len(by["select (no cases)"]) == 1
    timers = [g for g in by["chan receive"] if g["timer"]]
    assert len(timers) == 1 and timers[0]["wait_obj"] not in (0, ch)
    assert not any(g["timer"] for g in locked)
    # a select with a timeout waits for data: its channel, not a timed wait
    assert [(g["wait_obj"], g["timer"]) for g in by["select"]] == [(ch, False)]
    # the pipe's reader, parked in the netpoller: its fd through the epoll set
    assert [(g["fd"], g["wait_obj"]) for g in by["IO wait"]] == [(fd, 0)]
    assert all(g["fd"] == -1 for g in gors if g["wait"] != "IO wait")
    # the layout is cached per build: read once
    again, info = gosnap.snapshot(pid)
    assert info["layout_from"] == "cache" and sorted(g["goid"] for g in again) == sorted(g["goid"] for g in gors)


def test_records_through_the_buffer_and_the_decoder(running, tmp_path, monkeypatch, capsys):
    pid, tid, ch, fd = running
    monkeypatch.setenv("ARGUS_GO_LAYOUT_CACHE", str(tmp_path / "cache"))
    buf = str(tmp_path / "trace.argus")
    producer.create_buffer(buf, 1 << 20, chunk_size=64 << 10)
    ts = time.monotonic_ns()
    assert gosnap.main(["--pid", str(pid), "--ts", str(ts), "--buffer", buf]) == 0
    assert "locked to a thread" in capsys.readouterr().err
    t = reader.decode_file(buf)
    rows = t.rows[t.rows["type"] == schema.GO_SNAPSHOT]
    # ts: when each was read; wait_since: the attach (Go's GC set no waitsince this young)
    assert len(rows) >= 6 and set(rows["pid"].tolist()) == {pid} and set(rows["val"].tolist()) == {ts}
    assert all(ts <= int(x) <= time.monotonic_ns() for x in rows["ts_ns"])
    mine = [r for r in rows if r["irq"] & schema.GO_SNAP_LOCKED]
    assert len(mine) == 1
    r = mine[0]
    f = schema.row_values(r)
    assert (int(r["tid"]), int(r["obj2"]), int(r["aux"]), int(r["state"])) == (tid, ch, -1, 4)
    assert r["irq"] & schema.GO_SNAP_CHAN and schema.go_snapshot_wait(r, t.strings) == "chan receive"
    assert f["wait_obj"] == ch and f["goid"] > 0 and f["fd"] == -1
    io = [r for r in rows if r["irq"] & schema.GO_SNAP_FD]
    assert [(int(r["aux"]), schema.go_snapshot_wait(r, t.strings)) for r in io] == [(fd, "IO wait")]
    unlocked = [r for r in rows if not r["irq"] & schema.GO_SNAP_LOCKED]
    assert all(int(r["tid"]) == pid for r in unlocked)


def test_a_bad_target_gives_nothing_and_never_raises(binaries, running):
    lay = gosnap.read_layout(binaries["default"])
    assert gosnap.walk(os.getpid(), lay)[0] == []            # a Python process: no allgs there
    assert gosnap.walk(2 ** 22 + 7, lay) == ([], 0, 0)       # no such process
    pid = running[0]
    bad = json.loads(json.dumps(lay))
    bad["structs"]["runtime.g"]["fields"]["atomicstatus"] = [1, 4]    # garbage offsets: nothing validates
    bad["structs"]["runtime.g"]["fields"]["goid"] = [3, 8]
    gors, examined, skipped = gosnap.walk(pid, bad)
    assert examined > 0 and len(gors) <= 1 and skipped >= examined - 1


def test_an_asynchronous_timer_channel_is_known_by_its_element_type(binaries, tmp_path, monkeypatch):
    """go 1.21 in go.mod (or GOPATH mode): asynctimerchan=1, hchan.timer
    stays nil; the channel's element type is time.Time's descriptor."""
    monkeypatch.setenv("ARGUS_GO_LAYOUT_CACHE", str(tmp_path / "cache"))
    lay = gosnap.read_layout(binaries["async"])
    assert lay["time_type"] > lay["symbols"]["type:*"][0]
    for pid, tid, ch, fd in start(binaries["async"]):
        gors, _ = gosnap.snapshot(pid)
        timers = [g for g in gors if g["timer"]]
        assert [g["wait"] for g in timers] == ["chan receive"] and timers[0]["wait_obj"] != ch


def test_the_helper_says_why_and_exits_1_on_a_non_go_process(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARGUS_GO_LAYOUT_CACHE", str(tmp_path / "cache"))
    p = subprocess.Popen(["sleep", "30"])
    try:
        assert gosnap.main(["--pid", str(p.pid), "--json"]) == 1
        assert "no goroutine snapshot" in capsys.readouterr().err
    finally:
        p.kill()
        p.wait()
    assert gosnap.main(["--pid", str(2 ** 22 + 7)]) == 1      # gone
