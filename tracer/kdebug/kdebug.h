/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdebug constants and layouts, our own definitions of facts read in xnu's
 * open source (xnu-11417.101.15: bsd/sys/kdebug.h, bsd/sys/kdebug_private.h,
 * bsd/sys/sysctl.h, bsd/kern/kdebug.c, osfmk/kern/sched_prim.c,
 * osfmk/kern/ast.h; the V3 file layout from xnu-4903.270.47, the last release
 * that declared it in a header).  sys/kdebug.h is not shipped in the macOS SDK,
 * so nothing here includes an Apple header: this file compiles on Linux (the
 * decoder and its tests) and on macOS (platform_macos.c) alike.
 *
 * Only what Argus reads is defined.  All layouts are little-endian, 64-bit
 * (LP64 kd_buf), which is what every Mac that runs current macOS records.
 */
#ifndef ARGUS_KDEBUG_H
#define ARGUS_KDEBUG_H

#include <stdint.h>

/* --- debugid: class 31-24, subclass 23-16, code 15-2, function 1-0 --- */
#define KD_CLASS(id)      (((uint32_t)(id) >> 24) & 0xffu)
#define KD_SUBCLASS(id)   (((uint32_t)(id) >> 16) & 0xffu)
#define KD_CODE(id)       (((uint32_t)(id) >> 2) & 0x3fffu)
#define KD_FUNC(id)       ((uint32_t)(id) & 0x3u)
#define KD_EVENTID(id)    ((uint32_t)(id) & ~0x3u)          /* without the function bits */
#define KD_CSC(id)        ((uint32_t)(id) & 0xffff0000u)    /* class + subclass */
#define KD_MAKE(cls, sub, code) \
	((((uint32_t)(cls) & 0xffu) << 24) | (((uint32_t)(sub) & 0xffu) << 16) | (((uint32_t)(code) & 0x3fffu) << 2))

#define KD_FUNC_NONE      0u
#define KD_FUNC_START     1u
#define KD_FUNC_END       2u

/* classes */
#define KD_CLASS_MACH     1u
#define KD_CLASS_BSD      4u
#define KD_CLASS_TRACE    7u
#define KD_CLASS_APPS     33u

/* DBG_MACH subclasses */
#define KD_MACH_EXCP_INTR 0x05u   /* interrupts: START/END around the handler */
#define KD_MACH_EXCP_DECI 0x09u   /* timers (DECR_*) */
#define KD_MACH_EXCP_SC   0x0cu   /* Mach traps: code = trap number */
#define KD_MACH_IPC       0x20u
#define KD_MACH_SCHED     0x40u
/* DBG_BSD subclasses */
#define KD_BSD_EXCP_SC    0x0cu   /* BSD syscalls: code = syscall number */
#define KD_BSD_PROC       0x01u
/* DBG_TRACE subclasses */
#define KD_TRACE_DATA     0u
#define KD_TRACE_STRING   1u
#define KD_TRACE_INFO     2u

/* DBG_MACH_SCHED codes (osfmk/kern/sched_prim.c emits them) */
#define KDE_MACH_SCHED              KD_MAKE(1, 0x40, 0x00)   /* 0x01400000 outgoing thread: reason, next tid, old pri, next pri */
#define KDE_MACH_STACK_HANDOFF      KD_MAKE(1, 0x40, 0x02)   /* 0x01400008 same arguments as MACH_SCHED */
#define KDE_MACH_MAKE_RUNNABLE      KD_MAKE(1, 0x40, 0x06)   /* 0x01400018 waker context: wakee tid, pri, wait_result, run count */
#define KDE_MACH_IDLE               KD_MAKE(1, 0x40, 0x09)   /* 0x01400024 START/END on the idling thread */
#define KDE_MACH_BLOCK              KD_MAKE(1, 0x40, 0x0f)   /* 0x0140003c thread_block_reason, only when a wait is asserted */
#define KDE_MACH_WAIT               KD_MAKE(1, 0x40, 0x10)   /* 0x01400040 assert_wait: permuted event */
#define KDE_MACH_DISPATCH           KD_MAKE(1, 0x40, 0x20)   /* 0x01400080 incoming thread */
#define KDE_MACH_SCHED_THREAD_SWITCH KD_MAKE(1, 0x40, 0x23)  /* 0x0140008c thread_switch (yield with hint) */

#define KDE_MACH_INTR               KD_MAKE(1, 0x05, 0)      /* 0x01050000 START: irq, pc, user, type; END */

/* DBG_MACH_EXCP_DECI: timer calls (osfmk/kern/timer_call.c) */
#define KDE_DECR_TIMER_CALLOUT      KD_MAKE(1, 0x09, 2)      /* 0x01090008 START/END: permuted call, func, param0, param1 */
#define KDE_DECR_TIMER_ENTER        KD_MAKE(1, 0x09, 7)      /* 0x0109001c START: permuted call, param1, deadline, flags */

