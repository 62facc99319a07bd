// SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0
/*
 * Argus kernel event collection on Linux: scheduler switches and wakeups,
 * the syscalls that wait or communicate (with the identity of the channel
 * behind an fd), fires of timers armed from syscalls, user stacks at
 * blocking waits, and process lifecycle, written as final-format struct
 * argus_ev_* records (tracer/argus_event.h) into one BPF ring buffer that
 * argusd copies into the trace file unchanged.
 *
 * Rare facts are written once and referenced by id from the frequent
 * records (FD_INFO by (pid, fd, inode) from syscall_enter.obj2, USER_STACK
 * by (pid, stack id) from switch_out), deduplicated with LRU maps and
 * rewritten once a second so a wrapped buffer still holds them.
 *
 * All programs are tp_btf (BTF raw tracepoints): arguments are typed kernel
 * pointers read with plain loads, no bpf_probe_read per field and no
 * tracefs format parsing.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "argus_trace.h"

/* include/linux/sched.h: task_struct.__state bits, stable ABI for tracers. */
#define TASK_RUNNING 0x0000
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define __TASK_STOPPED 0x0004
#define __TASK_TRACED 0x0008
#define EXIT_DEAD 0x0010
#define EXIT_ZOMBIE 0x0020
#define TASK_DEAD 0x0080
#define PF_KTHREAD 0x00200000

/* include/uapi/linux/futex.h */
#define FUTEX_CMD_MASK 0x7f
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_OP 5
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_CMP_REQUEUE_PI 12

/* include/uapi/linux/time.h */
#define CLOCK_MONOTONIC 1
#define CLOCK_BOOTTIME 7
#define TIMER_ABSTIME 0x01

/* include/uapi/linux/stat.h */
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFREG 0100000
#define S_IFCHR 0020000
#define S_IFIFO 0010000

/* include/linux/socket.h, include/uapi/linux/magic.h, include/uapi/linux/major.h */
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define ANON_INODE_FS_MAGIC 0x09041934
#define MINORBITS 20
#define TTY_MAJOR 4
#define TTYAUX_MAJOR 5
#define UNIX98_PTY_SLAVE_MAJOR 136     /* 136..143 */

/* arch/x86/include/asm/segment.h: a 32-bit (ia32) task entered the kernel. */
#define X86_USER32_CS 0x23

#define S32_MAX 0x7fffffff

const volatile __u32 targ_exclude_tgid = 0;     /* the daemon: tracing it would feed back */
const volatile __u32 wakeup_bytes = 0;          /* wake the consumer only past this backlog; 0 = every record */
const volatile struct argus_syscall_class syscall_class[ARGUS_MAX_SYSCALLS] = {};
const volatile bool capture_stacks = false;     /* user stacks at blocking switch-outs */
const volatile __u64 id_key = 0;                /* scrambles kernel addresses into ids (random per load) */

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

/* What a thread is blocked in, so sched_switch can say why it sleeps. */
/* The last channels a thread used: (fd, inode) pairs whose FD_INFO is known
 * to be fresh, so a thread talking on the same fds skips the LRU map. */
#define FD_CACHE_SLOTS 2

struct fd_cache_slot {
	__s32 fd;
	__u32 pad;
	__u64 inode;
	__u64 seen_ns;           /* FD_INFO written (by any thread of the process) */
};

struct syscall_state {
	__u32 nr;
	__u8 wait_reason;
	__u8 active;             /* between a traced sys_enter and its sys_exit */
	__u8 fd_cache_next;      /* slot to replace */
	__u8 pad;
	__u64 obj;
	/* The last user stack walked at a blocking wait, and in which wait. */
	__u64 stack_id;
	__u64 stack_ns;
	__u64 stack_obj;
	__u32 stack_nr;
	__u32 pad2;
	struct fd_cache_slot fd_cache[FD_CACHE_SLOTS];
	/* What a blocking switch-out needs to describe the wait (wait_site.bpf.h,
	 * ownership.bpf.h): the decoded aux (futex op, timeout) and, for the
	 * poll family, the user pointers to the fd set, read only if it blocks. */
	__s32 aux;
	__u8 layout;             /* enum argus_syscall_layout */
	__u8 pad3[3];
	__u64 set_ptr;           /* poll: struct pollfd *; select: fd_set *readfds */
	__u64 set_ptr2;          /* select: fd_set *writefds */
	__u32 set_n;             /* poll: nfds; select: nfds */
	__u32 site_nr;           /* the last WAIT_SITE written: (id, nr) and when */
	__u64 site_id;
	__u64 site_ns;
};

/* A thread blocking again in the same syscall on the same object this soon
 * after a stack walk is taken to have the same stack: walking it costs
 * ~400 ns per switch, and a loop blocking every few microseconds (a
 * request loop, a pipe ping-pong) would pay it each time. */
#define STACK_REUSE_NS 1000000ull

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, ARGUS_BPF_RINGBUF_DEFAULT);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_state);
} irq_states SEC(".maps");

