"""Object identity of a wait, and who holds the other end of it.

A blocked thread waits on a kernel object, not on a number: fd 3 at start-up
was one of the interpreter's files and later a pipe to a child; a futex
address means something only inside one address space.  So "the same
object" (baselines, channels) and "the other end" (an ongoing wait) are
keyed by the object itself:

  fd waits    (read, write, accept, poll on one fd, ...): the FD_INFO record
              of (pid, fd) that was current at the wait (the latest at or
              before its end; the tracer writes one when a (pid, fd, inode)
              is first used).  Key: (kind, local) for pipes, eventfds, files,
              ttys (a pipe's two ends share the inode), (kind, local, peer)
              for sockets (one connection: a TCP server's accepted sockets
              share their local end).
  futex       ("futex", pid, address): threads of one process share the
              address space.
  child wait  ("child", pid): wait4 / waitid of a process.
  otherwise   None: unknown, never "the same" as anything.

Who holds the other end (other_end_holders), for a wait that no task's
wakeup ended (still going on at trace end, or ended by the kernel), ranked:
  1. peers known from FD_INFO: a pipe's or eventfd's other holders (other
     processes with the same object), a unix socket's peer (the process whose
     end's local is our peer), a TCP/UDP peer (local and peer swapped);
  2. the waiter's descendants alive at the wait (they inherited its fds: a
     forked child computing before it writes has never used the fd, so the
     tracer has no FD_INFO of it), for pipes, sockets and child waits (a
     waitpid that names one child: that child only); for an fd, only
     those that exchanged a wakeup or message with the waiter's process
     since their fork (talked_with: a worker that reported to its parent
     or took work from it is part of its protocol);
  3. its siblings alive at the wait when its parent is a shell (a
     pipeline: both stages are the shell's children), for pipes only; not
     under any parent, since a runner or supervisor has many unrelated
     children;
  4. when FD_INFO shows nobody at the other end: the waiter's own other
     threads that exchanged a wakeup or message with it (a socketpair or
     pipe between threads, the other end not yet used);
  5. for an fd, the descendants that exchanged nothing with the waiter's
     process since their fork: they inherited every fd, and nothing else
     ties them to this one (an unrelated load generator, a helper; the
     child of a single-threaded parent that computes before it writes is
     still found, as nothing ranks before it);
  6. as 4, the waiter's other threads that never dealt with it (an idle
     pool worker parked on its condition variable).
The holder thread of a process is the one that used the object last
(FD_INFO's tid: a daemon's main thread that reads requests and hands them
on, a per-connection handler), else its busiest thread in the window.
polled_holders does the same for a thread that polls channels with
non-blocking reads between sleeps (RepeatedYield): the fds whose reads
found nothing (-EAGAIN) at least MIN_TRIES times in the window, most
tried first; then, for one that polls for a child's exit (wait4 with
WNOHANG that found none, polled_children), the child it names.
Inside a rank, the holder with the most CPU in the window comes first, then
the lowest utid (a fixed rule, so answers are stable).  Each
holder is a weak ownership.Owner of kind "channel_peer" / "child" with no
graph edge (edge -1), at its segment at the end of the wait.

Invariants: a key never contains an fd number; the waiter itself is never
a holder (another thread of its process may be, when FD_INFO shows it using
the other end); at most one Owner per holder process.
"""
import numpy as np

from argus.tracer import schema, syscalls
from argus.graphbuild.graph import EDGE_MESSAGE, EDGE_WAKEUP
from argus.diagnose import blocktype as B
from argus.diagnose.ownership import Owner
from argus.diagnose.programs import SHELLS

FD_WAITS = (schema.WAIT_READ, schema.WAIT_WRITE, schema.WAIT_ACCEPT, schema.WAIT_POLL)
CHANNEL_KINDS = (schema.FD_PIPE, schema.FD_SOCKET, schema.FD_EVENTFD)
KIND_PEER, KIND_CHILD = "channel_peer", "child"
AF_UNIX = 1
_COLS = ("fd", "kind", "family", "local", "peer")


