/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Argus event schema v2 — the single source of truth for what crosses the
 * kernel boundary and what lives in the trace file.
 *
 * Every record starts with struct argus_event_header (24 bytes) and is padded
 * to a multiple of 8 bytes; `size` is the padded total.  Records are written by
 * BPF programs (Linux), by the kdebug decoder (macOS) and by user-space
 * producers (bp_watch, the /proc snapshot), so this header must compile both
 * in BPF C (with vmlinux.h, which defines __u8.. __u64) and in user space.
 *
 * Invariants:
 *   - ts_ns is CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns on Linux).
 *   - pid is the thread-group id (process), tid the kernel thread id.
 *   - size >= sizeof(struct argus_event_header), size % 8 == 0,
 *     size <= ARGUS_EVENT_MAX_SIZE.
 *   - New fields are only ever appended to a payload; readers accept records
 *     longer than they know (forward compatibility) and reject shorter ones.
 *
 * docs/event-schema.md documents each type; the Python reader
 * (tracer/schema.py) is checked against this file by a test that
 * parses it, so the two cannot drift.
 */
#ifndef ARGUS_EVENT_H
#define ARGUS_EVENT_H

#ifndef __VMLINUX_H__
#ifdef __linux__
#include <linux/types.h>  /* the same __u8..__s64 glibc headers (statx) pull in */
#else
#include <stdint.h>
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef int32_t __s32;
typedef int64_t __s64;
#endif
#endif

/* v2: SYSCALL_EXIT has a 32-byte form (struct argus_ev_syscall_exit_short).
 * v3: SWITCH, one record for the switch-out and switch-in of one
 * sched_switch (struct argus_ev_switch), decoded into the same two rows as a
 * SWITCH_OUT and a SWITCH_IN record; and a 40-byte SYSCALL_ENTER when obj
 * and obj2 fit in 32 bits (struct argus_ev_syscall_enter_short).
 * v4: SYSCALL, one record for the SYSCALL_ENTER and SYSCALL_EXIT of a call
 * that did not block (struct argus_ev_syscall), decoded into the same two
 * rows as the two records.
 * v5: NET_IO_SHORT, the NET_IO of a socket whose full NET_IO record was
 * written recently (struct argus_ev_net_io_short), decoded into a NET_IO row
 * whose 4-tuple readers take from that record (tracer/netio.py); a reader
 * of v4 would count them as unknown and lose their bytes and seqs.
 * v6: no NET_IO_SHORT for a call that continues its thread's chain on its
 * socket: its exit record's header.flags says so (ARGUS_HF_NET_IO_MASK) and
 * readers rebuild its NET_IO row; a reader of v5 would miss those rows.
 * Readers take every version from ARGUS_SCHEMA_VERSION_MIN on; a record's
 * form is told by its type and size, not by the file's version. */
#define ARGUS_SCHEMA_VERSION 6
#define ARGUS_SCHEMA_VERSION_MIN 1
#define ARGUS_EVENT_MAX_SIZE 256
#define ARGUS_COMM_LEN 16

