"""Algorithm 1 (Diagnose): from the spinning vertex to root causes.

Algorithm, for a spinning vertex v of thread T with block type BT over the
hang window [a, b] (diagnose_vertex):
  LongRunning    slice back from v (slice.interactive_slice); root cause = T
                 itself ("busy on CPU N% of the hang"), with the slice's
                 origin (the thread that triggered the work, or a culled
                 wakeup's label such as "timer").
  RepeatedYield  paced by a device (blocktype.device_paced: its short
                 waits mostly ended by the kernel, not a timer, e.g. an
                 fsync loop): stop, T is the root cause, no holder search.
                 Else, if T read no data flag (DATA_FLAG_READ) in the window:
                 follow an ownership edge when the graph knows who holds
                 what T polls (ownership.owners: futex owner, futex
                 channel, file lock; several -> chooser.pick_owner, ranked
                 strong > weak, most tries, most CPU): the holder's vertex
                 is the one-step path, and the holder is handled like a
                 thread on a wake-up path below.  No strong holder: the
                 other end of the channels its non-blocking reads found
                 empty, or the child its WNOHANG wait4 calls name
                 (objects.polled_holders), before weak (inferred)
                 holders and release wakers; for a poller that does not
                 yield (a trylock between sleeps), its process's held-up
                 threads (process_peers).  With no holder known (or
                 the chooser declines): stop; root cause = T with the
                 advice to watch the flag with bp_watch.  With data flags,
                 fall through to LongWait, where a
                 data_flag edge (last write -> read) plays the wakeup: the
                 baseline is a quick earlier polling episode on the same flag
                 (baseline.find_flag_baselines), else the write that ended this
                 one; the slice starts at the reader with that edge.
  LongWait       baseline = chooser.pick_baseline(find_wait_baselines(v));
                 slice back from the baseline's successor (the segment its
                 wakeup edge points to): the baseline path.  Without a
                 baseline, if v's own wait ended with a wakeup edge (the hang
                 resolved inside the trace), slice from v's successor instead.
                 The hung wait's own waker comes before any baseline: a
                 task's strong wakeup that ended it, or, for a wait the
                 kernel ended (no task's edge), the message the thread read
                 right after from another thread that sent it during the
                 wait (_read_after): the sender ended the wait in effect
                 and lies one level behind it.  A baseline's path is then
                 evidence only.
                 A wait that no wakeup edge ended (ongoing, or ended by the
                 kernel) follows an ownership edge into v: a strong one
                 before the baseline (the kernel named the holder), a weak
                 one only when there is no baseline (for such a wait on
                 a known object, only a quick wait on that object is
                 one), or when the
                 baseline's path names nobody (it is then evidence only),
                 and last the process peers of an unnamed futex or signal
                 holder (_Run.process_peers).  A file lock that the kernel
                 says the waiter's own Go process holds is a goroutine's:
                 the process peers come first unless the M the lock table
                 names is held up and new to the walk
                 (_Run.goroutine_lock_holders).  Inferred holders must be
                 held up (_Run.held_up), and one asleep over most of the
                 window in a wait the waiter itself ended is its waiter,
                 not its holder or peer (_Run.waits_for).  A poller that
                 yields more than it waits spins on memory: no inferred
                 futex channel or release waker (_Run.spins_on_memory).
                 For each thread on that path other than T, in path order
                 (on the hang's own path: up to the first edge before a, the
                 rest is history such as the fork that started the process),
                 not yet a root cause: classify it over [a, b]; a bystander
                 that waits for children or a signal (bystanders.py: a
                 parent in wait4, a launcher) is recursed into but named
                 only when nothing is found behind it; an ancestor of the
                 hung process (its launcher) is skipped unless it computes;
                 a relay (a scheduler's spare thread, woken to hand work
                 on: _Run.relay) is passed over, and so is an idle loop
                 wait unless the timer that ended it is where the path
                 begins (_Run.timer_origin: the loop slept until a
                 timeout) or it holds what the victim waits for; LongWait /
                 LongRunning / RepeatedYield -> a root cause at depth d+1, and,
                 if chooser.go_on(it), diagnose it recursively as a spinning
                 vertex (its classification's vertex) over the window clipped
                 to its wait (LongWait) or [a, b]; Normal -> next thread.
                 After a busy cause (LongRunning / RepeatedYield), named
                 now or already, the rest of that path is not searched: it
                 ended one of its short waits, not the hang.
                 Recursion stops on a thread already diagnosed, at depth 8, or
                 when go_on says no.
  If a LongWait / flag-polling hang yields no root cause, the spinning vertex
  itself is reported (depth 0) with why no culprit was found (no baseline;
  or every thread on the path ran normally; and which kernel wakeups end
  such waits when tasks never do: the thread waits on the kernel or a device).

Output (Diagnosis, rendered by report.py as "argus.diagnosis/1"):
  path         spinning vertex, then every slice in walk order: each level's
               baseline path (or slice), a recursive level starting with its
               culprit vertex (role "culprit") followed by its own path.
  root_causes  sorted by depth (stable: discovery order within a depth); one
               of the greatest depth is marked primary (the "culprit of
               the culprit"): at a tie, a direct one (RootCause.direct:
               reached by the wakeups that ended the waits and the holders
               the kernel named, no baseline's path, no inferred holder)
               first, then the last found (on one path, a thread found
               later lies further back along causality).
Invariants: path[0] is the spinning vertex with edge None; every root cause
thread appears once, but an M of a Go program named for a goroutine's wait,
which appears once per goroutine it ran on the chain (_Run.another_goroutine);
depth(root cause) >= 1 unless it is the spinning thread.
"""
import dataclasses
from dataclasses import dataclass, field

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose import blocktype as B
from argus.diagnose import baseline as BL
from argus.diagnose import ownership as OW
from argus.diagnose import objects as OBJ
from argus.diagnose.bystanders import ancestors, walked_through
from argus.diagnose.streams import stream_wait
from argus.diagnose import goroutines as GR
from argus.diagnose.ownership import polled_addresses
from argus.diagnose.hangs import DEFAULT_THRESHOLD_NS, find_hang
from argus.diagnose.slice import AutoChooser, interactive_slice, input_slice, EdgeRef, SliceResult, SliceStep
from argus.diagnose.dispatch import dispatch_in
from argus.diagnose import waits as W
from argus.diagnose import report as R
from argus.diagnose.report import to_json
from argus.diagnose.stacks import flag_candidates, flag_candidates_from_maps, top_frames
from argus.diagnose.explain import explain

MAX_DEPTH = 8
PROCESS_BUSY = 0.8      # a process's threads together on CPU this share of the window: busy
SHARED_MIN = 0.2        # ... and this thread's own share, to stand for that work
RELAY_BUSY = 0.05       # a relay: on CPU or runnable less than this share of the window
RELAY_WOKEN = 0.8       # ... and at least this share of its short waits ended by other tasks
WAITER_ASLEEP = 0.8     # a weak holder asleep this share of the window in a wait the waiter ended: its waiter
SIGNAL_WAITS = ("rt_sigtimedwait", "rt_sigsuspend", "pause")   # the sender is unknown until it sends


@dataclass
class PathElem:
    vertex: int
    utid: int
    role: str            # spinning | baseline | slice | owner | culprit
    depth: int
    edge: dict           # {"type", "weak", "eid"} or None
    block_type: str
    start_ns: int
    end_ns: int
    via_baseline: bool = False   # on a baseline's path (a quick instance), not on this hang's own
    block_window: tuple = None   # (a, b): the window block_type was judged over (the level's), for the REPL