/* Task-local rather than a tid-keyed hash: the kernel frees it with the
 * task (exit and exit_group have no sys_exit), it has no capacity limit, and
 * a lookup is a pointer chase instead of a locked bucket walk, which matters
 * at two lookups per traced syscall.  Created at the first traced syscall,
 * then only flipped between active and idle. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct syscall_state);
} in_syscall SEC(".maps");

struct fd_key {
	__u32 pid;
	__s32 fd;
	__u64 inode;
};

struct stack_key {
	__u32 pid;
	__u32 pad;
	__u64 stack_id;
};

/* (pid, fd, inode) -> when its FD_INFO was last written. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_FD_SEEN_ENTRIES);
	__type(key, struct fd_key);
	__type(value, __u64);
} fd_seen SEC(".maps");

/* (pid, stack id) -> when its USER_STACK was last written. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_STACK_SEEN_ENTRIES);
	__type(key, struct stack_key);
	__type(value, __u64);
} stack_seen SEC(".maps");

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

/* A USER_STACK record is built here, then copied out at its real size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct argus_ev_user_stack);
} stack_scratch SEC(".maps");

/* Kernels before 5.16 kept the CPU in task_struct itself. */
struct task_struct___cpu {
	unsigned int cpu;
};

static __always_inline bool excluded(__u32 tgid)
{
	return targ_exclude_tgid && tgid == targ_exclude_tgid;
}

static __always_inline void count_drop(void)
{
	__u32 zero = 0;
	__u64 *cnt;

	cnt = bpf_map_lookup_elem(&drops, &zero);
	if (cnt)
		*cnt += 1;
}

static __always_inline void *reserve(__u32 size)
{
	void *rec;

	rec = bpf_ringbuf_reserve(&events, size, 0);
	if (!rec)
		count_drop();
	return rec;
}

/* Waking the consumer per record costs an irq_work and a context switch per
 * event; with a threshold the daemon drains on its own timer and is only
 * kicked when the backlog grows. */
