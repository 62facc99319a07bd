// SPDX-License-Identifier: Apache-2.0
/*
 * The ring index: what `argus hangs` needs, written while the records go past.
 *
 * Decoding a full 2 GiB buffer to find a hang costs a minute and gigabytes;
 * argusd sees every record anyway.  So for every main thread (tid == pid,
 * kernel threads excluded) it keeps the wait in progress, and writes each
 * wait of HX_MIN_NS or more into a ring in a file of its own when it ends;
 * the hang detector (hang_detector.c) writes its spans out of an event loop
 * the same way.  Intervals still going on are in the open table, rewritten
 * every 100 ms.  The reader is tracer/ringindex.py; the layout is
 * hang_index.h and docs/ring-buffer.md ("The ring index").
 *
 * A wait, per main thread (observe):
 *   SWITCH_OUT blocked (not preempted) -> a wait begins at its ts, with its
 *     reason, syscall and object; POLL waits are counted (a wait after
 *     MIN_LOOP_POLLS of them since the thread's last indexed wait is an
 *     event loop's, flag LOOP: a thread that polled a few times once and now
 *     only waits in futexes or sleeps is no loop) but not
 *     kept (the detector judges them: a nested POLL wait is inside its span),
 *     nor are waits for a child (a shell or launcher: idle).
 *   WAKEUP of it (or, when none was seen, its SWITCH_IN) -> the wait has
 *     ended, at this ts (the graph ends a wait at its wakeup too), unless
 *     the thread blocks again in the same syscall on the same object before
 *     any syscall record of its own: a spurious wakeup, one wait (as
 *     diagnose/hangs.py _continues joins them).
 *   A wakeup older than the thread's latest switch-in, switch-out or
 *     syscall record came late (records are staged per CPU): it is ignored,
 *     or the spurious wake it caused would end the wait that goes on.
 *   any syscall record, another wait, EXIT, or 100 ms running -> the ended
 *     wait is written when it lasted HX_MIN_NS or more.  A syscall record or
 *     a switch-out of a thread still blocked means its wakeup and switch-in
 *     were lost: the wait ended by then (an upper bound), not never.
 *   FORK by kthreadd, a PROC_SNAPSHOT with ppid 2 -> a kernel thread: none
 *     of its waits is kept (nobody waits for it); a FORK of a new process by
 *     anyone else clears its pid's mark (pids are reused).
 * Writing an entry: the fields, then its seq (release), then the header's
 * next_seq (release): a reader that saw next_seq sees the entry whole, and
 * one that did not skips it (ringindex.py keeps seq in (n1 - N, n0]).
 *
 * Invariants: observe touches one table slot and never allocates or does
 * I/O; the file is only ever written through the mapping of a file whose
 * blocks were reserved (a full disk cannot SIGBUS); the table holds at most
 * HX_SLOTS threads, dead ones compacted away when three quarters full (a
 * full table stops indexing new threads, it never blocks the drain).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hang_index.h"
#include "safe_dir.h"
#include "tid_table.h"

#define HX_SLOTS 8192                 /* power of two */
#define HX_PID_LIMIT (1u << 22)       /* PID_MAX_LIMIT: kernel-thread bitmap */
#define KTHREADD_PID 2
#define MIN_LOOP_POLLS 5
#define OPEN_EVERY_NS 100000000ull
#define SETTLE_NS 100000000ull        /* a woken wait not rejoined this long has ended */

struct hx_thread {
	uint32_t tid;                 /* 0: empty */
	uint8_t blocked, woken, dead, user;
	uint8_t reason;
	uint32_t nr;
	uint64_t obj;
	uint64_t since, woke;         /* the wait's start; its end once woken */
	uint64_t last_own;            /* ts of its latest switch-in or syscall record */
	uint32_t npoll;               /* POLL waits since its last indexed wait */
	char comm[16];
};

struct hang_index {
	int dir_fd, fd;
	struct hx_header *hdr;
	struct hx_entry *open, *ring;
	size_t map_len;
	struct hx_thread *slots;
	uint32_t keys[HX_SLOTS];
	uint32_t used;
	uint8_t *kthreads;            /* bitmap by pid */
	uint64_t last_ts, next_open;
	uint32_t open_n;
};

