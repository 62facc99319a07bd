"""Hangs from the ring index: `argus hangs` and the first line of `argus
debug` without decoding the buffer.

argusd writes, as the records go past, the long waits of every main thread
and the hang detector's spans out of an event loop (tracer/ringindex.py).
This module turns them into hangs and ranks them as candidates.py ranks the
graph's hangs, so a full 2 GiB buffer answers in the time it takes to read a
few MiB.

Algorithm, per main thread (tid == pid) of the index (a hang is an event
loop's when its own interval says so: argusd flags a wait that came after
the thread turned its loop, and the detector's spans):
  wait hangs     each blocking wait (one syscall, not a POLL or child wait:
                 argusd leaves those out) lasting >= threshold: kind "wait",
                 LongWait, its reason, syscall and object.
  span hangs     each span out of the thread's event loop lasting >=
                 threshold that holds no such wait: the detector's block type
                 guess over it (docs/flight-recorder.md); a LongWait guess is
                 a nested POLL wait (kind "wait", the span's longest wait's
                 reason), the others are kind "stretch".
  ongoing        an interval in the index's open table lasts until the
                 buffer's last record.
  clipped        a wait that began before the buffer's first record is left
                 out (the graph calls such a wait idle: its start is
                 unknown), a LongWait span too; another span is cut at the
                 buffer's start.
Ranking, as candidates.judge with what the index knows: dropped are the
tracer and Argus's own commands, kernel threads (argusd never indexes them),
a shell's hang other than LongRunning, waits for a child, a connection or a
signal, a read of standard input (a pipe or a terminal: the
graph tells which; both are idle), a sleep of a thread without a loop or one that recurs with the same
length (candidates.SIMILAR).  An open wait is not a hang by itself: a wait
in poll (a loop's second site: a launcher polling its children's pipes, an
idle loop the detector saw at another site) and, in a thread without an
event loop, a wait that recurs over the threshold in the same syscall on the
same object (a parent reading its child's output, a worker taking its next
job) rank in tier 2.  Tier 0 is the rest of a thread with an event loop:
out of its loop beyond the threshold, each time (an app whose synchronous
call hangs it again and again hangs each time); tier 1 a LongWait in a
syscall other than poll, tier 2 the rest.  Order: tier, latest end, longest, earliest
start.  What the index does not know (a window
without a loop, a read of a terminal or of a pipe on stdin) the graph decides
when the hang is diagnosed.

Invariants: a pure function of the index entries and the buffer's time
range; hangs of one thread never overlap (waits inside a span replace it).
"""
from dataclasses import dataclass, field

import numpy as np

from argus.diagnose import blocktype as B
from argus.diagnose import candidates as C
from argus.diagnose.bystanders import OWN_COMMS, SIGNAL_WAITS
from argus.diagnose.fmt import fmt_at, fmt_dur
from argus.diagnose.programs import SHELLS
from argus.tracer import ringindex as RI, schema, syscalls

STDIN = 0
DROPPED_REASONS = {schema.WAIT_CHILD: "it waits for its children",
                   schema.WAIT_ACCEPT: "an idle server waiting for a connection"}


@dataclass
class IndexHang:
    pid: int
    tid: int
    comm: str
    kind: str                 # "wait" | "stretch", as hangs.Hang
    block_type: str
    start_ns: int
    end_ns: int
    ongoing: bool
    reason: int               # schema.WAIT_*
    nr: int
    obj: int
    loop: bool                # the thread runs an event loop
    tier: int = None
    why: str = ""
    extra: dict = field(default_factory=dict)
    scope: dict = field(default_factory=dict)   # containers.process_scopes' entry, when known (index_answer)
    where: str = ""                             # containers.describe of it

    @property
    def dur_ns(self):
        return self.end_ns - self.start_ns

    def contains(self, ts):
        return self.start_ns <= ts <= self.end_ns

    def what(self):
        """The wait, as blocktype.wait_desc says it, or the span's guess."""
        sc = syscalls.name(self.nr)
        if self.kind == "stretch":
            return "out of its event loop"
        if self.reason == schema.WAIT_FUTEX:
            return f"futex 0x{self.obj:x}"
        if self.reason in (schema.WAIT_READ, schema.WAIT_WRITE, schema.WAIT_ACCEPT):
            return f"{sc}(fd {self.obj})"
        if self.reason == schema.WAIT_POLL:
            return f"{sc} (nested in the event loop)" if sc != "-" else "poll (nested in the event loop)"
        if sc != "-":
            return sc
        return schema.WAIT_NAMES.get(self.reason, "wait")

    def to_dict(self):
        return {"pid": self.pid, "tid": self.tid, "comm": self.comm, "process": self.comm, "main": True,
                "kind": self.kind, "block_type": self.block_type, "start_ns": self.start_ns,
                "end_ns": self.end_ns, "dur_ns": self.dur_ns, "ongoing": self.ongoing,
                **self.scope, "wait": self.what(), "source": "index",
                **({"candidate": {"tier": self.tier, "why": self.why}} if self.tier is not None else {})}