enum argus_event_type {
	ARGUS_EV_SWITCH_OUT = 1,      /* thread leaves the CPU */
	ARGUS_EV_SWITCH_IN = 2,       /* thread gets the CPU */
	ARGUS_EV_WAKEUP = 3,          /* waker (header tid) makes wakee runnable */
	ARGUS_EV_WAKEUP_NEW = 4,      /* first wakeup of a new task */
	ARGUS_EV_SYSCALL_ENTER = 5,
	ARGUS_EV_SYSCALL_EXIT = 6,
	ARGUS_EV_FORK = 7,            /* header = parent, payload = child */
	ARGUS_EV_EXEC = 8,
	ARGUS_EV_EXIT = 9,            /* a thread exits */
	ARGUS_EV_THREAD_NAME = 10,    /* comm set or renamed */
	ARGUS_EV_PROC_SNAPSHOT = 11,  /* a thread alive when tracing started */
	ARGUS_EV_DATA_FLAG_WRITE = 12,
	ARGUS_EV_DATA_FLAG_READ = 13,
	ARGUS_EV_LOST = 14,           /* `count` records missing: dropped, or never reported (kind) */
	ARGUS_EV_FD_INFO = 15,        /* identity of the channel behind an fd (first use, then at most 1/s) */
	ARGUS_EV_TIMER = 16,          /* a user-visible hrtimer fired; names who armed it */
	ARGUS_EV_USER_STACK = 17,     /* user stack frames, once per (pid, stack id) and second */
	ARGUS_EV_MAPPING = 18,        /* an executable mapping of a process whose stack was recorded */
	ARGUS_EV_WAIT_SITE = 19,      /* the fd set and timeout of a blocking poll/select/epoll wait */
	ARGUS_EV_FUTEX_STATE = 20,    /* the futex word and its owner field at a blocking futex wait */
	ARGUS_EV_FILE_LOCK = 21,      /* an fcntl / flock lock or unlock request */
	ARGUS_EV_CPU_SAMPLE = 22,     /* a timer-driven sample of a thread on CPU (argus_sample.bpf.c) */
	ARGUS_EV_KERNEL_STACK = 23,   /* kernel stack frames of samples, as offsets from _stext */
	ARGUS_EV_SWITCH = 24,         /* SWITCH_OUT + SWITCH_IN of one sched_switch (schema v3): two rows */
	ARGUS_EV_SYSCALL = 25,        /* SYSCALL_ENTER + SYSCALL_EXIT of a call that did not block (v4): two rows */
	ARGUS_EV_DETAIL = 26,         /* argusd switched the recording tier (full / lean), from here on */
	ARGUS_EV_NET_IO = 27,         /* bytes a read/write/send/recv moved on a TCP or UDP socket, with its 4-tuple */
	ARGUS_EV_PROC_NS = 28,        /* a process's cgroup and network namespace (exec, fork, cgroup move, start-up) */
	ARGUS_EV_NET_IO_SHORT = 29,   /* NET_IO without the 4-tuple: the socket's full NET_IO has it (v5) */
	/* User-space tracepoints (dylib-instrument/ trampolines), struct
	 * argus_ev_probe; numbered from 48 so the kernel-side types can grow. */
	ARGUS_EV_CALLBACK_BEGIN = 48, /* an event loop starts running a callback (dispatch) */
	ARGUS_EV_CALLBACK_END = 49,   /* ... and returns from it */
	ARGUS_EV_ENQUEUE = 50,        /* work handed to a loop (source attach, wakeup) */
	ARGUS_EV_IPC_SEND = 51,
	ARGUS_EV_IPC_RECV = 52,
	ARGUS_EV_MUTEX_LOCK = 53,     /* a thread asks for a mutex */
	ARGUS_EV_MUTEX_UNLOCK = 54,
	ARGUS_EV_INPUT = 55,          /* an input event read (key, button) */
	ARGUS_EV_PROBE_RETURN = 56,   /* the return of a hooked function (obj = return value) */
	/* Go's scheduler through uprobes on Go executables (argus_uprobe.bpf.c
	 * go_probe), struct argus_ev_probe: obj = the goroutine (its g), fn = the
	 * g register (R14) at the probe: who a goroutine hands its link to in
	 * user space, which no kernel record shows. */
	ARGUS_EV_GO_READY = 57,       /* runtime.ready: a thread makes goroutine obj runnable */
	ARGUS_EV_GO_EXECUTE = 58,     /* runtime.execute: this thread starts running goroutine obj */
	ARGUS_EV_GO_PARK = 59,        /* runtime.park_m: goroutine obj parks (chan, sync, sleep, netpoll) */
	/* A goroutine found parked in the process's memory when the Go probes
	 * attached (tracer/gosnap.py), struct argus_ev_go_snapshot. */
	ARGUS_EV_GO_SNAPSHOT = 60,
	ARGUS_EV_TYPE_MAX = 61,
};

/* switch_out.state */
enum argus_task_state {
	ARGUS_STATE_RUNNABLE = 0,       /* preempted or yielded */
	ARGUS_STATE_BLOCKED = 1,        /* interruptible sleep (TASK_INTERRUPTIBLE) */
	ARGUS_STATE_BLOCKED_IO = 2,     /* uninterruptible sleep (TASK_UNINTERRUPTIBLE) */
	ARGUS_STATE_DEAD = 3,
	ARGUS_STATE_OTHER = 4,          /* stopped (job control), ...; traced too in older traces */
	ARGUS_STATE_TRACED = 5,         /* stopped by a tracer (__TASK_TRACED: ptrace stop, single step) */
};

/* switch_out.wait_reason: what the thread waits on, as known in the kernel
 * at switch time (derived from the syscall in progress). */
enum argus_wait_reason {
	ARGUS_WAIT_NONE = 0,
	ARGUS_WAIT_FUTEX = 1,     /* lock or condition; obj = futex uaddr */
	ARGUS_WAIT_POLL = 2,      /* epoll/poll/select: an event-loop wait */
	ARGUS_WAIT_READ = 3,      /* read/recv on obj = fd */
	ARGUS_WAIT_WRITE = 4,     /* write/send on obj = fd (buffer full) */
	ARGUS_WAIT_SLEEP = 5,     /* nanosleep / clock_nanosleep */
	ARGUS_WAIT_CHILD = 6,     /* wait4 / waitid */
	ARGUS_WAIT_ACCEPT = 7,    /* accept / connect */
	ARGUS_WAIT_YIELD = 8,     /* sched_yield */
	ARGUS_WAIT_IO = 9,        /* uninterruptible, no syscall known: block I/O, page fault */
	ARGUS_WAIT_OTHER_SYSCALL = 10,
	ARGUS_WAIT_PREEMPTED = 11,
};

/* wakeup.context: who is really waking (kernel culling, wait reasons). */
enum argus_wake_context {
	ARGUS_WAKE_TASK = 0,       /* an ordinary user task: a causal edge */
	ARGUS_WAKE_HARDIRQ = 1,
	ARGUS_WAKE_SOFTIRQ = 2,
	ARGUS_WAKE_KTHREAD = 3,    /* kworker, ksoftirqd, rcu, ... */
	ARGUS_WAKE_IDLE = 4,       /* woken from the idle task (e.g. timer on idle CPU) */
};