class FdTable:
    """The trace's FD_INFO records as columns, in time order (built once per graph)."""

    def __init__(self, g):
        r = g.rows
        f = r[r["type"] == schema.FD_INFO]
        f = f[np.argsort(f["ts_ns"], kind="stable")]
        self.ts = f["ts_ns"].astype(np.int64)
        self.pid = f["pid"].astype(np.int64)
        self.tid = f["tid"].astype(np.int64)
        c = {k: schema.column(schema.FD_INFO, k) for k in _COLS}
        self.fd = f[c["fd"]].astype(np.int64)
        self.kind = f[c["kind"]].astype(np.int64)
        self.family = f[c["family"]].astype(np.int64)
        self.local = f[c["local"]].astype(np.uint64)
        self.peer = f[c["peer"]].astype(np.uint64)
        self._index = None

    def at(self, pid, fd, ts, polled=False):
        """Index of the latest record of (pid, fd) at or before ts, or -1.
        polled: the fd was waited on by poll / select / epoll, or a
        non-blocking read of it found nothing - which a regular file never
        does (it is always ready): a regular file as its latest record
        means the number was closed and reused without a record of what it
        became (select's fds are not recorded), so that answers -1,
        unknown, not "a file"."""
        rows = self._rows(pid, fd)
        k = int(np.searchsorted(self.ts[rows], ts, side="right")) - 1
        if k < 0 or (polled and self.kind[rows[k]] == schema.FD_REGULAR):
            return -1
        return int(rows[k])

    def _rows(self, pid, fd):
        """Indices of (pid, fd)'s records in time order (grouped once: a
        diagnosis looks up many fds, and a trace holds many records)."""
        if self._index is None:
            order = np.lexsort((self.ts, self.fd, self.pid))
            keys = np.stack([self.pid[order], self.fd[order]], axis=1)
            cut = np.flatnonzero(np.any(keys[1:] != keys[:-1], axis=1)) + 1
            self._index = {(int(grp[0, 0]), int(grp[0, 1])): idx
                           for grp, idx in zip(np.split(keys, cut), np.split(order, cut)) if len(idx)}
        return self._index.get((int(pid), int(fd)), np.empty(0, dtype=np.int64))


def fd_table(g):
    t = g.derived.fd_table
    if t is None:
        t = g.derived.fd_table = FdTable(g)
    return t


def _key(t, i):
    kind = int(t.kind[i])
    if kind == schema.FD_SOCKET:
        return (kind, int(t.local[i]), int(t.peer[i]))
    return (kind, int(t.local[i]))


def waited_fd(g, v):
    """The fd segment v waits on (the first of a poll set), or None."""
    seg = g.seg
    if not seg.wait_known[v] or int(seg.wait_reason[v]) not in FD_WAITS:
        return None
    fds = g.wait_fds(v) if int(seg.wait_reason[v]) == schema.WAIT_POLL else []
    fd = fds[0][0] if fds else int(seg.wait_obj[v])
    return fd if 0 <= fd < (1 << 31) else None


def _fd_record(g, v):
    fd = waited_fd(g, v)
    if fd is None:
        return None, -1
    t = fd_table(g)
    pid = int(g.threads.pid[int(g.seg.utid[v])])
    return t, t.at(pid, fd, int(g.seg.wait_end[v]), polled=int(g.seg.wait_reason[v]) == schema.WAIT_POLL)



def wait_identity(g, v):
    """The kernel object segment v waits on, as a hashable key (see the top), or None."""
    seg = g.seg
    if not seg.wait_known[v]:
        return None
    reason = int(seg.wait_reason[v])
    pid = int(g.threads.pid[int(seg.utid[v])])
    if reason == schema.WAIT_FUTEX:
        return ("futex", pid, int(seg.wait_obj[v]))
    if reason == schema.WAIT_CHILD:
        return ("child", pid)
    t, i = _fd_record(g, v)
    return _key(t, i) if i >= 0 else None


def _alive(g, pid, ts, until=None):
    """pid had a thread alive at ts (or at some time in [ts, until])."""
    until = ts if until is None else until
    us = g.utids_of_pid(pid)
    th = g.threads
    return any(th.start_ts[u] <= until and (th.end_ts[u] < 0 or th.end_ts[u] >= ts) for u in us)


def _children(g):
    kids = g.derived.children
    if kids is None:
        kids = {}
        for pid, p in g.processes.items():
            kids.setdefault(int(p.get("ppid") or 0), []).append(int(pid))
        g.derived.children = kids
    return kids


