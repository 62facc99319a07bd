"""Typed edges of the event graph, from the records segments.py collected
(the Python reference of the C core's edges, kept as the test oracle; the core
adds message and timer edges and weak program order after heuristic splits).

Algorithm (each edge: src, dst, type, weak, ts, src_ts, row, ctx, obj, wait_ns;
`ts` is when the dependency reaches dst, `src_ts` when it leaves src):

  program_order  v -> v+1 for consecutive segments of one thread;
                 ts = start of v+1, src_ts = end of v.
  wakeup         for each WAKEUP that ended a wait: waker's segment containing
                 the row (waker = the row's tid) -> the wakee segment that
                 starts at it; ts = src_ts = the row's ts.  At most one per
                 wakee segment (segments.py keeps only the first wakeup after
                 the wait started).
                 Culling: context HARDIRQ / SOFTIRQ / KTHREAD / IDLE (or waker
                 tid 0) gives no edge; the wakee segment keeps the context and
                 irq kind (its start label: "timer", "net", ...), and
                 stats["culled_wakeups"] / stats["culled_by_label"] count them.
                 Loopback exception: a NET softirq wakeup raised while the
                 interrupted task is inside a sending syscall (write, sendto,
                 sendmsg, connect, close, ...) is that task's own transmit
                 delivered synchronously (TCP/UDP over loopback), so it is kept
                 as a wakeup edge from that task (ctx column = SOFTIRQ;
                 stats["loopback_edges"]).
                 Weak (mutual-exclusion heuristic): the wakee waited on FUTEX,
                 the waker's most recent syscall at the wake was futex with
                 (op & 0x7f) == FUTEX_WAKE on the same uaddr, waker and wakee
                 are in the same process, and that (pid, uaddr) is lock-like:
                 both the waker and the wakee are seen both waiting on it and
                 waking it somewhere in the trace.  A lock handed over on
                 unlock may or may not carry causality; a condition variable
                 signalled one way does, and stays strong.  When the rows
                 cannot tell (no futex syscall rows) the edge stays strong.
  spawn          FORK: parent's segment -> child's first segment; WAKEUP_NEW
                 likewise (deduplicated per (src, dst)).
  data_flag      per (pid, addr): the last DATA_FLAG_WRITE -> the first
                 DATA_FLAG_READ of another thread that follows it (a read that
                 observes a new write).  wait_ns = time from the reader's first
                 read of that addr after its previously observed write (the
                 start of its polling episode) to this read; ts = the read,
                 src_ts = the write.

Invariants: src != dst; every edge's endpoints exist; edges are returned
sorted by (ts, type, src) which keeps the table deterministic.
"""
import numpy as np

from argus.tracer import schema
from argus.graphbuild import graph as G