/* wakeup.irq_kind: in irq context, which one (wait reason of the wakee). */
enum argus_irq_kind {
	ARGUS_IRQ_NONE = 0,
	ARGUS_IRQ_TIMER = 1,       /* hrtimer / TIMER_SOFTIRQ / HRTIMER_SOFTIRQ */
	ARGUS_IRQ_NET = 2,         /* NET_RX / NET_TX softirq */
	ARGUS_IRQ_BLOCK = 3,       /* BLOCK softirq */
	ARGUS_IRQ_RCU = 4,
	ARGUS_IRQ_SCHED = 5,
	ARGUS_IRQ_TASKLET = 6,
	ARGUS_IRQ_DEVICE = 7,      /* a device hardirq */
	ARGUS_IRQ_OTHER = 8,
};

/* fd_info.kind: what kind of kernel object an fd refers to. */
enum argus_fd_kind {
	ARGUS_FD_OTHER = 0,
	ARGUS_FD_SOCKET = 1,        /* family/sock_type say which; local/peer identify the ends */
	ARGUS_FD_PIPE = 2,          /* pipe or FIFO: both ends share the inode */
	ARGUS_FD_EVENTFD = 3,       /* local = eventfd id (fdinfo "eventfd-id"), shared by every holder */
	ARGUS_FD_TTY = 4,           /* character device with a tty major (4, 5, 136-143) */
	ARGUS_FD_REGULAR = 5,       /* regular file */
	ARGUS_FD_CHARDEV = 6,       /* other character device */
	ARGUS_FD_ANON = 7,          /* other anonymous inode: timerfd, signalfd, epoll, ... */
};

/* timer.kind */
enum argus_timer_kind {
	ARGUS_TIMER_FIRE = 2,       /* hrtimer_expire_entry of a timer armed from a syscall */
};

/* mapping.prot bits (from /proc/PID/maps) */
enum argus_map_prot {
	ARGUS_MAP_READ = 1,
	ARGUS_MAP_WRITE = 2,
	ARGUS_MAP_EXEC = 4,
	ARGUS_MAP_TRUNCATED = 8,    /* path did not fit: only its tail is kept */
};

/* file_lock.kind: which lock family (they do not conflict with each other). */
enum argus_lock_kind {
	ARGUS_LOCK_POSIX = 1,       /* fcntl F_SETLK / F_SETLKW: owned by the process */
	ARGUS_LOCK_OFD = 2,         /* fcntl F_OFD_SETLK / F_OFD_SETLKW: owned by the open file */
	ARGUS_LOCK_FLOCK = 3,       /* flock(2): whole file, owned by the open file */
};

/* file_lock.type: normalized from F_RDLCK/F_WRLCK/F_UNLCK and LOCK_SH/LOCK_EX/LOCK_UN. */
enum argus_lock_type {
	ARGUS_LOCK_READ = 1,
	ARGUS_LOCK_WRITE = 2,
	ARGUS_LOCK_UNLOCK = 3,
};

/* futex_state.flags */
enum argus_futex_state_flags {
	ARGUS_FUTEX_PI = 1,         /* a PI op: the word's low 30 bits are the owner tid (kernel ABI) */
	ARGUS_FUTEX_OWNER_READ = 2, /* owner_field was readable (glibc mutex __owner guess) */
	ARGUS_FUTEX_THREAD_EXIT = 4, /* a join: owner_field = the (global) tid of the thread of the
				      * same process whose clear_child_tid is uaddr (the word is its
				      * tid; the kernel clears it and wakes the futex at its exit) */
};

#define ARGUS_SYSCALL_NONE 0xffffffffu
#define ARGUS_WAIT_SITE_MAX_FDS 8       /* fds kept per wait site (the hash covers only these) */
#define ARGUS_FUTEX_TID_MASK 0x3fffffffu /* include/uapi/linux/futex.h FUTEX_TID_MASK */
#define ARGUS_SWITCH_OUT_BASE_SIZE 40   /* switch_out without user_stack_id */
#define ARGUS_SYSCALL_EXIT_SHORT_SIZE 32 /* syscall_exit with a 32-bit ret (schema v2) */
#define ARGUS_SWITCH_BASE_SIZE 48       /* switch without user_stack_id (schema v3) */
#define ARGUS_SYSCALL_ENTER_SHORT_SIZE 40 /* syscall_enter with 32-bit obj, obj2 (schema v3) */
#define ARGUS_SYSCALL_SIZE 48             /* syscall: enter + exit of one call (schema v4) */
#define ARGUS_LOST_BASE_SIZE 32           /* lost without kind (then ARGUS_LOST_DROPPED) */
#define ARGUS_USER_STACK_MAX_FRAMES 28  /* 32 + 28 * 8 = ARGUS_EVENT_MAX_SIZE */
#define ARGUS_MAPPING_MAX_PATH 192      /* 64 + 192 = ARGUS_EVENT_MAX_SIZE, NUL included */

struct argus_event_header {
	__u64 ts_ns;
	__u32 pid;
	__u32 tid;
	__u16 type;
	__u16 size;
	__u16 cpu;
	__u16 flags;     /* 0 but in a SYSCALL_EXIT or SYSCALL record: ARGUS_HF_NET_IO_* */
};

