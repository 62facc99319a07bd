// SPDX-License-Identifier: Apache-2.0
/*
 * kdebug decoder: see kdebug_decode.h for the algorithm and invariants, and
 * docs/macos.md for the mapping table.  Facts (debugids, argument order) are
 * from xnu's open source, cited in kdebug.h; the code is ours.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#ifndef __APPLE__
#include <sys/random.h>    /* getrandom; macOS has arc4random_buf in <stdlib.h> */
#endif

#include "argus_event.h"
#include "kdebug_decode.h"

#define KDD_MAX_CPUS 1024u           /* cpuids above this share slots (IOPs, bogus input) */

/* What a syscall in progress means for a switch-out: which argument names
 * the object waited on, and the wait reason. */
enum sc_layout {
	SCL_FD,          /* obj = arg1 (fd), aux = arg3 (length, clipped) */
	SCL_ADDR1,       /* obj = arg1 (user address: cv, mutex, sem, msg buffer) */
	SCL_CVWAIT,      /* obj = arg1 (cv), obj2 = arg4 (mutex) */
	SCL_ULOCK,       /* aux = arg1 (operation), obj = arg2 (address) */
	SCL_NONE,
	SCL_MACH_MSG,    /* mach_msg_trap: obj = arg1 (msg), aux = arg2 (options) */
	SCL_MACH_MSG2,   /* mach_msg2_trap: obj = arg4 (remote | local port names), aux = arg2 (options) */
	SCL_PID,         /* obj = arg1 (pid) */
};

struct sc_info {
	uint16_t nr;
	uint8_t layout;
	uint8_t reason;
};

/* BSD syscalls (bsd/kern/syscalls.master numbers). */
static const struct sc_info bsd_table[] = {
	{ 3, SCL_FD, ARGUS_WAIT_READ },          /* read */
	{ 4, SCL_FD, ARGUS_WAIT_WRITE },         /* write */
	{ 7, SCL_PID, ARGUS_WAIT_CHILD },        /* wait4 */
	{ 27, SCL_FD, ARGUS_WAIT_READ },         /* recvmsg */
	{ 28, SCL_FD, ARGUS_WAIT_WRITE },        /* sendmsg */
	{ 29, SCL_FD, ARGUS_WAIT_READ },         /* recvfrom */
	{ 30, SCL_FD, ARGUS_WAIT_ACCEPT },       /* accept */
	{ 93, SCL_NONE, ARGUS_WAIT_POLL },       /* select */
	{ 95, SCL_FD, ARGUS_WAIT_OTHER_SYSCALL },/* fsync */
	{ 98, SCL_FD, ARGUS_WAIT_ACCEPT },       /* connect */
	{ 111, SCL_NONE, ARGUS_WAIT_OTHER_SYSCALL }, /* sigsuspend */
	{ 120, SCL_FD, ARGUS_WAIT_READ },        /* readv */
	{ 121, SCL_FD, ARGUS_WAIT_WRITE },       /* writev */
	{ 133, SCL_FD, ARGUS_WAIT_WRITE },       /* sendto */
	{ 153, SCL_FD, ARGUS_WAIT_READ },        /* pread */
	{ 154, SCL_FD, ARGUS_WAIT_WRITE },       /* pwrite */
	{ 173, SCL_NONE, ARGUS_WAIT_CHILD },     /* waitid */
	{ 230, SCL_NONE, ARGUS_WAIT_POLL },      /* poll */
	{ 271, SCL_ADDR1, ARGUS_WAIT_FUTEX },    /* sem_wait */
	{ 301, SCL_ADDR1, ARGUS_WAIT_FUTEX },    /* psynch_mutexwait */
	{ 302, SCL_ADDR1, ARGUS_WAIT_FUTEX },    /* psynch_mutexdrop (wakes) */
	{ 303, SCL_ADDR1, ARGUS_WAIT_FUTEX },    /* psynch_cvbroad (wakes) */
	{ 304, SCL_ADDR1, ARGUS_WAIT_FUTEX },    /* psynch_cvsignal (wakes) */
	{ 305, SCL_CVWAIT, ARGUS_WAIT_FUTEX },   /* psynch_cvwait */
	{ 306, SCL_ADDR1, ARGUS_WAIT_FUTEX },    /* psynch_rw_rdlock */
	{ 307, SCL_ADDR1, ARGUS_WAIT_FUTEX },    /* psynch_rw_wrlock */
	{ 330, SCL_NONE, ARGUS_WAIT_OTHER_SYSCALL }, /* __sigwait */
	{ 334, SCL_NONE, ARGUS_WAIT_SLEEP },     /* __semwait_signal: nanosleep, usleep */
	{ 363, SCL_FD, ARGUS_WAIT_POLL },        /* kevent */
	{ 368, SCL_NONE, ARGUS_WAIT_POLL },      /* workq_kernreturn: a pool thread parks */
	{ 369, SCL_FD, ARGUS_WAIT_POLL },        /* kevent64 */
	{ 374, SCL_FD, ARGUS_WAIT_POLL },        /* kevent_qos */
	{ 375, SCL_ADDR1, ARGUS_WAIT_POLL },     /* kevent_id */
	{ 396, SCL_FD, ARGUS_WAIT_READ },        /* read_nocancel */
	{ 397, SCL_FD, ARGUS_WAIT_WRITE },       /* write_nocancel */
	{ 400, SCL_PID, ARGUS_WAIT_CHILD },      /* wait4_nocancel */
	{ 401, SCL_FD, ARGUS_WAIT_READ },        /* recvmsg_nocancel */
	{ 402, SCL_FD, ARGUS_WAIT_WRITE },       /* sendmsg_nocancel */
	{ 403, SCL_FD, ARGUS_WAIT_READ },        /* recvfrom_nocancel */
	{ 404, SCL_FD, ARGUS_WAIT_ACCEPT },      /* accept_nocancel */
	{ 407, SCL_NONE, ARGUS_WAIT_POLL },      /* select_nocancel */
	{ 409, SCL_FD, ARGUS_WAIT_ACCEPT },      /* connect_nocancel */
	{ 411, SCL_FD, ARGUS_WAIT_READ },        /* readv_nocancel */
	{ 412, SCL_FD, ARGUS_WAIT_WRITE },       /* writev_nocancel */
	{ 413, SCL_FD, ARGUS_WAIT_WRITE },       /* sendto_nocancel */
	{ 414, SCL_FD, ARGUS_WAIT_READ },        /* pread_nocancel */
	{ 415, SCL_FD, ARGUS_WAIT_WRITE },       /* pwrite_nocancel */
	{ 417, SCL_NONE, ARGUS_WAIT_POLL },      /* poll_nocancel */
	{ 420, SCL_ADDR1, ARGUS_WAIT_FUTEX },    /* sem_wait_nocancel */
	{ 423, SCL_NONE, ARGUS_WAIT_SLEEP },     /* __semwait_signal_nocancel */
	{ 515, SCL_ULOCK, ARGUS_WAIT_FUTEX },    /* ulock_wait (os_unfair_lock, dispatch) */
	{ 516, SCL_ULOCK, ARGUS_WAIT_FUTEX },    /* ulock_wake */
	{ 544, SCL_ULOCK, ARGUS_WAIT_FUTEX },    /* ulock_wait2 */
};