/* DBG_TRACE (class 7): emitted by the kernel only */
#define KDE_TRACE_DATA_NEWTHREAD    KD_MAKE(7, 0, 1)   /* 0x07000004 new tid, pid, exec-copy flag, unique pid */
#define KDE_TRACE_DATA_EXEC         KD_MAKE(7, 0, 2)   /* 0x07000008 pid, fsid, fileid */
#define KDE_TRACE_DATA_THREAD_TERMINATE KD_MAKE(7, 0, 3)   /* 0x0700000c tid */
#define KDE_TRACE_DATA_THREAD_TERMINATE_PID KD_MAKE(7, 0, 4) /* 0x07000010 pid, unique pid */
#define KDE_TRACE_STRING_NEWTHREAD  KD_MAKE(7, 1, 1)   /* 0x07010004 process name in arg1..arg4 */
#define KDE_TRACE_STRING_EXEC       KD_MAKE(7, 1, 2)   /* 0x07010008 process name in arg1..arg4 */
#define KDE_TRACE_STRING_THREADNAME KD_MAKE(7, 1, 4)   /* 0x07010010 thread name, START (+END when it fits) */
#define KDE_TRACE_STRING_THREADNAME_PREV KD_MAKE(7, 1, 5) /* 0x07010014 name of a terminating thread */
#define KDE_TRACE_LOST_EVENTS       KD_MAKE(7, 2, 2)   /* 0x07020008 the kernel lost events here */
#define KDE_TRACE_RETROGRADE_EVENTS KD_MAKE(7, 2, 5)   /* 0x07020014 */
#define KDE_TRACE_PAST_EVENTS       KD_MAKE(7, 2, 6)   /* 0x07020018 */

/* Syscall debugids: class/subclass prefix | number << 2, START/END. */
#define KD_BSD_SC_PREFIX    0x040c0000u
#define KD_MACH_SC_PREFIX   0x010c0000u

/* DBG_INTR_TYPE_* (arg4 of the interrupt START event) */
#define KD_INTR_TYPE_UNKNOWN 0u
#define KD_INTR_TYPE_IPI     1u
#define KD_INTR_TYPE_TIMER   2u
#define KD_INTR_TYPE_OTHER   3u

/* ast_t bits that MACH_SCHED's reason carries (osfmk/kern/ast.h) */
#define KD_AST_PREEMPT  0x01u
#define KD_AST_QUANTUM  0x02u
#define KD_AST_URGENT   0x04u
#define KD_AST_HANDOFF  0x08u
#define KD_AST_YIELD    0x10u

/* mach_msg option bits (mach/message.h) */
#define KD_MACH_SEND_MSG 0x1u
#define KD_MACH_RCV_MSG  0x2u

/*
 * Argus's own events, emitted only by an xnu patched with kext/xnu/ (release
 * tracepoints, KDBG_RELEASE).  DBG_MACH subclass 0xfa is unused in
 * xnu-11417.101.15; codes 1 and 2.
 *
 *   ARGUS_WAIT    on the thread that is about to block (thread_block_reason
 *                 after a wait was asserted, next to the stock MACH_BLOCK):
 *                   arg1 permuted wait event (the value MACH_WAIT carries),
 *                   arg2 permuted waitq, arg3 1 = uninterruptible,
 *                   arg4 1 = a wait timer is armed
 *   ARGUS_WAKEUP  in the waker's context when the waiting thread is taken off
 *                 its waitq (thread_clear_waitq_state, used by both the
 *                 waitq wakeup and the clear_wait paths), before the stock
 *                 MACH_MAKE_RUNNABLE of the same wakee on the same CPU:
 *                   arg1 wakee tid, arg2 permuted wait event (matches
 *                   ARGUS_WAIT), arg3 flags (KD_ARGUS_WAKE_*),
 *                   arg4 permuted waitq
 */
#define KD_ARGUS_SUBCLASS       0xfau
#define KDE_ARGUS_WAIT          KD_MAKE(1, 0xfa, 1)   /* 0x01fa0004 */
#define KDE_ARGUS_WAKEUP        KD_MAKE(1, 0xfa, 2)   /* 0x01fa0008 */
#define KD_ARGUS_WAKE_INTERRUPT 0x1u   /* ml_at_interrupt_context() at the wakeup */
#define KD_ARGUS_WAKE_TIMER     0x2u   /* thread_timer_expire: the wait timed out */
#define KD_ARGUS_WAKE_IDLE      0x4u   /* the waker is the processor's idle thread */

