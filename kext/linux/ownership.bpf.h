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

/* ------------------------------------------------------------------ futex */

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
		if (bpf_probe_read_user(&m, sizeof(m), (void *)sc->obj))
			return;
		if (!m.owner || m.owner == prev->pid ||
		    (m.lock != 1 && m.lock != 2 && (m.lock & ARGUS_FUTEX_TID_MASK) != m.owner))
			return;
		flags = ARGUS_FUTEX_OWNER_READ;
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
