/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Stack walks written as stack records (USER_STACK, KERNEL_STACK): the
 * frames of one stack are named by a 64-bit FNV-1a id over them and written
 * once per (pid, kind, id) and refresh period, so the records that name a
 * stack (SWITCH_OUT, CPU_SAMPLE) carry only its id.  Shared by the tracer
 * (user_stack.bpf.h) and the CPU sampler (argus_sample.bpf.c); each object
 * gets its own maps, sized by STACK_SEEN_ENTRIES, which the includer
 * defines.
 *
 * Included after record.bpf.h.
 */
#ifndef ARGUS_STACK_WALK_BPF_H
#define ARGUS_STACK_WALK_BPF_H

#ifndef STACK_SEEN_ENTRIES
#error "define STACK_SEEN_ENTRIES (entries of the stack_seen map) before including stack_walk.bpf.h"
#endif

enum stack_kind { STACK_USER = 0, STACK_KERNEL = 1 };

struct stack_key {
	__u32 pid;               /* 0 for kernel stacks: one address space */
	__u32 kind;              /* enum stack_kind */
	__u64 stack_id;
};

/* (pid, kind, stack id) -> when its stack record was last written. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, STACK_SEEN_ENTRIES);
	__type(key, struct stack_key);
	__type(value, __u64);
} stack_seen SEC(".maps");

/* A stack record is built here, then copied out at its real size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct argus_ev_user_stack);
} stack_scratch SEC(".maps");

/* Walks one stack of ctx (bpf_get_stack flags: BPF_F_USER_STACK or 0 for
 * the kernel stack) into the per-CPU scratch record, each frame less
 * frame_base: its id (never 0), with the record and its frame count in
 * *out and *out_n, or 0 when there is no stack. */
static __always_inline __u64 walk_stack(void *ctx, __u64 flags, __u64 frame_base,
					struct argus_ev_user_stack **out, __u32 *out_n)
{
	struct argus_ev_user_stack *rec;
	__u64 h = 0xcbf29ce484222325ull;
	__u32 zero = 0, n, i;
	long bytes;

	rec = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!rec)
		return 0;
	bytes = bpf_get_stack(ctx, rec->frames, sizeof(rec->frames), flags);
	if (bytes < (long)sizeof(__u64))
		return 0;
	n = (__u32)bytes / sizeof(__u64);
	if (n > ARGUS_USER_STACK_MAX_FRAMES)
		n = ARGUS_USER_STACK_MAX_FRAMES;
	/* FNV-1a over the frames: a 64-bit id per distinct stack. */
	for (i = 0; i < ARGUS_USER_STACK_MAX_FRAMES; i++) {
		if (i >= n)
			break;
		rec->frames[i] -= frame_base;
		h = (h ^ rec->frames[i]) * 0x100000001b3ull;
	}
	h |= 1;   /* 0 means "no stack" */
	*out = rec;
	*out_n = n;
	return h;
}

/* Whether the stack of key was not written in the last refresh_ns; if so,
 * notes it written at ts and fills rec (from walk_stack, n frames) as its
 * record of the given type, *size bytes. */
static __always_inline bool stack_record_due(struct argus_ev_user_stack *rec, __u32 n,
					     struct stack_key *key, __u64 refresh_ns, __u16 type,
					     __u32 pid, __u32 tid, __u64 ts, __u32 *size)
{
	__u64 *seen;

	seen = bpf_map_lookup_elem(&stack_seen, key);
	if (seen && ts - *seen <= refresh_ns)
		return false;
	bpf_map_update_elem(&stack_seen, key, &ts, BPF_ANY);
	rec->stack_id = key->stack_id;
	*size = 32 + n * 8;
	fill_header(&rec->h, type, *size, pid, tid, ts);
	return true;
}

#endif /* ARGUS_STACK_WALK_BPF_H */