/* Mach traps (osfmk/kern/syscall_sw.c numbers). */
static const struct sc_info mach_table[] = {
	{ 31, SCL_MACH_MSG, ARGUS_WAIT_READ },   /* mach_msg_trap: POLL / READ / WRITE by options */
	{ 32, SCL_MACH_MSG, ARGUS_WAIT_READ },   /* mach_msg_overwrite_trap */
	{ 36, SCL_ADDR1, ARGUS_WAIT_FUTEX },     /* semaphore_wait_trap: obj = semaphore port name */
	{ 37, SCL_ADDR1, ARGUS_WAIT_FUTEX },     /* semaphore_wait_signal_trap */
	{ 38, SCL_ADDR1, ARGUS_WAIT_FUTEX },     /* semaphore_timedwait_trap */
	{ 47, SCL_MACH_MSG2, ARGUS_WAIT_READ },  /* mach_msg2_trap */
	{ 59, SCL_NONE, ARGUS_WAIT_YIELD },      /* swtch_pri */
	{ 60, SCL_NONE, ARGUS_WAIT_YIELD },      /* swtch */
	{ 61, SCL_NONE, ARGUS_WAIT_YIELD },      /* thread_switch */
	{ 90, SCL_NONE, ARGUS_WAIT_SLEEP },      /* mach_wait_until_trap */
};

struct kdd_thread {
	uint64_t tid;                /* 0 = empty slot */
	uint32_t pid;
	bool has_pid;
	uint64_t blocked_epoch;      /* == kdd.epoch: MACH_BLOCK since the last dispatch (a real wait) */
	bool idle;                   /* a processor's idle thread */
	bool main_thread;            /* its process's first thread: reported as tid = pid */
	bool in_sc;
	uint32_t sc_nr;              /* namespaced */
	uint8_t sc_reason;
	int32_t sc_aux;
	uint64_t sc_obj, sc_obj2;
	uint64_t wait_event;         /* patched kernel: the event of the wait being entered */
	char comm[ARGUS_COMM_LEN];
};

#define KDD_PENDING 16                /* patched wakeups awaiting their stock MAKE_RUNNABLE, per CPU */
#define KDD_ARMS 4096                 /* timer arms remembered until their callout (direct-mapped) */

struct kdd_cpu {
	uint32_t intr_depth;
	uint32_t intr_type;
	/* ARGUS_WAKEUP already emitted for these wakees: skip their stock
	 * MAKE_RUNNABLE.  A waitq wakeup may take several threads off the queue
	 * before making each runnable, hence a small ring, oldest overwritten. */
	uint64_t patched_wakee[KDD_PENDING];
	uint32_t patched_next;
	uint64_t callout;            /* timer call whose callout runs here (DECR_TIMER_CALLOUT), or 0 */
};

/* A timer call armed by a user thread inside a syscall (its wait timeout,
 * a sleep, a kqueue timer): the TIMER record at its callout names it. */
struct kdd_arm {
	uint64_t call;               /* permuted timer_call, 0 = empty */
	uint64_t ts, deadline;       /* mach time */
	uint32_t pid, tid;
};

