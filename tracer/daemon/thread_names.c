// SPDX-License-Identifier: Apache-2.0
/*
 * Names after a wrap (argusd).
 *
 * The ring overwrites its oldest chunks, and with them the records that name
 * threads: the start-up PROC_SNAPSHOT, FORK, EXEC, THREAD_NAME.  A trace
 * decoded after a few laps then shows threads (and processes, named by their
 * main thread) without names.  The daemon therefore re-emits a PROC_SNAPSHOT
 * (pid, tid, ppid, main-thread flag, comm) for each thread whose last name
 * record would be overwritten before its last record.
 *
 * State per thread, in an open-addressing table keyed by tid:
 *   seen    chunk seq of its latest record of any type (observe)
 *   named   chunk seq of its latest naming record, observed or re-emitted
 *   pid, ppid, main, comm: from the naming records (the daemon fills what is
 *           unknown from /proc when it emits)
 *
 * Rule (N = chunks in the ring): a thread with seen > named whose name is at
 * least half a lap old (cur - named >= N / 2) gets a PROC_SNAPSHOT, and so
 * does its process's main thread by the same rule.  Checked when a record of
 * the thread is written (observe returns its tid: the daemon names it at
 * once, right after that record) and for every thread every max(1, N / 8)
 * chunks (refresh: threads that wrote nothing since).
 *
 * Invariant: every thread with a record in a chunk still in the buffer has a
 * name record still in the buffer.  A chunk with seq s is overwritten when
 * the ring reaches s + N.  If named >= seen, the name outlives the records.
 * Otherwise the name is re-emitted, at a seq >= seen, either right after
 * the record that made it due, or by refresh no later than
 * named + N/2 + N/8 < named + N, i.e. before the old name record is
 * overwritten.  Readers keep name records from outside a decoded window
 * (argus_decode.c), so any window decodes with names.
 * (tests/programs/thread_names_check.c checks this on a simulated ring.)
 *
 * Cost: one table probe per record written, and at most about two 48-byte
 * records per thread per lap of the ring, only for threads that ran since
 * their last name: no /proc walk per chunk.  Entries of threads not seen for
 * a whole lap (no record of theirs is left) or dead and named after their
 * last record are dropped, so the table holds the threads of one lap.
 */
#include "thread_names.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY 0u                 /* tid 0 (the idle task) is never tracked */
#define TOMB UINT32_MAX
#define MIN_CAP 1024u

struct entry {
	uint32_t tid, pid, ppid;
	uint8_t main, dead;
	char comm[ARGUS_COMM_LEN];
	uint64_t seen, named;
};

struct thread_names {
	uint64_t nchunks, half, every;
	struct entry *tab;
	uint32_t cap;                /* power of two */
	uint32_t live, used;         /* used counts tombstones too */
	uint64_t last_refresh;
	bool refreshed;
};

static uint32_t slot_of(uint32_t tid, uint32_t cap)
{
	return (tid * 2654435761u) & (cap - 1);
}

static bool resize(struct thread_names *n, uint32_t cap)
{
	struct entry *old = n->tab, *tab = calloc(cap, sizeof(*tab));
	uint32_t oldcap = n->cap;

	if (!tab)
		return false;
	n->tab = tab;
	n->cap = cap;
	n->used = n->live;
	for (uint32_t i = 0; i < oldcap; i++) {
		if (old[i].tid == EMPTY || old[i].tid == TOMB)
			continue;
		uint32_t s = slot_of(old[i].tid, cap);
		while (tab[s].tid != EMPTY)
			s = (s + 1) & (cap - 1);
		tab[s] = old[i];
	}
	free(old);
	return true;
}

struct thread_names *thread_names_new(uint32_t nchunks)
{
	struct thread_names *n = calloc(1, sizeof(*n));

	if (n && !resize(n, MIN_CAP)) {
		free(n);
		return NULL;
	}
	if (n) {
		n->nchunks = nchunks ? nchunks : 1;
		n->half = n->nchunks / 2 ? n->nchunks / 2 : 1;
		n->every = n->nchunks / 8 ? n->nchunks / 8 : 1;
	}
	return n;
}

void thread_names_free(struct thread_names *n)
{
	if (n)
		free(n->tab);
	free(n);
}

uint64_t thread_names_count(const struct thread_names *n)
{
	return n->live;
}

static struct entry *find(struct thread_names *n, uint32_t tid)
{
	for (uint32_t s = slot_of(tid, n->cap);; s = (s + 1) & (n->cap - 1)) {
		if (n->tab[s].tid == tid)
			return &n->tab[s];
		if (n->tab[s].tid == EMPTY)
			return NULL;
	}
}

/* The thread's entry, created (pid from the record, name unknown) when new;
 * NULL when out of memory: that thread is then just not refreshed. */
static struct entry *get(struct thread_names *n, uint32_t tid, uint32_t pid, uint64_t seq, bool *created)
{
	struct entry *e = find(n, tid);
	uint32_t s;

	*created = false;
	if (e)
		return e;
	/* Load <= 3/4 counting tombstones: probes stay short and end. */
	if ((n->used + 1) * 4 > n->cap * 3 &&
	    !resize(n, n->live * 4 + 4 > n->cap * 3 ? n->cap * 2 : n->cap))
		return NULL;
	for (s = slot_of(tid, n->cap); n->tab[s].tid != EMPTY && n->tab[s].tid != TOMB; s = (s + 1) & (n->cap - 1))
		;
	if (n->tab[s].tid == EMPTY)
		n->used++;
	n->live++;
	e = &n->tab[s];
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->pid = pid;
	e->main = tid == pid;
	e->seen = seq;
	e->named = 0;                /* no name record known: due once the ring is half a lap along */
	*created = true;
	return e;
}

