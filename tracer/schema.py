"""Event schema (v3; v1 and v2 files read the same) as seen from Python.

Variable-length records (user stacks, mapping paths, wait-site fds) are widened
into rows that index side arrays of the decode result (frames: uint64,
strings: NUL-terminated paths).

The columns of a row change meaning by event type (peer_tid is the wakee, the
previous thread, the child, the arming task, a string offset...).  ROW_FIELDS
is the one per-type map from a record's payload fields to the row's columns;
every consumer reads a row through it (column(), row_values()) rather than
decoding columns by hand.  tracer/ringbuf/argus_decode.c's widen() / widen_side() is
what it mirrors: schema_test.py parses that code and the record structs of
argus_event.h and fails when a column, a field name or a C type drifts.

Mirrors tracer/ringbuf/argus_event.h (record types and enums) and tracer/ringbuf/argus_decode.h
(struct argus_row, the fixed-width row the decoder produces).  The C headers are
the source of truth; tracer/schema_test.py parses them and fails when
this module drifts.
"""
from typing import NamedTuple

import numpy as np

SCHEMA_VERSION = 6

# enum argus_event_type
SWITCH_OUT = 1
SWITCH_IN = 2
WAKEUP = 3
WAKEUP_NEW = 4
SYSCALL_ENTER = 5
SYSCALL_EXIT = 6
FORK = 7
EXEC = 8
EXIT = 9
THREAD_NAME = 10
PROC_SNAPSHOT = 11
DATA_FLAG_WRITE = 12
DATA_FLAG_READ = 13
LOST = 14
FD_INFO = 15
TIMER = 16
USER_STACK = 17
MAPPING = 18
WAIT_SITE = 19
FUTEX_STATE = 20
FILE_LOCK = 21
CPU_SAMPLE = 22
KERNEL_STACK = 23
# a record, never a row: the decoder splits it into a SWITCH_OUT and a SWITCH_IN row
SWITCH = 24
# a record, never a row: the decoder splits it into a SYSCALL_ENTER and a SYSCALL_EXIT row
SYSCALL = 25
DETAIL = 26             # argusd switched the recording tier (docs/linux-tracer.md, "Detail tiers")
NET_IO = 27             # bytes moved on a TCP/UDP socket, with its 4-tuple (tracer/netio.py reads them)
PROC_NS = 28            # a process's cgroup and network namespace (tracer/containers.py reads them)
# a record, never a row: the decoder makes it a NET_IO row with pad = 1 (its 4-tuple
# copied from its socket's full NET_IO record by tracer/netio.py, see NET_TUPLE_*)
NET_IO_SHORT = 29
CALLBACK_BEGIN = 48
CALLBACK_END = 49
ENQUEUE = 50
IPC_SEND = 51
IPC_RECV = 52
MUTEX_LOCK = 53
MUTEX_UNLOCK = 54
INPUT = 55
PROBE_RETURN = 56
# user-space tracepoints (dylib-instrument/): struct argus_ev_probe
PROBE_TYPES = (CALLBACK_BEGIN, CALLBACK_END, ENQUEUE, IPC_SEND, IPC_RECV, MUTEX_LOCK, MUTEX_UNLOCK, INPUT,
               PROBE_RETURN)
# Go's scheduler (uprobes on Go executables): struct argus_ev_probe, obj = the g
GO_READY = 57
GO_EXECUTE = 58
GO_PARK = 59
GO_TYPES = (GO_READY, GO_EXECUTE, GO_PARK)
# a goroutine found parked when the Go probes attached (tracer/gosnap.py):
# struct argus_ev_go_snapshot, header tid = its locked M (else the pid)
GO_SNAPSHOT = 60
# enum argus_go_snapshot_flags
GO_SNAP_LOCKED = 1
GO_SNAP_CHAN = 2
GO_SNAP_FD = 4
GO_SNAP_TIMER = 8
GO_SNAP_WAIT_LEN = 32