@dataclass
class RootCause:
    utid: int
    vertex: int
    block_type: str
    start_ns: int
    end_ns: int
    why: str
    depth: int
    evidence: dict = field(default_factory=dict)
    origin: dict = None
    advice: str = None
    primary: bool = False
    profile: dict = None     # CPU profile of its window (diagnose/profile.py), LongRunning / RepeatedYield
    whatif: dict = None      # what-if slack (diagnose/whatif.py)
    direct: bool = False     # reached from the hung wait by wakeups and named holders only (_Run.direct)


@dataclass
class Diagnosis:
    graph: object
    hang: object
    threshold_ns: int
    path: list
    root_causes: list
    queries: int
    spinning_extra: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    rules_fired: list = field(default_factory=list)     # rules.RuleSet.fired
    compare: dict = None     # the spinning vertex against its baselines (diagnose/compare.py)

    def to_json(self):
        return to_json(self)


def _pseudo(kind):
    return {"type": kind, "weak": False, "eid": None}


def _edge_dict(e):
    if e is None:
        return None
    return {"type": e.type, "weak": e.weak, "eid": e.eid}


class _Run:
    def __init__(self, g, hang, chooser, threshold_ns):
        self.g = g
        self.hang = hang
        self.t0 = hang.start_ns
        self.chooser = chooser
        self.threshold_ns = threshold_ns
        self.path = []
        self.root_causes = []
        self.visited = {hang.utid}
        self.stack = [hang.utid]      # the threads being diagnosed, outermost first
        self.named = {}               # utid -> its RootCause (the last one, for an M named per goroutine)
        self.goroutines_named = set()  # (utid, goroutine) named for a goroutine's wait (another_goroutine)
        self.parent = {}              # utid -> the thread whose path named it
        self.advice_candidates = {}
        self.owners_by_edge = {}
        self.sleeper_stand_ins = set()  # idle Ms named for a goroutine asleep on a timer (goroutine_peers)
        self._cls = {}
        # processes the hung one descends from (a shell, timeout, su, a test
        # runner): they wait for it, whatever they wait in (bystanders.py)
        self.launchers = set(ancestors(g, int(g.threads.pid[hang.utid])))

    # --- helpers ---
    def cls(self, utid, a, b):
        key = (utid, a, b)
        c = self._cls.get(key)
        if c is None:
            c = self._cls[key] = GR.with_parked(self.g, B.classify(self.g, utid, a, b), b)
        return c

    def add(self, vertex, role, depth, edge, a, b, start=None, end=None, via_baseline=False):
        g = self.g
        utid = int(g.seg.utid[vertex])
        bt = self.cls(utid, a, b).block_type
        if start is None:
            start, end = int(g.seg.start[vertex]), int(g.seg.end[vertex])
        self.path.append(PathElem(int(vertex), utid, role, depth, edge, bt, int(start), int(end), via_baseline,
                                  (int(a), int(b))))

    def extend(self, res, depth, a, b, first_edge, skip_first=False):
        base = first_edge is not None and first_edge["type"] == "baseline"
        for i, step in enumerate(res.steps):
            if i == 0:
                if skip_first:
                    continue
                self.add(step.vertex, "baseline" if base else "slice", depth, first_edge, a, b, via_baseline=base)
            else:
                self.add(step.vertex, "slice", depth, _edge_dict(step.edge), a, b, via_baseline=base)

    def baseline_evidence(self, v, depth, a, b, info):
        """The hang's own waker explained it; a quick instance of the same
        wait still shows what a normal run takes (what-if, compare).  Its
        path is added for that, marked via_baseline, and is no source of
        root causes; it is chosen and walked without a question (the
        ranking's first kind; the session's rules still apply), since
        nothing is decided by it."""
        cands = BL.find_wait_baselines(self.g, v, self.threshold_ns, hang_start=a)
        if not cands:
            return
        chosen = BL.group_by_signature(self.g, cands)[0]
        info["baseline"] = chosen
        quiet = self.chooser.auto_twin()          # the session's rules, no question
        self.extend(interactive_slice(self.g, chosen.successor, quiet), depth, a, b, _pseudo("baseline"))

    # --- root causes ---
    def why(self, c, relation=""):
        """c's root-cause sentence (report.why_text); a RepeatedYield's
        includes the bp_watch advice."""
        return R.why_text(c, relation, self.yield_text(c) if c.block_type == B.REPEATED_YIELD else "")

    def yield_text(self, c):
        """bp_watch advice is left out for a device-paced thread (blocktype.device_paced)."""
        if B.device_paced(c.evidence):
            return R.yield_text(c.evidence, B.syscall_counts(self.g, c.utid, c.start_ns, c.end_ns), None, {},
                                device_paced=True)
        cmd = self.bp_watch_advice(c.utid, c.start_ns, c.end_ns)
        return R.yield_text(c.evidence, B.syscall_counts(self.g, c.utid, c.start_ns, c.end_ns), cmd,
                            self.advice_candidates.get(c.utid) or {})

    def bp_watch_advice(self, utid, a, b):
        """The next step for a RepeatedYield without data flags: the bp_watch
        command line with IMAGE SYMBOL from a data_flag rule of an earlier
        session when there is one (a question saved), else from the loop's
        user stack (stacks.flag_candidates: the first app frame whose code
        reads a global), else, without a stack, from the process's executable
        mapping (stacks.flag_candidates_from_maps: its functions that call a
        polling wait).  When neither names a symbol: `argus flags` on the
        polling function when one is known, else None; advice_candidates
        then says what is missing.  Kept there too: the candidates the vertex
        shows (the addresses it polled: futex / wait objects; the loop's call
        stack when stacks are recorded)."""
        g = self.g
        pid = int(g.threads.pid[utid])
        rules = self.chooser.rules
        known = rules.data_flag(g, utid) if rules is not None else None     # counted in rules.fired
        if known:
            self.advice_candidates[utid] = {"remembered": True}
            if known.get("symbol"):
                return R.bp_watch_command(pid, known.get("image"), known["symbol"])
            return R.bp_watch_command(pid, addr=int(known["addr"]))
        cands = polled_addresses(g, utid, a, b)
        loop = flag_candidates(g, utid, a, b) or flag_candidates_from_maps(g, utid) or {
            "missing": f"the trace has no user stack of the loop and no mapping of process {pid} "
                       f"(`argus start` records both unless --no-stacks)"}
        frames = loop.get("stack") or top_frames(g, B.busiest_segment(g, utid, a, b))
        syms = loop.get("symbols") or []
        txt = R.bp_watch_command(pid, loop.get("image"), syms[0] if syms else None)
        if txt is None and loop.get("function"):
            txt = R.flags_command(pid, loop["function"])
        self.advice_candidates[utid] = {"addresses": cands[:5], "stack": frames[:5], "symbols": syms,
                                        "image": loop.get("image"), "function": loop.get("function"),
                                        "missing": None if syms else loop.get("missing")}
        return txt

    def relation(self, res, t, role):
        """How thread t, on slice res, relates to the thread before it."""
        g = self.g
        for i, step in enumerate(res.steps):
            if int(g.seg.utid[step.vertex]) == t and i > 0:
                prev = res.steps[i - 1].vertex
                e = step.edge
                if e is None or e.type == "program_order":     # a pending callee chain may have no edge
                    continue
                if e.type == "ownership":
                    return self.owner_relation(e)
                return R.relation_text(g, e.type, role, int(g.seg.utid[prev]), e.ts - self.t0)
        return ""

    def root_interval(self, c, a, b):
        if c.block_type == B.LONG_WAIT:
            w = c.evidence["longest_wait"]
            return w["start_ns"], w["end_ns"]
        return a, b

    # --- synchronous calls (waits.py) ---
    def callee_slice(self, v, depth, a, b):
        """LongWait on a synchronous, pending or nested wait: slice into the
        callee instead of through a baseline.  Ended by a wakeup: the slice
        from v's successor (the answer, back through whoever served it);
        still pending at trace end: the forward path of v's request to the
        thread still serving it (waits.callee_path), which needs no wakeup
        edge; answered through a culled loopback wakeup: the slice from the
        closure vertex that sent the answer.  None for other waits
        (blocking syscalls keep the baseline)."""
        g = self.g
        first = W.first_piece(g, v)
        kind, detail = W.wait_kind(g, first, v)
        if kind not in (W.SYNC, W.PENDING, W.NESTED):
            return None
        nxt = _woken_successor(g, v)
        if nxt >= 0:
            res = interactive_slice(g, nxt, self.chooser)
            self.extend(res, depth, a, b, _pseudo("program_order"))
            return res
        if kind != W.PENDING:
            if "callee" not in detail:
                return None
            # answered, but by a wakeup the kernel culled (TCP over loopback): slice from the answerer
            res = interactive_slice(g, detail["callee"], self.chooser, cursor=int(g.seg.wait_end[v]))
            self.extend(res, depth, a, b, _pseudo("message"))
            return res
        chain = W.callee_path(g, first, detail["callee"])[1:]
        if not chain:
            return None
        steps = [SliceStep(chain[-1], None)]
        for x, y in zip(chain[-2::-1], chain[:0:-1]):
            steps.append(SliceStep(x, self.edge_between(x, y)))
        res = SliceResult(steps, {"kind": "pending", "label": "still serving the request at trace end",
                                  "vertex": chain[-1]})
        self.extend(res, depth, a, b, _pseudo("message"))
        return res

    def edge_between(self, x, y):
        g = self.g
        for e in g.out_edges(x).tolist():
            if int(g.edges.dst[e]) == y:
                return EdgeRef.of(g, e)
        return None

    def idle_loop_wait(self, c):
        """A LongWait whose wait is its thread's idle event-loop wait (the
        thread was idle, not a culprit: waits.wait_kind)."""
        return c.block_type == B.LONG_WAIT and "goroutine" not in c.evidence \
            and W.wait_kind(self.g, c.vertex)[0] == W.IDLE

    def timer_origin(self, c, res):
        """A LongWait whose wait a timer ended where slice res begins (its
        origin is that timer wakeup): an event loop that slept until a
        timeout (a Go netpoller sleeping until the next timer, a GLib
        timeout source) and then did what ended the hang.  That sleep is
        the cause on the path, not idleness, when nothing else was named
        (a sleeper found before it is what the timer served: Go's timer
        thread wakes a goroutine's thread that sleeps)."""
        o = res.origin or {}
        if c.block_type != B.LONG_WAIT or o.get("kind") != "culled" or o.get("label") != "timer":
            return False
        return self.g.next_segment(c.vertex) == o.get("vertex")

    def shared_work(self, utid, a, b):
        """A thread of a user-space scheduler (goroutines on Go's Ms, green
        threads, a work-stealing pool): the work moves between the process's
        OS threads, each runs part of it and parks in short futex waits
        between, so each alone looks like polling.  When this thread and the
        process's other such threads (RepeatedYield without yields, not paced
        by a device, each busy >= SHARED_MIN of [a, b]) were busy (on CPU or
        runnable) together >=
        PROCESS_BUSY of [a, b], this thread stands for the process's work:
        LongRunning, with the process's share as evidence.
        The process's other busy threads are then not named again.  None
        otherwise."""
        c = self.cls(utid, a, b)
        if c.block_type != B.REPEATED_YIELD or c.evidence.get("yields") or B.device_paced(c.evidence):
            return None
        g = self.g

        def busy(u):
            ev = self.cls(u, a, b).evidence
            return ev.get("cpu_share", 0.0) + ev.get("runnable_share", 0.0)
        mine = busy(utid)
        if mine < SHARED_MIN:
            return None
        # the threads that share it look alike: each busy part of the time and
        # parked in short waits between (RepeatedYield, no yields); a thread that
        # is LongRunning on its own does its own work (an unrelated busy thread)
        peers = {u: busy(u) for u in g.utids_of_pid(int(g.threads.pid[utid]))
                 if u != utid and self.cls(u, a, b).block_type == B.REPEATED_YIELD
                 and not self.cls(u, a, b).evidence.get("yields")}
        sharing = [u for u, share in peers.items() if share >= SHARED_MIN]
        total = mine + sum(peers[u] for u in sharing)
        if not sharing or total < PROCESS_BUSY:
            return None
        self.visited.update(sharing)
        ev = dict(c.evidence, process_busy_share=round(total, 3), work_shared_by=1 + len(sharing))
        return B.Classification(B.LONG_RUNNING, utid, a, b, B.busiest_segment(g, utid, a, b), ev)

    def nameable(self, c):
        """Whether a thread classified c could be a root cause at all:
        abnormal, and neither a relay nor idle in its event loop (the order
        loop of diagnose_vertex adds its exceptions for holders and timed
        loop waits; names_someone and process_peers use it as it is)."""
        return c.abnormal and not self.relay(c) and not self.idle_loop_wait(c)

    def relay(self, c):
        """A thread that only hands others' work on (a user-space
        scheduler's spare worker: Go's Ms parked between goroutines, a
        pool's idle threads): RepeatedYield without yields, almost never on
        CPU (< RELAY_BUSY), and its short waits mostly (>= RELAY_WOKEN)
        ended by other tasks' wakeups.  It polls nothing: each wait ended
        with a hand-off from whoever woke it, so it is no cause, and the
        walk goes on to the next thread on the path.  A poller with a
        backoff sleep is not one (its timer ends its waits), nor is a
        spinner (it yields or computes)."""
        ev = c.evidence
        if c.block_type == B.REPEATED_YIELD and ev.get("yields", 0) * 10 < ev.get("short_waits", 0) \
                and GR.runtime_thread(self.g, c.utid):
            return True       # Go's sysmon: short sleeps, no goroutine ever ran on its thread
        if c.block_type != B.REPEATED_YIELD or ev.get("yields") or not ev.get("short_waits"):
            return False
        busy = ev.get("cpu_share", 0.0) + ev.get("runnable_share", 0.0)
        return busy < RELAY_BUSY and ev.get("short_waits_woken", 0) >= RELAY_WOKEN * ev["short_waits"]

    def stream(self, utid, a, b):
        """A reader fed in pieces by one producer: LongWait on it (streams.py)."""
        return stream_wait(self.g, self.cls(utid, a, b), a, b)

    def bystander(self, c):
        """A LongWait that only waits for others' work (bystanders.py: a
        parent, a launcher, an idle accept loop, a pipeline stage)."""
        return c.block_type == B.LONG_WAIT and "goroutine" not in c.evidence and walked_through(self.g, c.vertex)

    def goroutine_wait(self, utid, v, a, b):
        """The goroutine whose stint starts v (on M utid) parked long before it
        (goroutines.py): a LongWait of that goroutine, named on the M that ran
        it (no thread waited: the M itself only relayed).  None otherwise."""
        if v is None:
            return None
        w = GR.stint_wait(self.g, v, self.threshold_ns, a)
        if w is None:
            return None
        how = {"goroutine": "readied by a goroutine", "runtime": "readied by Go's timers",
               "netpoller": "readied by Go's netpoller"}[w["ended_by"]]
        lw = {"vertex": int(v), "start_ns": w["park_ts"], "end_ns": w["end_ts"], "dur_ns": w["dur_ns"],
              "reason": "goroutine", "syscall": None, "syscall_nr": None, "obj": w["goroutine"],
              "what": f"goroutine {w['goroutine']:#x} parked ({how})", "ongoing": False, "timed_out": False,
              "started_before_trace": w["before_probes"], "in_window_ns": max(0, min(w["end_ts"], b) - max(w["park_ts"], a))}
        ev = dict(self.cls(utid, a, b).evidence, longest_wait=lw, goroutine=w)
        return B.Classification(B.LONG_WAIT, utid, a, b, int(v), ev)

    def another_goroutine(self, t, v, a, b):
        """An M named already for a goroutine's wait (goroutine_wait), found
        again on a path at v, the stint of another goroutine that waited:
        the M ran both, and the walk's identity there is the goroutine, not
        the thread.  Its LongWait for that goroutine (named anew, one level
        deeper), or None (not named yet, named for its own wait, the same
        goroutine, or no such wait)."""
        rc = self.named.get(t)
        if rc is None or v is None or "goroutine" not in rc.evidence:
            return None       # not named, or named for its own wait (a goroutine locked to it)
        c = self.goroutine_wait(t, v, a, b)
        if c is None:
            return None
        gid = c.evidence["goroutine"]["goroutine"]
        if (t, gid) in self.goroutines_named or (rc.evidence.get("goroutine") or {}).get("goroutine") == gid:
            return None
        return c

    def goroutine_slice(self, v, c, depth, a, b):
        """Behind a goroutine's wait: its readier (the core's goroutine edge
        into its stint) or the sender of what the netpoller handed it (the
        core's netpoll rule); None when Go's timers ended it (the wait is the
        cause) or no edge names anyone."""
        g = self.g
        w = c.evidence["goroutine"]
        if w["ended_by"] == "runtime":
            return None
        best = None
        for e in g.in_edges(v).tolist():
            typ = int(g.edges.type[e])
            if typ not in (G.EDGE_WAKEUP, G.EDGE_MESSAGE) or GR.same_goroutine(g, int(g.edges.src[e]), v,
                                                                                 w["goroutine"]):
                continue
            rank = (int(g.edges.obj[e]) == w["goroutine"], typ == G.EDGE_WAKEUP)
            if best is None or rank > best[0]:
                best = (rank, e)
        if best is None:
            return None
        e = best[1]
        res = interactive_slice(g, v, self.chooser, cursor=int(g.edges.ts[e]), first_edge=e)
        self.extend(res, depth, a, b, None, skip_first=True)
        return res

    # --- Algorithm 1 ---
    def diagnose_vertex(self, utid, v, c, a, b, depth):
        """Returns info: {"origin", "baseline", "advice", "slice", "flags", "owner"}."""
        g = self.g
        info = {"origin": None, "baseline": None, "advice": None, "slice": None, "flags": None, "owner": None}
        bt = c.block_type
        res = None
        role = "slice"
        if bt == B.LONG_RUNNING:
            d = dispatch_in(g, utid, a, b)      # the callback the stretch sits in (probes), if any
            # A dispatch that began inside the stretch was started by what the
            # thread read before it, also inside the stretch (an X event read
            # just after a short wake): walk back from the dispatch's start.
            if d and d["start_ns"] > a:
                res = input_slice(g, d["vertex"])
            else:
                res = input_slice(g, v, d["start_ns"] if d else None)
            res = res or interactive_slice(g, v, self.chooser)
            if res.steps[0].vertex == v:
                self.extend(res, depth, a, b, None, skip_first=True)
            else:     # the input vertex the thread's work since descends from
                self.extend(res, depth, a, b, _pseudo("program_order"))
            info["origin"] = res.origin
            info["slice"] = res
            return info
        addrs = B.flag_reads(g, utid, a, b) if bt == B.REPEATED_YIELD else None
        if bt == B.REPEATED_YIELD and not addrs and B.device_paced(c.evidence):
            return info           # it waits on a device in small steps: no task holds what it waits for
        if bt == B.REPEATED_YIELD and not addrs:
            # a strong holder first; then the channels its empty reads polled (what
            # it tried is known), before inferred futex channels (a GIL's hand-offs
            # among the process's threads say little about what it polls)
            # ... and when nothing it touched names a holder (a trylock between
            # sleeps makes no syscall on the lock): its process's held-up threads.
            # Not for a thread that yields: it spins on memory (a flag), whose
            # writer only a watch can name (the bp_watch advice)
            owners = OW.owners(g, utid, a, b)
            strong = any(not o.weak for o in owners)
            spins = self.spins_on_memory(c)
            if spins:
                # it yields more than it waits: it spins on memory, and its rare
                # futex waits are contention for another lock (a GIL, an
                # allocator's), so an inferred channel on them says nothing
                owners = [o for o in owners if not o.weak or o.kind == "futex_owner"]
            cands = (owners if strong else None) or self.held_up(OBJ.polled_holders(g, utid, a, b), a, b, utid) \
                or self.signal_poll_peers(utid, a, b) or self.held_up(owners, a, b, utid) \
                or (self.held_up(OW.release_owners(g, utid, a, b), a, b, utid) if not spins else []) \
                or (self.process_peers(utid, a, b, b) if not c.evidence.get("yields") else [])
            res = self.follow_owner(v, cands, depth, a, b, info)
            if res is None:
                info["advice"] = self.bp_watch_advice(utid, a, b)
                return info
            role = "owner"
        elif bt == B.REPEATED_YIELD:
            info["flags"] = addrs
            cands = BL.find_flag_baselines(g, utid, addrs, a, b, self.threshold_ns)
            chosen = self.chooser.pick_baseline(cands) if cands else None
            if chosen is not None:
                info["baseline"] = chosen
                res = interactive_slice(g, chosen.successor, self.chooser, cursor=int(g.edges.ts[chosen.edge]),
                                        first_edge=chosen.edge)
                self.extend(res, depth, a, b, _pseudo("baseline"))
                role = "baseline"
            else:
                inw = BL.flag_edges_in_window(g, utid, addrs, a, b)
                if inw:
                    e = inw[0]
                    d = int(g.edges.dst[e])
                    res = interactive_slice(g, d, self.chooser, cursor=int(g.edges.ts[e]), first_edge=e)
                    self.extend(res, depth, a, b, _pseudo("program_order"), skip_first=(d == v))
        elif bt == B.LONG_WAIT and utid in self.sleeper_stand_ins:
            # an idle M standing for a goroutine asleep on a timer (goroutine_peers): Go's timers end it
            return info
        elif bt == B.LONG_WAIT and "goroutine" in c.evidence:
            res = self.goroutine_slice(v, c, depth, a, b)
        elif bt == B.LONG_WAIT and (GR.timer_ended(g, v) or GR.timer_park_readied(g, v)):
            return info       # Go's timers ended it (a Sleep, a Timer): the wait is the cause
        elif bt == B.LONG_WAIT and W.ending_edge(g, v) < 0 and \
                (GR.parked_locked(g, utid, int(b)) or {}).get("kind") == "timer":
            info["goroutine_parked"] = GR.parked_locked(g, utid, int(b))
            return info       # its locked goroutine sleeps since before the probes: the wait is the cause
        elif bt == B.LONG_WAIT and (res := self.callee_slice(v, depth, a, b)) is not None:
            pass
        elif bt == B.LONG_WAIT:
            res, weak_owners = self.goroutine_lock_holders(utid, v, a, b, depth, info) or \
                self.strong_owner_first(utid, v, a, b, depth, info)
            nxt = _woken_successor(g, v)
            ended = W.ending_edge(g, v) >= 0      # a task's wakeup ended v's wait
            if res is None and nxt >= 0 and not g.edges.weak[W.ending_edge(g, v)]:
                # the hung wait's own waker first: it ended this wait
                res = interactive_slice(g, nxt, self.chooser)
                self.extend(res, depth, a, b, _pseudo("program_order"))
                self.baseline_evidence(v, depth, a, b, info)
            if res is None and not ended and (m := _read_after(g, v)) >= 0:
                # the kernel ended the wait (a timeout, a wakeup it culled), and the
                # thread then read what another task had sent meanwhile: that sender
                # ended the wait in effect, so its path comes before any baseline's
                res = interactive_slice(g, g.next_segment(v), self.chooser, cursor=int(g.edges.ts[m]),
                                        first_edge=m)
                self.extend(res, depth, a, b, _pseudo("program_order"))
                self.baseline_evidence(v, depth, a, b, info)
            if res is None and not ended and (park := GR.parked_locked(g, utid, int(b))) is not None:
                # the M's wait is its locked goroutine's, parked before the probes
                # and never seen since (goroutines.py, parked_locked): Go's timers
                # end a sleep (the wait is the cause); anything else another
                # goroutine ends, most likely one of the process's held-up threads.
                # Never the M's own earlier park-futex waits (start-up hand-offs)
                info["goroutine_parked"] = park
                if park["kind"] == "timer":
                    return info
                # (idle Ms last: with no other held-up thread, the goroutine that
                # ends it is not locked to any, and one of them stands for it)
                peers = (self.held_up(OBJ.fd_peer_holders(g, utid, park["fd"], park["park_ts"], a, b), a, b, utid)
                         if park["fd"] >= 0 else []) or \
                    self.goroutine_peers(utid, a, b, int(b), "goroutine_peer", park["wait_obj"])
                # none held up: what the M's own waits say, as without the snapshot
                res = self.follow_owner(v, peers, depth, a, b, info)
            if res is None and not ended:
                # still waiting (or the kernel ended it): whoever holds the other end
                res = self.follow_owner(v, self.other_end(v, a, b), depth, a, b, info)
            if res is None:
                cands = BL.find_wait_baselines(g, v, self.threshold_ns, hang_start=a)
                if not ended and OBJ.wait_identity(g, v) is not None:
                    # a wait still going on, on a known object: only a quick wait on
                    # that object says anything about it (another one is history)
                    cands = [c for c in cands if c.same_obj]
                chosen = self.chooser.pick_baseline(cands) if cands else None
                if chosen is not None:
                    info["baseline"] = chosen
                    bres = interactive_slice(g, chosen.successor, self.chooser)
                    self.extend(bres, depth, a, b, _pseudo("baseline"))
                    # a wait still going on: a quick instance's path that names
                    # nobody is evidence only, and the holders are tried next
                    if ended or self.names_someone(bres, utid, a, b):
                        res, role = bres, "baseline"
                elif nxt >= 0:
                    res = interactive_slice(g, nxt, self.chooser)
                    self.extend(res, depth, a, b, _pseudo("program_order"))
            if res is None:
                res = self.follow_owner(v, weak_owners, depth, a, b, info)
            if res is None:
                res = self.follow_owner(v, self.unnamed_holders(v, a, b), depth, a, b, info)
            if info["owner"] is not None:
                role = "owner"
        if res is None:
            return info
        info["origin"] = res.origin
        info["slice"] = res
        order, first_vertex = [], {}
        for step in res.steps:
            # the hang's own path is cut where it leaves the window: an edge that
            # happened before the wait began (the fork that started the process, a
            # launcher's earlier work) leads into history, not to a cause; a
            # baseline's path is all before the hang by definition and is judged whole
            if role != "baseline" and step.edge is not None and step.edge.type not in ("ownership",) \
                    and step.edge.ts < a:
                break
            t = int(g.seg.utid[step.vertex])
            if int(g.threads.pid[t]) in self.launchers:
                break         # past the hung process's launcher lies its other business
            if t != utid and t not in order:
                order.append(t)
                first_vertex[t] = int(step.vertex)
        for t in order:
            again = self.another_goroutine(t, first_vertex.get(t), a, b) if t in self.visited else None
            if t in self.visited and again is None:
                self.deepen(t, utid, depth + 1)
                rc = self.named.get(t)
                if rc is not None and rc.block_type != B.LONG_WAIT:
                    break     # a busy cause named already: as for a new one (below), what
                              # lies behind it on this path ended its short waits, not the hang
                continue
            ct = again or self.shared_work(t, a, b) or self.stream(t, a, b) or self.cls(t, a, b)
            if not self.nameable(ct) or (ct.block_type == B.REPEATED_YIELD and not B.device_paced(ct.evidence)):
                # an M that only relayed, or switched among goroutines (short waits
                # between them): the goroutine it ran on this path may have waited.
                # Not an M paced by a device: the kernel, not hand-offs, ended its
                # short waits, so over the hang it ran one goroutine's disk loop
                # (an fsync loop hops between Ms as its syscalls block), and a
                # goroutine it ran for a moment on this path is not what it stands for
                ct = self.goroutine_wait(t, first_vertex.get(t), a, b) or ct
            # an event-loop wait is idleness, except in the thread that holds what
            # the victim waits for (it waits for its own upstream there)
            holder = role == "owner" and info["owner"] is not None and info["owner"].utid == t
            # ... and so is an event loop's idle wait, except in the holder and in a
            # loop that slept until the timeout where this path begins
            idle_but_named = holder or (not self.root_causes and self.timer_origin(ct, res))
            if not (self.nameable(ct) or (idle_but_named and ct.abnormal and not self.relay(ct))):
                continue
            if ct.block_type != B.LONG_RUNNING and int(g.threads.pid[t]) in self.launchers:
                continue      # an ancestor of the hung process that waits: its launcher, not a cause
            # a bystander (a parent in wait4, a launcher) is walked through, not
            # named: named only when nothing is found behind it
            transparent = self.bystander(ct)
            self.visited.add(t)
            if "goroutine" in ct.evidence:
                self.goroutines_named.add((t, ct.evidence["goroutine"]["goroutine"]))
            ra, rb = self.root_interval(ct, a, b)
            rc = RootCause(t, ct.vertex, ct.block_type, ra, rb, self.why(ct, self.relation(res, t, role)),
                           depth + 1, ct.evidence)
            rc.direct = self.direct(utid, role, info, depth)
            found = len(self.root_causes)
            self.named[t], self.parent[t] = rc, utid
            if not transparent:
                self.root_causes.append(rc)
            if depth + 1 >= MAX_DEPTH or not self.chooser.go_on(rc):
                if transparent:
                    self.root_causes.append(rc)
            else:
                self.recurse(t, ct, rc, transparent, found, a, b, depth)
            if ct.block_type != B.LONG_WAIT:
                # a busy culprit: what lies behind it on this path made one of its
                # short waits end (a scheduler handing it a CPU), not the hang;
                # its own diagnosis (just done) says what drove it
                break
            if GR.timer_ended(g, ct.vertex) or GR.timer_park_readied(g, ct.vertex) or \
                    (ct.evidence.get("goroutine") or {}).get("ended_by") == "runtime":
                break         # Go's timers ended its wait: behind it lies the M that ran the timer
        return info

    def direct(self, utid, role, info, depth):
        """Whether a cause named on utid's path (taken as `role`) lies on the
        hung wait's own causal chain: every link from the hung thread down
        is the path of wakeups that ended the wait ("slice") or a holder the
        kernel named (a strong ownership edge), none a quick instance's path
        (a baseline: another occasion) or an inferred holder (weak)."""
        if role == "owner":
            link = info["owner"] is not None and not info["owner"].weak
        else:
            link = role == "slice"
        if depth == 0 or not link:
            return link
        up = self.named.get(utid)
        return up is not None and up.direct

    def recurse(self, t, ct, rc, transparent, found, a, b, depth):
        """Diagnoses root cause rc (thread t, classified ct over [a, b]) as a
        spinning vertex of its own, one level deeper."""
        ra, rb = rc.start_ns, rc.end_ns
        if ct.block_type == B.LONG_WAIT:
            sa, sb = max(a, ra), min(b, rb)
        else:
            sa, sb = a, b
        self.add(ct.vertex, "culprit", depth + 1, _pseudo("culprit"), sa, sb, ra, rb)
        self.stack.append(t)
        sub = self.diagnose_vertex(t, ct.vertex, ct, sa, sb, depth + 1)
        self.stack.pop()
        if transparent and len(self.root_causes) == found:
            self.root_causes.append(rc)     # nothing found behind the bystander: it is the answer
        rc.origin = sub["origin"]
        if ct.block_type == B.LONG_RUNNING and sub["slice"] is not None:
            rc.why += "; " + R.trigger_text(self.g, sub["slice"], self.t0)
        if sub["advice"]:
            rc.advice = sub["advice"]

    def names_someone(self, res, utid, a, b):
        """Whether a thread on slice res, other than utid, would be named
        (abnormal over [a, b]; not visited, idle, a relay or a launcher)."""
        g = self.g
        for step in res.steps:
            t = int(g.seg.utid[step.vertex])
            if int(g.threads.pid[t]) in self.launchers:
                break
            if t == utid or t in self.visited:
                continue
            c = self.cls(t, a, b)
            if self.nameable(c):
                return True
        return False

    def deepen(self, t, parent, depth):
        """Thread t, already named (say from a baseline's path), is found
        again behind `parent` at `depth`: it lies further back along
        causality than first thought, so it and what was found behind it
        move down to that depth (the primary root cause is the deepest).
        Never for a thread being diagnosed now (a cycle)."""
        rc = self.named.get(t)
        if rc is None or t in self.stack or rc.depth >= depth:
            return
        delta = depth - rc.depth
        self.parent[t] = parent
        for u, other in self.named.items():
            x = u
            while x is not None and x != t:
                x = self.parent.get(x)
            if x == t:
                other.depth += delta

    # --- ownership (who holds what the thread polls or waits for) ---
    def unexplained_wait_owners(self, utid, v, a, b):
        """Holders of what v waits for (ownership.owners) when no wakeup
        edge explains the wait: it is ongoing, or the kernel ended it."""
        if W.ending_edge(self.g, v) >= 0:
            return []
        return OW.owners(self.g, utid, a, b, vertex=v)

    def strong_owner_first(self, utid, v, a, b, depth, info):
        """For a LongWait vertex v: follows a strong ownership edge (the
        kernel named the holder) before any baseline; else a mutex's owner
        field (weak only because the field is read by its layout) when
        that thread was held up over [a, b].  Returns (SliceResult or None,
        the weak holders left for when nothing else explains v)."""
        owners = self.unexplained_wait_owners(utid, v, a, b)
        first = [o for o in owners if not o.weak] or \
            [o for o in owners if o.kind == "futex_owner" and self.cls(o.utid, a, b).abnormal]
        if not first:
            return None, owners
        return self.follow_owner(v, first, depth, a, b, info), []

    def goroutine_lock_holders(self, utid, v, a, b, depth, info):
        """For a LongWait vertex v on a file lock that the kernel says v's own
        process holds, in a Go program (goroutines.lock_held_in_process), and
        that no task's wakeup ended: the lock is a goroutine's, not the M's
        that took it.  That M stands for it only while it is held up and new
        to the walk (then strong_owner_first follows it, as for any thread);
        otherwise (it is v's own thread, one on the chain being walked, a
        relay or an idle M) the holder goroutine runs elsewhere or is
        parked, and the walk takes the process's held-up threads (kind
        goroutine_lock; idle Ms last: with none other held up, the goroutine
        is parked and not locked to any, and one of them stands for it).
        Returns (SliceResult, []) as strong_owner_first, or None."""
        g = self.g
        if W.ending_edge(g, v) >= 0:
            return None
        inode = GR.lock_held_in_process(g, v)
        if inode is None:
            return None
        for o in self.unexplained_wait_owners(utid, v, a, b):
            c = self.cls(o.utid, a, b)
            if not o.weak and o.utid not in self.stack and o.utid not in self.visited and self.nameable(c) \
                    and not GR.idle_m(g, c, b):
                return None
        end = min(int(b), int(g.seg.wait_end[v]))
        peers = self.goroutine_peers(utid, a, b, end, "goroutine_lock", inode)
        res = self.follow_owner(v, peers, depth, a, b, info)
        return (res, []) if res is not None else None

    def other_end(self, v, a, b):
        """The held-up holders of the other end of v's wait (objects.other_end_holders).
        In a Go program the waiter's own threads among them say nothing (the
        M that used the other end last ran whatever goroutine it had then, and
        any M may run the one that will write): they give way to the process's
        held-up threads (process_peers, kind goroutine_fd; idle Ms last), after
        the holders in other processes."""
        g = self.g
        utid = int(g.seg.utid[v])
        pid = int(g.threads.pid[utid])
        owners = OBJ.other_end_holders(g, v, a, b)
        mine = [o for o in owners if int(g.threads.pid[o.utid]) == pid]
        if not mine or not GR.go_program(g, pid):
            return self.held_up(owners, a, b, utid)
        outside = self.held_up([o for o in owners if int(g.threads.pid[o.utid]) != pid], a, b, utid)
        end = min(int(b), int(g.seg.wait_end[v]))
        peers = self.goroutine_peers(utid, a, b, end, "goroutine_fd", int(g.seg.wait_obj[v]))
        return outside + [o for o in self.held_up(peers, a, b, utid) if o.utid not in {x.utid for x in outside}]

    def goroutine_peers(self, utid, a, b, end, kind, obj):
        """Candidates for the goroutine that ends a wait of Go thread utid
        that nothing names (kind goroutine_peer, goroutine_fd or
        goroutine_lock; obj what is waited for or held): the process's
        held-up threads (process_peers) that are not idle Ms; with none, the
        idle Ms, one of which stands for a goroutine locked to no thread.
        Goroutines the snapshot saw asleep on a timer and not run since
        (goroutines.timer_sleepers) come in among them, each stood for by an
        idle M (kind goroutine_timer, obj its goid), after the threads that
        wait and before those that compute: of the parked goroutines only
        they wake by themselves, so such a chain of parked goroutines ends
        at one of them or at a running one, and, as in process_peers, a
        waiter downstream ranks before a thread that may hold nothing."""
        g = self.g
        every = [dataclasses.replace(o, kind=kind, obj=obj) for o in self.process_peers(utid, a, b, end)]
        idle = [o for o in every if GR.idle_m(g, self.cls(o.utid, a, b), b)]
        busy = [o for o in every if o.utid not in {i.utid for i in idle}]
        if not busy:
            return every
        sleepers = GR.timer_sleepers(g, int(g.threads.pid[utid]), int(b)) if idle else []
        stand_ins = [dataclasses.replace(i, kind="goroutine_timer", obj=s["goid"]) for s, i in zip(sleepers, idle)]
        waits = [o for o in busy if self.cls(o.utid, a, b).block_type == B.LONG_WAIT]
        return waits + stand_ins + [o for o in busy if o not in waits]

    def held_up(self, owners, a, b, waiter=None):
        """Inferred holders (channel peers, children, weak futex owners) as
        threads that were held up over [a, b]: a strong owner or an
        abnormal holder stays; a holder that ran normally is replaced by its
        process's held-up threads (the thread FD_INFO saw using the object
        first is not always the one that holds it now: a process's main
        thread sets a pipe up, a worker answers on it), or dropped.  A weak
        holder that the waiter itself was holding up is dropped too
        (waits_for), and so is one being diagnosed now (on self.stack: the
        waiter is behind it on this chain): an inference that closes a loop
        says nothing about who holds the object, as process_peers already
        has it, and would hide a holder further on (a forked child that
        inherited a pipe and sleeps before it writes)."""
        out, seen = [], set()
        for o in owners:
            if not o.weak or self.cls(o.utid, a, b).abnormal:
                alts = [o]
            else:
                alts = [dataclasses.replace(p, kind=o.kind, obj=o.obj)
                        for p in self.process_peers(o.utid, a, b, o.ts)]
            for x in alts:
                if x.weak and waiter is not None and self.waits_for(x.utid, waiter, a, b):
                    continue
                if x.weak and x.utid in self.stack:
                    continue
                if x.utid not in seen:
                    seen.add(x.utid)
                    out.append(x)
        return out

    def spins_on_memory(self, c):
        """A RepeatedYield thread that yields more often than it waits:
        it spins on a flag in memory (sched_yield between reads), so its few
        futex waits are not what it polls (docs/event-graph.md)."""
        ev = c.evidence
        return ev.get("yields", 0) > ev.get("short_waits", 0)

    def waits_for(self, u, waiter, a, b):
        """Thread u slept through most (>= WAITER_ASLEEP) of [a, b] in one
        wait that `waiter`'s own strong wakeup ended: u waited for the
        waiter, so it released nothing the waiter polled while it slept,
        and an inferred hold (a futex it woke waiters of earlier: a GIL's
        hand-offs) is contradicted by that edge.  Causality runs waiter ->
        u, and u is not the waiter's holder."""
        w = self.asleep_throughout(self.cls(u, a, b), a, b)
        if w is None:
            return False
        e = W.ending_edge(self.g, int(w["vertex"]))
        g = self.g
        return e >= 0 and not g.edges.weak[e] and int(g.seg.utid[int(g.edges.src[e])]) == waiter

    @staticmethod
    def asleep_throughout(c, a, b):
        """The one wait (longest_wait evidence) in which the thread classified
        c slept through most (>= WAITER_ASLEEP) of [a, b], else None."""
        w = c.evidence.get("longest_wait") if c.block_type == B.LONG_WAIT else None
        return w if w and w.get("in_window_ns", 0) >= WAITER_ASLEEP * (b - a) else None

    def process_peers(self, utid, a, b, end, futex=None, loops=False, v=None):
        """Candidates for what nothing names the holder of: a futex without
        an owner field or an earlier waker (a semaphore, an rwlock or a
        condition variable taken without contention; futex = its address),
        or a signal awaited (sigwait, sigsuspend, pause: the sender is
        known only once it sends).  Whoever releases it most likely shares
        the waiter's process: its other threads that were themselves held
        up over [a, b] (abnormal, not in an idle loop wait, no relay, not
        waiting on the same futex).  Weak "process_peer" owners at their
        segment at `end`: threads not named yet first (one named already
        is followed only to place it deeper: _Run.deepen), a LongWait
        first (a holder keeps the lock while it waits downstream), then a
        loop paced by a device (blocktype.device_paced: it waits on a disk
        in small steps, downstream too, and so keeps what it holds; a
        thread that computes may hold nothing at all: an unrelated busy
        worker), then the busiest, then the lowest utid.  Before all of
        these, the threads the waiter woke or sent to in vertex v (the run
        that ended in the wait), if given: it handed them work (a pool's
        task, a request) just before it waited, and waits for their answer.
        The REPL asks which one, as for any weak owner."""
        g = self.g
        out, looping = [], []
        asked = _asked(g, v) if v is not None else set()
        for u in g.utids_of_pid(int(g.threads.pid[utid])):
            if u == utid or u in self.stack or g.thread_seg_hi[u] == g.thread_seg_lo[u]:
                continue
            if u in self.visited and u not in self.named:
                continue          # passed over already (a bystander, shared work)
            c = self.cls(u, a, b)
            w = (c.evidence.get("longest_wait") or {}) if c.block_type == B.LONG_WAIT else {}
            if futex is not None and w.get("reason") == "futex" and w.get("obj") == futex:
                continue          # waits on the same address: another waiter, not the holder
            if self.waits_for(u, utid, a, b):
                continue          # it waited for this very thread
            if not self.nameable(c):
                if c.abnormal and self.idle_loop_wait(c) and self.asleep_throughout(c, a, b) is not None:
                    looping.append(u)
                continue
            cpu = int(c.evidence.get("cpu_ns", 0))
            waits = 0 if c.block_type == B.LONG_WAIT else \
                1 if c.block_type == B.REPEATED_YIELD and B.device_paced(c.evidence) else 2
            out.append((u in self.named, u not in asked, waits, -cpu, u,
                        OW.Owner(u, int(g.segment_at(u, end)), -1, "process_peer", True, 1, cpu,
                                 int(futex or 0), end)))
        if not out and loops:
            # (for a LongWait on a futex: unnamed_holders) none held up but
            # event loops asleep in one loop wait all along: the one whose
            # input comes next posts it (an I/O thread that completes what
            # another waits for), and the walk goes on through its loop wait
            # to the other end of what it polls
            out = [(False, u not in asked, 0, 0, u, OW.Owner(u, int(g.segment_at(u, end)), -1, "process_peer", True,
                                                             1, 0, int(futex or 0), end)) for u in looping]
        return [o for *_, o in sorted(out, key=lambda t: t[:5])]

    def unnamed_holders(self, v, a, b):
        """process_peers of a LongWait vertex v that no task's wakeup ended,
        when it waits on a futex (event loops asleep all along last: loops)
        or a signal; [] otherwise."""
        g = self.g
        seg = g.seg
        if W.ending_edge(g, v) >= 0 or not seg.wait_known[v]:
            return []
        end = min(int(b), int(seg.wait_end[v]))
        if seg.wait_reason[v] == schema.WAIT_FUTEX:
            return self.process_peers(int(seg.utid[v]), a, b, end, futex=int(seg.wait_obj[v]), loops=True, v=v)
        if g.syscall_name(int(seg.wait_nr[v])) in SIGNAL_WAITS:
            return self.process_peers(int(seg.utid[v]), a, b, end, v=v)
        return []

    def signal_poll_peers(self, utid, a, b):
        """process_peers of a RepeatedYield thread that polled for signals
        (timed sigwaits, at least OBJ.MIN_TRIES of them in [a, b])."""
        counts = B.syscall_counts(self.g, utid, a, b)
        if sum(n for name, n in counts.items() if name in SIGNAL_WAITS) < OBJ.MIN_TRIES:
            return []
        return self.process_peers(utid, a, b, int(b))

    def follow_owner(self, v, owners, depth, a, b, info):
        """One step from the victim's vertex v to the holder the chooser
        picks among `owners`: adds it to the path (role "owner") and returns
        the two-step SliceResult, or None (no owners, or declined)."""
        o = self.chooser.pick_owner(v, owners) if owners else None
        if o is None:
            return None
        g = self.g
        info["owner"] = o
        if o.kind == "goroutine_timer":
            self.sleeper_stand_ins.add(o.utid)
        e = o.edge_ref(g, v)
        self.owners_by_edge[(e.src, e.dst, e.ts)] = (o, int(g.seg.utid[v]))
        self.add(o.vertex, "owner", depth, dict(_edge_dict(e), owner_kind=o.kind, eid=o.edge if o.edge >= 0 else None),
                 a, b)
        return SliceResult([SliceStep(int(v)), SliceStep(o.vertex, e)],
                           {"kind": "ownership", "label": o.kind, "vertex": o.vertex})

    def owner_relation(self, e):
        """The root-cause relation of a holder reached by ownership edge e."""
        o, victim = self.owners_by_edge[(e.src, e.dst, e.ts)]
        return R.owner_relation_text(self.g, o, victim, e.ts - self.t0, self.t0)


