// SPDX-License-Identifier: Apache-2.0
/*
 * The hook spec (the JSON files of dylib-instrument/hooks/) through uprobes, for
 * processes that did not start under `argus run`: one uprobe program at the
 * entry of every hooked function and one uretprobe program at the return of
 * those that record it, system-wide (the loader attaches each hook to its
 * library file, every process mapping it included, with no restart).
 *
 * Each link carries its hook as the attach cookie (probe id, record type:
 * argus_uprobe.h), so the two programs serve the whole spec.  A record is a
 * struct argus_ev_probe as the trampolines write it: obj = first argument
 * (argument obj_arg, or the process key; return value or the argument
 * return_obj names for the return record), fn = the function's address in the
 * process (the instruction pointer at entry), probe_id = index in the spec;
 * but pid/tid/cpu/ts come from the kernel, as for every other BPF record.
 *
 * A hook with a ret_deref (probe id in the derefs map) records its return
 * only when the record the returned pointer points to matches, with obj
 * assembled from that record (ret_deref.h; read with bpf_probe_read_user:
 * an unreadable pointer is no match).
 *
 * A uprobe costs a trap per call (bench/trampoline_cost.py: ~1.7 us), which
 * is why `argus start` turns this on only for the spec files it is given.
 * The daemon itself is never recorded, nor a thread outside the recording
 * scope (--cgroup / --netns: kext/linux/scope.bpf.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "argus_uprobe.h"
#include "scope.bpf.h"

const volatile __u32 targ_exclude_tgid = 0;   /* the daemon */

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, ARGUS_UPROBE_RINGBUF_BYTES);
} probes SEC(".maps");

/* (tid << 32 | probe id) -> entry address.  One level per hook: a nested
 * call of the same function overwrites it with the same address. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_UPROBE_INFLIGHT_ENTRIES);
	__type(key, __u64);
	__type(value, struct argus_uprobe_inflight);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ARGUS_UPROBE_DEREF_ENTRIES);
	__type(key, __u32);
	__type(value, struct argus_ret_deref);
} derefs SEC(".maps");

#include "record.bpf.h"

static __always_inline int write_probe(void *ctx, __u16 type, __u32 probe_id, __u64 obj, __u64 fn)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct argus_ev_probe e = {};

	if ((__u32)(id >> 32) == targ_exclude_tgid || !type)
		return 0;
	if (scope_on && outside(bpf_get_current_task_btf()))   /* the call only when scoped */
		return 0;
	if (ARGUS_UPROBE_COOKIE_OBJ32(bpf_get_attach_cookie(ctx)))
		obj = (__u32)obj;
	e.obj = obj;
	e.fn = fn;
	e.probe_id = probe_id;
	fill_header(&e.h, type, sizeof(e), id >> 32, (__u32)id, bpf_ktime_get_ns());
	if (bpf_ringbuf_output(&probes, &e, sizeof(e), BPF_RB_NO_WAKEUP))   /* drained every loop turn */
		count_drops(1);
	return 0;
}

/* The hook's obj: argument n (the hook spec's obj_arg) of the call.  Each
 * register is read at its fixed context offset first: a switch over ctx
 * fields can compile to a variable-offset context read, which the verifier
 * refuses. */
static __always_inline __u64 call_arg(struct pt_regs *ctx, __u32 n)
{
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx), a2 = PT_REGS_PARM3(ctx);
	__u64 a3 = PT_REGS_PARM4(ctx), a4 = PT_REGS_PARM5(ctx);

	barrier_var(a0);
	barrier_var(a1);
	barrier_var(a2);
	barrier_var(a3);
	barrier_var(a4);
	if (n == ARGUS_UPROBE_OBJ_PROCESS)
		return ARGUS_OBJ_PROCESS;
	return n == 1 ? a1 : n == 2 ? a2 : n == 3 ? a3 : n == 4 ? a4 : a0;
}

SEC("uprobe")
int BPF_KPROBE(probe_entry)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), fn = PT_REGS_IP(ctx);
	__u64 key = (bpf_get_current_pid_tgid() << 32) | ARGUS_UPROBE_COOKIE_ID(cookie);
	__u32 ret_obj = ARGUS_UPROBE_COOKIE_RETURN_OBJ(cookie);
	struct argus_uprobe_inflight in = { .fn = fn };

	if (ARGUS_UPROBE_COOKIE_HAS_RETURN(cookie)) {
		if (ret_obj == ARGUS_UPROBE_RETURN_PROCESS)
			in.obj = ARGUS_OBJ_PROCESS;
		else if (ret_obj)
			in.obj = call_arg(ctx, ret_obj - 1);
		bpf_map_update_elem(&inflight, &key, &in, BPF_ANY);
	}
	return write_probe(ctx, ARGUS_UPROBE_COOKIE_TYPE(cookie), ARGUS_UPROBE_COOKIE_ID(cookie),
			   call_arg(ctx, ARGUS_UPROBE_COOKIE_OBJ_ARG(cookie)), fn);
}