TYPE_NAMES = {
    SWITCH_OUT: "switch_out",
    SWITCH_IN: "switch_in",
    WAKEUP: "wakeup",
    WAKEUP_NEW: "wakeup_new",
    SYSCALL_ENTER: "syscall_enter",
    SYSCALL_EXIT: "syscall_exit",
    FORK: "fork",
    EXEC: "exec",
    EXIT: "exit",
    THREAD_NAME: "thread_name",
    PROC_SNAPSHOT: "proc_snapshot",
    DATA_FLAG_WRITE: "data_flag_write",
    DATA_FLAG_READ: "data_flag_read",
    LOST: "lost",
    FD_INFO: "fd_info",
    TIMER: "timer",
    USER_STACK: "user_stack",
    MAPPING: "mapping",
    WAIT_SITE: "wait_site",
    FUTEX_STATE: "futex_state",
    FILE_LOCK: "file_lock",
    CPU_SAMPLE: "cpu_sample",
    KERNEL_STACK: "kernel_stack",
    CALLBACK_BEGIN: "callback_begin",
    CALLBACK_END: "callback_end",
    ENQUEUE: "enqueue",
    IPC_SEND: "ipc_send",
    IPC_RECV: "ipc_recv",
    MUTEX_LOCK: "mutex_lock",
    MUTEX_UNLOCK: "mutex_unlock",
    INPUT: "input",
    PROBE_RETURN: "probe_return",
    GO_READY: "go_ready",
    GO_EXECUTE: "go_execute",
    GO_PARK: "go_park",
    GO_SNAPSHOT: "go_snapshot",
    DETAIL: "detail",
    NET_IO: "net_io",
    PROC_NS: "proc_ns",
}
TYPE_BY_NAME = {v: k for k, v in TYPE_NAMES.items()}
# record types that never appear as rows (not in TYPE_NAMES / ROW_FIELDS)
RECORD_ONLY_TYPES = (SWITCH, SYSCALL, NET_IO_SHORT)

# enum argus_detail_tier / argus_detail_mode (DETAIL records)
DETAIL_FULL = 0
DETAIL_LEAN = 1
DETAIL_TIER_NAMES = {0: "full", 1: "lean"}
DETAIL_MODE_NAMES = {0: "full", 1: "lean", 2: "auto"}

# enum argus_lost_kind (lost rows: state): records the tracer dropped, or
# sched_switches the kernel never reported (a hole either way)
LOST_DROPPED = 0
LOST_SWITCHES_UNREPORTED = 1
LOST_KIND_NAMES = {0: "dropped", 1: "switches_unreported"}

# enum argus_task_state
STATE_RUNNABLE = 0
STATE_BLOCKED = 1
STATE_BLOCKED_IO = 2
STATE_DEAD = 3
STATE_OTHER = 4
STATE_TRACED = 5
STATE_NAMES = {0: "runnable", 1: "blocked", 2: "blocked_io", 3: "dead", 4: "other", 5: "traced"}

# enum argus_wait_reason
WAIT_NONE = 0
WAIT_FUTEX = 1
WAIT_POLL = 2
WAIT_READ = 3
WAIT_WRITE = 4
WAIT_SLEEP = 5
WAIT_CHILD = 6
WAIT_ACCEPT = 7
WAIT_YIELD = 8
WAIT_IO = 9
WAIT_OTHER_SYSCALL = 10
WAIT_PREEMPTED = 11
WAIT_NAMES = {
    0: "none", 1: "futex", 2: "poll", 3: "read", 4: "write", 5: "sleep",
    6: "child", 7: "accept", 8: "yield", 9: "io", 10: "syscall", 11: "preempted",
}

