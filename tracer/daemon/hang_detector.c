// SPDX-License-Identifier: Apache-2.0
/*
 * Online hang detector: the cheap, streaming form of diagnose/hangs.py.
 *
 * Which threads: a main thread (tid == pid) is an event loop once it has
 * blocked MIN_LOOP_POLLS times in a POLL wait (epoll / poll / select), the
 * rule of candidates.event_loop_threads; plus every thread of a pid or comm the
 * user names (--watch-pid / --watch-comm / `watch` on the control socket).
 *
 * Loop site: as diagnose/waits.py, the thread's most frequent POLL site,
 * a site being (syscall nr, wait_obj: the epoll fd or first polled fd).  A
 * POLL wait elsewhere is nested (GLib's call_sync on a private context, a
 * synchronous X11 round trip): the thread is out of its loop there.  The
 * offline model's causal "sync" and "pending" kinds need the graph; online,
 * only the site is used.
 *
 * Algorithm, per record of a watched thread (observe):
 *   SWITCH_OUT blocked in a POLL wait at the loop site -> in the loop (idle);
 *     an open hang ends there.
 *   SYSCALL_ENTER of a poll-family syscall on the loop site's object -> back
 *     in the loop (a poll that returns at once never switches out).
 *   SWITCH_IN after an idle loop wait -> left the loop: out_since = ts.
 *   SWITCH_OUT blocked waiting for a child -> as in the loop: a shell or
 *     launcher waiting for its job is idle, never hung.
 *   EXIT -> an open hang ends; the entry is free for the tid's next thread.
 *   Any other switch accumulates run / wait time for the block type guess.
 * Every 100 ms (check): a watched thread not in its loop with now - out_since
 * >= threshold opens a hang [out_since, ...).  Threads with no loop (named by
 * the user, never polled) are out of their loop from every switch-in or
 * blocking switch-out: one wait or one run >= threshold is a hang.
 * A hang is written when it has ended (plus GRACE_NS, so its end is drained),
 * or flush_after_ns after detection while still ongoing (and again, replacing
 * it, when it ends, if the ring still holds its start).  Writing runs in a
 * forked child at low priority (snapshot_writer.c); one at a time.  At
 * shutdown, one last child writes the hangs not written yet, after the
 * daemon is gone.
 *
 * Invariants: observe never allocates, never does I/O, and touches at most
 * one table slot; a hang is written at least once (shutdown writes the rest);
 * the table holds at most HD_SLOTS threads, the dead ones compacted away when
 * it is three quarters full (a full table stops learning new loops, it never
 * blocks the drain).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/syscall.h>
#else
#include "kdebug_decode.h"   /* kdd_is_poll_syscall: xnu's poll-family syscalls */
#endif
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "argus_decode.h"     /* argus_split_switch */
#include "argusd_ctx.h"
#include "hang_detector.h"
#include "hang_index.h"
#include "snapshot_writer.h"
#include "tid_table.h"

#define HD_SLOTS 4096                 /* power of two */
#define HD_SITES 4
#define MIN_LOOP_POLLS 5              /* diagnose/candidates.py MIN_LOOP_POLLS */
#define CHECK_EVERY_NS 100000000ull
#define GRACE_NS 1000000000ull        /* records of the hang's end reach the ring */
#define YIELD_RATE_PER_S 100          /* switch-outs per second that make a RepeatedYield guess */

enum hang_state { HANG_NONE, HANG_OPEN, HANG_ENDED };

struct hd_site {
	uint32_t nr;
	uint32_t count;
	uint64_t obj;
};

struct hd_thread {
	uint32_t tid, pid;               /* tid 0: empty slot */
	uint32_t npoll;
	uint8_t dead, user, blocked, in_loop;
	uint8_t wait_reason;             /* of the last switch-out */
	uint8_t hang;                    /* enum hang_state */
	uint8_t flushed;                 /* written while ongoing */
	struct hd_site sites[HD_SITES];
	uint64_t out_since;              /* left the loop (0: not seen yet) */
	uint64_t last_switch;
	uint64_t run_ns, wait_ns;        /* since out_since */
	uint32_t switches;
	uint8_t long_reason;             /* reason of the longest wait since out_since */
	uint8_t last_runnable;           /* the last switch-out was a preemption or yield */
	uint8_t guess_reason;            /* frozen at the hang's end, with the next three */
	uint64_t long_wait_ns;
	const char *guess;
	uint64_t h_run, h_wait;
	uint32_t h_switches;
	uint64_t hang_start, hang_detect, hang_end;
	char id[48];
	char comm[16], process[16];      /* read at detection: the process may be gone when written */
};

