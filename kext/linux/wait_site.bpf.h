/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Wait sites: which fds (and timeout) a thread blocked in poll / ppoll /
 * select / pselect6 / epoll_wait / epoll_pwait(2) waits on, so the graph can
 * tell an event loop's recurring wait from a nested or one-off one.
 *
 * Cost: sys_enter only keeps the user pointers (wait_site_args); the fd set
 * is read at the blocking switch-out, when the kernel has just copied it in
 * (so the pages are resident and the input sets not yet overwritten by the
 * results), and a record is written only when the (site, syscall) differs
 * from the thread's last one or that one is older than ARGUS_REFRESH_NS: a
 * loop blocking at the same site costs one hash.
 *
 * Included by argus_trace.bpf.c after the record helpers.
 */
#ifndef ARGUS_WAIT_SITE_BPF_H
#define ARGUS_WAIT_SITE_BPF_H

/* include/uapi/asm-generic/poll.h */
#define POLLIN 0x0001
#define POLLOUT 0x0004

/* fd_set words read per set: 16 x 64 = FD_SETSIZE (1024), glibc's limit. */
#define WAIT_SITE_SELECT_WORDS 16
_Static_assert((ARGUS_WAIT_SITE_MAX_FDS & (ARGUS_WAIT_SITE_MAX_FDS - 1)) == 0, "a power of two (index mask)");

/* The record is built here and copied out only when it is new. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct argus_ev_wait_site);
} wait_site_scratch SEC(".maps");

/* Index of the lowest set bit of a power of two (de Bruijn sequence): BPF
 * has no count-trailing-zeros instruction. */
static const __u8 debruijn_ctz64[64] = {
	0,  1,  2,  53, 3,  7,  54, 27, 4,  38, 41, 8,  34, 55, 48, 28,
	62, 5,  39, 46, 44, 42, 22, 9,  24, 35, 59, 56, 49, 18, 29, 11,
	63, 52, 6,  26, 37, 40, 33, 47, 61, 45, 43, 21, 23, 58, 17, 10,
	51, 25, 36, 32, 60, 20, 57, 16, 50, 31, 19, 15, 30, 14, 13, 12,
};

static __always_inline __u32 lowest_bit(__u64 w)
{
	return debruijn_ctz64[((w & -w) * 0x022fdd63cc95386dull) >> 58];
}

/* At sys_enter: keep the user pointers a blocking switch-out will read. */
static __always_inline void wait_site_args(struct syscall_state *sc, __u8 layout, struct pt_regs *regs)
{
	switch (layout) {
	case ARGUS_SCL_POLL:
	case ARGUS_SCL_POLL_TS:
		sc->set_ptr = PT_REGS_PARM1_SYSCALL(regs);
		sc->set_n = (__u32)PT_REGS_PARM2_SYSCALL(regs);
		break;
	case ARGUS_SCL_SELECT:
	case ARGUS_SCL_SELECT_TS:
		sc->set_n = (__u32)PT_REGS_PARM1_SYSCALL(regs);
		sc->set_ptr = PT_REGS_PARM2_SYSCALL(regs);
		sc->set_ptr2 = PT_REGS_PARM3_SYSCALL(regs);
		break;
	default:
		break;
	}
}

static __always_inline bool wait_site_keep(struct argus_ev_wait_site *e, __s32 fd, __u16 events)
{
	__u32 k = e->nkept;

	if (k >= ARGUS_WAIT_SITE_MAX_FDS)
		return false;
	/* k came back from map memory: bound it where the verifier sees it */
	barrier_var(k);
	k &= ARGUS_WAIT_SITE_MAX_FDS - 1;
	e->fds[k] = fd;
	e->events[k] = events;
	e->nkept = k + 1;
	return true;
}

