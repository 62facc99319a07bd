// SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0
/*
 * Argus kernel event collection on Linux: scheduler switches and wakeups,
 * the syscalls that wait or communicate (with the identity of the channel
 * behind an fd), fires of timers armed from syscalls, user stacks at
 * blocking waits, and process lifecycle, written as final-format struct
 * argus_ev_* records (tracer/ringbuf/argus_event.h) into one BPF ring buffer that
 * argusd copies into the trace file unchanged.
 *
 * Rare facts are written once and referenced by id from the frequent
 * records (FD_INFO by (pid, fd, inode) from syscall_enter.obj2, USER_STACK
 * by (pid, stack id) from switch_out), deduplicated with LRU maps and
 * rewritten once a second so a wrapped buffer still holds them.
 *
 * All programs are tp_btf (BTF raw tracepoints) or fentry/fexit (the
 * syscalls, where the kernel has trampolines): arguments are typed kernel
 * pointers read with plain loads, no bpf_probe_read per field and no
 * tracefs format parsing.
 *
 * This file holds the shared state (per-thread syscall_state, the ring
 * buffer), the record-writing handlers and the thin SEC wrappers at the
 * bottom.  Helpers live beside it, one concern each:
 *   record.bpf.h        record header and drop counter (shared with the sampler)
 *   irq_context.bpf.h   which interrupt (if any) a wakeup comes from
 *   timers.bpf.h        timers armed from syscalls and their fires
 *   syscall_args.bpf.h  syscall number and argument decoding
 *   channel.bpf.h       fd identity (inode) and FD_INFO records
 *   user_stack.bpf.h    user stacks at blocking switch-outs
 *   stage.bpf.h         per-CPU staging of records, written to the ring in blobs
 *   wait_site.bpf.h     fd sets of blocking poll/select/epoll waits
 *   ownership.bpf.h     futex owners at blocking futex waits
 *   file_lock.bpf.h     fcntl/flock lock requests
 *   net_io.bpf.h        bytes moved on TCP/UDP sockets, with 4-tuple and sequence number
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

const volatile __u32 targ_exclude_tgid = 0;     /* the daemon: tracing it would feed back */
const volatile __u32 wakeup_bytes = 0;          /* wake the consumer only past this backlog; 0 = every record */
const volatile struct argus_syscall_class syscall_class[ARGUS_MAX_SYSCALLS] = {};
const volatile bool capture_stacks = false;     /* user stacks at blocking switch-outs */
const volatile __u64 id_key = 0;                /* scrambles kernel addresses into ids (random per load) */

/* The recording tier, switched at run time by argusd (docs/linux-tracer.md,
 * "Detail tiers"): argus_lean = 1 runs no syscall program (they return at
 * once; argusd also detaches them) and takes a blocking wait's syscall from
 * the task's saved registers at switch-out, a waker's at sched_waking.
 * argus_gen counts the switches to full: a syscall_state written before the
 * last one is stale (its sys_exit may have been missed while detached). */
__u32 argus_lean = 0;
__u32 argus_gen = 0;

/* The last channels a thread used: (fd, inode) pairs whose FD_INFO is known
 * to be fresh, so a thread talking on the same fds skips the LRU map. */
#define FD_CACHE_SLOTS 2

struct fd_cache_slot {
	__s32 fd;
	__u32 pad;
	__u64 inode;
	__u64 seen_ns;           /* FD_INFO written (by any thread of the process) */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, ARGUS_BPF_RINGBUF_DEFAULT);
} events SEC(".maps");

#include "record.bpf.h"

/* Kernels before 5.16 kept the CPU in task_struct itself. */
struct task_struct___cpu {
	unsigned int cpu;
};

