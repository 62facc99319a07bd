"""Which hang `argus debug` explains without --pid: the candidates ranked as a
user would rank them.

Algorithm: the input is the hang candidates (hangs.thread_hangs) of every
process's main thread.  Each thread is first described from the trace:
  interactive  it runs an event loop (>= MIN_LOOP_POLLS poll / epoll /
               select waits) or has a window: a unix socket whose peer is
               held by an X server / Wayland compositor (FD_INFO: the peer
               inode is the `local` of a display server's socket), or, while
               the socket still exists on this machine, whose peer is bound
               under /tmp/.X11-unix or to a wayland-N socket (/proc/net/unix)
  shell        comm is a shell, or it reads fd 255 (bash keeps its script there)
  kernel       a kernel thread (kthreadd, pid 2, or its children)
Then every hang is dropped or put in a tier:
  dropped  the tracer itself; kernel threads (no user to wait for them);
           bystanders (bystanders.py: waits for children, a signal, a
           connection, a pipeline's input; Argus's own commands);
           a shell's hang other than LongRunning: it waits for its script, its
           terminal or its children, and the work is elsewhere;
           a thread that merely sleeps: a sleep (nanosleep family) that
           recurs with the same length (within SIMILAR), or any sleep of a
           non-interactive thread (a one-off sleep of an interactive thread
           is tier 2); a RepeatedYield stretch without yields
           or data-flag reads whose syscalls are mostly sleeps / child waits
           (>= SLEEP_SHARE): a periodic timer loop, not a hang;
           a read of a terminal (waiting for the user's input is idleness)
  tier 0   a hang of an interactive thread
  tier 1   a synchronous wait of another thread: LongWait in a syscall
           (futex, read, write, accept, child, I/O)
  tier 2   anything else (busy work of a batch process, polling, a
           one-off sleep of an interactive thread)
Order: tier, then the most recent end (an ongoing hang ends at trace end),
then the longest.  The choice is clear when the first candidate's tier holds
no other thread's hang (ambiguous(): then the CLI shows the top three).

Invariant: rank() returns each kept hang once, best first; a hang's tier
depends only on its thread and itself, never on the other candidates.
"""
from dataclasses import dataclass
import re

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose import blocktype as B
from argus.diagnose.bystanders import bystander
from argus.diagnose.programs import SHELLS

BASH_SCRIPT_FD = 255               # bash reads its script through this fd (shell.h: the highest it dup2s to)
DISPLAY_SERVERS = frozenset(("Xorg", "X", "Xvfb", "Xwayland", "Xephyr", "Xvnc", "Xnest", "Xtigervnc",
                             "weston", "sway", "gnome-shell", "kwin_wayland", "kwin_x11", "mutter",
                             "Hyprland", "labwc", "wayfire", "cage", "river", "niri"))
DISPLAY_SOCKET = re.compile(r"/\.X11-unix/X\d+$|(^|/)wayland-\d+$")
KTHREADD_PID = 2
SIMILAR = 0.1                      # sleeps within 10 % of each other's length are one period
SLEEP_SHARE = 0.5
SLEEP_SYSCALLS = frozenset(("nanosleep", "clock_nanosleep", "wait4", "waitid", "pause", "alarm", "setitimer"))
AF_UNIX = 1
TIER_NAMES = {0: "interactive (event loop / window)", 1: "synchronous wait", 2: "other"}


@dataclass
class Candidate:
    hang: object                   # hangs.Hang
    tier: int
    why: str                       # the thread's class, for the list the CLI shows


def _fd_rows(g):
    r = g.rows
    return r[r["type"] == schema.FD_INFO]


def unix_socket_paths():
    """{inode: path} of this machine's bound unix sockets (/proc/net/unix),
    empty when unreadable."""
    out = {}
    try:
        with open("/proc/net/unix") as f:
            next(f, None)
            for line in f:
                parts = line.split()
                if len(parts) >= 8:
                    out[int(parts[6])] = parts[7]
    except (OSError, ValueError):
        pass
    return out