static __always_inline __u64 submit_flags(void)
{
	if (!wakeup_bytes)
		return 0;
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void submit(void *rec)
{
	bpf_ringbuf_submit(rec, submit_flags());
}

/* Variable-length records are built in scratch memory and copied out. */
static __always_inline void output(void *rec, __u64 size)
{
	if (bpf_ringbuf_output(&events, rec, size, submit_flags()))
		count_drop();
}

/* Kernel addresses never reach the trace: xor with a per-load random key,
 * then multiply by an odd constant (a bijection, so equal ids mean the same
 * object within one daemon run). */
static __always_inline __u64 kptr_id(__u64 addr)
{
	return (addr ^ id_key) * 0x9e3779b97f4a7c15ull;
}

/* The verifier forbids arithmetic on a typed kernel pointer and keys made of
 * one; copied through a helper, its bits are a plain number. */
static __always_inline __u64 ptr_bits(const void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

static __always_inline void fill_header(struct argus_event_header *h, __u16 type, __u16 size,
					__u32 pid, __u32 tid, __u64 ts)
{
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->flags = 0;
}

/* comm is NUL-padded in the record whatever the source holds after the NUL. */
static __always_inline void copy_comm(char *dst, const char *src)
{
	__builtin_memset(dst, 0, ARGUS_COMM_LEN);
	bpf_probe_read_kernel_str(dst, ARGUS_COMM_LEN, src);
}

static __always_inline __u32 task_cpu_of(struct task_struct *p)
{
	struct task_struct___cpu *old = (void *)p;

	if (bpf_core_field_exists(old->cpu))
		return BPF_CORE_READ(old, cpu);
	return BPF_CORE_READ(p, thread_info.cpu);
}

static __always_inline __u8 task_state_of(bool preempt, unsigned int prev_state)
{
	/* A preempted task may already have set a sleep state it never reached. */
	if (preempt || prev_state == TASK_RUNNING)
		return ARGUS_STATE_RUNNABLE;
	if (prev_state & (TASK_DEAD | EXIT_DEAD | EXIT_ZOMBIE))
		return ARGUS_STATE_DEAD;
	if (prev_state & (__TASK_STOPPED | __TASK_TRACED))
		return ARGUS_STATE_OTHER;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		return ARGUS_STATE_BLOCKED_IO;
	/* TASK_INTERRUPTIBLE, and PREEMPT_RT's TASK_RTLOCK_WAIT: a lock wait. */
	return ARGUS_STATE_BLOCKED;
}

#include "wait_site.bpf.h"
#include "ownership.bpf.h"

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

static __always_inline void emit_switch_out(void *ctx, struct task_struct *prev, bool preempt,
					    unsigned int prev_state, __u64 ts)
{
	struct argus_ev_user_stack *stack = NULL;
	struct argus_ev_switch_out *e;
	struct syscall_state *sc;
	__u32 tid = prev->pid, stack_size = 0;
	__u64 stack_id = 0;
	__u8 state, reason;

	/* The syscall prev is in, if any: looked up once for the stack cache
	 * and the record. */
	sc = bpf_task_storage_get(&in_syscall, prev, NULL, 0);
	if (sc && !sc->active)
		sc = NULL;
	state = task_state_of(preempt, prev_state);
	if (capture_stacks && (state == ARGUS_STATE_BLOCKED || state == ARGUS_STATE_BLOCKED_IO) &&
	    !(prev->flags & PF_KTHREAD) && prev->mm)
		stack_id = capture_user_stack(ctx, prev, sc, ts, &stack, &stack_size);
	/* What the wait is on, written just before the switch_out it describes. */
	if (sc && (state == ARGUS_STATE_BLOCKED || state == ARGUS_STATE_BLOCKED_IO)) {
		if (sc->wait_reason == ARGUS_WAIT_POLL)
			emit_wait_site(prev, sc, ts);
		else if (sc->wait_reason == ARGUS_WAIT_FUTEX)
			emit_futex_state(prev, sc, ts);
	}
	/* Runnable switch-outs (most of them under load) stay 40 bytes. */
	e = reserve(stack_id ? sizeof(*e) : ARGUS_SWITCH_OUT_BASE_SIZE);
	if (!e)
		return;
	if (stack_id)
		e->user_stack_id = stack_id;
	e->syscall_nr = sc ? sc->nr : ARGUS_SYSCALL_NONE;
	e->wait_obj = sc ? sc->obj : 0;
	if (state == ARGUS_STATE_RUNNABLE) {
		/* Only a voluntary switch inside sched_yield is a yield; any other
		 * runnable switch-out (cond_resched, preemption) lost the CPU. */
		reason = (!preempt && sc && sc->wait_reason == ARGUS_WAIT_YIELD) ?
			 ARGUS_WAIT_YIELD : ARGUS_WAIT_PREEMPTED;
	} else if (state == ARGUS_STATE_BLOCKED || state == ARGUS_STATE_BLOCKED_IO) {
		if (sc)
			reason = sc->wait_reason;
		else
			reason = state == ARGUS_STATE_BLOCKED_IO ? ARGUS_WAIT_IO : ARGUS_WAIT_NONE;
	} else {
		reason = ARGUS_WAIT_NONE;
	}
	e->state = state;
	e->wait_reason = reason;
	e->prio = prev->prio;
	fill_header(&e->h, ARGUS_EV_SWITCH_OUT, stack_id ? sizeof(*e) : ARGUS_SWITCH_OUT_BASE_SIZE,
		    prev->tgid, tid, ts);
	submit(e);
	if (stack && stack_size >= 40 && stack_size <= sizeof(*stack))
		output(stack, stack_size);
}

static __always_inline void emit_switch_in(struct task_struct *next, struct task_struct *prev, __u64 ts)
{
	struct argus_ev_switch_in *e;

	e = reserve(sizeof(*e));
	if (!e)
		return;
	e->prev_tid = prev->pid;
	e->prev_pid = prev->tgid;
	fill_header(&e->h, ARGUS_EV_SWITCH_IN, sizeof(*e), next->tgid, next->pid, ts);
	submit(e);
}

static __always_inline int handle_sched_switch(void *ctx, bool preempt, struct task_struct *prev,
					       struct task_struct *next, unsigned int prev_state)
{
	__u64 ts = bpf_ktime_get_ns();

	/* pid 0 is the per-CPU idle task: its "switches" are idle periods. */
	if (prev->pid && !excluded(prev->tgid))
		emit_switch_out(ctx, prev, preempt, prev_state, ts);
	if (next->pid && !excluded(next->tgid))
		emit_switch_in(next, prev, ts);
	return 0;
}

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

static __always_inline void wake_context(__u32 waker_tid, struct task_struct *wakee, struct wake_ctx *w)
{
	struct task_struct *cur;
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
	if (!waker_tid) {
		w->context = ARGUS_WAKE_IDLE;
		return;
	}
	cur = bpf_get_current_task_btf();
	if (cur->flags & PF_KTHREAD)
		w->context = ARGUS_WAKE_KTHREAD;
}

static __always_inline int handle_wakeup(struct task_struct *p, __u16 type)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 waker_pid = id >> 32, waker_tid = (__u32)id;
	struct argus_ev_wakeup *e;
	__u32 wakee_pid = p->tgid;
	struct wake_ctx w;

	if (excluded(wakee_pid))
		return 0;
	wake_context(waker_tid, p, &w);
	/* An interrupt that lands while the daemon runs wakes on nobody's
	 * behalf: only the daemon's own wakeups are left out. */
	if (w.context == ARGUS_WAKE_TASK && excluded(waker_pid))
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->wakee_pid = wakee_pid;
	e->wakee_tid = p->pid;
	/* At sched_waking the CPU is not chosen yet: this is where it last ran,
	 * as the sched_waking tracepoint itself reports. */
	e->target_cpu = task_cpu_of(p);
	e->context = w.context;
	e->irq_kind = w.irq_kind;
	e->irq_vec = w.irq_vec;
	fill_header(&e->h, type, sizeof(*e), waker_pid, waker_tid, bpf_ktime_get_ns());
	submit(e);
	return 0;
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

static __always_inline void emit_timer_fire(struct hrtimer *timer, const struct armed_timer *arm)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct argus_ev_timer *e;

	e = reserve(sizeof(*e));
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
	submit(e);
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

	if (!cur->pid || (cur->flags & PF_KTHREAD) || excluded(cur->tgid))
		return 0;
	st = cpu_irq_state();
	if (!st || in_hardirq(st) || st->softirq_active)
		return 0;
	sc = bpf_task_storage_get(&in_syscall, cur, NULL, 0);
	if (!sc || !sc->active)
		return 0;
	addr = ptr_bits(timer);
	arm.id = kptr_id(addr);
	arm.ts = bpf_ktime_get_ns();
	arm.pid = cur->tgid;
	arm.tid = cur->pid;
	arm.mode = mode;
	bpf_map_update_elem(&armed_timers, &addr, &arm, BPF_ANY);
	return 0;
}

static __always_inline int handle_hrtimer_expire(struct hrtimer *timer)
{
	__u64 addr = ptr_bits(timer);
	struct armed_timer *arm;

	arm = bpf_map_lookup_elem(&armed_timers, &addr);
	if (!arm)
		return handle_hrtimer(true, 0);
	emit_timer_fire(timer, arm);
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

static __always_inline __s32 clip_s32(__u64 v)
{
	return v > S32_MAX ? S32_MAX : (__s32)v;
}

static __always_inline __s32 ns_to_ms(__u64 ns)
{
	return clip_s32(ns / 1000000);
}

/* A user timespec (or timeval) in nanoseconds; false when unreadable. */
static __always_inline bool read_user_time(__u64 uptr, bool timeval, __u64 *ns)
{
	struct {
		__s64 sec;
		__s64 frac;
	} ts;

	if (bpf_probe_read_user(&ts, sizeof(ts), (void *)uptr))
		return false;
	if (ts.sec < 0 || ts.frac < 0)
		return false;
	/* Clip far-future values instead of overflowing: ms fit in 31 bits anyway. */
	if (ts.sec > S32_MAX)
		ts.sec = S32_MAX;
	*ns = (__u64)ts.sec * 1000000000ull + (timeval ? (__u64)ts.frac * 1000 : (__u64)ts.frac);
	return true;
}

/* A relative user timeout in milliseconds; NULL means wait forever. */
static __always_inline __s32 user_timeout_ms(__u64 uptr, bool timeval)
{
	__u64 ns;

	if (!uptr)
		return ARGUS_TIMEOUT_INFINITE;
	if (!read_user_time(uptr, timeval, &ns))
		return ARGUS_TIMEOUT_UNKNOWN;
	return ns_to_ms(ns);
}

/* glibc's sleep() family passes relative times, but many runtimes (CPython,
 * Go, Rust's std) sleep until an absolute CLOCK_MONOTONIC deadline: turn
 * those into a duration so aux always means "how long it will sleep". */
static __always_inline __s32 clock_nanosleep_ms(__u64 clockid, __u64 flags, __u64 uptr)
{
	__u64 deadline, now;

	if (!(flags & TIMER_ABSTIME))
		return user_timeout_ms(uptr, false);
	if (!uptr || !read_user_time(uptr, false, &deadline))
		return ARGUS_TIMEOUT_UNKNOWN;
	if (clockid == CLOCK_MONOTONIC)
		now = bpf_ktime_get_ns();
	else if (clockid == CLOCK_BOOTTIME)
		now = bpf_ktime_get_boot_ns();
	else
		return ARGUS_TIMEOUT_UNKNOWN;   /* wall-clock deadlines: no clock to compare in BPF */
	return deadline > now ? ns_to_ms(deadline - now) : 0;
}

static __always_inline bool compat_syscall(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	/* ia32 numbers differ from the table (ia32 3 is read, x86_64 3 is close). */
	return regs->cs == X86_USER32_CS;
#elif defined(__TARGET_ARCH_arm64)
	return regs->pstate & 0x10; /* PSR_MODE32_BIT */
#else
	return false;
#endif
}

static __always_inline long syscall_nr_of(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno;
#else
	return -1;
#endif
}

static __always_inline void decode_args(__u8 layout, struct pt_regs *regs,
					__s32 *aux, __u64 *obj, __u64 *obj2)
{
	__u64 a0 = PT_REGS_PARM1_SYSCALL(regs);
	__u64 a1 = PT_REGS_PARM2_SYSCALL(regs);
	__u64 a2 = PT_REGS_PARM3_SYSCALL(regs);
	__u64 a3 = PT_REGS_PARM4_SYSCALL(regs);
	__u64 a4 = PT_REGS_PARM5_SYSCALL(regs);
	__u64 v = 0;
	int fd = -1;
	__u32 cmd;

	*aux = 0;
	*obj = 0;
	*obj2 = 0;
	switch (layout) {
	case ARGUS_SCL_FD:
	case ARGUS_SCL_FD_CHAN:
		*obj = (__u32)a0;
		*aux = clip_s32(a2);
		break;
	case ARGUS_SCL_FD_ONLY:
		*obj = (__u32)a0;
		break;
	case ARGUS_SCL_FCNTL:
	case ARGUS_SCL_FLOCK:
		*obj = (__u32)a0;
		*aux = (__s32)a1;
		break;
	case ARGUS_SCL_FUTEX:
		*obj = a0;
		*aux = (__s32)a1;
		cmd = a1 & FUTEX_CMD_MASK;
		/* Requeue and wake_op name a second futex; the rest compare a value. */
		if (cmd == FUTEX_REQUEUE || cmd == FUTEX_CMP_REQUEUE || cmd == FUTEX_WAKE_OP ||
		    cmd == FUTEX_WAIT_REQUEUE_PI || cmd == FUTEX_CMP_REQUEUE_PI)
			*obj2 = a4;
		else
			*obj2 = (__u32)a2;
		break;
	case ARGUS_SCL_FUTEX_WAITV:
		/* struct futex_waitv { u64 val; u64 uaddr; u32 flags; u32 __reserved; } */
		if (a0 && a1)
			bpf_probe_read_user(&v, sizeof(v), (void *)(a0 + 8));
		*obj = v;
		*obj2 = a0;
		*aux = (__s32)a1;
		break;
	case ARGUS_SCL_EPOLL:
		*obj = (__u32)a0;
		*aux = (__s32)a3;
		*obj2 = (__u32)a2;
		break;
	case ARGUS_SCL_EPOLL_TS:
		*obj = (__u32)a0;
		*aux = user_timeout_ms(a3, false);
		*obj2 = (__u32)a2;
		break;
	case ARGUS_SCL_POLL:
	case ARGUS_SCL_POLL_TS:
		/* The first fd identifies the common single-fd poll. */
		if (!a0 || !a1 || bpf_probe_read_user(&fd, sizeof(fd), (void *)a0))
			fd = -1;
		*obj = (__u64)(__s64)fd;
		*obj2 = a1;
		*aux = layout == ARGUS_SCL_POLL ? (__s32)a2 : user_timeout_ms(a2, false);
		break;
	case ARGUS_SCL_SELECT:
	case ARGUS_SCL_SELECT_TS:
		*obj = (__u32)a0;
		*aux = user_timeout_ms(a4, layout == ARGUS_SCL_SELECT);
		break;
	case ARGUS_SCL_NANOSLEEP:
		*aux = user_timeout_ms(a0, false);
		break;
	case ARGUS_SCL_CLOCK_NANOSLEEP:
		*obj = (__u32)a0;
		*obj2 = (__u32)a1;
		*aux = clock_nanosleep_ms(a0, a1, a2);
		break;
	case ARGUS_SCL_WAIT4:
		*obj = (__u64)(__s64)(__s32)a0;
		*aux = (__s32)a2;
		break;
	case ARGUS_SCL_WAITID:
		*obj = (__u64)(__s64)(__s32)a1;
		*obj2 = (__u32)a0;
		*aux = (__s32)a3;
		break;
	case ARGUS_SCL_IO_URING:
		*obj = (__u32)a0;
		*aux = clip_s32((__u32)a2);
		*obj2 = (__u32)a1;
		break;
	case ARGUS_SCL_TIMERFD: {
		/* struct itimerspec { timespec it_interval; timespec it_value; } */
		struct {
			__s64 sec;
			__s64 nsec;
		} ts = {};

		*obj = (__u32)a0;
		*aux = (__s32)a1;
		if (a2 && !bpf_probe_read_user(&ts, sizeof(ts), (void *)(a2 + 16)))
			*obj2 = (__u64)ts.sec * 1000000000ull + (__u64)ts.nsec;
		break;
	}
	case ARGUS_SCL_SPLICE:
		*obj = (__u32)a0;
		*obj2 = (__u32)a2;
		*aux = clip_s32(a4);
		break;
	default:
		break;
	}
}

struct chan_info {
	__u64 inode;
	__u64 local;
	__u64 peer;
	__u16 sock_type;
	__u8 kind;
	__u8 family;
};

/* Typed view of a kernel pointer read as a number (kernel 6.2+): loads
 * through it are plain faulting-safe loads, not one helper call per field,
 * which took ~150 ns off every read/write at seven fields. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* The open file behind fd in the current task, or NULL. */
static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct file **fds, *f = NULL;
	struct files_struct *files;
	struct fdtable *fdt;

	files = cur->files;
	if (!files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	return bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
}

static __always_inline __u64 inet4_endpoint(__u32 addr_be, __u16 port)
{
	return (__u64)bpf_ntohl(addr_be) << 16 | port;
}

/* IPv6 addresses do not fit: fold into 47 bits, bit 63 set; v4-mapped
 * addresses take the IPv4 form so a dual-stack socket matches its peer. */
static __always_inline __u64 inet6_endpoint(const struct in6_addr *a, __u16 port)
{
	__u32 w[4];
	__u64 h;

	if (bpf_probe_read_kernel(w, sizeof(w), a))
		return port;
	if (!w[0] && !w[1] && w[2] == bpf_htonl(0xffff))
		return inet4_endpoint(w[3], port);
	h = (__u64)w[0] * 0x9e3779b97f4a7c15ull ^ (__u64)w[1] * 0xc2b2ae3d27d4eb4full ^
	    (__u64)w[2] * 0x165667b19e3779f9ull ^ (__u64)w[3] * 0x85ebca77c2b2ae63ull;
	return ((h & ((1ull << 47) - 1)) | (1ull << 47)) << 16 | port;
}

static __always_inline void describe_socket(struct file *f, struct chan_info *c)
{
	struct socket *sock = BPF_CORE_READ(f, private_data);
	struct sock *sk = BPF_CORE_READ(sock, sk), *peer;
	struct socket *peer_sock;

	if (!sk)
		return;
	c->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	c->sock_type = BPF_CORE_READ(sk, sk_type);
	switch (c->family) {
	case AF_UNIX:
		/* struct unix_sock starts with its struct sock; the peer's inode
		 * is the one its struct socket_alloc embeds. */
		peer = BPF_CORE_READ((struct unix_sock *)sk, peer);
		peer_sock = peer ? BPF_CORE_READ(peer, sk_socket) : NULL;
		if (peer_sock)
			c->peer = BPF_CORE_READ((struct socket_alloc *)peer_sock, vfs_inode.i_ino);
		break;
	case AF_INET:
		c->local = inet4_endpoint(BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr),
					  BPF_CORE_READ(sk, __sk_common.skc_num));
		c->peer = inet4_endpoint(BPF_CORE_READ(sk, __sk_common.skc_daddr),
					 bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport)));
		break;
	case AF_INET6:
		c->local = inet6_endpoint(&sk->__sk_common.skc_v6_rcv_saddr,
					  BPF_CORE_READ(sk, __sk_common.skc_num));
		c->peer = inet6_endpoint(&sk->__sk_common.skc_v6_daddr,
					 bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport)));
		break;
	default:
		break;
	}
}

