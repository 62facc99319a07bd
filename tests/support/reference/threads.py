"""Thread / process table tracker of the Python reference engine (Perfetto's
process_tracker, in small; the C core keeps its own table).

Algorithm: fed rows in time order by the builder, it maps every tid it sees
to a utid (unique thread id) and remembers pid, comm, lifetime and parent.

  - A tid is first seen through any row naming it (header tid, or peer tid of
    WAKEUP / WAKEUP_NEW / FORK).  PROC_SNAPSHOT rows name the threads alive
    when tracing started (comm, ppid, main-thread flag).
  - FORK names the child (pid, tid, comm, parent).  A FORK whose child tid
    belongs to a thread that already EXITed starts a new utid (tid reuse);
    later rows with that tid go to the new utid.
  - comm: the latest name from PROC_SNAPSHOT, FORK (child comm), EXEC and
    THREAD_NAME.  A process's name is its main thread's comm (tid == pid);
    without one, the comm of the thread a snapshot marked as main, else of the
    first thread seen in that pid.
  - pid: from the first row naming the thread; EXEC or later rows with a
    different pid (a non-leader thread that exec'ed) update it.

Invariants: utids are dense 0..n-1 in first-seen order; tid_to_utid maps a
tid to its current (latest) utid; start_ts <= end_ts when both are known
(end_ts == -1 while alive at trace end).
"""
import numpy as np

from argus.graphbuild.graph import Table


class ThreadTracker:
    def __init__(self):
        self.tid_to_utid = {}
        self.tid = []
        self.pid = []
        self.comm = []
        self.first_ts = []
        self.start_ts = []       # creation time if created in the trace, else first seen
        self.end_ts = []
        self.created = []        # FORK / WAKEUP_NEW seen
        self.parent_utid = []
        self.snapshot_main = []
        self.ppid = {}           # pid -> ppid

    def __len__(self):
        return len(self.tid)

    def _new(self, tid, pid, ts):
        utid = len(self.tid)
        self.tid.append(tid)
        self.pid.append(pid)
        self.comm.append("")
        self.first_ts.append(ts)
        self.start_ts.append(ts)
        self.end_ts.append(-1)
        self.created.append(False)
        self.parent_utid.append(-1)
        self.snapshot_main.append(False)
        self.tid_to_utid[tid] = utid
        return utid

    def new_instance(self, tid, pid, ts):
        """A new utid for a tid seen again after its thread died (no FORK seen)."""
        return self._new(tid, pid, ts)

    def lookup(self, tid, pid, ts):
        """utid for a thread named by a row (created on first sight)."""
        utid = self.tid_to_utid.get(tid)
        if utid is None:
            return self._new(tid, pid, ts)
        if pid and self.pid[utid] != pid:
            self.pid[utid] = pid
        return utid

    def fork(self, parent_utid, child_tid, child_pid, comm, ts):
        """Returns (utid, is_new_thread)."""
        utid = self.tid_to_utid.get(child_tid)
        if utid is not None and self.end_ts[utid] >= 0:
            utid = None                                   # tid reuse after exit
        new = utid is None
        if new:
            utid = self._new(child_tid, child_pid, ts)
        self.created[utid] = True
        self.start_ts[utid] = min(self.start_ts[utid], ts) if not new else ts
        self.parent_utid[utid] = parent_utid
        if comm:
            self.comm[utid] = comm
        if child_pid != self.pid[parent_utid]:
            self.ppid.setdefault(child_pid, self.pid[parent_utid])
        return utid, new

    def mark_created(self, utid, parent_utid, ts):
        if not self.created[utid]:
            self.created[utid] = True
            self.start_ts[utid] = ts
            if parent_utid >= 0:
                self.parent_utid[utid] = parent_utid

    def snapshot(self, utid, ppid, is_main, comm):
        if comm:
            self.comm[utid] = comm
        if is_main:
            self.snapshot_main[utid] = True
        if ppid:
            self.ppid.setdefault(self.pid[utid], ppid)

    def set_comm(self, utid, comm):
        if comm:
            self.comm[utid] = comm

    def exit(self, utid, ts):
        self.end_ts[utid] = ts

    def finish(self):
        """Returns (threads Table, processes dict)."""
        n = len(self.tid)
        tid = np.asarray(self.tid, dtype=np.int64)
        pid = np.asarray(self.pid, dtype=np.int64)
        comm = np.asarray(self.comm, dtype=object) if n else np.zeros(0, dtype=object)
        threads = Table(
            tid=tid, pid=pid, comm=comm,
            first_ts=np.asarray(self.first_ts, dtype=np.int64),
            start_ts=np.asarray(self.start_ts, dtype=np.int64),
            end_ts=np.asarray(self.end_ts, dtype=np.int64),
            created=np.asarray(self.created, dtype=bool),
            parent_utid=np.asarray(self.parent_utid, dtype=np.int64),
            is_main=(tid == pid) if n else np.zeros(0, bool),
        )
        processes = {}
        for utid in range(n):
            p = self.pid[utid]
            entry = processes.setdefault(p, {"name": "", "ppid": self.ppid.get(p, 0), "main_utid": -1,
                                             "_rank": 9})
            # rank: 0 = main thread (tid == pid), 1 = snapshot main flag, 2 = first seen
            rank = 0 if self.tid[utid] == p else (1 if self.snapshot_main[utid] else 2)
            if rank < entry["_rank"] or (rank == entry["_rank"] == 0):
                entry["_rank"] = rank
                entry["name"] = self.comm[utid]
                entry["main_utid"] = utid if rank < 2 else entry["main_utid"]
        for entry in processes.values():
            del entry["_rank"]
        return threads, processes