def _comm(raw):
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def _subtract(span, waits):
    """The parts of span (a, b) outside the intervals waits, in order."""
    a, b = span
    out = []
    for ws, we in sorted(waits):
        if ws > a:
            out.append((a, min(ws, b)))
        a = max(a, we)
    if a < b:
        out.append((a, b))
    return out


def index_hangs(entries, threshold_ns, first_ts, last_ts):
    """Every hang >= threshold_ns the index entries show, in time order
    (module doc); intervals are clipped to the buffer's [first_ts, last_ts]."""
    if not len(entries):
        return []
    e = entries[(entries["pid"] == entries["tid"]) & (entries["end_ns"] >= first_ts)]
    out = []
    for tid in np.unique(e["tid"]).tolist():
        t = e[e["tid"] == tid]
        comm = next((c for c in map(_comm, t["comm"][::-1].tolist()) if c), "?")

        def hang(kind, bt, a, b, ongoing, reason, nr, obj, flags):
            # loop: this interval's own flag (argusd: the thread turned its loop just before it)
            return IndexHang(int(t["pid"][0]), int(tid), comm, kind, bt, int(a), int(b), bool(ongoing),
                             int(reason), int(nr), int(obj), bool(flags & RI.FLAG_LOOP))

        long_waits = []
        for r in t[(t["kind"] == RI.KIND_WAIT) & (t["start_ns"] >= first_ts)]:
            ongoing = bool(r["flags"] & RI.FLAG_ONGOING)
            a, b = int(r["start_ns"]), (last_ts if ongoing else min(int(r["end_ns"]), last_ts))
            if b - a >= threshold_ns:
                long_waits.append((a, b))
                out.append(hang("wait", B.LONG_WAIT, a, b, ongoing, r["reason"], r["nr"], r["obj"], r["flags"]))
        for r in t[t["kind"] == RI.KIND_OUT_OF_LOOP]:
            ongoing = bool(r["flags"] & RI.FLAG_ONGOING)
            a, b = max(int(r["start_ns"]), first_ts), (last_ts if ongoing else min(int(r["end_ns"]), last_ts))
            inside = [(ws, we) for ws, we in long_waits if ws < b and we > a]
            bt = RI.GUESS_NAMES.get(int(r["guess"]), B.LONG_RUNNING)
            for pa, pb in (_subtract((a, b), inside) if inside else [(a, b)]):
                if pb - pa < threshold_ns or (inside and bt == B.LONG_WAIT):
                    continue
                if bt == B.LONG_WAIT and pa == first_ts and int(r["start_ns"]) < first_ts:
                    continue        # a wait from before the buffer, as above: its start is unknown
                kind = "wait" if bt == B.LONG_WAIT else "stretch"
                out.append(hang(kind, bt, pa, pb, ongoing and pb == b, r["reason"], schema.SYSCALL_NONE, 0,
                                r["flags"]))
    out.sort(key=lambda h: (h.start_ns, h.tid))
    return out


def _site(h):
    """The syscall site of a wait hang (None: a span or no syscall)."""
    return (h.tid, h.reason, h.nr, h.obj) if h.kind == "wait" and h.nr != schema.SYSCALL_NONE else None