struct hang_detector {
	struct hang_detector_config cfg;
	struct hd_thread *slots;
	uint32_t keys[HD_SLOTS];         /* slots[i].tid: probed instead of the slots (16 KiB stay in cache) */
	uint32_t used;                   /* slots with tid != 0 */
	uint32_t watch_pids[HD_MAX_WATCH];
	uint32_t nwatch_pids;
	char watch_comms[HD_MAX_WATCH][16];
	uint32_t nwatch_comms;
	uint64_t next_check;
	pid_t writer;                    /* running snapshot writer, 0 when none */
	struct hd_thread *writing;       /* its thread (hang written when it exits) */
	uint64_t hangs, snapshots;
	struct hang_index *index;        /* the ring index (hang_index.c), or NULL */
};

static bool is_poll_syscall(uint32_t nr)
{
#ifndef __linux__
	return kdd_is_poll_syscall(nr);   /* xnu: the kdebug decoder's table */
#endif
	switch (nr) {
#ifdef SYS_poll
	case SYS_poll:
#endif
#ifdef SYS_select
	case SYS_select:
#endif
#ifdef SYS_epoll_wait
	case SYS_epoll_wait:
#endif
#ifdef SYS_ppoll
	case SYS_ppoll:
#endif
#ifdef SYS_pselect6
	case SYS_pselect6:
#endif
#ifdef SYS_epoll_pwait
	case SYS_epoll_pwait:
#endif
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return true;
	default:
		return false;
	}
}

struct hang_detector *hang_detector_new(const struct hang_detector_config *cfg)
{
	struct hang_detector *hd = calloc(1, sizeof(*hd));

	if (!hd)
		return NULL;
	hd->slots = calloc(HD_SLOTS, sizeof(*hd->slots));
	if (!hd->slots) {
		free(hd);
		return NULL;
	}
	hd->cfg = *cfg;
	return hd;
}

void hang_detector_free(struct hang_detector *hd)
{
	if (!hd)
		return;
	free(hd->slots);
	free(hd);
}

static bool pid_watched(const struct hang_detector *hd, uint32_t pid)
{
	for (uint32_t i = 0; i < hd->nwatch_pids; i++)
		if (hd->watch_pids[i] == pid)
			return true;
	return false;
}

int hang_detector_watch_pid(struct hang_detector *hd, uint32_t pid)
{
	if (pid_watched(hd, pid))
		return 0;
	if (hd->nwatch_pids == HD_MAX_WATCH)
		return -ENOSPC;
	hd->watch_pids[hd->nwatch_pids++] = pid;
	return 0;
}

int hang_detector_watch_comm(struct hang_detector *hd, const char *comm)
{
	if (hd->nwatch_comms == HD_MAX_WATCH)
		return -ENOSPC;
	snprintf(hd->watch_comms[hd->nwatch_comms++], 16, "%s", comm);
	return 0;
}

static struct hd_thread *lookup(struct hang_detector *hd, uint32_t tid)
{
	int64_t i = tid_table_find(hd->keys, HD_SLOTS, tid);

	return i < 0 ? NULL : &hd->slots[i];
}

/* Rebuilds the table without the dead entries (rare: three quarters full). */
static void compact(struct hang_detector *hd)
{
	struct hd_thread *old = hd->slots, *fresh = calloc(HD_SLOTS, sizeof(*fresh));

	if (!fresh)
		return;
	hd->slots = fresh;
	hd->used = 0;
	memset(hd->keys, 0, sizeof(hd->keys));
	for (uint32_t i = 0; i < HD_SLOTS; i++) {
		uint32_t j;

		if (!old[i].tid || (old[i].dead && old[i].hang == HANG_NONE && &old[i] != hd->writing))
			continue;
		j = tid_table_free_slot(hd->keys, HD_SLOTS, old[i].tid);
		fresh[j] = old[i];
		hd->keys[j] = old[i].tid;
		if (&old[i] == hd->writing)
			hd->writing = &fresh[j];
		hd->used++;
	}
	free(old);
}

static struct hd_thread *insert(struct hang_detector *hd, uint32_t tid, uint32_t pid)
{
	uint32_t i;