struct kdd {
	struct kdd_config cfg;
	kdd_emit_fn emit;
	void *ctx;
	struct kdd_thread *threads;  /* open addressing, power-of-two capacity */
	size_t cap, count;
	uint64_t seed;               /* keys hash_tid: crafted ids cannot aim at one probe chain */
	uint64_t epoch;              /* bumped by a lost-events marker: every wait is forgotten in O(1) */
	struct kdd_cpu cpus[KDD_MAX_CPUS];
	struct kdd_arm arms[KDD_ARMS];
	struct kdd_stats st;
};

/* ---------- thread table ---------- */

/* murmur3's finalizer is a public bijection: without the seed a crafted file
 * could pick ids that all land in one probe chain (quadratic work). */
static size_t hash_tid(uint64_t seed, uint64_t tid, size_t cap)
{
	tid ^= seed;
	tid ^= tid >> 33;
	tid *= 0xff51afd7ed558ccdull;
	tid ^= tid >> 33;
	return (size_t)tid & (cap - 1);
}

static uint64_t random_seed(void)
{
	uint64_t seed = 0;

#ifdef __APPLE__
	/* macOS has no getrandom(2); arc4random_buf never fails or blocks. */
	arc4random_buf(&seed, sizeof seed);
#else
	/* getrandom(2) never blocks once the pool is initialised at boot; a
	 * failure leaves a fixed seed, which only costs the hardening. */
	if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != sizeof seed)
		seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&seed;
#endif
	return seed;
}