/* header.flags of a SYSCALL_EXIT or SYSCALL record (since schema v6): the
 * call moved bytes on a TCP or UDP socket and continued its thread's chain
 * on that socket, so the tracer wrote no NET_IO / NET_IO_SHORT for it; the
 * value is the enum argus_net_dir of the NET_IO row it stands for, which
 * readers rebuild from the call's SYSCALL_ENTER (fd, inode: obj, obj2), its
 * exit (bytes: ret) and the previous NET_IO row of the same thread, socket
 * inode and direction (seq: that row's seq + bytes) (kext/linux/net_io.bpf.h,
 * tracer/netio.py).  The decoder puts it in the SYSCALL_EXIT row's pad. */
#define ARGUS_HF_NET_IO_MASK 3

struct argus_ev_switch_out {        /* 40 bytes, 48 with user_stack_id */
	struct argus_event_header h;
	__u8 state;                  /* enum argus_task_state */
	__u8 wait_reason;            /* enum argus_wait_reason */
	__u16 prio;
	__u32 syscall_nr;            /* in progress, or ARGUS_SYSCALL_NONE */
	__u64 wait_obj;              /* futex uaddr, fd, ... per wait_reason */
	/* Only in 48-byte records (size > ARGUS_SWITCH_OUT_BASE_SIZE): the
	 * blocked thread's user stack, frames in the USER_STACK record with this
	 * stack_id and pid.  Runnable switch-outs stay 40 bytes. */
	__u64 user_stack_id;
};

struct argus_ev_switch_in {         /* 32 bytes */
	struct argus_event_header h;
	__u32 prev_tid;
	__u32 prev_pid;
};

/* Since schema v3: the switch-out of prev and the switch-in of next of one
 * sched_switch, when both are recorded (neither is the idle task nor the
 * excluded daemon); otherwise the one side is a SWITCH_OUT or SWITCH_IN
 * record as before.  The header is prev's (pid, tid) and, like the
 * payload up to wait_obj, laid out as struct argus_ev_switch_out, so a
 * reader of the switch-out side needs no second layout.  Decoded into two
 * rows with the record's ts and cpu: the SWITCH_OUT of prev, then the
 * SWITCH_IN of next (peer = prev) -- exactly the rows of the two records
 * it replaces.  48 bytes instead of 40 + 32. */
struct argus_ev_switch {            /* 48 bytes, 56 with user_stack_id */
	struct argus_event_header h; /* prev: the task leaving the CPU */
	__u8 state;                  /* as switch_out */
	__u8 wait_reason;
	__u16 prio;
	__u32 syscall_nr;
	__u64 wait_obj;
	__u32 next_pid;              /* the task getting the CPU */
	__u32 next_tid;
	/* Only in 56-byte records (size > ARGUS_SWITCH_BASE_SIZE): as
	 * switch_out.user_stack_id. */
	__u64 user_stack_id;
};

struct argus_ev_wakeup {            /* 40 bytes; also WAKEUP_NEW */
	struct argus_event_header h; /* waker = current task */
	__u32 wakee_pid;
	__u32 wakee_tid;
	__u8 context;                /* enum argus_wake_context */
	__u8 irq_kind;               /* enum argus_irq_kind */
	__u16 target_cpu;
	__u32 irq_vec;               /* hardirq number or softirq vector */
};

struct argus_ev_syscall_enter {     /* 48 bytes */
	struct argus_event_header h;
	__u32 nr;
	__s32 aux;                   /* futex op, poll timeout ms, length (clipped) */
	__u64 obj;                   /* fd, futex uaddr, epfd, ... (what is waited on / talked to) */
	__u64 obj2;                  /* second identity: futex val2/uaddr2, dest fd, 0 */
};

/* Since schema v3, the form of SYSCALL_ENTER whose obj and obj2 fit in 32
 * bits (zero-extended when read), told apart by size ==
 * ARGUS_SYSCALL_ENTER_SHORT_SIZE: fds with the inode of a pipe or socket
 * (small numbers from get_next_ino), epoll and poll sizes; not futex
 * addresses nor a sign-extended negative pid. */
struct argus_ev_syscall_enter_short { /* 40 bytes */
	struct argus_event_header h;
	__u32 nr;
	__s32 aux;
	__u32 obj;
	__u32 obj2;
};

struct argus_ev_syscall_exit {      /* 40 bytes: a ret that does not fit in 32 bits */
	struct argus_event_header h;
	__u32 nr;
	__u32 reserved;
	__s64 ret;
};

/* Since schema v2, the form of SYSCALL_EXIT whose ret fits in 32 bits, told
 * apart by size == ARGUS_SYSCALL_EXIT_SHORT_SIZE.  It is nearly every exit:
 * a read or write returns at most MAX_RW_COUNT (INT_MAX & PAGE_MASK) bytes,
 * and the other traced syscalls return an int. */
struct argus_ev_syscall_exit_short { /* 32 bytes */
	struct argus_event_header h;
	__u32 nr;
	__s32 ret;
};

/* Since schema v4: the SYSCALL_ENTER and SYSCALL_EXIT of one call that did
 * not block, written at sys_exit by rewriting the call's 40-byte
 * SYSCALL_ENTER in place when it is still the last record staged on its CPU
 * (kext/linux/argus_trace.bpf.c, merge_syscall_exit), its ret fits in 32 bits
 * and the call took less than 2^32 ns.  The header is the enter's (ts, pid,
 * tid, cpu); the payload up to obj2 is laid out as struct
 * argus_ev_syscall_enter_short.  Decoded into two rows: the SYSCALL_ENTER
 * row (the header's ts), then the SYSCALL_EXIT row at ts + exit_delta_ns on
 * the same cpu with the same nr -- exactly the rows of the 40-byte
 * SYSCALL_ENTER and 32-byte SYSCALL_EXIT it replaces.  48 bytes instead of
 * 72.  A call that blocks keeps its separate records (the enter must be
 * readable before the call ends). */
