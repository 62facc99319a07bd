/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Graph core: ownership edges (EDGE_OWNERSHIP) from the holder of what a
 * thread waits for or polls to the thread's vertex (see argus_graph.c for
 * the pass, docs/event-graph.md for the model).
 *
 *   futex owner    a FUTEX_STATE row just before a blocking futex wait names
 *                  a tid: the PI word's owner (strong: the kernel's ABI) or
 *                  a glibc mutex's __owner field (weak: a guess from the
 *                  layout).  It counts only if it is a live thread of the
 *                  waiter's process other than the waiter.
 *   thread exit    a FUTEX_STATE row flagged THREAD_EXIT: the wait is a
 *                  join (the word is the clear_child_tid of the thread the
 *                  record names, which the kernel clears at its exit);
 *                  strong (the kernel's own field said so), same liveness
 *                  test.
 *   futex channel  without an owner, the threads that woke waiters of the
 *                  same (process, uaddr) before -- a FUTEX_WAKE-family call
 *                  whose wakeup ended a wait on that address -- are the
 *                  likely holders of a condition or GIL-like lock (weak; the
 *                  last two distinct wakers).
 *   file lock      a lock table per inode fed by FILE_LOCK rows and their
 *                  SYSCALL_EXIT results (acquire on success, release on
 *                  unlock or process exit).  A try that fails (-EAGAIN,
 *                  -EACCES) or a blocking request that blocks points to the
 *                  conflicting holder: the table's entry (strong: the trace
 *                  saw it taken), else the process the kernel's lock list
 *                  named in the record (strong), through its main thread.
 *
 * The holder's vertex is its segment at that moment: running then, or the
 * last one it ran before (a holder blocked since before the trace: the
 * pre-trace placeholder its later wakeup creates), found after the pass.  Edge ts = src_ts = the victim's wait start or the
 * failed try's return; obj = futex uaddr or inode.
 *
 * Known gaps: close() of a descriptor (which drops POSIX locks) is not
 * traced, a lock taken before the trace is known only through the kernel's
 * holder, and an unlock of part of a range releases the whole entry.
 */

#include "argus_graph_int.h"

#define EAGAIN_NEG (-11)
#define EACCES_NEG (-13)

/* The holder's vertex is resolved after the pass (resolve_owner_edges): a
 * holder blocked since before the trace has no segment yet. */
static void owner_edge(struct argus_graph *g, int64_t holder, int64_t dst, int kind, int weak, int64_t ts,
		       uint64_t row, uint64_t obj)
{
	struct oreq *q = vec_push(&g->oreqs);

	if (!q)
		return (void)(g->oom = 1);
	q->holder = holder;
	q->dst = dst;
	q->ts = ts;
	q->row = (int64_t)row;
	q->obj = obj;
	q->kind = (uint8_t)kind;
	q->weak = (uint8_t)weak;
}

/* Not dead and not exited. */
static int alive(const struct thr *t)
{
	return t->state != DEAD && t->end_ts < 0;
}

/* utid of a live thread tid of process pid other than self, else -1. */
static int64_t live_thread(struct argus_graph *g, uint32_t tid, uint32_t pid, int64_t self)
{
	const struct map_slot *s = tid ? map_find(&g->tid_map, tid, 0) : NULL;
	const struct thr *t;

	if (!s || s->val == self)
		return -1;
	t = TH(g, s->val);
	if (t->pid != pid || !alive(t))
		return -1;
	return s->val;
}

/* ------------------------------------------------------------------ futex */

void on_futex_state(struct argus_graph *g, int64_t u, const struct argus_row *r)
{
	struct thr *t = TH(g, u);

	t->fx_uaddr = r->obj;
	t->fx_ts = (int64_t)r->ts_ns;
	t->fx_word = (uint32_t)r->val;
	t->fx_owner = r->peer_tid;
	t->fx_flags = r->state;
}

