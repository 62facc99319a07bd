"""What-if slack: how much shorter the hang gets if one root cause's
segment took its baseline duration (critical-path analysis over the slice).

Algorithm:
  1. nodes: the hang [a, b] (the spinning vertex's window) and every root
     cause r with its interval clipped to the window; r's parent is the
     root cause one level up (depth - 1) whose interval contains r's end,
     the tightest such, else the hang: the parent's wait is what r's work
     (or wait) delays;
  2. baseline duration B(r): LongRunning - the running time of the same
     thread's vertex on the baseline path (the quick run of the same work);
     LongWait - the wait of r's own best baseline (baseline.find_wait_baselines);
     otherwise unknown (B = 0: the segment vanishes, an upper bound);
  3. replay, for each r alone: end'(n) = end(n) - max(0, L(n) - L'(n)) where
     L(n) / L'(n) are the latest end of n's children before / after the
     change (a parent blocked until its last child ends moves with it; a
     child that was not the last one to end moves nothing: slack), and for
     r itself end'(r) = min(end'(r), start(r) + B(r)); never before start.
     saves(r) = end(hang) - end'(hang).
Invariants: 0 <= saves(r) <= b - a; a root cause that is the spinning
thread itself (depth 0) is the hang node; two parallel children of one
parent save only what the later one's excess over the earlier one is.
"""
from dataclasses import dataclass, field

from argus.graphbuild import graph as G
from argus.diagnose import blocktype as B
from argus.diagnose.baseline import find_wait_baselines
from argus.diagnose.fmt import fmt_dur


@dataclass
class Node:
    start: int
    end: int
    baseline: int = None          # ns; None: unknown
    parent: object = None         # key of the parent node, None for the hang
    children: list = field(default_factory=list)


def replay(nodes, root, changed):
    """The hang's end when node `changed` takes its baseline duration
    (nodes: {key: Node}, root: the hang's key)."""
    def end_of(k):
        n = nodes[k]
        end = n.end
        if n.children:
            old = max(nodes[c].end for c in n.children)
            new = max(end_of(c) for c in n.children)
            if old > n.start:                    # it waited for them: their shift is its shift
                end -= max(0, min(old, n.end) - max(new, n.start))
        if k == changed:
            end = min(end, n.start + (n.baseline or 0))
        return max(end, n.start)
    return end_of(root)


def link(nodes, root):
    for k, n in nodes.items():
        if k != root:
            nodes[n.parent if n.parent is not None else root].children.append(k)
    return nodes


def baseline_duration(g, r, path, threshold_ns):
    """B(r) in ns, with where it came from, or (None, None)."""
    if r.block_type == B.LONG_RUNNING:
        runs = [e for e in path if e.utid == r.utid and e.via_baseline
                and e.block_type == B.LONG_RUNNING and e.vertex != r.vertex]
        if runs:
            v = runs[0].vertex
            return int(g.seg.end[v] - g.seg.start[v]), "baseline path"
    if r.block_type == B.LONG_WAIT and g.seg.end_kind[r.vertex] == G.END_BLOCKED:
        # only a vertex that blocked has a wait to compare (a bug in the search
        # is a bug, not "no baseline": nothing is caught here)
        cands = find_wait_baselines(g, r.vertex, threshold_ns, hang_start=r.start_ns, limit=5)
        if cands:
            return int(cands[0].wait_ns), "baseline wait"
    return None, None


def what_if(d):
    """{id(root cause): {"baseline_ns", "baseline_from", "saves_ns", "hang_ns_after", "bound"}} for a
    Diagnosis; the hang window is [hang.start_ns, hang.end_ns]."""
    g, h = d.graph, d.hang
    a, b = int(h.start_ns), int(h.end_ns)
    nodes = {"hang": Node(a, b)}
    causes = list(d.root_causes)
    for r in causes:
        if r.depth == 0 and r.utid == h.utid:
            continue
        bl, _ = baseline_duration(g, r, d.path, d.threshold_ns)
        nodes[id(r)] = Node(max(int(r.start_ns), a), max(min(int(r.end_ns), b), max(int(r.start_ns), a)), bl)
    for r in causes:
        if id(r) not in nodes:
            continue
        ups = [p for p in causes if p.depth == r.depth - 1 and id(p) in nodes
               and nodes[id(p)].start <= nodes[id(r)].end <= nodes[id(p)].end]
        if ups:
            nodes[id(r)].parent = id(min(ups, key=lambda p: nodes[id(p)].end - nodes[id(p)].start))
    link(nodes, "hang")
    out = {}
    for r in causes:
        key = id(r) if id(r) in nodes else "hang"
        if key == "hang":
            bl, src = baseline_duration(g, r, d.path, d.threshold_ns)
            nodes["hang"].baseline = bl
        else:
            bl, src = baseline_duration(g, r, d.path, d.threshold_ns)
        after = replay(nodes, "hang", key) - a
        out[id(r)] = {"baseline_ns": bl, "baseline_from": src, "saves_ns": int((b - a) - after),
                      "hang_ns_after": int(after), "bound": bl is None}
        nodes["hang"].baseline = None
    return out


def render_whatif(w):
    if not w:
        return None
    base = f"if it took its baseline ({fmt_dur(w['baseline_ns'])}, {w['baseline_from']})" \
        if not w["bound"] else "if it took no time at all (no baseline known: an upper bound)"
    return f"what-if: {base}, the hang would be {fmt_dur(w['saves_ns'])} shorter " \
           f"({fmt_dur(w['hang_ns_after'])} instead of {fmt_dur(w['hang_ns_after'] + w['saves_ns'])})"
