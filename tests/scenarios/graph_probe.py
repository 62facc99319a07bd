"""Counts, per process, the segments a splitting heuristic cut, from the
event graph the installed Argus builds for a buffer (argus.graphbuild).

  graph_probe.py BUFFER PID [PID ...]
Prints {"PID": {"event_loop": n, "peer_change": n, "batch": n}, ...}, or
{"error": "..."} when this Argus has no split criteria.

  graph_probe.py --messages BUFFER OBJ
Prints {"messages": [[src_tid, dst_tid], ...]}: the message edges (a
user-space enqueue -> the dispatch on the same object) on OBJ.
"""
import json
import sys

import numpy as np


def messages(path, obj):
    from argus.cli.tracefile import load_trace
    from argus.graphbuild import build_graph
    from argus.graphbuild import graph as G
    trace, _ = load_trace(path, names=False)
    g = build_graph(trace.rows, trace_start=trace.first_ts, trace_end=trace.last_ts)
    tid = np.asarray(g.threads.tid)[np.asarray(g.seg.utid)]
    e = g.edges
    k = np.flatnonzero((np.asarray(e.type) == G.EDGE_MESSAGE) & (np.asarray(e.obj) == obj))
    src, dst = np.asarray(e.src)[k], np.asarray(e.dst)[k]
    print(json.dumps({"messages": [[int(tid[a]), int(tid[b])] for a, b in zip(src, dst)]}))


def main():
    if sys.argv[1] == "--messages":
        messages(sys.argv[2], int(sys.argv[3]))
        return
    path, pids = sys.argv[1], [int(p) for p in sys.argv[2:]]
    try:
        from argus.cli.tracefile import load_trace
        from argus.graphbuild import build_graph
        from argus.graphbuild import graph as G
        names = G.SPLIT_NAMES
    except (ImportError, AttributeError) as e:
        print(json.dumps({"error": f"no split criteria in this Argus: {e}"}))
        return
    trace, _ = load_trace(path, names=False)
    g = build_graph(trace.rows, trace_start=trace.first_ts, trace_end=trace.last_ts)
    seg_pid = np.asarray(g.threads.pid)[np.asarray(g.seg.utid)]
    kinds = np.asarray(g.seg.split_kind)
    out = {}
    for pid in pids:
        mine = kinds[seg_pid == pid]
        out[str(pid)] = {name: int((mine == k).sum()) for k, name in names.items() if k}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