void learn_futex_waker(struct argus_graph *g, int64_t waker, int64_t wakee, uint64_t uaddr)
{
	uint32_t pid = TH(g, wakee)->pid;
	int ins;
	struct map_slot *s;
	uint64_t v, first;

	if (waker == wakee || TH(g, waker)->pid != pid)
		return;
	s = map_upsert(&g->fchan, pid, uaddr, 0, &ins);
	if (!s)
		return (void)(g->oom = 1);
	v = (uint64_t)s->val;
	first = v & 0xffffffffu;
	if (first == (uint64_t)waker + 1)
		return;
	s->val = (int64_t)(((uint64_t)waker + 1) | (first << 32));
}

static void futex_edges(struct argus_graph *g, int64_t u, int64_t dst, int64_t ts, uint64_t i, uint64_t uaddr)
{
	struct thr *t = TH(g, u);
	const struct map_slot *s;
	int k;

	if (t->fx_ts == ts && t->fx_uaddr == uaddr) {
		int pi = (t->fx_flags & ARGUS_FUTEX_PI) != 0;
		int join = (t->fx_flags & ARGUS_FUTEX_THREAD_EXIT) != 0;
		uint32_t tid = pi ? (t->fx_word & ARGUS_FUTEX_TID_MASK) : t->fx_owner;
		int64_t h = live_thread(g, tid, t->pid, u);

		t->fx_ts = -1;
		if (h >= 0) {
			owner_edge(g, h, dst, join ? ARGUS_OWNER_THREAD_EXIT : ARGUS_OWNER_FUTEX_OWNER, !pi && !join, ts,
				   i, uaddr);
			return;
		}
	}
	s = map_find(&g->fchan, t->pid, uaddr);
	if (!s)
		return;
	for (k = 0; k < 2; k++) {
		int64_t h = (int64_t)(((uint64_t)s->val >> (32 * k)) & 0xffffffffu) - 1;

		if (h >= 0 && h != u && alive(TH(g, h)))
			owner_edge(g, h, dst, ARGUS_OWNER_FUTEX_CHANNEL, 1, ts, i, uaddr);
	}
}

/* ------------------------------------------------------------------ files */

static uint64_t lock_owner(uint8_t kind, uint32_t pid, int32_t fd)
{
	return kind == ARGUS_LOCK_POSIX ? pid : ((uint64_t)pid << 32) | (uint32_t)fd;
}

/* The table entry conflicting with thread t's pending request, or NULL. */
static struct held *conflicting(struct argus_graph *g, const struct thr *t)
{
	const struct map_slot *s = map_find(&g->locks, t->lk_inode, 0);
	uint64_t owner = lock_owner(t->lk_kind, t->pid, t->lk_fd);
	int64_t k = s ? s->val : -1;

	while (k >= 0) {
		struct held *h = &VEC_AT(&g->lockv, struct held, k);

		if (h->type && (h->kind == ARGUS_LOCK_FLOCK) == (t->lk_kind == ARGUS_LOCK_FLOCK) &&
		    h->owner != owner && h->start <= t->lk_end && t->lk_start <= h->end &&
		    (h->type == ARGUS_LOCK_WRITE || t->lk_type == ARGUS_LOCK_WRITE))
			return h;
		k = h->next;
	}
	return NULL;
}

/* An edge from whoever holds what thread u's pending request wants. */
static void file_lock_edge(struct argus_graph *g, int64_t u, int64_t dst, int64_t ts, uint64_t i)
{
	struct thr *t = TH(g, u);
	struct held *h = conflicting(g, t);
	int64_t holder = -1;

	if (h && TH(g, h->utid)->state != DEAD)
		holder = h->utid;
	if (holder < 0 && t->lk_holder_pid) {
		/* the process the kernel named: its main thread */
		const struct map_slot *s = map_find(&g->tid_map, t->lk_holder_pid, 0);

		if (s && TH(g, s->val)->pid == t->lk_holder_pid && TH(g, s->val)->state != DEAD)
			holder = s->val;
	}
	/* POSIX locks belong to the process, so a holder in it never conflicts;
	 * flock() locks belong to the open file, so another thread of the same
	 * process that opened the file on its own holds it against this one */
	if (holder >= 0 && holder != u && (t->lk_kind == ARGUS_LOCK_FLOCK || TH(g, holder)->pid != t->pid))
		owner_edge(g, holder, dst, ARGUS_OWNER_FILE_LOCK, 0, ts, i, t->lk_inode);
}

