"""A full disk is a state of its own (issue 23 item 5), on a small tmpfs
mounted for the test: a real daemon traces into a buffer larger than the
file system.

  full disk     `argus start` says in one line that the buffer cannot be
                allocated; once the disk is full argusd logs one ENOSPC line,
                `argus status` says disk_full (and since when) and the
                seconds of history left, and the ring goes on in the chunks it
                has; a snapshot writer that meets the full disk fails with a
                log line and leaves no temporary file.
  killed writer a snapshot writer killed outright (SIGKILL) while its file is
                still a temporary one: argusd removes that file when it reaps
                the writer; and a restart sweeps the leftovers of writers that
                did not finish (older versions' names too), nothing else.
"""
import fcntl
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import require_tracing, run_demo
from support.polling import wait_until


@pytest.fixture
def small_fs(tmp_path, request):
    """A tmpfs of 96M, or the size the test parametrizes (indirect)."""
    require_tracing()
    size = getattr(request, "param", "96M")
    mnt = tmp_path / "fs"
    mnt.mkdir(mode=0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(mnt)], check=True)
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _use(argus_cli, fs):
    argus_cli.env["ARGUS_STATE_DIR"] = str(fs / "state")
    argus_cli.buffer = str(fs / "trace.argus")
    return fs / "state" / "snapshots"


def _log(argus_cli):
    return (argus_cli.tmp / "run" / "argusd.log").read_text(errors="replace")


def _temporaries(*dirs):
    return [os.path.join(d, n) for d in dirs if os.path.isdir(d) for n in os.listdir(d) if n.endswith(".tmp")]


def _load_until(argus_cli, done, what, timeout=300):
    deadline = time.monotonic() + timeout
    while True:
        st = argus_cli.status()
        if done(st):
            return st
        assert time.monotonic() < deadline, f"{what} did not happen: {st}"
        subprocess.run(["dd", "if=/dev/zero", "of=/dev/null", "bs=64", "count=100000"], capture_output=True)


def test_full_disk_keeps_the_ring_and_says_so(argus_cli, small_fs):
    snaps = _use(argus_cli, small_fs)
    t0 = time.time()
    proc = argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "256M")
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and "cannot be allocated in full" in lines[0], proc.stderr

    st = _load_until(argus_cli, lambda s: s.get("disk_full"), "the disk getting full")
    assert st["tracing"] and st["fill"] < 1.0
    assert t0 - 1 <= st["disk_full_since_ns"] / 1e9 <= time.time()
    assert st["history_s"] > 0
    # the ring goes on in the chunks it has: the oldest records are overwritten, none lost to ENOSPC
    after = _load_until(argus_cli, lambda s: s["overwritten"] > st["overwritten"] and s["events"] > st["events"],
                        "the ring wrapping on the full disk")
    assert after["disk_full"] and after["disk_full_since_ns"] == st["disk_full_since_ns"]
    text = argus_cli.run("status").stdout
    m = re.search(r"disk full:\s+since (\S+ \S+) \(ENOSPC\).* ([\d.,]+) s of history", text)
    assert m, text
    assert float(m.group(2).replace(",", "")) > 0
    # status reads the ring's state at once; argusd logs the change from its
    # main loop, a moment later
    full = wait_until(lambda: [l for l in _log(argus_cli).splitlines() if "disk full (ENOSPC)" in l], 10)
    assert full and len(full) == 1, _log(argus_cli)[-3000:]

    # a snapshot writer meets the full disk: one log line, no temporary file
    info, rc = run_demo("--requests", "20", "--hang-at", "10", "--hang-ms", "2500", "--interval-ms", "20",
                        "--stuck", "sleep")
    assert rc == 0
    deadline = time.monotonic() + 60
    while "failed to write snapshot" not in _log(argus_cli):
        assert time.monotonic() < deadline, _log(argus_cli)[-3000:]
        time.sleep(0.3)
    failed = [l for l in _log(argus_cli).splitlines() if "failed to write snapshot" in l]
    assert "No space left on device" in failed[0], failed
    time.sleep(1)
    assert _temporaries(snaps, snaps.parent, small_fs) == []


@pytest.mark.parametrize("small_fs", ["256M"], indirect=True)
def test_killed_writer_leaves_no_temporary_file_and_restart_sweeps(argus_cli, small_fs):
    snaps = _use(argus_cli, small_fs)
    argus_cli.start(size="64M")
    daemon = argus_cli.status()["pid"]
    # the writer writes its file under a temporary name, then takes the
    # directory's lock to publish it: holding the lock keeps it there
    lock = os.open(snaps, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        info, rc = run_demo("--requests", "20", "--hang-at", "10", "--hang-ms", "2500", "--interval-ms", "20",
                            "--stuck", "sleep")
        assert rc == 0
        deadline = time.monotonic() + 60
        while not _temporaries(snaps):
            assert time.monotonic() < deadline, f"no snapshot writer started: {_log(argus_cli)[-2000:]}"
            time.sleep(0.05)
        tmp = os.path.basename(_temporaries(snaps)[0])
        writer = int(tmp.split(".")[-3])
        with open(f"/proc/{writer}/stat") as f:
            assert int(f.read().rsplit(")", 1)[1].split()[1]) == daemon    # argusd's child
        os.kill(writer, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _temporaries(snaps):
            assert time.monotonic() < deadline, f"{tmp} stayed after its writer was killed"
            time.sleep(0.1)
    finally:
        os.close(lock)
    assert f"snapshot writer pid {writer} killed by signal 9; 1 temporary files of it removed" in _log(argus_cli)

    # leftovers of writers that never finished: an older version's name, a dead writer's, a
    # Python writer's in the state dir; and files that are not temporaries, which stay
    dead = _dead_pid()
    leftovers = [snaps / f".{info['app_pid']}.argus.tmp", snaps / f".x.argus.{dead}.0123456789abcdef.tmp",
                 snaps.parent / ".last-buffer.json.0123456789abcdef.tmp"]
    for p in leftovers:
        p.write_bytes(b"\0" * 4096)
    (snaps / "notes.txt").write_text("mine")
    argus_cli.stop()
    argus_cli.start(size="64M")
    assert _temporaries(snaps, snaps.parent) == []
    assert (snaps / "notes.txt").read_text() == "mine"
    assert "removed 3 temporary files left in" in _log(argus_cli)
    assert json.loads((snaps.parent / "last-buffer.json").read_text())["buffer"] == argus_cli.buffer


def _dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid
