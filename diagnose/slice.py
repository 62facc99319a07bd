"""InteractiveSlice (Algorithm 1, lines 26-43) and the Chooser interface.

Algorithm: walk backwards from a vertex along incoming causal edges.
  At vertex v, reached through an edge that left v at time t (the start
  vertex: t = `cursor`, default v's start), the candidates are v's incoming
  wakeup / spawn / data_flag / message edges with ts <= t, most recent first
  by the time they left their source (src_ts; CAUSAL_TYPES says why timer
  edges are not among them).  A split vertex whose only causes are long
  queued messages also offers its program-order edge, first
  (_queued_behind_split).
    - candidates exist: chooser.pick_predecessor(v, candidates) picks one
      (None = stop: origin "stopped", or the chooser's `stop_origin` when it
      says why, e.g. "not_causal" when rules removed every candidate); a
      weak edge is followed only if chooser.follow_weak(edge).
    - none: if v started with a culled wakeup, stop; the origin is its wait
      reason label ("timer", "net", "block", "device", "kthread", ...);
      except a timer that ended a pause < 1 ms (a backoff inside one job:
      program_order_step), where the program-order edge is followed.
      Else, if v's previous segment of the same thread ended less than 1 ms
      before v started (v was switched in without a recorded wakeup: it is
      really the same work), follow the program-order edge
      (program_order_step); when a splitting heuristic made that boundary
      the edge is weak and, like any weak edge, followed only if
      chooser.follow_weak(edge).
      Else stop: origin "no_incoming_edge" with v's start label
      (trace_start, thread_start, switch_in, pre_trace).
  Stop also at a vertex an input probe opened (split kind "input": the key
  press or button that started the work; origin "input", before looking at
  its edges), at a vertex already on the slice ("cycle") and after 64 hops
  ("max_hops").

input_slice: a LongRunning stretch whose thread has worked without pause
(every gap between its segments < 1 ms, or inside the dispatch the stretch
sits in) since an input vertex is sliced to that input without a walk: the round trips the work makes meanwhile (a GTK
handler waiting for its X server's replies) are steps of the work, not its
trigger, and walking through a server busy with other clients (xdotool)
leads away from the key press.  A longer gap means the thread idled in its
loop, and the walk decides as usual.

Chooser: the only place where a human can steer the walk.  AutoChooser is
the paper's automatic mode: most recent edge, follow weak edges, most recent
(best ranked) baseline, always go on.  `queries` counts questions actually
asked of a user (always 0 for AutoChooser); an interactive chooser (the REPL)
subclasses Chooser and increments it.

Invariants: slice steps are distinct vertices; steps[0] is the start vertex
with edge None; steps[i].edge goes from steps[i].vertex to steps[i-1].vertex
in causal direction.
"""
from dataclasses import dataclass, field


from argus.tracer import schema
from argus.graphbuild import graph as G

MAX_HOPS = 64
SAME_WORK_GAP_NS = 1_000_000
MAX_INPUT_LOOKBACK = 256      # segments input_slice walks back over
QUEUED_NS = 100_000_000     # a message this long in the receiver's queue waited for the receiver
# The edge types the slice follows (docs/event-graph.md, "Which edges the
# slice follows"; slice_test.py tests both decisions on crafted graphs):
#   MESSAGE: followed.  A send matched to a receive that did not block (a
#     request queued for a busy server loop, a reply read after a poll) is
#     causal like the wakeup it replaces; without it the slice cannot follow
#     a request into a batching or event-loop server that was already running.
#   TIMER: not followed.  The arming thread (arm -> fire) is most often the
#     waiting thread itself or a loop arming its own timeout: the wait's
#     deadline, not what it waited for.  The slice stops at the culled
#     "timer" wakeup instead; the edge stays in the graph for the REPL.
#   OWNERSHIP: only where Algorithm 1 asks for it (algorithm.py).
CAUSAL_TYPES = (G.EDGE_WAKEUP, G.EDGE_SPAWN, G.EDGE_DATA_FLAG, G.EDGE_MESSAGE)


@dataclass(frozen=True)
class EdgeRef:
    eid: int
    src: int
    dst: int
    type: str
    weak: bool
    ts: int
    src_ts: int

    @classmethod
    def of(cls, g, e):
        e = int(e)
        ed = g.edges
        return cls(e, int(ed.src[e]), int(ed.dst[e]), G.EDGE_TYPE_NAMES[int(ed.type[e])],
                   bool(ed.weak[e]), int(ed.ts[e]), int(ed.src_ts[e]))


@dataclass
class SliceStep:
    vertex: int
    edge: EdgeRef = None     # edge from this vertex to the previous step's vertex


@dataclass
class SliceResult:
    steps: list
    origin: dict = field(default_factory=dict)

    @property
    def vertices(self):
        return [s.vertex for s in self.steps]


