"""The picture of one diagnosis: what every exporter draws (Perfetto,
Chrome JSON, the HTML report's timeline), as plain Python data.

Algorithm (timeline(g, d)):
  threads   the spinning thread, then every other thread on the path in path
            order, then root-cause threads not on it, then any other end of an
            edge the path took (each once).
  window    [first path / root-cause / hang start, last end] widened by 5% of
            its span on each side, clipped to the graph's time range.
  states    per thread, its running and runnable intervals (g.running /
            g.runnable) and its blocked waits (segments that ended blocked:
            [wait_start, wait_end], reason = blocktype.wait_desc), clipped to
            the window; overlaps inside one thread are cut so the states tile
            (running over runnable over blocked): a track shows one state at a
            time.  Past MAX_STATES_PER_THREAD, the ones nearest the hang's
            start are kept and notes says so.
  segments  the vertices of those threads that overlap the window (their
            running span [start, end]).
  flows     every causal edge (wakeup, spawn, message, timer, data flag,
            ownership) between two exported threads inside the window, plus
            every edge the path took wherever it lies; program order only when
            the path took it.  weak: the builder's weak flag (a heuristic
            guess, drawn apart).
  path      the diagnosis path in walk order; chain[i] links path[i+1] (the
            cause, one step back along causality) to path[i].
  roots     the root causes, primary marked.

Invariants: every flow's two ends are on exported threads; every state lies
inside the window and the states of one thread do not overlap; every path
element's thread is exported.  Nothing here formats for a file format.
"""
import numpy as np

from argus.graphbuild import graph as G
from argus.diagnose.blocktype import wait_desc
from argus.diagnose.report import fmt_at, trace_clock as _clock
from argus.diagnose import hosts
from argus.graphbuild.multihost import host_of

MARGIN = 0.05
MAX_STATES_PER_THREAD = 1_000_000  # a thread polling every few us over minutes: keep the export loadable

# edge types drawn as flows, and what the exporters call them
FLOW_TYPES = ("wakeup", "spawn", "message", "timer", "data_flag", "ownership")


def _ident(g, utid):
    pid = int(g.threads.pid[utid])
    out = {"utid": int(utid), "pid": pid, "tid": int(g.threads.tid[utid]), "comm": g.comm(utid),
           "process": g.process_name(pid), **g.process_scope(pid)}
    if g.hosts is not None:
        # several hosts: pid / tid stay the graph's (unique across hosts, what
        # the exporters key processes by); host and the ids on it for labels
        local = hosts.ident(g, {"pid": pid, "tid": out["tid"]})
        out.update(host=local["host"], host_index=host_of(pid), local_pid=local["pid"], local_tid=local["tid"])
    return out


def _order_threads(g, d):
    """The spinning thread, the path's threads in path order, the root
    causes', and the two ends of every edge the path took (one list, each once)."""
    order = [int(d.hang.utid)] + [int(e.utid) for e in d.path] + [int(r.utid) for r in d.root_causes]
    for e in d.path:
        eid = (e.edge or {}).get("eid")
        if eid is not None and 0 <= eid < g.num_edges:
            order += [int(g.seg.utid[int(g.edges.src[eid])]), int(g.seg.utid[int(g.edges.dst[eid])])]
    return list(dict.fromkeys(order))


def _window(g, d):
    starts = [int(d.hang.start_ns)] + [int(e.start_ns) for e in d.path] + [int(r.start_ns) for r in d.root_causes]
    ends = [int(d.hang.end_ns)] + [int(e.end_ns) for e in d.path] + [int(r.end_ns) for r in d.root_causes]
    lo, hi = min(starts), max(ends)
    pad = max(int((hi - lo) * MARGIN), 1_000_000)
    return max(g.trace_start, lo - pad), min(g.trace_end, hi + pad)


def _intervals(table, lo_arr, hi_arr, utid, a, b):
    lo, hi = int(lo_arr[utid]), int(hi_arr[utid])
    s, e = table.start[lo:hi], table.end[lo:hi]
    keep = (e >= a) & (s <= b)
    return [(max(int(x), a), min(int(y), b)) for x, y in zip(s[keep], e[keep])]


