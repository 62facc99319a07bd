"""A diagnosis as Chrome trace-event JSON ({"traceEvents": [...]}), from
export_model.timeline: the same content as export_perfetto, for tools that
read only this format (chrome://tracing, speedscope, older viewers).

Layout: Chrome JSON has no child tracks, so each exported thread becomes up
to three rows of its process, named by "thread_name" metadata: the thread
itself (tid: segments and edge endpoints), "<comm>/<tid> state" (tid +
STATE_TID: Running / Runnable / Blocked slices) and "<comm>/<tid> diagnosis"
(tid + DIAG_TID * (lane + 1): path and root-cause slices, lanes as in the
Perfetto export).  Times are microseconds (floats, ns precision) since the
timeline's origin.  Slices are complete events (ph "X"); edge endpoints are
instants (ph "i", scope thread) at which a flow starts (ph "s") and ends
(ph "f", bp "e": bound to the enclosing slice); flow ids as in the Perfetto
export (odd: an edge, even: the diagnosis chain), flow names and categories
say the edge type, weak, and on-path.
"""
import json

from argus.diagnose import export_model as M

STATE_TID = 1 << 23        # above pid_max (4194304): never a real tid
DIAG_TID = 1 << 24


def build_events(tl):
    origin = tl["origin"]

    def us(ts):
        return (int(ts) - origin) / 1000.0

    by_utid = {t["utid"]: t for t in tl["threads"]}
    ev = []
    for pid in dict.fromkeys(t["pid"] for t in tl["threads"]):
        t = next(x for x in tl["threads"] if x["pid"] == pid)
        ev.append({"ph": "M", "name": "process_name", "pid": pid, "tid": pid,
                   "args": {"name": M.process_label(t)}})
        if t.get("host"):     # several hosts: a host's processes sort together
            ev.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": pid,
                       "args": {"sort_index": int(t["host_index"])}})
        labels = [f"{k}={t[k]}" for k in ("host", "container", "cgroup", "netns") if t.get(k)]
        if labels:      # where it lives (tracer/containers.py)
            ev.append({"ph": "M", "name": "process_labels", "pid": pid, "tid": pid,
                       "args": {"labels": ",".join(labels)}})

    def meta(t, tid, name):
        ev.append({"ph": "M", "name": "thread_name", "pid": t["pid"], "tid": tid, "args": {"name": name}})
        ev.append({"ph": "M", "name": "thread_sort_index", "pid": t["pid"], "tid": tid, "args": {"sort_index": tid}})

    def x(t, tid, s, e, name, cat, **args):
        item = {"ph": "X", "name": name, "cat": cat, "pid": t["pid"], "tid": tid, "ts": us(s),
                "dur": max(0.0, (int(e) - int(s)) / 1000.0)}
        if args:
            item["args"] = args
        ev.append(item)

    for t in tl["threads"]:
        meta(t, t["tid"], M.thread_label(t))
        meta(t, t["tid"] + STATE_TID, f"{M.thread_label(t)} state")
        for state, s, e, why in tl["states"][t["utid"]]:
            name = {"running": "Running", "runnable": "Runnable"}.get(state) or f"Blocked: {why}"
            x(t, t["tid"] + STATE_TID, s, e, name, "argus.thread_state")    # the name says it all: no args
    for sg in tl["segments"]:
        t = by_utid[sg["utid"]]
        x(t, t["tid"], sg["start"], sg["end"], f"segment {sg['vertex']}", "argus.segment", vertex=sg["vertex"],
          start=sg["start_label"], end=sg["end_kind"])
    for f in tl["flows"]:
        fid = (f["eid"] << 1) | 1
        name, cat = M.flow_name(f), M.flow_category(f)
        src, dst = by_utid[f["src_utid"]], by_utid[f["dst_utid"]]
        args = {"edge": f["eid"], "src_vertex": f["src_vertex"], "dst_vertex": f["dst_vertex"], "weak": f["weak"]}
        ev.append({"ph": "i", "s": "t", "name": f"{name} ->", "cat": cat, "pid": src["pid"], "tid": src["tid"],
                   "ts": us(f["src_ts"]), "args": args})
        ev.append({"ph": "s", "id": fid, "name": name, "cat": cat, "pid": src["pid"], "tid": src["tid"],
                   "ts": us(f["src_ts"])})
        ev.append({"ph": "i", "s": "t", "name": f"-> {name}", "cat": cat, "pid": dst["pid"], "tid": dst["tid"],
                   "ts": us(f["dst_ts"]), "args": args})
        ev.append({"ph": "f", "bp": "e", "id": fid, "name": name, "cat": cat, "pid": dst["pid"], "tid": dst["tid"],
                   "ts": us(f["dst_ts"])})

    items = [("path", p) for p in tl["path"]] + [("root", r) for r in tl["roots"]]
    lane_of, by_thread = {}, {}
    for k, (_, it) in enumerate(items):
        by_thread.setdefault(it["utid"], []).append(k)
    for ks in by_thread.values():
        for k, lane in zip(ks, M.lanes([(items[k][1]["start"], items[k][1]["end"]) for k in ks])):
            lane_of[k] = lane
    named = set()
    path = tl["path"]
    for k, (kind, it) in enumerate(items):
        t = by_utid[it["utid"]]
        tid = t["tid"] + DIAG_TID * (lane_of[k] + 1)
        if tid not in named:
            named.add(tid)
            meta(t, tid, f"{M.thread_label(t)} diagnosis" + (f" {lane_of[k] + 1}" if lane_of[k] else ""))
        if kind == "path":
            x(t, tid, it["start"], it["end"], M.path_label(it), "argus.diagnosis", vertex=it["vertex"],
              role=it["role"], depth=it["depth"], edge_in=it["edge_type"], weak=it["weak"])
            i = it["index"]
            if i > 0 and it["edge_type"] is not None:           # this cause -> the element above it
                ev.append({"ph": "s", "id": (i + 1) << 1, "name": "diagnosis path", "cat": "argus.diagnosis",
                           "pid": t["pid"], "tid": tid, "ts": us(it["start"])})
            if i + 1 < len(path) and path[i + 1]["edge_type"] is not None:
                ev.append({"ph": "f", "bp": "e", "id": (i + 2) << 1, "name": "diagnosis path",
                           "cat": "argus.diagnosis", "pid": t["pid"], "tid": tid, "ts": us(it["start"])})
        else:
            x(t, tid, it["start"], it["end"], M.root_label(it), "argus.diagnosis.root_cause", vertex=it["vertex"],
              primary=it["primary"], depth=it["depth"], why=it["why"], advice=it["advice"])
    return ev


def render(tl):
    """The JSON text."""
    return json.dumps({"traceEvents": build_events(tl), "displayTimeUnit": "ms",
                       "otherData": {"generator": "argus export", "origin_ns": tl["origin"]}},
                      separators=(",", ":"))
