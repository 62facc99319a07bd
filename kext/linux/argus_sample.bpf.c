// SPDX-License-Identifier: Apache-2.0
/*
 * CPU sampler: a perf_event program on a cpu-clock software event per CPU
 * (the loader opens them at a fixed frequency, 99 Hz by default), writing
 * one CPU_SAMPLE per sample of a thread on CPU, with its user stack (frame
 * pointer walk by bpf_get_stack) and, when the sample hit kernel mode, its
 * kernel stack.  Stacks are named by a 64-bit FNV-1a id over the frames,
 * the same id the tracer gives a user stack at a blocking switch_out, and
 * their frames are written once per (pid, id) and second (LRU map), so a
 * thread spinning in one loop costs a 48-byte record per sample.
 *
 * Kernel frames are written as offsets from _stext (const volatile
 * kernel_base, read by the loader from /proc/kallsyms): the trace carries no
 * randomized kernel address; the symbolizer adds the base of the system
 * that reads it back.
 *
 * Idle (tid 0) and the daemon itself are never sampled, nor a thread
 * outside the recording scope (--cgroup / --netns: kext/linux/scope.bpf.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "argus_sample.h"
#include "scope.bpf.h"

const volatile __u32 targ_exclude_tgid = 0;   /* the daemon */
const volatile __u32 period_us = 0;           /* 1e6 / frequency, stamped on every sample */
const volatile __u64 kernel_base = 0;         /* _stext; 0 = no kernel stacks */

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, ARGUS_SAMPLE_RINGBUF_BYTES);
} samples SEC(".maps");

#include "record.bpf.h"

#define STACK_SEEN_ENTRIES ARGUS_SAMPLE_STACK_SEEN_ENTRIES
#include "stack_walk.bpf.h"

/* Walks one stack of the sampled context, writes its frames when this
 * (pid, kind, id) was not written in the last refresh period; its id, or 0. */
static __always_inline __u64 sample_stack(struct bpf_perf_event_data *ctx, __u32 kind, __u32 pid,
					  __u32 tid, __u64 ts)
{
	struct argus_ev_user_stack *rec;
	struct stack_key key = {};
	__u32 n, size = 0;
	__u64 h;

	h = walk_stack(ctx, kind == STACK_USER ? BPF_F_USER_STACK : 0,
		       kind == STACK_KERNEL ? kernel_base : 0, &rec, &n);
	if (!h)
		return 0;
	key.pid = kind == STACK_USER ? pid : 0;
	key.kind = kind;
	key.stack_id = h;
	if (stack_record_due(rec, n, &key, ARGUS_SAMPLE_REFRESH_NS,
			     kind == STACK_USER ? ARGUS_EV_USER_STACK : ARGUS_EV_KERNEL_STACK,
			     pid, tid, ts, &size) &&
	    size >= 40 && size <= sizeof(*rec) &&
	    bpf_ringbuf_output(&samples, rec, size, BPF_RB_NO_WAKEUP))
		count_drops(1);
	return h;
}

SEC("perf_event")
int sample_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ts = bpf_ktime_get_ns();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct argus_ev_cpu_sample e = {};
	/* Kernel addresses have the top bit set (x86_64, arm64). */
	bool in_kernel = (PT_REGS_IP(&ctx->regs) >> 63) != 0;

	if (tid == 0 || pid == targ_exclude_tgid)
		return 0;
	/* scope_on first: unscoped, the helper call goes with the dead branch */
	if (scope_on && outside(bpf_get_current_task_btf()))
		return 0;
	e.user_stack_id = sample_stack(ctx, STACK_USER, pid, tid, ts);
	if (in_kernel && kernel_base)
		e.kernel_stack_id = sample_stack(ctx, STACK_KERNEL, pid, tid, ts);
	e.period_us = period_us;
	e.in_kernel = in_kernel;
	fill_header(&e.h, ARGUS_EV_CPU_SAMPLE, sizeof(e), pid, tid, ts);
	if (bpf_ringbuf_output(&samples, &e, sizeof(e), BPF_RB_NO_WAKEUP))
		count_drops(1);
	return 0;
}
