/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Argus wait / wakeup tracepoints for xnu (installed as
 * osfmk/kern/argus_trace.h by kext/xnu/apply.sh).
 *
 * Stock kdebug says that a thread blocked (MACH_BLOCK) and who made it
 * runnable (MACH_MAKE_RUNNABLE, in the waker's context), but not what it
 * waited on at wakeup time, nor whether the "waker" was really the thread
 * that an interrupt happened to land on.  These two release tracepoints add
 * exactly that, with the debugids of tracer/kdebug/kdebug.h:
 *
 *   ARGUS_WAIT    0x01fa0004  on the blocking thread, in thread_block_reason
 *                 when a wait is asserted: permuted wait event, permuted
 *                 waitq, uninterruptible, wait timer armed
 *   ARGUS_WAKEUP  0x01fa0008  in the waker's context, when a waiting thread
 *                 is taken off its waitq (thread_clear_waitq_state, the one
 *                 place both the wakeup and the clear_wait paths pass while
 *                 the wait event is still known): wakee thread id, permuted
 *                 wait event, flags (interrupt context, timer expiry, idle
 *                 thread), permuted waitq
 *
 * Both permute kernel pointers with VM_KERNEL_UNSLIDE_OR_PERM, as the stock
 * MACH_WAIT tracepoint does for the same event, so the values at wait and at
 * wakeup match each other and MACH_WAIT's.
 */
#ifndef _KERN_ARGUS_TRACE_H_
#define _KERN_ARGUS_TRACE_H_

#include <kern/kern_types.h>

#define ARGUS_XNU_DBG_SUBCLASS        0xfa
#define ARGUS_XNU_DBG_WAIT            1
#define ARGUS_XNU_DBG_WAKEUP          2

#define ARGUS_XNU_WAKE_INTERRUPT      0x1
#define ARGUS_XNU_WAKE_TIMER          0x2
#define ARGUS_XNU_WAKE_IDLE           0x4

/* thread_block_reason(), thread locked or not: reads only the current thread. */
void argus_trace_wait(thread_t self);

/* thread_clear_waitq_state(): thread locked, interrupts disabled. */
void argus_trace_wakeup(thread_t wakee);

/* thread_timer_expire(), before clear_wait_internal(): marks the wakeup that
 * follows on this CPU as a timeout.  Interrupts are disabled there. */
void argus_trace_timer_expire(thread_t wakee);

#endif /* _KERN_ARGUS_TRACE_H_ */
