"""ctypes bindings for the graph core (graphbuild/core/argus_graph.h,
libargus_graph.so): rows -> the tables EventGraph holds.

Algorithm: hand the row array to argus_graph_build by pointer (no copy), size
numpy columns from argus_graph_counts, let the core fill them (one export call
per table frees that table's build storage, so peak memory is the build
storage of one table plus the numpy columns), free the handle.  The per-event
work is all in C; Python touches only per-thread data (thread names, the
process table).

The ctypes Structures mirror the C structs field for field, in order.
"""
import ctypes
import os
import threading

import numpy as np

import argus
from argus.tracer import schema

LIBRARY_NAME = "libargus_graph.so"
ABI = 4

_P = ctypes.c_void_p
c_u64, c_i64, c_u32 = ctypes.c_uint64, ctypes.c_int64, ctypes.c_uint32


class GraphError(Exception):
    """The graph core could not build a graph (one line)."""


class GraphOutOfMemory(GraphError, MemoryError):
    """The core ran out of memory: a MemoryError too, so callers that turn
    MemoryError into one line (cli/main.py) need not know the core."""


class Config(ctypes.Structure):
    _fields_ = [("trace_start", c_i64), ("trace_end", c_i64), ("roles", _P), ("nroles", c_u32),
                ("flags", c_u32), ("lost_window_ns", c_i64), ("head_gap_end", c_i64)]


STAT_FIELDS = ("rows", "ignored_wakeups", "lost_records", "lost_rows", "tid_reuse",
               "culled_wakeups", "loopback_edges", "weak_edges")
STAT_TAIL = ("splits_blocking_wait", "splits_event_loop", "splits_peer_change", "splits_batch",
             "weak_program_order", "message_edges", "timer_edges", "learned_channels",
             "gap_segments", "lost_regions", "ownership_edges", "wait_sites",
             "probe_rows", "splits_callback", "enqueue_edges", "mutex_edges", "splits_input",
             "cond_edges", "ipc_edges", "go_edges", "splits_goroutine", "unreported_switches")


class Stats(ctypes.Structure):
    _fields_ = ([(n, c_u64) for n in STAT_FIELDS] + [("culled_by_irq", c_u64 * 16), ("culled_by_ctx", c_u64 * 8)]
                + [(n, c_u64) for n in STAT_TAIL])


class Counts(ctypes.Structure):
    _fields_ = [(n, c_u64) for n in ("segments", "edges", "threads", "running", "runnable", "yields", "flags",
                                     "thread_rows", "ppids")]


# (name, dtype) in struct order; the numpy dtype fixes the C pointer type.
SEG_COLS = (("utid", np.int64), ("tid", np.int64), ("pid", np.int64), ("start", np.int64), ("end", np.int64),
            ("start_kind", np.uint8), ("start_ctx", np.int8), ("start_irq", np.uint8), ("start_row", np.int64),
            ("end_kind", np.uint8), ("wait_start", np.int64), ("wait_end", np.int64),
            ("wait_ongoing", bool), ("wait_known", bool), ("wait_state", np.uint8), ("wait_reason", np.uint8),
            ("wait_nr", np.uint32), ("wait_obj", np.uint64), ("wait_aux", np.int32),
            ("wait_timedout", bool), ("wait_done", bool),
            ("cpu_ns", np.int64), ("runnable_ns", np.int64), ("preempts", np.int64), ("yields", np.int64),
            ("nsyscalls", np.int64), ("row_lo", np.int64), ("row_hi", np.int64),
            ("split_kind", np.uint8), ("gap", bool),
            ("wait_site", np.uint64), ("wait_stack", np.uint64), ("wait_timeout_ms", np.int32),
            ("act_kind", np.uint8), ("act_ts", np.int64), ("act_obj", np.uint64), ("act_seg", np.int64),
            ("act_wakee", np.int64))
EDGE_COLS = (("src", np.int64), ("dst", np.int64), ("type", np.uint8), ("weak", bool), ("ts", np.int64),
             ("src_ts", np.int64), ("row", np.int64), ("ctx", np.int8), ("obj", np.uint64), ("wait_ns", np.int64),
             ("owner_kind", np.uint8))