def thread_states(g, utid, a, b):
    """[(state, start, end, reason)] of utid inside [a, b], sorted, tiling
    without overlap (see the module doc)."""
    out = [("running", s, e, None) for s, e in _intervals(g.running, g.run_lo, g.run_hi, utid, a, b)]
    out += [("runnable", s, e, None) for s, e in _intervals(g.runnable, g.rbl_lo, g.rbl_hi, utid, a, b)]
    seg = g.seg
    vs = np.arange(int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid]))
    vs = vs[(seg.end_kind[vs] == G.END_BLOCKED) & (seg.wait_end[vs] >= a) & (seg.wait_start[vs] <= b)]
    for v in vs.tolist():
        out.append(("blocked", max(int(seg.wait_start[v]), a), min(int(seg.wait_end[v]), b), wait_desc(g, v)))
    rank = {"running": 0, "runnable": 1, "blocked": 2}
    out.sort(key=lambda x: (x[1], rank[x[0]]))
    tiled, last_end = [], a
    for state, s, e, why in out:
        s = max(s, last_end)
        if e <= s:
            continue
        tiled.append((state, s, e, why))
        last_end = e
    return tiled


def _edge_flow(g, eid, on_path):
    e = g.edge(int(eid))
    src, dst = int(e["src"]), int(e["dst"])
    return {"eid": int(eid), "type": e["type"], "weak": bool(e["weak"]), "on_path": on_path,
            "cross_host": g.host_edges is not None and bool(g.host_edges[int(eid)]),
            "owner_kind": e.get("owner_kind") if e["type"] == "ownership" else None,
            "src_vertex": src, "dst_vertex": dst,
            "src_utid": int(g.seg.utid[src]), "dst_utid": int(g.seg.utid[dst]),
            "src_ts": int(e["src_ts"]), "dst_ts": int(e["ts"])}


