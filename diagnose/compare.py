"""Differential view (TraceCompare): a hung vertex against its baseline
instances, the same operation when it ran normally.

Algorithm, for vertex v:
  1. baseline instances: for a vertex that waited longer than it ran, the quick waits
     of the same kind (baseline.find_wait_baselines: same wait reason and
     syscall, same thread or a same-named peer, ended by a task's wakeup);
     for one that ran longer (LongRunning), the same
     thread's earlier or later segments started the same way (the same
     waker thread, or the same kernel wakeup label) that ran shorter than
     threshold / 10.  At most MAX_BASELINES, best ranked first;
  2. per instance: its wait (what: "read(fd 5)", object, peer = the thread
     whose wakeup ended it, else the owner the graph names, duration), its
     running time, its syscall sequence (syscall_enter numbers) and the
     functions of its CPU samples (profile.py, innermost frame);
  3. differences, each with a score in [0, 1], ranked by score:
       wait_duration  1 - median(baseline) / hung, when longer
       wait_object    1.0 x (no baseline waited on that object)
       wait_peer      0.9 x (no baseline was ended by that peer)
       run_duration   as wait_duration, for the running part
       syscall        only the hung instance made it: 0.5 x its share of
                      the hung instance's syscalls
       function       only the hung instance's samples have it: its share of
                      them (0.8 x); a shared function whose share grew:
                      0.5 x the growth; functions under 2% of the samples
                      are left out
Invariants: the hung instance is never its own baseline; with no baseline
the result says so and lists no differences.
"""
import statistics

import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G
from argus.diagnose import blocktype as BT
from argus.diagnose import profile as P
from argus.diagnose.baseline import find_wait_baselines
from argus.diagnose.fmt import fmt_dur

MAX_BASELINES = 10
MIN_FUNCTION_SHARE = 0.02


def _who(g, utid):
    return {"comm": g.comm(utid), "tid": int(g.threads.tid[utid]), "pid": int(g.threads.pid[utid])}


def wait_peer(g, v):
    """Who ended v's wait (its successor's waker), else the holder an ownership edge names, else None."""
    nxt = g.next_segment(v)
    if nxt >= 0:
        e = int(g.in_wake[nxt])
        if e >= 0 and int(g.edges.type[e]) in (G.EDGE_WAKEUP, G.EDGE_SPAWN):
            src = int(g.edges.src[e])
            if src >= 0:
                return _who(g, int(g.seg.utid[src]))
    for e in g.in_edges(v).tolist():
        if int(g.edges.type[e]) == G.EDGE_OWNERSHIP:
            return _who(g, int(g.seg.utid[int(g.edges.src[e])]))
    return None


def instance(g, v, samples=True):
    """What one vertex did: its wait, running time, syscalls and sampled functions."""
    seg = g.seg
    out = {"vertex": int(v), **_who(g, int(seg.utid[v])), "start_ns": int(seg.start[v]),
           "run_ns": int(seg.end[v] - seg.start[v])}
    if int(seg.end_kind[v]) == G.END_BLOCKED:
        out["wait"] = {"what": BT.wait_desc(g, v), "obj": int(seg.wait_obj[v]),
                       "reason": schema.WAIT_NAMES.get(int(seg.wait_reason[v]), "?"),
                       "syscall": g.syscall_name(seg.wait_nr[v]),
                       "dur_ns": int(seg.wait_end[v] - seg.wait_start[v]), "ongoing": bool(seg.wait_ongoing[v]),
                       "peer": wait_peer(g, v)}
    else:
        out["wait"] = None
    r = g.rows[g.segment_rows(v)]
    out["syscalls"] = [g.syscall_name(n) for n in r["nr"][r["type"] == schema.SYSCALL_ENTER].tolist()]
    out["functions"] = _functions(g, v) if samples else {}
    return out


def _functions(g, v):
    if not P.has_samples(g):
        return {}
    utid = int(g.seg.utid[v])
    idx = P.sample_rows(g, utid, int(g.seg.start[v]), int(g.seg.end[v]))
    counts = {}
    for _, st in P.named_stacks(g, idx):
        f = st[0][0] if st else "[no stack]"
        counts[f] = counts.get(f, 0) + 1
    return counts


def baseline_vertices(g, v, threshold_ns):
    """Vertices of the same operation that went quickly (see the module doc)."""
    seg = g.seg
    waited = int(seg.wait_end[v] - seg.wait_start[v]) if int(seg.end_kind[v]) == G.END_BLOCKED else -1
    if seg.wait_known[v] and waited > int(seg.end[v] - seg.start[v]):
        return [b.vertex for b in find_wait_baselines(g, v, threshold_ns, limit=MAX_BASELINES)]
    utid = int(seg.utid[v])
    lo, hi = int(g.thread_seg_lo[utid]), int(g.thread_seg_hi[utid])
    label = g.start_label(v)
    waker = _waker(g, v)
    quick = threshold_ns // 10
    out = []
    for w in range(lo, hi):
        if w == v or seg.end[w] - seg.start[w] >= quick or seg.end[w] <= seg.start[w]:
            continue
        if g.start_label(w) == label and _waker(g, w) == waker:
            out.append(w)
    out.sort(key=lambda w: abs(int(seg.start[w]) - int(seg.start[v])))
    return out[:MAX_BASELINES]


def _waker(g, v):
    e = int(g.in_wake[v])
    if e < 0:
        return None
    src = int(g.edges.src[e])
    return int(g.threads.tid[int(g.seg.utid[src])]) if src >= 0 else None


def _ratio_score(hung, base):
    return round(1 - base / hung, 3) if hung > 0 and base < hung else 0.0