struct argus_ev_syscall {           /* 48 bytes */
	struct argus_event_header h;
	__u32 nr;
	__s32 aux;
	__u32 obj;
	__u32 obj2;
	__s32 ret;
	__u32 exit_delta_ns;         /* exit ts - enter ts */
};

struct argus_ev_fork {              /* 48 bytes; header = parent */
	struct argus_event_header h;
	__u32 child_pid;
	__u32 child_tid;
	char comm[ARGUS_COMM_LEN];   /* child comm */
};

struct argus_ev_comm {              /* 40 bytes: EXEC, THREAD_NAME */
	struct argus_event_header h;
	char comm[ARGUS_COMM_LEN];
};

struct argus_ev_exit {              /* 32 bytes */
	struct argus_event_header h;
	__s32 exit_code;
	__u32 is_group_leader;
};

struct argus_ev_proc_snapshot {     /* 48 bytes */
	struct argus_event_header h;
	__u32 ppid;
	__u32 is_main_thread;
	char comm[ARGUS_COMM_LEN];
};

/* Where a process lives: its cgroup v2 id (the inode of the cgroup's
 * directory; 0 when unknown) and its network namespace inode (0 once the
 * task dropped its namespaces).  Header pid = tid = the process.  The
 * kernel side writes the 40-byte base (exec, fork of a process, cgroup
 * move: kext/linux/scope.bpf.h); argusd appends the cgroup's path as
 * /proc/PID/cgroup gives it ("/system.slice/x.service", NUL-terminated,
 * padded to 8) and writes one per process at start-up. */
#define ARGUS_PROC_NS_MAX_PATH 216
#define ARGUS_PROC_NS_BASE_SIZE 40      /* the kernel's records: no path */
struct argus_ev_proc_ns {           /* 40 + path bytes, at most 256 */
	struct argus_event_header h;
	__u64 cgroup_id;
	__u32 netns_ino;
	__u32 flags;                 /* 0 */
	char path[ARGUS_PROC_NS_MAX_PATH];   /* NUL-terminated; absent from the kernel's records */
};

struct argus_ev_data_flag {         /* 48 bytes: DATA_FLAG_WRITE / _READ */
	struct argus_event_header h;
	__u64 addr;
	__u64 value;
	__u64 pc;
};

/* lost.kind: what the records missing around this record are.  Kept apart
 * because only DROPPED is the tracer's loss; the kernel's holes happen with
 * or without it (docs/linux-tracer.md, "Lost records"). */
enum argus_lost_kind {
	ARGUS_LOST_DROPPED = 0,               /* records the producer dropped (buffer full, ...) */
	ARGUS_LOST_SWITCHES_UNREPORTED = 1,   /* sched_switches the kernel never reported */
};

struct argus_ev_lost {              /* 40 bytes; 32 (no kind: DROPPED) before kind */
	struct argus_event_header h;
	__u64 count;
	__u32 kind;                  /* enum argus_lost_kind */
	__u32 pad;
};

/* The recording tier from ts on (docs/linux-tracer.md, "Detail tiers"),
 * written by argusd at start-up and at each switch.  Under lean no syscall
 * program runs: a blocking wait's SYSCALL_ENTER is written at its switch-out
 * and a waker's at its wakeup, and there is no SYSCALL_EXIT. */
enum argus_detail_tier {
	ARGUS_DETAIL_FULL = 0,
	ARGUS_DETAIL_LEAN = 1,
};

enum argus_detail_mode {             /* what `argus start --detail` asked for */
	ARGUS_DETAIL_MODE_FULL = 0,
	ARGUS_DETAIL_MODE_LEAN = 1,
	ARGUS_DETAIL_MODE_AUTO = 2,  /* lean, full while a watched thread is out of its loop */
};

struct argus_ev_detail {            /* 40 bytes */
	struct argus_event_header h;
	__u8 tier;                   /* enum argus_detail_tier, from ts on */
	__u8 mode;                   /* enum argus_detail_mode */
	__u16 reserved;
	__u32 cause_tid;             /* auto: the watched thread out of its loop (0: none) */
	__u64 out_ns;                /* auto: how long it had been out when the switch was made */
};

/* Channel identity of an fd, written at a read/write/send/recv family
 * syscall the first time a (pid, fd, inode) is seen and again when the last
 * such record is more than a second old (so a wrapped buffer keeps it).
 * Two ends talk to each other when
 *   sockets:          a.local == b.peer && a.peer == b.local
 *   pipes, eventfds:  a.local == b.local (one shared object)
 * Inet endpoints are (IPv4 address, host order) << 16 | port; IPv6 ones fold
 * the address into 47 bits with bit 63 set (v4-mapped IPv6 uses the IPv4 form). */