	if (hd->used >= HD_SLOTS / 4 * 3) {
		compact(hd);
		if (hd->used >= HD_SLOTS / 4 * 3)
			return NULL;
	}
	i = tid_table_free_slot(hd->keys, HD_SLOTS, tid);
	hd->keys[i] = tid;
	memset(&hd->slots[i], 0, sizeof(hd->slots[i]));
	hd->slots[i].tid = tid;
	hd->slots[i].pid = pid;
	hd->slots[i].user = pid_watched(hd, pid);
	hd->used++;
	return &hd->slots[i];
}

static bool watched(const struct hd_thread *t)
{
	return t->user || t->npoll >= MIN_LOOP_POLLS;
}

/* The loop site: the most frequent POLL site (ties: the first seen). */
static const struct hd_site *loop_site(const struct hd_thread *t)
{
	const struct hd_site *best = NULL;

	for (int i = 0; i < HD_SITES; i++)
		if (t->sites[i].count && (!best || t->sites[i].count > best->count))
			best = &t->sites[i];
	return best;
}

/* Counts a POLL wait at (nr, obj); true when it is at the loop site. */
static bool count_poll_site(struct hd_thread *t, uint32_t nr, uint64_t obj)
{
	struct hd_site *s = NULL, *least = &t->sites[0];
	const struct hd_site *loop;

	for (int i = 0; i < HD_SITES; i++) {
		if (t->sites[i].count && t->sites[i].nr == nr && t->sites[i].obj == obj) {
			s = &t->sites[i];
			break;
		}
		if (t->sites[i].count < least->count)
			least = &t->sites[i];
	}
	if (!s) {
		/* a full site table forgets its least used site (a one-off wait) */
		s = least;
		*s = (struct hd_site){ .nr = nr, .obj = obj };
	}
	if (s->count < UINT32_MAX)
		s->count++;
	loop = loop_site(t);
	return loop == s || loop->count == s->count;
}

/* The block type guess over the hang so far (the diagnosis classifies it
 * properly; this is what `argus hangs --recorded` shows). */
static const char *guess_over(const struct hd_thread *t, uint64_t start, uint64_t end)
{
	uint64_t dur = end > start ? end - start : 1, wait = t->wait_ns;

	if (t->blocked && !t->in_loop && end > t->last_switch)
		wait += end - t->last_switch;
	if (wait * 2 >= dur)
		return "LongWait";
	if ((uint64_t)t->switches * 1000000000ull >= (uint64_t)YIELD_RATE_PER_S * dur)
		return "RepeatedYield";
	return "LongRunning";
}

static const char *guess_block_type(const struct hd_thread *t, uint64_t end)
{
	return guess_over(t, t->hang_start, end);
}

/* A span out of the loop as a ring index entry (hang_index.h). */
static void index_entry(const struct hd_thread *t, uint64_t end, struct hx_entry *e)
{
	const char *g = guess_over(t, t->out_since, end);

	memset(e, 0, sizeof(*e));
	e->start_ns = t->out_since;
	e->end_ns = end;
	e->pid = t->pid;
	e->tid = t->tid;
	e->kind = HX_KIND_OUT_OF_LOOP;
	e->reason = t->long_wait_ns ? t->long_reason : t->wait_reason;
	e->guess = g[4] == 'W' ? HX_GUESS_LONG_WAIT : g[0] == 'R' ? HX_GUESS_REPEATED_YIELD : HX_GUESS_LONG_RUNNING;
	e->flags = HX_FLAG_LOOP | (t->user ? HX_FLAG_USER : 0);
	e->nr = ARGUS_SYSCALL_NONE;
	memcpy(e->comm, t->comm[0] ? t->comm : t->process, sizeof(e->comm));
}

static void index_span(struct hang_detector *hd, struct hx_entry *e)
{
	if (!e->comm[0])
		hang_index_name(hd->index, e);   /* read from /proc only at detection */
}

/* An open hang ends at ts: its numbers are kept for the writer, which runs
 * after the thread has moved on. */
static void back_in_loop(struct hang_detector *hd, struct hd_thread *t, uint64_t ts)
{
	if (hd->index && t->out_since && ts > t->out_since && ts - t->out_since >= HX_MIN_NS && watched(t)) {
		struct hx_entry e;

		index_entry(t, ts, &e);
		index_span(hd, &e);
		hang_index_add(hd->index, &e);
	}
	if (t->hang == HANG_OPEN) {
		t->hang = HANG_ENDED;
		t->hang_end = ts;
		t->guess = guess_block_type(t, ts);
		t->guess_reason = t->long_wait_ns ? t->long_reason : t->wait_reason;
		t->h_run = t->run_ns;
		t->h_wait = t->wait_ns;
		t->h_switches = t->switches;
	}
	t->out_since = 0;
}

