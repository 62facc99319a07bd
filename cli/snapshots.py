"""The flight recorder's snapshots: `argus hangs --recorded` and `argus debug
--snapshot ID` (docs/flight-recorder.md).

argusd's hang detector (tracer/daemon/hang_detector.c) freezes the ring's records
around each hang into STATE_DIR/snapshots/<id>.argus, a file in the ring
buffer format (so the loader's trust checks all apply), and <id>.json, what
the detector knew: pid, tid, names, start, length, its block type guess.

The .json is data, read with bounded_json.loads (at most MAX_META bytes and
64 levels deep, a regular file of root's or ours) and checked field by field; a snapshot whose metadata is missing, damaged or disagrees
with its types is listed as damaged, never trusted.  Ids are checked against
ID_RE before they name a file: an id never reaches a path with a '/' or '..'.
"""
import json
import os
import re

from argus.cli import bounded_json
from argus.cli.common import STATE_DIR, ArgusError
from argus.tracer import safe_files
from argus.diagnose.report import fmt_wall
from argus.tracer import schema

SNAPSHOT_DIR = os.path.join(STATE_DIR, "snapshots")
ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_-]{0,46}$")
MAX_META = 64 << 10
BLOCK_TYPES = ("LongWait", "LongRunning", "RepeatedYield")
_INT_FIELDS = ("pid", "tid", "start_ns", "end_ns", "detect_ns", "since_ns", "until_ns", "threshold_ns",
               "wait_reason", "run_ns", "wait_ns", "switches", "records", "created_ns", "created_realtime_ns")


def snapshot_dir():
    return SNAPSHOT_DIR


def _check_meta(meta, sid):
    """The metadata if every field has its type, else None."""
    if not isinstance(meta, dict) or meta.get("schema") != "argus.snapshot/1" or meta.get("id") != sid:
        return None
    for k in _INT_FIELDS:
        v = meta.get(k)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v >= 1 << 64:
            return None
    if not all(isinstance(meta.get(k), str) and len(meta[k]) <= 64 for k in ("comm", "process", "block_type")):
        return None
    if not isinstance(meta.get("ongoing"), bool) or meta["end_ns"] < meta["start_ns"]:
        return None
    if meta["block_type"] not in BLOCK_TYPES:
        return None
    return meta


def _open_dir():
    """A verified fd of the snapshot directory, or None when there is none."""
    try:
        return safe_files.open_dir(SNAPSHOT_DIR)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ArgusError(f"cannot read {SNAPSHOT_DIR}: {e.strerror}")


def _read_meta(dir_fd, sid):
    try:
        fd = safe_files.open_file(dir_fd, sid + ".json", shown=os.path.join(SNAPSHOT_DIR, sid + ".json"))
    except (OSError, ArgusError):
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_META + 1)
    if len(data) > MAX_META:
        return None
    try:
        return _check_meta(bounded_json.loads(data, MAX_META), sid)
    except bounded_json.InputError:
        return None


def list_snapshots():
    """[(id, meta or None)] oldest first (ids sort by the hang's start)."""
    fd = _open_dir()
    if fd is None:
        return []
    try:
        names = os.listdir(fd)
        ids = sorted(n[:-6] for n in names if n.endswith(".argus") and ID_RE.match(n[:-6]))
        return [(sid, _read_meta(fd, sid)) for sid in ids]
    finally:
        os.close(fd)


def resolve(sid):
    """(path of the snapshot's trace, its metadata) for an id or a unique
    prefix of one; ArgusError (one line) otherwise."""
    if not isinstance(sid, str) or not ID_RE.match(sid):
        raise ArgusError(f"bad snapshot id {sid!r}: `argus hangs --recorded` lists the ids")
    snaps = list_snapshots()
    exact = [s for s in snaps if s[0] == sid]
    match = exact or [s for s in snaps if s[0].startswith(sid)]
    if not match:
        raise ArgusError(f"no snapshot {sid} in {SNAPSHOT_DIR} (`argus hangs --recorded` lists them)")
    if len(match) > 1:
        raise ArgusError(f"snapshot id {sid} is ambiguous: " + ", ".join(s[0] for s in match[:5]))
    found, meta = match[0]
    if meta is None:
        raise ArgusError(f"snapshot {found}: its metadata {found}.json is missing or damaged")
    return os.path.join(SNAPSHOT_DIR, found + ".argus"), meta


def wall(meta, ts):
    """The wall-clock time of a trace timestamp, or '?' when the ring had none."""
    if not meta.get("created_realtime_ns"):
        return "?"
    return fmt_wall(ts, meta["created_realtime_ns"] - meta["created_ns"])


def to_json(snaps):
    out = []
    for sid, m in snaps:
        if m is None:
            out.append({"id": sid, "damaged": True})
            continue
        out.append({"id": sid, "pid": m["pid"], "tid": m["tid"], "process": m["process"], "comm": m["comm"],
                    "start_ns": m["start_ns"], "end_ns": m["end_ns"], "dur_ns": m["end_ns"] - m["start_ns"],
                    "ongoing": m["ongoing"], "start_wall": wall(m, m["start_ns"]),
                    "block_type_guess": m["block_type"],
                    "wait_reason": schema.WAIT_NAMES.get(m["wait_reason"], "unknown"),
                    "records": m["records"], "path": os.path.join(SNAPSHOT_DIR, sid + ".argus")})
    return {"schema": "argus.snapshots/1", "dir": SNAPSHOT_DIR, "snapshots": out}


def render_text(snaps):
    if not snaps:
        return f"no recorded hangs in {SNAPSHOT_DIR}\n"
    rows = [("ID", "PROCESS", "THREAD", "START", "LENGTH", "BLOCK TYPE (guess)")]
    for sid, m in snaps:
        if m is None:
            rows.append((sid, "?", "?", "?", "?", "damaged metadata"))
            continue
        dur = (m["end_ns"] - m["start_ns"]) / 1e9
        reason = schema.WAIT_NAMES.get(m["wait_reason"], "unknown")
        guess = m["block_type"] + (f" ({reason})" if m["block_type"] == "LongWait" else "")
        rows.append((sid, f"{m['process'] or '?'} ({m['pid']})", f"{m['comm'] or '?'} ({m['tid']})",
                     wall(m, m["start_ns"]), f"{dur:.1f} s" + (" ongoing" if m["ongoing"] else ""), guess))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.append(f"(argus debug --snapshot ID diagnoses one; files in {SNAPSHOT_DIR})")
    return "\n".join(lines) + "\n"