/* The size-byte little-endian value at ptr + off (0 when unreadable; *ok
 * cleared).  size is 1..8 (the loader checked it). */
static __always_inline __u64 read_value(__u64 ptr, __u16 off, __u8 size, int *ok)
{
	__u64 v = 0;
	__u32 n = size;

	if (n < 1 || n > 8 || bpf_probe_read_user(&v, n, (const void *)(ptr + off)))
		*ok = 0;
	return v;
}

/* ret_deref.h's apply: 1 and *obj when an alternative matches. */
static __always_inline int deref_apply(const struct argus_ret_deref *d, __u64 ptr, __u64 *obj)
{
	if (!ptr)
		return 0;
	for (int i = 0; i < ARGUS_DEREF_ALTS; i++) {
		const struct argus_deref_alt *a = &d->alt[i];
		int ok = 1, matched = 1;

		if (i >= d->nalts)
			break;
		for (int k = 0; k < ARGUS_DEREF_CONDS && matched; k++) {
			const struct argus_deref_cond *c = &a->cond[k];
			__u64 v;
			int hit = 0;

			if (k >= a->nconds)
				break;
			v = read_value(ptr, c->offset, c->size, &ok) & c->mask;
			for (int j = 0; j < ARGUS_DEREF_VALUES; j++)
				if (j < c->nvalues && c->values[j] == v)
					hit = 1;
			matched = ok && hit;
		}
		if (!matched)
			continue;
		__u64 out = 0;
		for (int k = 0; k < ARGUS_DEREF_COPIES; k++) {
			const struct argus_deref_copy *c = &a->copy[k];

			if (k >= a->ncopies)
				break;
			out |= read_value(ptr, c->from, c->size, &ok) << ((c->to & 7) * 8);
		}
		if (!ok)
			return 0;
		*obj = out;
		return 1;
	}
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(probe_return)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), fn = 0, obj = PT_REGS_RC(ctx);
	__u64 key = (bpf_get_current_pid_tgid() << 32) | ARGUS_UPROBE_COOKIE_ID(cookie);
	__u32 probe_id = ARGUS_UPROBE_COOKIE_ID(cookie);
	const struct argus_ret_deref *d = bpf_map_lookup_elem(&derefs, &probe_id);
	struct argus_uprobe_inflight *stashed;

	if (d && !deref_apply(d, obj, &obj))
		return 0;     /* not a return the spec records (e.g. not an input event) */

	/* Left in place (the LRU map ages it out): the outer call of a nested
	 * pair returns later and needs the same address. */
	stashed = bpf_map_lookup_elem(&inflight, &key);
	if (stashed) {
		fn = stashed->fn;
		if (ARGUS_UPROBE_COOKIE_RETURN_OBJ(cookie))
			obj = stashed->obj;
	}
	return write_probe(ctx, ARGUS_UPROBE_COOKIE_TYPE(cookie), probe_id, obj, fn);
}

/* Go's scheduler (GO_READY / GO_EXECUTE / GO_PARK): a uprobe at the entry
 * of runtime.ready, runtime.execute and runtime.park_m (and goexit0, also a
 * GO_PARK: the goroutine leaves its thread) of a Go executable,
 * attached when the daemon sees it exec (argus_uprobe.c).  Go's ABIInternal
 * on amd64 passes the first integer argument in RAX (here the goroutine's
 * g) and keeps the running g in R14; the cookie is the record type.  Never
 * a uretprobe on Go code: the runtime moves stacks, and a return address
 * the kernel replaced would be copied with them. */
/* Execs, for the loader to look for Go executables to probe (pids only: it
 * reads /proc/PID/exe).  Attached only when Go probes are on. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} execs SEC(".maps");

SEC("tp_btf/sched_process_exec")
int BPF_PROG(go_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (pid != targ_exclude_tgid && !(scope_on && outside(p)) &&
	    bpf_ringbuf_output(&execs, &pid, sizeof(pid), 0))
		count_drops(1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(go_probe)
{
#if defined(__TARGET_ARCH_x86)
	__u64 cookie = bpf_get_attach_cookie(ctx);

	return write_probe(ctx, ARGUS_UPROBE_COOKIE_TYPE(cookie), 0, ctx->ax, ctx->r14);
#else
	return 0;   /* Go's register ABI differs elsewhere; the loader attaches on x86_64 only */
#endif
}