def judge(h, sleeps, sites=None):
    """(tier, why) of an IndexHang, or (None, reason): candidates.judge with
    what the index knows (module doc).  sleeps: {tid: [sleep durations]};
    sites: {_site: how many of the hangs wait there}."""
    if h.comm in C.TRACER_COMMS:
        return None, "the tracer"
    if h.comm in OWN_COMMS:
        return None, "Argus itself"
    if h.pid == C.KTHREADD_PID:
        return None, "a kernel thread"
    if h.comm in SHELLS and h.block_type != B.LONG_RUNNING:
        return None, "a shell waiting for its script, terminal or children"
    if h.kind == "wait":
        if h.reason in (schema.WAIT_PREEMPTED, schema.WAIT_YIELD):
            # off the CPU without waiting (a stopped or traced task keeps its last reason): no wait
            return None, "not waiting"
        if h.reason in DROPPED_REASONS:
            return None, DROPPED_REASONS[h.reason]
        if syscalls.name(h.nr) in SIGNAL_WAITS:
            return None, "it waits for a signal (a launcher waiting for its child)"
        if h.reason == schema.WAIT_READ and h.obj == STDIN and h.nr != schema.SYSCALL_NONE:
            # (a span's wait has no fd: obj 0 there is no standard input)
            # a pipe (a pipeline stage) or a terminal (the user): either way idle (bystanders.py)
            return None, "waiting for its standard input"
    if h.kind == "wait" and h.reason == schema.WAIT_SLEEP:
        same = sum(1 for s in sleeps.get(h.tid, []) if abs(s - h.dur_ns) <= C.SIMILAR * h.dur_ns)
        if not h.loop or same > 1:
            return None, "it merely sleeps"
        return 2, "a sleep in an event loop"
    if h.kind == "wait" and h.reason == schema.WAIT_POLL:
        return 2, "it waits in a poll of its own: an idle loop is no hang by itself"
    routine = (sites or {}).get(_site(h), 0)
    if routine > 1 and not h.loop:
        return 2, f"it waits there routinely ({routine} waits over the threshold in {h.what()})"
    if h.loop:
        return 0, "event loop"
    if h.block_type == B.LONG_WAIT and h.kind == "wait" and h.reason not in (schema.WAIT_NONE, schema.WAIT_POLL) \
            and h.nr != schema.SYSCALL_NONE:
        return 1, "synchronous wait"
    return 2, "other"


def rank(hangs, at=None):
    """The kept hangs, tier and why set, best first (candidates.rank's order)."""
    sleeps, sites = {}, {}
    for h in hangs:
        if h.kind == "wait" and h.reason == schema.WAIT_SLEEP:
            sleeps.setdefault(h.tid, []).append(h.dur_ns)
        if _site(h) is not None:
            sites[_site(h)] = sites.get(_site(h), 0) + 1
    out = []
    for h in hangs:
        if at is not None and not h.contains(at):
            continue
        h.tier, h.why = judge(h, sleeps, sites)
        if h.tier is not None:
            out.append(h)
    out.sort(key=lambda h: (h.tier, -h.end_ns, -h.dur_ns, h.start_ns))
    return out


def listed(hangs, top, event_loops_only=True):
    """`argus hangs` without --pid: the top longest of the ranked hangs
    (tiers 0 and 1 unless event_loops_only is False)."""
    keep = [h for h in rank(hangs) if h.tier <= 1 or not event_loops_only]
    return sorted(keep, key=lambda h: (-h.dur_ns, h.start_ns))[:top]


def ambiguous(ranked):
    """candidates.ambiguous for IndexHangs."""
    if not ranked:
        return False
    first = ranked[0]
    if first.tier == 2 and len(ranked) > 1:
        return True
    return any(h.tier == first.tier and h.tid != first.tid for h in ranked[1:])


def render_text(hangs, origin, wall_offset):
    """`argus hangs` from the index: the columns of report.render_hangs_text."""
    if not hangs:
        return "no hangs\n"
    where = any(h.where for h in hangs)     # a column only when known, as report.render_hangs_text
    rows = [("process",) + (("where",) if where else ()) +
            ("thread", "kind", "block type", "start", "duration", "what", "why listed")]
    for h in hangs:
        rows.append((f"{h.comm}/{h.pid}",) + ((h.where or "-",) if where else ()) + (f"{h.comm}/{h.tid} main",
                     h.kind, h.block_type,
                     fmt_at(h.start_ns, origin, wall_offset), fmt_dur(h.dur_ns) + (" (ongoing)" if h.ongoing else ""),
                     h.what(), h.why or "-"))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "".join("  ".join(c.ljust(widths[k]) for k, c in enumerate(r)).rstrip() + "\n" for r in rows)


def first_line(h, origin, wall_offset):
    """The line `argus debug` prints as soon as the index named the hang."""
    return (f"argus: the hang of {h.comm}/{h.pid}{f' [{h.where}]' if h.where else ''} (thread {h.tid}): "
            f"{h.block_type} for {fmt_dur(h.dur_ns)}"
            f"{' (ongoing)' if h.ongoing else ''} from {fmt_at(h.start_ns, origin, wall_offset)}, "
            f"{h.what()} -- {h.why}; loading the window around it")