struct argus_ev_fd_info {           /* 56 bytes */
	struct argus_event_header h;
	__s32 fd;
	__u8 kind;                   /* enum argus_fd_kind */
	__u8 family;                 /* AF_UNIX, AF_INET, AF_INET6, ... for sockets, else 0 */
	__u16 sock_type;             /* SOCK_STREAM, SOCK_DGRAM, ... for sockets, else 0 */
	__u64 inode;                 /* file->f_inode->i_ino: syscall_enter.obj2 of the same fd */
	__u64 local;                 /* this end: socket inode (unix), endpoint (inet), inode (pipe), eventfd id */
	__u64 peer;                  /* the other end: peer socket inode (unix), remote endpoint (inet); 0 when shared */
};

/* A user-visible hrtimer fired: one armed (hrtimer_start) by a task inside
 * a traced syscall (nanosleep, clock_nanosleep, futex/epoll/poll timeouts,
 * timerfd_settime).  The arm is carried here rather than in a record of its
 * own: most arms are cancelled when the wait ends first (an epoll loop arms
 * one per call), so only fired timers cost a record.  A periodic timer
 * (timerfd interval) fires repeatedly and names its last arm each time.
 * timer_id is the timer's kernel address scrambled with a per-daemon key
 * (bijective, so ids match, but no kernel address lands in the trace); the
 * hardirq WAKEUPs the expiry causes carry its low 32 bits in irq_vec. */
struct argus_ev_timer {             /* 64 bytes; header = the interrupted task at the fire */
	struct argus_event_header h;
	__u64 timer_id;
	__s64 expires_ns;            /* absolute, in the timer's clock (clockid) */
	__u64 arm_ts_ns;             /* when it was armed (CLOCK_MONOTONIC, like every ts_ns) */
	__u32 arm_pid;               /* the task that armed it */
	__u32 arm_tid;
	__u8 kind;                   /* enum argus_timer_kind */
	__u8 mode;                   /* enum hrtimer_mode bits at the arm: REL 1, PINNED 2, SOFT 4, HARD 8 */
	__u16 clockid;               /* CLOCK_MONOTONIC 1, CLOCK_REALTIME 0, CLOCK_BOOTTIME 7, ... */
	__u32 reserved;
};

/* User stack of a thread at a blocking switch-out, innermost frame first
 * (frames[0] is the user pc where it entered the kernel).  Variable length:
 * nframes = (size - 32) / 8.  Written only when this (pid, stack_id) was not
 * written in the last second; every blocking switch_out names its stack_id. */
struct argus_ev_user_stack {        /* 32 + 8 * nframes bytes, at most 256 */
	struct argus_event_header h;
	__u64 stack_id;              /* hash of the frames; join with switch_out on (pid, stack_id) */
	__u64 frames[ARGUS_USER_STACK_MAX_FRAMES];
};

/* One executable mapping from /proc/PID/maps, written by argusd (user space)
 * for processes whose user stacks appear, so frames can be symbolized after
 * the process is gone.  Variable length: the path is NUL-terminated and the
 * record padded to 8 bytes. */
struct argus_ev_mapping {           /* 64 + path bytes, at most 256 */
	struct argus_event_header h;
	__u64 start;
	__u64 end;
	__u64 pgoff;                 /* file offset of start */
	__u64 inode;
	__u32 prot;                  /* enum argus_map_prot bits */
	__u32 dev;                   /* major << 20 | minor, as the kernel's dev_t */
	char path[ARGUS_MAPPING_MAX_PATH];
};

/* The wait site of a thread blocking in poll / ppoll / select / pselect6 /
 * epoll_wait / epoll_pwait(2), written just before its blocking switch_out
 * (same thread, same ts) and only when (site_id, syscall_nr) differs from
 * the thread's last one or that one is older than a second: a thread
 * blocking again at the same site (an event loop) costs no record, and its
 * switch_out means "the last WAIT_SITE of this thread" when the syscall
 * numbers match.  timeout_ms is the one of the call that wrote the record;
 * every call's own timeout is its syscall_enter.aux.
 * fds: poll: the first pollfds with events (events = the requested poll
 * bits); select: the first set bits of the read (POLLIN 1) and write
 * (POLLOUT 4) sets, events ORed; epoll: the epoll fd alone, events 0.
 * site_id hashes nfds and the kept fds with their events, never the
 * timeout: a loop that computes its timeout from the next timer keeps its
 * site. */
struct argus_ev_wait_site {         /* 96 bytes */
	struct argus_event_header h;
	__u32 syscall_nr;
	__s32 timeout_ms;            /* -1 infinite, -2 unreadable (ARGUS_TIMEOUT_*) */
	__u32 nfds;                  /* poll: nfds; select: nfds (highest fd + 1); epoll: 1 */
	__u32 nkept;                 /* entries of fds/events that are valid, <= ARGUS_WAIT_SITE_MAX_FDS */
	__u64 site_id;               /* never 0 */
	__s32 fds[ARGUS_WAIT_SITE_MAX_FDS];
	__u16 events[ARGUS_WAIT_SITE_MAX_FDS];
};

