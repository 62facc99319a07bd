"""The diagnosis slice as a graph (Graphviz DOT, or SVG through `dot`), from
export_model.timeline.

Nodes: one per path vertex (a vertex reached twice, e.g. at two depths, is
one node), clustered by thread; the label names the thread, the vertex, its
block type, role and depth, and its span relative to the hang start.  The
spinning vertex is a double octagon; root causes are filled (the primary one
red and bold).  Edges: path[i] -> path[i-1] for every step the walk took
(cause -> effect), labelled with the edge type; weak edges dashed and grey,
the culprit steps (a recursion into a root cause, no graph edge) dotted.

Every trace-derived string (thread and process names, wait reasons) goes
through textsafe.safe (control bytes and bidi overrides become visible
escapes, in the DOT file and the SVG alike), graphviz.escape (backslashes
are DOT escapes) and nohtml (a name like "<b>" is not an HTML label): the
trace chooses text, never markup.
SVG: graphviz's pipe() runs the `dot` binary with the source on stdin;
nothing from the trace reaches a command line.
"""
from argus.tracer.textsafe import safe
from argus.diagnose import export_model as M
from argus.diagnose.report import fmt_dur, fmt_rel


def _text(s):
    """A DOT label: each line escaped, joined with DOT's centred line break."""
    import graphviz
    return graphviz.nohtml("\\n".join(graphviz.escape(safe(line)) for line in str(s).split("\n")))


def build(tl):
    """A graphviz.Digraph of the diagnosis slice."""
    try:
        import graphviz
    except ImportError as e:
        raise RuntimeError(f"the graphviz Python package is needed for --dot / --svg ({e})") from None
    t0 = tl["hang"]["start"]
    threads = {t["utid"]: t for t in tl["threads"]}
    roots = {r["vertex"]: r for r in tl["roots"]}
    # newrank: dot's default ranking of clusters fails ("trouble in init_rank") when the
    # walk goes back and forth between threads (a baseline's path beside the hang's own)
    dot = graphviz.Digraph("argus_diagnosis", graph_attr={"rankdir": "BT", "newrank": "true",
                                                          "fontname": "sans-serif",
                                                          "label": _text("Argus diagnosis: causal chain "
                                                                         "(cause -> effect)"),
                                                          "labelloc": "t"},
                           node_attr={"shape": "box", "style": "rounded", "fontname": "sans-serif",
                                      "fontsize": "10"},
                           edge_attr={"fontname": "sans-serif", "fontsize": "9"})
    first = {}
    for p in tl["path"]:
        first.setdefault(p["vertex"], p)
    for r in tl["roots"]:
        first.setdefault(r["vertex"], {"vertex": r["vertex"], "utid": r["utid"], "role": "root cause",
                                       "depth": r["depth"], "block_type": r["block_type"],
                                       "start": r["start"], "end": r["end"], "index": None})
    clusters = {}
    for v, p in first.items():
        clusters.setdefault(p["utid"], []).append(p)
    for utid, items in clusters.items():
        t = threads[utid]
        with dot.subgraph(name=f"cluster_{utid}") as c:
            c.attr(label=_text(f"{M.thread_label(t)} ({t['process'] or '?'}/{t['pid']})"), style="dashed",
                   color="grey50")
            for p in items:
                v = p["vertex"]
                label = (f"vertex {v}: {p['block_type']}\n{p['role']}"
                         + (f", depth {p['depth']}" if p["depth"] else "")
                         + f"\n{fmt_rel(p['start'] - t0)} .. {fmt_rel(p['end'] - t0)}"
                         + f" ({fmt_dur(p['end'] - p['start'])})")
                attrs = {}
                if v == tl["hang"]["vertex"]:
                    attrs.update(shape="doubleoctagon", style="bold")
                r = roots.get(v)
                if r is not None:
                    label += "\n" + ("PRIMARY ROOT CAUSE" if r["primary"] else "root cause")
                    attrs.update(style="rounded,filled" + (",bold" if r["primary"] else ""),
                                 fillcolor="#f4a6a6" if r["primary"] else "#fde3a7",
                                 color="#b00000" if r["primary"] else "black")
                c.node(f"v{v}", label=_text(label), **attrs)
    path = tl["path"]
    for i in range(1, len(path)):
        p, q = path[i], path[i - 1]
        etype = p["edge_type"]
        if etype is None or p["vertex"] == q["vertex"]:
            continue
        attrs = {}
        if p["weak"]:
            attrs.update(style="dashed", color="grey40", fontcolor="grey40")
        if etype in ("culprit", "baseline"):        # steps of the walk, not graph edges
            attrs.update(style="dotted")
        dot.edge(f"v{p['vertex']}", f"v{q['vertex']}",
                 label=_text(f"#{i} {etype}" + (" (weak)" if p["weak"] else "")), **attrs)
    return dot


def render_dot(tl):
    return build(tl).source


def render_svg(tl):
    """SVG text; RuntimeError with one line when the dot binary is missing or fails."""
    import graphviz
    try:
        return build(tl).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise RuntimeError("graphviz's dot program is not installed (Debian: apt install graphviz)") from None
    except graphviz.CalledProcessError as e:
        raise RuntimeError(f"dot failed: {' '.join(str(e.stderr or e).split())[:200]}") from None
