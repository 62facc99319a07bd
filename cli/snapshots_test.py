"""cli/snapshots.py: listing, resolving and trusting the flight recorder's files."""
import json
import os

import pytest

from argus.cli import snapshots as S
from argus.cli.common import ArgusError


def _meta(sid, **kw):
    m = {"schema": "argus.snapshot/1", "id": sid, "pid": 10, "tid": 10, "comm": "app", "process": "app",
         "start_ns": 5_000_000_000, "end_ns": 8_000_000_000, "detect_ns": 7_000_000_000, "ongoing": False,
         "since_ns": 0, "until_ns": 9_000_000_000, "threshold_ns": 2_000_000_000, "block_type": "LongWait",
         "wait_reason": 3, "run_ns": 1, "wait_ns": 2, "switches": 3, "records": 4, "state_records": 1,
         "created_ns": 1_000_000_000, "created_realtime_ns": 1_700_000_000_000_000_000}
    m.update(kw)
    return m


@pytest.fixture
def snapdir(tmp_path, monkeypatch):
    d = tmp_path / "snapshots"
    d.mkdir(mode=0o700)
    monkeypatch.setattr(S, "SNAPSHOT_DIR", str(d))
    return d


def _put(d, sid, meta):
    (d / f"{sid}.argus").write_bytes(b"")
    if meta is not None:
        (d / f"{sid}.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))


def test_meta_fields_are_checked():
    assert S._check_meta(_meta("a"), "a")
    assert S._check_meta(_meta("a"), "b") is None                      # the id must be the file's
    assert S._check_meta(_meta("a", pid="10"), "a") is None
    assert S._check_meta(_meta("a", pid=True), "a") is None            # bool is not an int here
    assert S._check_meta(_meta("a", start_ns=-1), "a") is None
    assert S._check_meta(_meta("a", block_type="os.system"), "a") is None
    assert S._check_meta(_meta("a", end_ns=1), "a") is None            # ends before it starts
    assert S._check_meta([1, 2], "a") is None


def test_listing_oldest_first_damaged_kept(snapdir):
    _put(snapdir, "20261123T100000-7", _meta("20261123T100000-7"))
    _put(snapdir, "20261123T090000-5", _meta("20261123T090000-5", pid=5, tid=6))
    _put(snapdir, "20261123T110000-9", "{not json")
    _put(snapdir, "20261123T120000-1", None)                          # no metadata at all
    (snapdir / ".20261123T130000-2.argus.tmp").write_bytes(b"")        # being written: not listed
    (snapdir / "bad name.argus").write_bytes(b"")
    snaps = S.list_snapshots()
    assert [s for s, _ in snaps] == ["20261123T090000-5", "20261123T100000-7", "20261123T110000-9",
                                     "20261123T120000-1"]
    assert [m is None for _, m in snaps] == [False, False, True, True]
    out = S.to_json(snaps)["snapshots"]
    assert out[0]["tid"] == 6 and out[0]["dur_ns"] == 3_000_000_000 and out[0]["wait_reason"] == "read"
    assert out[2] == {"id": "20261123T110000-9", "damaged": True}
    text = S.render_text(snaps)
    assert "app (5)" in text and "LongWait (read)" in text and "damaged metadata" in text


def test_resolve(snapdir):
    _put(snapdir, "20261123T100000-7", _meta("20261123T100000-7"))
    _put(snapdir, "20261123T100000-8", _meta("20261123T100000-8"))
    _put(snapdir, "20261123T110000-9", "[]")
    path, meta = S.resolve("20261123T100000-7")
    assert path == os.path.join(str(snapdir), "20261123T100000-7.argus") and meta["pid"] == 10
    with pytest.raises(ArgusError, match="ambiguous"):
        S.resolve("20261123T1000")
    with pytest.raises(ArgusError, match="damaged"):
        S.resolve("20261123T11")
    with pytest.raises(ArgusError, match="no snapshot"):
        S.resolve("2030")
    for bad in ("../x", "a/b", "", "-x", "x" * 60):
        with pytest.raises(ArgusError, match="bad snapshot id"):
            S.resolve(bad)


def test_no_directory_lists_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "SNAPSHOT_DIR", str(tmp_path / "none"))
    assert S.list_snapshots() == []
    assert "no recorded hangs" in S.render_text([])


def test_hostile_metadata_files_are_damaged_not_fatal(snapdir):
    ids = [f"20261123T1200{i:02d}-1" for i in range(5)]
    _put(snapdir, ids[0], '{"schema": ' + "[" * 100_000 + "]" * 100_000 + "}")   # deep
    _put(snapdir, ids[1], json.dumps(_meta(ids[1], comm="x" * (S.MAX_META + 10))))  # too large
    _put(snapdir, ids[2], None)
    os.mkfifo(snapdir / f"{ids[2]}.json")                                          # a FIFO: no hang
    _put(snapdir, ids[3], None)
    os.symlink("/dev/zero", snapdir / f"{ids[3]}.json")                            # a link: refused
    _put(snapdir, ids[4], _meta(ids[4]))
    out = S.list_snapshots()
    assert [(sid, meta is None) for sid, meta in out] == [(i, i != ids[4]) for i in ids], out
