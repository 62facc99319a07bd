/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Timers armed from a syscall (sleeps, futex/poll/epoll timeouts, timerfd):
 * hrtimer_start inside a traced syscall remembers the arm, hrtimer_expire_entry
 * of a remembered timer writes TIMER and tags the CPU's hardirq state so
 * the wakeups it causes name it, hrtimer_setup forgets a reused address.
 *
 * Included by argus_trace.bpf.c after irq_context.bpf.h (handle_hrtimer).
 */
#ifndef ARGUS_TIMERS_BPF_H
#define ARGUS_TIMERS_BPF_H

/* Timers armed from a syscall (kernel address -> its id): only their
 * expiries are recorded, never the tick or other kernel-internal timers.
 * hrtimer_setup removes an address, so a sleeper's stack slot reused by
 * another timer is not mistaken for the old one. */
struct armed_timer {
	__u64 id;
	__u64 ts;
	__u32 pid;
	__u32 tid;
	__u8 mode;
	__u8 pad[7];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_ARMED_TIMER_ENTRIES);
	__type(key, __u64);
	__type(value, struct armed_timer);
} armed_timers SEC(".maps");

static __always_inline void emit_timer_fire(struct stage_hold *h, struct hrtimer *timer, const struct armed_timer *arm)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct argus_ev_timer *e;

	e = reserve(h, sizeof(*e));
	if (!e)
		return;
	e->timer_id = arm->id;
	e->expires_ns = BPF_CORE_READ(timer, node.expires);
	e->arm_ts_ns = arm->ts;
	e->arm_pid = arm->pid;
	e->arm_tid = arm->tid;
	e->kind = ARGUS_TIMER_FIRE;
	e->mode = arm->mode;
	e->clockid = BPF_CORE_READ(timer, base, clockid);
	e->reserved = 0;
	fill_header(&e->h, ARGUS_EV_TIMER, sizeof(*e), pid_tgid >> 32, (__u32)pid_tgid, bpf_ktime_get_ns());
	submit(h, e);
}

/* Only timers a task arms from inside a traced syscall are user-visible
 * (sleeps, futex/poll/epoll timeouts, timerfd): the scheduler tick and other
 * kernel timers are armed from idle, kthreads or interrupts and fire
 * thousands of times a second. */
static __always_inline int handle_hrtimer_start(struct hrtimer *timer, __u8 mode)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct armed_timer arm = {};
	struct syscall_state *sc;
	struct irq_state *st;
	__u64 addr;

	if (!cur->pid || (cur->flags & PF_KTHREAD) || untraced(cur))
		return 0;
	st = cpu_irq_state();
	if (!st || in_hardirq(st) || st->softirq_active)
		return 0;
	if (argus_lean) {
		struct pt_regs *regs;

		if (saved_syscall_nr(cur, &regs) < 0)
			return 0;
	} else {
		sc = bpf_task_storage_get(&in_syscall, cur, NULL, 0);
		if (!sc_live(sc))
			return 0;
	}
	addr = ptr_bits(timer);
	arm.id = kptr_id(addr);
	arm.ts = bpf_ktime_get_ns();
	arm.pid = cur->tgid;
	arm.tid = cur->pid;
	arm.mode = mode;
	bpf_map_update_elem(&armed_timers, &addr, &arm, BPF_ANY);
	return 0;
}

static __always_inline int handle_hrtimer_expire(struct stage_hold *h, struct hrtimer *timer)
{
	__u64 addr = ptr_bits(timer);
	struct armed_timer *arm;

	arm = bpf_map_lookup_elem(&armed_timers, &addr);
	if (!arm)
		return handle_hrtimer(true, 0);
	emit_timer_fire(h, timer, arm);
	return handle_hrtimer(true, (__u32)arm->id);
}

static __always_inline int handle_hrtimer_setup(struct hrtimer *timer)
{
	__u64 addr = ptr_bits(timer);

	/* Deleting from an LRU map costs more than looking: most timers set up
	 * were never armed from a syscall. */
	if (bpf_map_lookup_elem(&armed_timers, &addr))
		bpf_map_delete_elem(&armed_timers, &addr);
	return 0;
}

#endif /* ARGUS_TIMERS_BPF_H */