def descendants(g, pid):
    kids, out, todo = _children(g), [], [int(pid)]
    while todo and len(out) < 4096:
        for c in kids.get(todo.pop(), ()):
            if c != pid and c not in out:
                out.append(c)
                todo.append(c)
    return out


def _peer_pids(g, pid, fd, at, tid=None, polled=False):
    """(kind, {pid: tid that used it last}) of the processes FD_INFO shows at
    the other end of (pid, fd) as of `at` (rank 1); kind None when unknown.
    The waiter's own process counts when another of its threads used the
    other end (a socketpair or pipe between two threads): only the waiter's
    own fd and the waiter (tid) itself are left out."""
    t = fd_table(g)
    i = t.at(pid, fd, at, polled)
    if i < 0:
        return None, {}
    kind, local, peer = int(t.kind[i]), t.local[i], t.peer[i]
    if kind not in CHANNEL_KINDS:
        return kind, {}
    if kind == schema.FD_SOCKET:
        if not peer:
            return kind, {}
        sel = (t.kind == kind) & (t.local == peer)
        if int(t.family[i]) != AF_UNIX:       # inet: the same connection seen from the other end
            sel &= (t.peer == local) | (t.peer == 0)
    else:
        sel = (t.kind == kind) & (t.local == local)
    sel &= t.ts <= at
    sel &= ~((t.pid == pid) & (t.fd == fd))
    if tid is not None:
        sel &= t.tid != tid
    users = {}
    for p, user in zip(t.pid[sel].tolist(), t.tid[sel].tolist()):
        users[int(p)] = int(user)
    return kind, users


def talked_with(g, pid, pids, until):
    """The pids among `pids` that exchanged a strong wakeup or message with
    a thread of `pid`, either way, at or before `until` (their fork, a
    spawn edge, does not count): a child that reported to its parent or
    took work from it since the fork is part of its protocol; one that
    only computed since (an unrelated worker, a load generator) is not."""
    want = set(int(p) for p in pids)
    if not want:
        return set()
    far = _far_threads(g, g.utids_of_pid(pid), until)
    return {p for p in g.threads.pid[sorted(far)].tolist() if p in want} if far else set()


def _far_threads(g, utids, until):
    """The utids at the other end of the strong wakeup / message edges into
    or out of the threads `utids`, at or before `until`."""
    E, out = g.edges, set()
    for u in utids:
        lo, hi = int(g.thread_seg_lo[u]), int(g.thread_seg_hi[u])
        if lo == hi:
            continue
        for eids, far in ((g.out_eid[g.out_ptr[lo]:g.out_ptr[hi]], E.dst), (g.in_eid[g.in_ptr[lo]:g.in_ptr[hi]], E.src)):
            kind = E.type[eids]
            sel = eids[((kind == EDGE_WAKEUP) | (kind == EDGE_MESSAGE)) & ~E.weak[eids] & (E.ts[eids] <= until)]
            out.update(np.unique(g.seg.utid[far[sel]]).tolist())
    return out


def _fd_ranks(g, pid, fd, since, at, tid=None, polled=False):
    """[(kind name, [pids])] ranked (see the top) and the users map, for the
    other end of (pid, fd); None for a file or tty (no task holds it).
    polled: as FdTable.at."""
    kind, users = _peer_pids(g, pid, fd, at, tid, polled)
    if kind is not None and kind not in CHANNEL_KINDS:
        return None, {}
    kids = [p for p in descendants(g, pid) if _alive(g, p, since, at)]
    talked = talked_with(g, pid, kids, at)
    ranked = [(KIND_PEER, [p for p in users if _alive(g, p, since, at)]),
              (KIND_PEER, [p for p in kids if p in talked])]
    parent = int((g.processes.get(pid) or {}).get("ppid") or 0)
    if kind in (None, schema.FD_PIPE) and parent > 1 and g.process_name(parent) in SHELLS:
        sibs = [p for p in _children(g).get(parent, ()) if p != pid and _alive(g, p, since, at)]
        ranked.append((KIND_PEER, sibs))
    # its own other threads (a pair between threads), those that exchanged
    # something with the waiter first; children that only computed since
    # their fork hold every inherited fd, and nothing but that ties them to
    # this one; threads of its own that never dealt with the waiter (an idle
    # pool worker parked on its condition variable), last
    own, near = [], set()
    if not users:
        waiter = g.utid_of_tid(tid, at=at) if tid is not None else None
        own = [u for u in g.utids_of_pid(pid) if u != waiter]
        near = _far_threads(g, [waiter], at) if waiter is not None else set()
        ranked.append((KIND_PEER, [pid], [u for u in own if u in near]))
    ranked.append((KIND_PEER, [p for p in kids if p not in talked]))
    if own:
        ranked.append((KIND_PEER, [pid], [u for u in own if u not in near]))
    return ranked, users