static void left_loop(struct hd_thread *t, uint64_t ts)
{
	t->out_since = ts;
	t->run_ns = t->wait_ns = t->long_wait_ns = 0;
	t->switches = 0;
	t->long_reason = 0;
}

/* A thread with no loop (named by the user, never in a POLL wait): each
 * blocking wait and each run between them is judged on its own. */
static void boundary(struct hang_detector *hd, struct hd_thread *t, uint64_t ts)
{
	back_in_loop(hd, t, ts);
	if (t->hang == HANG_NONE)
		left_loop(t, ts);
}

static void on_switch_out(struct hang_detector *hd, struct hd_thread *t, const struct argus_ev_switch_out *e)
{
	uint64_t ts = e->h.ts_ns;
	bool runnable = e->state == ARGUS_STATE_RUNNABLE;

	if (!t->blocked && t->last_switch && ts > t->last_switch)
		t->run_ns += ts - t->last_switch;
	t->blocked = 1;
	t->last_runnable = runnable;
	t->last_switch = ts;
	t->wait_reason = e->wait_reason;
	t->switches++;
	t->in_loop = 0;
	/* waiting for a child (wait4, waitid) is a shell or launcher idle while
	 * its job runs, never a hang (diagnose/candidates.py leaves such threads
	 * out too): treated like the loop's own wait */
	if (!runnable && e->wait_reason == ARGUS_WAIT_CHILD) {
		t->in_loop = 1;
		back_in_loop(hd, t, ts);
		return;
	}
	if (!runnable && e->wait_reason == ARGUS_WAIT_POLL) {
		t->npoll++;
		if (count_poll_site(t, e->syscall_nr, e->wait_obj)) {
			t->in_loop = 1;
			back_in_loop(hd, t, ts);
			return;
		}
	}
	if (!loop_site(t)) {
		if (!runnable)
			boundary(hd, t, ts);
	} else if (!t->out_since && t->hang == HANG_NONE) {
		left_loop(t, ts);
	}
}

static void on_switch_in(struct hang_detector *hd, struct hd_thread *t, uint64_t ts)
{
	if (t->blocked && t->last_switch && ts > t->last_switch && !t->in_loop) {
		uint64_t w = ts - t->last_switch;

		t->wait_ns += w;
		if (w > t->long_wait_ns) {
			t->long_wait_ns = w;
			t->long_reason = t->wait_reason;
		}
	}
	if (t->in_loop && t->hang == HANG_NONE)
		left_loop(t, ts);
	else if (!loop_site(t) && t->blocked && !t->last_runnable)
		boundary(hd, t, ts);
	else if (!t->out_since && t->hang == HANG_NONE)
		left_loop(t, ts);
	t->blocked = 0;
	t->in_loop = 0;
	t->last_switch = ts;
}

static bool comm_matches(const struct hang_detector *hd, const char *comm)
{
	for (uint32_t i = 0; i < hd->nwatch_comms; i++)
		if (!strncmp(hd->watch_comms[i], comm, 15))
			return true;
	return false;
}

static void on_comm(struct hang_detector *hd, uint32_t pid, const char *comm)
{
	char name[16];

	memcpy(name, comm, 15);
	name[15] = 0;
	if (comm_matches(hd, name) && !pid_watched(hd, pid) && hang_detector_watch_pid(hd, pid) == 0)
		argusd_log(hd->cfg.ctx, "watching pid %u (%s) for hangs", pid, name);
}