def compare(g, v, threshold_ns):
    """{"hung": instance, "baselines": [instance], "differences": [...]}: ranked, best first."""
    hung = instance(g, v)
    bases = [instance(g, w) for w in baseline_vertices(g, v, threshold_ns)]
    out = {"hung": hung, "baselines": bases, "differences": []}
    if not bases:
        out["note"] = "no baseline: no quick instance of the same wait or work in the trace"
        return out
    diffs = []
    hw = hung["wait"]
    bw = [b["wait"] for b in bases if b["wait"]]
    if hw and bw:
        med = statistics.median(w["dur_ns"] for w in bw)
        s = _ratio_score(hw["dur_ns"], med)
        if s > 0:
            diffs.append({"kind": "wait_duration", "score": s, "what": hw["what"], "obj": hw["obj"],
                          "peer": hw["peer"], "hung_ns": hw["dur_ns"], "baseline_ns": int(med),
                          "ongoing": hw["ongoing"]})
        if all(w["obj"] != hw["obj"] for w in bw):
            diffs.append({"kind": "wait_object", "score": 1.0, "what": hw["what"], "obj": hw["obj"],
                          "baseline_objs": sorted({w["obj"] for w in bw})})
        peers = {(w["peer"] or {}).get("tid") for w in bw}
        if (hw["peer"] or {}).get("tid") not in peers:
            diffs.append({"kind": "wait_peer", "score": 0.9, "what": hw["what"], "peer": hw["peer"],
                          "baseline_peers": [w["peer"] for w in bw if w["peer"]][:3]})
    med_run = statistics.median(b["run_ns"] for b in bases)
    s = _ratio_score(hung["run_ns"], med_run)
    if s > 0.5:
        diffs.append({"kind": "run_duration", "score": s, "hung_ns": hung["run_ns"], "baseline_ns": int(med_run)})
    seen = set()
    for b in bases:
        seen.update(b["syscalls"])
    n = len(hung["syscalls"]) or 1
    for name in sorted(set(hung["syscalls"]) - seen):
        c = hung["syscalls"].count(name)
        diffs.append({"kind": "syscall", "score": round(0.5 * c / n, 3), "syscall": name, "count": c})
    hf = hung["functions"]
    tot = sum(hf.values())
    if tot:
        bf = {}
        for b in bases:
            for f, c in b["functions"].items():
                bf[f] = bf.get(f, 0) + c
        btot = sum(bf.values())
        for f, c in hf.items():
            share = c / tot
            if share < MIN_FUNCTION_SHARE:
                continue            # a sample or two anywhere: noise, not a difference
            if f not in bf:
                diffs.append({"kind": "function", "score": round(0.8 * share, 3), "function": f, "samples": c,
                              "share": round(share, 3)})
            elif btot and share - bf[f] / btot > 0.1:
                diffs.append({"kind": "function", "score": round(0.5 * (share - bf[f] / btot), 3), "function": f,
                              "samples": c, "share": round(share, 3), "baseline_share": round(bf[f] / btot, 3)})
    diffs.sort(key=lambda d: -d["score"])
    out["differences"] = diffs
    return out


def _obj(d, o=None):
    """A wait object as the report names it: fds in decimal, addresses (futex words) in hex."""
    o = d["obj"] if o is None else o
    return f"fd {o}" if "(fd " in d.get("what", "") else f"{o:#x}"


def render_compare(c, fmt_peer=None, top=12):
    peer = fmt_peer or (lambda p: f"{p['comm']}/{p['tid']}" if p else "nobody (not ended by a task)")
    h = c["hung"]
    out = [f"Hung instance: vertex {h['vertex']} of {h['comm']}/{h['tid']}: ran {fmt_dur(h['run_ns'])}"
           + (f", then waited {fmt_dur(h['wait']['dur_ns'])} in {h['wait']['what']} "
              f"(ended by {peer(h['wait']['peer'])})" if h["wait"] else "")]
    if not c["baselines"]:
        out.append("  " + c.get("note", "no baseline"))
        return out
    out.append(f"Baselines: {len(c['baselines'])} quick instance(s): " + ", ".join(
        f"vertex {b['vertex']} ({fmt_dur(b['wait']['dur_ns']) + ' wait' if b['wait'] else fmt_dur(b['run_ns']) + ' run'})"
        for b in c["baselines"][:5]))
    out.append("What only the hung instance has (ranked):")
    if not c["differences"]:
        out.append("  nothing: it did what the baselines did")
    for d in c["differences"][:top]:
        k = d["kind"]
        if k == "wait_duration":
            text = (f"its wait in {d['what']} (object {_obj(d)}, peer {peer(d['peer'])}) lasted "
                    f"{fmt_dur(d['hung_ns'])}{' and still went on' if d['ongoing'] else ''}, "
                    f"baselines {fmt_dur(d['baseline_ns'])}")
        elif k == "wait_object":
            text = f"it waited on object {_obj(d)} ({d['what']}); baselines on " + \
                ", ".join(_obj(d, o) for o in d["baseline_objs"][:4])
        elif k == "wait_peer":
            text = f"its wait in {d['what']} was ended by {peer(d['peer'])}; baselines by " + \
                (", ".join(peer(p) for p in d["baseline_peers"]) or "nobody")
        elif k == "run_duration":
            text = f"it ran {fmt_dur(d['hung_ns'])} before waiting, baselines {fmt_dur(d['baseline_ns'])}"
        elif k == "syscall":
            text = f"syscall {d['syscall']} x{d['count']}, which no baseline made"
        else:
            text = f"CPU in {d['function']}: {d['samples']} samples ({d['share'] * 100:.0f}%)" + \
                (f", baselines {d['baseline_share'] * 100:.0f}%" if "baseline_share" in d else ", none in baselines")
        out.append(f"  {d['score']:.2f}  {k:<13} {text}")
    return out
