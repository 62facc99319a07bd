"""The event graph's vocabulary: Table (named numpy columns) and the codes
its columns hold (start / end / split kinds, edge types, owner kinds).

Split from graph.py so that the modules graph.py uses to derive tables
(stacks.py builds g.stacks) can name a Table and a kind without importing
graph.py, which imports them (tests/test_layers.py: no module cycles).
graph.py re-exports every name here: `G.END_BLOCKED` and `G.Table` still work.
"""
import numpy as np

from argus.tracer import schema

__all__ = [
    "START_TRACE",
    "START_THREAD",
    "START_WAKEUP",
    "START_SWITCH_IN",
    "START_PRE_TRACE",
    "START_SPLIT",
    "START_KIND_NAMES",
    "END_BLOCKED",
    "END_EXIT",
    "END_TRACE",
    "END_SPLIT",
    "END_KIND_NAMES",
    "SPLIT_NONE",
    "SPLIT_EVENT_LOOP",
    "SPLIT_PEER_CHANGE",
    "SPLIT_BATCH",
    "SPLIT_CALLBACK",
    "SPLIT_INPUT",
    "SPLIT_GOROUTINE",
    "SPLIT_NAMES",
    "EDGE_PROGRAM_ORDER",
    "EDGE_WAKEUP",
    "EDGE_SPAWN",
    "EDGE_DATA_FLAG",
    "EDGE_MESSAGE",
    "EDGE_TIMER",
    "EDGE_OWNERSHIP",
    "EDGE_TYPE_NAMES",
    "EDGE_TYPE_BY_NAME",
    "OWNER_NONE",
    "OWNER_FUTEX_OWNER",
    "OWNER_FUTEX_CHANNEL",
    "OWNER_FILE_LOCK",
    "OWNER_MUTEX",
    "OWNER_THREAD_EXIT",
    "OWNER_KIND_NAMES",
    "ACT_NONE",
    "ACT_SEND",
    "ACT_WAKE",
    "ACT_NAMES",
    "TIMEOUT_NA",
    "CULLED_CONTEXTS",
    "NONE",
    "Table",
]

# --- segment start kinds (seg.start_kind) ---
START_TRACE = 0        # thread already running when the trace starts
START_THREAD = 1       # thread created in the trace (FORK / WAKEUP_NEW)
START_WAKEUP = 2       # woken by a WAKEUP row (seg.start_ctx says by whom)
START_SWITCH_IN = 3    # switched in after a blocking wait, no wakeup seen
START_PRE_TRACE = 4    # placeholder: the thread was blocked since before the trace
START_SPLIT = 5        # a splitting heuristic cut the thread's run here (seg.split_kind says which)
START_KIND_NAMES = {0: "trace_start", 1: "thread_start", 2: "wakeup", 3: "switch_in", 4: "pre_trace", 5: "split"}

# --- segment end kinds (seg.end_kind) ---
END_BLOCKED = 0        # a blocking switch-out; the wait belongs to the segment
END_EXIT = 1           # the thread exited
END_TRACE = 2          # still running / runnable at trace end
END_SPLIT = 3          # a splitting heuristic ended it; the next segment starts START_SPLIT
END_KIND_NAMES = {0: "blocked", 1: "exit", 2: "trace_end", 3: "split"}

# --- splitting criteria (seg.split_kind of a START_SPLIT segment; paper §4.2) ---
SPLIT_NONE = 0
SPLIT_EVENT_LOOP = 1   # return from an event-loop wait that did not block
SPLIT_PEER_CHANGE = 2  # a message operation with a new peer set
SPLIT_BATCH = 3        # receive right after a reply on the same channel, io_uring submit+wait
SPLIT_CALLBACK = 4     # exact: a callback_begin / callback_end probe (dylib-instrument/, `argus run`)
SPLIT_INPUT = 5        # exact: an input probe (a key / button event read); slices stop here
SPLIT_GOROUTINE = 6    # exact: an M starts another goroutine (GO_EXECUTE probe; argus_graph_probes.c)
SPLIT_NAMES = {0: "none", 1: "event_loop", 2: "peer_change", 3: "batch", 4: "callback", 5: "input",
               6: "goroutine"}