class Chooser:
    """Interface between Algorithm 1 and whoever steers it.

    pick_predecessor(vertex, candidates): candidates are EdgeRefs into `vertex`,
        most recent first; return one of them, or None to stop the slice.
    follow_weak(edge): whether to follow a weak edge (possibly only mutual
        exclusion); False stops the slice there.
    pick_baseline(candidates): Baselines ranked best first; return one or None
        (no baseline: the diagnosis continues without one).
    go_on(root_cause): whether to diagnose this root cause recursively
        ("the culprit of the culprit").
    pick_owner(vertex, owners): ownership.Owner candidates, ranked best
        first, for who holds what `vertex` polls or waits for; return one, or
        None (stop there: the walk ends at the victim).
    """

    queries = 0
    mode = "interactive"     # AutoChooser: "auto"; chooser.AskingChooser: interactive | replay | auto
    rules = None             # a rules.RuleSet when the chooser applies rules (chooser.AskingChooser)
    saved_by_rules = 0
    saved_by_memory = 0
    stop_origin = None       # why pick_predecessor last returned None, when it knows (an origin dict)
    diverged = False         # recorded answers stopped fitting the walk (chooser.AskingChooser)
    aborted = False          # the user interrupted: the rest was answered "stop"
    new_rules = ()           # rules made by this run's answers

    def auto_twin(self):
        """The chooser of the automatic run of the same hang (Table 2's
        auto_path_len): the same rules, nobody asked."""
        return AutoChooser()

    def pick_predecessor(self, vertex, candidates):
        raise NotImplementedError

    def follow_weak(self, edge):
        raise NotImplementedError

    def pick_baseline(self, candidates):
        raise NotImplementedError

    def go_on(self, root_cause):
        raise NotImplementedError

    def pick_owner(self, vertex, owners):
        raise NotImplementedError


class AutoChooser(Chooser):
    """Automatic mode: most recent edge, follow weak edges, best-ranked (most
    recent) baseline, always go on, best-ranked holder (strong, most tries,
    most CPU).  Asks nothing: queries stays 0."""

    mode = "auto"

    def __init__(self):
        self.queries = 0

    def pick_predecessor(self, vertex, candidates):
        return candidates[0] if candidates else None

    def follow_weak(self, edge):
        return True

    def pick_baseline(self, candidates):
        return candidates[0] if candidates else None

    def go_on(self, root_cause):
        return True

    def pick_owner(self, vertex, owners):
        return owners[0] if owners else None


def candidates(g, v, t):
    """Incoming causal edges of v with ts <= t, most recent first (with the
    data an in-process hand-off delivered moved ahead: _data_before_handoff)."""
    ed = g.edges
    out = [e for e in g.in_edges(v).tolist() if ed.type[e] in CAUSAL_TYPES and ed.ts[e] <= t]
    # most recent by when the dependency left its source: a request queued
    # long ago (a message edge read at the same time as the wakeup that let
    # the server read it) ranks below what unblocked the server just now
    out.sort(key=lambda e: (-int(ed.src_ts[e]), -int(ed.ts[e]), -e))
    refs = _data_before_handoff(g, v, t, [EdgeRef.of(g, e) for e in out])
    po = _queued_behind_split(g, v, refs)
    return ([po] + refs) if po is not None else refs


def _data_before_handoff(g, v, t, refs):
    """Moves a message ahead of the wakeups that merely handed it on: a
    wakeup from another thread of v's own process, not the message's
    sender, less than SAME_WORK_GAP_NS after the message was sent.  That
    is a user-space scheduler delivering the data (Go's netpoller waking
    a parked M, an event-loop thread passing a ready socket to a worker);
    the sender is what v waited for.  A request queued longer ranks by time
    as before (what released it is the cause then).  The messages weighed
    include those sent before t that v read just after it (what a wakeup at
    its start delivered): here only, never candidates on their own."""
    if not any(r.type == "wakeup" for r in refs):
        return refs
    ed = g.edges
    late = [EdgeRef.of(g, e) for e in g.in_edges(v).tolist()
            if ed.type[e] == G.EDGE_MESSAGE and ed.src_ts[e] <= t < ed.ts[e] <= t + SAME_WORK_GAP_NS]
    msgs = [r for r in refs if r.type == "message"] + late
    if not msgs:
        return refs
    tid = g.seg.tid
    pid = int(g.threads.pid[int(g.seg.utid[v])])
    first = {}
    for m in msgs:
        for w in refs:
            if w.type != "wakeup" or int(tid[w.src]) == int(tid[m.src]):
                continue
            if int(g.threads.pid[int(g.seg.utid[w.src])]) == pid and 0 <= w.ts - m.src_ts < SAME_WORK_GAP_NS:
                first.setdefault(m.eid, m)
    if not first:
        return refs
    return list(first.values()) + [r for r in refs if r.eid not in first]


def _queued_behind_split(g, v, refs):
    """v was split off a running loop iteration and its only causes are
    messages that sat in its queue >= QUEUED_NS (an X server that reads a
    client's request only once a grab is released, a server busy with other
    work): what delayed the read is in the iteration before the split, so
    its (weak) program-order edge is offered first."""
    if not refs or g.seg.start_kind[v] != G.START_SPLIT:
        return None
    if any(r.type != "message" or r.ts - r.src_ts < QUEUED_NS for r in refs):
        return None
    return _program_order_edge(g, v)


