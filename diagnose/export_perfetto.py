"""A diagnosis as a Perfetto trace (protobuf), from export_model.timeline.

Built with the perfetto package's generated protos (perfetto_trace_pb2: the
published trace format), never hand-encoded.  Layout, one packet sequence:
  process track   per process (ProcessDescriptor pid, name)
  thread track    per thread (ThreadDescriptor pid, tid, name): its segments
                  (event-graph vertices) as slices, and the ends of causal
                  edges as instants that carry the flows
  "state" track   child of the thread track: Running / Runnable /
                  "Blocked: <wait reason>" slices tiling the window
  "diagnosis" tracks  children of the thread track (one per lane, so path
                  slices never overlap on a track): a slice per path element
                  named "path #i: BlockType (role)", and a slice per root
                  cause named "PRIMARY ROOT CAUSE ..." / "root cause ...".
Several hosts (a graph merged from several buffers): one process group per
host -- process names "host: name", a host=NAME label, and the host index as
the sort index, so a host's processes sit together; the pids are the
graph's (host index in bits 22 and up: unique across hosts); cross-host
message edges are flows named "message (cross-host)" in category
argus.edge.cross_host.
Flows: one flow id per edge (flow_ids on the source instant, terminating_flow_ids
on the destination instant); names and categories say the edge type and
whether it is weak ("argus.edge.weak") or on the path (".path").  The
diagnosis chain: flow ids linking path[i+1]'s slice to path[i]'s, in the
"argus.diagnosis" category.  Every slice's debug annotations carry the
vertex id.  Events of a track are emitted in (ts, end < begin < instant)
order so an instant at a slice's start nests in it and one at its end does
not.
"""
from argus.diagnose import export_model as M

SEQ = 0x4A5C    # trusted_packet_sequence_id: any non-zero constant for the one writer


def _pb():
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    except ImportError as e:       # a missing dependency is one line, not a traceback
        raise RuntimeError(f"the perfetto Python package is needed for --perfetto ({e})") from None
    return pb


class _Uuids:   # track uuids: 2, 3, ... (unique in the file is all the format asks)
    def __init__(self):
        self.next = 1

    def __call__(self):
        self.next += 1
        return self.next


def _annotations(kv):
    """debug_annotations of a TrackEvent as dicts (None values left out)."""
    out = []
    for k, v in kv.items():
        if v is None:
            continue
        key = "bool_value" if isinstance(v, bool) else ("int_value" if isinstance(v, int) else "string_value")
        out.append({"name": k, key: v if key != "string_value" else str(v)})
    return out