static __always_inline bool tty_major(__u32 major)
{
	return major == TTY_MAJOR || major == TTYAUX_MAJOR ||
	       (major >= UNIX98_PTY_SLAVE_MAJOR && major < UNIX98_PTY_SLAVE_MAJOR + 8);
}

/* Kind and identity of an open file (see struct argus_ev_fd_info). */
static __always_inline void describe_file(struct file *f, struct chan_info *c)
{
	struct inode *inode = BPF_CORE_READ(f, f_inode);
	umode_t mode = BPF_CORE_READ(inode, i_mode);
	struct eventfd_ctx *efd;
	const unsigned char *dname;
	char name[10] = {};

	c->inode = BPF_CORE_READ(inode, i_ino);
	c->local = c->inode;
	switch (mode & S_IFMT) {
	case S_IFSOCK:
		c->kind = ARGUS_FD_SOCKET;
		describe_socket(f, c);
		return;
	case S_IFIFO:
		c->kind = ARGUS_FD_PIPE;
		return;
	case S_IFCHR:
		c->kind = tty_major(BPF_CORE_READ(inode, i_rdev) >> MINORBITS) ? ARGUS_FD_TTY : ARGUS_FD_CHARDEV;
		return;
	default:
		break;
	}
	/* Every anonymous-inode file (eventfd, timerfd, epoll, ...) shares one
	 * inode: tell them apart by the file's name and identify an eventfd by
	 * its id, any other by its file. */
	if (BPF_CORE_READ(inode, i_sb, s_magic) == ANON_INODE_FS_MAGIC) {
		dname = BPF_CORE_READ(f, f_path.dentry, d_name.name);
		bpf_probe_read_kernel(name, sizeof(name), dname);
		if (name[0] == '[' && name[1] == 'e' && name[2] == 'v' && name[3] == 'e' && name[4] == 'n' &&
		    name[5] == 't' && name[6] == 'f' && name[7] == 'd' && name[8] == ']') {
			c->kind = ARGUS_FD_EVENTFD;
			efd = BPF_CORE_READ(f, private_data);
			c->local = (__u32)BPF_CORE_READ(efd, id);
		} else {
			c->kind = ARGUS_FD_ANON;
			c->local = kptr_id(ptr_bits(f));
		}
		return;
	}
	c->kind = (mode & S_IFMT) == S_IFREG ? ARGUS_FD_REGULAR : ARGUS_FD_OTHER;
}