static void set_name(struct entry *e, const char *comm, uint64_t seq)
{
	memcpy(e->comm, comm, ARGUS_COMM_LEN);
	e->comm[ARGUS_COMM_LEN - 1] = 0;
	e->named = seq;
}

static bool due(const struct entry *e, uint64_t cur, uint64_t half)
{
	return e->seen > e->named && cur - e->named >= half;
}

uint32_t thread_names_observe(struct thread_names *n, const void *rec, uint32_t size, uint64_t seq)
{
	const struct argus_event_header *h = rec;
	struct entry *e = NULL;
	bool created;

	if (size < sizeof(*h) || h->tid == EMPTY || h->tid == TOMB)
		return 0;
	switch (h->type) {
	case ARGUS_EV_FORK: {
		const struct argus_ev_fork *f = rec;

		if (size < sizeof(*f) || f->child_tid == EMPTY || f->child_tid == TOMB)
			break;
		uint32_t ppid = 0;

		e = get(n, h->tid, h->pid, seq, &created);
		if (e) {
			e->seen = seq;
			ppid = e->ppid;
		}
		/* (get may move entries: nothing is kept of the parent's but ppid) */
		e = get(n, f->child_tid, f->child_pid, seq, &created);
		if (!e)
			break;
		/* a reused tid is a new thread */
		e->pid = f->child_pid;
		e->main = f->child_tid == f->child_pid;
		e->dead = 0;
		e->ppid = e->main ? h->pid : ppid;
		set_name(e, f->comm, seq);
		break;
	}
	case ARGUS_EV_EXEC:
	case ARGUS_EV_THREAD_NAME: {
		const struct argus_ev_comm *c = rec;

		e = get(n, h->tid, h->pid, seq, &created);
		if (!e || size < sizeof(*c))
			break;
		e->pid = h->pid;
		set_name(e, c->comm, seq);
		break;
	}
	case ARGUS_EV_PROC_SNAPSHOT: {
		const struct argus_ev_proc_snapshot *p = rec;

		e = get(n, h->tid, h->pid, seq, &created);
		if (!e || size < sizeof(*p))
			break;
		e->pid = h->pid;
		e->ppid = p->ppid;
		e->main = p->is_main_thread != 0;
		set_name(e, p->comm, seq);
		break;
	}
	case ARGUS_EV_EXIT:
		e = get(n, h->tid, h->pid, seq, &created);
		if (e)
			e->dead = 1;
		break;
	default:
		e = get(n, h->tid, h->pid, seq, &created);
		break;
	}
	if (!e)
		return 0;
	e->seen = seq;
	return due(e, seq, n->half) ? e->tid : 0;
}

static void emit_entry(struct entry *e, uint64_t cur, thread_names_emit_fn emit, void *ctx, uint64_t *count)
{
	struct argus_ev_proc_snapshot rec;

	memset(&rec, 0, sizeof(rec));
	rec.h.pid = e->pid;
	rec.h.tid = e->tid;
	rec.ppid = e->ppid;
	rec.is_main_thread = e->main;
	memcpy(rec.comm, e->comm, ARGUS_COMM_LEN);
	if (emit(ctx, &rec) == 0)
		(*count)++;
	/* Written (the daemon observed it), or the thread is gone and nameless:
	 * either way not due again for half a lap. */
	if (e->named < cur)
		e->named = cur;
	if (!e->comm[0] && rec.comm[0])
		memcpy(e->comm, rec.comm, ARGUS_COMM_LEN);
}

/* Names e, and its process's main thread by the same rule (a main thread
 * not in the table is added, when room allows without moving entries). */
static void name_thread(struct thread_names *n, struct entry *e, uint64_t cur, thread_names_emit_fn emit,
			void *ctx, uint64_t *count)
{
	uint32_t pid = e->pid;
	struct entry *m;
	bool created;

	emit_entry(e, cur, emit, ctx, count);
	if (pid == e->tid || !pid)
		return;
	m = find(n, pid);
	if (!m && (n->used + 1) * 4 <= n->cap * 3) {
		m = get(n, pid, pid, cur, &created);
		if (m)
			m->named = 0;
	}
	if (m && m->named < cur && cur - m->named >= n->half) {
		m->seen = cur;
		emit_entry(m, cur, emit, ctx, count);
	}
}

uint64_t thread_names_name_now(struct thread_names *n, uint32_t tid, uint64_t cur,
			       thread_names_emit_fn emit, void *ctx)
{
	struct entry *e = find(n, tid);
	uint64_t count = 0;

	if (e && due(e, cur, n->half))
		name_thread(n, e, cur, emit, ctx, &count);
	return count;
}

uint64_t thread_names_refresh(struct thread_names *n, uint64_t cur, thread_names_emit_fn emit, void *ctx)
{
	uint64_t count = 0;

	if (n->refreshed && cur - n->last_refresh < n->every)
		return 0;
	n->refreshed = true;
	n->last_refresh = cur;
	/* Emitting writes records, which observe() sees: those name threads
	 * already in the table, so nothing is inserted (or moved) under this
	 * loop but the main threads added below, each after a room check. */
	for (uint32_t i = 0; i < n->cap; i++) {
		struct entry *e = &n->tab[i];

		if (e->tid == EMPTY || e->tid == TOMB)
			continue;
		if (cur - e->seen >= n->nchunks || (e->dead && e->named >= e->seen)) {
			e->tid = TOMB;   /* nothing of it left to name, or named after its end */
			n->live--;
			continue;
		}
		if (due(e, cur, n->half))
			name_thread(n, e, cur, emit, ctx, &count);
	}
	return count;
}