static __always_inline bool excluded(__u32 tgid)
{
	return targ_exclude_tgid && tgid == targ_exclude_tgid;
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

#include "stage.bpf.h"
#include "scope.bpf.h"

/* A task recorded nowhere: argusd's own, or outside --cgroup / --netns. */
static __always_inline bool untraced(struct task_struct *t)
{
	return excluded(t->tgid) || outside(t);
}

/* What a thread is blocked in, so sched_switch can say why it sleeps. */
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
	__u8 net_family;         /* the call's fd is a TCP/UDP socket of this family (channel_of), else 0 */
	__u8 pad3[2];
	__u64 set_ptr;           /* poll: struct pollfd *; select: fd_set *readfds */
	__u64 set_ptr2;          /* select: fd_set *writefds */
	__u32 set_n;             /* poll: nfds; select: nfds */
	__u32 site_nr;           /* the last WAIT_SITE written: (id, nr) and when */
	__u64 site_id;
	__u64 site_ns;
	/* Where this call's 40-byte SYSCALL_ENTER was staged, so sys_exit can
	 * turn it into a SYSCALL record (merge_syscall_exit); cpu
	 * STAGE_POS_NONE when it cannot: a 48-byte enter, one staged at a
	 * nested level, or a call that was switched out since. */
	struct stage_pos enter_pos;
	__u32 gen;               /* argus_gen at sys_enter: older is stale */
	__u32 synth_nr;          /* lean tier: the last syscall written for a waker ... */
	__u64 synth_obj;
	__u64 synth_switches;    /* ... and the task's switch count then (one record per call) */
	/* NET_IO continuity (net_io.bpf.h): for a call on a TCP/UDP socket,
	 * the CPU its SYSCALL_ENTER was staged on (NIO_CPU_NONE: not staged)
	 * and the socket's inode at the enter; the thread's lineage: the CPU
	 * it last moved socket bytes on, that CPU's drop count then, and the
	 * lineage id those two were given. */
	__u64 nio_enter_inode;
	__u32 nio_enter_cpu;
	__u32 nio_cpu;
	__u64 nio_drops;
	__u32 nio_lineage;
	__u32 nio_pad;
};

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

/* A thread's syscall_state describes the call it is in: between a traced
 * sys_enter and its sys_exit, entered under the current full-tier period. */