THREAD_COLS = (("tid", np.int64), ("pid", np.int64), ("comm", "S16"), ("first_ts", np.int64),
               ("start_ts", np.int64), ("end_ts", np.int64), ("created", bool), ("parent_utid", np.int64),
               ("snapshot_main", bool), ("thread_rows", np.int64), ("thread_rows_ptr", np.int64),
               ("ppid_pid", np.int64), ("ppid_ppid", np.int64))
MISC_COLS = tuple((f"{p}_{n}", np.int64) for p in ("run", "rbl") for n in ("utid", "start", "end")) + \
    (("yld_utid", np.int64), ("yld_ts", np.int64), ("yld_seg", np.int64),
     ("flg_row", np.int64), ("flg_utid", np.int64), ("flg_pid", np.int64), ("flg_seg", np.int64),
     ("flg_ts", np.int64), ("flg_addr", np.uint64), ("flg_value", np.int64), ("flg_write", bool))


def _struct(name, cols):
    return type(name, (ctypes.Structure,), {"_fields_": [(n, _P) for n, _ in cols]})


SegCols = _struct("SegCols", SEG_COLS)
EdgeCols = _struct("EdgeCols", EDGE_COLS)
ThreadCols = _struct("ThreadCols", THREAD_COLS)
MiscCols = _struct("MiscCols", MISC_COLS)

_lib = None
_lock = threading.Lock()


def lib():
    global _lib
    with _lock:
        if _lib is None:
            d = os.environ.get("ARGUS_NATIVE_DIR") or argus.NATIVE_DIR
            path = os.path.join(d, LIBRARY_NAME)
            try:
                L = ctypes.CDLL(path)
            except OSError as e:
                # dlopen failing for want of address space is out of memory (as in tracer/native.py)
                if "failed to map segment" in str(e) or "Cannot allocate memory" in str(e):
                    raise MemoryError(f"loading {LIBRARY_NAME}") from None
                raise GraphError(f"cannot load the graph core {path}: {e} (build with pip install .)") from None
            L.argus_graph_abi.restype = ctypes.c_int
            if L.argus_graph_abi() != ABI:
                raise GraphError(f"{path}: graph core ABI {L.argus_graph_abi()}, expected {ABI}")
            L.argus_graph_build.restype = _P
            L.argus_graph_build.argtypes = [_P, c_u64, ctypes.POINTER(Config), ctypes.c_char_p, ctypes.c_size_t]
            L.argus_graph_counts.argtypes = [_P, ctypes.POINTER(Counts)]
            L.argus_graph_stats.argtypes = [_P, ctypes.POINTER(Stats)]
            for fn, st in (("segments", SegCols), ("edges", EdgeCols), ("threads", ThreadCols), ("misc", MiscCols)):
                f = getattr(L, f"argus_graph_export_{fn}")
                f.argtypes = [_P, ctypes.POINTER(st)]
                f.restype = ctypes.c_int
            L.argus_graph_free.argtypes = [_P]
            L.argus_graph_csr.argtypes = [_P, _P, c_u64, c_u64, _P, _P]
            L.argus_graph_csr.restype = ctypes.c_int
            L.argus_rows_sorted.argtypes = [_P, c_u64]
            L.argus_rows_sorted.restype = ctypes.c_int
            L.argus_rows_scan.argtypes = [_P, c_u64, _P, c_u32]
            L.argus_rows_scan.restype = ctypes.c_int
            _lib = L
    return _lib


def rows_sorted(rows):
    return bool(lib().argus_rows_sorted(rows.ctypes.data, len(rows)))


def scan_rows(rows, size=1024):
    """(sorted, learned): one C pass; learned[nr] has ROLE_FUTEX / ROLE_YIELD
    for the numbers switch-outs name with wait reason FUTEX / YIELD."""
    learned = np.zeros(size, np.uint8)
    ok = lib().argus_rows_scan(rows.ctypes.data if len(rows) else None, len(rows), learned.ctypes.data, size)
    return bool(ok), learned