def other_end_holders(g, v, a, b):
    """The ranked holders of the other end of v's wait (see the top): ownership.Owner list."""
    seg = g.seg
    utid = int(seg.utid[v])
    pid = int(g.threads.pid[utid])
    at = int(seg.wait_start[v])
    end = min(int(b), int(seg.wait_end[v]))
    reason = int(seg.wait_reason[v]) if seg.wait_known[v] else None
    if reason == schema.WAIT_CHILD:
        kids = [p for p in descendants(g, pid) if _alive(g, p, at)]
        want = int(seg.wait_obj[v])      # wait4's pid argument: > 0 names one child (-1: any)
        if want > 0 and want in kids:
            kids = [want]
        ranked, users = [(KIND_CHILD, kids)], {}
    elif reason in FD_WAITS and waited_fd(g, v) is not None:
        ranked, users = _fd_ranks(g, pid, waited_fd(g, v), at, int(seg.wait_end[v]), int(g.threads.tid[utid]),
                                  polled=reason == schema.WAIT_POLL)
        if ranked is None:
            return []             # a regular file, a tty: no task holds its other end
    else:
        return []
    return _owners(g, ranked, users, utid, a, b, end, int(seg.wait_obj[v]))


def fd_peer_holders(g, utid, fd, at, a, b):
    """The holders in other processes of the other end of (utid's process,
    fd) at `at`, ranked as for other_end_holders (the peers, children that
    talked with it...), for a wait on fd that no syscall of the thread shows
    (a goroutine parked in Go's netpoller: goroutines.parked_locked).  The
    process's own threads are left out: for a Go program any M may have
    used the fd, so they say nothing; the caller asks its held-up threads.
    Owner list."""
    pid = int(g.threads.pid[utid])
    ranked, users = _fd_ranks(g, pid, fd, at, int(b), int(g.threads.tid[utid]))
    if ranked is None:
        return []
    ranked = [(kind, [p for p in pids if p != pid]) for kind, pids, *only in ranked if not only]
    return _owners(g, ranked, users, utid, a, b, int(b), fd)


def polled_holders(g, utid, a, b):
    """A thread polls a channel with non-blocking reads between sleeps (no
    wait on it ever blocks): the holders of the other end of the fds it
    read in [a, b] and that are pipes, sockets or eventfds, the most read
    fd first.  Owner list, as other_end_holders."""
    pid = int(g.threads.pid[utid])
    r = g.rows[g.thread_rows_of(utid, a, b)]
    reads = sorted(g.roles.msg_recv_nrs | set(_nrs_named(g, READ_NAMES)))
    # a read that found nothing (-EAGAIN) is a try; the fd is its enter's obj
    enter = (r["type"] == schema.SYSCALL_ENTER) & np.isin(r["nr"], reads)
    tries = (r["type"] == schema.SYSCALL_EXIT) & np.isin(r["nr"], reads) & (r["val"].astype(np.int64) == -EAGAIN)
    ei = np.flatnonzero(enter)
    ti = np.flatnonzero(tries)
    k = np.searchsorted(ei, ti) - 1
    fd_of_try = r["obj"][ei[k[k >= 0]]].astype(np.int64)
    fds, counts = np.unique(fd_of_try, return_counts=True)
    out, seen = [], set()
    for fd, n in sorted(zip(fds.tolist(), counts.tolist()), key=lambda kv: (-kv[1], kv[0])):
        if n < MIN_TRIES:
            continue
        if not 0 <= fd < (1 << 31):
            continue
        ranked, users = _fd_ranks(g, pid, int(fd), a, int(b), int(g.threads.tid[utid]), polled=True)
        if not ranked:
            continue
        for o in _owners(g, ranked, users, utid, a, b, int(b), int(fd)):
            if o.utid not in seen:
                seen.add(o.utid)
                out.append(o)
    for o in polled_children(g, utid, a, b):
        if o.utid not in seen:
            seen.add(o.utid)
            out.append(o)
    return out


