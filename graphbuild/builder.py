"""build_graph(rows) -> EventGraph: the graph-building pipeline.

Algorithm (Perfetto trace_processor style, one stage per module):
  1. validate the rows (ROW_DTYPE, sorted by ts_ns; an unsorted input is
     sorted stably, which keeps ties in producer order);
  2. SyscallRoles: which syscall numbers are yield / futex / send / message
     / event-loop wait, from the host table plus what the trace's
     switch-outs reveal (sysroles.py);
  3. the graph core (graphbuild/core/argus_graph.c through native_core.py):
     one pass in C over the rows -> threads, segments (vertices, with the
     splitting heuristics), thread_state intervals, yields, data flags, and
     typed edges (program order, wakeup with culling and the weak mutex
     heuristic, spawn, data_flag, message, timer), sorted, with CSR indexes;
  4. EventGraph: columnar storage plus CSR indexes (graph.py).

The per-row Python loop this core replaced is kept as the test oracle in
tests/support/reference/ (it imports prepare_rows and EventGraph from here;
the product never imports it).  It knows only the blocking-wait criterion and
the program-order / wakeup / spawn / data_flag edges, so it matches the core
run with splits=False (edges of those four types).

Invariants: see graph.py; trace_start / trace_end default to the first /
last row's ts and may be widened by the caller (the decoder knows when
recording started and stopped).
"""
import numpy as np

from argus.tracer import containers, schema
from argus.graphbuild.graph import EventGraph, Table
from argus.graphbuild.sysroles import SyscallRoles
from argus.graphbuild.threads import decode_comm
from argus.graphbuild import native_core

# A LOST row (records dropped, or switches the kernel never reported) is
# written at the drain that noticed them; what it counts happened since the
# previous drain (~100 ms apart), hence two drains.
LOST_WINDOW_NS = 200_000_000


def build_graph(rows, *, trace_start=None, trace_end=None, roles=None, splits=True, head_gap_end=None,
                side=None):
    """Builds the event graph of a trace: complete, nothing to attach after.

    rows: numpy array of schema.ROW_DTYPE (the decoder's output).
    trace_start / trace_end: ns; default the first / last row's timestamp.
    roles: SyscallRoles to override the syscall numbers used for yields,
    futexes and sends (default: host table + learned from the trace).
    splits: False keeps only the blocking-wait criterion (no heuristic splits).
    head_gap_end: records were overwritten before the trace's first row: the
    region up to this ts is lost (segments touching it get seg.gap).
    side: the decoder's side arrays that USER_STACK, MAPPING and WAIT_SITE
    rows index - anything with .frames and .strings (a reader.Trace); None:
    none (user stacks, mapping paths and poll sets stay empty).
    """
    rows, t0, t1, roles = prepare_rows(rows, trace_start, trace_end, roles)
    out = native_core.build(rows, t0, t1, roles.table(), splits=splits, lost_window_ns=LOST_WINDOW_NS,
                            head_gap_end=-1 if head_gap_end is None else int(head_gap_end))
    th = out["threads"]
    comm = np.array([decode_comm(c) for c in th["comm"].tolist()], dtype=object) if len(th["tid"]) \
        else np.zeros(0, dtype=object)
    threads = Table(tid=th["tid"], pid=th["pid"], comm=comm, first_ts=th["first_ts"], start_ts=th["start_ts"],
                    end_ts=th["end_ts"], created=th["created"], parent_utid=th["parent_utid"],
                    is_main=th["tid"] == th["pid"])
    processes = _processes(th, comm, out["ppid"])
    # cgroup, netns and container of each process (PROC_NS rows; paths in the strings)
    for pid, scope in containers.process_scopes(rows, side.strings if side is not None else b"").items():
        if pid in processes:
            processes[pid].update(scope)
    m = out["misc"]
    stats = dict(out["stats"])
    stats["splits"] = {"blocking_wait": stats.pop("splits_blocking_wait"),
                       "event_loop": stats.pop("splits_event_loop"),
                       "peer_change": stats.pop("splits_peer_change"),
                       "batch": stats.pop("splits_batch"),
                       "callback": stats.pop("splits_callback"),
                       "input": stats.pop("splits_input"),
                       "goroutine": stats.pop("splits_goroutine")}
    return EventGraph(
        rows=rows, trace_start=t0, trace_end=t1, threads=threads, processes=processes,
        seg=Table(**out["seg"]), thread_rows=th["thread_rows"], thread_rows_ptr=th["thread_rows_ptr"],
        edges=Table(**out["edges"]),
        running=Table(utid=m["run_utid"], start=m["run_start"], end=m["run_end"]),
        runnable=Table(utid=m["rbl_utid"], start=m["rbl_start"], end=m["rbl_end"]),
        yields=Table(utid=m["yld_utid"], ts=m["yld_ts"], seg=m["yld_seg"]),
        flags=Table(row=m["flg_row"], utid=m["flg_utid"], pid=m["flg_pid"], seg=m["flg_seg"], ts=m["flg_ts"],
                    addr=m["flg_addr"], value=m["flg_value"], write=m["flg_write"]),
        stats=stats, roles=roles, csr=_native_csr,
        frames=side.frames if side is not None else None, strings=side.strings if side is not None else b"",
    )


