/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Interrupt context at a wakeup: whether the waker is a hardirq (device,
 * x86 system vector, hrtimer callback), a softirq or a task, tracked per CPU
 * by the entry/exit programs (handle_irq_*, handle_vector, handle_softirq,
 * handle_hrtimer) and read by sched_waking (wake_context).  A wakeup from
 * interrupt context is not a causal edge from the task it interrupted.
 *
 * Included by argus_trace.bpf.c after the record helpers.
 */
#ifndef ARGUS_IRQ_CONTEXT_BPF_H
#define ARGUS_IRQ_CONTEXT_BPF_H

/* Where the current CPU is in interrupt handling.  Tracepoints are the only
 * portable source: preempt_count is a per-CPU variable that BPF can only
 * address through kallsyms, and kernels built with CONFIG_KALLSYMS_ALL=n
 * (minimal VM kernels, this project's test machines) refuse such programs.
 *
 * Flags, not nesting counters: hardirq handlers run with interrupts off, so
 * one of each kind is active at most, and a flag left set by an entry whose
 * exit was missed heals at the next exit instead of staying wrong forever.
 * Exits are missed for real: BPF skips a program that fires while the same
 * program is running on that CPU, so a hard hrtimer expiring while
 * hrtimer_expire_exit runs for a soft one has its exit skipped.  Hence every
 * hardirq exit also ends any hrtimer callback, which cannot outlive it. */
struct irq_state {
	__u32 hardirq_vec;       /* irq number of the running device handler */
	__u32 softirq_vec;
	__u8 device_active;      /* irq_handler_entry/exit */
	__u8 hrtimer_active;     /* an hrtimer callback running in hardirq */
	__u8 vector_active;      /* x86 system vectors: local timer, irq_work, IPIs */
	__u8 vector_kind;        /* enum argus_irq_kind of the running vector */
	__u8 softirq_active;
	__u8 pad[3];
	__u32 timer_tag;         /* low 32 bits of the running user timer's id, 0 if none */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_state);
} irq_states SEC(".maps");

static __always_inline __u8 softirq_kind(__u32 vec)
{
	switch (vec) {
	case TIMER_SOFTIRQ:
	case HRTIMER_SOFTIRQ:
		return ARGUS_IRQ_TIMER;
	case NET_TX_SOFTIRQ:
	case NET_RX_SOFTIRQ:
		return ARGUS_IRQ_NET;
	case BLOCK_SOFTIRQ:
		return ARGUS_IRQ_BLOCK;
	case RCU_SOFTIRQ:
		return ARGUS_IRQ_RCU;
	case SCHED_SOFTIRQ:
		return ARGUS_IRQ_SCHED;
	case TASKLET_SOFTIRQ:
	case HI_SOFTIRQ:
		return ARGUS_IRQ_TASKLET;
	default:
		return ARGUS_IRQ_OTHER;
	}
}

/* This CPU's interrupt state (the map has one per-CPU slot). */
static __always_inline struct irq_state *cpu_irq_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&irq_states, &zero);
}

static __always_inline bool in_hardirq(struct irq_state *st)
{
	return st->device_active || st->hrtimer_active || st->vector_active;
}

/* Whether an hrtimer callback runs in hardirq: soft hrtimers expire from
 * HRTIMER_SOFTIRQ.  Where the timer interrupt itself is not traced (no x86
 * local_timer tracepoint), a timer interrupt arriving during HRTIMER_SOFTIRQ
 * is taken for a soft expiry; entry and exit decide alike, so the flag
 * stays balanced either way. */
static __always_inline bool hrtimer_in_hardirq(struct irq_state *st)
{
	if (st->device_active || st->vector_active)
		return true;
	return !(st->softirq_active && st->softirq_vec == HRTIMER_SOFTIRQ);
}

/* ksoftirqd is only ever woken to run pending softirqs, and most often from
 * irq_exit, after the handler's exit tracepoint: charging that wakeup to the
 * interrupted task or to idle would invent a causal edge. */