def display_clients(g, socket_paths=None, fds=None):
    """pids with a unix socket connected to an X server / Wayland compositor."""
    fds = _fd_rows(g) if fds is None else fds
    col = {f: schema.column(schema.FD_INFO, f) for f in ("kind", "family", "local", "peer")}
    fds = fds[(fds[col["kind"]] == schema.FD_SOCKET) & (fds[col["family"]] == AF_UNIX)]
    if not len(fds):
        return set()
    owner = {int(l): int(p) for l, p in zip(fds[col["local"]].tolist(), fds["pid"].tolist())}
    paths = unix_socket_paths() if socket_paths is None else socket_paths
    out = set()
    for pid, peer in zip(fds["pid"].tolist(), (fds[col["peer"]].astype(np.uint64)).tolist()):
        if not peer:
            continue
        server = owner.get(int(peer))
        if (server is not None and server != pid and g.process_name(server) in DISPLAY_SERVERS) or \
                DISPLAY_SOCKET.search(paths.get(int(peer), "").lstrip("@")):
            out.add(int(pid))
    return out


def script_readers(g):
    """pids that read fd BASH_SCRIPT_FD (bash running a script)."""
    r = g.rows
    sel = (r["type"] == schema.SYSCALL_ENTER) & (r["obj"] == BASH_SCRIPT_FD)
    reads = [nr for nr in np.unique(r["nr"][sel]).tolist() if g.syscall_name(nr) == "read"]
    sel &= np.isin(r["nr"], reads)
    return {int(p) for p in np.unique(r["pid"][sel]).tolist()}


TRACER_COMMS = ("argusd",)
MIN_LOOP_POLLS = 5


def event_loop_threads(g):
    """utids of main threads (tid == pid) with an event loop: at least
    MIN_LOOP_POLLS POLL waits (epoll / poll / select) in the trace, the
    tracer excluded.  Kernel threads, batch jobs and shells waiting for a
    command (one pselect per prompt) have fewer: a long wait there is
    idleness or work, not a hang of an event loop."""
    seg = g.seg
    u, n = np.unique(seg.utid[(seg.end_kind == G.END_BLOCKED) & (seg.wait_reason == schema.WAIT_POLL)
                              & seg.wait_known], return_counts=True)
    looping = set(u[n >= MIN_LOOP_POLLS].tolist())
    tid, pid = g.threads.tid, g.threads.pid
    return [u for u in np.flatnonzero(tid == pid).tolist() if u in looping and g.comm(u) not in TRACER_COMMS]


class Traits:
    """What the trace says about the main threads (computed once per graph)."""

    def __init__(self, g, socket_paths=None):
        self.loops = set(event_loop_threads(g))
        self._fds = _fd_rows(g)
        self.gui = display_clients(g, socket_paths, self._fds)
        self.scripts = script_readers(g)

    def interactive(self, g, utid):
        return utid in self.loops or int(g.threads.pid[utid]) in self.gui

    def shell(self, g, utid):
        pid = int(g.threads.pid[utid])
        return g.comm(utid) in SHELLS or g.process_name(pid) in SHELLS or pid in self.scripts

    def fd_kind(self, pid, fd, ts):
        """The kind of (pid, fd) from the latest FD_INFO at or before ts, or None."""
        f = self._fds
        sel = (f["pid"] == pid) & (f[schema.column(schema.FD_INFO, "fd")] == fd) & (f["ts_ns"] <= ts)
        kinds = f[schema.column(schema.FD_INFO, "kind")][sel]
        return int(kinds[-1]) if len(kinds) else None


def _kernel_thread(g, pid):
    p = g.processes.get(int(pid)) or {}
    return int(pid) == KTHREADD_PID or p.get("ppid") == KTHREADD_PID


def _periodic_sleep(g, h):
    """Another sleep of the thread lasts as long (within SIMILAR)."""
    seg = g.seg
    lo, hi = int(g.thread_seg_lo[h.utid]), int(g.thread_seg_hi[h.utid])
    s = slice(lo, hi)
    dur = (seg.wait_end[s] - seg.wait_start[s]).astype(np.int64)
    sleeps = seg.wait_known[s] & (seg.wait_reason[s] == schema.WAIT_SLEEP) & (dur > 0)
    sleeps[h.vertex - lo] = False
    d = h.dur_ns
    return bool(np.any(sleeps & (np.abs(dur - d) <= SIMILAR * d)))