# enum argus_wake_context
WAKE_TASK = 0
WAKE_HARDIRQ = 1
WAKE_SOFTIRQ = 2
WAKE_KTHREAD = 3
WAKE_IDLE = 4
WAKE_CONTEXT_NAMES = {0: "task", 1: "hardirq", 2: "softirq", 3: "kthread", 4: "idle"}

# enum argus_irq_kind
IRQ_NONE = 0
IRQ_TIMER = 1
IRQ_NET = 2
IRQ_BLOCK = 3
IRQ_RCU = 4
IRQ_SCHED = 5
IRQ_TASKLET = 6
IRQ_DEVICE = 7
IRQ_OTHER = 8
IRQ_NAMES = {0: "none", 1: "timer", 2: "net", 3: "block", 4: "rcu", 5: "sched",
             6: "tasklet", 7: "device", 8: "other"}

# enum argus_fd_kind (fd_info rows: state)
FD_OTHER = 0
FD_SOCKET = 1
FD_PIPE = 2
FD_EVENTFD = 3
FD_TTY = 4
FD_REGULAR = 5
FD_CHARDEV = 6
FD_ANON = 7
FD_KIND_NAMES = {0: "other", 1: "socket", 2: "pipe", 3: "eventfd", 4: "tty", 5: "regular",
                 6: "chardev", 7: "anon"}

# enum argus_net_dir (net_io rows: state)
NET_SEND = 1
NET_RECV = 2
NET_DIR_NAMES = {1: "send", 2: "recv"}
NET_PROTO_NAMES = {6: "tcp", 17: "udp"}     # net_io rows: reason (IPPROTO_*)
# net_io rows: pad, where their 4-tuple comes from (tracer/netio.py resolve_tuples)
NET_TUPLE_OWN = 0         # a full NET_IO record
NET_TUPLE_COPIED = 1      # a NET_IO_SHORT record: from its socket's full record (pid, inode)
NET_TUPLE_UNKNOWN = 2     # a NET_IO_SHORT record with no full record of its socket in the decode
# header.flags of a SYSCALL_EXIT / SYSCALL record (schema v6): the dir of the
# NET_IO row the call stands for (tracer/netio.py rebuild_implied); the
# decoder puts it in the exit row's pad, which the reader clears
HF_NET_IO_MASK = 3

# enum argus_timer_kind (timer rows: state)
TIMER_FIRE = 2
TIMER_KIND_NAMES = {2: "fire"}

# enum argus_map_prot (mapping rows: aux)
MAP_READ = 1
MAP_WRITE = 2
MAP_EXEC = 4
MAP_TRUNCATED = 8

# enum argus_lock_kind (file_lock rows: state)
LOCK_POSIX = 1
LOCK_OFD = 2
LOCK_FLOCK = 3
LOCK_KIND_NAMES = {1: "posix", 2: "ofd", 3: "flock"}

# enum argus_lock_type (file_lock rows: reason; holder type in irq)
LOCK_READ = 1
LOCK_WRITE = 2
LOCK_UNLOCK = 3
LOCK_TYPE_NAMES = {1: "read", 2: "write", 3: "unlock"}

# enum argus_futex_state_flags (futex_state rows: state)
FUTEX_PI = 1
FUTEX_OWNER_READ = 2
FUTEX_THREAD_EXIT = 4     # a join: owner_field is the thread whose exit clears the word

SYSCALL_NONE = 0xFFFFFFFF
WAIT_SITE_MAX_FDS = 8
FUTEX_TID_MASK = 0x3FFFFFFF
SWITCH_OUT_BASE_SIZE = 40
SWITCH_BASE_SIZE = 48
SYSCALL_ENTER_SHORT_SIZE = 40
SYSCALL_SIZE = 48
USER_STACK_MAX_FRAMES = 28
MAPPING_MAX_PATH = 192