/* The inode behind fd for syscall_enter.obj2, and an FD_INFO record when
 * this (pid, fd, inode) was not described in the last refresh period. */
static __always_inline struct fd_cache_slot *fd_cache_find(struct syscall_state *sc, int fd, __u64 inode)
{
	int i;

	if (!sc)
		return NULL;
	for (i = 0; i < FD_CACHE_SLOTS; i++)
		if (sc->fd_cache[i].fd == fd && sc->fd_cache[i].inode == inode)
			return &sc->fd_cache[i];
	return NULL;
}

static __always_inline void fd_cache_put(struct syscall_state *sc, int fd, __u64 inode, __u64 seen)
{
	struct fd_cache_slot *slot;
	__u32 i;

	if (!sc)
		return;
	slot = fd_cache_find(sc, fd, inode);
	if (!slot) {
		i = sc->fd_cache_next++ % FD_CACHE_SLOTS;
		if (i >= FD_CACHE_SLOTS)
			return;
		slot = &sc->fd_cache[i];
	}
	slot->fd = fd;
	slot->inode = inode;
	slot->seen_ns = seen;
}

static __always_inline __u64 channel_of(struct syscall_state *sc, __u32 pid, __u32 tid, int fd, __u64 now)
{
	struct argus_ev_fd_info *e;
	struct fd_cache_slot *slot;
	struct chan_info c = {};
	struct fd_key key = {};
	struct file *f;
	__u64 *seen;

	f = fd_file(fd);
	if (!f)
		return 0;
	key.pid = pid;
	key.fd = fd;
	key.inode = f->f_inode ? f->f_inode->i_ino : 0;
	slot = fd_cache_find(sc, fd, key.inode);
	if (slot && now - slot->seen_ns <= ARGUS_REFRESH_NS)
		return key.inode;
	seen = bpf_map_lookup_elem(&fd_seen, &key);
	if (seen && now - *seen <= ARGUS_REFRESH_NS) {
		fd_cache_put(sc, fd, key.inode, *seen);
		return key.inode;
	}
	describe_file(f, &c);
	e = reserve(sizeof(*e));
	if (!e)
		return key.inode;     /* not marked seen: the next call tries again */
	bpf_map_update_elem(&fd_seen, &key, &now, BPF_ANY);
	fd_cache_put(sc, fd, key.inode, now);
	e->fd = fd;
	e->kind = c.kind;
	e->family = c.family;
	e->sock_type = c.sock_type;
	e->inode = c.inode;
	e->local = c.local;
	e->peer = c.peer;
	fill_header(&e->h, ARGUS_EV_FD_INFO, sizeof(*e), pid, tid, now);
	submit(e);
	return key.inode;
}