def build_edges(seg, res, roles):
    """seg: final segment Table; res: SegmentResult; roles: SyscallRoles.
    Returns (edges Table, stats dict)."""
    src, dst, typ, weak, ts, src_ts, row, ctx, obj, wait_ns = ([] for _ in range(10))
    stats = {"culled_wakeups": 0, "culled_by_label": {}, "loopback_edges": 0, "weak_edges": 0}

    # program order
    n = len(seg)
    if n > 1:
        same = np.flatnonzero(seg.utid[:-1] == seg.utid[1:])
        src.extend(same.tolist())
        dst.extend((same + 1).tolist())
        typ.extend([G.EDGE_PROGRAM_ORDER] * len(same))
        weak.extend((seg.start_kind[same + 1] == G.START_SPLIT).tolist())   # after an exact cut (Go)
        ts.extend(seg.start[same + 1].tolist())
        src_ts.extend(seg.end[same].tolist())
        row.extend([-1] * len(same))
        ctx.extend([-1] * len(same))
        obj.extend([0] * len(same))
        wait_ns.extend([0] * len(same))

    # wakeups
    wk = res.wakes
    futex_use = res.futex_use
    lock_like = {}
    for k in range(len(wk)):
        c = int(wk.ctx[k])
        s = int(wk.waker_seg[k])
        d = int(wk.dst[k])
        keep = c == schema.WAKE_TASK and s >= 0
        if not keep and c == schema.WAKE_SOFTIRQ and s >= 0 and int(wk.irq[k]) == schema.IRQ_NET \
                and int(wk.waker_cur_nr[k]) in roles.send_nrs:
            keep = True
            stats["loopback_edges"] += 1
        if not keep:
            stats["culled_wakeups"] += 1
            irq = int(wk.irq[k])
            label = schema.IRQ_NAMES.get(irq, "other") if irq != schema.IRQ_NONE else \
                schema.WAKE_CONTEXT_NAMES.get(c, "other")
            stats["culled_by_label"][label] = stats["culled_by_label"].get(label, 0) + 1
            continue
        p = int(wk.prev[k])
        if wk.go[k]:      # a goroutine's readier took the place of the kernel's waker
            src.append(s); dst.append(d); typ.append(G.EDGE_WAKEUP); weak.append(False)
            ts.append(int(wk.ts[k])); src_ts.append(int(wk.src_ts[k])); row.append(int(wk.row[k]))
            ctx.append(schema.WAKE_TASK); obj.append(int(wk.go_obj[k]))
            wait_ns.append(int(wk.ts[k] - seg.wait_start[p]))
            continue
        w = False
        if seg.wait_reason[p] == schema.WAIT_FUTEX and int(wk.waker_last_nr[k]) in roles.futex_nrs \
                and (int(wk.waker_last_aux[k]) & schema.FUTEX_CMD_MASK) == schema.FUTEX_WAKE \
                and int(wk.waker_last_obj[k]) == int(seg.wait_obj[p]) and seg.pid[p] == seg.pid[s]:
            key = (int(seg.pid[p]), int(seg.wait_obj[p]))
            both = lock_like.get(key)
            if both is None:
                use = futex_use.get(key)
                both = lock_like[key] = (use[0] & use[1]) if use else set()
            w = int(wk.waker_utid[k]) in both and int(wk.wakee_utid[k]) in both
        if w:
            stats["weak_edges"] += 1
        src.append(s); dst.append(d); typ.append(G.EDGE_WAKEUP); weak.append(w)
        ts.append(int(wk.ts[k])); src_ts.append(int(wk.ts[k])); row.append(int(wk.row[k]))
        ctx.append(c); obj.append(int(seg.wait_obj[p])); wait_ns.append(int(wk.ts[k] - seg.wait_start[p]))

    # spawns
    sp = res.spawns
    seen = set()
    for k in range(len(sp)):
        s, d = int(sp.src[k]), int(sp.dst[k])
        if s < 0 or d < 0 or s == d or (s, d) in seen:
            continue
        seen.add((s, d))
        src.append(s); dst.append(d); typ.append(G.EDGE_SPAWN); weak.append(False)
        ts.append(int(sp.ts[k])); src_ts.append(int(sp.ts[k])); row.append(int(sp.row[k]))
        ctx.append(schema.WAKE_TASK); obj.append(0); wait_ns.append(0)

    # data flags, in time order
    fl = res.flags
    order = np.lexsort((fl.row, fl.ts)) if len(fl) else np.zeros(0, np.int64)
    last_write = {}
    observed = {}
    episode = {}
    for k in order.tolist():
        key = (int(fl.pid[k]), int(fl.addr[k]))
        u = int(fl.utid[k])
        t = int(fl.ts[k])
        if fl.write[k]:
            last_write[key] = (int(fl.seg[k]), u, t, int(fl.row[k]))
            continue
        rk = (key, u)
        if rk not in episode:
            episode[rk] = t
        lw = last_write.get(key)
        if lw is None or lw[1] == u or observed.get(rk) == lw[3]:
            continue
        observed[rk] = lw[3]
        if lw[0] != int(fl.seg[k]):
            src.append(lw[0]); dst.append(int(fl.seg[k])); typ.append(G.EDGE_DATA_FLAG); weak.append(False)
            ts.append(t); src_ts.append(lw[2]); row.append(int(fl.row[k])); ctx.append(-1)
            obj.append(key[1]); wait_ns.append(t - episode[rk])
        del episode[rk]

    # goroutine edges into segments an execute cut (the core's msg_edges: last)
    for s, d, t, st, r, g in res.go_edges:
        src.append(s); dst.append(d); typ.append(G.EDGE_WAKEUP); weak.append(False)
        ts.append(t); src_ts.append(st); row.append(r); ctx.append(schema.WAKE_TASK); obj.append(g)
        wait_ns.append(t - st)

    a_ts = np.asarray(ts, np.int64)
    a_typ = np.asarray(typ, np.uint8)
    a_src = np.asarray(src, np.int64)
    o = np.lexsort((a_src, a_typ, a_ts)) if len(a_ts) else np.zeros(0, np.int64)
    edges = G.Table(
        src=a_src[o], dst=np.asarray(dst, np.int64)[o], type=a_typ[o], weak=np.asarray(weak, bool)[o],
        ts=a_ts[o], src_ts=np.asarray(src_ts, np.int64)[o], row=np.asarray(row, np.int64)[o],
        ctx=np.asarray(ctx, np.int8)[o], obj=np.asarray(obj, np.uint64)[o],
        wait_ns=np.asarray(wait_ns, np.int64)[o],
    )
    return edges, stats