static struct kdd_thread *find_slot(const struct kdd *d, struct kdd_thread *tab, size_t cap, uint64_t tid)
{
	size_t i = hash_tid(d->seed, tid, cap);
	while (tab[i].tid && tab[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int grow(struct kdd *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 1024;
	struct kdd_thread *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < d->cap; i++)
		if (d->threads[i].tid)
			*find_slot(d, n, ncap, d->threads[i].tid) = d->threads[i];
	free(d->threads);
	d->threads = n;
	d->cap = ncap;
	return 0;
}

static struct kdd_thread *thread_find(struct kdd *d, uint64_t tid)
{
	if (!tid || !d->cap)
		return NULL;
	struct kdd_thread *t = find_slot(d, d->threads, d->cap, tid);
	return t->tid ? t : NULL;
}

/* Room for `n` more threads without growing.  Called once per record,
 * before any thread_get, so pointers a handler holds stay valid (growing
 * rehashes the table).  A record creates at most two threads. */
static void reserve(struct kdd *d, size_t n)
{
	while ((d->count + n) * 2 > d->cap && grow(d) == 0)
		;
}

/* The thread's state, created on first sight; NULL for tid 0 or when the
 * table is full because memory ran out (the caller then decodes without
 * state). */
static struct kdd_thread *thread_get(struct kdd *d, uint64_t tid)
{
	if (!tid)
		return NULL;
	if ((d->count + 1) * 2 > d->cap && !thread_find(d, tid))
		return NULL;
	struct kdd_thread *t = find_slot(d, d->threads, d->cap, tid);
	if (!t->tid) {
		t->tid = tid;
		d->count++;
	}
	return t;
}

/* Linux-style ids: idle threads are tid 0 / pid 0; a process's main thread
 * is tid = pid (the diagnosis finds main threads that way); unknown threads
 * are their own process until a NEWTHREAD, the thread map or a syscall END
 * says otherwise. */
#define KDD_PID_MAX 99999u           /* bsd/sys/proc_internal.h */
#define KDD_TID_HIGH 0x80000000u      /* marks a small thread id that could equal a pid */

static uint32_t out_tid(const struct kdd_thread *t, uint64_t tid)
{
	if (t && t->idle)
		return 0;
	if (t && t->main_thread && t->has_pid && t->pid)
		return t->pid;
	/* Thread ids start at 101 at boot, so early threads (kernel_task's,
	 * launchd's) have ids in the pid range: keep them clear of the main
	 * threads' tid = pid. */
	uint32_t v = (uint32_t)tid;
	return v <= KDD_PID_MAX ? v | KDD_TID_HIGH : v;
}

static uint32_t out_pid(const struct kdd_thread *t, uint64_t tid)
{
	if (!t)
		return (uint32_t)tid;
	if (t->idle)
		return 0;
	return t->has_pid ? t->pid : (uint32_t)tid;
}

static struct kdd_cpu *cpu_of(struct kdd *d, uint32_t cpuid)
{
	return &d->cpus[cpuid % KDD_MAX_CPUS];
}

/* ---------- output ---------- */

uint64_t kdd_ns(const struct kdd *d, uint64_t t)
{
	uint64_t n = d->cfg.timebase_numer, m = d->cfg.timebase_denom;
	if (!n || !m || n == m)
		return t;
	/* split so that t * numer cannot overflow for any realistic timebase */
	return (t / m) * n + (t % m) * n / m;
}

static void header(struct kdd *d, struct argus_event_header *h, uint16_t type, uint16_t size,
		   uint64_t ts, uint32_t pid, uint32_t tid, uint32_t cpu)
{
	h->ts_ns = kdd_ns(d, ts);
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	h->cpu = (uint16_t)cpu;
	h->flags = 0;
}

static int emit(struct kdd *d, const struct argus_event_header *h)
{
	if (d->cfg.exclude_pid && h->pid == d->cfg.exclude_pid && h->type != ARGUS_EV_WAKEUP)
		return 0;
	int rc = d->emit(d->ctx, h, h->size);
	if (rc == 0)
		d->st.emitted++;
	return rc;
}

static void copy_comm(char dst[ARGUS_COMM_LEN], const void *src, size_t srclen)
{
	size_t n = srclen < ARGUS_COMM_LEN - 1 ? srclen : ARGUS_COMM_LEN - 1;
	memset(dst, 0, ARGUS_COMM_LEN);
	memcpy(dst, src, n);
	dst[n] = 0;
	dst[strnlen(dst, ARGUS_COMM_LEN)] = 0;
}

/* ---------- thread map ---------- */

static bool is_kernel_task(const struct kd_threadmap64 *e)
{
	return e->valid == 1 && strncmp(e->command, "kernel_task", sizeof(e->command)) == 0;
}

/* Thread map entries grouped by process: (pid, is kernel_task, tid). */
struct map_key {
	int32_t pid;
	uint8_t kernel;
	uint64_t tid;
	size_t i;                    /* index in the map */
};

static int map_key_cmp(const void *a, const void *b)
{
	const struct map_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->kernel != y->kernel)
		return x->kernel < y->kernel ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* is_main[i]: map[i] is the lowest thread id of its process (thread ids only
 * grow).  One sort, O(n log n): a crafted map of a million distinct pids
 * must not cost n^2 comparisons. */
static int main_threads(const struct kd_threadmap64 *map, size_t n, bool *is_main)
{
	struct map_key *keys = malloc((n ? n : 1) * sizeof *keys);
	size_t m = 0;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		is_main[i] = false;
		if (!map[i].thread || map[i].valid < 0)
			continue;
		keys[m++] = (struct map_key){ map[i].valid, is_kernel_task(&map[i]), map[i].thread, i };
	}
	qsort(keys, m, sizeof *keys, map_key_cmp);
	for (size_t j = 0, first = 0; j < m; j++) {
		if (keys[j].pid != keys[first].pid || keys[j].kernel != keys[first].kernel)
			first = j;                       /* a new process */
		is_main[keys[j].i] = keys[j].tid == keys[first].tid;   /* ties: every copy of the lowest */
	}
	free(keys);
	return 0;
}

int kdd_threadmap(struct kdd *d, const struct kd_threadmap64 *map, size_t n, uint64_t ts)
{
	bool *is_main = malloc(n ? n : 1);
	int rc = 0;

	if (!is_main)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!map[i].thread || map[i].valid < 0)
			continue;           /* padding entries (V1 files) */
		reserve(d, 1);
		struct kdd_thread *t = thread_get(d, map[i].thread);
		if (!t) {
			rc = -ENOMEM;
			goto out;
		}
		t->pid = is_kernel_task(&map[i]) ? 0 : (uint32_t)map[i].valid;
		t->has_pid = true;
		copy_comm(t->comm, map[i].command, strnlen(map[i].command, sizeof(map[i].command)));
	}
	rc = main_threads(map, n, is_main);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!map[i].thread || map[i].valid < 0)
			continue;
		struct kdd_thread *t = thread_find(d, map[i].thread);
		if (!t)
			continue;
		t->main_thread = is_main[i] && t->pid != 0;   /* kernel threads keep their ids */
		struct argus_ev_proc_snapshot r;
		memset(&r, 0, sizeof(r));
		header(d, &r.h, ARGUS_EV_PROC_SNAPSHOT, sizeof(r), ts, t->pid, out_tid(t, t->tid), 0);
		r.ppid = 0;                /* the thread map does not carry it */
		r.is_main_thread = is_main[i];
		memcpy(r.comm, t->comm, ARGUS_COMM_LEN);
		rc = emit(d, &r.h);
	}
out:
	free(is_main);
	return rc < 0 ? rc : 0;
}

/* ---------- scheduler ---------- */

static void wait_of(const struct kdd_thread *t, __u8 *reason, __u32 *nr, __u64 *obj)
{
	*reason = ARGUS_WAIT_NONE;
	*nr = ARGUS_SYSCALL_NONE;
	*obj = 0;
	if (!t)
		return;
	if (t->in_sc) {
		*reason = t->sc_reason;
		*nr = t->sc_nr;
		*obj = t->sc_obj;
	}
	if (!*obj && t->wait_event)
		*obj = t->wait_event;     /* MACH_WAIT / patched kernel: the wait event itself */
}