static __always_inline bool sc_live(struct syscall_state *sc)
{
	return sc && sc->active && sc->gen == argus_gen;
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

/* comm is NUL-padded in the record whatever the source holds after the NUL. */
static __always_inline void copy_comm(char *dst, const char *src)
{
	__builtin_memset(dst, 0, ARGUS_COMM_LEN);
	bpf_probe_read_kernel_str(dst, ARGUS_COMM_LEN, src);
}

/* Plain loads through the typed pointer, not BPF_CORE_READ: that is a
 * bpf_probe_read_kernel call per field, on every wakeup. */
static __always_inline __u32 task_cpu_of(struct task_struct *p)
{
	struct task_struct___cpu *old = (void *)p;

	if (bpf_core_field_exists(old->cpu))
		return old->cpu;
	return p->thread_info.cpu;
}

static __always_inline __u8 task_state_of(bool preempt, unsigned int prev_state)
{
	/* A preempted task may already have set a sleep state it never reached. */
	if (preempt || prev_state == TASK_RUNNING)
		return ARGUS_STATE_RUNNABLE;
	if (prev_state & (TASK_DEAD | EXIT_DEAD | EXIT_ZOMBIE))
		return ARGUS_STATE_DEAD;
	/* A tracer's stop (ptrace, single step) is not a wait of the program. */
	if (prev_state & __TASK_TRACED)
		return ARGUS_STATE_TRACED;
	if (prev_state & __TASK_STOPPED)
		return ARGUS_STATE_OTHER;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		return ARGUS_STATE_BLOCKED_IO;
	/* TASK_INTERRUPTIBLE, and PREEMPT_RT's TASK_RTLOCK_WAIT: a lock wait. */
	return ARGUS_STATE_BLOCKED;
}

#include "irq_context.bpf.h"
#include "syscall_args.bpf.h"
#include "timers.bpf.h"
#include "channel.bpf.h"
#include "user_stack.bpf.h"
#include "wait_site.bpf.h"
#include "ownership.bpf.h"
#include "file_lock.bpf.h"
#include "net_io.bpf.h"

static __always_inline bool lock_layout(__u8 layout)
{
	return layout == ARGUS_SCL_FCNTL || layout == ARGUS_SCL_FLOCK;
}

/* 40 bytes instead of 48 when obj and obj2 fit in 32 bits (schema v3): an
 * fd and the inode of its pipe or socket, an epoll fd and maxevents; not a
 * futex address.  Returns whether the record was staged.  *pos: where a
 * 40-byte record lies in the stage, for merge_syscall_exit. */
static __always_inline bool emit_syscall_enter(struct stage_hold *h, __u32 nr, __s32 aux, __u64 obj, __u64 obj2,
					       __u64 pid_tgid, __u64 ts, struct stage_pos *pos)
{
	struct argus_ev_syscall_enter_short *s;
	struct argus_ev_syscall_enter *e;

	if (obj == (__u32)obj && obj2 == (__u32)obj2) {
		s = reserve(h, sizeof(*s));
		if (!s)
			return false;
		s->nr = nr;
		s->aux = aux;
		s->obj = obj;
		s->obj2 = obj2;
		fill_header(&s->h, ARGUS_EV_SYSCALL_ENTER, sizeof(*s), pid_tgid >> 32, (__u32)pid_tgid, ts);
		if (pos)
			submit_marked(h, s, pos);
		else
			submit(h, s);
		return true;
	}
	e = reserve(h, sizeof(*e));
	if (!e)
		return false;
	e->nr = nr;
	e->aux = aux;
	e->obj = obj;
	e->obj2 = obj2;
	fill_header(&e->h, ARGUS_EV_SYSCALL_ENTER, sizeof(*e), pid_tgid >> 32, (__u32)pid_tgid, ts);
	submit(h, e);
	return true;
}

#include "lean.bpf.h"

/* The switch-out of prev; with next (the same sched_switch's switch-in is
 * recorded too), one SWITCH record for both sides (schema v3): 48 bytes
 * instead of 40 + 32, and one stage write instead of two. */
static __always_inline void emit_switch(struct stage_hold *h, void *ctx, struct task_struct *prev,
					struct task_struct *next, bool preempt, unsigned int prev_state, __u64 ts)
{
	struct argus_ev_user_stack *stack = NULL;
	struct argus_ev_switch_out *e;
	struct syscall_state *sc;
	__u32 tid = prev->pid, stack_size = 0, size;
	__u64 stack_id = 0;
	__u16 type;
	__u8 state, reason;

	/* The syscall prev is in, if any: looked up once for the stack cache
	 * and the record. */
	state = task_state_of(preempt, prev_state);
	/* Under lean detail sched_switch_lean has just made it live or not. */
	sc = bpf_task_storage_get(&in_syscall, prev, NULL, 0);
	if (!sc_live(sc))
		sc = NULL;
	/* A call that blocks or is preempted keeps its separate enter: this
	 * switch record follows it in the stage anyway (gen), said here too. */
	if (sc)
		sc->enter_pos.cpu = STAGE_POS_NONE;
	if (capture_stacks && (state == ARGUS_STATE_BLOCKED || state == ARGUS_STATE_BLOCKED_IO) &&
	    !(prev->flags & PF_KTHREAD) && prev->mm)
		stack_id = capture_user_stack(ctx, prev, sc, ts, &stack, &stack_size);
	/* What the wait is on, written just before the switch_out it describes. */
	if (sc && (state == ARGUS_STATE_BLOCKED || state == ARGUS_STATE_BLOCKED_IO)) {
		if (sc->wait_reason == ARGUS_WAIT_POLL)
			emit_wait_site(h, prev, sc, ts);
		else if (sc->wait_reason == ARGUS_WAIT_FUTEX)
			emit_futex_state(h, prev, sc, ts);
	}
	/* Runnable switch-outs (most of them under load) carry no stack id. */
	if (next) {
		type = ARGUS_EV_SWITCH;
		size = stack_id ? sizeof(struct argus_ev_switch) : ARGUS_SWITCH_BASE_SIZE;
	} else {
		type = ARGUS_EV_SWITCH_OUT;
		size = stack_id ? sizeof(*e) : ARGUS_SWITCH_OUT_BASE_SIZE;
	}
	e = reserve(h, size);
	if (!e)
		return;
	if (next) {
		struct argus_ev_switch *sw = (void *)e;

		sw->next_pid = next->tgid;
		sw->next_tid = next->pid;
		if (stack_id)
			sw->user_stack_id = stack_id;
	} else if (stack_id) {
		e->user_stack_id = stack_id;
	}
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
	fill_header(&e->h, type, size, prev->tgid, tid, ts);
	submit(h, e);
	if (stack && stack_size >= 40 && stack_size <= sizeof(*stack))
		output(h, stack, stack_size);
}

static __always_inline void emit_switch_in(struct stage_hold *h, struct task_struct *next, struct task_struct *prev,
					   __u64 ts)
{
	struct argus_ev_switch_in *e;

	e = reserve(h, sizeof(*e));
	if (!e)
		return;
	e->prev_tid = prev->pid;
	e->prev_pid = prev->tgid;
	fill_header(&e->h, ARGUS_EV_SWITCH_IN, sizeof(*e), next->tgid, next->pid, ts);
	submit(h, e);
}

static __always_inline int handle_sched_switch(struct stage_hold *h, void *ctx, bool preempt, struct task_struct *prev,
					       struct task_struct *next, unsigned int prev_state)
{
	__u64 ts = bpf_ktime_get_ns();
	/* pid 0 is the per-CPU idle task: its "switches" are idle periods. */
	bool out = prev->pid && !untraced(prev), in = next->pid && !untraced(next);

	if (out)
		emit_switch(h, ctx, prev, in ? next : NULL, preempt, prev_state, ts);
	else if (in)
		emit_switch_in(h, next, prev, ts);
	return 0;
}

static __always_inline int handle_wakeup(struct stage_hold *h, struct task_struct *cur, struct task_struct *p,
					 __u16 type)
{
	__u32 waker_pid = cur->tgid, waker_tid = cur->pid;
	struct argus_ev_wakeup *e;
	__u32 wakee_pid = p->tgid;
	struct wake_ctx w;
	__u64 ts;

	if (excluded(wakee_pid))
		return 0;
	wake_context(cur, p, &w);
	/* An interrupt that lands while the daemon runs wakes on nobody's
	 * behalf: only the daemon's own wakeups are left out. */
	if (w.context == ARGUS_WAKE_TASK && excluded(waker_pid))
		return 0;
	/* Scoped: a wakeup with an end inside is kept (it crosses the boundary
	 * or stays inside); an interrupt's needs its wakee inside. */
	if (outside(p) && (w.context != ARGUS_WAKE_TASK || outside(cur)))
		return 0;
	ts = bpf_ktime_get_ns();
	e = reserve(h, sizeof(*e));
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
	fill_header(&e->h, type, sizeof(*e), waker_pid, waker_tid, ts);
	submit(h, e);
	return 0;
}

static __always_inline int handle_sys_enter(struct pt_regs *regs, long id)
{
	struct argus_syscall_class cls;
	struct syscall_state *sc;
	struct task_struct *cur;
	struct stage_hold h;
	__u64 obj, obj2, ts, pid_tgid;
	bool recorded;
	__u32 tid;
	__s32 aux;

	if ((unsigned long)id >= ARGUS_MAX_SYSCALLS || argus_lean)
		return 0;
	cls = syscall_class[id];
	if (cls.layout == ARGUS_SCL_NONE || compat_syscall(regs))
		return 0;
	/* One helper call for the task, its ids and its fds (each helper call
	 * is a call and a return thunk: bench/bpf_line_profile.py). */
	cur = bpf_get_current_task_btf();
	tid = cur->pid;
	pid_tgid = (__u64)cur->tgid << 32 | tid;
	if (untraced(cur))
		return 0;
	if (cls.layout == ARGUS_SCL_FCNTL && !fcntl_lock_cmd(PT_REGS_PARM2_SYSCALL(regs)))
		return 0;
	stage_enter(&h);
	decode_args(cls.layout, regs, &aux, &obj, &obj2);
	/* The wait reason must not depend on room in the ring buffer. */
	sc = bpf_task_storage_get(&in_syscall, cur, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	ts = bpf_ktime_get_ns();
	if (cls.layout == ARGUS_SCL_FD_CHAN || lock_layout(cls.layout))
		obj2 = channel_of(&h, cur, sc, pid_tgid >> 32, tid, (int)obj, ts);
	if (sc) {
		sc->nr = id;
		sc->wait_reason = cls.wait_reason;
		sc->obj = obj;
		sc->active = 1;
		sc->gen = argus_gen;
		sc->aux = aux;
		sc->layout = cls.layout;
		wait_site_args(sc, cls.layout, regs);
	}
	if (sc)
		sc->enter_pos.cpu = STAGE_POS_NONE;
	recorded = emit_syscall_enter(&h, id, aux, obj, obj2, pid_tgid, ts, sc ? &sc->enter_pos : NULL);
	if (recorded && lock_layout(cls.layout))
		emit_file_lock(&h, regs, cls.layout, obj2, pid_tgid >> 32, tid, ts);
	if (sc && sc->net_family)
		net_io_note_enter(sc, recorded, obj2);
	stage_exit(&h, false);
	return 0;
}

/* The exit of a call whose 40-byte SYSCALL_ENTER is still the last record
 * staged on this CPU (stage.bpf.h, gen): the call did not block nor was it
 * switched out, no other record was written on this CPU since, and the
 * stage was not flushed.  The enter is rewritten in place into one 48-byte
 * SYSCALL record (schema v4) that the decoder splits into the same two
 * rows: 24 bytes less per call.  Left alone, and the exit written as its own
 * record, when ret does not fit in 32 bits or the call took 2^32 ns or
 * more.  Returns whether the exit was recorded so. */
static __always_inline struct argus_event_header *merge_syscall_exit(struct stage_hold *h, struct syscall_state *sc,
								     __u32 tid, long ret, __u64 now)
{
	struct argus_ev_syscall *e;
	__u64 delta;

	if (sc->enter_pos.cpu == STAGE_POS_NONE || ret != (__s32)ret)
		return NULL;
	e = stage_last_record(h, &sc->enter_pos, sizeof(*e));
	sc->enter_pos.cpu = STAGE_POS_NONE;
	/* The checks on the record itself cannot fail while gen matched; they
	 * keep a wrong rewrite impossible rather than unlikely. */
	if (!e || e->h.type != ARGUS_EV_SYSCALL_ENTER || e->h.size != ARGUS_SYSCALL_ENTER_SHORT_SIZE ||
	    e->h.tid != tid)
		return NULL;
	delta = now - e->h.ts_ns;
	if (delta > 0xffffffffull)
		return NULL;
	/* nr, aux, obj, obj2 and the header stay where the enter had them. */
	e->ret = ret;
	e->exit_delta_ns = delta;
	e->h.type = ARGUS_EV_SYSCALL;
	e->h.size = sizeof(*e);
	stage_grow_last(h, ARGUS_SYSCALL_ENTER_SHORT_SIZE, sizeof(*e));
	return &e->h;
}

static __always_inline int handle_sys_exit(struct pt_regs *regs, long ret)
{
	struct argus_ev_syscall_exit_short *s;
	struct argus_ev_syscall_exit *e;
	struct argus_event_header *exit_h;
	long nr = syscall_nr_of(regs);
	struct syscall_state *sc;
	struct task_struct *cur;
	struct stage_hold h;
	__u32 tid, enter_nr;
	__u64 pid_tgid, now;

	/* Every syscall on the machine passes here: reject untraced ones by
	 * number before looking at the task. */
	if ((unsigned long)nr >= ARGUS_MAX_SYSCALLS || syscall_class[nr].layout == ARGUS_SCL_NONE || argus_lean)
		return 0;
	if (syscall_class[nr].layout == ARGUS_SCL_FCNTL && !fcntl_lock_cmd(PT_REGS_PARM2_SYSCALL(regs)))
		return 0;
	cur = bpf_get_current_task_btf();
	sc = bpf_task_storage_get(&in_syscall, cur, NULL, 0);
	if (!sc_live(sc))
		return 0;
	tid = cur->pid;
	pid_tgid = (__u64)cur->tgid << 32 | tid;
	enter_nr = sc->nr;
	sc->active = 0;
	/* One clock read for the exit and the NET_IO that follows it. */
	now = bpf_ktime_get_ns();
	stage_enter(&h);
	/* exit_h: the staged record holding the exit (SYSCALL or SYSCALL_EXIT),
	 * NULL when none was staged; emit_net_io may flag it. */
	exit_h = merge_syscall_exit(&h, sc, tid, ret, now);
	if (exit_h) {
		/* the exit is in the SYSCALL record */
	} else if (ret == (__s32)ret) {
		/* 32 bytes instead of 40 for every ret that fits (schema v2). */
		s = reserve(&h, sizeof(*s));
		if (s) {
			s->nr = enter_nr;
			s->ret = (__s32)ret;
			fill_header(&s->h, ARGUS_EV_SYSCALL_EXIT, sizeof(*s), pid_tgid >> 32, tid, now);
			submit(&h, s);
			exit_h = &s->h;
		}
	} else {
		e = reserve(&h, sizeof(*e));
		if (e) {
			e->nr = enter_nr;
			e->reserved = 0;
			e->ret = ret;
			fill_header(&e->h, ARGUS_EV_SYSCALL_EXIT, sizeof(*e), pid_tgid >> 32, tid, now);
			submit(&h, e);
			exit_h = &e->h;
		}
	}
	/* After the exit record: the NET_IO follows the call it describes. */
	if (ret > 0 && sc->net_family)
		emit_net_io(&h, regs, cur, sc, syscall_class[nr].net_io, ret, pid_tgid, now, exit_h);
	stage_exit(&h, false);
	return 0;
}

static __always_inline int handle_fork(struct stage_hold *h, struct task_struct *parent, struct task_struct *child)
{
	struct argus_ev_fork *e;

	if (excluded(parent->tgid) || (outside(parent) && outside(child)))
		return 0;
	e = reserve(h, sizeof(*e));
	if (!e)
		return 0;
	e->child_pid = child->tgid;
	e->child_tid = child->pid;
	copy_comm(e->comm, child->comm);
	fill_header(&e->h, ARGUS_EV_FORK, sizeof(*e), parent->tgid, parent->pid, bpf_ktime_get_ns());
	submit(h, e);
	if (child->pid == child->tgid)          /* a new process: where it starts */
		emit_proc_ns(h, child);
	return 0;
}

static __always_inline int emit_comm(struct stage_hold *h, struct task_struct *p, __u16 type, const char *comm)
{
	struct argus_ev_comm *e;

	if (untraced(p))
		return 0;
	e = reserve(h, sizeof(*e));
	if (!e)
		return 0;
	copy_comm(e->comm, comm);
	fill_header(&e->h, type, sizeof(*e), p->tgid, p->pid, bpf_ktime_get_ns());
	submit(h, e);
	return 0;
}

static __always_inline int handle_exit(struct stage_hold *h, struct task_struct *p)
{
	struct argus_ev_exit *e;
	__u32 tid = p->pid;

	if (untraced(p))
		return 0;
	e = reserve(h, sizeof(*e));
	if (!e)
		return 0;
	e->exit_code = p->exit_code;
	e->is_group_leader = p->pid == p->tgid;
	fill_header(&e->h, ARGUS_EV_EXIT, sizeof(*e), p->tgid, tid, bpf_ktime_get_ns());
	submit(h, e);
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
	struct stage_hold h;

	stage_enter(&h);
	handle_hrtimer_expire(&h, timer);
	stage_exit(&h, true);
	return 0;
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

/*
 * Syscalls, two ways; the loader attaches one (tracer/daemon/platform/platform_linux.c,
 * `argus status` says which):
 *
 * fentry/fexit slots on the entry points of the traced syscalls only
 * (__x64_sys_read, ...), bound to their targets by the loader from its
 * syscall table.  Untraced syscalls run no program at all, and traced ones
 * stay on the kernel's fast syscall path: a raw_syscalls program puts every
 * syscall of every task on the tracing slow path (TIF_SYSCALL_TRACEPOINT)
 * and runs once per syscall on the machine.  The entry points take the
 * user's pt_regs, so the number (orig_ax) and the arguments are where the
 * tracepoints see them and both ways share one handler.  Exits come first:
 * attached before the entries, no exit waits for an entry never seen.
 *
 * raw_syscalls tracepoints: the fallback where trampolines are unavailable.
 */

/* The slots call these rather than inline the handlers: one copy in the
 * object (libbpf appends it to each slot it loads) instead of 128, which
 * made argusd ten times larger.  The tracepoints keep them inlined: the
 * call cost ~20 ns per run there (bpf_stats). */
static __noinline int slot_sys_exit(struct pt_regs *regs, long ret)
{
	return handle_sys_exit(regs, ret);
}

static __noinline int slot_sys_enter(struct pt_regs *regs)
{
	return handle_sys_enter(regs, syscall_nr_of(regs));
}

#define SYS_EXIT_SLOT(n)                                                \
	SEC("fexit")                                                    \
	int BPF_PROG(sys_exit_##n, struct pt_regs *regs, long ret)      \
	{                                                               \
		return slot_sys_exit(regs, ret);                        \
	}
#define SYS_ENTER_SLOT(n)                                               \
	SEC("fentry")                                                   \
	int BPF_PROG(sys_enter_##n, struct pt_regs *regs)               \
	{                                                               \
		return slot_sys_enter(regs);                            \
	}
/* ARGUS_SYSCALL_SLOTS (64) of each, named <prefix>00 .. <prefix>77. */
#define SLOTS8(m, hi) m(hi##0) m(hi##1) m(hi##2) m(hi##3) m(hi##4) m(hi##5) m(hi##6) m(hi##7)
#define SLOTS64(m) SLOTS8(m, 0) SLOTS8(m, 1) SLOTS8(m, 2) SLOTS8(m, 3) \
		   SLOTS8(m, 4) SLOTS8(m, 5) SLOTS8(m, 6) SLOTS8(m, 7)

SLOTS64(SYS_EXIT_SLOT)
SLOTS64(SYS_ENTER_SLOT)

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
	struct stage_hold h;

	stage_enter(&h);
	handle_fork(&h, parent, child);
	stage_exit(&h, on_idle());
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct stage_hold h;

	stage_enter(&h);
	emit_comm(&h, p, ARGUS_EV_EXEC, p->comm);
	if (!untraced(p))
		emit_proc_ns(&h, p);
	stage_exit(&h, on_idle());
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *p)
{
	struct stage_hold h;

	stage_enter(&h);
	handle_exit(&h, p);
	stage_exit(&h, on_idle());
	return 0;
}

/* After the move: the task's cgroup is the new one.  Also fires for moves in
 * v1 hierarchies, which repeat the unchanged v2 id (harmless). */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(cgroup_attach_task, struct cgroup *dst_cgrp, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	struct stage_hold h;

	if (untraced(task))
		return 0;
	stage_enter(&h);
	emit_proc_ns(&h, task);
	/* Scoped, a process moved in was outside at its fork and exec: its
	 * name too (a group's other threads are named by argusd's refresh). */
	if (scope_on)
		emit_comm(&h, task, ARGUS_EV_THREAD_NAME, task->comm);
	stage_exit(&h, on_idle());
	return 0;
}

/* Fires before the new name is copied in, so the name comes from the argument. */
SEC("tp_btf/task_rename")
int BPF_PROG(task_rename, struct task_struct *task, const char *comm)
{
	struct stage_hold h;

	stage_enter(&h);
	emit_comm(&h, task, ARGUS_EV_THREAD_NAME, comm);
	stage_exit(&h, on_idle());
	return 0;
}

/*
 * The lean tier (lean.bpf.h): attached just before sched_switch and
 * sched_waking, so they run first on the same CPU and their records are
 * staged before the switch or wakeup they describe.  Separate programs
 * rather than a branch in those: the decoding's paths, multiplied by
 * sched_switch's own, passed the verifier's million instructions.  Under
 * full detail they return at the flag.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_lean, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct stage_hold h;

	if (!argus_lean || !prev->pid || untraced(prev))
		return 0;
	stage_enter(&h);
	lean_switch_out(&h, prev, task_state_of(preempt, prev_state), bpf_ktime_get_ns());
	stage_exit(&h, false);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking_lean, struct task_struct *p)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct stage_hold h;
	struct wake_ctx w;

	if (!argus_lean || !cur->pid || excluded(cur->tgid) || excluded(p->tgid) || (outside(cur) && outside(p)))
		return 0;
	wake_context(cur, p, &w);
	if (w.context != ARGUS_WAKE_TASK)
		return 0;
	stage_enter(&h);
	lean_waker(&h, cur, bpf_ktime_get_ns());
	stage_exit(&h, false);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct stage_hold h;

	stage_enter(&h);
	stage_note_switch(&h, prev->pid, next->pid);
	handle_sched_switch(&h, ctx, preempt, prev, next, prev_state);
	stage_exit(&h, !next->pid || !prev->pid);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
	/* One helper call for the waker's ids, its kind and the idle test. */
	struct task_struct *cur = bpf_get_current_task_btf();
	struct stage_hold h;

	stage_enter(&h);
	handle_wakeup(&h, cur, p, ARGUS_EV_WAKEUP);
	stage_exit(&h, !cur->pid);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct stage_hold h;

	stage_enter(&h);
	handle_wakeup(&h, cur, p, ARGUS_EV_WAKEUP_NEW);
	stage_exit(&h, !cur->pid);
	return 0;
}

/* Dual-licensed; the kernel is told GPL so GPL-only helpers are usable. */
char LICENSE[] SEC("license") = "GPL";