def build_trace(tl):
    """The perfetto_trace_pb2.Trace of a timeline (export_model.timeline).
    Events are collected as plain tuples and each packet is made in one call
    from a dict (several times faster than field-by-field for the hundreds of
    thousands of state slices of a busy thread)."""
    pb = _pb()
    T = pb.TrackEvent
    BEGIN, END, INSTANT = T.TYPE_SLICE_BEGIN, T.TYPE_SLICE_END, T.TYPE_INSTANT
    trace = pb.Trace()
    uuid = _Uuids()
    first = [True]

    def descriptor(**td):
        u = uuid()
        p = trace.packet.add(trusted_packet_sequence_id=SEQ, track_descriptor=dict(uuid=u, **td))
        if first[0]:
            p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            first[0] = False
        return u

    procs, tracks = {}, {}
    for t in tl["threads"]:
        if t["pid"] not in procs:
            # where it lives (host, container, cgroup, netns) as process labels: Perfetto's process args
            labels = [f"{k}={t[k]}" for k in ("host", "container", "cgroup", "netns") if t.get(k)]
            proc = {"pid": t["pid"], "process_name": M.process_label(t),
                    **({"process_labels": labels} if labels else {})}
            if t.get("host"):
                # several hosts: each host's processes sort together (the UI
                # orders process tracks by this index), host 0's first
                proc["legacy_sort_index"] = int(t["host_index"])
            procs[t["pid"]] = descriptor(process=proc)
        tracks[t["utid"]] = descriptor(parent_uuid=procs[t["pid"]],       # as the format's reference does
                                       thread={"pid": t["pid"], "tid": t["tid"], "thread_name": t["comm"]})

    # (ts, order, track, event dict); order at one ts: 0 end, 1 begin, 2 instant (see the module doc)
    events = []

    def slice_(trk, s, e, ev):
        if e <= s:        # an empty slice's end would sort before its begin: an instant says the same
            ev["type"] = INSTANT
            events.append((s, 2, trk, ev))
            return
        ev["type"] = BEGIN
        events.append((s, 1, trk, ev))
        events.append((e, 0, trk, {"type": END}))

    def event(name, cat, flows=(), term=(), **ann):
        ev = {"name": name, "categories": [cat]}
        if flows:
            ev["flow_ids"] = list(flows)
        if term:
            ev["terminating_flow_ids"] = list(term)
        if ann:
            ev["debug_annotations"] = _annotations(ann)
        return ev

    state_names = {"running": "Running", "runnable": "Runnable"}
    for t in tl["threads"]:
        st = descriptor(name=f"{M.thread_label(t)} state", parent_uuid=tracks[t["utid"]])
        for state, s, e, why in tl["states"][t["utid"]]:
            # the name is the state and the wait reason: no annotations on the bulk of the events
            slice_(st, s, e, {"name": state_names.get(state) or f"Blocked: {why}",
                              "categories": ["argus.thread_state"]})
    for sg in tl["segments"]:
        slice_(tracks[sg["utid"]], sg["start"], sg["end"],
               event(f"segment {sg['vertex']}", "argus.segment", vertex=sg["vertex"], start=sg["start_label"],
                     end=sg["end_kind"]))
    for f in tl["flows"]:
        fid = (f["eid"] << 1) | 1          # never 0; path-chain ids below are even
        name, cat = M.flow_name(f), M.flow_category(f)
        peer = {"src_vertex": f["src_vertex"], "dst_vertex": f["dst_vertex"], "edge": f["eid"], "weak": f["weak"]}
        ev = event(f"{name} ->", cat, flows=[fid], **peer)
        ev["type"] = INSTANT
        events.append((f["src_ts"], 2, tracks[f["src_utid"]], ev))
        ev = event(f"-> {name}", cat, term=[fid], **peer)
        ev["type"] = INSTANT
        events.append((f["dst_ts"], 2, tracks[f["dst_utid"]], ev))

    # the diagnosis path and the root causes, on per-thread lanes
    items = [("path", p) for p in tl["path"]] + [("root", r) for r in tl["roots"]]
    by_thread, lane_of, diag_tracks = {}, {}, {}
    for k, (_, x) in enumerate(items):
        by_thread.setdefault(x["utid"], []).append(k)
    for ks in by_thread.values():
        for k, lane in zip(ks, M.lanes([(items[k][1]["start"], items[k][1]["end"]) for k in ks])):
            lane_of[k] = lane

    def diag_track(u, lane):
        if (u, lane) not in diag_tracks:
            t = next(x for x in tl["threads"] if x["utid"] == u)
            diag_tracks[(u, lane)] = descriptor(name=f"{M.thread_label(t)} diagnosis" + (f" {lane + 1}" if lane else ""),
                                                parent_uuid=tracks[u])
        return diag_tracks[(u, lane)]

    path = tl["path"]
    chain = {i: [(i + 1) << 1] for i in range(1, len(path)) if path[i]["edge_type"] is not None}
    for k, (kind, x) in enumerate(items):       # path[i] -> path[i-1]: flow id 2(i+1)
        trk = diag_track(x["utid"], lane_of[k])
        if kind == "path":
            i = x["index"]
            ev = event(M.path_label(x), "argus.diagnosis", flows=chain.get(i, ()), term=chain.get(i + 1, ()),
                       vertex=x["vertex"], role=x["role"], depth=x["depth"], edge_in=x["edge_type"], weak=x["weak"])
        else:
            ev = event(M.root_label(x), "argus.diagnosis.root_cause", vertex=x["vertex"], primary=x["primary"],
                       depth=x["depth"], why=x["why"], advice=x["advice"])
        slice_(trk, x["start"], x["end"], ev)

    events.sort(key=lambda e: (e[0], e[1]))
    add = trace.packet.add
    for ts, _, trk, ev in events:
        ev["track_uuid"] = trk
        add(timestamp=ts, trusted_packet_sequence_id=SEQ, track_event=ev)
    return trace


def render(tl):
    """The serialized trace (bytes)."""
    return build_trace(tl).SerializeToString()
