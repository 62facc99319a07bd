/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What crosses the boundary between the BPF programs (argus_trace.bpf.c) and
 * their loader (tracer/daemon/platform/platform_linux.c) besides the records themselves, which
 * are defined once in tracer/ringbuf/argus_event.h.
 *
 * The syscall table: syscall numbers are per architecture (x86_64 read is 0,
 * arm64 read is 63), so the BPF side knows no numbers at all.  The loader
 * fills `syscall_class[nr]` in the programs' read-only data before load: how
 * to decode the arguments (layout) and which wait reason a thread blocked in
 * that syscall has.  layout == ARGUS_SCL_NONE means "not traced".
 */
#ifndef ARGUS_TRACE_H
#define ARGUS_TRACE_H

#include "../../tracer/ringbuf/argus_event.h"

/* Syscall numbers at or above this are never traced (x32 has bit 30 set,
 * and both x86_64 and arm64 stay far below). */
#define ARGUS_MAX_SYSCALLS 512

/* fentry and fexit programs in argus_trace.bpf.c, one pair per traced
 * syscall: at least as many as the loader's syscall table has entries. */
#define ARGUS_SYSCALL_SLOTS 64

/* Default BPF ring buffer size; the loader may change it before load. */
#define ARGUS_BPF_RINGBUF_DEFAULT (64u << 20)

/* Per-CPU control of the record staging (kext/linux/stage.bpf.h), the value
 * of the stage_ctls map; argusd reads `unseen` into the trace's unreported
 * switches (header.switches_unreported), never into its lost records. */
struct argus_stage_ctl {
	__u32 busy;              /* bit per level held by a running program */
	__u32 overflow;          /* programs running with no level (all taken) */
	/* The CPU's scheduling timeline, for the switches the kernel never
	 * reports (stage_note_switch). */
	__u32 last_in;           /* tid the last sched_switch seen here switched to, + 1; 0: none yet */
	__u32 pad;
	__u64 unseen;            /* sched_switches the kernel did not report on this CPU, ever */
	/* Records of this object lost on this CPU, ever: the drops map's count
	 * again, where a program reads it with the control block it already
	 * holds instead of a map lookup (NET_IO lineage, net_io.bpf.h). */
	__u64 drops;
};

/* syscall_enter.aux for a timeout: none given (wait forever) / not readable. */
#define ARGUS_TIMEOUT_INFINITE (-1)
#define ARGUS_TIMEOUT_UNKNOWN (-2)

/* An FD_INFO or USER_STACK record (and a socket's full NET_IO record: the
 * default of net_io_refresh_ns) is written again once the last one for the
 * same key is older than this, so a buffer that wrapped still holds it. */
#define ARGUS_REFRESH_NS 1000000000ull

/* LRU map sizes: (pid, fd, inode) seen, (pid, stack) seen, armed timers,
 * (pid, socket inode) with a recent full NET_IO record. */
#define ARGUS_FD_SEEN_ENTRIES 65536
#define ARGUS_STACK_SEEN_ENTRIES 65536
#define ARGUS_ARMED_TIMER_ENTRIES 16384
#define ARGUS_NET_IO_SEEN_ENTRIES 16384

/* How to decode a syscall's arguments into syscall_enter {aux, obj, obj2}.
 * aN is the N-th syscall argument. */
enum argus_syscall_layout {
	ARGUS_SCL_NONE = 0,          /* not traced */
	ARGUS_SCL_FD,                /* obj=a0 (fd), aux=a2 clipped (count, len, iovcnt, vlen, flags) */
	ARGUS_SCL_FD_ONLY,           /* obj=a0 (fd), aux=0: accept, accept4, fsync */
	ARGUS_SCL_FUTEX,             /* obj=uaddr, aux=op, obj2=uaddr2 for requeue/wake_op else val */
	ARGUS_SCL_FUTEX_WAITV,       /* obj=waiters[0].uaddr, aux=nr_futexes, obj2=waiters */
	ARGUS_SCL_EPOLL,             /* obj=epfd, aux=timeout ms (a3 int), obj2=maxevents */
	ARGUS_SCL_EPOLL_TS,          /* epoll_pwait2: as EPOLL, timeout from a timespec */
	ARGUS_SCL_POLL,              /* obj=fds[0].fd, aux=timeout ms (a2 int), obj2=nfds */
	ARGUS_SCL_POLL_TS,           /* ppoll: as POLL, timeout from a timespec */
	ARGUS_SCL_SELECT,            /* obj=nfds, aux=timeout ms from a timeval (a4) */
	ARGUS_SCL_SELECT_TS,         /* pselect6: timeout from a timespec (a4) */
	ARGUS_SCL_NANOSLEEP,         /* aux=duration ms (a0 timespec) */
	ARGUS_SCL_CLOCK_NANOSLEEP,   /* obj=clockid, obj2=flags, aux=ms until the wakeup (absolute monotonic/boottime deadlines converted) */
	ARGUS_SCL_WAIT4,             /* obj=pid (sign-extended), aux=options */
	ARGUS_SCL_WAITID,            /* obj=id, obj2=idtype, aux=options */
	ARGUS_SCL_NOARGS,            /* sched_yield, pause, rt_sigsuspend, rt_sigtimedwait */
	ARGUS_SCL_IO_URING,          /* obj=fd, aux=min_complete, obj2=to_submit */
	ARGUS_SCL_TIMERFD,           /* obj=fd, aux=flags, obj2=it_value in ns */
	ARGUS_SCL_SPLICE,            /* obj=fd_in, obj2=fd_out, aux=len */
	ARGUS_SCL_FD_CHAN,           /* as FD, obj2=inode of the fd; FD_INFO on first use (read/write/send/recv family) */
	ARGUS_SCL_FCNTL,             /* only the lock-setting cmds are traced: obj=fd, aux=cmd, obj2=inode; FILE_LOCK */
	ARGUS_SCL_FLOCK,             /* obj=fd, aux=operation, obj2=inode; FILE_LOCK */
	ARGUS_SCL_MAX,
};

/* Where a call that moves bytes on a socket names its peer address
 * (NET_IO records, kext/linux/net_io.bpf.h); 0: the call writes none. */
enum argus_net_io_args {
	ARGUS_NIO_NONE = 0,
	ARGUS_NIO_FD = 1,            /* read, readv, write, writev: the socket's own ends only */
	ARGUS_NIO_SOCKADDR = 2,      /* sendto, recvfrom: struct sockaddr * in a4, flags in a3 */
	ARGUS_NIO_MSGHDR = 3,        /* sendmsg, recvmsg: struct msghdr * in a1 (msg_name), flags in a2 */
};

struct argus_syscall_class {
	__u8 layout;                 /* enum argus_syscall_layout */
	__u8 wait_reason;            /* enum argus_wait_reason while blocked in it */
	__u8 net_io;                 /* enum argus_net_io_args: ret counts bytes moved on fd a0 */
};

#endif /* ARGUS_TRACE_H */