static __always_inline bool is_ksoftirqd(struct task_struct *p)
{
	char comm[10];

	if (!(p->flags & PF_KTHREAD))
		return false;
	if (bpf_probe_read_kernel(comm, sizeof(comm), p->comm))
		return false;
	return comm[0] == 'k' && comm[1] == 's' && comm[2] == 'o' && comm[3] == 'f' && comm[4] == 't' &&
	       comm[5] == 'i' && comm[6] == 'r' && comm[7] == 'q' && comm[8] == 'd' && comm[9] == '/';
}

struct wake_ctx {
	__u32 irq_vec;
	__u8 context;
	__u8 irq_kind;
};

/* cur: the current task (the waker, or the idle task). */
static __always_inline void wake_context(struct task_struct *cur, struct task_struct *wakee, struct wake_ctx *w)
{
	struct irq_state *st;

	w->context = ARGUS_WAKE_TASK;
	w->irq_kind = ARGUS_IRQ_NONE;
	w->irq_vec = 0;
	st = cpu_irq_state();
	if (!st)
		return;
	/* Innermost first: an hrtimer runs inside the local timer vector. */
	if (in_hardirq(st)) {
		w->context = ARGUS_WAKE_HARDIRQ;
		if (st->hrtimer_active) {
			w->irq_kind = ARGUS_IRQ_TIMER;
			w->irq_vec = st->timer_tag;   /* links the wakeup to the TIMER fire */
		} else if (st->device_active) {
			w->irq_kind = ARGUS_IRQ_DEVICE;
			w->irq_vec = st->hardirq_vec;
		} else {
			w->irq_kind = st->vector_kind;
		}
		return;
	}
	if (st->softirq_active) {
		w->context = ARGUS_WAKE_SOFTIRQ;
		w->irq_kind = softirq_kind(st->softirq_vec);
		w->irq_vec = st->softirq_vec;
		return;
	}
	if (is_ksoftirqd(wakee)) {
		w->context = ARGUS_WAKE_SOFTIRQ;
		w->irq_kind = ARGUS_IRQ_OTHER;
		return;
	}
	/* The idle task carries PF_KTHREAD too; ask for it first. */
	if (!cur->pid) {
		w->context = ARGUS_WAKE_IDLE;
		return;
	}
	if (cur->flags & PF_KTHREAD)
		w->context = ARGUS_WAKE_KTHREAD;
}

static __always_inline int handle_irq_entry(int irq)
{
	struct irq_state *st;

	st = cpu_irq_state();
	if (!st)
		return 0;
	st->device_active = 1;
	st->hardirq_vec = irq;
	return 0;
}

static __always_inline int handle_irq_exit(void)
{
	struct irq_state *st;

	st = cpu_irq_state();
	if (st) {
		st->device_active = 0;
		st->hrtimer_active = 0;
	}
	return 0;
}

/* x86 system vectors have no irq_handler tracepoint; without these, a
 * wakeup from irq_work (cpufreq, perf, printk) or an IPI would be charged
 * to whatever task it interrupted, a causal edge that does not exist. */
static __always_inline int handle_vector(__u8 kind, bool entry)
{
	struct irq_state *st;

	st = cpu_irq_state();
	if (!st)
		return 0;
	st->vector_active = entry;
	if (entry)
		st->vector_kind = kind;
	else
		st->hrtimer_active = 0;
	return 0;
}

static __always_inline int handle_softirq(unsigned int vec, bool entry)
{
	struct irq_state *st;

	st = cpu_irq_state();
	if (!st)
		return 0;
	/* Softirqs never nest on one CPU: a flag is enough. */
	st->softirq_active = entry;
	st->softirq_vec = vec;
	return 0;
}

static __always_inline int handle_hrtimer(bool entry, __u32 tag)
{
	struct irq_state *st;

	st = cpu_irq_state();
	if (!st || !hrtimer_in_hardirq(st))
		return 0;
	st->hrtimer_active = entry;
	st->timer_tag = entry ? tag : 0;
	return 0;
}

#endif /* ARGUS_IRQ_CONTEXT_BPF_H */