/* --- records and files (bsd/sys/kdebug_private.h) --- */

struct kd_buf64 {                    /* 64 bytes: LP64 kd_buf */
	uint64_t timestamp;          /* mach absolute (or continuous) time */
	uint64_t arg1, arg2, arg3, arg4;
	uint64_t arg5;               /* always the emitting thread's id */
	uint32_t debugid;
	uint32_t cpuid;
	uint64_t unused;
};

struct kd_threadmap64 {              /* 32 bytes */
	uint64_t thread;             /* thread id */
	int32_t valid;               /* pid; 1 for kernel_task (command "kernel_task") and launchd */
	char command[20];
};

/* RAW_VERSION1 file header: version, thread count, time of day; 24 bytes with padding. */
struct kd_raw_header_v1 {
	int32_t version_no;
	int32_t thread_count;
	uint64_t tod_secs;
	uint32_t tod_usecs;
	uint32_t pad;
};

#define KD_RAW_VERSION0 0x55aa0000u
#define KD_RAW_VERSION1 0x55aa0101u
#define KD_RAW_VERSION2 0x55aa0200u   /* kperf / Instruments only */
#define KD_RAW_ARTRACE  0x55aa0300u   /* `ktrace artrace`: undocumented */
/* V1 events start at the next 4 KiB boundary after header + thread map: the
 * kernel pads with zeroed thread entries so that this holds on 16 KiB pages too. */
#define KD_V1_EVENT_ALIGN 4096u

/* V3: a sequence of chunks, each a 16-byte header and `length` payload bytes. */
struct kd_chunk_header_v3 {
	uint32_t tag;
	uint32_t sub_tag;
	uint64_t length;
};

/* Payload of the header chunk (tag KD_V3_HEADER); its length also spans the
 * CPU map sub-chunk that follows the 40 bytes below. */
struct kd_header_v3_payload {        /* 40 bytes (xnu's packed kd_header_v3 minus its chunk header) */
	uint32_t timebase_numer;
	uint32_t timebase_denom;
	uint64_t timestamp;
	uint64_t walltime_secs;
	uint32_t walltime_usecs;
	uint32_t timezone_minuteswest;
	uint32_t timezone_dst;
	uint32_t flags;              /* 1: 64-bit events */
};

#define KD_V3_HEADER     0x00001000u   /* RAW_VERSION3: the file's first chunk, its magic */
#define KD_V3_CONFIG     0x00001b00u
#define KD_V3_CPU_MAP    0x00001c00u
#define KD_V3_THREAD_MAP 0x00001d00u
#define KD_V3_RAW_EVENTS 0x00001e00u   /* payload: 8-byte future-events timestamp, then kd_bufs */
#define KD_V3_NULL       0x00002000u   /* padding */

/* --- the live interface: sysctl {CTL_KERN, KERN_KDEBUG, op, value} --- */
#define KD_CTL_KERN          1
#define KD_KERN_KDEBUG       24
#define KD_OP_ENABLE         3
#define KD_OP_SETBUF         4
#define KD_OP_GETBUF         5
#define KD_OP_SETUP          6
#define KD_OP_REMOVE         7
#define KD_OP_READTR         10
#define KD_OP_PIDTR          11
#define KD_OP_THRMAP         12
#define KD_OP_PIDEX          14
#define KD_OP_READCURTHRMAP  21
#define KD_OP_SET_TYPEFILTER 22
#define KD_OP_BUFWAIT        23

#define KD_TYPEFILTER_BYTES  8192u     /* one bit per class/subclass */
#define KD_FLAG_WRAPPED      0x0008u   /* kbufinfo_t.flags: events were overwritten */

struct kd_bufinfo {                  /* kbufinfo_t */
	int32_t nkdbufs;
	int32_t nolog;
	uint32_t flags;
	int32_t nkdthreads;
	int32_t bufid;
};

#ifdef __cplusplus
#define KD_STATIC_ASSERT static_assert
#else
#define KD_STATIC_ASSERT _Static_assert
#endif
KD_STATIC_ASSERT(sizeof(struct kd_buf64) == 64, "kd_buf is 64 bytes");
KD_STATIC_ASSERT(sizeof(struct kd_threadmap64) == 32, "kd_threadmap is 32 bytes");
KD_STATIC_ASSERT(sizeof(struct kd_raw_header_v1) == 24, "RAW_header is 24 bytes");
KD_STATIC_ASSERT(sizeof(struct kd_chunk_header_v3) == 16, "V3 chunk header is 16 bytes");
KD_STATIC_ASSERT(sizeof(struct kd_header_v3_payload) == 40, "V3 header payload is 40 bytes");

#endif /* ARGUS_KDEBUG_H */