def prepare_rows(rows, trace_start=None, trace_end=None, roles=None):
    """Stage 1-2 of build_graph, shared with the test oracle: checked,
    contiguous, time-sorted rows, the trace's [t0, t1] and the SyscallRoles
    with what the rows reveal learned.  Returns (rows, t0, t1, roles)."""
    rows = np.asarray(rows)
    if rows.dtype != schema.ROW_DTYPE:
        raise TypeError(f"rows must have dtype schema.ROW_DTYPE, got {rows.dtype}")
    if not rows.flags.c_contiguous:
        rows = np.ascontiguousarray(rows)
    is_sorted, learned = native_core.scan_rows(rows)
    if not is_sorted:
        rows = rows[np.argsort(rows["ts_ns"], kind="stable")]
    if len(rows):
        first, last = int(rows["ts_ns"][0]), int(rows["ts_ns"][-1])
    else:
        first = last = 0
    t0 = first if trace_start is None else min(int(trace_start), first) if len(rows) else int(trace_start)
    t1 = last if trace_end is None else max(int(trace_end), last) if len(rows) else int(trace_end)
    roles = (roles or SyscallRoles()).learn_table(learned)
    return rows, t0, t1, roles


def _native_csr(keys, order_keys, n):
    # in-index: edges are sorted by ts already, so (dst, ts, eid) == (dst, eid)
    if order_keys is not None and len(order_keys) > 1 and bool(np.all(order_keys[1:] >= order_keys[:-1])):
        order_keys = None
    return native_core.csr(keys, order_keys, n)


def _processes(th, comm, ppid):
    """pid -> {"name", "ppid", "main_utid"}: the main thread's (tid == pid)
    comm, else the snapshot's main thread, else the first thread seen."""
    processes = {}
    tids, pids, snap = th["tid"].tolist(), th["pid"].tolist(), th["snapshot_main"].tolist()
    for utid, (tid, p) in enumerate(zip(tids, pids)):
        entry = processes.setdefault(p, {"name": "", "ppid": ppid.get(p, 0), "main_utid": -1, "_rank": 9})
        rank = 0 if tid == p else (1 if snap[utid] else 2)
        if rank < entry["_rank"] or (rank == entry["_rank"] == 0):
            entry["_rank"] = rank
            entry["name"] = comm[utid]
            entry["main_utid"] = utid if rank < 2 else entry["main_utid"]
    for entry in processes.values():
        del entry["_rank"]
    return processes


def build_graph_from_trace(trace, **kw):
    """build_graph over a decoded reader.Trace, marking its lost regions."""
    head = head_gap_end(trace.rows) if trace.records_overwritten else None
    g = build_graph(trace.rows, head_gap_end=head, side=trace, **kw)
    g.stats["records_overwritten"] = int(trace.records_overwritten)
    g.stats["records_lost"] = int(trace.records_lost)
    g.stats["switches_unreported"] = int(trace.switches_unreported)
    return g


def head_gap_end(rows, scan=1 << 20):
    """Where the partly lost head of a wrapped buffer ends: the ring buffer
    dropped whole chunks, so each CPU's records start at the first one that
    survived; before the latest of those first timestamps some CPU's events
    are missing.  Only the first `scan` rows are looked at (a CPU idle that
    long counts as idle, not lost) and the region is capped at LOST_WINDOW_NS."""
    if not len(rows):
        return None
    head = rows[:scan]
    _, first = np.unique(head["cpu"], return_index=True)
    t0 = int(head["ts_ns"][0])
    return min(int(head["ts_ns"][first].max()), t0 + LOST_WINDOW_NS)


__all__ = ["build_graph", "build_graph_from_trace", "G"]