static bool is_kthread(const struct hang_index *hx, uint32_t pid)
{
	return pid == KTHREADD_PID || (pid < HX_PID_LIMIT && (hx->kthreads[pid / 8] >> (pid % 8)) & 1);
}

static void mark_kthread(struct hang_index *hx, uint32_t pid)
{
	if (pid < HX_PID_LIMIT)
		hx->kthreads[pid / 8] |= (uint8_t)(1u << (pid % 8));
}

/* A new process took the pid (pid_max is often 32768: pids are reused within
 * minutes on a busy machine, and a kernel thread's old pid must not hide a
 * process from the index). */
static void clear_kthread(struct hang_index *hx, uint32_t pid)
{
	if (pid < HX_PID_LIMIT)
		hx->kthreads[pid / 8] &= (uint8_t)~(1u << (pid % 8));
}

static struct hx_thread *lookup(struct hang_index *hx, uint32_t tid)
{
	int64_t i = tid_table_find(hx->keys, HX_SLOTS, tid);

	return i < 0 ? NULL : &hx->slots[i];
}

/* Rebuilds the table without dead threads (rare: three quarters full). */
static void compact(struct hang_index *hx)
{
	struct hx_thread *old = hx->slots, *fresh = calloc(HX_SLOTS, sizeof(*fresh));

	if (!fresh)
		return;
	hx->slots = fresh;
	hx->used = 0;
	memset(hx->keys, 0, sizeof(hx->keys));
	for (uint32_t i = 0; i < HX_SLOTS; i++) {
		uint32_t j;

		if (!old[i].tid || old[i].dead)
			continue;
		j = tid_table_free_slot(hx->keys, HX_SLOTS, old[i].tid);
		fresh[j] = old[i];
		hx->keys[j] = old[i].tid;
		hx->used++;
	}
	free(old);
}

static struct hx_thread *get(struct hang_index *hx, uint32_t tid)
{
	struct hx_thread *t = lookup(hx, tid);
	uint32_t i;

	if (t) {
		if (t->dead) {                /* the tid's next thread */
			memset(t, 0, sizeof(*t));
			t->tid = tid;
		}
		return t;
	}
	if (hx->used >= HX_SLOTS / 4 * 3) {
		compact(hx);
		if (hx->used >= HX_SLOTS / 4 * 3)
			return NULL;
	}
	i = tid_table_free_slot(hx->keys, HX_SLOTS, tid);
	hx->keys[i] = tid;
	memset(&hx->slots[i], 0, sizeof(hx->slots[i]));
	hx->slots[i].tid = tid;
	hx->used++;
	return &hx->slots[i];
}

static void fill(const struct hx_thread *t, struct hx_entry *e, uint64_t end)
{
	memset(e, 0, sizeof(*e));
	e->start_ns = t->since;
	e->end_ns = end;
	e->pid = e->tid = t->tid;
	e->kind = HX_KIND_WAIT;
	e->reason = t->reason;
	e->guess = HX_GUESS_LONG_WAIT;
	/* an event loop's wait: the thread was turning its loop just before it */
	e->flags = (t->npoll >= MIN_LOOP_POLLS ? HX_FLAG_LOOP : 0);
	e->nr = t->nr;
	e->obj = t->obj;
	memcpy(e->comm, t->comm, sizeof(e->comm));
}

void hang_index_add(struct hang_index *hx, const struct hx_entry *e)
{
	uint64_t n = hx->hdr->next_seq;
	struct hx_entry *slot = &hx->ring[n % hx->hdr->nentries];

	/* the old entry's seq stays until the new one's is stored: the reader's
	 * range check, not the slot, tells a torn entry (ringindex.py) */
	memcpy((char *)slot + sizeof(slot->seq), (const char *)e + sizeof(e->seq), sizeof(*e) - sizeof(e->seq));
	/* release: the fields above before the seq that makes them valid */
	__atomic_store_n(&slot->seq, n + 1, __ATOMIC_RELEASE);
	/* release: the entry before the count that tells readers it is there */
	__atomic_store_n(&hx->hdr->next_seq, n + 1, __ATOMIC_RELEASE);
}

