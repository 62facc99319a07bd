"""Rich renderings shared by the REPL commands (vertex lines, edge lists,
the diagnosis report)."""
from rich.table import Table
from rich.text import Text

from argus.diagnose import blocktype as B
from argus.diagnose import hosts
from argus.diagnose.report import fmt_dur, fmt_rel, render_text, evidence_text
from argus.graphbuild import graph as G
from argus.diagnose.slice import CAUSAL_TYPES, candidates, program_order_step


def thread_label(g, u):
    """comm/tid of a thread (host:tid in a graph of several hosts)."""
    return f"{g.comm(u)}/{hosts.graph_label(g, int(g.threads.tid[u]))}"


def process_label(g, pid):
    """name/pid of a process (host:pid with several hosts) and where it lives."""
    where = g.process_where(pid)
    return f"{g.process_name(pid)}/{hosts.graph_label(g, pid)}" + (f" [{where}]" if where else "")


def who(g, v):
    u = int(g.seg.utid[v])
    return thread_label(g, u), process_label(g, int(g.threads.pid[u]))


def causal_in_edges(g, v):
    """The edges a walk back from v can take: first those Algorithm 1's
    slice weighs when it enters v at its start (slice.candidates: causal
    edges up to then, ranked as the walk ranks them, with a split's
    program-order edge when the walk prefers it), else the program-order
    edge it falls back to (slice.program_order_step); then v's later causal
    in-edges (e.g. a message read inside it), most recent first.  So
    `follow` goes wherever the diagnosis went."""
    ed = g.edges
    es = [r.eid for r in candidates(g, v, int(g.seg.start[v]))]
    if not es:
        po = program_order_step(g, v)
        if po is not None:
            es = [po.eid]
    later = [e for e in g.in_edges(v).tolist() if ed.type[e] in CAUSAL_TYPES and e not in es]
    later.sort(key=lambda e: (-int(ed.ts[e]), -e))
    return es + later


def edge_table(ctx, edges, incoming=True):
    g = ctx.g
    t = Table(box=None, pad_edge=False)
    for col in ("#", "edge", "type", "from" if incoming else "to", "process", "at"):
        t.add_column(col)
    for i, e in enumerate(edges):
        other = int(g.edges.src[e]) if incoming else int(g.edges.dst[e])
        th, pr = who(g, other)
        typ = G.EDGE_TYPE_NAMES[int(g.edges.type[e])] + (" (weak)" if g.edges.weak[e] else "")
        t.add_row(str(i + 1), str(e), typ, f"{th} v{other}", pr, fmt_rel(int(g.edges.ts[e]) - ctx.t0))
    return t


def vertex_panel(ctx, v):
    g = ctx.g
    s = g.seg
    th, pr = who(g, v)
    lines = [f"vertex {v}: {th} in {pr}",
             f"  runs {fmt_rel(int(s.start[v]) - ctx.t0)} .. {fmt_rel(int(s.end[v]) - ctx.t0)} "
             f"(started by {g.start_label(v)}), on CPU {fmt_dur(int(s.cpu_ns[v]))}, "
             f"{int(s.nsyscalls[v])} syscalls, {int(s.yields[v])} yields"]
    if s.end_kind[v] == G.END_BLOCKED:
        w = B.wait_info(g, v)
        lines.append(f"  then waits on {w['what']} for {fmt_dur(w['dur_ns'])}"
                     + (" (still waiting at trace end)" if w["ongoing"] else "")
                     + (" (timed out)" if w["timed_out"] else ""))
        a, b = w["start_ns"], w["end_ns"]
    else:
        a, b = int(s.start[v]), int(s.end[v])
    judged = diagnosis_block_types(ctx, v)
    for what, bt, ra, rb in judged:
        # the diagnosis's own verdict over the window it judged, never a
        # second one over this vertex's span alone (a culprit computing for
        # 3 s has a short wait of its own: "LongWait, on CPU 0%" misleads)
        ev = B.classify(g, int(s.utid[v]), ra, rb).evidence
        lines.append(f"  block type ({what}, over {fmt_rel(ra - ctx.t0)} .. {fmt_rel(rb - ctx.t0)}): "
                     f"{bt}; {evidence_text(ev)}")
    if not judged:
        c = B.classify(g, int(s.utid[v]), a, b)
        lines.append(f"  block type over that window: {c.block_type}; {evidence_text(c.evidence)}")
    return "\n".join(lines)


def diagnosis_block_types(ctx, v):
    """[(what, block type, window start, window end)] the current diagnosis
    gave vertex v: as a step of its path (the block type `path` lists, over
    the window of that step's level) and as a root cause (over the root
    cause's window) when that says something else; [] when v is neither."""
    d = ctx.diagnosis
    if d is None:
        return []
    out = []
    i = ctx.path_place(v)
    if i is not None:
        p = d.path[i]
        a, b = p.block_window or (p.start_ns, p.end_ns)
        out.append((f"path step {i}, {p.role}", p.block_type, int(a), int(b)))
    for r in d.root_causes:
        if int(r.vertex) == int(v) and (not out or (out[0][1:] != (r.block_type, int(r.start_ns), int(r.end_ns)))):
            out.append(("root cause", r.block_type, int(r.start_ns), int(r.end_ns)))
            break
    return out


def report_text(report):
    return render_text(report)