def _mostly_sleeps(g, h):
    """A RepeatedYield stretch that only sleeps: no yield, no data-flag read,
    and sleep / child-wait syscalls are at least SLEEP_SHARE of its syscalls."""
    ev = h.classification.evidence
    if ev.get("yields") or B.flag_reads(g, h.utid, h.start_ns, h.end_ns):
        return False
    idx = g.thread_rows_of(h.utid, h.start_ns, h.end_ns)
    typ = g.rows["type"][idx]                 # two columns, not whole rows: busy threads have millions
    nrs, counts = np.unique(g.rows["nr"][idx][typ == schema.SYSCALL_ENTER], return_counts=True)
    total = int(counts.sum())
    sleeps = sum(int(n) for nr, n in zip(nrs.tolist(), counts.tolist()) if g.syscall_name(nr) in SLEEP_SYSCALLS)
    return total > 0 and sleeps >= SLEEP_SHARE * total


def judge(g, h, traits):
    """(tier, why) for hang h, or (None, reason) when it is no candidate."""
    pid = int(h.pid)
    if g.comm(h.utid) in TRACER_COMMS:
        return None, "the tracer"
    if _kernel_thread(g, pid):
        return None, "a kernel thread"
    if traits.shell(g, h.utid) and h.block_type != B.LONG_RUNNING:
        return None, "a shell waiting for its script, terminal or children"
    if h.kind == "wait":
        why = bystander(g, h.vertex)
        if why:
            return None, why
    interactive = traits.interactive(g, h.utid)
    v = h.vertex
    reason = int(g.seg.wait_reason[v]) if h.kind == "wait" and g.seg.wait_known[v] else None
    if reason == schema.WAIT_SLEEP:
        if not interactive or _periodic_sleep(g, h):
            return None, "it merely sleeps"
        return 2, "a sleep in an event loop"      # freezes it, but a deliberate sleep is rarely the question
    if reason == schema.WAIT_READ and traits.fd_kind(pid, int(g.seg.wait_obj[v]), h.start_ns) == schema.FD_TTY:
        return None, "waiting for input from a terminal"
    if h.kind == "stretch" and h.block_type == B.REPEATED_YIELD and _mostly_sleeps(g, h):
        return None, "it merely sleeps periodically"
    if interactive:
        return 0, "event loop" if h.utid in traits.loops else "has a window (X / Wayland connection)"
    if h.block_type == B.LONG_WAIT and reason is not None and reason != schema.WAIT_POLL \
            and g.seg.wait_nr[v] != schema.SYSCALL_NONE:
        return 1, "synchronous wait"
    return 2, "other"


def rank(g, hangs, at=None, traits=None):
    """The kept hangs as Candidates, best first (see the module doc); with
    `at`, only those containing it."""
    traits = traits or Traits(g)
    out = []
    for h in hangs:
        if at is not None and not h.contains(at):
            continue
        tier, why = judge(g, h, traits)
        if tier is not None:
            out.append(Candidate(h, tier, why))
    out.sort(key=lambda c: (c.tier, -c.hang.end_ns, -c.hang.dur_ns, c.hang.start_ns))
    return out


def ambiguous(ranked):
    """Whether the first candidate is not the obvious one: another thread's
    hang shares its tier, or it is only tier 2."""
    if not ranked:
        return False
    first = ranked[0]
    if first.tier == 2 and len(ranked) > 1:
        return True
    return any(c.tier == first.tier and c.hang.utid != first.hang.utid for c in ranked[1:])


def top_threads(ranked, n=3):
    """The best candidate of each of the first n threads."""
    seen, out = set(), []
    for c in ranked:
        if c.hang.utid not in seen:
            seen.add(c.hang.utid)
            out.append(c)
            if len(out) == n:
                break
    return out