void hang_detector_observe(struct hang_detector *hd, const struct argus_event_header *h)
{
	struct hd_thread *t;
	bool user;

	if (h->type == ARGUS_EV_SWITCH) {
		struct argus_ev_switch_out out;
		struct argus_ev_switch_in in;

		argus_split_switch((const struct argus_ev_switch *)h, &out, &in);
		hang_detector_observe(hd, &out.h);
		hang_detector_observe(hd, &in.h);
		return;
	}
	if (h->type == ARGUS_EV_SYSCALL) {
		struct argus_ev_syscall_enter_short enter;
		struct argus_ev_syscall_exit_short exit;

		argus_split_syscall((const struct argus_ev_syscall *)h, &enter, &exit);
		hang_detector_observe(hd, &enter.h);
		hang_detector_observe(hd, &exit.h);
		return;
	}
	if (hd->index)
		hang_index_observe(hd->index, h);
	switch (h->type) {
	case ARGUS_EV_SWITCH_OUT:
	case ARGUS_EV_SWITCH_IN:
	case ARGUS_EV_SYSCALL_ENTER:
	case ARGUS_EV_EXIT:
		break;
	case ARGUS_EV_EXEC:
	case ARGUS_EV_THREAD_NAME:
		if (hd->nwatch_comms)
			on_comm(hd, h->pid, ((const struct argus_ev_comm *)h)->comm);
		return;
	case ARGUS_EV_PROC_SNAPSHOT:
		if (hd->nwatch_comms)
			on_comm(hd, h->pid, ((const struct argus_ev_proc_snapshot *)h)->comm);
		return;
	default:
		return;
	}
	user = hd->nwatch_pids && pid_watched(hd, h->pid);
	if (h->tid != h->pid && !user)
		return;
	t = lookup(hd, h->tid);
	if (t && t->dead && h->type != ARGUS_EV_EXIT) {
		/* the tid's next thread */
		uint32_t tid = t->tid;

		if (t->hang != HANG_NONE || t == hd->writing)
			return;   /* rare: wait until the last one is written */
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		t->pid = h->pid;
		t->user = user;
	}
	if (!t) {
		const struct argus_ev_switch_out *so = (const void *)h;

		if (!user && !(h->type == ARGUS_EV_SWITCH_OUT && so->wait_reason == ARGUS_WAIT_POLL))
			return;
		t = insert(hd, h->tid, h->pid);
		if (!t)
			return;
	}
	t->user |= user;
	switch (h->type) {
	case ARGUS_EV_SWITCH_OUT:
		on_switch_out(hd, t, (const struct argus_ev_switch_out *)h);
		break;
	case ARGUS_EV_SWITCH_IN:
		on_switch_in(hd, t, h->ts_ns);
		break;
	case ARGUS_EV_SYSCALL_ENTER: {
		const struct argus_ev_syscall_enter *e = (const void *)h;
		const struct argus_ev_syscall_enter_short *es = (const void *)h;
		/* two forms, told apart by size (schema v3) */
		uint64_t obj = h->size >= sizeof(*e) ? e->obj : es->obj;
		const struct hd_site *s;

		/* back in the loop, and out of it again unless the poll blocks */
		if (is_poll_syscall(e->nr) && (s = loop_site(t)) && s->nr == e->nr && s->obj == obj) {
			back_in_loop(hd, t, h->ts_ns);
			if (t->hang == HANG_NONE)
				left_loop(t, h->ts_ns);
		}
		break;
	}
	case ARGUS_EV_EXIT:
		back_in_loop(hd, t, h->ts_ns);
		t->dead = 1;
		break;
	}
}

static void read_comm(uint32_t pid, uint32_t tid, char out[16])
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	out[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, 15);
	close(fd);
	out[n > 0 ? n : 0] = 0;
	out[strcspn(out, "\n")] = 0;
}

static void open_hang(struct hang_detector *hd, struct hd_thread *t, uint64_t now)
{
	struct timespec rt;
	struct tm tm;
	char when[24] = "";

	t->hang = HANG_OPEN;
	t->hang_start = t->out_since;
	t->hang_detect = now;
	t->flushed = 0;
	hd->hangs++;
	/* the id: the hang's wall-clock start, UTC, then the tid; ids sort by time */
	clock_gettime(CLOCK_REALTIME, &rt);
	rt.tv_sec -= (time_t)((now - t->hang_start) / 1000000000ull);
	if (gmtime_r(&rt.tv_sec, &tm))
		strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &tm);
	snprintf(t->id, sizeof(t->id), "%s-%u", when, t->tid);
	read_comm(t->pid, t->tid, t->comm);
	read_comm(t->pid, t->pid, t->process);
	argusd_log(hd->cfg.ctx, "hang: thread %u (%s) of pid %u out of its event loop for %.1f s (%s so far); snapshot %s",
		t->tid, t->comm, t->pid, (double)(now - t->hang_start) / 1e9, guess_block_type(t, now), t->id);
	syslog(LOG_WARNING | LOG_DAEMON, "argusd: hang: thread %u (%s) of pid %u out of its event loop for %.1f s; "
	       "argus hangs --recorded lists snapshot %s", t->tid, t->comm, t->pid,
	       (double)(now - t->hang_start) / 1e9, t->id);
}