def _asked(g, v):
    """The threads vertex v woke or sent to (strong wakeup / message edges
    out of v, to other threads): what its thread handed work to just
    before the wait v ends in."""
    E = g.edges
    eids = g.out_eid[g.out_ptr[v]:g.out_ptr[v + 1]]
    kind = E.type[eids]
    sel = eids[((kind == G.EDGE_WAKEUP) | (kind == G.EDGE_MESSAGE)) & ~E.weak[eids]]
    me = int(g.seg.utid[v])
    return {u for u in g.seg.utid[E.dst[sel]].tolist() if u != me}


def _woken_successor(g, v):
    """v's successor when a task's wakeup edge ended v's wait, else -1."""
    e = W.ending_edge(g, v)
    return g.next_segment(v) if W.task_woke(g, e) else -1


def _read_after(g, v):
    """The message edge by which v's thread, right after a wait the kernel
    ended (no task's wakeup edge), read what another thread had sent during
    that wait: a strong MESSAGE edge into v's successor from another
    thread, sent while v waited, the earliest read; -1
    when none.  The sender stands for the waker the trace does not show (a
    wait woken through a timeout or a kernel path the tracer culls, then
    finding the data ready)."""
    n = g.next_segment(v)
    if n < 0 or W.ending_edge(g, v) >= 0:
        return -1
    ed, seg = g.edges, g.seg
    me = int(seg.utid[v])
    lo, hi = int(seg.end[v]), int(seg.start[n])     # the wait: from v's end to its successor
    best = -1
    for e in g.in_edges(n).tolist():
        if int(ed.type[e]) != G.EDGE_MESSAGE or ed.weak[e] or int(seg.utid[int(ed.src[e])]) == me:
            continue
        if not lo <= int(ed.src_ts[e]) <= hi:
            continue
        if best < 0 or int(ed.ts[e]) < int(ed.ts[best]):
            best = e
    return best


