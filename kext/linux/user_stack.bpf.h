/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * User stacks at blocking switch-outs: the stack id a SWITCH_OUT names and,
 * once per (pid, stack id) and refresh period, the USER_STACK record with
 * its frames.
 *
 * Included by argus_trace.bpf.c after the record helpers.
 */
#ifndef ARGUS_USER_STACK_BPF_H
#define ARGUS_USER_STACK_BPF_H

/* A thread blocking again in the same syscall on the same object this soon
 * after a stack walk is taken to have the same stack: walking it costs
 * ~400 ns per switch, and a loop blocking every few microseconds (a
 * request loop, a pipe ping-pong) would pay it each time. */
#define STACK_REUSE_NS 1000000ull

struct stack_key {
	__u32 pid;
	__u32 pad;
	__u64 stack_id;
};

/* (pid, stack id) -> when its USER_STACK was last written. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_STACK_SEEN_ENTRIES);
	__type(key, struct stack_key);
	__type(value, __u64);
} stack_seen SEC(".maps");

/* A USER_STACK record is built here, then copied out at its real size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct argus_ev_user_stack);
} stack_scratch SEC(".maps");

/* The user stack of prev, which in sched_switch is still current: its
 * stack id, or 0.  The frames are written once per (pid, stack id) and
 * refresh period; a hang's wait names the same id as the waits before it. */
static __always_inline __u64 capture_user_stack(void *ctx, struct task_struct *prev,
						 struct syscall_state *sc, __u64 ts,
						 struct argus_ev_user_stack **out, __u32 *out_size)
{
	struct argus_ev_user_stack *rec;
	struct stack_key key = {};
	__u64 h = 0xcbf29ce484222325ull, *seen;
	__u32 zero = 0, n, i;
	long bytes;

	*out = NULL;
	if (sc && sc->stack_id && ts - sc->stack_ns < STACK_REUSE_NS && sc->stack_nr == sc->nr &&
	    sc->stack_obj == sc->obj)
		return sc->stack_id;
	rec = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!rec)
		return 0;
	bytes = bpf_get_stack(ctx, rec->frames, sizeof(rec->frames), BPF_F_USER_STACK);
	if (bytes < (long)sizeof(__u64))
		return 0;
	n = (__u32)bytes / sizeof(__u64);
	if (n > ARGUS_USER_STACK_MAX_FRAMES)
		n = ARGUS_USER_STACK_MAX_FRAMES;
	/* FNV-1a over the frames: a 64-bit id per distinct stack. */
	for (i = 0; i < ARGUS_USER_STACK_MAX_FRAMES; i++) {
		if (i >= n)
			break;
		h = (h ^ rec->frames[i]) * 0x100000001b3ull;
	}
	h |= 1;   /* 0 means "no stack" */
	if (sc) {
		sc->stack_id = h;
		sc->stack_ns = ts;
		sc->stack_nr = sc->nr;
		sc->stack_obj = sc->obj;
	}
	key.pid = prev->tgid;
	key.stack_id = h;
	seen = bpf_map_lookup_elem(&stack_seen, &key);
	if (!seen || ts - *seen > ARGUS_REFRESH_NS) {
		bpf_map_update_elem(&stack_seen, &key, &ts, BPF_ANY);
		rec->stack_id = h;
		*out_size = 32 + n * 8;
		fill_header(&rec->h, ARGUS_EV_USER_STACK, *out_size, prev->tgid, prev->pid, ts);
		*out = rec;
	}
	return h;
}

#endif /* ARGUS_USER_STACK_BPF_H */