def polled_children(g, utid, a, b):
    """A thread polls for a child's exit (wait4 with WNOHANG between
    sleeps, at least MIN_TRIES calls in [a, b] that returned 0: no child
    had exited): the child the calls name (pid > 0), else its live
    children, as for a blocking wait4.  Owner list of kind "child"."""
    pid = int(g.threads.pid[utid])
    r = g.rows[g.thread_rows_of(utid, a, b)]
    nr = _nrs_named(g, ("wait4",))
    enter = np.flatnonzero((r["type"] == schema.SYSCALL_ENTER) & np.isin(r["nr"], nr))
    empty = np.flatnonzero((r["type"] == schema.SYSCALL_EXIT) & np.isin(r["nr"], nr) & (r["val"].astype(np.int64) == 0))
    k = np.searchsorted(enter, empty) - 1
    named = r["obj"][enter[k[k >= 0]]].astype(np.int64)
    if len(named) < MIN_TRIES:
        return []
    kids = [p for p in descendants(g, pid) if _alive(g, p, a, b)]
    wants, counts = np.unique(named, return_counts=True)
    want = int(wants[np.argmax(counts)])          # the pid most polled (ties: the lowest)
    if want > 0 and want in kids:
        kids = [want]
    return _owners(g, [(KIND_CHILD, kids)], {}, utid, a, b, int(b), want)


READ_NAMES = ("read", "readv", "pread64")
EAGAIN = 11
MIN_TRIES = 3


def _nrs_named(g, names):
    return [syscalls.NUMBERS[n] for n in names if n in syscalls.NUMBERS]


def _owners(g, ranked, users, waiter, a, b, end, obj):
    """Owners of the ranked pids, one thread each (never the waiter, a utid).
    A rank (kind, [pid], utids) takes the busiest of those threads of pid."""
    out, seen, taken = [], set(), {waiter}
    for kind, pids, *only in ranked:
        group = []
        for p in pids:
            if only:
                best = _busiest_of(g, [u for u in only[0] if u not in taken], a, b)
            elif p in seen:
                continue
            else:
                seen.add(p)
                best = _user_thread(g, users.get(p), end, a, b) or _busiest_thread(g, p, a, b, skip=waiter)
            if best is None or best[0] in taken:
                continue
            u, cpu = best
            taken.add(u)
            group.append(Owner(u, int(g.segment_at(u, end)), -1, kind, True, 1, cpu, obj, end))
        group.sort(key=lambda o: (-o.cpu_ns, o.utid))
        out.extend(group)
    return out


def _busiest_of(g, utids, a, b):
    """(utid, cpu) of the busiest of utids that has segments (ties: the lowest utid), or None."""
    best = None
    for u in sorted(utids):
        if g.thread_seg_hi[u] == g.thread_seg_lo[u]:
            continue
        cpu = B.cpu_ns(g, u, a, b)
        if best is None or cpu > best[1]:
            best = (u, cpu)
    return best


def _user_thread(g, tid, at, a, b):
    """(utid, cpu) of the thread that used the object last, if it still lives at `at`."""
    if tid is None:
        return None
    u = g.utid_of_tid(tid, at=at)
    if u is None or g.thread_seg_hi[u] == g.thread_seg_lo[u]:
        return None
    th = g.threads
    if th.end_ts[u] >= 0 and th.end_ts[u] < at:
        return None
    return u, B.cpu_ns(g, u, a, b)


def _busiest_thread(g, pid, a, b, skip=None):
    best = None
    for u in g.utids_of_pid(pid):
        if u == skip or g.thread_seg_hi[u] == g.thread_seg_lo[u]:
            continue
        cpu = B.cpu_ns(g, u, a, b)
        if best is None or cpu > best[1]:
            best = (u, cpu)
    return best