#include "file_lock.bpf.h"

static __always_inline bool lock_layout(__u8 layout)
{
	return layout == ARGUS_SCL_FCNTL || layout == ARGUS_SCL_FLOCK;
}

static __always_inline int handle_sys_enter(struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct argus_ev_syscall_enter *e;
	struct argus_syscall_class cls;
	struct syscall_state *sc;
	__u32 tid = (__u32)pid_tgid;
	__u64 obj, obj2, ts;
	__s32 aux;

	if ((unsigned long)id >= ARGUS_MAX_SYSCALLS)
		return 0;
	cls = syscall_class[id];
	if (cls.layout == ARGUS_SCL_NONE || excluded(pid_tgid >> 32) || compat_syscall(regs))
		return 0;
	if (cls.layout == ARGUS_SCL_FCNTL && !fcntl_lock_cmd(PT_REGS_PARM2_SYSCALL(regs)))
		return 0;
	decode_args(cls.layout, regs, &aux, &obj, &obj2);
	/* The wait reason must not depend on room in the ring buffer. */
	sc = bpf_task_storage_get(&in_syscall, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	ts = bpf_ktime_get_ns();
	if (cls.layout == ARGUS_SCL_FD_CHAN || lock_layout(cls.layout))
		obj2 = channel_of(sc, pid_tgid >> 32, tid, (int)obj, ts);
	if (sc) {
		sc->nr = id;
		sc->wait_reason = cls.wait_reason;
		sc->obj = obj;
		sc->active = 1;
		sc->aux = aux;
		sc->layout = cls.layout;
		wait_site_args(sc, cls.layout, regs);
	}
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->nr = id;
	e->aux = aux;
	e->obj = obj;
	e->obj2 = obj2;
	fill_header(&e->h, ARGUS_EV_SYSCALL_ENTER, sizeof(*e), pid_tgid >> 32, tid, ts);
	submit(e);
	if (lock_layout(cls.layout))
		emit_file_lock(regs, cls.layout, obj2, pid_tgid >> 32, tid, ts);
	return 0;
}

static __always_inline int handle_sys_exit(struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct argus_ev_syscall_exit *e;
	struct syscall_state *sc;
	__u32 tid = (__u32)pid_tgid;
	long nr = syscall_nr_of(regs);
	__u32 enter_nr;

	/* Every syscall on the machine passes here: reject untraced ones by
	 * number before looking at the task. */
	if ((unsigned long)nr >= ARGUS_MAX_SYSCALLS || syscall_class[nr].layout == ARGUS_SCL_NONE)
		return 0;
	if (syscall_class[nr].layout == ARGUS_SCL_FCNTL && !fcntl_lock_cmd(PT_REGS_PARM2_SYSCALL(regs)))
		return 0;
	sc = bpf_task_storage_get(&in_syscall, bpf_get_current_task_btf(), NULL, 0);
	if (!sc || !sc->active)
		return 0;
	enter_nr = sc->nr;
	sc->active = 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->nr = enter_nr;
	e->reserved = 0;
	e->ret = ret;
	fill_header(&e->h, ARGUS_EV_SYSCALL_EXIT, sizeof(*e), pid_tgid >> 32, tid, bpf_ktime_get_ns());
	submit(e);
	return 0;
}

static __always_inline int handle_fork(struct task_struct *parent, struct task_struct *child)
{
	struct argus_ev_fork *e;

	if (excluded(parent->tgid))
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->child_pid = child->tgid;
	e->child_tid = child->pid;
	copy_comm(e->comm, child->comm);
	fill_header(&e->h, ARGUS_EV_FORK, sizeof(*e), parent->tgid, parent->pid, bpf_ktime_get_ns());
	submit(e);
	return 0;
}

static __always_inline int emit_comm(struct task_struct *p, __u16 type, const char *comm)
{
	struct argus_ev_comm *e;

	if (excluded(p->tgid))
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	copy_comm(e->comm, comm);
	fill_header(&e->h, type, sizeof(*e), p->tgid, p->pid, bpf_ktime_get_ns());
	submit(e);
	return 0;
}

static __always_inline int handle_exit(struct task_struct *p)
{
	struct argus_ev_exit *e;
	__u32 tid = p->pid;

	if (excluded(p->tgid))
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->exit_code = p->exit_code;
	e->is_group_leader = p->pid == p->tgid;
	fill_header(&e->h, ARGUS_EV_EXIT, sizeof(*e), p->tgid, tid, bpf_ktime_get_ns());
	submit(e);
	return 0;
}

/*
 * Programs are attached in the order they appear here.  Interrupt exits come
 * before their entries and both before the wakeup programs: an entry seen
 * without its exit would mark the CPU as in an interrupt it has left.
 */
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_handler_exit, int irq, struct irqaction *action, int ret)
{
	return handle_irq_exit();
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit, unsigned int vec)
{
	return handle_softirq(vec, false);
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(hrtimer_expire_exit, struct hrtimer *timer)
{
	return handle_hrtimer(false, 0);
}

#if defined(__TARGET_ARCH_x86)
SEC("tp_btf/local_timer_exit")
int BPF_PROG(local_timer_exit, int vector)
{
	return handle_vector(ARGUS_IRQ_TIMER, false);
}

SEC("tp_btf/irq_work_exit")
int BPF_PROG(irq_work_exit, int vector)
{
	return handle_vector(ARGUS_IRQ_OTHER, false);
}

SEC("tp_btf/call_function_exit")
int BPF_PROG(call_function_exit, int vector)
{
	return handle_vector(ARGUS_IRQ_OTHER, false);
}

SEC("tp_btf/call_function_single_exit")
int BPF_PROG(call_function_single_exit, int vector)
{
	return handle_vector(ARGUS_IRQ_OTHER, false);
}

SEC("tp_btf/local_timer_entry")
int BPF_PROG(local_timer_entry, int vector)
{
	return handle_vector(ARGUS_IRQ_TIMER, true);
}

SEC("tp_btf/irq_work_entry")
int BPF_PROG(irq_work_entry, int vector)
{
	return handle_vector(ARGUS_IRQ_OTHER, true);
}

SEC("tp_btf/call_function_entry")
int BPF_PROG(call_function_entry, int vector)
{
	return handle_vector(ARGUS_IRQ_OTHER, true);
}

SEC("tp_btf/call_function_single_entry")
int BPF_PROG(call_function_single_entry, int vector)
{
	return handle_vector(ARGUS_IRQ_OTHER, true);
}
#endif

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_handler_entry, int irq, struct irqaction *action)
{
	return handle_irq_entry(irq);
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry, unsigned int vec)
{
	return handle_softirq(vec, true);
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hrtimer_expire_entry, struct hrtimer *timer, ktime_t *now)
{
	return handle_hrtimer_expire(timer);
}

