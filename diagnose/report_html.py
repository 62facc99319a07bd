"""One self-contained HTML page per diagnosis (`argus report --html FILE`).

Inputs, all plain data: the report dict (report.to_json, "argus.diagnosis/1"),
the timeline (export_model.timeline), the answers the chooser recorded
(chooser.answers: kind, question, label, source), the lldb results found for
the root-cause threads (argus.scripts.lldb.generate.results_for docs), and optionally
the diagnosis slice drawn by graphviz (export_dot.render_svg).

Page: header (the hang, evidence, baseline), a timeline of the threads on the
path (inline SVG: per thread a state lane and a diagnosis lane, the hang
shaded, the path's causal edges as arrows), the chain table, the hung
instance against its baselines (compare), root causes (why, evidence,
what-if, CPU profile with a small flame graph, advice, lldb results), the
questions asked and their answers, the slice graph, rules and notes: what
the text report says, and more.

Safety: every string from the trace or the report goes through html.escape
(names, wait reasons, why texts), after textsafe.safe_lines (control bytes
such as ESC, which `cat` or `less -R` of the file would obey, and bidi
overrides become visible \\xNN / \\uXXXX escapes); the graphviz SVG is embedded as an <img>
data: URI (an image never runs script), and a Content-Security-Policy meta
allows no script, no fetch, only inline style and data: images: the page is
inert whatever a trace names its threads.  The timeline SVG is written here
(rects, lines and text: no plotting library needed for that).
"""
import base64
import html
import os
import urllib.parse
import zlib

from argus.tracer import containers
from argus.tracer.textsafe import safe_lines
from argus.diagnose import export_model as M
from argus.diagnose.compare import render_compare
from argus.diagnose.report import evidence_text, fmt_at, fmt_dur, fmt_pct, fmt_rel
from argus.diagnose.whatif import render_whatif
from argus.diagnose import hosts

STATE_COLOURS = {"running": "#2e9b48", "runnable": "#e8a33d", "blocked": "#c9ccd1"}
WIDTH, LEFT, ROW, LANE, TOP = 1100, 210, 46, 16, 34

CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#1d1f23;max-width:1200px}
h1{font-size:1.4em} h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.9em} td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:left}
th{background:#f5f6f8} .primary{color:#b00000;font-weight:bold} .weak{color:#777;font-style:italic}
.mono{font-family:ui-monospace,monospace} .note{color:#555} .box{background:#f8f8fa;padding:8px 12px}
svg text{font-family:system-ui,sans-serif}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def esc(x):
    return html.escape(safe_lines("" if x is None else x), quote=True)


def _who(x):
    return f"{x.get('comm') or '?'}/{hosts.label(x, 'tid')}"


def _proc(x):
    where = containers.describe(x, netns=False)      # the container, or a cgroup but the root
    return f"{x.get('process') or '?'}/{hosts.label(x)}" + (f" [{where}]" if where else "")


def _tl_pid(t):
    """A timeline thread's process id: host:pid with several hosts."""
    return f"{t['host']}:{t['local_pid']}" if t.get("host") else str(t["pid"])


def _hosts(report):
    """The hosts of a report merged from several buffers, with their clocks."""
    lines = hosts.text_lines(report)
    if not lines:
        return ""
    return "<h2 id='hosts'>Hosts</h2><pre class='mono'>" + esc("\n".join(lines[2:]).rstrip()) + "</pre>"


def _per_pixel(states, a, ns_per_px):
    """At most about one rectangle per pixel: an interval a pixel wide or more
    is kept; shorter ones are pooled by the pixel they start in, and the pool
    is drawn in its dominant state ("mostly ...", with how many intervals).
    Then neighbours of one state and reason merge.  A thread that polls
    every few microseconds would otherwise be a million rectangles (megabytes
    of HTML) that no eye can tell apart."""
    out, pool = [], None            # pool: [pixel index, {state: ns}, count]

    def flush():
        if pool:
            k, by_state, n = pool
            state = max(by_state, key=by_state.get)
            s0 = a + k * ns_per_px
            out.append((state, int(s0), int(s0 + ns_per_px), f"mostly {state} ({n} intervals)"))

    for state, s, e, why in states:
        if e - s >= ns_per_px:
            flush()
            pool = None
            out.append((state, s, e, why))
            continue
        k = int((s - a) // ns_per_px)
        if pool is None or pool[0] != k:
            flush()
            pool = [k, {}, 0]
        pool[1][state] = pool[1].get(state, 0) + (e - s)
        pool[2] += 1
    flush()
    merged = []
    for state, s, e, why in out:
        if merged and merged[-1][0] == state and merged[-1][3] == why and s - merged[-1][2] < ns_per_px:
            merged[-1] = (state, merged[-1][1], max(e, merged[-1][2]), why)
        else:
            merged.append((state, s, e, why))
    return merged


def _tick(rel, span):
    """An axis label with as many digits as the span needs (ticks a fifth apart differ)."""
    if span < 5_000_000:
        return f"{rel / 1e3:+.0f} us"
    if span < 5_000_000_000:
        return f"{rel / 1e6:+.1f} ms"
    return f"{rel / 1e9:+.3f} s"


def zoom_window(tl):
    """(a, b) around the path steps that lie outside the hang (the baseline
    path, the causal steps before it) when they would be squeezed into a
    sliver of the whole timeline (under a tenth of it), else None."""
    h = tl["hang"]
    steps = [p for p in tl["path"] if p["end"] < h["start"] or p["start"] > h["end"]]
    if not steps:
        return None
    a, b = min(p["start"] for p in steps), max(p["end"] for p in steps)
    if (b - a) * 10 > tl["end"] - tl["start"]:
        return None
    pad = max((b - a) // 10, 10_000)
    return max(a - pad, tl["start"]), min(b + pad, tl["end"])


def timeline_svg(tl, report, window=None, svg_id="timeline"):
    """The timeline over window (default: the whole timeline) as inline SVG
    text, every label escaped; items outside the window are left out."""
    a, b = window or (tl["start"], tl["end"])
    span = max(b - a, 1)
    inner = WIDTH - LEFT - 45      # room for the last tick label
    ns_per_px = span / inner
    t0 = tl["hang"]["start"]

    def x(ts):
        return LEFT + (min(max(int(ts), a), b) - a) / span * inner

    rows = {t["utid"]: k for k, t in enumerate(tl["threads"])}
    height = TOP + ROW * len(tl["threads"]) + 30
    out = [f'<svg id="{svg_id}" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="timeline of the threads on the path">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#3454d1"/></marker></defs>']
    h = tl["hang"]
    out.append(f'<rect class="hang" x="{x(h["start"]):.1f}" y="{TOP - 6}" width="{max(x(h["end"]) - x(h["start"]), 1):.1f}" '
               f'height="{ROW * len(tl["threads"]) + 6}" fill="#fdecec"><title>the hang: {esc(h["block_type"])} '
               f'for {esc(fmt_dur(h["end"] - h["start"]))}</title></rect>')
    for k in range(6):          # the time axis, relative to the hang start
        ts = a + span * k // 5
        out.append(f'<line x1="{x(ts):.1f}" y1="{TOP - 10}" x2="{x(ts):.1f}" y2="{height - 24}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{x(ts):.1f}" y="{TOP - 14}" font-size="10" text-anchor="middle">'
                   f'{esc(_tick(ts - t0, span))}</text>')
    for t in tl["threads"]:
        y = TOP + rows[t["utid"]] * ROW
        out.append(f'<text x="6" y="{y + 12}" font-size="11">{esc(M.thread_label(t))}</text>')
        out.append(f'<text x="6" y="{y + 26}" font-size="9" fill="#666">{esc(t["process"] or "?")}/{esc(_tl_pid(t))} '
                   f'{esc(t["role"])}</text>')
        for state, s, e, why in _per_pixel(tl["states"][t["utid"]], a, ns_per_px):
            if e < a or s > b:
                continue
            w = max(x(e) - x(s), 0.5)
            label = state + (f": {why}" if why else "") + f" {fmt_rel(s - t0)} .. {fmt_rel(e - t0)}"
            out.append(f'<rect class="state" x="{x(s):.1f}" y="{y}" width="{w:.1f}" height="{LANE - 2}" '
                       f'fill="{STATE_COLOURS[state]}"><title>{esc(label)}</title></rect>')
    diag_y = {}
    for p in tl["path"]:
        y = TOP + rows[p["utid"]] * ROW + LANE + 2
        diag_y[p["index"]] = y + 6
        if p["end"] < a or p["start"] > b:
            continue
        w = max(x(p["end"]) - x(p["start"]), 2)
        out.append(f'<rect class="path" x="{x(p["start"]):.1f}" y="{y}" width="{w:.1f}" height="12" fill="#dce3fb" '
                   f'stroke="#3454d1"><title>{esc(M.path_label(p))} {esc(fmt_rel(p["start"] - t0))} .. '
                   f'{esc(fmt_rel(p["end"] - t0))}</title></rect>')
    for r in tl["roots"]:
        if r["end"] < a or r["start"] > b:
            continue
        y = TOP + rows[r["utid"]] * ROW + LANE + 16
        w = max(x(r["end"]) - x(r["start"]), 3)
        colour = "#b00000" if r["primary"] else "#e07b00"
        out.append(f'<rect class="root" x="{x(r["start"]):.1f}" y="{y}" width="{w:.1f}" height="6" fill="{colour}">'
                   f'<title>{esc(M.root_label(r))}: {esc(r["why"])}</title></rect>')
    path = tl["path"]
    for i in range(1, len(path)):         # the chain: path[i] (cause) -> path[i-1]
        p, q = path[i], path[i - 1]
        x1_ts = p["end"] if p["end"] <= q["start"] else p["start"]
        if p["edge_type"] is None or p["utid"] == q["utid"] or not (a <= q["start"] <= b and a <= x1_ts <= b):
            continue
        dash = ' stroke-dasharray="4 3"' if p["weak"] else ""
        out.append(f'<line class="edge" x1="{x(x1_ts):.1f}" '
                   f'y1="{diag_y[i]}" x2="{x(q["start"]):.1f}" y2="{diag_y[i - 1]}" stroke="#3454d1"{dash} '
                   f'marker-end="url(#arrow)"><title>#{i} {esc(p["edge_type"])}'
                   f'{" (weak)" if p["weak"] else ""}</title></line>')
    ly = height - 12
    lx = LEFT
    for name, colour in list(STATE_COLOURS.items()) + [("path step", "#dce3fb"), ("root cause", "#e07b00"),
                                                        ("primary root cause", "#b00000"), ("hang", "#fdecec")]:
        out.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{lx + 14}" y="{ly}" font-size="10">{esc(name)}</text>')
        lx += 30 + 7 * len(name)
    out.append("</svg>")
    return "\n".join(out)


def _chain_table(report):
    s = report["spinning"]
    t0 = s["start_ns"]
    rows = ["<table id='chain'><tr><th>#</th><th>thread</th><th>process</th><th>start</th><th>end</th>"
            "<th>block type</th><th>edge in</th><th>role</th></tr>"]
    for i, p in enumerate(report["path"]):
        e = p["edge_in"]
        edge = "-" if e is None else e["type"] + (f" {e['owner_kind']}" if e.get("owner_kind") else "")
        cls = " class='weak'" if e and e["weak"] else ""
        depth = f" d{int(p['depth'])}" if p["depth"] else ""
        rows.append(f"<tr><td>{i}</td><td>{esc(_who(p))}</td><td>{esc(_proc(p))}</td>"
                    f"<td>{esc(fmt_rel(p['start_ns'] - t0))}</td><td>{esc(fmt_rel(p['end_ns'] - t0))}</td>"
                    f"<td>{esc(p['block_type'])}</td><td{cls}>{esc(edge)}{' (weak)' if e and e['weak'] else ''}</td>"
                    f"<td>{esc(p['role'])}{depth}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _file_link(path):
    return f"<a class='lldb' href='{esc('file://' + urllib.parse.quote(os.path.abspath(path)))}'>{esc(path)}</a>"


def _answer(report):
    """The answer first, under the title: the primary root cause, its
    what-if and its top function, linked to its section below the chain."""
    r = next((r for r in report["root_causes"] if r["primary"]), None)
    if r is None:
        return "<p id='answer'>No root cause found (see <a href='#root-causes'>Root causes</a>).</p>"
    top = ((r.get("profile") or {}).get("top") or {}).get("functions") or []
    w = render_whatif(r.get("whatif"))
    return (f"<p id='answer' class='primary'>Primary root cause: <a href='#root-causes'>{esc(_who(r))} "
            f"(process {esc(_proc(r))}) {esc(r['block_type'])}</a>"
            + (f", on CPU mostly in <span class='mono'>{esc(top[0])}</span>" if top else "") + "</p>"
            + (f"<p class='whatif'>{esc(w)}</p>" if w else ""))


def _root_causes(report, lldb):
    t0 = report["spinning"]["start_ns"]
    out = []
    if not report["root_causes"]:
        out.append("<p>none found</p>")
    for r in report["root_causes"]:
        cls = "primary" if r["primary"] else ""
        out.append(f"<div class='box root-cause'><p class='{cls}'>{'&#9733; PRIMARY ' if r['primary'] else ''}"
                   f"depth {r['depth']}: {esc(_who(r))} (process {esc(_proc(r))}) {esc(r['block_type'])} "
                   f"{esc(fmt_rel(r['start_ns'] - t0))} .. {esc(fmt_rel(r['end_ns'] - t0))}</p>"
                   f"<p>{esc(r['why'])}</p>")
        if r.get("evidence"):
            out.append(f"<p class='note'>evidence: {esc(evidence_text(r['evidence']))}</p>")
        w = render_whatif(r.get("whatif"))
        if w:
            out.append(f"<p class='whatif'>{esc(w)}</p>")
        if r.get("profile"):
            out.append(_profile(r["profile"], f"flame-{r['tid']}"))
        if r.get("advice"):
            out.append(f"<p>next step: <span class='mono'>{esc(r['advice'])}</span></p>")
        docs = lldb.get((r["pid"], r["tid"])) or []
        if docs:
            for doc in docs:
                calls = doc.get("calls") or []
                out.append(f"<p>lldb trace: {_file_link(doc['path'])}: {len(doc.get('instructions') or [])} "
                           f"instructions, {len(calls)} library calls"
                           + (f" from {esc(doc['function'])}" if doc.get("function") else "") + "</p>")
        else:
            out.append(f"<p class='note'>no lldb trace yet: <span class='mono'>argus lldb-script --pid {r['pid']} "
                       f"--tid {r['tid']} --run</span> records the instructions it runs</p>")
        out.append("</div>")
    return "\n".join(out)


FLAME_W, FLAME_ROW, FLAME_DEPTH = 900, 17, 12


def flame_svg(p, svg_id):
    """The profile's top-down tree as a small flame graph (inline SVG: one
    rect per node, width = its share of the samples, callees below their
    caller; written by hand like the timeline, nothing to plot).  Colours
    come from the function's name (crc32: the same on every run)."""
    rects, deepest = [], [0]

    def walk(nodes, x, depth):
        for k in nodes:
            w = k["share"] * FLAME_W
            if w >= 1 and depth < FLAME_DEPTH:
                y = depth * FLAME_ROW
                deepest[0] = max(deepest[0], depth)
                hue = 20 + zlib.crc32(k["function"].encode()) % 40
                label = k["function"] if w > 7 * len(k["function"]) else ""
                rects.append(f"<g><title>{esc(k['function'])} ({esc(k['dso'])}) {esc(fmt_pct(k['share']))}</title>"
                             f"<rect x='{x:.1f}' y='{y}' width='{w:.1f}' height='{FLAME_ROW - 1}' "
                             f"fill='hsl({hue},85%,60%)'/>"
                             f"<text x='{x + 3:.1f}' y='{y + FLAME_ROW - 5}' font-size='11'>{esc(label)}</text></g>")
                walk(k.get("children") or [], x, depth + 1)
            x += w
    walk(p.get("top_down") or [], 0.0, 0)
    return (f"<svg id='{svg_id}' class='flame' width='{FLAME_W}' height='{FLAME_ROW * (deepest[0] + 1)}' "
            f"xmlns='http://www.w3.org/2000/svg'>" + "".join(rects) + "</svg>")


def _profile(p, svg_id):
    """A root cause's CPU profile: the summary, the top functions (bottom-up)
    and the flame graph."""
    rows = ["<table class='profile'><tr><th>self</th><th>total</th><th>function</th><th>object</th>"
            "<th>called from</th></tr>"]
    for f in p.get("bottom_up", [])[:8]:
        via = ", ".join(c["function"] for c in f.get("callers", [])[:2])
        rows.append(f"<tr><td>{esc(fmt_pct(f['self_share']))}</td><td>{esc(fmt_pct(f['total_share']))}</td>"
                    f"<td class='mono'>{esc(f['function'])}</td><td>{esc(f['dso'])}</td><td>{esc(via)}</td></tr>")
    rows.append("</table>")
    return (f"<p>profile: {p['samples']} samples ({esc(fmt_dur(p['cpu_ns']))} of CPU), "
            f"{esc(fmt_pct(p['in_kernel_share']))} in the kernel; top functions: "
            f"<span class='mono'>{esc(', '.join(p['top']['functions']))}</span></p>"
            + "\n".join(rows) + "\n" + flame_svg(p, svg_id))


def _compare(report):
    c = report.get("compare")
    if not c:
        return ""
    lines = render_compare(c, top=8)
    return ("<h2>The hung instance against its baselines</h2><pre id='compare'>"
            + "\n".join(esc(line) for line in lines) + "</pre>")


def _questions(answers):
    asked = [a for a in answers if a.get("question")]
    if not asked:
        return "<p id='questions'>No questions: the graph was unambiguous (or rules decided).</p>"
    rows = ["<table id='questions'><tr><th>#</th><th>kind</th><th>question</th><th>answer</th><th>by</th></tr>"]
    for i, a in enumerate(asked, 1):
        q = (a.get("question") or "").splitlines()
        rows.append(f"<tr><td>{i}</td><td>{esc(a['kind'])}</td><td>{'<br>'.join(esc(l) for l in q)}</td>"
                    f"<td>{esc(a.get('label') or a['answer'])} <span class='mono'>[{esc(a['answer'])}]</span></td>"
                    f"<td>{esc(a.get('source'))}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def render(report, tl, answers=(), lldb=None, graph_svg=None):
    """The page (str)."""
    s = report["spinning"]
    tr = report.get("trace") or {}
    origin, wall = tr.get("origin_ns", tr.get("start_ns", 0)), tr.get("wall_offset_ns")
    title = f"Argus: {_who(s)} {s['block_type']} for {fmt_dur(s['dur_ns'])}"
    parts = [
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1 id='title'>Hang in {esc(_who(s))} (process {esc(_proc(s))}): {esc(s['block_type'])} for "
        f"{esc(fmt_dur(s['dur_ns']))}{' (ongoing at trace end)' if s['ongoing'] else ''}</h1>",
        f"<p>starts at {esc(fmt_at(s['start_ns'], origin, wall))} into the trace; times below are relative to it.</p>",
        f"<p>evidence: {esc(evidence_text(s))}</p>",
        _answer(report),
    ]
    b = s.get("baseline")
    if b:
        parts.append(f"<p>baseline: a {esc(fmt_dur(b['wait_ns']))} wait at {esc(fmt_rel(b['start_ns'] - s['start_ns']))}"
                     f" ({'same thread' if b['same_thread'] else 'thread ' + esc(_who(b))})</p>")
    parts += ["<h2>Timeline of the threads on the path</h2>", timeline_svg(tl, report)]
    zoom = zoom_window(tl)
    if zoom:
        parts += [f"<p class='note'>The causal steps outside the hang, enlarged "
                  f"({esc(fmt_rel(zoom[0] - s['start_ns']))} .. {esc(fmt_rel(zoom[1] - s['start_ns']))}):</p>",
                  timeline_svg(tl, report, zoom, "timeline-zoom")]
    parts += [
              "<h2>Causal chain</h2>", "<p class='note'>The spinning thread first, walking back along causality; "
              "weak edges (heuristic guesses) in grey.</p>", _chain_table(report),
              _compare(report),
              "<h2 id='root-causes'>Root causes</h2>", _root_causes(report, lldb or {}), _hosts(report),
              "<h2>Questions asked and answers</h2>", _questions(answers)]
    m = report.get("metrics") or {}
    parts.append(f"<p class='note'>queries: {int(report.get('queries') or 0)}"
                 + (f"; path length {m.get('path_len')} ({esc(m.get('mode'))})" if m else "") + "</p>")
    if graph_svg:
        uri = "data:image/svg+xml;base64," + base64.b64encode(graph_svg.encode()).decode()
        parts += ["<h2>The diagnosis slice</h2>", f"<img id='slice-graph' alt='the diagnosis slice' src='{uri}'>"]
    fired = report.get("rules_fired") or []
    if fired:
        parts.append("<h2>Rules applied</h2><ul>" + "".join(
            f"<li>{esc(r.get('rule'))}: {esc(r.get('effect'))}</li>" for r in fired) + "</ul>")
    notes = list(report.get("notes") or []) + list(tl.get("notes") or [])
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    parts.append("<p class='note'>Generated by <span class='mono'>argus report --html</span>.</p></body></html>")
    return "\n".join(parts) + "\n"