/* A woken wait is over: written when long enough. */
static void settle(struct hang_index *hx, struct hx_thread *t)
{
	struct hx_entry e;

	if (t->woken && t->woke - t->since >= HX_MIN_NS) {
		fill(t, &e, t->woke);
		hang_index_add(hx, &e);
		t->npoll = 0;         /* the next wait is a loop's only if the loop turns again */
	}
	t->woken = 0;
}

/* A record of the blocked thread's own (a syscall, a switch-out): it ran, so
 * its wakeup and switch-in were lost (a busy machine drops records); the wait
 * ended by then, and is written with that end rather than lost. */
static void ran(struct hx_thread *t, uint64_t ts)
{
	if (ts > t->last_own)
		t->last_own = ts;
	if (t->blocked && ts > t->since) {
		t->blocked = 0;
		t->woken = 1;
		t->woke = ts;
	}
}

static void on_switch_out(struct hang_index *hx, struct hx_thread *t, const struct argus_ev_switch_out *e)
{
	uint64_t obj = e->wait_obj;

	/* records come staged per CPU, so not in time order: a switch-out older
	 * than a switch-in or syscall of the thread already seen is a wait that
	 * has ended (short: a staging delay), not one that begins */
	if (e->h.ts_ns < t->last_own)
		return;
	ran(t, e->h.ts_ns);
	if (e->state == ARGUS_STATE_RUNNABLE || e->state == ARGUS_STATE_DEAD)
		return;                       /* preempted or yielding: running, as far as waits go */
	if (t->woken && e->wait_reason == t->reason && e->syscall_nr == t->nr && obj == t->obj &&
	    e->syscall_nr != ARGUS_SYSCALL_NONE) {
		t->woken = 0;                 /* a spurious wakeup: the same wait goes on */
		t->blocked = 1;
		return;
	}
	settle(hx, t);
	if (e->wait_reason == ARGUS_WAIT_POLL) {
		if (t->npoll < UINT32_MAX)
			t->npoll++;
		return;
	}
	if (e->wait_reason == ARGUS_WAIT_CHILD)
		return;
	t->blocked = 1;
	t->since = e->h.ts_ns;
	t->reason = e->wait_reason;
	t->nr = e->syscall_nr;
	t->obj = obj;
}

static void set_comm(struct hx_thread *t, const char *comm)
{
	memcpy(t->comm, comm, 15);
	t->comm[15] = 0;
}