void on_file_lock(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);
	uint64_t len = r->obj2;

	t->lk_active = 1;
	t->lk_edge = 0;
	t->lk_nr = t->cur_nr;
	t->lk_kind = r->state;
	t->lk_type = r->reason;
	t->lk_wait = r->peer_tid != 0;
	t->lk_fd = r->aux;
	t->lk_start = r->val;
	t->lk_end = len ? r->val + (int64_t)len - 1 : INT64_MAX;
	t->lk_inode = r->obj;
	t->lk_holder_pid = r->peer_pid;
	t->lk_row = (int64_t)i;
}

/* Frees the entries of owner on inode overlapping [start, end] (the
 * request's range; an entry partly inside goes whole, see Known gaps). */
static void release(struct argus_graph *g, uint64_t inode, uint64_t owner, int64_t start, int64_t end)
{
	const struct map_slot *s = map_find(&g->locks, inode, 0);
	int64_t k = s ? s->val : -1;

	while (k >= 0) {
		struct held *h = &VEC_AT(&g->lockv, struct held, k);

		if (h->type && h->owner == owner && h->start <= end && start <= h->end)
			h->type = 0;
		k = h->next;
	}
}

static void acquire(struct argus_graph *g, int64_t u)
{
	struct thr *t = TH(g, u);
	uint64_t owner = lock_owner(t->lk_kind, t->pid, t->lk_fd);
	int ins;
	struct map_slot *s;
	struct held *h = NULL;
	int64_t k;

	release(g, t->lk_inode, owner, t->lk_start, t->lk_end);   /* a new type replaces the old */
	s = map_upsert(&g->locks, t->lk_inode, 0, -1, &ins);
	if (!s)
		return (void)(g->oom = 1);
	for (k = s->val; k >= 0 && !h; ) {                         /* reuse a free slot of the chain */
		struct held *c = &VEC_AT(&g->lockv, struct held, k);

		if (!c->type)
			h = c;
		k = c->next;
	}
	if (!h) {
		h = vec_push(&g->lockv);
		if (!h)
			return (void)(g->oom = 1);
		h->next = s->val;
		s->val = (int64_t)g->lockv.len - 1;
	}
	h->inode = t->lk_inode;
	h->owner = owner;
	h->start = t->lk_start;
	h->end = t->lk_end;
	h->utid = u;
	h->pid = t->pid;
	h->kind = t->lk_kind;
	h->type = t->lk_type;
}

void file_lock_exit(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);

	if (!t->lk_active || r->nr != t->lk_nr)
		return;
	t->lk_active = 0;
	if (r->val == 0) {
		if (t->lk_type == ARGUS_LOCK_UNLOCK)
			release(g, t->lk_inode, lock_owner(t->lk_kind, t->pid, t->lk_fd), t->lk_start, t->lk_end);
		else
			acquire(g, u);
	} else if (r->val == EAGAIN_NEG || r->val == EACCES_NEG) {
		/* a failed try: the segment that tried points to the holder */
		file_lock_edge(g, u, t->seg, (int64_t)r->ts_ns, i);
	}
}

void file_locks_released(struct argus_graph *g, uint32_t pid)
{
	uint64_t k;

	for (k = 0; k < g->lockv.len; k++) {
		struct held *h = &VEC_AT(&g->lockv, struct held, k);

		if (h->type && h->pid == pid)
			h->type = 0;
	}
}

/* ------------------------------------------------------- blocking switch-out */

/* Thread u just blocked (its segment t->seg ends with the wait): edges from
 * the holder of the futex or file lock it waits for. */
void owner_edges_at_block(struct argus_graph *g, int64_t u, int64_t ts, uint64_t i)
{
	struct thr *t = TH(g, u);
	const struct seg *s = SG(g, t->seg);
	int64_t dst = t->seg;

	if (s->wait_reason == ARGUS_WAIT_FUTEX && s->wait_obj)
		futex_edges(g, u, dst, ts, i, s->wait_obj);
	else if (t->lk_active && t->lk_wait && !t->lk_edge && t->cur_nr == t->lk_nr) {
		t->lk_edge = 1;
		file_lock_edge(g, u, dst, ts, i);
	}
}