/* A thread blocking in a futex wait (FUTEX_WAIT(_BITSET), FUTEX_LOCK_PI(2))
 * on a word that names an owner, written just before its blocking
 * switch_out: PI futexes carry the owner tid in the word (& FUTEX_TID_MASK,
 * the kernel's own ABI); a glibc mutex (struct __pthread_mutex_s on every
 * 64-bit ABI: int __lock; unsigned __count; int __owner) is locked with
 * word 1 or 2 and has its owner tid 8 bytes after the word.  Written only
 * for PI ops and for words of 1 or 2 whose owner field is another nonzero
 * tid, or (robust mutexes) whose word's low 30 bits equal that field; the
 * graph checks the tid is a live thread of the same process.  And for a
 * join (ARGUS_FUTEX_THREAD_EXIT): a wait on the clear_child_tid word of
 * another thread of the process (pthread_join), owner_field = that thread. */
struct argus_ev_futex_state {       /* 48 bytes */
	struct argus_event_header h;
	__u64 uaddr;
	__u32 word;                  /* *uaddr at the switch-out */
	__u32 owner_field;           /* *(uaddr + 8), 0 when unreadable; THREAD_EXIT: the joined tid */
	__u32 op;                    /* futex op & FUTEX_CMD_MASK */
	__u32 flags;                 /* enum argus_futex_state_flags */
};

/* net_io.dir */
enum argus_net_dir {
	ARGUS_NET_SEND = 1,         /* write, writev, send, sendto, sendmsg */
	ARGUS_NET_RECV = 2,         /* read, readv, recv, recvfrom, recvmsg */
};

/* The bytes one read/write/send/recv family call moved on a TCP or UDP
 * socket (AF_INET / AF_INET6), written at its exit when it returned > 0,
 * after its SYSCALL_EXIT (or SYSCALL) record: the same thread, ts = the
 * exit's.  Full tier only (kext/linux/net_io.bpf.h).  Made so that a send on
 * one host can be matched to the receive on another:
 *   TCP: a.seq .. a.seq + a.bytes overlaps b.seq .. b.seq + b.bytes, on
 *        mirrored 4-tuples (a.local == b.remote && a.remote == b.local);
 *        seq is the sequence number of the first byte moved: write_seq at
 *        the exit minus bytes for a send, copied_seq minus bytes for a
 *        receive (struct tcp_sock), so both ends number a byte alike.
 *   UDP: seq is 0; datagrams match by mirrored 4-tuple, size and order.
 * Addresses are 16 bytes in network order; an IPv4 one (an AF_INET socket,
 * or a dual-stack AF_INET6 socket talking IPv4) is v4-mapped,
 * ::ffff:a.b.c.d, so the two ends of one connection compare equal whatever
 * the family of each socket.  An unconnected UDP socket's remote is the
 * call's own address (sendto / sendmsg destination, recvfrom / recvmsg
 * source; zero when the call passed none) and its local address the one it
 * is bound to, :: or 0.0.0.0 (zero) when bound to any: a wildcard for the
 * matcher.  Not written: MSG_PEEK receives (the bytes are read again),
 * sendmmsg / recvmmsg (ret counts messages), splice / sendfile. */
struct argus_ev_net_io {            /* 88 bytes */
	struct argus_event_header h;
	__s32 fd;
	__u8 dir;                    /* enum argus_net_dir */
	__u8 proto;                  /* IPPROTO_TCP 6, IPPROTO_UDP 17 */
	__u8 family;                 /* the socket's: AF_INET 2, AF_INET6 10 */
	__u8 reserved;
	__u32 bytes;                 /* the call's return value */
	__u32 seq;                   /* TCP: sequence number of the first byte moved; UDP: 0 */
	__u16 local_port;            /* host order */
	__u16 remote_port;
	__u32 reserved2;
	__u64 inode;                 /* the socket's inode: fd_info.inode, syscall_enter.obj2 */
	__u8 local_addr[16];         /* network order, IPv4 v4-mapped */
	__u8 remote_addr[16];
};

/* Since schema v5: the NET_IO of a call on a socket that had a full NET_IO
 * record written by the same process less than net_io_refresh_ns (1 s)
 * before, with the same inode and 4-tuple (kext/linux/net_io.bpf.h): the
 * fields that change per call, the socket named by its inode.  Written
 * where a NET_IO would be.  The decoder makes it a NET_IO row (pad = 1:
 * no 4-tuple yet); readers copy the 4-tuple from the nearest full NET_IO
 * of the same (pid, inode), before it or, in a window that starts after
 * that one, after it (tracer/netio.py).  Never for an unconnected UDP
 * socket's sendto / recvfrom (the peer is the call's), an fd above 65535
 * or an inode above 32 bits (sockets number theirs with get_next_ino). */
struct argus_ev_net_io_short {      /* 40 bytes */
	struct argus_event_header h;
	__u32 inode;                 /* net_io.inode */
	__u32 bytes;
	__u32 seq;
	__u16 fd;
	__u8 dir;                    /* enum argus_net_dir */
	__u8 proto;                  /* IPPROTO_TCP 6, IPPROTO_UDP 17 */
};

/* A lock or unlock request on a file: fcntl F_SETLK / F_SETLKW /
 * F_OFD_SETLK / F_OFD_SETLKW (struct flock read at entry, start resolved
 * against SEEK_CUR / SEEK_END) and flock(2) (whole file), written at the
 * syscall entry right after its SYSCALL_ENTER; the result is that
 * syscall's SYSCALL_EXIT (0, or -EAGAIN / -EACCES / -EWOULDBLOCK for a try
 * that failed).  holder_pid: when the request conflicts with a lock already
 * held by another process, the first such holder as the kernel's lock list
 * of the inode says (0 when none or not readable). */
