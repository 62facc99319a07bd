/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Syscall argument decoding: the number and the 32-bit-task test from
 * pt_regs, and syscall_enter {aux, obj, obj2} per argus_syscall_layout
 * (argus_trace.h): fds, futex words, timeouts read from user timespecs and
 * turned into milliseconds.
 *
 * Included by argus_trace.bpf.c after the record helpers.
 */
#ifndef ARGUS_SYSCALL_ARGS_BPF_H
#define ARGUS_SYSCALL_ARGS_BPF_H

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

/* arch/x86/include/asm/segment.h: a 32-bit (ia32) task entered the kernel. */
#define X86_USER32_CS 0x23

#define S32_MAX 0x7fffffff

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

/* The traced syscall task t is in, read from the registers its kernel entry
 * saved (the lean tier: docs/linux-tracer.md, "Detail tiers"), or -1 when it
 * is in none.  orig_ax holds the number of a syscall, but also an
 * exception's error code (a page fault's 4-7 would read as stat .. poll), so
 * x86 also wants ax == -ENOSYS: the entry sets it and only the return
 * overwrites it.  arm64 sets syscallno to -1 on every other entry.  Kernel
 * threads have no user registers. */
#define ENOSYS 38
static __always_inline long saved_syscall_nr(struct task_struct *t, struct pt_regs **out)
{
	struct pt_regs *regs;
	long nr;

	if ((t->flags & PF_KTHREAD) || !t->mm)
		return -1;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs)
		return -1;
	nr = syscall_nr_of(regs);
	if ((unsigned long)nr >= ARGUS_MAX_SYSCALLS || syscall_class[nr].layout == ARGUS_SCL_NONE ||
	    compat_syscall(regs))
		return -1;
#if defined(__TARGET_ARCH_x86)
	if (regs->ax != (unsigned long)-ENOSYS)
		return -1;
#endif
	*out = regs;
	return nr;
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

#endif /* ARGUS_SYSCALL_ARGS_BPF_H */