static __always_inline void wait_site_poll(struct syscall_state *sc, struct argus_ev_wait_site *e)
{
	struct {
		__s32 fd;
		__s16 events;
		__s16 revents;
	} pfd[ARGUS_WAIT_SITE_MAX_FDS] = {};
	__u32 n = sc->set_n, i;

	e->nfds = n;
	if (n > ARGUS_WAIT_SITE_MAX_FDS)
		n = ARGUS_WAIT_SITE_MAX_FDS;
	if (!sc->set_ptr || !n || bpf_probe_read_user(pfd, n * sizeof(pfd[0]), (void *)sc->set_ptr))
		return;
	for (i = 0; i < ARGUS_WAIT_SITE_MAX_FDS; i++) {
		if (i >= n)
			break;
		if (pfd[i].fd >= 0)   /* negative fds are skipped by the kernel too */
			wait_site_keep(e, pfd[i].fd, (__u16)pfd[i].events);
	}
}

static __always_inline void wait_site_select(struct syscall_state *sc, struct argus_ev_wait_site *e)
{
	__u32 words = (sc->set_n + 63) / 64, i, j;
	__u64 r, w, both;

	e->nfds = sc->set_n;
	for (i = 0; i < WAIT_SITE_SELECT_WORDS; i++) {
		if (i >= words || e->nkept >= ARGUS_WAIT_SITE_MAX_FDS)
			break;
		r = w = 0;
		if (sc->set_ptr)
			bpf_probe_read_user(&r, sizeof(r), (void *)(sc->set_ptr + i * 8));
		if (sc->set_ptr2)
			bpf_probe_read_user(&w, sizeof(w), (void *)(sc->set_ptr2 + i * 8));
		both = r | w;
		for (j = 0; j < ARGUS_WAIT_SITE_MAX_FDS; j++) {
			__u64 bit;

			if (!both)
				break;
			bit = both & -both;
			both &= both - 1;
			if (!wait_site_keep(e, (__s32)(i * 64 + lowest_bit(bit)),
					    ((r & bit) ? POLLIN : 0) | ((w & bit) ? POLLOUT : 0)))
				break;
		}
	}
}

/* At a blocking switch-out in a poll-family syscall: a WAIT_SITE record
 * before the switch_out, unless the thread's last one is the same and fresh. */
static __always_inline void emit_wait_site(struct stage_hold *hold, struct task_struct *prev, struct syscall_state *sc,
					   __u64 ts)
{
	struct argus_ev_wait_site *e;
	__u64 h = 0xcbf29ce484222325ull;
	__u32 i, zero = 0;

	e = bpf_map_lookup_elem(&wait_site_scratch, &zero);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	switch (sc->layout) {
	case ARGUS_SCL_POLL:
	case ARGUS_SCL_POLL_TS:
		wait_site_poll(sc, e);
		break;
	case ARGUS_SCL_SELECT:
	case ARGUS_SCL_SELECT_TS:
		wait_site_select(sc, e);
		break;
	default:      /* epoll: the epoll fd stands for its interest list */
		e->nfds = 1;
		wait_site_keep(e, (__s32)sc->obj, 0);
		break;
	}
	/* FNV-1a over nfds and the kept (fd, events) pairs. */
	h = (h ^ e->nfds) * 0x100000001b3ull;
	for (i = 0; i < ARGUS_WAIT_SITE_MAX_FDS; i++) {
		if (i >= e->nkept)
			break;
		h = (h ^ ((__u64)(__u32)e->fds[i] | (__u64)e->events[i] << 32)) * 0x100000001b3ull;
	}
	h |= 1;   /* 0 means "no site" */
	/* Not keyed on the timeout: loops compute it from their next timer
	 * (redis, GLib), so it changes at nearly every call, and the graph takes
	 * it from syscall_enter.aux anyway. */
	if (sc->site_id == h && sc->site_nr == sc->nr && ts - sc->site_ns <= ARGUS_REFRESH_NS)
		return;
	sc->site_id = h;
	sc->site_nr = sc->nr;
	sc->site_ns = ts;
	e->syscall_nr = sc->nr;
	e->timeout_ms = sc->aux;
	e->site_id = h;
	fill_header(&e->h, ARGUS_EV_WAIT_SITE, sizeof(*e), prev->tgid, prev->pid, ts);
	output(hold, e, sizeof(*e));
}

#endif /* ARGUS_WAIT_SITE_BPF_H */