SEC("tp_btf/hrtimer_setup")
int BPF_PROG(hrtimer_setup, struct hrtimer *timer, clockid_t clockid, enum hrtimer_mode mode)
{
	return handle_hrtimer_setup(timer);
}

/* The same tracepoint before Linux 6.15; the loader keeps whichever exists. */
SEC("tp_btf/hrtimer_init")
int BPF_PROG(hrtimer_init, struct hrtimer *timer, clockid_t clockid, enum hrtimer_mode mode)
{
	return handle_hrtimer_setup(timer);
}

SEC("tp_btf/hrtimer_start")
int BPF_PROG(hrtimer_start, struct hrtimer *timer, enum hrtimer_mode mode, bool was_armed)
{
	return handle_hrtimer_start(timer, (__u8)mode);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	return handle_sys_exit(regs, ret);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	return handle_sys_enter(regs, id);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	return handle_fork(parent, child);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return emit_comm(p, ARGUS_EV_EXEC, p->comm);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *p)
{
	return handle_exit(p);
}

/* Fires before the new name is copied in, so the name comes from the argument. */
SEC("tp_btf/task_rename")
int BPF_PROG(task_rename, struct task_struct *task, const char *comm)
{
	return emit_comm(task, ARGUS_EV_THREAD_NAME, comm);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return handle_sched_switch(ctx, preempt, prev, next, prev_state);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
	return handle_wakeup(p, ARGUS_EV_WAKEUP);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	return handle_wakeup(p, ARGUS_EV_WAKEUP_NEW);
}

/* Dual-licensed; the kernel is told GPL so GPL-only helpers are usable. */
char LICENSE[] SEC("license") = "GPL";
