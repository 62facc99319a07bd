"""Call stacks of vertices, when the trace has stack records.

Schema v1 records no user stacks (docs/event-schema.md); a graph that gains
a `stacks` table (columns seg, depth, symbol, in frame order, innermost
first) gets them shown in questions, used by the baseline similarity and by
the bp_watch advice.  Without one every function here returns [].
"""


def top_frames(g, v, n=5):
    st = getattr(g, "stacks", None)
    if st is None or len(st) == 0:
        return []
    sel = st.seg == int(v)
    syms = st.symbol[sel][:n]
    return [s.decode(errors="replace") if isinstance(s, bytes) else str(s) for s in syms]


def has_stacks(g):
    st = getattr(g, "stacks", None)
    return st is not None and len(st) > 0
