"""Bystanders: threads whose wait is never a hang or a root cause by itself.

A process that waits for its children (a shell, make, a launcher such as
timeout, su, runuser, systemd-run), for a signal (timeout's
rt_sigsuspend), for a new connection (an idle accept() loop) or for its
standard input through a pipe (a pipeline stage such as cat) is waiting
for work that is elsewhere: the children, the client, the previous stage.
When it is on a causal path, the walk goes on through it (its children or
peers are on the path themselves); it is never named, and `argus hangs`
does not list it.  Argus's own commands are bystanders too.

bystander(g, v) -> a reason (str) for the waiting segment v, or None.
walked_through(g, v): on a causal path, only a wait for children or for a
signal is walked through (the launcher's child is the work).  A reader of
its input or an accept loop reached on a path may hold what the victim
waits for (the sqlite3 shell keeps its write lock open while it reads its
next command): it stays a root cause there.
The wait is judged, not the program: a launcher that computes is no
bystander.

ancestors(g, pid): the hung process's launchers.  Whatever an ancestor of
the hung process waits in (wait4, a read of its children's output, a
signal), it waits for the hung process or its siblings: on the hung
thread's causal path it is never named (unless it computes), nor walked
into (its other children are not this hang's).

Invariant: a pure function of the graph; a running (non-waiting) segment
is never a bystander.
"""
from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose.objects import wait_identity

SIGNAL_WAITS = frozenset(("rt_sigsuspend", "sigsuspend", "pause", "rt_sigtimedwait", "sigwaitinfo"))
OWN_COMMS = frozenset(("argus",))
STDIN = 0
OWN = "Argus itself"
CHILDREN = "it waits for its children"
SIGNAL = "it waits for a signal (a launcher waiting for its child)"


def bystander(g, v):
    seg = g.seg
    utid = int(seg.utid[v])
    if g.comm(utid) in OWN_COMMS:
        return OWN
    if not seg.wait_known[v] or int(seg.end_kind[v]) != G.END_BLOCKED:
        return None
    reason = int(seg.wait_reason[v])
    if reason == schema.WAIT_CHILD:
        return CHILDREN
    if reason == schema.WAIT_ACCEPT:
        return "an idle server waiting for a connection"
    if g.syscall_name(seg.wait_nr[v]) in SIGNAL_WAITS:
        return SIGNAL
    if reason == schema.WAIT_READ and int(seg.wait_obj[v]) == STDIN:
        ident = wait_identity(g, v)
        if ident is not None and ident[0] == schema.FD_PIPE:
            return "a pipeline stage waiting for its input"
    return None



def walked_through(g, v):
    why = bystander(g, v)
    return why is not None and why in (CHILDREN, SIGNAL, OWN)


def ancestors(g, pid, limit=64):
    """The pids pid descends from, nearest first (init and kthreadd left out)."""
    out = []
    p = g.processes.get(int(pid)) or {}
    while len(out) < limit:
        parent = int(p.get("ppid") or 0)
        if parent <= 2 or parent in out:
            break
        out.append(parent)
        p = g.processes.get(parent) or {}
    return out