# Futex commands (include/uapi/linux/futex.h), as syscall_enter aux &
# FUTEX_CMD_MASK and futex_state op.  graphbuild/core/argus_graph_int.h
# FUTEX_OP_MASK is the C side's copy of the mask (schema_test.py checks it).
FUTEX_CMD_MASK = 0x7F
FUTEX_WAIT = 0
FUTEX_WAKE = 1
FUTEX_FD = 2
FUTEX_REQUEUE = 3
FUTEX_CMP_REQUEUE = 4
FUTEX_WAKE_OP = 5
FUTEX_LOCK_PI = 6
FUTEX_UNLOCK_PI = 7
FUTEX_TRYLOCK_PI = 8
FUTEX_WAIT_BITSET = 9
FUTEX_WAKE_BITSET = 10
FUTEX_WAIT_REQUEUE_PI = 11
FUTEX_CMP_REQUEUE_PI = 12
FUTEX_LOCK_PI2 = 13
FUTEX_OP_NAMES = {FUTEX_WAIT: "WAIT", FUTEX_WAKE: "WAKE", FUTEX_FD: "FD", FUTEX_REQUEUE: "REQUEUE",
                  FUTEX_CMP_REQUEUE: "CMP_REQUEUE", FUTEX_WAKE_OP: "WAKE_OP", FUTEX_LOCK_PI: "LOCK_PI",
                  FUTEX_UNLOCK_PI: "UNLOCK_PI", FUTEX_TRYLOCK_PI: "TRYLOCK_PI",
                  FUTEX_WAIT_BITSET: "WAIT_BITSET", FUTEX_WAKE_BITSET: "WAKE_BITSET",
                  FUTEX_WAIT_REQUEUE_PI: "WAIT_REQUEUE_PI", FUTEX_CMP_REQUEUE_PI: "CMP_REQUEUE_PI",
                  FUTEX_LOCK_PI2: "LOCK_PI2"}

# Which futex ops (syscall_enter aux & FUTEX_CMD_MASK) take or release a lock
# (priority-inheritance futexes: the word holds the owner's tid) and which
# wait for or signal a condition.  A wakeup from a lock-like op is mutual
# exclusion, not causality: the graph marks it weak.
FUTEX_LOCK_LIKE = frozenset({FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI, FUTEX_LOCK_PI2})
# condition variables, including those built on PI mutexes (*_REQUEUE_PI)
FUTEX_CONDITION_LIKE = frozenset({FUTEX_WAIT, FUTEX_WAKE, FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, FUTEX_WAKE_OP,
                                  FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET, FUTEX_WAIT_REQUEUE_PI,
                                  FUTEX_CMP_REQUEUE_PI})
FUTEX_REQUEUE_OPS = frozenset({FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, FUTEX_WAKE_OP, FUTEX_WAIT_REQUEUE_PI,
                               FUTEX_CMP_REQUEUE_PI})                  # obj2 = uaddr2
FUTEX_WAIT_OPS = frozenset({FUTEX_WAIT, FUTEX_WAIT_BITSET})            # a poller's timed waits
FUTEX_WAKE_OPS = frozenset({FUTEX_WAKE, FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, FUTEX_WAKE_OP, FUTEX_WAKE_BITSET})


def futex_op_name(op):
    """"WAIT", "WAKE_BITSET", ... of a futex op (flags such as PRIVATE masked off)."""
    cmd = int(op) & FUTEX_CMD_MASK
    return FUTEX_OP_NAMES.get(cmd, str(cmd))

# struct argus_row (80 bytes)
ROW_DTYPE = np.dtype([
    ("ts_ns", "<u8"),
    ("pid", "<u4"),
    ("tid", "<u4"),
    ("type", "<u2"),
    ("cpu", "<u2"),
    ("state", "u1"),
    ("reason", "u1"),
    ("irq", "u1"),
    ("pad", "u1"),
    ("nr", "<u4"),
    ("peer_pid", "<u4"),
    ("peer_tid", "<u4"),
    ("aux", "<i4"),
    ("val", "<i8"),
    ("obj", "<u8"),
    ("obj2", "<u8"),
    ("comm", "S16"),
])
assert ROW_DTYPE.itemsize == 80