static int on_switch(struct kdd *d, const struct kd_buf64 *k)
{
	uint64_t prev = k->arg5, next = k->arg2;
	struct kdd_thread *p = thread_get(d, prev);
	struct kdd_thread *n = thread_get(d, next);
	if (prev == next) {
		/* thread_invoke chose the blocking thread itself (it was woken
		 * before it got off the CPU): no switch, as on Linux */
		if (p) {
			p->blocked_epoch = 0;
			p->wait_event = 0;
		}
		return 0;
	}
	struct argus_ev_switch_out so;
	memset(&so, 0, sizeof(so));
	/* kdebug has no user stacks here: the record without user_stack_id */
	header(d, &so.h, ARGUS_EV_SWITCH_OUT, ARGUS_SWITCH_OUT_BASE_SIZE, k->timestamp, out_pid(p, prev),
	       out_tid(p, prev), k->cpuid);
	so.prio = (uint16_t)k->arg3;
	if (p && p->blocked_epoch == d->epoch) {
		so.state = ARGUS_STATE_BLOCKED;
		wait_of(p, &so.wait_reason, &so.syscall_nr, &so.wait_obj);
	} else {
		so.state = ARGUS_STATE_RUNNABLE;
		bool yield = (k->arg1 & KD_AST_YIELD) || (p && p->in_sc && p->sc_reason == ARGUS_WAIT_YIELD);
		so.wait_reason = yield ? ARGUS_WAIT_YIELD : ARGUS_WAIT_PREEMPTED;
		so.syscall_nr = (p && p->in_sc) ? p->sc_nr : ARGUS_SYSCALL_NONE;
	}
	if (p) {
		p->blocked_epoch = 0;
		p->wait_event = 0;
	}
	int rc = (prev && !(p && p->idle)) ? emit(d, &so.h) : 0;
	if (rc < 0)
		return rc;

	struct argus_ev_switch_in si;
	memset(&si, 0, sizeof(si));
	header(d, &si.h, ARGUS_EV_SWITCH_IN, sizeof(si), k->timestamp, out_pid(n, next), out_tid(n, next), k->cpuid);
	si.prev_tid = out_tid(p, prev);
	si.prev_pid = out_pid(p, prev);
	if (n)
		n->blocked_epoch = 0;
	return (next && !(n && n->idle)) ? emit(d, &si.h) : 0;
}

static void wake_context(struct kdd *d, const struct kd_buf64 *k, const struct kdd_thread *waker,
			 uint8_t *ctx, uint8_t *irq)
{
	struct kdd_cpu *c = cpu_of(d, k->cpuid);
	*irq = ARGUS_IRQ_NONE;
	if (c->callout) {
		/* timer callouts run at interrupt level, from the timer interrupt */
		*ctx = ARGUS_WAKE_HARDIRQ;
		*irq = ARGUS_IRQ_TIMER;
	} else if (c->intr_depth) {
		*ctx = ARGUS_WAKE_HARDIRQ;
		switch (c->intr_type) {
		case KD_INTR_TYPE_TIMER: *irq = ARGUS_IRQ_TIMER; break;
		case KD_INTR_TYPE_IPI: *irq = ARGUS_IRQ_SCHED; break;
		case KD_INTR_TYPE_OTHER: *irq = ARGUS_IRQ_DEVICE; break;
		default: *irq = ARGUS_IRQ_OTHER; break;
		}
	} else if (waker && waker->idle) {
		*ctx = ARGUS_WAKE_IDLE;
	} else if (waker && waker->has_pid && waker->pid == 0) {
		*ctx = ARGUS_WAKE_KTHREAD;
	} else {
		*ctx = ARGUS_WAKE_TASK;
	}
}

static int emit_wakeup(struct kdd *d, const struct kd_buf64 *k, uint64_t waker_tid, uint64_t wakee_tid,
		       uint8_t ctx, uint8_t irq)
{
	struct kdd_thread *w = thread_get(d, waker_tid);
	struct kdd_thread *e = thread_get(d, wakee_tid);
	struct argus_ev_wakeup r;
	memset(&r, 0, sizeof(r));
	header(d, &r.h, ARGUS_EV_WAKEUP, sizeof(r), k->timestamp, out_pid(w, waker_tid), out_tid(w, waker_tid), k->cpuid);
	r.wakee_pid = out_pid(e, wakee_tid);
	r.wakee_tid = out_tid(e, wakee_tid);
	r.context = ctx;
	r.irq_kind = irq;
	r.target_cpu = (uint16_t)k->cpuid;   /* kdebug does not say where the wakee will run */
	if (irq == ARGUS_IRQ_TIMER)
		r.irq_vec = (uint32_t)cpu_of(d, k->cpuid)->callout;   /* joins the TIMER record's timer_id */
	return emit(d, &r.h);
}

/* ---------- timers ---------- */

static struct kdd_arm *arm_slot(struct kdd *d, uint64_t call)
{
	return &d->arms[hash_tid(0, call, KDD_ARMS)];   /* unseeded: which arm evicts which stays reproducible */
}

static int on_timer_enter(struct kdd *d, const struct kd_buf64 *k)
{
	struct kdd_thread *t = thread_find(d, k->arg5);
	if (KD_FUNC(k->debugid) != KD_FUNC_START || !k->arg1)
		return 0;
	/* like Linux: only timers a user thread arms inside a syscall */
	if (!t || !t->in_sc || t->idle || !t->has_pid || t->pid == 0)
		return 0;
	struct kdd_arm *a = arm_slot(d, k->arg1);
	a->call = k->arg1;
	a->ts = k->timestamp;
	a->deadline = k->arg3;
	a->pid = t->pid;
	a->tid = out_tid(t, t->tid);
	return 0;
}