def _alloc(cols, n_of):
    return {name: np.empty(n_of(name), dtype=dt) for name, dt in cols}


def _fill(struct_type, arrays):
    s = struct_type()
    for name, _ in struct_type._fields_:
        setattr(s, name, arrays[name].ctypes.data)
    return s


def csr(keys, order_ts, nseg):
    """(ptr, ids): edge ids sorted by (key, order_ts, eid) (order_ts None: (key, eid))."""
    n = len(keys)
    ptr = np.empty(nseg + 1, np.int64)
    ids = np.empty(n, np.int64)
    keys = np.ascontiguousarray(keys, np.int64)
    ots = None if order_ts is None else np.ascontiguousarray(order_ts, np.int64)
    rc = lib().argus_graph_csr(keys.ctypes.data, None if ots is None else ots.ctypes.data, n, nseg,
                               ptr.ctypes.data, ids.ctypes.data)
    if rc:
        raise MemoryError("graph core: out of memory building the edge index")
    return ptr, ids


def build(rows, trace_start, trace_end, role_table, *, splits=True, lost_window_ns=200_000_000,
          head_gap_end=-1):
    """Runs the core.  Returns a dict of numpy column dicts: seg, edges,
    threads, misc, plus 'stats' (Stats as a dict) and 'ppid' {pid: ppid}."""
    L = lib()
    rows = np.ascontiguousarray(rows)
    roles = np.ascontiguousarray(role_table, np.uint8)
    cfg = Config(int(trace_start), int(trace_end), roles.ctypes.data, len(roles), 0 if splits else 1,
                 int(lost_window_ns), int(head_gap_end))
    err = ctypes.create_string_buffer(256)
    h = L.argus_graph_build(rows.ctypes.data if len(rows) else None, len(rows), ctypes.byref(cfg), err, 256)
    if not h:
        msg = err.value.decode(errors="replace")
        raise (GraphOutOfMemory if "out of memory" in msg else GraphError)(msg)
    try:
        cnt = Counts()
        L.argus_graph_counts(h, ctypes.byref(cnt))
        st = Stats()
        L.argus_graph_stats(h, ctypes.byref(st))
        seg = _alloc(SEG_COLS, lambda n: cnt.segments)
        edges = _alloc(EDGE_COLS, lambda n: cnt.edges)
        sizes = {"thread_rows": cnt.thread_rows, "thread_rows_ptr": cnt.threads + 1,
                 "ppid_pid": cnt.ppids, "ppid_ppid": cnt.ppids}
        threads = _alloc(THREAD_COLS, lambda n: sizes.get(n, cnt.threads))
        msizes = {"run": cnt.running, "rbl": cnt.runnable, "yld": cnt.yields, "flg": cnt.flags}
        misc = _alloc(MISC_COLS, lambda n: msizes[n.split("_")[0]])
        for fn, st_type, arrays in (("segments", SegCols, seg), ("edges", EdgeCols, edges),
                                    ("threads", ThreadCols, threads), ("misc", MiscCols, misc)):
            if getattr(L, f"argus_graph_export_{fn}")(h, ctypes.byref(_fill(st_type, arrays))):
                raise MemoryError(f"graph core: out of memory exporting {fn}")
    finally:
        L.argus_graph_free(h)
    stats = {n: int(getattr(st, n)) for n in STAT_FIELDS + STAT_TAIL}
    by_label = {}
    for names, counts in ((schema.IRQ_NAMES, st.culled_by_irq), (schema.WAKE_CONTEXT_NAMES, st.culled_by_ctx)):
        for code, c in enumerate(counts):
            if c:
                lab = names.get(code, "other")
                by_label[lab] = by_label.get(lab, 0) + c
    stats["culled_by_label"] = by_label
    ppid = dict(zip(threads.pop("ppid_pid").tolist(), threads.pop("ppid_ppid").tolist()))
    return {"seg": seg, "edges": edges, "threads": threads, "misc": misc, "stats": stats, "ppid": ppid}