def empty_rows(n=0):
    return np.zeros(n, dtype=ROW_DTYPE)


class Field(NamedTuple):
    """One payload field of a record type as a row carries it.

    name: the member of the record's struct in argus_event.h, or for a side
    array index (ctype "side") what it indexes; column: the struct argus_row
    column; ctype: the member's C type ("u8".."s64", "comm" for a comm[16]),
    which row_values() restores (a __u64 kept in the signed `val` column is
    read back unsigned); key: its name in `argus events --json` when that is
    not `name`; names: the enum's value -> name table, or bool for a yes/no."""
    name: str
    column: str
    ctype: str
    key: str = None
    names: object = None

    def display(self, value):
        """The value as `argus events` shows it: an enum's name (the number,
        as a string, when the table lacks it), a bool, else the value."""
        if self.names is bool:
            return bool(value)
        if self.names is not None:
            return self.names.get(value, str(value))
        return value


F = Field
_WAKEUP_FIELDS = (F("wakee_pid", "peer_pid", "u32"), F("wakee_tid", "peer_tid", "u32"),
                  F("context", "reason", "u8", names=WAKE_CONTEXT_NAMES),
                  F("irq_kind", "irq", "u8", names=IRQ_NAMES), F("target_cpu", "obj", "u16"),
                  F("irq_vec", "aux", "u32"))
_DATA_FLAG_FIELDS = (F("addr", "obj", "u64"), F("value", "val", "u64"), F("pc", "obj2", "u64"))
_COMM_FIELDS = (F("comm", "comm", "comm", key="new_comm"),)
_STACK_FIELDS = (F("stack_id", "obj2", "u64"),
                 F("frames", "obj", "side"), F("nframes", "aux", "side"))     # frames[obj : obj + aux]
_PROBE_FIELDS = (F("obj", "obj", "u64"), F("fn", "obj2", "u64"), F("probe_id", "nr", "u32"))