static void fill_request(const struct hang_detector *hd, const struct hd_thread *t, uint64_t now,
			 struct snapshot_request *req)
{
	bool ongoing = t->hang == HANG_OPEN;
	uint64_t end = ongoing ? now : t->hang_end;

	memset(req, 0, sizeof(*req));
	snprintf(req->id, sizeof(req->id), "%s", t->id);
	req->pid = t->pid;
	req->tid = t->tid;
	memcpy(req->comm, t->comm, sizeof(req->comm));
	memcpy(req->process, t->process, sizeof(req->process));
	req->start_ns = t->hang_start;
	req->end_ns = end;
	req->detect_ns = t->hang_detect;
	req->ongoing = ongoing;
	req->since_ns = t->hang_start > hd->cfg.before_ns ? t->hang_start - hd->cfg.before_ns : 0;
	req->until_ns = now;
	req->threshold_ns = hd->cfg.threshold_ns;
	if (ongoing) {
		req->block_type = guess_block_type(t, end);
		req->wait_reason = t->long_wait_ns ? t->long_reason : t->wait_reason;
		req->run_ns = t->run_ns;
		req->wait_ns = t->wait_ns;
		req->switches = t->switches;
	} else {
		req->block_type = t->guess;
		req->wait_reason = t->guess_reason;
		req->run_ns = t->h_run;
		req->wait_ns = t->h_wait;
		req->switches = t->h_switches;
	}
}

/* Closes the fds in [from, to] (to: ~0u for all). */
static void close_fds(unsigned from, unsigned to)
{
	if (from > to)
		return;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, from, to, 0u) == 0)
		return;
#endif
	for (unsigned fd = from; fd <= to && fd < 65536; fd++)
		close((int)fd);
}

/* In a writer child: nothing of the daemon's stays open (a BPF link fd kept
 * by the child would keep the programs attached after the daemon stops) but
 * the snapshot directory's verified fd, through which everything is written. */
static void child_setup(const struct hang_detector_config *cfg)
{
	unsigned keep = (unsigned)cfg->dir_fd;

	close_fds(3, keep - 1);
	close_fds(keep + 1, ~0u);
	snapshot_writer_child_init();
	setpriority(PRIO_PROCESS, 0, 10);
}