def _kernel_wakers(g, v):
    """[(label, count)] of the culled (kernel) wakeups that ended v's wait and
    the thread's other waits with the same wait reason and syscall, most
    frequent first ([] when tasks ended them all)."""
    seg = g.seg
    utid = int(seg.utid[v])
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
    counts = {}
    for w in range(lo, hi - 1):
        if seg.end_kind[w] != G.END_BLOCKED or seg.wait_reason[w] != seg.wait_reason[v] \
                or seg.wait_nr[w] != seg.wait_nr[v]:
            continue
        n = w + 1
        if seg.start_kind[n] == G.START_WAKEUP and g.in_wake[n] < 0:
            label = g.start_label(n)
            counts[label] = counts.get(label, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def diagnose_hang(g, hang, threshold_ns=DEFAULT_THRESHOLD_NS, chooser=None):
    """Runs Algorithm 1 on a Hang (from hangs.find_hang / list_hangs)."""
    chooser = chooser or AutoChooser()
    run = _Run(g, hang, chooser, int(threshold_ns))
    streamed = stream_wait(g, hang.classification, hang.start_ns, hang.end_ns)
    if streamed is not None:          # many short reads, each ended by one producer: a wait on it
        hang.classification, hang.vertex = streamed, streamed.vertex
    # a locked goroutine parked before the probes: the hung M's wait is its (goroutines.py)
    hang.classification = GR.with_parked(g, hang.classification, hang.end_ns)
    c = hang.classification
    a, b = hang.start_ns, hang.end_ns
    run.path.append(PathElem(hang.vertex, hang.utid, "spinning", 0, None, c.block_type, a, b, block_window=(a, b)))
    info = run.diagnose_vertex(hang.utid, hang.vertex, c, a, b, 0)
    extra = {"baseline": info["baseline"].to_dict(g) if info["baseline"] is not None else None,
             "origin": info["origin"], "flags": info["flags"],
             "owner": info["owner"].to_dict(g) if info["owner"] is not None else None}
    if c.block_type == B.LONG_RUNNING:
        why = run.why(c)
        if info["slice"] is not None:
            why += "; " + R.trigger_text(g, info["slice"], run.t0)
        run.root_causes.insert(0, RootCause(hang.utid, hang.vertex, c.block_type, a, b, why, 0,
                                            c.evidence, info["origin"]))
    elif c.block_type == B.REPEATED_YIELD and not info["flags"] and info["owner"] is None:
        run.root_causes.insert(0, RootCause(hang.utid, hang.vertex, c.block_type, a, b,
                                            run.yield_text(c), 0, c.evidence, None,
                                            info["advice"]))
    elif not run.root_causes:
        if c.block_type == B.LONG_WAIT:
            why = run.why(c)
        else:
            why = R.flags_polled_text(info["flags"]) if info["flags"] else run.yield_text(c)
        explained = info["baseline"] is not None or info["slice"] is not None
        kernel = _kernel_wakers(g, hang.vertex) \
            if info["owner"] is None and not explained and c.block_type == B.LONG_WAIT else ()
        why += R.unexplained_text(g, c.block_type, info["owner"], explained, kernel)
        run.root_causes.append(RootCause(hang.utid, hang.vertex, c.block_type, a, b, why, 0,
                                         c.evidence, info["origin"]))
    run.root_causes.sort(key=lambda r: r.depth)
    _mark_primary(run.root_causes)
    notes = []
    lost = g.stats.get("lost_records", 0)
    if lost:
        notes.append(R.lost_records_note(lost))
    unreported = g.stats.get("unreported_switches", 0)
    if unreported:
        notes.append(R.unreported_switches_note(unreported))
    d = Diagnosis(g, hang, int(threshold_ns), run.path, run.root_causes, int(chooser.queries),
                  extra, notes)
    d.rules_fired = list(chooser.rules.fired) if chooser.rules is not None else []
    d.metrics = _metrics(g, hang, threshold_ns, chooser, d)
    explain(d)
    return d


def _mark_primary(roots):
    """Marks the primary root cause: the deepest.  Among causes of that
    depth, one on the hung wait's own chain (RootCause.direct: reached by
    the wakeups that ended the waits and the holders the kernel named)
    before one reached through a baseline's path or an inferred holder,
    which stands for another occasion or a guess; then the last found
    (within one path, a thread found later lies further back along
    causality)."""
    if not roots:
        return
    deepest = max(r.depth for r in roots)
    tied = [r for r in roots if r.depth == deepest]
    ([r for r in tied if r.direct] or tied)[-1].primary = True


def _metrics(g, hang, threshold_ns, chooser, d):
    """Table 2 of the paper: queries asked, path length of this run and of
    the automatic heuristic on the same hang (run again when this run was
    steered: with the chooser's auto_twin - the same rules - if it has one)."""
    mode = chooser.mode
    if mode == "auto":
        auto_len = len(d.path)
    else:
        twin = chooser.auto_twin()
        auto_len = len(diagnose_hang(g, hang, threshold_ns, twin).path)
    return {
        "queries": int(chooser.queries),
        "path_len": len(d.path),
        "auto_path_len": auto_len,
        "saved_by_rules": int(chooser.saved_by_rules),
        "saved_by_memory": 0 if mode == "auto" else int(chooser.saved_by_memory),
        "mode": mode,
    }


def diagnose(g, pid, tid=None, at=None, threshold_ns=DEFAULT_THRESHOLD_NS, chooser=None):
    """Finds the hang of `pid` (main thread by default; see hangs.find_hang)
    and diagnoses it.  Raises hangs.DiagnoseError subclasses with one clear
    line when there is nothing to diagnose."""
    hang = find_hang(g, pid, tid=tid, at=at, threshold_ns=threshold_ns)
    return diagnose_hang(g, hang, threshold_ns=threshold_ns, chooser=chooser)