struct argus_ev_file_lock {         /* 64 bytes */
	struct argus_event_header h;
	__s32 fd;
	__u8 kind;                   /* enum argus_lock_kind */
	__u8 type;                   /* enum argus_lock_type */
	__u8 wait;                   /* 1: a blocking request (F_SETLKW, flock without LOCK_NB) */
	__u8 whence;                 /* l_whence as given (start is already absolute) */
	__s64 start;                 /* first byte */
	__s64 len;                   /* 0 = to the end of the file */
	__u64 inode;                 /* as fd_info.inode of the same fd */
	__u32 holder_pid;
	__u8 holder_type;            /* enum argus_lock_type of that holder's lock, 0 unknown */
	__u8 pad[3];
};

/* One timer-driven sample of the thread running on a CPU (perf_event
 * cpu-clock at a fixed frequency, kext/linux/argus_sample.bpf.c).  The
 * stacks are named by id: USER_STACK records (the same (pid, stack id)
 * space as switch_out's, written once per id and second) and KERNEL_STACK
 * records (struct argus_ev_user_stack layout, frames as offsets from the
 * kernel's _stext so no randomized kernel address lands in the trace).
 * Idle CPUs (tid 0) are never sampled. */
struct argus_ev_cpu_sample {        /* 48 bytes */
	struct argus_event_header h;
	__u64 user_stack_id;         /* 0: none (kernel thread, or the walk failed) */
	__u64 kernel_stack_id;       /* 0: the sample hit user mode */
	__u32 period_us;             /* the sampling period: each sample stands for this much CPU time */
	__u8 in_kernel;              /* 1: the sampled pc is a kernel one */
	__u8 pad[3];
};

/* A user-space tracepoint: a trampoline at a hooked function's entry (or
 * return) recorded it into its thread's ring (dylib-instrument/uring.h);
 * argusd copied it into the trace, with pid/tid set from the ring's owner
 * and ts_ns put on CLOCK_MONOTONIC.  cpu is 0xFFFF: a trampoline does not
 * ask the kernel.  The same records come from uprobes on the same hooks
 * (`argus start --uprobe-hooks`, kext/linux/argus_uprobe.bpf.c), with the
 * kernel's cpu and time. */
struct argus_ev_probe {             /* 48 bytes: CALLBACK_BEGIN .. PROBE_RETURN, GO_READY .. GO_PARK */
	struct argus_event_header h;
	__u64 obj;                   /* first argument (mutex, GMainContext, GSource...); return value for PROBE_RETURN */
	__u64 fn;                    /* address of the hooked function */
	__u32 probe_id;              /* index of the hook in the hook spec `argus run` used */
	__u32 reserved;
};

/* A goroutine that was parked when argusd attached the Go probes to its
 * process (ARGUS_EV_GO_SNAPSHOT): what a GO_PARK row would have said had the
 * probes been on when it parked, read once from the process's memory by
 * tracer/gosnap.py (offsets from the binary's DWARF).  ts_ns = when it was
 * read (its state is as of then), pid = the process, tid = the thread (M)
 * the goroutine is locked to (runtime.LockOSThread), else the pid;
 * wait_since_ns = g.waitsince when Go's GC set it, else the attach: it was
 * parked since then unless a GO_* row of it comes between. */
enum argus_go_snapshot_flags {
	ARGUS_GO_SNAP_LOCKED = 1,       /* tid is the M the goroutine is locked to */
	ARGUS_GO_SNAP_CHAN = 2,         /* wait_obj is a channel (its hchan) from g.waiting */
	ARGUS_GO_SNAP_FD = 4,           /* fd is the descriptor of its netpoll wait */
	ARGUS_GO_SNAP_TIMER = 8,        /* wait_obj is a timer's channel (hchan.timer set): a timed wait */
};
#define ARGUS_GO_SNAP_WAIT_LEN 32
struct argus_ev_go_snapshot {       /* 96 bytes */
	struct argus_event_header h;
	__u64 g;                     /* the goroutine's g (the obj of its GO_* rows) */
	__u64 wait_obj;              /* the channel it waits on (hchan), 0: not known */
	__s64 wait_since_ns;         /* g.waitsince (CLOCK_MONOTONIC, Go's nanotime), else the probes' attach */
	__u32 goid;                  /* g.goid (its low 32 bits) */
	__s32 fd;                    /* the fd of an IO wait, -1: not known */
	__u8 status;                 /* g.atomicstatus without _Gscan (4: _Gwaiting) */
	__u8 wait_reason;            /* g.waitreason, an index of runtime.waitReasonStrings */
	__u8 flags;                  /* enum argus_go_snapshot_flags */
	__u8 pad[5];
	char wait[ARGUS_GO_SNAP_WAIT_LEN];   /* waitReasonStrings[wait_reason], NUL-terminated */
};

/* obj of a hook whose spec says "obj": "process" (a process-wide object no
 * argument names, e.g. CPython's GIL): the same key in every thread of a
 * process, never a valid address. */
#define ARGUS_OBJ_PROCESS 1

#endif /* ARGUS_EVENT_H */
