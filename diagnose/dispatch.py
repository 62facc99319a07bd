"""The dispatch a hang sits in: the callback_begin .. callback_end interval
(user-space tracepoints, `argus run`; GLib g_main_context_dispatch) of the
hung thread that covers most of the hang window.

Algorithm: walk the thread's callback_begin / callback_end rows in time
order with a stack (a nested main loop dispatches inside a dispatch); each
end closes the innermost open begin; begins still open at the end last to
the thread's last row (ongoing).  Take the interval with the largest overlap
with [a, b]; ties: the longest (the outer dispatch), then the earliest.

Invariants: None without callback rows for the thread, or when no interval
overlaps the window; the result's vertex is the segment the begin opened
(graph core split kind callback or input).
"""
from argus.tracer import schema


def dispatch_in(g, utid, a, b):
    """A dict describing the dispatch covering most of [a, b], or None."""
    idx = g.thread_rows_of(utid)
    rows = g.rows[idx]
    sel = (rows["type"] == schema.CALLBACK_BEGIN) | (rows["type"] == schema.CALLBACK_END)
    if not sel.any():
        return None
    last_ts = int(rows["ts_ns"][-1])
    stack, spans = [], []
    for r in rows[sel]:
        ts = int(r["ts_ns"])
        if int(r["type"]) == schema.CALLBACK_BEGIN:
            stack.append((ts, int(r["obj"]), int(r["obj2"])))
        elif stack:
            s, obj, fn = stack.pop()
            spans.append((s, ts, obj, fn, False))
    spans += [(s, max(last_ts, s), obj, fn, True) for s, obj, fn in stack]
    best, key = None, None
    for s, e, obj, fn, ongoing in spans:
        overlap = min(e, b) - max(s, a)
        if overlap <= 0:
            continue
        k = (overlap, e - s, -s)
        if key is None or k > key:
            best, key = (s, e, obj, fn, ongoing, overlap), k
    if best is None:
        return None
    s, e, obj, fn, ongoing, overlap = best
    return {"vertex": int(g.segment_at(utid, s)), "start_ns": s, "end_ns": e, "dur_ns": e - s,
            "ongoing": ongoing, "obj": obj, "fn": fn,
            "window_share": round(overlap / (b - a), 4) if b > a else 1.0}