def _program_order_edge(g, v):
    for e in g.in_edges(v).tolist():
        if g.edges.type[e] == G.EDGE_PROGRAM_ORDER:
            return EdgeRef.of(g, e)
    return None


def program_order_step(g, v, same_work_gap_ns=SAME_WORK_GAP_NS):
    """The program-order edge the walk takes at v when v has no incoming
    causal edge (None when it stops there instead): v's thread's previous
    segment ended less than same_work_gap_ns before v started, and v did
    not start with a culled wakeup - except a timer's: a pause that short
    ended by a timer is a backoff inside one job (a spinning scheduler, a
    usleep between two steps), which v continues; a longer timed wait (a
    tick, a sleep the work waited out) is where the work began.  The
    REPL's `follow` offers the same."""
    if _culled_start(g, v) and g.start_label(v) != "timer":
        return None
    prev = g.prev_segment(v)
    if prev >= 0 and g.seg.start[v] - g.seg.end[prev] < same_work_gap_ns:
        return _program_order_edge(g, v)
    return None


def _input_start(g, v):
    return "split_kind" in g.seg.names and int(g.seg.split_kind[v]) == G.SPLIT_INPUT


INPUT_LABEL = "an input event (the key press or button that started it)"


def input_slice(g, v, dispatch_start=None, same_work_gap_ns=SAME_WORK_GAP_NS, max_segments=MAX_INPUT_LOOKBACK):
    """The slice [v's input vertex] (origin "input") when v's thread has
    worked without pause since an input: walking back over its segments
    from v, each gap between two of them (a block) is shorter than
    same_work_gap_ns or lies inside the dispatch v sits in (dispatch_start:
    its callback_begin ts; a block inside a callback is the callback's own
    wait, e.g. a round trip to the X server on a loaded machine), until a
    segment an input opened.  None at another gap (the thread idled: later
    work is not the input's), at the thread's first segment, or after
    max_segments."""
    if "split_kind" not in g.seg.names:
        return None
    kinds = g.seg.split_kind
    cur = int(v)
    for _ in range(max_segments):
        if int(kinds[cur]) == G.SPLIT_INPUT:
            return SliceResult([SliceStep(cur, None)], {"kind": "input", "label": INPUT_LABEL, "vertex": cur})
        prev = g.prev_segment(cur)
        if prev < 0:
            return None
        inside = dispatch_start is not None and g.seg.end[prev] >= dispatch_start
        if not inside and g.seg.start[cur] - g.seg.end[prev] >= same_work_gap_ns:
            return None
        cur = int(prev)
    return None


def _culled_start(g, v):
    return (g.seg.start_kind[v] == G.START_WAKEUP and g.seg.start_ctx[v] != schema.WAKE_TASK
            and g.in_wake[v] < 0)


def interactive_slice(g, v, chooser, cursor=None, first_edge=None, max_hops=MAX_HOPS,
                      same_work_gap_ns=SAME_WORK_GAP_NS):
    v = int(v)
    steps = [SliceStep(v, None)]
    visited = {v}
    cur = v
    t = int(g.seg.start[v]) if cursor is None else int(cursor)
    forced = EdgeRef.of(g, first_edge) if first_edge is not None and not isinstance(first_edge, EdgeRef) \
        else first_edge
    origin = None
    hops = 0
    while origin is None:
        if hops >= max_hops:
            origin = {"kind": "max_hops", "label": f"stopped after {max_hops} hops"}
            break
        if forced is not None:
            e, forced = forced, None
        elif _input_start(g, cur):
            origin = {"kind": "input", "label": INPUT_LABEL}
            break
        else:
            cands = candidates(g, cur, t)
            if cands:
                e = chooser.pick_predecessor(cur, cands)
                if e is None:
                    # a chooser may say why (e.g. every candidate matched a not-causal rule)
                    origin = chooser.stop_origin or {"kind": "stopped", "label": "stopped by the user"}
                    chooser.stop_origin = None
                    break
                if e.weak and not chooser.follow_weak(e):
                    origin = {"kind": "weak_edge", "label": "weak edge not followed", "edge": e.eid}
                    break
            else:
                e = program_order_step(g, cur, same_work_gap_ns)
                if e is None:
                    kind = "culled" if _culled_start(g, cur) else "no_incoming_edge"
                    origin = {"kind": kind, "label": g.start_label(cur)}
                    break
                if e.weak and not chooser.follow_weak(e):     # a heuristic split: maybe other work
                    origin = {"kind": "weak_edge", "label": "weak edge not followed", "edge": e.eid}
                    break
        u = e.src
        if u in visited:
            origin = {"kind": "cycle", "label": "cycle", "cycle_vertex": u}
            break
        steps.append(SliceStep(u, e))
        visited.add(u)
        cur = u
        t = e.src_ts
        hops += 1
    origin["vertex"] = cur
    return SliceResult(steps, origin)
