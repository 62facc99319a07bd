"""Event schema v1 as seen from Python.

Variable-length records (user stacks, mapping paths) are widened into rows that
index side arrays of the decode result (frames: uint64, strings: NUL-terminated
paths); see tracer/argus_decode.h for the per-type field mapping.

Mirrors tracer/argus_event.h (record types and enums) and tracer/argus_decode.h
(struct argus_row, the fixed-width row the decoder produces).  The C headers are
the source of truth; tracer/python/schema_test.py parses them and fails when
this module drifts.
"""
import numpy as np

SCHEMA_VERSION = 1

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
}
TYPE_BY_NAME = {v: k for k, v in TYPE_NAMES.items()}

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

SYSCALL_NONE = 0xFFFFFFFF
WAIT_SITE_MAX_FDS = 8
FUTEX_TID_MASK = 0x3FFFFFFF
SWITCH_OUT_BASE_SIZE = 40
USER_STACK_MAX_FRAMES = 28
MAPPING_MAX_PATH = 192

# Which futex ops (syscall_enter aux & FUTEX_CMD_MASK) take or release a lock
# (priority-inheritance futexes: the word holds the owner's tid) and which
# wait for or signal a condition.  A wakeup from a lock-like op is mutual
# exclusion, not causality: the graph marks it weak.
FUTEX_CMD_MASK = 0x7F
FUTEX_LOCK_LIKE = frozenset({6, 7, 8, 13})          # LOCK_PI, UNLOCK_PI, TRYLOCK_PI, LOCK_PI2
FUTEX_CONDITION_LIKE = frozenset({0, 1, 3, 4, 5, 9, 10, 11, 12})
# WAIT, WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, WAIT_BITSET, WAKE_BITSET,
# WAIT_REQUEUE_PI, CMP_REQUEUE_PI (condition variables built on PI mutexes)
FUTEX_REQUEUE_OPS = frozenset({3, 4, 5, 11, 12})    # obj2 = uaddr2
FUTEX_WAIT_OPS = frozenset({0, 9})                  # WAIT, WAIT_BITSET: a poller's timed waits
FUTEX_WAKE_OPS = frozenset({1, 3, 4, 5, 10})        # WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, WAKE_BITSET

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
