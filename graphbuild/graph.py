"""EventGraph: columnar storage of the Argus event graph, plus accessors.

Algorithm: none here; this module only holds what graphbuild/builder.py
computed and answers questions about it.  All per-vertex and per-edge data are
numpy columns (Table), never one Python object per event or per vertex.

Vertices are per-thread execution segments (docs/event-graph.md).  A thread
(utid, Perfetto's "unique thread id": a tid reused after the thread exited
gets a new utid) owns a contiguous, time-ordered run of segment ids
[thread_seg_lo[utid], thread_seg_hi[utid]); so the program-order successor of
segment v is v+1 whenever seg.utid[v+1] == seg.utid[v].

Invariants (checked by graph_test.py and builder_test.py):
  - seg.start <= seg.end; for a segment that ends blocked (end_kind ==
    END_BLOCKED) wait_start == end and wait_end >= wait_start; for the others
    wait_start == wait_end == -1.
  - segments of one thread do not overlap: seg.end[v] <= seg.start[v+1], and
    seg.start[v+1] == seg.wait_end[v] when v ended blocked.
  - edges: at most one wakeup/spawn edge enters a segment, and it enters at
    the segment's start (edge.ts == seg.start[dst]); data_flag edges enter
    anywhere inside the segment; program-order edges link v -> v+1.
  - in_ptr/in_eid is a CSR index of incoming edges, sorted by (dst, ts, eid);
    out_ptr/out_eid likewise for outgoing edges, sorted by (src, src_ts, eid).
  - running and runnable intervals (thread_state) are sorted by (utid, start)
    and never overlap within one thread.
"""
import dataclasses

import numpy as np

from argus.tracer import containers, schema
# Table and the kind codes live in columns.py; re-exported (G.END_BLOCKED, G.Table)
from argus.graphbuild.columns import *  # noqa: F401,F403
from argus.graphbuild.stacks import build_stacks


def _csr(keys, order_keys, n):
    """Returns (ptr, ids): ids sorted by (keys, order_keys, id); ptr[k]..ptr[k+1]."""
    ids = np.lexsort((np.arange(len(keys)), order_keys, keys)) if len(keys) else np.zeros(0, np.int64)
    counts = np.bincount(keys, minlength=n) if len(keys) else np.zeros(n, np.int64)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, ids.astype(np.int64)


@dataclasses.dataclass
class Derived:
    """Tables derived from a built graph on first use, each by the module
    that reads it (None until then).  They depend on the rows and the side
    arrays only, so a graph built once keeps them."""
    stacks: object = None            # graph.stacks: graphbuild.stacks.build_stacks
    wait_fds: dict = None            # graph.wait_fds: {site id: [(fd, events)]}
    traced_tids: frozenset = None    # diagnose.blocktype.traced_ns: threads ever stopped by a tracer
    wait_sites: object = None        # diagnose.waits.Sites
    fd_table: object = None          # diagnose.objects.FdTable
    children: dict = None            # diagnose.objects: {pid: [child pids]}
    symbolizer: object = None        # diagnose.stacks: graphbuild.stacks.Symbolizer
    sample_index: tuple = None       # diagnose.profile: CPU_SAMPLE rows by (tid, ts)
    sample_stacks: tuple = None      # diagnose.profile: (user, kernel) stack tables
    build_ids: dict = dataclasses.field(default_factory=dict)   # diagnose.rules.build_id: {pid: id}
    traced_endpoints: set = None     # diagnose.hosts: the inet endpoints traced processes hold (several hosts)
    many_netns: bool = None          # graph.process_where: processes live in more than one netns


