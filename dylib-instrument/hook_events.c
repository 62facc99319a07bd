/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the thunks call (built -mgeneral-regs-only, like recorder.c: vector
 * argument registers are live here).  Return hooks keep the caller's return
 * address on a per-thread shadow stack, with the stack slot it came from:
 * a frame abandoned by longjmp or an exception leaves entries whose slot
 * lies below the returning one, and those are dropped on the next return.
 * A call deeper than the shadow stack simply gets no return record.
 */
#include "hook.h"
#include "recorder.h"
#include "arch/x86_64/x86_frames.h"

#define SHADOW_DEPTH 256

struct shadow_entry {
	uint64_t ret;
	uint64_t slot;   /* address the return address was read from */
};

static __thread struct {
	struct shadow_entry e[SHADOW_DEPTH];
	int depth;
} shadow __attribute__((tls_model("initial-exec")));

void argus_hook_on_enter(struct argus_hook *h, struct argus_x86_enter_frame *f)
{
	if (h->spec.enter_type)
		argus_record(h->spec.enter_type, f->rdi, (uint64_t)h->target, h->spec.probe_id);
	if (h->return_thunk && shadow.depth < SHADOW_DEPTH) {
		/* claim the slot before filling it: a signal handler calling a
		 * hooked function in between then pushes above it, not over it */
		int i = shadow.depth++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		shadow.e[i].ret = f->ret;
		shadow.e[i].slot = (uint64_t)&f->ret;
		f->ret = (uint64_t)h->return_thunk;
	}
}

uint64_t argus_hook_on_return(struct argus_hook *h, struct argus_x86_return_frame *f)
{
	/* the function's ret popped its slot: rsp at the thunk = slot + 8 */
	uint64_t slot = (uint64_t)(f + 1) - 8;
	while (shadow.depth > 1 && shadow.e[shadow.depth - 1].slot < slot)
		shadow.depth--;
	f->ret = shadow.e[shadow.depth - 1].ret;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* read before the slot is released */
	shadow.depth--;
	argus_record(h->spec.return_type, f->rax, (uint64_t)h->target, h->spec.probe_id);
	return f->ret;
}