void hang_index_observe(struct hang_index *hx, const struct argus_event_header *h)
{
	struct hx_thread *t;

	if (h->ts_ns > hx->last_ts)
		hx->last_ts = h->ts_ns;
	if (!hx->hdr->since_ns && h->ts_ns)
		hx->hdr->since_ns = h->ts_ns;
	switch (h->type) {
	case ARGUS_EV_FORK: {
		const struct argus_ev_fork *f = (const void *)h;

		if (h->pid == KTHREADD_PID || is_kthread(hx, h->pid)) {
			mark_kthread(hx, f->child_pid);
		} else if (f->child_pid == f->child_tid) {
			clear_kthread(hx, f->child_pid);
			if ((t = get(hx, f->child_tid)))
				set_comm(t, f->comm);
		}
		return;
	}
	case ARGUS_EV_PROC_SNAPSHOT: {
		const struct argus_ev_proc_snapshot *s = (const void *)h;

		if (s->ppid == KTHREADD_PID)
			mark_kthread(hx, h->pid);
		else if (h->tid == h->pid && !is_kthread(hx, h->pid) && (t = get(hx, h->tid)))
			set_comm(t, s->comm);
		return;
	}
	case ARGUS_EV_WAKEUP: {
		const struct argus_ev_wakeup *w = (const void *)h;

		/* a wakeup older than the thread's latest own record was drained
		 * late (staged on another CPU): it ended an earlier wait, or the
		 * spurious wake of this one, never the wait going on */
		if (w->wakee_tid == w->wakee_pid && (t = lookup(hx, w->wakee_tid)) && t->blocked && !t->dead &&
		    h->ts_ns >= t->since && h->ts_ns >= t->last_own) {
			t->blocked = 0;
			t->woken = 1;
			t->woke = h->ts_ns;
		}
		return;
	}
	case ARGUS_EV_EXEC:
	case ARGUS_EV_THREAD_NAME:
		if (h->tid == h->pid && !is_kthread(hx, h->pid) && (t = lookup(hx, h->tid)))
			set_comm(t, ((const struct argus_ev_comm *)h)->comm);
		return;
	case ARGUS_EV_SWITCH_OUT:
	case ARGUS_EV_SWITCH_IN:
	case ARGUS_EV_SYSCALL_ENTER:
	case ARGUS_EV_SYSCALL_EXIT:
	case ARGUS_EV_EXIT:
		break;
	default:
		return;
	}
	if (h->tid != h->pid || is_kthread(hx, h->pid))
		return;
	/* an exiting task's last switch-out (after its EXIT) starts no wait */
	if (h->type == ARGUS_EV_SWITCH_OUT && ((const struct argus_ev_switch_out *)h)->state == ARGUS_STATE_DEAD)
		return;
	t = h->type == ARGUS_EV_SWITCH_OUT ? get(hx, h->tid) : lookup(hx, h->tid);
	if (!t)
		return;
	switch (h->type) {
	case ARGUS_EV_SWITCH_OUT:
		on_switch_out(hx, t, (const struct argus_ev_switch_out *)h);
		break;
	case ARGUS_EV_SWITCH_IN:
		ran(t, h->ts_ns);
		break;
	case ARGUS_EV_EXIT:
		settle(hx, t);
		t->blocked = 0;
		t->dead = 1;
		break;
	default:                          /* its own syscall: the woken wait returned */
		ran(t, h->ts_ns);
		settle(hx, t);
		break;
	}
}

bool hang_index_open_begin(struct hang_index *hx, uint64_t now_ns)
{
	if (now_ns < hx->next_open)
		return false;
	hx->next_open = now_ns + OPEN_EVERY_NS;
	/* odd: readers retry; release orders the bump before the rewrite */
	__atomic_store_n(&hx->hdr->open_gen, hx->hdr->open_gen + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	hx->open_n = 0;
	for (uint32_t i = 0; i < HX_SLOTS; i++) {
		struct hx_thread *t = &hx->slots[i];
		struct hx_entry e;

		if (!hx->keys[i] || t->dead)
			continue;
		if (t->woken && hx->last_ts > t->woke + SETTLE_NS)
			settle(hx, t);       /* woken and running since: the wait is over */
		if (t->blocked && hx->last_ts > t->since && hx->last_ts - t->since >= HX_MIN_NS) {
			fill(t, &e, hx->last_ts);
			e.flags |= HX_FLAG_ONGOING;
			hang_index_open_add(hx, &e);
		}
	}
	return true;
}

void hang_index_open_add(struct hang_index *hx, const struct hx_entry *e)
{
	if (hx->open_n >= hx->hdr->nopen)
		return;
	hx->open[hx->open_n] = *e;
	hx->open[hx->open_n].seq = 1;
	hx->open_n++;
}

void hang_index_open_end(struct hang_index *hx)
{
	hx->hdr->open_count = hx->open_n;
	hx->hdr->last_ts = hx->last_ts;
	/* release: the table before the even generation that publishes it */
	__atomic_store_n(&hx->hdr->open_gen, hx->hdr->open_gen + 1, __ATOMIC_RELEASE);
}

uint64_t hang_index_last_ts(const struct hang_index *hx)
{
	return hx->last_ts;
}

void hang_index_name(struct hang_index *hx, struct hx_entry *e)
{
	const struct hx_thread *t = lookup(hx, e->tid);

	if (t)
		memcpy(e->comm, t->comm, sizeof(e->comm));
}

/* Index files of other buffers (a re-created buffer has a new inode). */
static void remove_stale(int dir_fd, const char *keep)
{
	int fd = dup(dir_fd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(dir))) {
		size_t n = strlen(de->d_name);

		if (!strncmp(de->d_name, "ring-", 5) && n > 9 && !strcmp(de->d_name + n - 4, ".idx") &&
		    strcmp(de->d_name, keep))
			safe_dir_unlink(dir_fd, de->d_name);
	}
	closedir(dir);
}

