"""`argus hangs` and `argus debug` without --pid, answered from the ring
index (tracer/ringindex.py, diagnose/indexed.py) instead of a decode.

When the index can answer: the buffer has one (argusd writes it beside the
snapshots while its hang detector runs), it is the index of this buffer
(inode and creation stamp), it covers the buffer's whole time range (it has
not wrapped past the buffer's oldest record, and argusd did not start on a
buffer that already held records), and --threshold is at least the shortest
interval it keeps.  Otherwise these return None and the caller decodes, as
before.  A damaged or unsafe index is said in one line on stderr, then the
caller decodes.

Where a listed process lives (its container, cgroup, network namespace: the
"where" column of the decoded listing) comes from /proc when the buffer was
recorded in this boot of this host and the process still runs
(containers.live_scope: same comm, started before its hang); else it is not
shown.  The buffer's PROC_NS records say it for any process, but reading
them means reading the whole buffer.

Invariant: nothing here decodes the buffer: the index's few MiB, the
buffer's header and three /proc files per listed process are all that is
read.
"""
import json
import os
import sys

from argus.cli import snapshots
from argus.diagnose import indexed
from argus.diagnose.fmt import fmt_dur
from argus.tracer import containers, reader, ringindex, safe_files
from argus.tracer.textsafe import safe, safe_lines

COVER_SLACK_NS = 1_000_000_000   # argusd's first records (its /proc snapshot) come before its index opens
WINDOW_MARGIN_NS = 500_000_000    # decoded around the hang: its start, and quick instances before it


class Answer:
    """What the index says about a buffer: the buffer's stats and its hangs."""

    def __init__(self, path, st, idx, threshold_ns):
        self.path, self.st, self.idx = path, st, idx
        self.first_ts, self.last_ts = int(st["first_ts"]), int(st["last_ts"])
        self.origin = self.first_ts
        rt = int(st.get("created_realtime_ns") or 0)
        self.wall_offset = rt - int(st["created_ns"]) if rt else None
        self.hangs = indexed.index_hangs(idx.entries, threshold_ns, self.first_ts, self.last_ts)


def load(path, threshold_ns):
    """An Answer, or None when the index cannot answer for this buffer (module doc)."""
    try:
        st = reader.buffer_stats(path)
    except reader.TraceError:
        return None                     # the decode path reports it
    try:
        dir_fd = safe_files.open_dir(snapshots.snapshot_dir())
    except safe_files.UnsafePath as e:  # an unsafe directory is said, not read
        print(safe_lines(f"argus: not reading the ring index: {e}"), file=sys.stderr)
        return None
    except OSError:
        return None
    name = ringindex.index_name(path)
    try:
        idx = ringindex.read_index(dir_fd, name, path, st["created_ns"],
                                   shown=os.path.join(snapshots.snapshot_dir(), name))
    except reader.TraceError as e:
        print(safe_lines(f"argus: ignoring the ring index: {e}; decoding instead"), file=sys.stderr)
        return None
    finally:
        os.close(dir_fd)
    if idx is None or threshold_ns < idx.min_ns or not idx.covers(int(st["first_ts"]) + COVER_SLACK_NS):
        return None
    return Answer(path, st, idx, threshold_ns)


def this_boot_id(path="/proc/sys/kernel/random/boot_id"):
    """This host's boot id in the UUID form buffer headers are read in, "" when unreadable."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def add_where(st, hangs):
    """Set each hang's scope and where from /proc (module doc) when the
    buffer was recorded in this boot; the namespace is said only when the
    listed processes live in more than one, as graph.process_where."""
    if not st.get("boot_id") or st["boot_id"] != this_boot_id():
        return
    for h in hangs:             # per hang: the same pid may be two processes over the trace
        h.scope = containers.live_scope(h.pid, h.comm, h.start_ns)
    many = len({h.scope.get("netns") for h in hangs if h.scope.get("netns")}) > 1
    for h in hangs:
        h.where = containers.describe(h.scope, netns=many)


def run_hangs(args, path, threshold_ns):
    """`argus hangs` (no --pid, no --window, no --all) from the index: an
    exit code, or None when the index cannot answer."""
    ans = load(path, threshold_ns)
    if ans is None:
        return None
    hangs = indexed.listed(ans.hangs, args.top)
    add_where(ans.st, hangs)
    events = reader.event_counts(ans.st)["present"]
    span = (ans.last_ts - ans.first_ts) / 1e9
    print(f"argus: listed from the ring index of {safe(path)} (argusd's record of long waits over all "
          f"{span:.1f} s, {events:,} events, none decoded); --window SECONDS decodes instead", file=sys.stderr)
    if args.json:
        print(json.dumps({"schema": "argus.hangs/1", "hangs": [h.to_dict() for h in hangs],
                          "trace": {"start_ns": ans.first_ts, "end_ns": ans.last_ts, "origin_ns": ans.origin,
                                    "wall_offset_ns": ans.wall_offset, "events": events, "source": "index"}}))
    else:
        sys.stdout.write(safe_lines(indexed.render_text(hangs, ans.origin, ans.wall_offset)).rstrip("\n") + "\n")
    return 0


def pick(path, threshold_ns, skip=()):
    """`argus debug` without --pid: (IndexHang, window half-width ns) of the
    hang to explain, its first line already on stderr (and the top three
    when the choice is not clear), or None when the index cannot answer or
    holds no candidate (the caller decodes).  skip: tids whose hang the
    graph did not confirm (the next candidate's line says so)."""
    ans = load(path, threshold_ns)
    if ans is None:
        return None
    ranked = [c for c in indexed.rank(ans.hangs) if c.tid not in skip]
    if not ranked:
        return None
    h = ranked[0]
    add_where(ans.st, [h])
    print(safe_lines(indexed.first_line(h, ans.origin, ans.wall_offset)), file=sys.stderr, flush=True)
    if indexed.ambiguous(ranked) and not skip:
        seen, lines = set(), []
        for c in ranked:
            if c.tid in seen:
                continue
            seen.add(c.tid)
            lines.append(f"  {len(lines) + 1}. {c.comm}/{c.pid}: {c.block_type} for {fmt_dur(c.dur_ns)}"
                         f"{' (ongoing)' if c.ongoing else ''} -- {c.why}")
            if len(lines) == 3:
                break
        print(safe_lines(f"argus: {len(lines)} likely hangs; explaining the first (pass --pid PID for another):\n"
                         + "\n".join(lines)), file=sys.stderr, flush=True)
    return h, h.dur_ns // 2 + WINDOW_MARGIN_NS
