/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * The lean tier (docs/linux-tracer.md, "Detail tiers"): no syscall program
 * runs, and the records the full tier writes at sys_enter are written where
 * they matter for a wait, from the registers the task saved at kernel entry:
 *
 *   a blocking switch-out   SYSCALL_ENTER (and FD_INFO, FILE_LOCK) of the
 *                           call it blocks in, just before the switch record,
 *                           which then carries its number, object and wait
 *                           reason as under full detail (WAIT_SITE and
 *                           FUTEX_STATE follow from the same state);
 *   a wakeup from a task    SYSCALL_ENTER of the call the waker is in, just
 *                           before the WAKEUP, once per call (a futex wake
 *                           of three waiters writes one).
 *
 * No SYSCALL_EXIT is written: the return is not seen.  The helpers are the
 * full tier's (decode_args, channel_of, wait_site_args, emit_file_lock), so
 * the records are the same bytes the full tier would have written, stamped
 * at the switch-out or the wakeup instead of the entry.
 */
#ifndef ARGUS_LEAN_BPF_H
#define ARGUS_LEAN_BPF_H

/* Fills sc from the call in regs (decoded: aux, obj, obj2) and writes its
 * SYSCALL_ENTER at ts. */
static __always_inline void lean_enter(struct stage_hold *h, struct task_struct *t, struct pt_regs *regs,
				       struct syscall_state *sc, __u32 nr, __s32 aux, __u64 obj, __u64 obj2, __u64 ts)
{
	struct argus_syscall_class cls = syscall_class[nr];
	__u64 pid_tgid = (__u64)t->tgid << 32 | t->pid;

	if (cls.layout == ARGUS_SCL_FD_CHAN || lock_layout(cls.layout))
		obj2 = channel_of(h, t, sc, t->tgid, t->pid, (int)obj, ts);
	sc->nr = nr;
	sc->wait_reason = cls.wait_reason;
	sc->obj = obj;
	sc->aux = aux;
	sc->layout = cls.layout;
	sc->enter_pos.cpu = STAGE_POS_NONE;
	sc->nio_enter_cpu = NIO_CPU_NONE;       /* no NET_IO is implied by a lean enter */
	wait_site_args(sc, cls.layout, regs);
	if (emit_syscall_enter(h, nr, aux, obj, obj2, pid_tgid, ts, NULL) && lock_layout(cls.layout))
		emit_file_lock(h, regs, cls.layout, obj2, t->tgid, t->pid, ts);
}

/* At prev's switch-out in the lean tier: prev's syscall_state describes the
 * traced call it is in (live, as after a sys_enter), or is not live when it
 * is in none; sched_switch then reads it as under full detail.  A
 * blocking wait gets its SYSCALL_ENTER; a runnable switch-out only needs the
 * number (yield, preempted inside a call). */
static __always_inline int lean_switch_out(struct stage_hold *h, struct task_struct *prev, __u8 state, __u64 ts)
{
	struct syscall_state *sc;
	struct pt_regs *regs = NULL;
	long nr;

	nr = saved_syscall_nr(prev, &regs);
	if (nr >= 0 && regs && syscall_class[nr].layout == ARGUS_SCL_FCNTL &&
	    !fcntl_lock_cmd(PT_REGS_PARM2_SYSCALL(regs)))
		nr = -1;
	if (nr < 0 || !regs) {
		sc = bpf_task_storage_get(&in_syscall, prev, NULL, 0);
		if (sc)
			sc->active = 0;
		return 0;
	}
	sc = bpf_task_storage_get(&in_syscall, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!sc)
		return 0;
	sc->active = 1;
	sc->gen = argus_gen;
	if (state == ARGUS_STATE_BLOCKED || state == ARGUS_STATE_BLOCKED_IO) {
		__u64 obj, obj2;
		__s32 aux;

		decode_args(syscall_class[nr].layout, regs, &aux, &obj, &obj2);
		lean_enter(h, prev, regs, sc, nr, aux, obj, obj2, ts);
		/* A wakeup the same call makes once it resumes (a pipe read
		 * waking the writer) is in this call: the switch count was
		 * raised before the tracepoint and stays so until the next. */
		sc->synth_nr = nr;
		sc->synth_obj = obj;
		sc->synth_switches = prev->nvcsw + prev->nivcsw;
	} else {
		sc->nr = nr;
		sc->wait_reason = syscall_class[nr].wait_reason;
		sc->obj = 0;
		sc->enter_pos.cpu = STAGE_POS_NONE;
	}
	return 1;
}

/* At a wakeup from task context in the lean tier: the waker's call, once.
 * The same (number, object) with no switch of the waker since is the same
 * call waking one more task; two calls on one fd with no switch between
 * them also merge (documented). */
static __always_inline int lean_waker(struct stage_hold *h, struct task_struct *cur, __u64 ts)
{
	struct syscall_state *sc;
	struct pt_regs *regs = NULL;
	__u64 switches, obj, obj2;
	__s32 aux;
	long nr;

	nr = saved_syscall_nr(cur, &regs);
	if (nr < 0 || !regs)
		return 0;
	if (syscall_class[nr].layout == ARGUS_SCL_FCNTL && !fcntl_lock_cmd(PT_REGS_PARM2_SYSCALL(regs)))
		return 0;
	sc = bpf_task_storage_get(&in_syscall, cur, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!sc)
		return 0;
	switches = cur->nvcsw + cur->nivcsw;
	decode_args(syscall_class[nr].layout, regs, &aux, &obj, &obj2);
	if (sc->synth_nr == nr && sc->synth_obj == obj && sc->synth_switches == switches)
		return 0;
	sc->synth_nr = nr;
	sc->synth_obj = obj;
	sc->synth_switches = switches;
	lean_enter(h, cur, regs, sc, nr, aux, obj, obj2, ts);
	return 0;
}

#endif /* ARGUS_LEAN_BPF_H */