struct hang_index *hang_index_create(int dir_fd, const char *dir, uint64_t buffer_ino, uint64_t buffer_created_ns,
				     char *err, size_t errlen)
{
	struct hang_index *hx = calloc(1, sizeof(*hx));
	size_t len = sizeof(struct hx_header) + (size_t)(HX_OPEN + HX_ENTRIES) * sizeof(struct hx_entry);
	char name[64], tmp[SAFE_DIR_TMP_MAX];
	void *map;
	int fd, rc;

	_Static_assert(sizeof(struct hx_header) == 128, "hx_header is 128 bytes (ringindex.py)");
	_Static_assert(sizeof(struct hx_entry) == 64, "hx_entry is 64 bytes (ringindex.py)");
	if (!hx || !(hx->slots = calloc(HX_SLOTS, sizeof(*hx->slots))) ||
	    !(hx->kthreads = calloc(HX_PID_LIMIT / 8, 1))) {
		snprintf(err, errlen, "failed to allocate the ring index");
		goto fail;
	}
	snprintf(name, sizeof(name), "ring-%llu.idx", (unsigned long long)buffer_ino);
	remove_stale(dir_fd, name);
	fd = safe_dir_create_tmp(dir_fd, name, tmp);
	if (fd < 0) {
		snprintf(err, errlen, "failed to create the ring index in %s: %s", dir, strerror(-fd));
		goto fail;
	}
	/* blocks reserved: a full disk is an error here, never a SIGBUS later */
#ifdef __APPLE__
	/* no posix_fallocate (as in argus_rb.c): a sparse file, and on a full
	 * disk a store into it may fault */
	rc = ftruncate(fd, (off_t)len) ? errno : 0;
#else
	rc = posix_fallocate(fd, 0, (off_t)len);
#endif
	map = rc ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "failed to map the ring index %s/%s: %s", dir, name, strerror(rc ? rc : errno));
		close(fd);
		unlinkat(dir_fd, tmp, 0);
		goto fail;
	}
	hx->hdr = map;
	hx->open = (struct hx_entry *)((char *)map + sizeof(struct hx_header));
	hx->ring = hx->open + HX_OPEN;
	hx->map_len = len;
	hx->hdr->version = HX_VERSION;
	hx->hdr->header_size = sizeof(struct hx_header);
	hx->hdr->entry_size = sizeof(struct hx_entry);
	hx->hdr->nentries = HX_ENTRIES;
	hx->hdr->nopen = HX_OPEN;
	hx->hdr->buffer_ino = buffer_ino;
	hx->hdr->buffer_created_ns = buffer_created_ns;
	hx->hdr->min_ns = HX_MIN_NS;
	hx->hdr->daemon_pid = (uint32_t)getpid();
	/* release: the geometry before the magic that says the file is whole */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(hx->hdr->magic, HX_MAGIC, sizeof(HX_MAGIC));
	rc = safe_dir_publish(dir_fd, fd, tmp, name);
	if (rc) {
		snprintf(err, errlen, "failed to publish the ring index %s/%s: %s", dir, name, strerror(-rc));
		munmap(map, len);
		close(fd);
		hx->hdr = NULL;
		goto fail;
	}
	hx->fd = fd;
	hx->dir_fd = dir_fd;
	return hx;
fail:
	if (hx) {
		free(hx->slots);
		free(hx->kthreads);
		free(hx);
	}
	return NULL;
}

void hang_index_free(struct hang_index *hx)
{
	if (!hx)
		return;
	if (hx->hdr) {
		hx->hdr->daemon_pid = 0;
		munmap(hx->hdr, hx->map_len);
		close(hx->fd);
	}
	free(hx->slots);
	free(hx->kthreads);
	free(hx);
}
