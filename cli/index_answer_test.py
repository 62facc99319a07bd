"""The CLI's ring-index answer (index_answer.py) on a copy of the golden
trace with an index laid out as argusd writes it: when it answers, what it
prints, and when it leaves the answer to a decode."""
import argparse
import json
import os
import pathlib
import shutil

import numpy as np
import pytest

from argus.cli import index_answer, snapshots
from argus.tracer import reader, ringindex as RI, schema

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus"
S = 1_000_000_000
MS = 1_000_000          # the golden trace lasts 0.13 s: hangs here are tens of ms


@pytest.fixture
def buf(tmp_path, monkeypatch):
    path = tmp_path / "t.argus"
    shutil.copy(GOLDEN, path)
    os.chmod(path, 0o600)
    snap = tmp_path / "snapshots"
    snap.mkdir(mode=0o700)
    monkeypatch.setattr(snapshots, "SNAPSHOT_DIR", str(snap))
    return str(path)


def write_index(buf, entries, since_ns=None, min_ns=5 * MS):
    st = reader.buffer_stats(buf)
    e = np.zeros(len(entries), RI.ENTRY_DTYPE)
    for i, r in enumerate(entries):
        for k, v in r.items():
            e[k][i] = v
    e["seq"] = np.arange(1, len(e) + 1)
    head = RI.HEADER.pack(RI.MAGIC, RI.VERSION, RI.HEADER_SIZE, RI.ENTRY_SIZE, 16, 2, 0, os.stat(buf).st_ino,
                          st["created_ns"], st["first_ts"] if since_ns is None else since_ns, min_ns, len(e), 2, 0, 0,
                          st["last_ts"])
    ring = bytearray(16 * RI.ENTRY_SIZE)
    ring[:len(e) * RI.ENTRY_SIZE] = e.tobytes()
    path = os.path.join(snapshots.SNAPSHOT_DIR, RI.index_name(buf))
    with open(path, "wb") as f:
        f.write(head + bytes(2 * RI.ENTRY_SIZE) + bytes(ring))
    os.chmod(path, 0o600)
    return st


def wait(st, pid, a, b, comm, flags=RI.FLAG_LOOP, reason=schema.WAIT_READ):
    t0 = int(st["first_ts"])
    return dict(pid=pid, tid=pid, start_ns=t0 + a, end_ns=t0 + b, kind=RI.KIND_WAIT, reason=reason, nr=0, obj=5,
                flags=flags, comm=comm, guess=1)


def hangs_args(**kw):
    return argparse.Namespace(top=20, json=True, **kw)


def test_hangs_from_the_index_print_its_hangs(buf, capsys):
    st = reader.buffer_stats(buf)
    write_index(buf, [wait(st, 4242, 10 * MS, 100 * MS, b"frozen-app"), wait(st, 4243, 0, 20 * MS, b"quick")])
    assert index_answer.run_hangs(hangs_args(), buf, 50 * MS) == 0
    out, err = capsys.readouterr()
    hangs = json.loads(out)["hangs"]
    assert [(h["pid"], h["comm"], h["block_type"], h["candidate"]["tier"]) for h in hangs] == \
        [(4242, "frozen-app", "LongWait", 0)]
    assert "listed from the ring index" in err


def test_pick_names_the_hang_and_its_window(buf, capsys):
    st = reader.buffer_stats(buf)
    write_index(buf, [wait(st, 4242, 10 * MS, 100 * MS, b"frozen-app")])
    h, half = index_answer.pick(buf, 50 * MS)
    assert h.pid == 4242 and half == h.dur_ns // 2 + index_answer.WINDOW_MARGIN_NS
    assert "the hang of frozen-app/4242" in capsys.readouterr().err


def test_no_index_a_lower_threshold_or_a_partial_index_leave_it_to_the_decode(buf):
    assert index_answer.load(buf, 2 * S) is None
    st = write_index(buf, [])
    assert index_answer.load(buf, MS) is None                        # shorter than the index keeps
    assert index_answer.load(buf, 2 * S) is not None
    write_index(buf, [], since_ns=int(st["first_ts"]) + 5 * S)       # argusd started on a buffer with records
    assert index_answer.load(buf, 2 * S) is None


def test_a_damaged_index_is_one_line_and_a_decode(buf, capsys):
    write_index(buf, [])
    path = os.path.join(snapshots.SNAPSHOT_DIR, RI.index_name(buf))
    with open(path, "r+b") as f:
        f.write(b"garbage!")
    assert index_answer.load(buf, 2 * S) is None
    err = capsys.readouterr().err
    assert "ignoring the ring index" in err and "bad magic" in err and len(err.strip().splitlines()) == 1


def test_listed_processes_get_where_they_live_from_proc_when_recorded_here(tmp_path):
    """add_where: two live children in different network namespaces are told
    apart; a reused pid (other comm, or started after its hang) and a buffer
    of another boot get nothing."""
    import subprocess
    import time
    from argus.diagnose import indexed
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode:
        pytest.skip("unshare -n is not permitted here")
    kids = [subprocess.Popen(["unshare", "-n", "sleep", "60"]), subprocess.Popen(["sleep", "60"])]
    try:
        for k in kids:              # unshare has exec'd sleep once its comm says so
            while open(f"/proc/{k.pid}/comm").read().strip() != "sleep":
                time.sleep(0.01)
        now = time.monotonic_ns()

        def hang(pid, comm="sleep", start=now):
            return indexed.IndexHang(pid, pid, comm, "wait", "LongWait", start, start + S, False,
                                     schema.WAIT_SLEEP, 35, 0, True, tier=0, why="event loop")
        hs = [hang(kids[0].pid), hang(kids[1].pid), hang(kids[1].pid, comm="other"), hang(kids[1].pid, start=0)]
        index_answer.add_where({"boot_id": index_answer.this_boot_id()}, hs)
        nets = [os.stat(f"/proc/{k.pid}/ns/net").st_ino for k in kids]
        assert [h.where for h in hs] == [f"netns {nets[0]}", f"netns {nets[1]}", "", ""]
        assert hs[0].to_dict()["netns"] == nets[0] and "netns" not in hs[2].to_dict()
        text = indexed.render_text(hs, now, None).splitlines()
        assert text[0].split()[:2] == ["process", "where"] and text[3].split()[1] == "-"
        other = [hang(kids[0].pid)]
        index_answer.add_where({"boot_id": "00000000-0000-0000-0000-000000000000"}, other)
        assert other[0].where == "" and "where" not in indexed.render_text(other, now, None)
    finally:
        for k in kids:
            k.kill()
            k.wait()