# record type -> its fields, in the order of the record's struct.  The header
# (ts_ns, pid, tid, type, cpu) is in every row under its own name.
ROW_FIELDS = {
    SWITCH_OUT: (F("state", "state", "u8", names=STATE_NAMES),
                 F("wait_reason", "reason", "u8", names=WAIT_NAMES), F("prio", "aux", "u16"),
                 F("syscall_nr", "nr", "u32", key="nr"), F("wait_obj", "obj", "u64"),
                 F("user_stack_id", "obj2", "u64")),          # 0: none recorded
    SWITCH_IN: (F("prev_tid", "peer_tid", "u32"), F("prev_pid", "peer_pid", "u32")),
    WAKEUP: _WAKEUP_FIELDS,
    WAKEUP_NEW: _WAKEUP_FIELDS,
    SYSCALL_ENTER: (F("nr", "nr", "u32"), F("aux", "aux", "s32"), F("obj", "obj", "u64"),
                    F("obj2", "obj2", "u64")),
    SYSCALL_EXIT: (F("nr", "nr", "u32"), F("ret", "val", "s64")),
    FORK: (F("child_pid", "peer_pid", "u32"), F("child_tid", "peer_tid", "u32"),
           F("comm", "comm", "comm", key="child_comm")),
    EXEC: _COMM_FIELDS,
    THREAD_NAME: _COMM_FIELDS,
    EXIT: (F("exit_code", "val", "s32"), F("is_group_leader", "state", "u32", key="group_leader", names=bool)),
    PROC_SNAPSHOT: (F("ppid", "peer_pid", "u32"),
                    F("is_main_thread", "state", "u32", key="main_thread", names=bool),
                    F("comm", "comm", "comm", key="snapshot_comm")),
    DATA_FLAG_WRITE: _DATA_FLAG_FIELDS,
    DATA_FLAG_READ: _DATA_FLAG_FIELDS,
    LOST: (F("count", "val", "u64"), F("kind", "state", "u32", names=LOST_KIND_NAMES)),
    DETAIL: (F("tier", "state", "u8", names=DETAIL_TIER_NAMES), F("mode", "reason", "u8", names=DETAIL_MODE_NAMES),
             F("cause_tid", "peer_tid", "u32"), F("out_ns", "val", "u64")),
    FD_INFO: (F("fd", "aux", "s32"), F("kind", "state", "u8", names=FD_KIND_NAMES), F("family", "reason", "u8"),
              F("sock_type", "nr", "u16"), F("inode", "obj", "u64"), F("local", "obj2", "u64"),
              F("peer", "val", "u64")),
    NET_IO: (F("fd", "aux", "s32"), F("dir", "state", "u8", names=NET_DIR_NAMES),
             F("proto", "reason", "u8", names=NET_PROTO_NAMES), F("family", "irq", "u8"),
             F("bytes", "val", "u32"), F("seq", "peer_tid", "u32"), F("local_port", "peer_pid", "u16"),
             F("remote_port", "nr", "u16"), F("inode", "obj2", "u64"),
             F("local_addr", "obj", "side")),     # frames[obj : obj + 4]: local, then remote address
    PROC_NS: (F("cgroup_id", "obj", "u64"), F("netns_ino", "obj2", "u32"),
              F("path", "peer_tid", "side"), F("path_len", "peer_pid", "side")),   # strings[peer_tid:][:peer_pid]
    TIMER: (F("timer_id", "obj", "u64"), F("expires_ns", "val", "s64"), F("arm_ts_ns", "obj2", "u64"),
            F("arm_pid", "peer_pid", "u32"), F("arm_tid", "peer_tid", "u32"),
            F("kind", "state", "u8", names=TIMER_KIND_NAMES), F("mode", "reason", "u8"),
            F("clockid", "nr", "u16")),
    USER_STACK: _STACK_FIELDS,
    KERNEL_STACK: _STACK_FIELDS,          # frames are offsets from the kernel's _stext
    CPU_SAMPLE: (F("user_stack_id", "obj", "u64"), F("kernel_stack_id", "obj2", "u64"),
                 F("period_us", "aux", "u32"), F("in_kernel", "state", "u8", names=bool)),
    MAPPING: (F("start", "obj", "u64"), F("end", "obj2", "u64"), F("pgoff", "val", "u64"),
              F("prot", "aux", "u32"), F("dev", "nr", "u32"),
              F("path", "peer_tid", "side"), F("path_len", "peer_pid", "side")),   # strings[peer_tid:][:peer_pid]
    WAIT_SITE: (F("syscall_nr", "nr", "u32", key="nr"), F("timeout_ms", "aux", "s32"), F("nfds", "peer_pid", "u32"),
                F("site_id", "obj2", "u64"),
                F("fds", "obj", "side"), F("nkept", "peer_tid", "side")),    # frames[obj : obj + peer_tid]
    FUTEX_STATE: (F("uaddr", "obj", "u64"), F("word", "val", "u32"), F("owner_field", "peer_tid", "u32"),
                  F("op", "nr", "u32"), F("flags", "state", "u32")),
    FILE_LOCK: (F("fd", "aux", "s32"), F("kind", "state", "u8", names=LOCK_KIND_NAMES),
                F("type", "reason", "u8", key="lock_type", names=LOCK_TYPE_NAMES),
                F("wait", "peer_tid", "u8", names=bool), F("whence", "nr", "u8"), F("start", "val", "s64"),
                F("len", "obj2", "s64"), F("inode", "obj", "u64"), F("holder_pid", "peer_pid", "u32"),
                F("holder_type", "irq", "u8", names={0: "unknown", **LOCK_TYPE_NAMES})),
    **{t: _PROBE_FIELDS for t in PROBE_TYPES},
    **{t: _PROBE_FIELDS for t in GO_TYPES},   # obj = the g, fn = the g register (R14) at the probe
    GO_SNAPSHOT: (F("g", "obj", "u64"), F("wait_obj", "obj2", "u64"), F("wait_since_ns", "val", "s64"),
                  F("goid", "nr", "u32"), F("fd", "aux", "s32"), F("status", "state", "u8"),
                  F("wait_reason", "reason", "u8"), F("flags", "irq", "u8"),
                  F("wait", "peer_tid", "side"), F("wait_len", "peer_pid", "side")),   # strings[peer_tid:][:peer_pid]
}
del F

