/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Ownership of futexes: who holds the lock a thread blocks on.
 *
 * At a blocking futex-wait switch-out, the word and the 32 bits 8 bytes
 * after it (FUTEX_STATE): a PI futex word holds its owner's tid (kernel
 * ABI); a glibc mutex word of 1 or 2 (locked, maybe contended) has its
 * owner's tid in __owner beside it.  Read then rather than at sys_enter: a
 * futex wait that does not block costs nothing, and the word was just read
 * by the kernel, so it is resident.  The graph validates the tid (a live
 * thread of the same process); only plausible words cost a record.
 * A word that is the tid of another thread of the process whose
 * clear_child_tid is this very futex is a join: glibc's pthread_join (and
 * the JVM launcher, Rust's and C++'s join through it) waits on the joined
 * thread's tid word until the kernel clears it at that thread's exit
 * (CLONE_CHILD_CLEARTID); the record names that thread (THREAD_EXIT).
 * File locks are in file_lock.bpf.h.
 *
 * Included by argus_trace.bpf.c after the record helpers.
 */
#ifndef ARGUS_OWNERSHIP_BPF_H
#define ARGUS_OWNERSHIP_BPF_H

/* include/uapi/linux/futex.h */
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_LOCK_PI2 13

/* kfuncs of 6.2, like bpf_rdonly_cast (channel.bpf.h) that the tracer needs
 * anyway; declared weak and tested with bpf_ksym_exists, so that where libbpf
 * resolves a missing weak kfunc to 0 the program still loads and joins go
 * unnamed (not exercised here: this kernel has both). */
extern struct task_struct *bpf_task_from_pid(s32 pid) __weak __ksym;
extern void bpf_task_release(struct task_struct *p) __weak __ksym;
#ifndef bpf_ksym_exists      /* bpf_helpers.h has it from libbpf 1.2 on */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

/* ------------------------------------------------------------------ futex */

/* The global tid of the thread whose exit the futex at uaddr announces, or
 * 0: word is a tid (the init namespace's: a containerized process's own tid
 * numbers find nothing or a thread of another process, which the tgid test
 * drops) of a thread of prev's process, not prev, whose clear_child_tid is
 * uaddr.  Only at a blocking futex wait whose word names no mutex owner:
 * off the hot path. */
static __always_inline __u32 joined_thread(struct task_struct *prev, __u64 uaddr, __u32 word)
{
	struct task_struct *t;
	__u32 tid = 0;

	if (!bpf_ksym_exists(bpf_task_from_pid) || !word || word > ARGUS_FUTEX_TID_MASK || word == prev->pid)
		return 0;
	t = bpf_task_from_pid((s32)word);
	if (!t)
		return 0;
	if (t->tgid == prev->tgid && (__u64)t->clear_child_tid == uaddr)
		tid = t->pid;
	bpf_task_release(t);
	return tid;
}

static __always_inline void emit_futex_state(struct stage_hold *h, struct task_struct *prev, struct syscall_state *sc,
					     __u64 ts)
{
	struct argus_ev_futex_state *e;
	struct {
		__u32 lock;
		__u32 count;
		__u32 owner;
	} m = {};
	__u32 op = (__u32)sc->aux & FUTEX_CMD_MASK, flags = 0;

	if (sc->layout != ARGUS_SCL_FUTEX || !sc->obj)
		return;
	if (op == FUTEX_LOCK_PI || op == FUTEX_LOCK_PI2) {
		if (bpf_probe_read_user(&m.lock, sizeof(m.lock), (void *)sc->obj) ||
		    !(m.lock & ARGUS_FUTEX_TID_MASK))
			return;
		flags = ARGUS_FUTEX_PI;
		m.owner = 0;
	} else if (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET) {
		/* struct __pthread_mutex_s: int __lock; unsigned __count; int __owner.
		 * A locked default mutex has __lock 1 or 2; a robust one has the
		 * owner's tid in __lock too (| FUTEX_WAITERS). */
		/* the join word may end its page: the word alone then */
		if (bpf_probe_read_user(&m, sizeof(m), (void *)sc->obj) &&
		    bpf_probe_read_user(&m.lock, sizeof(m.lock), (void *)sc->obj))
			return;
		if (m.owner && m.owner != prev->pid &&
		    (m.lock == 1 || m.lock == 2 || (m.lock & ARGUS_FUTEX_TID_MASK) == m.owner)) {
			flags = ARGUS_FUTEX_OWNER_READ;
		} else {
			m.owner = joined_thread(prev, sc->obj, m.lock);
			if (!m.owner)
				return;
			flags = ARGUS_FUTEX_THREAD_EXIT;
		}
	} else {
		return;
	}
	e = reserve(h, sizeof(*e));
	if (!e)
		return;
	e->uaddr = sc->obj;
	e->word = m.lock;
	e->owner_field = m.owner;
	e->op = op;
	e->flags = flags;
	fill_header(&e->h, ARGUS_EV_FUTEX_STATE, sizeof(*e), prev->tgid, prev->pid, ts);
	submit(h, e);
}

#endif /* ARGUS_OWNERSHIP_BPF_H */