class EventGraph:
    """The event graph of one trace.

    Attributes (all numpy-backed):
      rows          the input rows (ROW_DTYPE), for drill-down
      trace_start, trace_end   ns
      threads       Table: utid-indexed tid, pid, comm, start_ts, end_ts, exited, is_main
      processes     dict pid -> {"name", "ppid", "main_utid"}, and where a PROC_NS
                    record says: "cgroup_id", "cgroup", "netns", "container"
      seg           Table of segments (see builder/segments for the columns)
      thread_seg_lo, thread_seg_hi   per utid, segment id range
      thread_rows   row indices grouped by thread (utid order, time order
                    inside); seg.row_lo/row_hi index into it, and
                    thread_rows_ptr[utid]..thread_rows_ptr[utid+1] is a thread's run
      edges         Table: src, dst, type, weak, ts, src_ts, row, ctx, obj, wait_ns, owner_kind
      roles         SyscallRoles: the syscall numbers of each role, host table
                    plus what this trace taught (futex, yield)
      running, runnable   Table: utid, start, end (thread_state intervals)
      run_lo/run_hi, rbl_lo/rbl_hi   per utid ranges into running / runnable
      yields        Table: utid, ts, seg (sorted by utid, ts); yld_lo/yld_hi
      flags         Table: data flag accesses: utid, seg, ts, addr, value, write, row
      stats         dict of counters (culled wakeups by label, ignored wakeups, lost,
                    splits by criterion, ...)
    seg.split_kind names the criterion of a START_SPLIT segment (SPLIT_NAMES);
    seg.gap is True when the segment's start or end falls in a lost region.
    Wait site of a blocking wait (native core; docs/event-graph.md): seg.wait_site
    (hash of the poll/select fd set or the epoll fd, 0 none), seg.wait_timeout_ms
    (event-loop waits; TIMEOUT_NA otherwise), seg.wait_stack (user stack id, 0
    none); wait_fds(v) lists the fds.  The thread's last action before the wait:
    seg.act_kind (ACT_*), act_ts, act_obj, act_seg (vertex of the action), act_wakee
    (utid).  Ownership edges carry edge.owner_kind (OWNER_*).
    What the loader knows beside the rows (diagnose/windowed.search_trace sets them
    after the build; reports read them): time_origin (the ns every printed time counts
    from; None: trace_start), wall_offset_ns (CLOCK_REALTIME - trace clock, None
    unknown), loaded_window ((start, end) of a windowed load, None: the whole
    buffer), torn_chunks and bad_records (what the decode dropped).  The
    decoder's side arrays that USER_STACK, MAPPING and WAIT_SITE rows index:
    frames (uint64) and strings (bytes), given to the builder (build_graph's
    side=) so the graph is complete when built.  derived (Derived): what
    readers of the graph compute once per graph (stacks, wait sites, the
    symbolizer, ...), a typed field each.
    """

    def __init__(self, *, rows, trace_start, trace_end, threads, processes, seg, thread_rows,
                 thread_rows_ptr, edges, running, runnable, yields, flags, stats, roles, csr=None,
                 frames=None, strings=b""):
        self.rows = rows
        self.trace_start = int(trace_start)
        self.trace_end = int(trace_end)
        self.threads = threads
        self.processes = processes
        self.seg = seg
        self.thread_rows = thread_rows
        self.thread_rows_ptr = thread_rows_ptr
        self.edges = edges
        self.running = running
        self.runnable = runnable
        self.yields = yields
        self.flags = flags
        self.stats = stats
        self.roles = roles
        self.time_origin = None
        self.wall_offset_ns = None
        self.loaded_window = None
        self.torn_chunks = 0
        self.bad_records = 0
        # graphbuild/multihost.py: the hosts of a graph merged from several
        # buffers, and which edges cross hosts (None: one buffer)
        self.hosts = None
        self.host_edges = None
        self.frames = np.zeros(0, np.uint64) if frames is None else frames
        self.strings = strings
        self.derived = Derived()
        nthreads = len(threads)
        self.thread_seg_lo, self.thread_seg_hi = _ranges(seg.utid, nthreads)
        self.run_lo, self.run_hi = _ranges(running.utid, nthreads)
        self.rbl_lo, self.rbl_hi = _ranges(runnable.utid, nthreads)
        self.yld_lo, self.yld_hi = _ranges(yields.utid, nthreads)
        self.flg_lo, self.flg_hi = _ranges(flags.utid, nthreads)
        nseg = len(seg)
        if csr is None:
            csr = _csr
        # csr(keys, order_keys, n) -> (ptr, ids); the native core's is a radix sort
        self.in_ptr, self.in_eid = csr(edges.dst, edges.ts, nseg)
        self.out_ptr, self.out_eid = csr(edges.src, edges.src_ts, nseg)
        # in_wake[v]: the wakeup / spawn edge entering v at its start, or -1.
        self.in_wake = np.full(nseg, NONE, np.int64)
        if len(edges):
            sel = np.flatnonzero((edges.type == EDGE_WAKEUP) | (edges.type == EDGE_SPAWN))
            self.in_wake[edges.dst[sel][::-1]] = sel[::-1]
        self._tid_index = {}
        for utid, tid in enumerate(threads.tid.tolist()):
            self._tid_index.setdefault(tid, []).append(utid)

    # --- user stacks ---
    @property
    def stacks(self):
        """Table(seg, depth, pc, symbol): the user stack each vertex blocked
        with (innermost first), symbolized; built on first use (stacks.py)."""
        st = self.derived.stacks
        if st is None:
            st = self.derived.stacks = build_stacks(self)
        return st

    def wait_stack(self, v):
        """The symbols of the stack vertex v blocked with, innermost first."""
        st = self.stacks
        return [str(x) for x in st.symbol[st.seg == int(v)]]

    # --- sizes ---
    @property
    def num_vertices(self):
        return len(self.seg)

    @property
    def num_edges(self):
        return len(self.edges)

    # --- threads and processes ---
    def utids_of_tid(self, tid):
        """All utids that had this tid (more than one if the tid was reused)."""
        return list(self._tid_index.get(int(tid), ()))

    def utid_of_tid(self, tid, at=None):
        """The utid of `tid` (the one alive at `at` if given, else the last one)."""
        utids = self._tid_index.get(int(tid))
        if not utids:
            return None
        if at is None or len(utids) == 1:
            return utids[-1]
        for u in utids:
            if self.threads.start_ts[u] <= at and (self.threads.end_ts[u] < 0 or at <= self.threads.end_ts[u]):
                return u
        return utids[-1]

    def utids_of_pid(self, pid):
        return np.flatnonzero(self.threads.pid == int(pid)).tolist()

    def comm(self, utid):
        return str(self.threads.comm[utid])

    def process_name(self, pid):
        p = self.processes.get(int(pid))
        return p["name"] if p else ""

    def process_scope(self, pid):
        """{"container", "cgroup", "netns"} of a process, the keys known
        (PROC_NS records; tracer/containers.py), {} when none."""
        p = self.processes.get(int(pid)) or {}
        return {k: p[k] for k in ("container", "cgroup", "netns") if p.get(k)}

    def process_where(self, pid):
        """One phrase for where a process lives ("docker:0123456789ab netns
        4026531840"), "" when unknown; the namespace only in a trace whose
        processes live in more than one (else it says nothing)."""
        many = self.derived.many_netns
        if many is None:
            many = self.derived.many_netns = len({p.get("netns") for p in self.processes.values()
                                                  if p.get("netns")}) > 1
        return containers.describe(self.process_scope(pid), netns=many)

    def syscall_name(self, nr):
        nr = int(nr)
        if nr == schema.SYSCALL_NONE:
            return "-"
        if self.roles is not None:
            return self.roles.name(nr)
        return f"syscall_{nr}"

    # --- segments ---
    def thread_segments(self, utid):
        return np.arange(self.thread_seg_lo[utid], self.thread_seg_hi[utid])

    def prev_segment(self, v):
        """Program-order predecessor of v, or -1."""
        if v > 0 and self.seg.utid[v - 1] == self.seg.utid[v]:
            return v - 1
        return NONE

    def next_segment(self, v):
        if v + 1 < len(self.seg) and self.seg.utid[v + 1] == self.seg.utid[v]:
            return v + 1
        return NONE

    def segment_at(self, utid, ts):
        """The segment of `utid` whose span [start, next start) contains ts (its
        running part or its wait); the first segment if ts is before it, -1 if
        the thread has none."""
        lo, hi = self.thread_seg_lo[utid], self.thread_seg_hi[utid]
        if lo == hi:
            return NONE
        i = int(np.searchsorted(self.seg.start[lo:hi], ts, side="right")) - 1
        return lo + max(i, 0)

    def segment_rows(self, v):
        """Row indices (into self.rows) of segment v's own events."""
        return self.thread_rows[self.seg.row_lo[v]:self.seg.row_hi[v]]

    def thread_rows_of(self, utid, a=None, b=None):
        """Row indices of a thread's own rows, optionally only those with a <= ts <= b."""
        idx = self.thread_rows[self.thread_rows_ptr[utid]:self.thread_rows_ptr[utid + 1]]
        if a is not None or b is not None:
            ts = self.rows["ts_ns"][idx].astype(np.int64)
            lo = 0 if a is None else int(np.searchsorted(ts, a, side="left"))
            hi = len(ts) if b is None else int(np.searchsorted(ts, b, side="right"))
            idx = idx[lo:hi]
        return idx

    def segment_syscalls(self, v):
        """{nr: count} of the syscalls entered in segment v."""
        r = self.rows[self.segment_rows(v)]
        nrs = r["nr"][r["type"] == schema.SYSCALL_ENTER]
        u, c = np.unique(nrs, return_counts=True)
        return {int(a): int(b) for a, b in zip(u, c)}

    def wait_fds(self, v):
        """[(fd, poll events)] of the wait site vertex v blocked at (poll / select:
        the first fds of its set; epoll: the epoll fd), [] when none is known."""
        site = int(self.seg.wait_site[v]) if "wait_site" in self.seg.names else 0
        if not site:
            return []
        sites = self.derived.wait_fds
        if sites is None:
            sites = self.derived.wait_fds = _wait_sites(self.rows, self.frames)
        return sites.get(site, [])

    def wait_duration(self, v):
        if self.seg.end_kind[v] != END_BLOCKED:
            return 0
        return int(self.seg.wait_end[v] - self.seg.wait_start[v])

    def start_label(self, v):
        """What made segment v start: "trace_start", "thread_start", "task",
        "switch_in", "pre_trace", or for culled wakeups the irq kind
        ("timer", "net", ...; "kthread" / "idle" when no irq kind applies)."""
        kind = int(self.seg.start_kind[v])
        if kind != START_WAKEUP:
            return START_KIND_NAMES[kind]
        ctx = int(self.seg.start_ctx[v])
        if ctx == schema.WAKE_TASK:
            return "task"
        irq = int(self.seg.start_irq[v])
        if irq != schema.IRQ_NONE:
            return schema.IRQ_NAMES.get(irq, "other")
        return schema.WAKE_CONTEXT_NAMES.get(ctx, "other")

    def vertex(self, v):
        """A dict describing segment v (for reports and the REPL)."""
        d = self.seg.record(v)
        u = d["utid"]
        d["vertex"] = int(v)
        d["comm"] = self.comm(u)
        d["process"] = self.process_name(d["pid"])
        d["start_label"] = self.start_label(v)
        d["end_kind"] = END_KIND_NAMES[d["end_kind"]]
        return d

    # --- edges ---
    def in_edges(self, v):
        return self.in_eid[self.in_ptr[v]:self.in_ptr[v + 1]]

    def out_edges(self, v):
        return self.out_eid[self.out_ptr[v]:self.out_ptr[v + 1]]

    def edge(self, e):
        d = self.edges.record(e)
        d["eid"] = int(e)
        d["type"] = EDGE_TYPE_NAMES[d["type"]]
        d["weak"] = bool(d["weak"])
        if "owner_kind" in d:
            d["owner_kind"] = OWNER_KIND_NAMES.get(d["owner_kind"], "none")
        return d

    def incoming_wakeup(self, v):
        """The wakeup/spawn edge entering v at its start, or -1."""
        return int(self.in_wake[v])

    # --- views ---
    def to_networkx(self, vertices=None):
        """A networkx.MultiDiGraph view (copies attributes; for exploration and
        small subgraphs, not for the whole graph of a long trace).  With
        `vertices`, the subgraph induced by them."""
        import networkx as nx

        g = nx.MultiDiGraph()
        if vertices is None:
            vs = np.arange(len(self.seg))
        else:
            vs = np.unique(np.asarray(list(vertices), dtype=np.int64))
        keep = np.zeros(len(self.seg), bool)
        keep[vs] = True
        seg = self.seg
        for v in vs.tolist():
            g.add_node(v, utid=int(seg.utid[v]), tid=int(seg.tid[v]), pid=int(seg.pid[v]),
                       comm=self.comm(seg.utid[v]), start=int(seg.start[v]), end=int(seg.end[v]),
                       wait_start=int(seg.wait_start[v]), wait_end=int(seg.wait_end[v]),
                       wait_reason=schema.WAIT_NAMES.get(int(seg.wait_reason[v]), "?"),
                       cpu_ns=int(seg.cpu_ns[v]), start_label=self.start_label(v),
                       split_kind=SPLIT_NAMES.get(int(seg.split_kind[v]), "none") if "split_kind" in seg.names
                       else "none",
                       gap=bool(seg.gap[v]) if "gap" in seg.names else False)
        ed = self.edges
        sel = np.flatnonzero(keep[ed.src] & keep[ed.dst]) if len(ed) else np.zeros(0, np.int64)
        for e in sel.tolist():
            g.add_edge(int(ed.src[e]), int(ed.dst[e]), key=e, type=EDGE_TYPE_NAMES[int(ed.type[e])],
                       weak=bool(ed.weak[e]), ts=int(ed.ts[e]))
        return g

    def __repr__(self):
        return (f"EventGraph({len(self.threads)} threads, {len(self.seg)} vertices, "
                f"{len(self.edges)} edges, [{self.trace_start}, {self.trace_end}] ns)")


def _wait_sites(rows, frames):
    """site id -> [(fd, events)] from the WAIT_SITE rows and the decoder's side
    array (each entry (uint32)fd | events << 32)."""
    out = {}
    if frames is None or rows is None:
        return out
    sel = rows[rows["type"] == schema.WAIT_SITE]
    site_col = schema.column(schema.WAIT_SITE, "site_id")
    for row in sel:
        site = int(row[site_col])
        lo, n = int(row[schema.column(schema.WAIT_SITE, "fds")]), int(row[schema.column(schema.WAIT_SITE, "nkept")])
        if site in out or lo + n > len(frames):
            continue
        out[site] = schema.wait_site_fds(row, frames)
    return out


def _ranges(keys, n):
    """For a column sorted by key, per-key [lo, hi) ranges."""
    keys = np.asarray(keys)
    if len(keys) == 0:
        z = np.zeros(n, np.int64)
        return z, z.copy()
    idx = np.arange(n)
    lo = np.searchsorted(keys, idx, side="left")
    hi = np.searchsorted(keys, idx, side="right")
    return lo.astype(np.int64), hi.astype(np.int64)
