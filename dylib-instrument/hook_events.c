/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the thunks call (built -mgeneral-regs-only, like recorder.c: vector
 * argument registers are live here).  Return hooks keep the caller's return
 * address on a per-thread shadow stack, keyed by the caller's stack pointer
 * after the call (arch/frames.h): a frame abandoned by longjmp or an
 * exception leaves entries with a lower key than the returning one, and
 * those are dropped on the next return.
 * A call deeper than the shadow stack simply gets no return record.
 */
#include "hook_events.h"
#include "probe_record.h"
#include "recorder.h"
#include "ret_deref.h"

#define SHADOW_DEPTH 256

struct shadow_entry {
	uint64_t ret;
	uint64_t caller_sp;
	uint64_t obj;   /* the return record's obj when the spec takes it at entry */
};

static inline uint64_t entry_obj(argus_enter_frame *f, uint8_t which)
{
	return which == ARGUS_HOOK_OBJ_PROCESS ? ARGUS_OBJ_PROCESS : FRAME_ARG(f, which);
}

static __thread struct {
	struct shadow_entry e[SHADOW_DEPTH];
	int depth;
} shadow __attribute__((tls_model("initial-exec")));

void argus_hook_on_enter(struct argus_hook *h, argus_enter_frame *f)
{
	if (h->spec.enter_type) {
		uint64_t obj = entry_obj(f, h->spec.obj_arg);
		if (h->spec.obj32)
			obj = (uint32_t)obj;
		argus_record(h->spec.enter_type, obj ? obj : h->spec.null_obj, (uint64_t)h->target, h->spec.probe_id);
	}
	if (h->return_thunk && shadow.depth < SHADOW_DEPTH) {
		/* claim the slot before filling it: a signal handler calling a
		 * hooked function in between then pushes above it, not over it */
		int i = shadow.depth++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		shadow.e[i].ret = FRAME_RET(f);
		shadow.e[i].caller_sp = ENTER_CALLER_SP(f);
		shadow.e[i].obj = h->spec.return_obj == ARGUS_HOOK_RETURN_PROCESS ? ARGUS_OBJ_PROCESS :
				  h->spec.return_obj ? FRAME_ARG(f, h->spec.return_obj - 1) : 0;
		FRAME_RET(f) = (uint64_t)h->return_thunk;
	}
}

uint64_t argus_hook_on_return(struct argus_hook *h, argus_return_frame *f)
{
	uint64_t caller_sp = RETURN_CALLER_SP(f);
	while (shadow.depth > 1 && shadow.e[shadow.depth - 1].caller_sp < caller_sp)
		shadow.depth--;
	FRAME_RET(f) = shadow.e[shadow.depth - 1].ret;
	uint64_t obj = h->spec.return_obj ? shadow.e[shadow.depth - 1].obj : FRAME_RETVAL(f);
	if (h->spec.obj32)
		obj = (uint32_t)obj;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* read before the slot is released */
	shadow.depth--;
	if (h->spec.ret_deref && !argus_ret_deref_apply(h->spec.ret_deref, obj, &obj))
		return FRAME_RET(f);   /* not a return the spec records (e.g. not an input event) */
	argus_record(h->spec.return_type, obj, (uint64_t)h->target, h->spec.probe_id);
	return FRAME_RET(f);
}