static int on_timer_callout(struct kdd *d, const struct kd_buf64 *k)
{
	struct kdd_cpu *c = cpu_of(d, k->cpuid);
	if (KD_FUNC(k->debugid) == KD_FUNC_END) {
		c->callout = 0;
		return 0;
	}
	if (KD_FUNC(k->debugid) != KD_FUNC_START)
		return 0;
	struct kdd_arm *a = arm_slot(d, k->arg1);
	if (!k->arg1 || a->call != k->arg1) {
		c->callout = 0;           /* not a timer we follow: its wakeups stay plain */
		return 0;
	}
	c->callout = k->arg1;
	struct kdd_thread *t = thread_get(d, k->arg5);
	struct argus_ev_timer r;
	memset(&r, 0, sizeof(r));
	header(d, &r.h, ARGUS_EV_TIMER, sizeof(r), k->timestamp, out_pid(t, k->arg5), out_tid(t, k->arg5), k->cpuid);
	r.timer_id = a->call;
	r.expires_ns = (int64_t)kdd_ns(d, a->deadline);
	r.arm_ts_ns = kdd_ns(d, a->ts);
	r.arm_pid = a->pid;
	r.arm_tid = a->tid;
	r.kind = ARGUS_TIMER_FIRE;
	r.clockid = 1;                /* mach absolute time, as every ts_ns of this trace */
	a->call = 0;                  /* one-shot: a re-arm records a new arm */
	return emit(d, &r.h);
}

static int on_make_runnable(struct kdd *d, const struct kd_buf64 *k)
{
	struct kdd_cpu *c = cpu_of(d, k->cpuid);
	for (uint32_t i = 0; k->arg1 && i < KDD_PENDING; i++) {
		if (c->patched_wakee[i] == k->arg1) {
			c->patched_wakee[i] = 0;   /* the patched event already said it, exactly */
			return 0;
		}
	}
	uint8_t ctx, irq;
	wake_context(d, k, thread_find(d, k->arg5), &ctx, &irq);
	return emit_wakeup(d, k, k->arg5, k->arg1, ctx, irq);
}

static int on_argus_wakeup(struct kdd *d, const struct kd_buf64 *k)
{
	struct kdd_cpu *c = cpu_of(d, k->cpuid);
	uint8_t ctx, irq = ARGUS_IRQ_NONE;
	struct kdd_thread *w = thread_find(d, k->arg5);
	d->st.patched_events++;
	if ((k->arg3 & KD_ARGUS_WAKE_IDLE) && (w = thread_get(d, k->arg5))) {
		w->idle = true;          /* the patched kernel names idle threads exactly */
		w->pid = 0;
		w->has_pid = true;
	}
	if (k->arg3 & KD_ARGUS_WAKE_INTERRUPT) {
		ctx = ARGUS_WAKE_HARDIRQ;
		irq = ((k->arg3 & KD_ARGUS_WAKE_TIMER) || c->callout) ? ARGUS_IRQ_TIMER : ARGUS_IRQ_DEVICE;
	} else if ((k->arg3 & KD_ARGUS_WAKE_IDLE) || (w && w->idle)) {
		ctx = ARGUS_WAKE_IDLE;
	} else if (k->arg3 & KD_ARGUS_WAKE_TIMER) {
		ctx = ARGUS_WAKE_KTHREAD;   /* thread_timer_expire run from a timer callout */
		irq = ARGUS_IRQ_TIMER;
	} else if (w && w->has_pid && w->pid == 0) {
		ctx = ARGUS_WAKE_KTHREAD;
	} else {
		ctx = ARGUS_WAKE_TASK;
	}
	c->patched_wakee[c->patched_next++ % KDD_PENDING] = k->arg1;
	return emit_wakeup(d, k, k->arg5, k->arg1, ctx, irq);
}

/* ---------- syscalls ---------- */

static const struct sc_info *sc_lookup(const struct sc_info *tab, size_t n, uint32_t nr)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i].nr == nr)
			return &tab[i];
	return NULL;
}

int kdd_is_poll_syscall(uint32_t nr)
{
	const struct sc_info *sc = NULL;

	if ((nr & ~0xFFFFu) == ARGUS_KD_NR_BSD)
		sc = sc_lookup(bsd_table, sizeof(bsd_table) / sizeof(bsd_table[0]), nr & 0xFFFFu);
	return sc && sc->reason == ARGUS_WAIT_POLL;
}

