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


class _Uuids:
    def __init__(self):
        self.next = 1

    def __call__(self):
        self.next += 1
        return self.next


def _annotate(ev, **kv):
    for k, v in kv.items():
        if v is None:
            continue
        a = ev.debug_annotations.add()
        a.name = k
        if isinstance(v, bool):
            a.bool_value = v
        elif isinstance(v, int):
            a.int_value = v
        else:
            a.string_value = str(v)


def build_trace(tl):
    """The perfetto_trace_pb2.Trace of a timeline (export_model.timeline)."""
    pb = _pb()
    T = pb.TrackEvent
    trace = pb.Trace()
    uuid = _Uuids()
    first = [True]

    def packet(ts=None):
        p = trace.packet.add()
        p.trusted_packet_sequence_id = SEQ
        if first[0]:
            p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            first[0] = False
        if ts is not None:
            p.timestamp = int(ts)
        return p

    def track(name=None, parent=None, thread=None, process=None):
        u = uuid()
        p = packet()
        td = p.track_descriptor
        td.uuid = u
        if parent:
            td.parent_uuid = parent
        if name:
            td.name = name
        if thread:
            td.thread.pid, td.thread.tid, td.thread.thread_name = thread["pid"], thread["tid"], thread["comm"]
        if process:
            td.process.pid, td.process.process_name = process
        return u

    procs, tracks = {}, {}
    for t in tl["threads"]:
        if t["pid"] not in procs:
            procs[t["pid"]] = track(process=(t["pid"], t["process"] or t["comm"]))
        tracks[t["utid"]] = track(thread=t, parent=procs[t["pid"]])   # as the format's reference does

    events = []     # (track, ts, order, fill(ev)) ; order: 0 end, 1 begin, 2 instant

    def slice_(trk, s, e, name, cat, flows=(), term=(), **ann):
        if e <= s:        # an empty slice's end would sort before its begin: an instant says the same
            return instant(trk, s, name, cat, flows, term, **ann)

        def begin(ev):
            ev.type = T.TYPE_SLICE_BEGIN
            ev.name = name
            ev.categories.append(cat)
            ev.flow_ids.extend(flows)
            ev.terminating_flow_ids.extend(term)
            _annotate(ev, **ann)

        def end(ev):
            ev.type = T.TYPE_SLICE_END
        events.append((trk, s, 1, begin))
        events.append((trk, e, 0, end))

    def instant(trk, ts, name, cat, flows=(), term=(), **ann):
        def fill(ev):
            ev.type = T.TYPE_INSTANT
            ev.name = name
            ev.categories.append(cat)
            ev.flow_ids.extend(flows)
            ev.terminating_flow_ids.extend(term)
            _annotate(ev, **ann)
        events.append((trk, ts, 2, fill))

    for t in tl["threads"]:
        st = track(name=f"{M.thread_label(t)} state", parent=tracks[t["utid"]])
        for state, s, e, why in tl["states"][t["utid"]]:
            name = {"running": "Running", "runnable": "Runnable"}.get(state) or f"Blocked: {why}"
            slice_(st, s, e, name, "argus.thread_state", state=state, wait_reason=why)
    for sg in tl["segments"]:
        slice_(tracks[sg["utid"]], sg["start"], sg["end"], f"segment {sg['vertex']}", "argus.segment",
               vertex=sg["vertex"], start=sg["start_label"], end=sg["end_kind"])
    for n, f in enumerate(tl["flows"]):
        fid = (f["eid"] << 1) | 1          # never 0; path-chain ids below are even
        name, cat = M.flow_name(f), M.flow_category(f)
        peer = {"src_vertex": f["src_vertex"], "dst_vertex": f["dst_vertex"], "edge": f["eid"], "weak": f["weak"]}
        instant(tracks[f["src_utid"]], f["src_ts"], f"{name} ->", cat, flows=[fid], **peer)
        instant(tracks[f["dst_utid"]], f["dst_ts"], f"-> {name}", cat, term=[fid], **peer)

    # the diagnosis path and the root causes, on per-thread lanes
    items = [("path", p) for p in tl["path"]] + [("root", r) for r in tl["roots"]]
    diag_tracks = {}
    by_thread = {}
    for k, (kind, x) in enumerate(items):
        by_thread.setdefault(x["utid"], []).append(k)
    lane_of = {}
    for u, ks in by_thread.items():
        for k, lane in zip(ks, M.lanes([(items[k][1]["start"], items[k][1]["end"]) for k in ks])):
            lane_of[k] = lane

    def diag_track(u, lane):
        key = (u, lane)
        if key not in diag_tracks:
            t = next(x for x in tl["threads"] if x["utid"] == u)
            diag_tracks[key] = track(name=f"{M.thread_label(t)} diagnosis" + (f" {lane + 1}" if lane else ""),
                                     parent=tracks[u])
        return diag_tracks[key]

    chain = {}
    path = tl["path"]
    for i in range(1, len(path)):
        if path[i]["edge_type"] is not None:
            chain.setdefault(i, []).append((i + 1) << 1)        # path[i] -> path[i-1]: flow id 2(i+1)
    for k, (kind, x) in enumerate(items):
        trk = diag_track(x["utid"], lane_of[k])
        if kind == "path":
            i = x["index"]
            out_ids = chain.get(i, [])
            in_ids = chain.get(i + 1, []) if i + 1 < len(path) else []
            slice_(trk, x["start"], x["end"], M.path_label(x), "argus.diagnosis", flows=out_ids, term=in_ids,
                   vertex=x["vertex"], role=x["role"], depth=x["depth"], edge_in=x["edge_type"], weak=x["weak"])
        else:
            slice_(trk, x["start"], x["end"], M.root_label(x), "argus.diagnosis.root_cause",
                   vertex=x["vertex"], primary=x["primary"], depth=x["depth"], why=x["why"], advice=x["advice"])

    events.sort(key=lambda e: (e[1], e[2]))
    for trk, ts, _, fill in events:
        p = packet(ts)
        p.track_event.track_uuid = trk
        fill(p.track_event)
    return trace


def render(tl):
    """The serialized trace (bytes)."""
    return build_trace(tl).SerializeToString()
