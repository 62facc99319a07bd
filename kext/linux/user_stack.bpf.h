/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * User stacks at blocking switch-outs: the stack id a SWITCH_OUT names and,
 * once per (pid, stack id) and refresh period, the USER_STACK record with
 * its frames.
 *
 * Included by argus_trace.bpf.c after the record helpers; the walk itself
 * is stack_walk.bpf.h, shared with the CPU sampler.
 */
#ifndef ARGUS_USER_STACK_BPF_H
#define ARGUS_USER_STACK_BPF_H

/* A thread blocking again in the same syscall on the same object this soon
 * after a stack walk is taken to have the same stack: walking it costs
 * ~400 ns per switch, and a loop blocking every few microseconds (a
 * request loop, a pipe ping-pong) would pay it each time. */
#define STACK_REUSE_NS 1000000ull

#define STACK_SEEN_ENTRIES ARGUS_STACK_SEEN_ENTRIES
#include "stack_walk.bpf.h"

/* The user stack of prev, which in sched_switch is still current: its
 * stack id, or 0.  The frames are written once per (pid, stack id) and
 * refresh period; a hang's wait names the same id as the waits before it. */
static __always_inline __u64 capture_user_stack(void *ctx, struct task_struct *prev,
						 struct syscall_state *sc, __u64 ts,
						 struct argus_ev_user_stack **out, __u32 *out_size)
{
	struct argus_ev_user_stack *rec;
	struct stack_key key = {};
	__u32 n;
	__u64 h;

	*out = NULL;
	if (sc && sc->stack_id && ts - sc->stack_ns < STACK_REUSE_NS && sc->stack_nr == sc->nr &&
	    sc->stack_obj == sc->obj)
		return sc->stack_id;
	h = walk_stack(ctx, BPF_F_USER_STACK, 0, &rec, &n);
	if (!h)
		return 0;
	if (sc) {
		sc->stack_id = h;
		sc->stack_ns = ts;
		sc->stack_nr = sc->nr;
		sc->stack_obj = sc->obj;
	}
	key.pid = prev->tgid;
	key.kind = STACK_USER;
	key.stack_id = h;
	if (stack_record_due(rec, n, &key, ARGUS_REFRESH_NS, ARGUS_EV_USER_STACK,
			     prev->tgid, prev->pid, ts, out_size))
		*out = rec;
	return h;
}

#endif /* ARGUS_USER_STACK_BPF_H */
