// SPDX-License-Identifier: Apache-2.0
/*
 * Argus wait / wakeup tracepoints for xnu: see argus_trace.h.  Installed as
 * osfmk/kern/argus_trace.c and listed in osfmk/conf/files by the patch.
 *
 * Release tracepoints (KDBG_RELEASE): compiled into release kernels, and,
 * like every kdebug event, nearly free while tracing is off or the
 * typefilter excludes DBG_MACH subclass 0xfa.
 */
#include <kern/argus_trace.h>
#include <kern/cpu_number.h>
#include <kern/misc_protos.h>
#include <kern/processor.h>
#include <kern/thread.h>
#include <mach/vm_param.h>
#include <machine/machine_routines.h>
#include <sys/kdebug.h>

#define ARGUS_XNU_DBG_CODE(code) MACHDBG_CODE(ARGUS_XNU_DBG_SUBCLASS, (code))

/*
 * The wakee whose wait timer fired on each CPU, set by
 * argus_trace_timer_expire and consumed by the argus_trace_wakeup that
 * clear_wait_internal causes right after, on the same CPU with interrupts
 * disabled throughout, so no lock is needed.
 */
#define ARGUS_MAX_CPUS 256
static thread_t argus_timer_wakee[ARGUS_MAX_CPUS];

void
argus_trace_wait(thread_t self)
{
	KDBG_RELEASE(ARGUS_XNU_DBG_CODE(ARGUS_XNU_DBG_WAIT),
	    VM_KERNEL_UNSLIDE_OR_PERM((void *)(uintptr_t)self->wait_event),
	    VM_KERNEL_UNSLIDE_OR_PERM(self->waitq.wq_q),
	    (self->state & TH_UNINT) ? 1 : 0,
	    self->wait_timer_armed ? 1 : 0);
}

void
argus_trace_wakeup(thread_t wakee)
{
	uintptr_t flags = 0;
	int cpu = cpu_number();

	if (ml_at_interrupt_context()) {
		flags |= ARGUS_XNU_WAKE_INTERRUPT;
	}
	if (current_thread() == current_processor()->idle_thread) {
		flags |= ARGUS_XNU_WAKE_IDLE;
	}
	if (cpu >= 0 && cpu < ARGUS_MAX_CPUS && argus_timer_wakee[cpu] == wakee) {
		argus_timer_wakee[cpu] = THREAD_NULL;
		flags |= ARGUS_XNU_WAKE_TIMER;
	}
	KDBG_RELEASE(ARGUS_XNU_DBG_CODE(ARGUS_XNU_DBG_WAKEUP),
	    (uintptr_t)thread_tid(wakee),
	    VM_KERNEL_UNSLIDE_OR_PERM((void *)(uintptr_t)wakee->wait_event),
	    flags,
	    VM_KERNEL_UNSLIDE_OR_PERM(wakee->waitq.wq_q));
}

void
argus_trace_timer_expire(thread_t wakee)
{
	int cpu = cpu_number();

	if (cpu >= 0 && cpu < ARGUS_MAX_CPUS) {
		argus_timer_wakee[cpu] = wakee;
	}
}
