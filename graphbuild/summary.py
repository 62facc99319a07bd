"""graph_summary(g) -> dict: the counts `argus graph stats` prints.

Algorithm: vectorized counts over the graph's columns (bincount over edge
types, sums of flags), plus the builder's counters (splits by criterion,
culled wakeups by label, lost records).  Table 2 of the Argus paper:
  vertices_split_by_message_heuristics = (peer_change + batch splits) / vertices
  edges_added_by_flags_and_wait_heuristics = (data_flag + message edges) / edges
(message edges are send -> receive pairs matched with no wakeup: what the
kernel's wait/wake tracing alone misses).

Invariant: every number is an int or a float; the dict is JSON-ready.
"""
import numpy as np

from argus.graphbuild import graph as G


def graph_summary(g):
    st = g.stats
    ne = g.num_edges
    by_type = np.bincount(g.edges.type, minlength=len(G.EDGE_TYPE_NAMES)) if ne else \
        np.zeros(len(G.EDGE_TYPE_NAMES), np.int64)
    weak = g.edges.weak.astype(bool) if ne else np.zeros(0, bool)
    weak_by_type = np.bincount(g.edges.type[weak], minlength=len(G.EDGE_TYPE_NAMES)) if ne else by_type * 0
    splits = dict(st.get("splits", {}))
    nv = g.num_vertices
    msg_splits = splits.get("peer_change", 0) + splits.get("batch", 0)
    added = int(by_type[G.EDGE_DATA_FLAG] + by_type[G.EDGE_MESSAGE])
    gap = int(np.count_nonzero(g.seg.gap)) if "gap" in g.seg.names else 0
    out = {
        "rows": int(st.get("rows", len(g.rows))),
        "threads": len(g.threads),
        "processes": len(g.processes),
        "vertices": nv,
        "edges": ne,
        "edges_by_type": {G.EDGE_TYPE_NAMES[k]: int(by_type[k]) for k in sorted(G.EDGE_TYPE_NAMES)},
        "weak_edges": int(np.count_nonzero(weak)),
        "weak_edges_by_type": {G.EDGE_TYPE_NAMES[k]: int(weak_by_type[k]) for k in sorted(G.EDGE_TYPE_NAMES)
                               if weak_by_type[k]},
        "splits": {k: int(v) for k, v in splits.items()},
        "culled_wakeups": int(st.get("culled_wakeups", 0)),
        "culled_by_label": {k: int(v) for k, v in sorted(st.get("culled_by_label", {}).items())},
        "loopback_edges": int(st.get("loopback_edges", 0)),
        "ignored_wakeups": int(st.get("ignored_wakeups", 0)),
        "learned_channels": int(st.get("learned_channels", 0)),
        "table2": {
            "vertices_split_by_message_heuristics": msg_splits / nv if nv else 0.0,
            "edges_added_by_flags_and_wait_heuristics": added / ne if ne else 0.0,
        },
        "lost_records": int(st.get("lost_records", 0)),
        "unreported_switches": int(st.get("unreported_switches", 0)),
        "records_overwritten": int(st.get("records_overwritten", 0)),
        "lost_regions": int(st.get("lost_regions", 0)),
        "gap_vertices": gap,
    }
    return out


def format_summary(s):
    """Human-readable lines of graph_summary()."""
    lines = [f"rows            {s['rows']:>14,}",
             f"threads         {s['threads']:>14,}   processes {s['processes']:,}",
             f"vertices        {s['vertices']:>14,}",
             f"edges           {s['edges']:>14,}   weak {s['weak_edges']:,}"]
    for name, n in s["edges_by_type"].items():
        w = s["weak_edges_by_type"].get(name, 0)
        lines.append(f"  {name:<14}{n:>14,}" + (f"   weak {w:,}" if w else ""))
    lines.append("splits by criterion")
    for name, n in s["splits"].items():
        lines.append(f"  {name:<14}{n:>14,}")
    lines.append(f"culled wakeups  {s['culled_wakeups']:>14,}   (loopback edges kept {s['loopback_edges']:,})")
    for name, n in s["culled_by_label"].items():
        lines.append(f"  {name:<14}{n:>14,}")
    t2 = s["table2"]
    lines.append("Table 2 ratios")
    lines.append(f"  vertices split by message heuristics      {t2['vertices_split_by_message_heuristics']:.4f}")
    lines.append(f"  edges added by data flags / wait heuristics {t2['edges_added_by_flags_and_wait_heuristics']:.4f}")
    if s["lost_records"] or s["unreported_switches"] or s["records_overwritten"] or s["gap_vertices"]:
        lines.append(f"note: the trace has gaps: {s['records_overwritten']:,} records overwritten, "
                     f"{s['lost_records']:,} lost before the buffer, {s['unreported_switches']:,} switches the "
                     f"kernel never reported ({s['lost_regions']} lost region(s)); "
                     f"{s['gap_vertices']:,} vertices start or end in a gap (seg.gap)")
    return "\n".join(lines)