_COLUMNS = {(t, f.name): f.column for t, fields in ROW_FIELDS.items() for f in fields}


def column(event_type, name):
    """The row column that carries field `name` of records of event_type:
    column(WAKEUP, "wakee_tid") == "peer_tid".  KeyError for a field the type
    does not have (a typo fails loudly, never reads another field)."""
    return _COLUMNS[(event_type, name)]


def _c_value(value, ctype):
    bits = int(ctype[1:])
    value &= (1 << bits) - 1
    if ctype[0] == "s" and value >> (bits - 1):
        value -= 1 << bits
    return value


def _reader(ctype):
    """value -> the C member's value, for one ctype (row_values' per-field step)."""
    if ctype == "comm":
        return bytes
    if ctype == "side":
        return int
    bits = int(ctype[1:])
    mask, sign = (1 << bits) - 1, 1 << (bits - 1)
    if ctype[0] == "u":
        return lambda v: int(v) & mask
    return lambda v: ((int(v) & mask) ^ sign) - sign


# type -> ((name, column, reader), ...): ROW_FIELDS compiled once, because
# `argus events` reads millions of rows through it
_READERS = {t: tuple((f.name, f.column, _reader(f.ctype)) for f in fields) for t, fields in ROW_FIELDS.items()}


def row_values(row):
    """{field name: value} of one row, per ROW_FIELDS: ints as the C member
    had them, comm as the raw 16 bytes, side-array indexes as ints (read the
    arrays with stack_frames / mapping_path / wait_site_fds)."""
    return {name: read(row[col]) for name, col, read in _READERS.get(int(row["type"]), ())}


def stack_frames(row, frames):
    """The frames of one USER_STACK row (innermost first): a view of the
    decoder's frames side array, clipped to it."""
    lo = int(row[column(USER_STACK, "frames")])
    return frames[lo:lo + int(row[column(USER_STACK, "nframes")])]


def mapping_path(row, strings):
    """The path of one MAPPING row, from the decoder's strings side array."""
    lo = int(row[column(MAPPING, "path")])
    return strings[lo:lo + int(row[column(MAPPING, "path_len")])].decode(errors="replace")


def go_snapshot_wait(row, strings):
    """The wait reason's text of one GO_SNAPSHOT row ("chan receive")."""
    lo = int(row[column(GO_SNAPSHOT, "wait")])
    return strings[lo:lo + int(row[column(GO_SNAPSHOT, "wait_len")])].decode(errors="replace")


def proc_ns_path(row, strings):
    """The cgroup path of one PROC_NS row ("" when argusd could not name it)."""
    lo = int(row[column(PROC_NS, "path")])
    return strings[lo:lo + int(row[column(PROC_NS, "path_len")])].decode(errors="replace")


def wait_site_fds(row, frames):
    """[(fd, events)] of one WAIT_SITE row: the decoder's frames side array
    holds (uint32)fd | events << 32 per kept fd; [] when out of bounds."""
    lo, n = int(row[column(WAIT_SITE, "fds")]), int(row[column(WAIT_SITE, "nkept")])
    if frames is None or lo + n > len(frames):
        return []
    return [(_c_value(int(e), "s32"), int(e) >> 32) for e in frames[lo:lo + n]]