# --- edge types (edge.type) ---
EDGE_PROGRAM_ORDER = 0
EDGE_WAKEUP = 1
EDGE_SPAWN = 2
EDGE_DATA_FLAG = 3
EDGE_MESSAGE = 4       # send -> receive on one channel, matched without a wakeup
EDGE_TIMER = 5         # timer arm -> fire
EDGE_OWNERSHIP = 6     # holder of a futex / file lock -> the vertex waiting for it or failing to take it
EDGE_TYPE_NAMES = {0: "program_order", 1: "wakeup", 2: "spawn", 3: "data_flag", 4: "message", 5: "timer",
                   6: "ownership"}
EDGE_TYPE_BY_NAME = {v: k for k, v in EDGE_TYPE_NAMES.items()}

# --- ownership edge kinds (edge.owner_kind; 0 on every other edge type) ---
OWNER_NONE = 0
OWNER_FUTEX_OWNER = 1    # the futex word names the holder (PI: strong; glibc __owner: weak)
OWNER_FUTEX_CHANNEL = 2  # the thread(s) that woke waiters of the same futex before (weak)
OWNER_FILE_LOCK = 3      # the lock table or the kernel's lock list names the holder (strong)
OWNER_MUTEX = 4          # mutex_unlock probe -> the waiting locker's lock return (strong)
OWNER_THREAD_EXIT = 5    # a join: the thread whose exit the futex announces (clear_child_tid; strong)
OWNER_KIND_NAMES = {0: "none", 1: "futex_owner", 2: "futex_channel", 3: "file_lock", 4: "mutex", 5: "thread_exit"}

# --- the thread's last action before a blocking wait (seg.act_kind) ---
ACT_NONE = 0
ACT_SEND = 1             # a message send / write on fd act_obj (act_wakee: whom it woke, or -1)
ACT_WAKE = 2             # a wakeup of thread act_wakee (act_obj: futex uaddr / fd of the waking syscall)
ACT_NAMES = {0: "none", 1: "send", 2: "wake"}

# seg.wait_timeout_ms of a wait that is not an event-loop wait (-1 = infinite, -2 = unknown there too)
TIMEOUT_NA = -2

# Wakeup contexts that are culled (no edge): the kernel, not a task, woke.
CULLED_CONTEXTS = (schema.WAKE_HARDIRQ, schema.WAKE_SOFTIRQ, schema.WAKE_KTHREAD, schema.WAKE_IDLE)

NONE = -1


class Table:
    """Named, equal-length numpy columns with attribute access.

    `t.start` is the column; `t.record(i)` is a dict of Python scalars for one
    entry (for reports, never for bulk work).
    """

    def __init__(self, **columns):
        n = None
        for name, col in columns.items():
            col = np.asarray(col)
            if n is None:
                n = len(col)
            elif len(col) != n:
                raise ValueError(f"column {name} has {len(col)} entries, expected {n}")
            object.__setattr__(self, name, col)
        object.__setattr__(self, "_names", tuple(columns))
        object.__setattr__(self, "_n", n or 0)

    @property
    def names(self):
        return self._names

    def __len__(self):
        return self._n

    def __setattr__(self, name, value):
        raise AttributeError("Table columns are read-only; build a new Table")

    def columns(self):
        """{name: column}, in column order."""
        return {name: getattr(self, name) for name in self._names}

    def record(self, i):
        out = {}
        for name in self._names:
            v = getattr(self, name)[i]
            out[name] = v.item() if hasattr(v, "item") else v
        return out

    def take(self, idx):
        return Table(**{name: col[idx] for name, col in self.columns().items()})

    def __repr__(self):
        return f"Table({self._n} rows: {', '.join(self._names)})"