static int32_t clip32(uint64_t v)
{
	return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

static int on_syscall(struct kdd *d, const struct kd_buf64 *k, bool mach)
{
	uint32_t n = KD_CODE(k->debugid), func = KD_FUNC(k->debugid);
	const struct sc_info *si = mach ? sc_lookup(mach_table, sizeof(mach_table) / sizeof(mach_table[0]), n)
					: sc_lookup(bsd_table, sizeof(bsd_table) / sizeof(bsd_table[0]), n);
	uint32_t nr = (mach ? ARGUS_KD_NR_MACH : ARGUS_KD_NR_BSD) | n;
	struct kdd_thread *t = thread_get(d, k->arg5);

	if (func == KD_FUNC_START) {
		uint8_t reason = si ? si->reason : ARGUS_WAIT_OTHER_SYSCALL;
		int32_t aux = 0;
		uint64_t obj = 0, obj2 = 0;
		switch (si ? si->layout : SCL_NONE) {
		case SCL_FD: obj = k->arg1; aux = clip32(k->arg3); break;
		case SCL_ADDR1: obj = k->arg1; break;
		case SCL_CVWAIT: obj = k->arg1; obj2 = k->arg4; break;
		case SCL_ULOCK: aux = (int32_t)k->arg1; obj = k->arg2; break;
		case SCL_PID: obj = k->arg1; break;
		case SCL_MACH_MSG:
		case SCL_MACH_MSG2:
			aux = (int32_t)k->arg2;
			obj = si->layout == SCL_MACH_MSG ? k->arg1 : k->arg4;
			/* receive only: a run loop / server waiting on its port (set),
			 * the macOS event-loop wait; send + receive: an RPC waiting for
			 * its reply; send only: a full queue */
			if (!(k->arg2 & KD_MACH_RCV_MSG))
				reason = ARGUS_WAIT_WRITE;
			else
				reason = (k->arg2 & KD_MACH_SEND_MSG) ? ARGUS_WAIT_READ : ARGUS_WAIT_POLL;
			break;
		default: break;
		}
		if (t) {
			t->in_sc = true;
			t->sc_nr = nr;
			t->sc_reason = reason;
			t->sc_aux = aux;
			t->sc_obj = obj;
			t->sc_obj2 = obj2;
		}
		if (!d->cfg.trace_syscalls || !si)
			return 0;
		struct argus_ev_syscall_enter r;
		memset(&r, 0, sizeof(r));
		header(d, &r.h, ARGUS_EV_SYSCALL_ENTER, sizeof(r), k->timestamp, out_pid(t, k->arg5), out_tid(t, k->arg5), k->cpuid);
		r.nr = nr;
		r.aux = aux;
		r.obj = obj;
		r.obj2 = obj2;
		return emit(d, &r.h);
	}
	if (func == KD_FUNC_END) {
		if (t && t->in_sc && t->sc_nr == nr)
			t->in_sc = false;
		if (t && !mach && !t->has_pid && k->arg4 && k->arg4 <= UINT32_MAX) {
			t->pid = (uint32_t)k->arg4;   /* BSD END carries the pid: threads missing from the map */
			t->has_pid = true;
		}
		if (!d->cfg.trace_syscalls || !si)
			return 0;
		struct argus_ev_syscall_exit r;
		memset(&r, 0, sizeof(r));
		header(d, &r.h, ARGUS_EV_SYSCALL_EXIT, sizeof(r), k->timestamp, out_pid(t, k->arg5), out_tid(t, k->arg5), k->cpuid);
		r.nr = nr;
		if (mach)
			r.ret = (int64_t)(int32_t)k->arg1;        /* kern_return_t */
		else
			/* error (an int errno: the low 32 bits, so a crafted arg1 cannot
			 * make the negation overflow), else uu_rval[0] */
			r.ret = k->arg1 ? -(int64_t)(int32_t)k->arg1 : (int64_t)k->arg2;
		return emit(d, &r.h);
	}
	d->st.ignored++;
	return 0;
}

/* ---------- process lifetime ---------- */

static int on_trace_class(struct kdd *d, const struct kd_buf64 *k)
{
	uint32_t ev = KD_EVENTID(k->debugid);
	struct kdd_thread *cur = thread_get(d, k->arg5);

	if (ev == KDE_TRACE_DATA_NEWTHREAD) {
		struct kdd_thread *c = thread_get(d, k->arg1);
		if (!c)
			return 0;
		c->pid = (uint32_t)k->arg2;
		c->has_pid = true;
		/* a process's first thread is created from another task (fork,
		 * spawn: cur is the parent) or is the exec copy (arg3 = 1) */
		c->main_thread = c->pid != 0 && (k->arg3 == 1 || !(cur && cur->has_pid && cur->pid == c->pid));
		struct kdd_thread *same = NULL;
		if (cur && cur->has_pid && cur->pid == c->pid)
			same = cur;
		if (same)
			memcpy(c->comm, same->comm, ARGUS_COMM_LEN);
		else if (cur)
			memcpy(c->comm, cur->comm, ARGUS_COMM_LEN);
		struct argus_ev_fork r;
		memset(&r, 0, sizeof(r));
		header(d, &r.h, ARGUS_EV_FORK, sizeof(r), k->timestamp, out_pid(cur, k->arg5), out_tid(cur, k->arg5), k->cpuid);
		r.child_pid = c->pid;
		r.child_tid = out_tid(c, c->tid);
		memcpy(r.comm, c->comm, ARGUS_COMM_LEN);
		return emit(d, &r.h);
	}
	if (ev == KDE_TRACE_DATA_EXEC) {
		if (cur) {
			cur->pid = (uint32_t)k->arg1;
			cur->has_pid = true;
		}
		return 0;                 /* the EXEC record comes with the name (STRING_EXEC) */
	}
	if (ev == KDE_TRACE_STRING_EXEC || ev == KDE_TRACE_STRING_THREADNAME) {
		if (!(k->debugid & KD_FUNC_START))
			return 0;             /* continuation of a long name: the first 32 bytes suffice */
		uint64_t words[4] = { k->arg1, k->arg2, k->arg3, k->arg4 };
		char comm[ARGUS_COMM_LEN];
		copy_comm(comm, words, strnlen((const char *)words, sizeof(words)));
		if (cur && ev == KDE_TRACE_STRING_EXEC)
			memcpy(cur->comm, comm, ARGUS_COMM_LEN);
		struct argus_ev_comm r;
		memset(&r, 0, sizeof(r));
		header(d, &r.h, ev == KDE_TRACE_STRING_EXEC ? ARGUS_EV_EXEC : ARGUS_EV_THREAD_NAME, sizeof(r),
		       k->timestamp, out_pid(cur, k->arg5), out_tid(cur, k->arg5), k->cpuid);
		memcpy(r.comm, comm, ARGUS_COMM_LEN);
		return emit(d, &r.h);
	}
	if (ev == KDE_TRACE_DATA_THREAD_TERMINATE) {
		struct kdd_thread *t = thread_find(d, k->arg1);
		struct argus_ev_exit r;
		memset(&r, 0, sizeof(r));
		header(d, &r.h, ARGUS_EV_EXIT, sizeof(r), k->timestamp, out_pid(t, k->arg1), out_tid(t, k->arg1), k->cpuid);
		r.exit_code = 0;          /* kdebug does not carry it */
		r.is_group_leader = t && t->main_thread;
		return emit(d, &r.h);
	}
	if (ev == KDE_TRACE_LOST_EVENTS) {
		d->st.lost_markers++;
		/* State built from the missing events is unreliable: forget waits. */
		d->epoch++;                /* no thread's blocked_epoch matches a new epoch */
		return kdd_lost(d, k->timestamp, k->arg1 ? k->arg1 : 1);
	}
	d->st.ignored++;
	return 0;
}

int kdd_lost(struct kdd *d, uint64_t ts, uint64_t count)
{
	struct argus_ev_lost r;
	memset(&r, 0, sizeof(r));
	header(d, &r.h, ARGUS_EV_LOST, sizeof(r), ts, 0, 0, 0);
	r.count = count;
	return emit(d, &r.h);
}

/* ---------- dispatch ---------- */

static int decode_one(struct kdd *d, const struct kd_buf64 *k)
{
	uint32_t id = k->debugid, ev = KD_EVENTID(id), csc = KD_CSC(id);
	struct kdd_thread *t;

	reserve(d, 2);

	if (csc == KD_BSD_SC_PREFIX)
		return on_syscall(d, k, false);
	if (csc == KD_MACH_SC_PREFIX)
		return on_syscall(d, k, true);
	switch (ev) {
	case KDE_MACH_SCHED:
	case KDE_MACH_STACK_HANDOFF:
		return on_switch(d, k);
	case KDE_MACH_BLOCK:
		if ((t = thread_get(d, k->arg5)))
			t->blocked_epoch = d->epoch;
		return 0;
	case KDE_MACH_MAKE_RUNNABLE:
		return on_make_runnable(d, k);
	case KDE_MACH_IDLE:
		/* processor_idle(THREAD_NULL, ...) from idle_thread(): arg1 is 0
		 * and arg5 the idle thread.  Kernels that idled a blocked thread
		 * inline passed that thread in arg1: it is not an idle thread. */
		if (KD_FUNC(id) == KD_FUNC_START && k->arg1 == 0 && (t = thread_get(d, k->arg5))) {
			t->idle = true;
			t->pid = 0;
			t->has_pid = true;
		}
		return 0;
	case KDE_DECR_TIMER_ENTER:
		return on_timer_enter(d, k);
	case KDE_DECR_TIMER_CALLOUT:
		return on_timer_callout(d, k);
	case KDE_MACH_INTR: {
		struct kdd_cpu *c = cpu_of(d, k->cpuid);
		if (KD_FUNC(id) == KD_FUNC_START) {
			c->intr_depth++;
			c->intr_type = (uint32_t)k->arg4;
		} else if (KD_FUNC(id) == KD_FUNC_END && c->intr_depth) {
			c->intr_depth--;
		}
		return 0;
	}
	case KDE_ARGUS_WAIT:
		d->st.patched_events++;
		/* same permuted event as the stock MACH_WAIT */
		/* fallthrough */
	case KDE_MACH_WAIT:
		if ((t = thread_get(d, k->arg5)))
			t->wait_event = k->arg1;
		return 0;
	case KDE_ARGUS_WAKEUP:
		return on_argus_wakeup(d, k);
	default:
		break;
	}
	if (KD_CLASS(id) == KD_CLASS_TRACE)
		return on_trace_class(d, k);
	d->st.ignored++;
	return 0;
}

int kdd_feed(struct kdd *d, const struct kd_buf64 *recs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		d->st.kd_records++;
		int rc = decode_one(d, &recs[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

struct kdd *kdd_create(const struct kdd_config *cfg, kdd_emit_fn fn, void *ctx)
{
	struct kdd *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->cfg = *cfg;
	d->emit = fn;
	d->ctx = ctx;
	d->epoch = 1;                  /* blocked_epoch 0 (calloc) = not blocked */
	d->seed = random_seed();
	if (grow(d) < 0) {
		free(d);
		return NULL;
	}
	return d;
}

void kdd_destroy(struct kdd *d)
{
	if (!d)
		return;
	free(d->threads);
	free(d);
}

void kdd_get_stats(const struct kdd *d, struct kdd_stats *st)
{
	*st = d->st;
	st->threads = d->count;
}