def timeline(g, d):
    """The dict described at the top of this file, for Diagnosis d over graph g."""
    utids = _order_threads(g, d)
    exported = set(utids)
    a, b = _window(g, d)
    threads = []
    for u in utids:
        t = _ident(g, u)
        t["role"] = "spinning" if u == int(d.hang.utid) else \
            ("root cause" if any(int(r.utid) == u for r in d.root_causes) else "on path")
        threads.append(t)
    states, notes = {}, []
    for u in utids:
        st = thread_states(g, u, a, b)
        if len(st) > MAX_STATES_PER_THREAD:     # keep the states nearest the hang's start
            k = next((i for i, x in enumerate(st) if x[2] >= int(d.hang.start_ns)), 0)
            lo = max(0, min(k - MAX_STATES_PER_THREAD // 2, len(st) - MAX_STATES_PER_THREAD))
            notes.append(f"{g.comm(u)}/{int(g.threads.tid[u])}: {len(st):,} state changes, "
                         f"{MAX_STATES_PER_THREAD:,} exported ({fmt_at(st[lo][1], *_clock(g))} .. "
                         f"{fmt_at(st[lo + MAX_STATES_PER_THREAD - 1][2], *_clock(g))})")
            st = st[lo:lo + MAX_STATES_PER_THREAD]
        states[u] = st

    seg = g.seg
    segments = []
    for u in utids:
        vs = np.arange(int(g.thread_seg_lo[u]), int(g.thread_seg_hi[u]))
        vs = vs[(seg.end[vs] >= a) & (seg.start[vs] <= b)]
        for v in vs.tolist():
            segments.append({"vertex": v, "utid": u, "start": max(int(seg.start[v]), a),
                             "end": min(int(seg.end[v]), b), "start_label": g.start_label(v),
                             "end_kind": G.END_KIND_NAMES[int(seg.end_kind[v])]})

    path_eids = {int(e.edge["eid"]) for e in d.path if e.edge and e.edge.get("eid") is not None}
    ed = g.edges
    if len(ed):
        src_u, dst_u = seg.utid[ed.src], seg.utid[ed.dst]
        ours = np.array(sorted(exported))
        flow_types = [G.EDGE_TYPE_BY_NAME[t] for t in FLOW_TYPES]
        keep = (np.isin(src_u, ours) & np.isin(dst_u, ours) & np.isin(ed.type, flow_types)
                & (ed.ts >= a) & (ed.ts <= b) & (ed.src_ts >= a) & (ed.src_ts <= b))
        eids = set(np.flatnonzero(keep).tolist())
    else:
        eids = set()
    eids |= {e for e in path_eids if 0 <= e < g.num_edges}
    flows = [_edge_flow(g, eid, eid in path_eids) for eid in eids]
    flows.sort(key=lambda f: (f["src_ts"], f["eid"]))

    path = []
    for i, e in enumerate(d.path):
        edge = e.edge or {}
        path.append({"index": i, "vertex": int(e.vertex), "utid": int(e.utid), "role": e.role, "depth": int(e.depth),
                     "block_type": e.block_type, "start": int(e.start_ns), "end": int(e.end_ns),
                     "edge_type": edge.get("type"), "weak": bool(edge.get("weak")),
                     "eid": edge.get("eid")})
    roots = [{"vertex": int(r.vertex), "utid": int(r.utid), "block_type": r.block_type, "depth": int(r.depth),
              "primary": bool(r.primary), "start": int(r.start_ns), "end": int(r.end_ns), "why": r.why,
              "advice": r.advice} for r in d.root_causes]
    return {"start": a, "end": b, "origin": int(g.time_origin or g.trace_start),
            "hang": {"utid": int(d.hang.utid), "vertex": int(d.hang.vertex), "start": int(d.hang.start_ns),
                     "end": int(d.hang.end_ns), "block_type": d.hang.block_type, "ongoing": bool(d.hang.ongoing)},
            "threads": threads, "states": states, "segments": segments, "flows": flows,
            "path": path, "roots": roots, "notes": notes,
            "hosts": None if g.hosts is None else [h.name for h in g.hosts]}


def flow_name(f):
    """A flow's display name: the edge type, its ownership kind, "(weak)"."""
    name = f["type"] + (f" {f['owner_kind']}" if f.get("owner_kind") else "")
    name += " (cross-host)" if f.get("cross_host") else ""
    return name + (" (weak)" if f["weak"] else "")


def flow_category(f):
    """argus.edge / argus.edge.weak, with .path when the diagnosis took it:
    viewers filter and colour by category."""
    return ("argus.edge" + (".cross_host" if f.get("cross_host") else "") + (".weak" if f["weak"] else "")
            + (".path" if f["on_path"] else ""))


def thread_label(t):
    if t.get("host"):
        return f"{t['comm'] or '?'}/{t['host']}:{t['local_tid']}"
    return f"{t['comm'] or '?'}/{t['tid']}"


def process_label(t):
    """The process's display name: "host: name" in a graph of several hosts."""
    name = t["process"] or t["comm"]
    return f"{t['host']}: {name}" if t.get("host") else name


def path_label(p):
    return f"path #{p['index']}: {p['block_type']} ({p['role']}" + (f", depth {p['depth']})" if p["depth"] else ")")


def root_label(r):
    return ("PRIMARY ROOT CAUSE" if r["primary"] else "root cause") + f" (depth {r['depth']}): {r['block_type']}"


def lanes(items):
    """Assigns each (start, end) item a lane so no two in one lane overlap;
    returns the lane index per item (first fit, items in start order)."""
    order = sorted(range(len(items)), key=lambda i: (items[i][0], items[i][1]))
    ends, out = [], [0] * len(items)
    for i in order:
        s, e = items[i]
        for k, last in enumerate(ends):
            if last <= s:
                ends[k] = e
                out[i] = k
                break
        else:
            ends.append(e)
            out[i] = len(ends) - 1
    return out