static void start_writer(struct hang_detector *hd, struct hd_thread *t, uint64_t now)
{
	struct snapshot_request req;
	char err[256];
	pid_t pid;

	fill_request(hd, t, now, &req);
	pid = fork();
	if (pid < 0) {
		argusd_log(hd->cfg.ctx, "failed to fork the snapshot writer: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		/* the child: low priority, away from the drain loop */
		child_setup(&hd->cfg);
		if (snapshot_write(&hd->cfg, &req, err, sizeof(err))) {
			argusd_log(hd->cfg.ctx, "failed to write snapshot %s: %s", req.id, err);
			_exit(1);
		}
		argusd_log(hd->cfg.ctx, "snapshot %s written (%s, %s %.1f s)", req.id, req.block_type,
			req.ongoing ? "ongoing," : "lasted", (double)(req.end_ns - req.start_ns) / 1e9);
		_exit(0);
	}
	hd->writer = pid;
	hd->writing = t;
	if (t->hang == HANG_OPEN)
		t->flushed = 1;
	else
		t->hang = HANG_NONE;
}

static void reap_writer(struct hang_detector *hd)
{
	int status;

	if (!hd->writer || waitpid(hd->writer, &status, WNOHANG) != hd->writer)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		hd->snapshots++;
	/* killed outright (SIGKILL, OOM): its temporary file is ours to remove */
	if (WIFSIGNALED(status))
		argusd_log(hd->cfg.ctx, "snapshot writer pid %d killed by signal %d; %u temporary files of it removed",
			   (int)hd->writer, WTERMSIG(status), snapshot_sweep(hd->cfg.dir_fd, hd->writer));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		snapshot_sweep(hd->cfg.dir_fd, hd->writer);
	hd->writer = 0;
	hd->writing = NULL;
}

/* The ring index's open table: its own ongoing waits, then the spans out of
 * a loop still going on (ends at the latest record seen). */
static void index_open_spans(struct hang_detector *hd, uint64_t now)
{
	uint64_t last;

	if (!hd->index || !hang_index_open_begin(hd->index, now))
		return;
	last = hang_index_last_ts(hd->index);
	for (uint32_t i = 0; i < HD_SLOTS; i++) {
		const struct hd_thread *t = &hd->slots[i];
		struct hx_entry e;

		if (!hd->keys[i] || t->dead || t->in_loop || !t->out_since || !watched(t) || last <= t->out_since ||
		    last - t->out_since < HX_MIN_NS)
			continue;
		index_entry(t, last, &e);
		index_span(hd, &e);
		e.flags |= HX_FLAG_ONGOING;
		hang_index_open_add(hd->index, &e);
	}
	hang_index_open_end(hd->index);
}

void hang_detector_set_index(struct hang_detector *hd, struct hang_index *hx)
{
	hd->index = hx;
}

bool hang_detector_longest_out(const struct hang_detector *hd, uint64_t now, uint64_t min_ns, bool named_only,
			       uint32_t *tid, uint64_t *out_ns)
{
	uint64_t best = 0;

	for (uint32_t i = 0; i < HD_SLOTS; i++) {
		const struct hd_thread *t = &hd->slots[i];

		if (!hd->keys[i] || t->dead || t->in_loop || !t->out_since || !watched(t) || (named_only && !t->user) ||
		    now <= t->out_since || now - t->out_since < min_ns || now - t->out_since <= best)
			continue;
		best = now - t->out_since;
		*tid = t->tid;
	}
	*out_ns = best;
	return best != 0;
}

void hang_detector_check(struct hang_detector *hd, uint64_t now)
{
	if (now < hd->next_check)
		return;
	hd->next_check = now + CHECK_EVERY_NS;
	reap_writer(hd);
	index_open_spans(hd, now);
	for (uint32_t i = 0; i < HD_SLOTS; i++) {
		struct hd_thread *t = &hd->slots[i];

		if (!hd->keys[i])
			continue;
		if (t->hang == HANG_NONE) {
			if (!t->dead && !t->in_loop && t->out_since && watched(t) && now > t->out_since &&
			    now - t->out_since >= hd->cfg.threshold_ns)
				open_hang(hd, t, now);
			continue;
		}
		if (hd->writer)
			continue;
		if ((t->hang == HANG_ENDED && now >= t->hang_end + GRACE_NS) ||
		    (t->hang == HANG_OPEN && !t->flushed && now - t->hang_detect >= hd->cfg.flush_after_ns))
			start_writer(hd, t, now);
	}
}

void hang_detector_finish(struct hang_detector *hd, uint64_t now)
{
	struct snapshot_request *reqs;
	char err[256];
	uint32_t n = 0, i;
	pid_t pid;

	reqs = calloc(HD_SLOTS, sizeof(*reqs));
	if (!reqs)
		return;
	for (i = 0; i < HD_SLOTS; i++) {
		struct hd_thread *t = &hd->slots[i];

		if (t->tid && t->hang != HANG_NONE)
			fill_request(hd, t, now, &reqs[n++]);
	}
	/* `argus stop` waits for the socket, removed after this: the writing
	 * goes on in a child of its own, which outlives the daemon */
	pid = n ? fork() : -1;
	if (pid == 0) {
		child_setup(&hd->cfg);
		for (i = 0; i < n; i++)
			if (snapshot_write(&hd->cfg, &reqs[i], err, sizeof(err)))
				argusd_log(hd->cfg.ctx, "failed to write snapshot %s: %s", reqs[i].id, err);
			else
				argusd_log(hd->cfg.ctx, "snapshot %s written at shutdown (%s, %s %.1f s)", reqs[i].id, reqs[i].block_type,
					reqs[i].ongoing ? "ongoing," : "lasted",
					(double)(reqs[i].end_ns - reqs[i].start_ns) / 1e9);
		_exit(0);
	}
	if (n && pid < 0)
		argusd_log(hd->cfg.ctx, "failed to fork the snapshot writer: %s; %u hangs not written", strerror(errno), n);
	free(reqs);
}

void hang_detector_stats(const struct hang_detector *hd, struct hang_detector_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < HD_SLOTS; i++) {
		if (!hd->slots[i].tid || hd->slots[i].dead)
			continue;
		st->threads++;
		st->loops += watched(&hd->slots[i]);
	}
	st->hangs = hd->hangs;
	st->snapshots = hd->snapshots;
}
