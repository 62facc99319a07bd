/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Graph core: one pass over time-sorted rows -> segments (vertices) and edges.
 *
 * Algorithm (the reference is docs/event-graph.md; graphbuild/segments.py and
 * edges.py hold the same state machine in Python as the test oracle):
 *
 *  tracker   tid -> utid (hash map); a tid seen again after its thread died
 *            gets a new utid.  Per utid: pid, comm, lifetime, parent.
 *  segments  per thread a state machine UNKNOWN -> RUNNING / RUNNABLE /
 *            BLOCKED / NEW -> DEAD.  A segment ends at a blocking switch-out
 *            (its wait belongs to it), at the DEAD switch-out, at trace end,
 *            or at a heuristic split (END_SPLIT; the next segment starts
 *            START_SPLIT at the same ts and names its criterion):
 *              event loop   the return (SYSCALL_EXIT, ret >= 0) of an
 *                           event-loop wait (epoll_wait, poll, select, ...)
 *                           that did not block: a new loop iteration;
 *              peer change  a message operation (send / receive on an fd)
 *                           whose peer set does not overlap the previous
 *                           message operation's in the segment; the peer is
 *                           the process at the other end of the channel as
 *                           learned from wakeups (below) until the tracer
 *                           records channel identities; unknown overlaps all;
 *              batch        a receive returning data (ret > 0) right after a
 *                           send on the same fd with no blocking in between
 *                           (reply to one request, receive the next), or an
 *                           io_uring_enter that submitted and reaped (to_submit
 *                           > 0, min_complete > 0) without blocking.
 *            The splitting row opens the new segment.
 *  edges     program order v -> v+1 (weak after a split); wakeup (kernel
 *            contexts culled and counted by label, loopback exception, weak
 *            for lock-like futexes); spawn; data_flag; message (send ->
 *            receive on a channel learned from a wakeup: a task blocked
 *            receiving on (pid B, fd Y) woken by a task sending on (pid A,
 *            fd X) makes (A, X) <-> (B, Y) one channel; later receives that
 *            did not block are matched to the channel's last unmatched send);
 *            timer (a TIMER fire record names who armed the timer and when;
 *            the hardirq wakeup it causes, matched by the timer id in its
 *            irq_vec, gets an edge from the arming thread's segment at the
 *            arm time; without fire records, timerfd_settime on (pid, fd) ->
 *            each later read of that timerfd returning expirations).
 *  channels  FD_INFO records give each (pid, fd, inode) its channel: a
 *            socket's sends go to its peer end, its receives read its local
 *            end; pipes and eventfds are one shared object; the peer process
 *            is the one holding the other end.  Without them, a channel is
 *            learned from a wakeup (above).
 *  gaps      a LOST row at ts marks [ts - lost_window, ts] as lost; with
 *            overwritten records [trace_start, head_gap_end] is lost too;
 *            segments whose start or end falls in a lost region get gap = 1.
 *
 * Invariants: see graphbuild/graph.py.  Segments are exported sorted by
 * (utid, creation order) = (utid, start); edges sorted by (ts, type, src);
 * CSR in-edges by (dst, ts, eid), out-edges by (src, src_ts, eid).  Memory:
 * a few growable arrays (geometric growth), one int32 owner per row; nothing
 * is allocated per event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_event.h"
#include "argus_graph.h"
#include "argus_graph_util.h"

enum { UNKNOWN, RUNNING, RUNNABLE, BLOCKED, NEW, DEAD };

#define NR_NONE 0xFFFFFFFFu
#define FUTEX_OP_MASK 0x7F
#define ETIMEDOUT_NEG (-110)
/* a hardirq timer wakeup belongs to the TIMER fire record just before it */
#define TIMER_WAKE_WINDOW_NS 1000000

enum { SF_ONGOING = 1, SF_KNOWN = 2, SF_TIMEDOUT = 4, SF_DONE = 8, SF_TIMER_FD = 16 };
enum { FU_WAIT = 1, FU_WAKE = 2 };
enum { MSG_NONE, MSG_SEND, MSG_RECV };

struct seg {
	int64_t start, end, wait_end, start_row;
	int64_t wake_src;          /* the waker's segment of the wakeup that started it, else -1 */
	int64_t cpu_ns, runnable_ns, row_lo, row_hi;
	uint64_t wait_obj;
	int32_t utid, wait_aux;
	uint32_t wait_nr, preempts, yields, nsyscalls;
	uint8_t start_kind, start_irq, end_kind, wait_state, wait_reason, split_kind, flags;
	int8_t start_ctx;
};

struct thr {
	/* tracker */
	uint32_t tid, pid;
	char comm[16];
	int64_t first_ts, start_ts, end_ts;
	int32_t parent_utid;
	uint8_t created, snapshot_main;
	/* segment state machine */
	uint8_t state, msg_dir, batch_armed;
	int64_t seg, first_seg, enter_seg;
	int64_t cpu, rbl, on_since, cpu_mark, rbl_since, rbl_mark;
	uint32_t preempts, yields, nsys;
	uint32_t cur_nr, last_nr;
	int32_t cur_aux, last_aux;
	uint64_t cur_obj, last_obj, cur_obj2;
	int64_t pending_exit, exit_ts, nrows;
	int64_t msg_fd, msg_peer;
	int64_t msg_edge_src, msg_edge_dst;   /* the last message edge into this thread */
};

struct wake {
	int64_t row, ts;
	int64_t waker_utid, waker_seg, wakee_utid, dst, prev;
	uint64_t waker_last_obj;
	uint32_t waker_cur_nr, waker_last_nr;
	int32_t waker_last_aux;
	int8_t ctx;
	uint8_t irq;
};

struct spawn { int64_t src, dst, ts, row; };
struct interval { int64_t utid, start, end; };
struct yield { int64_t utid, ts, seg; };
struct flag { int64_t row, utid, pid, seg, ts; uint64_t addr; int64_t value; uint8_t write; };
struct edge {
	int64_t src, dst, ts, src_ts, row, wait_ns;
	uint64_t obj;
	uint8_t type, weak;
	int8_t ctx;
};
struct send { int64_t seg, ts, row; uint8_t matched; };
struct fdi { uint64_t local, peer; uint8_t kind; };                /* FD_INFO of one (pid, fd, inode) */
struct tfire { int64_t arm_utid, arm_ts, fire_ts; };                 /* the last fire of a timer */
struct treq { int64_t arm_utid, arm_ts, dst, ts, row; uint64_t obj; }; /* timer edge, src resolved at the end */

struct argus_graph {
	const struct argus_row *rows;
	uint64_t nrows;
	struct argus_graph_config cfg;
	struct argus_graph_stats st;
	int oom;

	struct vec thr, seg, wakes, spawns, running, runnable, yields, flags, edges, msg_edges, lost;
	struct map tid_map;       /* tid -> utid (current) */
	struct map ppid;          /* pid -> ppid (first one wins) */
	struct map futex;         /* (pid << 32 | utid, uaddr) -> FU_* bits */
	struct map channel;       /* (pid << 32 | fd) -> peer (pid << 32 | fd) */
	struct map sends;         /* (pid << 32 | fd) -> index into sendv */
	struct map timers;        /* (pid << 32 | fd) -> arming segment (timerfd_settime) */
	struct map fdinfo;        /* (pid << 32 | fd, inode) -> index into fdiv */
	struct map owners;        /* channel end (local) -> up to two pids holding it */
	struct map tfires;        /* low 32 bits of a timer id -> index into tfirev */
	struct vec sendv, fdiv, tfirev, treqs;
	int32_t *owner;           /* row -> utid, -1 */
	size_t owner_mapped;

	/* exported after the pass */
	int64_t *remap;           /* creation id -> final segment id */
	uint64_t nowned;
};

static inline uint8_t role(const struct argus_graph *g, uint32_t nr)
{
	return nr < g->cfg.nroles ? g->cfg.roles[nr] : 0;
}

#define TH(g, u) (&VEC_AT(&(g)->thr, struct thr, (u)))
#define SG(g, s) (&VEC_AT(&(g)->seg, struct seg, (s)))

/* ---------------------------------------------------------------- tracker */

static int64_t new_thread(struct argus_graph *g, uint32_t tid, uint32_t pid, int64_t ts)
{
	struct thr *t = vec_push(&g->thr);
	struct map_slot *s;
	int ins;

	if (!t)
		return g->oom = 1, 0;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	t->first_ts = t->start_ts = ts;
	t->end_ts = -1;
	t->parent_utid = -1;
	t->state = UNKNOWN;
	t->seg = t->first_seg = t->enter_seg = -1;
	t->cur_nr = t->last_nr = NR_NONE;
	t->pending_exit = t->exit_ts = -1;
	t->msg_fd = t->msg_peer = -1;
	t->msg_edge_src = t->msg_edge_dst = -1;
	s = map_upsert(&g->tid_map, tid, 0, 0, &ins);
	if (!s)
		return g->oom = 1, 0;
	s->val = (int64_t)g->thr.len - 1;
	return s->val;
}

static int64_t lookup(struct argus_graph *g, uint32_t tid, uint32_t pid, int64_t ts)
{
	struct map_slot *s = map_find(&g->tid_map, tid, 0);
	struct thr *t;

	if (!s)
		return new_thread(g, tid, pid, ts);
	t = TH(g, s->val);
	if (pid && t->pid != pid)
		t->pid = pid;
	return s->val;
}

static void set_ppid(struct argus_graph *g, uint32_t pid, uint32_t ppid)
{
	int ins;
	struct map_slot *s = map_upsert(&g->ppid, pid, 0, ppid, &ins);

	if (!s)
		g->oom = 1;
}

static void set_comm(struct thr *t, const char *comm)
{
	if (comm[0])
		memcpy(t->comm, comm, 16);
}

/* -------------------------------------------------------------- segments */

static int64_t open_seg(struct argus_graph *g, int64_t u, int64_t ts, int kind, int ctx, int irq, int64_t row)
{
	struct seg *s = vec_push(&g->seg);
	struct thr *t = TH(g, u);

	if (!s)
		return g->oom = 1, 0;
	memset(s, 0, sizeof(*s));
	s->utid = (int32_t)u;
	s->start = s->end = ts;
	s->start_kind = (uint8_t)kind;
	s->start_ctx = (int8_t)ctx;
	s->start_irq = (uint8_t)irq;
	s->start_row = row;
	s->end_kind = ARGUS_END_TRACE;
	s->wait_nr = NR_NONE;
	s->wait_end = -1;
	s->wake_src = -1;
	s->flags = SF_KNOWN;
	s->row_lo = s->row_hi = t->nrows;
	t->seg = (int64_t)g->seg.len - 1;
	if (t->first_seg < 0)
		t->first_seg = t->seg;
	t->cpu = t->rbl = 0;
	t->preempts = t->yields = t->nsys = 0;
	t->msg_dir = MSG_NONE;
	t->msg_fd = t->msg_peer = -1;
	t->batch_armed = 0;
	return t->seg;
}

static void flush(struct argus_graph *g, int64_t u, int64_t end, int kind)
{
	struct thr *t = TH(g, u);
	struct seg *s = SG(g, t->seg);

	s->end = end;
	s->end_kind = (uint8_t)kind;
	s->cpu_ns = t->cpu;
	s->runnable_ns = t->rbl;
	s->preempts = t->preempts;
	s->yields = t->yields;
	s->nsyscalls = t->nsys;
	s->row_hi = t->nrows;
}

static void own_row(struct argus_graph *g, int64_t u, uint64_t i)
{
	g->owner[i] = (int32_t)u;
	TH(g, u)->nrows++;
}

static void pre_trace(struct argus_graph *g, int64_t u)
{
	int64_t t0 = g->cfg.trace_start;
	int64_t s = open_seg(g, u, t0, ARGUS_START_PRE_TRACE, -1, 0, -1);

	flush(g, u, t0, ARGUS_END_BLOCKED);
	SG(g, s)->flags &= ~SF_KNOWN;
	SG(g, s)->wait_reason = ARGUS_WAIT_NONE;
	TH(g, u)->state = BLOCKED;
}

static void start_running(struct argus_graph *g, int64_t u)
{
	struct thr *t;

	open_seg(g, u, g->cfg.trace_start, ARGUS_START_TRACE, -1, 0, -1);
	t = TH(g, u);
	t->state = RUNNING;
	t->on_since = t->cpu_mark = g->cfg.trace_start;
}

static void push_interval(struct argus_graph *g, struct vec *v, int64_t u, int64_t a, int64_t b)
{
	struct interval *iv = vec_push(v);

	if (!iv) {
		g->oom = 1;
		return;
	}
	iv->utid = u;
	iv->start = a;
	iv->end = b > a ? b : a;
}

static void stop_running(struct argus_graph *g, int64_t u, int64_t ts)
{
	struct thr *t = TH(g, u);

	if (t->state != RUNNING)
		return;
	if (ts > t->cpu_mark)
		t->cpu += ts - t->cpu_mark;
	push_interval(g, &g->running, u, t->on_since, ts);
}

static void stop_runnable(struct argus_graph *g, int64_t u, int64_t ts)
{
	struct thr *t = TH(g, u);

	if ((t->state != RUNNABLE && t->state != NEW) || t->rbl_since < 0)
		return;
	if (ts > t->rbl_mark)
		t->rbl += ts - t->rbl_mark;
	push_interval(g, &g->runnable, u, t->rbl_since, ts);
}

static void set_runnable(struct thr *t, int64_t ts)
{
	t->state = RUNNABLE;
	t->rbl_since = t->rbl_mark = ts;
}

static void set_running(struct thr *t, int64_t ts)
{
	t->state = RUNNING;
	t->on_since = t->cpu_mark = ts;
}

static void end_wait(struct argus_graph *g, int64_t u, int64_t ts)
{
	struct thr *t = TH(g, u);

	SG(g, t->seg)->wait_end = ts;
	t->pending_exit = t->seg;
}

/* The thread named by a row's header, as a running thread. */
static int64_t own(struct argus_graph *g, uint32_t tid, uint32_t pid, int64_t ts, int switch_out)
{
	int64_t u = lookup(g, tid, pid, ts);

	if (TH(g, u)->state == DEAD && !switch_out) {
		g->st.tid_reuse++;
		u = new_thread(g, tid, pid, ts);
		open_seg(g, u, ts, ARGUS_START_THREAD, -1, 0, -1);
		set_running(TH(g, u), ts);
	}
	if (TH(g, u)->state == UNKNOWN && !switch_out)
		start_running(g, u);
	return u;
}

/* A heuristic split of a running thread's segment at ts (the row at ts opens the new one). */
static void split(struct argus_graph *g, int64_t u, int64_t ts, int criterion)
{
	struct thr *t = TH(g, u);

	if (g->cfg.flags & ARGUS_GRAPH_NO_SPLITS)
		return;
	if (t->state == RUNNING) {
		if (ts > t->cpu_mark)
			t->cpu += ts - t->cpu_mark;
		t->cpu_mark = ts;
	} else if (t->state == RUNNABLE || t->state == NEW) {
		if (ts > t->rbl_mark)
			t->rbl += ts - t->rbl_mark;
		t->rbl_mark = ts;
	} else {
		return;
	}
	flush(g, u, ts, ARGUS_END_SPLIT);
	open_seg(g, u, ts, ARGUS_START_SPLIT, -1, 0, -1);
	SG(g, TH(g, u)->seg)->split_kind = (uint8_t)criterion;
	if (criterion == ARGUS_SPLIT_EVENT_LOOP)
		g->st.splits_event_loop++;
	else if (criterion == ARGUS_SPLIT_PEER_CHANGE)
		g->st.splits_peer_change++;
	else
		g->st.splits_batch++;
}

static void futex_used(struct argus_graph *g, uint32_t pid, uint64_t uaddr, int64_t u, int bit)
{
	int ins;
	struct map_slot *s = map_upsert(&g->futex, ((uint64_t)pid << 32) | (uint32_t)u, uaddr, 0, &ins);

	if (!s)
		g->oom = 1;
	else
		s->val |= bit;
}

static inline uint64_t chan_key(uint32_t pid, uint64_t fd)
{
	return ((uint64_t)pid << 32) | (uint32_t)fd;
}

static void push_edge(struct argus_graph *g, struct vec *v, int64_t src, int64_t dst, int type, int weak,
		      int64_t ts, int64_t src_ts, int64_t row, int ctx, uint64_t obj, int64_t wait_ns)
{
	struct edge *e = vec_push(v);

	if (!e) {
		g->oom = 1;
		return;
	}
	e->src = src;
	e->dst = dst;
	e->type = (uint8_t)type;
	e->weak = (uint8_t)weak;
	e->ts = ts;
	e->src_ts = src_ts;
	e->row = row;
	e->ctx = (int8_t)ctx;
	e->obj = obj;
	e->wait_ns = wait_ns;
}

/* ------------------------------------------------------------ row handlers */

/* The process at the other end of (pid, fd), once a wakeup taught it; else -1. */
static int64_t peer_of(const struct argus_graph *g, uint32_t pid, uint64_t fd)
{
	const struct map_slot *c = map_find(&g->channel, chan_key(pid, fd), 0);

	return c ? (int64_t)((uint64_t)c->val >> 32) : -1;
}

/* A process holding the channel end `local`, other than self when one is
 * known; self only when allow_self (a socket whose peer end self holds). */
static int64_t owner_of(const struct argus_graph *g, uint64_t local, uint32_t self, int allow_self)
{
	const struct map_slot *s = map_find(&g->owners, local, 0);
	uint32_t a, b;

	if (!s)
		return -1;
	a = (uint32_t)s->val;
	b = (uint32_t)((uint64_t)s->val >> 32);
	if (a && a != self)
		return a;
	if (b && b != self)
		return b;
	return allow_self ? (int64_t)self : -1;
}

/* The channel a message operation on (pid, fd) uses: the sends-map key
 * (k1, k2; k1 = UINT64_MAX when unknown) and the peer process (-1 when
 * unknown).  With an FD_INFO identity: a socket's send goes to its peer end,
 * a receive reads its local end; pipes and eventfds are one shared object.
 * Without one, the channel learned from a wakeup.  Returns 0 when the fd is
 * known not to be a channel (regular file, tty, ...). */
static int msg_channel(const struct argus_graph *g, uint32_t pid, uint64_t fd, uint64_t inode, int dir,
		       uint64_t *k1, uint64_t *k2, int64_t *peer)
{
	const struct map_slot *s = inode ? map_find(&g->fdinfo, chan_key(pid, fd), inode) : NULL;

	*k1 = UINT64_MAX;
	*k2 = 0;
	*peer = -1;
	if (s) {
		const struct fdi *f = &VEC_AT(&g->fdiv, struct fdi, s->val);

		if (f->kind == ARGUS_FD_SOCKET) {
			uint64_t key = dir == MSG_SEND ? f->peer : f->local;

			if (key) {
				*k1 = key;
				*k2 = 1;
			}
			if (f->peer)
				*peer = owner_of(g, f->peer, pid, 1);
			return 1;
		}
		if (f->kind == ARGUS_FD_PIPE || f->kind == ARGUS_FD_EVENTFD) {
			*k1 = f->local;
			*k2 = 2;
			*peer = owner_of(g, f->local, pid, 0);
			return 1;
		}
		return 0;
	}
	if (dir == MSG_SEND) {
		*k1 = chan_key(pid, fd);
	} else {
		const struct map_slot *c = map_find(&g->channel, chan_key(pid, fd), 0);

		if (c)
			*k1 = (uint64_t)c->val;
	}
	*peer = peer_of(g, pid, fd);
	return 1;
}

static void on_fd_info(struct argus_graph *g, const struct argus_row *r)
{
	int ins;
	struct map_slot *s = map_upsert(&g->fdinfo, chan_key(r->pid, (uint64_t)(uint32_t)r->aux), r->obj, -1, &ins);
	struct fdi *f;

	if (!s)
		return (void)(g->oom = 1);
	if (ins) {
		if (!vec_push(&g->fdiv))
			return (void)(g->oom = 1);
		s->val = (int64_t)g->fdiv.len - 1;
	}
	f = &VEC_AT(&g->fdiv, struct fdi, s->val);
	f->local = r->obj2;
	f->peer = (uint64_t)r->val;
	f->kind = r->state;
	if (!f->local)
		return;
	s = map_upsert(&g->owners, f->local, 0, 0, &ins);
	if (!s)
		return (void)(g->oom = 1);
	{
		uint32_t a = (uint32_t)s->val, b = (uint32_t)((uint64_t)s->val >> 32);

		if (a != r->pid && b != r->pid) {
			if (!a)
				a = r->pid;
			else
				b = r->pid;    /* keeps the first two holders (a fork shares ends) */
			s->val = (int64_t)(((uint64_t)b << 32) | a);
		}
	}
}

/* A user-visible hrtimer fired; remember who armed it for the wakeups it causes. */
static void on_timer(struct argus_graph *g, const struct argus_row *r)
{
	const struct map_slot *a = map_find(&g->tid_map, r->peer_tid, 0);
	struct map_slot *s;
	struct tfire *f;
	int ins;

	if (!a)        /* an arming thread the trace never shows: nothing to link */
		return;
	s = map_upsert(&g->tfires, (uint32_t)r->obj, 0, -1, &ins);
	if (!s)
		return (void)(g->oom = 1);
	if (ins) {
		if (!vec_push(&g->tfirev))
			return (void)(g->oom = 1);
		s->val = (int64_t)g->tfirev.len - 1;
	}
	f = &VEC_AT(&g->tfirev, struct tfire, s->val);
	f->arm_utid = a->val;
	f->arm_ts = (int64_t)r->obj2;
	f->fire_ts = (int64_t)r->ts_ns;
}

static void on_syscall_enter(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t u = own(g, r->tid, r->pid, (int64_t)r->ts_ns, 0);
	struct thr *t = TH(g, u);
	uint32_t nr = r->nr;
	uint8_t ro = role(g, nr);
	int64_t ts = (int64_t)r->ts_ns;
	uint64_t k1 = UINT64_MAX, k2 = 0;
	int64_t peer = -1;
	int is_msg = 0;

	if (ro & (ARGUS_ROLE_MSG_SEND | ARGUS_ROLE_MSG_RECV)) {
		int dir = (ro & ARGUS_ROLE_MSG_SEND) ? MSG_SEND : MSG_RECV;
		int64_t fd = (int64_t)r->obj;

		if (msg_channel(g, t->pid, r->obj, r->obj2, dir, &k1, &k2, &peer)) {
			is_msg = 1;
			/* Peer sets {peer process} of two consecutive message operations;
			 * unknown (no identity, nothing learned) overlaps everything. */
			if (t->msg_dir != MSG_NONE && t->msg_peer >= 0 && peer >= 0 && t->msg_peer != peer) {
				split(g, u, ts, ARGUS_SPLIT_PEER_CHANGE);
				t = TH(g, u);
			}
			t->batch_armed = dir == MSG_RECV && t->msg_dir == MSG_SEND && t->msg_fd == fd;
			t->msg_dir = (uint8_t)dir;
			t->msg_fd = fd;
			t->msg_peer = peer;
		}
	}
	own_row(g, u, i);
	t->nsys++;
	t->pending_exit = -1;
	t->cur_nr = nr;
	t->enter_seg = t->seg;
	if (ro & ARGUS_ROLE_YIELD) {
		struct yield *y = vec_push(&g->yields);

		t->yields++;
		if (!y) {
			g->oom = 1;
			return;
		}
		y->utid = u;
		y->ts = ts;
		y->seg = t->seg;
		return;
	}
	t->cur_aux = t->last_aux = r->aux;
	t->cur_obj = t->last_obj = r->obj;
	t->cur_obj2 = r->obj2;
	t->last_nr = nr;
	if (ro & ARGUS_ROLE_FUTEX) {
		int op = r->aux & FUTEX_OP_MASK;

		if (op == 1 || op == 10)            /* FUTEX_WAKE, FUTEX_WAKE_BITSET */
			futex_used(g, t->pid, r->obj, u, FU_WAKE);
		else if (op == 0 || op == 9)        /* FUTEX_WAIT, FUTEX_WAIT_BITSET */
			futex_used(g, t->pid, r->obj, u, FU_WAIT);
	}
	if ((ro & ARGUS_ROLE_MSG_SEND) && is_msg && k1 != UINT64_MAX) {
		int ins;
		struct map_slot *s = map_upsert(&g->sends, k1, k2, -1, &ins);
		struct send *sd;

		if (!s)
			return (void)(g->oom = 1);
		if (ins) {
			sd = vec_push(&g->sendv);
			if (!sd)
				return (void)(g->oom = 1);
			s->val = (int64_t)g->sendv.len - 1;
		}
		sd = &VEC_AT(&g->sendv, struct send, s->val);
		sd->seg = t->seg;
		sd->ts = ts;
		sd->row = (int64_t)i;
		sd->matched = 0;
	}
	if (ro & ARGUS_ROLE_TIMER_ARM) {
		int ins;
		struct map_slot *s = map_upsert(&g->timers, chan_key(t->pid, r->obj), 0, 0, &ins);

		if (!s)
			return (void)(g->oom = 1);
		s->val = t->seg;
	}
}

/* A receive that returned data without blocking: match it to its channel's send. */
static void match_message(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);
	struct map_slot *s;
	struct send *sd;
	uint64_t k1, k2;
	int64_t peer;

	if (!msg_channel(g, t->pid, t->cur_obj, t->cur_obj2, MSG_RECV, &k1, &k2, &peer) || k1 == UINT64_MAX)
		return;
	s = map_find(&g->sends, k1, k2);
	if (!s)
		return;
	sd = &VEC_AT(&g->sendv, struct send, s->val);
	if (sd->matched || sd->seg == t->seg || sd->ts > (int64_t)r->ts_ns)
		return;
	sd->matched = 1;
	/* one edge per (src, dst) pair: a wakeup from the sender's segment, or an
	 * earlier message from it, already links the two */
	if (SG(g, t->seg)->wake_src == sd->seg || (t->msg_edge_src == sd->seg && t->msg_edge_dst == t->seg))
		return;
	t->msg_edge_src = sd->seg;
	t->msg_edge_dst = t->seg;
	push_edge(g, &g->msg_edges, sd->seg, t->seg, ARGUS_EDGE_MESSAGE, 0, (int64_t)r->ts_ns, sd->ts,
		  (int64_t)i, ARGUS_WAKE_TASK, t->cur_obj, 0);
	g->st.message_edges++;
}

static void on_syscall_exit(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t u = own(g, r->tid, r->pid, (int64_t)r->ts_ns, 0);
	struct thr *t = TH(g, u);
	int64_t p = t->pending_exit, ts = (int64_t)r->ts_ns;
	uint8_t ro = role(g, r->nr);
	int same = t->cur_nr == r->nr && t->enter_seg == t->seg;   /* did not block */

	if (p >= 0 && r->nr == SG(g, p)->wait_nr) {
		SG(g, p)->flags |= SF_DONE;
		if (r->val == ETIMEDOUT_NEG)
			SG(g, p)->flags |= SF_TIMEDOUT;
	}
	t->pending_exit = -1;
	if (same && (ro & ARGUS_ROLE_LOOP_WAIT) && r->val >= 0)
		split(g, u, ts, ARGUS_SPLIT_EVENT_LOOP);
	else if (same && (ro & ARGUS_ROLE_MSG_RECV) && t->batch_armed && r->val > 0)
		split(g, u, ts, ARGUS_SPLIT_BATCH);
	else if (same && (ro & ARGUS_ROLE_URING) && t->cur_aux > 0 && t->cur_obj2 > 0 && r->val > 0)
		split(g, u, ts, ARGUS_SPLIT_BATCH);
	t = TH(g, u);
	/* the received data belongs to the segment the return opens */
	if (same && (ro & ARGUS_ROLE_MSG_RECV) && r->val > 0)
		match_message(g, u, r, i);
	if (t->cur_nr == r->nr && (ro & ARGUS_ROLE_MSG_RECV) && r->val > 0) {
		/* a timerfd read returning expirations, blocked or not */
		struct map_slot *tm = map_find(&g->timers, chan_key(t->pid, t->cur_obj), 0);

		if (tm && tm->val != t->seg) {
			SG(g, t->seg)->flags |= SF_TIMER_FD;
			push_edge(g, &g->msg_edges, tm->val, t->seg, ARGUS_EDGE_TIMER, 0, ts, ts, (int64_t)i,
				  -1, t->cur_obj, 0);
			g->st.timer_edges++;
		}
	}
	if ((ro & ARGUS_ROLE_MSG_RECV) && t->cur_nr == r->nr) {
		uint64_t k1, k2;
		int64_t peer;

		/* a split cleared the peer state: this receive is the new segment's first message */
		if (msg_channel(g, t->pid, t->cur_obj, t->cur_obj2, MSG_RECV, &k1, &k2, &peer)) {
			t->msg_dir = MSG_RECV;
			t->msg_fd = (int64_t)t->cur_obj;
			t->msg_peer = peer;
		}
	}
	t->batch_armed = 0;
	own_row(g, u, i);
	t->cur_nr = NR_NONE;
}

static void on_switch_out(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t ts = (int64_t)r->ts_ns;
	int64_t u = own(g, r->tid, r->pid, ts, 1);
	struct thr *t = TH(g, u);
	uint8_t st = r->state;

	if (t->state == DEAD)
		return;
	if (t->state == UNKNOWN)
		start_running(g, u);
	t = TH(g, u);
	own_row(g, u, i);
	stop_running(g, u, ts);
	if (st == ARGUS_STATE_RUNNABLE) {
		int in_yield = (role(g, t->cur_nr) & ARGUS_ROLE_YIELD) != 0;

		if (r->reason == ARGUS_WAIT_YIELD || in_yield) {
			if (!in_yield) {
				struct yield *y = vec_push(&g->yields);

				t->yields++;
				if (!y)
					return (void)(g->oom = 1);
				y->utid = u;
				y->ts = ts;
				y->seg = t->seg;
			}
		} else {
			t->preempts++;
		}
		set_runnable(t, ts);
	} else if ((st == ARGUS_STATE_BLOCKED || st == ARGUS_STATE_BLOCKED_IO || st == ARGUS_STATE_OTHER) &&
		   t->exit_ts < 0) {
		struct seg *s;
		uint32_t nr = r->nr;
		uint64_t obj = r->obj;

		flush(g, u, ts, ARGUS_END_BLOCKED);
		s = SG(g, t->seg);
		if (nr == NR_NONE)
			nr = t->cur_nr;
		if (t->cur_nr == nr && nr != NR_NONE) {
			s->wait_aux = t->cur_aux;
			if (obj == 0)
				obj = t->cur_obj;
		}
		s->wait_state = st;
		s->wait_reason = r->reason;
		s->wait_nr = nr;
		s->wait_obj = obj;
		if (r->reason == ARGUS_WAIT_FUTEX)
			futex_used(g, t->pid, obj, u, FU_WAIT);
		t->state = BLOCKED;
		g->st.splits_blocking_wait++;
	} else {
		flush(g, u, ts, ARGUS_END_EXIT);
		t->state = DEAD;
		if (t->exit_ts < 0)
			t->end_ts = ts;
	}
}

static void on_switch_in(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t ts = (int64_t)r->ts_ns;
	int64_t u = lookup(g, r->tid, r->pid, ts);
	struct thr *t = TH(g, u);

	if (t->state == DEAD) {
		g->st.tid_reuse++;
		u = new_thread(g, r->tid, r->pid, ts);
		open_seg(g, u, ts, ARGUS_START_THREAD, -1, 0, -1);
		t = TH(g, u);
		t->state = NEW;
		t->rbl_since = t->rbl_mark = ts;
	}
	own_row(g, u, i);
	if (t->state == UNKNOWN) {
		/* was runnable (or blocked with its wakeup lost) at trace start */
		open_seg(g, u, g->cfg.trace_start, ARGUS_START_TRACE, -1, 0, -1);
		SG(g, TH(g, u)->seg)->row_lo = TH(g, u)->nrows - 1;
	} else if (t->state == RUNNABLE || t->state == NEW) {
		stop_runnable(g, u, ts);
	} else if (t->state == BLOCKED) {
		end_wait(g, u, ts);
		open_seg(g, u, ts, ARGUS_START_SWITCH_IN, -1, 0, -1);
		SG(g, TH(g, u)->seg)->row_lo = TH(g, u)->nrows - 1;
	}
	/* RUNNING: a switch-out was lost; restart the on-CPU clock. */
	set_running(TH(g, u), ts);
}

static void on_wakeup(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t ts = (int64_t)r->ts_ns;
	int ctx = r->tid ? r->reason : ARGUS_WAKE_IDLE;
	int64_t wk = -1, wk_seg = -1, e;
	struct thr *t;

	if (r->tid) {
		wk = own(g, r->tid, r->pid, ts, 0);
		own_row(g, wk, i);
		wk_seg = TH(g, wk)->seg;
	}
	if (!r->peer_tid)
		return;
	e = lookup(g, r->peer_tid, r->peer_pid, ts);
	if (r->type == ARGUS_EV_WAKEUP_NEW) {
		t = TH(g, e);
		if (t->state == UNKNOWN || t->state == DEAD) {
			if (t->state == DEAD) {
				g->st.tid_reuse++;
				e = new_thread(g, r->peer_tid, r->peer_pid, ts);
			}
			open_seg(g, e, ts, ARGUS_START_THREAD, ctx, r->irq, (int64_t)i);
			t = TH(g, e);
			if (!t->created) {    /* mark_created */
				t->created = 1;
				t->start_ts = ts;
				if (wk >= 0)
					t->parent_utid = (int32_t)wk;
			}
		}
		t = TH(g, e);
		if (t->state == UNKNOWN || t->state == NEW)
			set_runnable(t, ts);
		if (wk_seg >= 0 && ctx == ARGUS_WAKE_TASK) {
			struct spawn *sp = vec_push(&g->spawns);

			if (!sp)
				return (void)(g->oom = 1);
			sp->src = wk_seg;
			sp->dst = TH(g, e)->first_seg;
			sp->ts = ts;
			sp->row = (int64_t)i;
		}
		return;
	}
	if (TH(g, e)->state == UNKNOWN)
		pre_trace(g, e);
	t = TH(g, e);
	if (t->state == BLOCKED) {
		int64_t prev = t->seg, dst;
		struct wake *w;

		end_wait(g, e, ts);
		dst = open_seg(g, e, ts, ARGUS_START_WAKEUP, ctx, r->irq, (int64_t)i);
		SG(g, dst)->wake_src = wk_seg;
		set_runnable(TH(g, e), ts);
		w = vec_push(&g->wakes);
		if (!w)
			return (void)(g->oom = 1);
		w->row = (int64_t)i;
		w->ts = ts;
		w->waker_utid = wk;
		w->waker_seg = wk_seg;
		w->wakee_utid = e;
		w->dst = dst;
		w->prev = prev;
		w->ctx = (int8_t)ctx;
		w->irq = r->irq;
		if (wk >= 0) {
			struct thr *k = TH(g, wk);
			const struct seg *ps = SG(g, prev);

			w->waker_cur_nr = k->cur_nr;
			w->waker_last_nr = k->last_nr;
			w->waker_last_aux = k->last_aux;
			w->waker_last_obj = k->last_obj;
			/* A task sending woke a task receiving: the wakeup edge stands for
			 * that send (no message edge), and without channel identities the
			 * pair (A, X) <-> (B, Y) is learned as one channel. */
			if (ctx == ARGUS_WAKE_TASK && (role(g, k->cur_nr) & ARGUS_ROLE_MSG_SEND) &&
			    (role(g, ps->wait_nr) & ARGUS_ROLE_MSG_RECV) && (ps->flags & SF_KNOWN)) {
				uint64_t a = chan_key(k->pid, k->cur_obj), b = chan_key(TH(g, e)->pid, ps->wait_obj);
				uint64_t k1, k2;
				int64_t peer;
				int ins1, ins2;
				struct map_slot *s1 = map_upsert(&g->channel, b, 0, (int64_t)a, &ins1);
				struct map_slot *s2 = map_upsert(&g->channel, a, 0, (int64_t)b, &ins2);

				if (!s1 || !s2)
					return (void)(g->oom = 1);
				s1->val = (int64_t)a;
				s2->val = (int64_t)b;
				g->st.learned_channels += ins1;
				if (msg_channel(g, k->pid, k->cur_obj, k->cur_obj2, MSG_SEND, &k1, &k2, &peer) &&
				    k1 != UINT64_MAX) {
					struct map_slot *sd = map_find(&g->sends, k1, k2);

					if (sd)
						VEC_AT(&g->sendv, struct send, sd->val).matched = 1;
				}
			}
		} else {
			w->waker_cur_nr = w->waker_last_nr = NR_NONE;
		}
		if (ctx != ARGUS_WAKE_TASK && r->irq == ARGUS_IRQ_TIMER) {
			/* the expiry of a timer some task armed: arm -> fire edge */
			const struct map_slot *fs = map_find(&g->tfires, (uint32_t)r->aux, 0);
			const struct tfire *f = fs ? &VEC_AT(&g->tfirev, struct tfire, fs->val) : NULL;

			if (f && f->fire_ts <= ts && ts - f->fire_ts < TIMER_WAKE_WINDOW_NS) {
				struct treq *q = vec_push(&g->treqs);

				if (!q)
					return (void)(g->oom = 1);
				q->arm_utid = f->arm_utid;
				q->arm_ts = f->arm_ts;
				q->dst = dst;
				q->ts = ts;
				q->row = (int64_t)i;
				q->obj = (uint32_t)r->aux;
			}
		}
	} else if (t->state == NEW) {
		set_runnable(t, ts);
	} else {
		g->st.ignored_wakeups++;
	}
}

static void on_fork(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t ts = (int64_t)r->ts_ns;
	int64_t pu = own(g, r->tid, r->pid, ts, 0), cu;
	struct map_slot *s;
	struct thr *c;
	struct spawn *sp;
	int isnew;

	own_row(g, pu, i);
	/* tracker fork: a child tid whose thread exited is a new thread */
	s = map_find(&g->tid_map, r->peer_tid, 0);
	cu = s ? s->val : -1;
	if (cu >= 0 && TH(g, cu)->end_ts >= 0)
		cu = -1;
	isnew = cu < 0;
	if (isnew)
		cu = new_thread(g, r->peer_tid, r->peer_pid, ts);
	c = TH(g, cu);
	c->created = 1;
	if (!isnew && ts < c->start_ts)
		c->start_ts = ts;
	c->parent_utid = (int32_t)pu;
	set_comm(c, r->comm);
	if (r->peer_pid != TH(g, pu)->pid)
		set_ppid(g, r->peer_pid, TH(g, pu)->pid);
	if (c->state == UNKNOWN) {
		open_seg(g, cu, ts, ARGUS_START_THREAD, -1, 0, (int64_t)i);
		c = TH(g, cu);
		c->state = NEW;
		c->rbl_since = c->rbl_mark = ts;
	}
	sp = vec_push(&g->spawns);
	if (!sp)
		return (void)(g->oom = 1);
	sp->src = TH(g, pu)->seg;
	sp->dst = TH(g, cu)->first_seg;
	sp->ts = ts;
	sp->row = (int64_t)i;
}

static void on_row(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t ts = (int64_t)r->ts_ns, u;
	struct thr *t;

	if (r->type == ARGUS_EV_LOST) {
		struct interval *iv;

		g->st.lost_rows++;
		g->st.lost_records += r->val > 0 ? (uint64_t)r->val : 0;
		iv = vec_push(&g->lost);
		if (!iv)
			return (void)(g->oom = 1);
		iv->utid = -1;
		iv->start = ts - g->cfg.lost_window_ns;
		iv->end = ts;
		return;
	}
	if (r->type == ARGUS_EV_WAKEUP || r->type == ARGUS_EV_WAKEUP_NEW)
		return on_wakeup(g, r, i);
	if (r->type == ARGUS_EV_FD_INFO)
		return on_fd_info(g, r);
	if (r->type == ARGUS_EV_TIMER)
		return on_timer(g, r);
	if (!r->tid)
		return;
	switch (r->type) {
	case ARGUS_EV_SYSCALL_ENTER:
		return on_syscall_enter(g, r, i);
	case ARGUS_EV_SYSCALL_EXIT:
		return on_syscall_exit(g, r, i);
	case ARGUS_EV_SWITCH_OUT:
		return on_switch_out(g, r, i);
	case ARGUS_EV_SWITCH_IN:
		return on_switch_in(g, r, i);
	case ARGUS_EV_FORK:
		return on_fork(g, r, i);
	case ARGUS_EV_EXIT:
		u = own(g, r->tid, r->pid, ts, 0);
		own_row(g, u, i);
		/* still runs (wakes its parent, ...) until its DEAD switch-out */
		if (TH(g, u)->state == BLOCKED) {
			end_wait(g, u, ts);
			open_seg(g, u, ts, ARGUS_START_SWITCH_IN, -1, 0, -1);
			set_running(TH(g, u), ts);
		}
		TH(g, u)->exit_ts = ts;
		TH(g, u)->end_ts = ts;
		return;
	case ARGUS_EV_PROC_SNAPSHOT:
		u = lookup(g, r->tid, r->pid, ts);
		t = TH(g, u);
		set_comm(t, r->comm);
		if (r->state)
			t->snapshot_main = 1;
		if (r->peer_pid)
			set_ppid(g, t->pid, r->peer_pid);
		return;
	case ARGUS_EV_EXEC:
	case ARGUS_EV_THREAD_NAME:
		u = own(g, r->tid, r->pid, ts, 0);
		own_row(g, u, i);
		set_comm(TH(g, u), r->comm);
		return;
	case ARGUS_EV_DATA_FLAG_WRITE:
	case ARGUS_EV_DATA_FLAG_READ: {
		struct flag *f;

		u = own(g, r->tid, r->pid, ts, 0);
		own_row(g, u, i);
		f = vec_push(&g->flags);
		if (!f)
			return (void)(g->oom = 1);
		t = TH(g, u);
		f->row = (int64_t)i;
		f->utid = u;
		f->pid = t->pid;
		f->seg = t->seg;
		f->ts = ts;
		f->addr = r->obj;
		f->value = r->val;
		f->write = r->type == ARGUS_EV_DATA_FLAG_WRITE;
		return;
	}
	default:
		return;
	}
}

static void finish_threads(struct argus_graph *g)
{
	int64_t t_end = g->cfg.trace_end;
	uint64_t u;

	for (u = 0; u < g->thr.len; u++) {
		struct thr *t = TH(g, u);

		if (t->state == UNKNOWN)
			pre_trace(g, (int64_t)u);
		t = TH(g, u);
		if (t->state == BLOCKED) {
			struct seg *s = SG(g, t->seg);

			if (s->wait_end < 0) {
				s->wait_end = t_end > s->end ? t_end : s->end;
				s->flags |= SF_ONGOING;
			}
		} else if (t->state == RUNNING || t->state == RUNNABLE || t->state == NEW) {
			int64_t st = SG(g, t->seg)->start;
			int exited = t->exit_ts >= 0;
			int64_t end = exited ? t->exit_ts : t_end;

			if (end < st)
				end = st;
			stop_running(g, (int64_t)u, exited ? end : t_end);
			stop_runnable(g, (int64_t)u, exited ? end : t_end);
			flush(g, (int64_t)u, end, exited ? ARGUS_END_EXIT : ARGUS_END_TRACE);
		}
	}
}

/* ------------------------------------------------------------------ edges */

static int lock_like(const struct argus_graph *g, uint32_t pid, uint64_t uaddr, int64_t u)
{
	struct map_slot *s = map_find(&g->futex, ((uint64_t)pid << 32) | (uint32_t)u, uaddr);

	return s && s->val == (FU_WAIT | FU_WAKE);
}

static void build_wake_edges(struct argus_graph *g)
{
	uint64_t k;

	for (k = 0; k < g->wakes.len; k++) {
		const struct wake *w = &VEC_AT(&g->wakes, struct wake, k);
		const struct seg *p = SG(g, w->prev);
		int keep = w->ctx == ARGUS_WAKE_TASK && w->waker_seg >= 0, weak = 0;

		if (!keep && w->ctx == ARGUS_WAKE_SOFTIRQ && w->waker_seg >= 0 && w->irq == ARGUS_IRQ_NET &&
		    (role(g, w->waker_cur_nr) & ARGUS_ROLE_SEND)) {
			keep = 1;
			g->st.loopback_edges++;
		}
		if (!keep) {
			g->st.culled_wakeups++;
			if (w->irq != ARGUS_IRQ_NONE)
				g->st.culled_by_irq[w->irq < 16 ? w->irq : ARGUS_IRQ_OTHER]++;
			else
				g->st.culled_by_ctx[(uint8_t)w->ctx < 8 ? w->ctx : 7]++;
			continue;
		}
		{
			uint32_t ppid = TH(g, p->utid)->pid;
			uint32_t spid = TH(g, SG(g, w->waker_seg)->utid)->pid;

			if (p->wait_reason == ARGUS_WAIT_FUTEX && (role(g, w->waker_last_nr) & ARGUS_ROLE_FUTEX) &&
			    (w->waker_last_aux & FUTEX_OP_MASK) == 1 && w->waker_last_obj == p->wait_obj &&
			    ppid == spid)
				weak = lock_like(g, ppid, p->wait_obj, w->waker_utid) &&
				       lock_like(g, ppid, p->wait_obj, w->wakee_utid);
		}
		g->st.weak_edges += weak;
		push_edge(g, &g->edges, w->waker_seg, w->dst, ARGUS_EDGE_WAKEUP, weak, w->ts, w->ts, w->row, w->ctx,
			  p->wait_obj, w->ts - p->end);
	}
	vec_free(&g->wakes);
}

static void build_spawn_edges(struct argus_graph *g)
{
	struct map seen;
	uint64_t k;

	if (map_init(&seen, 64))
		return (void)(g->oom = 1);
	for (k = 0; k < g->spawns.len; k++) {
		const struct spawn *sp = &VEC_AT(&g->spawns, struct spawn, k);
		int ins;

		if (sp->src < 0 || sp->dst < 0 || sp->src == sp->dst)
			continue;
		if (!map_upsert(&seen, (uint64_t)sp->src, (uint64_t)sp->dst, 0, &ins)) {
			g->oom = 1;
			break;
		}
		if (ins)
			push_edge(g, &g->edges, sp->src, sp->dst, ARGUS_EDGE_SPAWN, 0, sp->ts, sp->ts, sp->row,
				  ARGUS_WAKE_TASK, 0, 0);
	}
	map_free(&seen);
	vec_free(&g->spawns);
}

/* Per (pid, addr): the last write -> the first read of another thread after it. */
static void build_flag_edges(struct argus_graph *g)
{
	struct map last_write, observed, episode;
	struct vec lw;   /* last-write records: seg, utid, ts, row */
	uint64_t k;

	if (!g->flags.len)
		return;
	vec_init(&lw, sizeof(int64_t) * 4);
	if (map_init(&last_write, 64) || map_init(&observed, 64) || map_init(&episode, 64))
		return (void)(g->oom = 1);
	/* flags were pushed in row order, which is (ts, row) order */
	for (k = 0; k < g->flags.len; k++) {
		const struct flag *f = &VEC_AT(&g->flags, struct flag, k);
		uint64_t rk1 = ((uint64_t)f->pid << 32) | (uint32_t)f->utid;
		struct map_slot *s, *o, *ep;
		int64_t *w;
		int ins;

		if (f->write) {
			s = map_upsert(&last_write, (uint64_t)f->pid, f->addr, -1, &ins);
			if (!s)
				break;
			if (ins) {
				if (!vec_push(&lw))
					break;
				s->val = (int64_t)lw.len - 1;
			}
			w = &VEC_AT(&lw, int64_t, s->val * 4);
			w[0] = f->seg;
			w[1] = f->utid;
			w[2] = f->ts;
			w[3] = f->row;
			continue;
		}
		ep = map_upsert(&episode, rk1, f->addr, INT64_MIN, &ins);
		if (!ep)
			break;
		if (ep->val == INT64_MIN)
			ep->val = f->ts;
		s = map_find(&last_write, (uint64_t)f->pid, f->addr);
		if (!s)
			continue;
		w = &VEC_AT(&lw, int64_t, s->val * 4);
		o = map_upsert(&observed, rk1, f->addr, -1, &ins);
		if (!o)
			break;
		if (w[1] == f->utid || o->val == w[3])
			continue;
		o->val = w[3];
		if (w[0] != f->seg)
			push_edge(g, &g->edges, w[0], f->seg, ARGUS_EDGE_DATA_FLAG, 0, f->ts, w[2], f->row, -1,
				  f->addr, f->ts - ep->val);
		ep->val = INT64_MIN;   /* the episode ends */
	}
	if (k < g->flags.len)
		g->oom = 1;
	map_free(&last_write);
	map_free(&observed);
	map_free(&episode);
	vec_free(&lw);
}

/* Segment order (utid, creation) and the remap creation id -> final id. */
static int order_segments(struct argus_graph *g)
{
	uint64_t n = g->seg.len, nt = g->thr.len, k;
	int64_t *base = calloc(nt + 1, sizeof(int64_t));

	g->remap = malloc((n ? n : 1) * sizeof(int64_t));
	if (!base || !g->remap) {
		free(base);
		return -1;
	}
	for (k = 0; k < n; k++)
		base[SG(g, k)->utid + 1]++;
	for (k = 0; k < nt; k++)
		base[k + 1] += base[k];
	for (k = 0; k < n; k++)
		g->remap[k] = base[SG(g, k)->utid]++;
	free(base);
	return 0;
}

static inline int64_t rm(const struct argus_graph *g, int64_t s)
{
	return s >= 0 ? g->remap[s] : s;
}

/* Timer edges from TIMER fire records: the arming thread's segment at the
 * arm time (binary search over its segments in final order) -> the segment
 * the expiry's wakeup started.  An arm in the segment just before (a thread's
 * own sleep or timeout) is program order already and makes no edge. */
static int resolve_timer_edges(struct argus_graph *g, const int64_t *inv)
{
	uint64_t n = g->seg.len, nt = g->thr.len, k;
	int64_t *lo;

	if (!g->treqs.len)
		return 0;
	lo = calloc(nt + 1, sizeof(int64_t));
	if (!lo)
		return -1;
	for (k = 0; k < n; k++)
		lo[SG(g, k)->utid + 1]++;
	for (k = 0; k < nt; k++)
		lo[k + 1] += lo[k];
	for (k = 0; k < g->treqs.len; k++) {
		const struct treq *q = &VEC_AT(&g->treqs, struct treq, k);
		int64_t a = lo[q->arm_utid], b = lo[q->arm_utid + 1], dst = g->remap[q->dst];

		if (a == b || SG(g, inv[a])->start > q->arm_ts)
			continue;          /* armed before the thread's first segment */
		while (b - a > 1) {        /* last segment starting at or before the arm */
			int64_t m = a + (b - a) / 2;

			if (SG(g, inv[m])->start <= q->arm_ts)
				a = m;
			else
				b = m;
		}
		if (a == dst || (a + 1 == dst && SG(g, inv[a])->utid == SG(g, q->dst)->utid) ||
		    (SG(g, q->dst)->flags & SF_TIMER_FD))
			continue;          /* program order, or the timerfd read already linked it */
		push_edge(g, &g->edges, inv[a], q->dst, ARGUS_EDGE_TIMER, 0, q->ts, q->arm_ts, q->row, -1, q->obj, 0);
		g->st.timer_edges++;
	}
	free(lo);
	vec_free(&g->treqs);
	return g->oom ? -1 : 0;
}

/* Program-order edges, remap every edge, sort by (ts, type, src). */
static int finish_edges(struct argus_graph *g)
{
	uint64_t n = g->seg.len, k, ne;
	int64_t *inv = malloc((n ? n : 1) * sizeof(int64_t));
	struct sort_pair *a, *b, *res;
	struct edge *sorted;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;
	uint64_t maxsrc = 0;
	size_t sorted_mapped = 0;

	if (!inv)
		return -1;
	for (k = 0; k < n; k++)
		inv[g->remap[k]] = (int64_t)k;
	for (k = 0; k + 1 < n; k++) {
		const struct seg *v = SG(g, inv[k]), *w = SG(g, inv[k + 1]);

		if (v->utid != w->utid)
			continue;
		push_edge(g, &g->edges, inv[k], inv[k + 1], ARGUS_EDGE_PROGRAM_ORDER,
			  w->start_kind == ARGUS_START_SPLIT, w->start, v->end, -1, -1, 0, 0);
		g->st.weak_program_order += w->start_kind == ARGUS_START_SPLIT;
	}
	if (resolve_timer_edges(g, inv)) {
		free(inv);
		return -1;
	}
	free(inv);
	for (k = 0; k < g->msg_edges.len; k++) {
		struct edge *e = vec_push(&g->edges);

		if (!e)
			return -1;
		*e = VEC_AT(&g->msg_edges, struct edge, k);
	}
	vec_free(&g->msg_edges);
	if (g->oom)
		return -1;
	ne = g->edges.len;
	for (k = 0; k < ne; k++) {
		struct edge *e = &VEC_AT(&g->edges, struct edge, k);

		e->src = rm(g, e->src);
		e->dst = rm(g, e->dst);
		if (e->ts < tmin)
			tmin = e->ts;
		if (e->ts > tmax)
			tmax = e->ts;
		if ((uint64_t)e->src > maxsrc)
			maxsrc = (uint64_t)e->src;
	}
	if (!ne)
		return 0;
	a = malloc(ne * sizeof(*a));
	b = malloc(ne * sizeof(*b));
	sorted = big_alloc(ne * sizeof(*sorted), &sorted_mapped);
	if (!a || !b || !sorted) {
		free(a), free(b), big_free(sorted, sorted_mapped);
		return -1;
	}
	for (k = 0; k < ne; k++) {
		a[k].key = (uint64_t)VEC_AT(&g->edges, struct edge, k).src;
		a[k].idx = k;
	}
	res = radix_sort(a, b, ne, maxsrc);
	for (k = 0; k < ne; k++) {
		const struct edge *e = &VEC_AT(&g->edges, struct edge, res[k].idx);

		res[k].key = ((uint64_t)(e->ts - tmin) << 3) | e->type;
	}
	res = radix_sort(res, res == a ? b : a, ne, ((uint64_t)(tmax - tmin) << 3) | 7);
	for (k = 0; k < ne; k++)
		sorted[k] = VEC_AT(&g->edges, struct edge, res[k].idx);
	free(a);
	free(b);
	vec_free(&g->edges);
	g->edges.data = sorted;
	g->edges.len = g->edges.cap = ne;
	g->edges.mapped = sorted_mapped;
	return 0;
}

/* Gap flag: the segment's start or end falls in a lost region. */
static void mark_gaps(struct argus_graph *g)
{
	uint64_t k, j, nl = g->lost.len;
	struct interval *lost = g->lost.data;

	if (g->cfg.head_gap_end >= 0) {
		struct interval *iv = vec_push(&g->lost);

		if (!iv)
			return (void)(g->oom = 1);
		lost = g->lost.data;
		/* keep it first: regions are in time order */
		memmove(lost + 1, lost, nl * sizeof(*lost));
		lost[0].utid = -1;
		lost[0].start = INT64_MIN;
		lost[0].end = g->cfg.head_gap_end;
		nl++;
	}
	g->st.lost_regions = nl;
	if (!nl)
		return;
	for (k = 0; k < g->seg.len; k++) {
		struct seg *s = SG(g, k);
		int hit = 0;

		for (j = 0; j < nl && !hit; j++) {
			/* regions are few (one per drain that lost records) */
			hit = (s->start >= lost[j].start && s->start <= lost[j].end) ||
			      (s->end >= lost[j].start && s->end <= lost[j].end);
		}
		if (hit) {
			s->flags |= 0x80;
			g->st.gap_segments++;
		}
	}
}

int argus_rows_sorted(const struct argus_row *rows, uint64_t n)
{
	uint64_t i;

	for (i = 1; i < n; i++)
		if (rows[i].ts_ns < rows[i - 1].ts_ns)
			return 0;
	return 1;
}

int argus_rows_scan(const struct argus_row *rows, uint64_t n, uint8_t *learned, uint32_t nlearned)
{
	uint64_t i;
	int sorted = 1;

	for (i = 0; i < n; i++) {
		const struct argus_row *r = &rows[i];

		if (i && r->ts_ns < rows[i - 1].ts_ns)
			sorted = 0;
		if (r->type == ARGUS_EV_SWITCH_OUT && r->nr < nlearned) {
			if (r->reason == ARGUS_WAIT_FUTEX)
				learned[r->nr] |= ARGUS_ROLE_FUTEX;
			else if (r->reason == ARGUS_WAIT_YIELD)
				learned[r->nr] |= ARGUS_ROLE_YIELD;
		}
	}
	return sorted;
}

int argus_graph_abi(void)
{
	return ARGUS_GRAPH_ABI;
}

struct argus_graph *argus_graph_build(const struct argus_row *rows, uint64_t nrows,
				      const struct argus_graph_config *cfg, char *err, size_t errlen)
{
	struct argus_graph *g = calloc(1, sizeof(*g));
	uint64_t i;

	if (!g) {
		snprintf(err, errlen, "graph core: out of memory");
		return NULL;
	}
	g->rows = rows;
	g->nrows = nrows;
	g->cfg = *cfg;
	vec_init(&g->thr, sizeof(struct thr));
	vec_init(&g->seg, sizeof(struct seg));
	vec_init(&g->wakes, sizeof(struct wake));
	vec_init(&g->spawns, sizeof(struct spawn));
	vec_init(&g->running, sizeof(struct interval));
	vec_init(&g->runnable, sizeof(struct interval));
	vec_init(&g->yields, sizeof(struct yield));
	vec_init(&g->flags, sizeof(struct flag));
	vec_init(&g->edges, sizeof(struct edge));
	vec_init(&g->msg_edges, sizeof(struct edge));
	vec_init(&g->lost, sizeof(struct interval));
	vec_init(&g->sendv, sizeof(struct send));
	vec_init(&g->fdiv, sizeof(struct fdi));
	vec_init(&g->tfirev, sizeof(struct tfire));
	vec_init(&g->treqs, sizeof(struct treq));
	g->owner = big_alloc((nrows ? nrows : 1) * sizeof(int32_t), &g->owner_mapped);
	if (!g->owner || map_init(&g->tid_map, 1024) || map_init(&g->ppid, 256) || map_init(&g->futex, 1024) ||
	    map_init(&g->channel, 256) || map_init(&g->sends, 1024) || map_init(&g->timers, 64) ||
	    map_init(&g->fdinfo, 1024) || map_init(&g->owners, 1024) || map_init(&g->tfires, 256))
		goto oom;
	for (i = 0; i < nrows; i++) {
		if (i && rows[i].ts_ns < rows[i - 1].ts_ns) {
			snprintf(err, errlen, "rows are not sorted by ts_ns (row %llu)", (unsigned long long)i);
			argus_graph_free(g);
			return NULL;
		}
		g->owner[i] = -1;
		on_row(g, &rows[i], i);
		if (g->oom)
			goto oom;
	}
	g->st.rows = nrows;
	finish_threads(g);
	build_wake_edges(g);
	build_spawn_edges(g);
	build_flag_edges(g);
	mark_gaps(g);
	map_free(&g->futex);
	map_free(&g->channel);
	map_free(&g->sends);
	map_free(&g->timers);
	map_free(&g->fdinfo);
	map_free(&g->owners);
	map_free(&g->tfires);
	vec_free(&g->sendv);
	vec_free(&g->fdiv);
	vec_free(&g->tfirev);
	if (g->oom || order_segments(g) || finish_edges(g))
		goto oom;
	return g;
oom:
	snprintf(err, errlen, "graph core: out of memory building the graph of %llu rows",
		 (unsigned long long)nrows);
	argus_graph_free(g);
	return NULL;
}

void argus_graph_counts(const struct argus_graph *g, struct argus_graph_counts *out)
{
	uint64_t i, owned = 0;

	memset(out, 0, sizeof(*out));
	out->segments = g->seg.len;
	out->edges = g->edges.len;
	out->threads = g->thr.len;
	out->running = g->running.len;
	out->runnable = g->runnable.len;
	out->yields = g->yields.len;
	out->flags = g->flags.len;
	if (g->owner)
		for (i = 0; i < g->thr.len; i++)
			owned += (uint64_t)VEC_AT(&g->thr, struct thr, i).nrows;
	out->thread_rows = owned;
	out->ppids = g->ppid.slots ? g->ppid.used : 0;
}

void argus_graph_stats(const struct argus_graph *g, struct argus_graph_stats *out)
{
	*out = g->st;
}

int argus_graph_export_segments(struct argus_graph *g, const struct argus_graph_seg_cols *c)
{
	uint64_t n = g->seg.len, k, nt = g->thr.len;
	int64_t *base = calloc(nt + 1, sizeof(int64_t));

	if (!base)
		return -1;
	for (k = 0; k < nt; k++)
		base[k + 1] = base[k] + TH(g, k)->nrows;
	for (k = 0; k < n; k++) {
		const struct seg *s = SG(g, k);
		int64_t d = g->remap[k];
		int blocked = s->end_kind == ARGUS_END_BLOCKED;
		const struct thr *t = TH(g, s->utid);

		c->utid[d] = s->utid;
		c->tid[d] = t->tid;
		c->pid[d] = t->pid;
		c->start[d] = s->start;
		c->end[d] = s->end;
		c->start_kind[d] = s->start_kind;
		c->start_ctx[d] = s->start_ctx;
		c->start_irq[d] = s->start_irq;
		c->start_row[d] = s->start_row;
		c->end_kind[d] = s->end_kind;
		c->wait_start[d] = blocked ? s->end : -1;
		c->wait_end[d] = blocked ? s->wait_end : -1;
		c->wait_ongoing[d] = !!(s->flags & SF_ONGOING);
		c->wait_known[d] = !!(s->flags & SF_KNOWN);
		c->wait_state[d] = s->wait_state;
		c->wait_reason[d] = s->wait_reason;
		c->wait_nr[d] = s->wait_nr;
		c->wait_obj[d] = s->wait_obj;
		c->wait_aux[d] = s->wait_aux;
		c->wait_timedout[d] = !!(s->flags & SF_TIMEDOUT);
		c->wait_done[d] = !!(s->flags & SF_DONE);
		c->cpu_ns[d] = s->cpu_ns;
		c->runnable_ns[d] = s->runnable_ns;
		c->preempts[d] = s->preempts;
		c->yields[d] = s->yields;
		c->nsyscalls[d] = s->nsyscalls;
		c->row_lo[d] = s->row_lo + base[s->utid];
		c->row_hi[d] = s->row_hi + base[s->utid];
		c->split_kind[d] = s->split_kind;
		c->gap[d] = !!(s->flags & 0x80);
	}
	free(base);
	vec_free(&g->seg);
	return 0;
}

int argus_graph_export_edges(struct argus_graph *g, const struct argus_graph_edge_cols *c)
{
	uint64_t n = g->edges.len, k;

	for (k = 0; k < n; k++) {
		const struct edge *e = &VEC_AT(&g->edges, struct edge, k);

		c->src[k] = e->src;
		c->dst[k] = e->dst;
		c->type[k] = e->type;
		c->weak[k] = e->weak;
		c->ts[k] = e->ts;
		c->src_ts[k] = e->src_ts;
		c->row[k] = e->row;
		c->ctx[k] = e->ctx;
		c->obj[k] = e->obj;
		c->wait_ns[k] = e->wait_ns;
	}
	vec_free(&g->edges);
	return 0;
}

/* CSR index over n edges keyed by key[] (< nseg): ids sorted by (key,
 * order_ts, eid), or by (key, eid) when order_ts is NULL (the edges are
 * already in ts order for the in-index).  ptr has nseg + 1 entries. */
int argus_graph_csr(const int64_t *key, const int64_t *order_ts, uint64_t n, uint64_t nseg,
		    int64_t *ptr, int64_t *ids)
{
	struct sort_pair *a = NULL, *b = NULL, *res;
	uint64_t k;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;

	memset(ptr, 0, (nseg + 1) * sizeof(int64_t));
	for (k = 0; k < n; k++)
		ptr[key[k] + 1]++;
	for (k = 0; k < nseg; k++)
		ptr[k + 1] += ptr[k];
	if (!n)
		return 0;
	if (order_ts) {
		a = malloc(n * sizeof(*a));
		b = malloc(n * sizeof(*b));
		if (!a || !b) {
			free(a), free(b);
			return -1;
		}
		for (k = 0; k < n; k++) {
			if (order_ts[k] < tmin)
				tmin = order_ts[k];
			if (order_ts[k] > tmax)
				tmax = order_ts[k];
		}
		for (k = 0; k < n; k++) {
			a[k].key = (uint64_t)(order_ts[k] - tmin);
			a[k].idx = k;
		}
		res = radix_sort(a, b, n, (uint64_t)(tmax - tmin));
		{
			int64_t *next = malloc(nseg * sizeof(int64_t) + 1);

			if (!next) {
				free(a), free(b);
				return -1;
			}
			memcpy(next, ptr, nseg * sizeof(int64_t));
			for (k = 0; k < n; k++)
				ids[next[key[res[k].idx]]++] = (int64_t)res[k].idx;
			free(next);
		}
		free(a);
		free(b);
	} else {
		int64_t *next = malloc(nseg * sizeof(int64_t) + 1);

		if (!next)
			return -1;
		memcpy(next, ptr, nseg * sizeof(int64_t));
		for (k = 0; k < n; k++)
			ids[next[key[k]]++] = (int64_t)k;
		free(next);
	}
	return 0;
}

int argus_graph_export_threads(struct argus_graph *g, const struct argus_graph_thread_cols *c)
{
	uint64_t nt = g->thr.len, k;
	int64_t *next;

	c->thread_rows_ptr[0] = 0;
	for (k = 0; k < nt; k++) {
		const struct thr *t = TH(g, k);

		c->tid[k] = t->tid;
		c->pid[k] = t->pid;
		memcpy(c->comm + 16 * k, t->comm, 16);
		c->first_ts[k] = t->first_ts;
		c->start_ts[k] = t->start_ts;
		c->end_ts[k] = t->end_ts;
		c->created[k] = t->created;
		c->parent_utid[k] = t->parent_utid;
		c->snapshot_main[k] = t->snapshot_main;
		c->thread_rows_ptr[k + 1] = c->thread_rows_ptr[k] + t->nrows;
	}
	next = malloc((nt + 1) * sizeof(int64_t));
	if (!next)
		return -1;
	memcpy(next, c->thread_rows_ptr, (nt + 1) * sizeof(int64_t));
	for (k = 0; k < g->nrows; k++) {
		int32_t u = g->owner[k];

		if (u >= 0)
			c->thread_rows[next[u]++] = (int64_t)k;
	}
	free(next);
	big_free(g->owner, g->owner_mapped);
	g->owner = NULL;
	k = 0;
	if (g->ppid.slots) {
		uint64_t j;

		for (j = 0; j <= g->ppid.mask; j++) {
			const struct map_slot *s = &g->ppid.slots[j];

			if (s->k1 == UINT64_MAX)
				continue;
			c->ppid_pid[k] = (int64_t)s->k1;
			c->ppid_ppid[k] = s->val;
			k++;
		}
	}
	return 0;
}

/* Stable counting sort of fixed-size records by their first int64 (utid). */
static int sort_by_utid(struct vec *v, uint64_t nt)
{
	uint64_t n = v->len, k;
	int64_t *next = calloc(nt + 2, sizeof(int64_t));
	char *out = malloc((n ? n : 1) * v->esize);

	if (!next || !out) {
		free(next), free(out);
		return -1;
	}
	for (k = 0; k < n; k++)
		next[*(int64_t *)((char *)v->data + k * v->esize) + 1]++;
	for (k = 0; k < nt; k++)
		next[k + 1] += next[k];
	for (k = 0; k < n; k++) {
		const char *src = (char *)v->data + k * v->esize;

		memcpy(out + (next[*(const int64_t *)src]++) * v->esize, src, v->esize);
	}
	n = v->len;
	vec_free(v);
	v->data = out;
	v->len = v->cap = n;
	free(next);
	return 0;
}

int argus_graph_export_misc(struct argus_graph *g, const struct argus_graph_misc_cols *c)
{
	uint64_t nt = g->thr.len, k;

	/* Per thread, intervals / yields / flags were pushed in time order, so a
	 * stable sort by utid gives (utid, start) / (utid, ts) / (utid, ts, row). */
	if (sort_by_utid(&g->running, nt) || sort_by_utid(&g->runnable, nt) || sort_by_utid(&g->yields, nt))
		return -1;
	for (k = 0; k < g->running.len; k++) {
		const struct interval *iv = &VEC_AT(&g->running, struct interval, k);

		c->run_utid[k] = iv->utid;
		c->run_start[k] = iv->start;
		c->run_end[k] = iv->end;
	}
	for (k = 0; k < g->runnable.len; k++) {
		const struct interval *iv = &VEC_AT(&g->runnable, struct interval, k);

		c->rbl_utid[k] = iv->utid;
		c->rbl_start[k] = iv->start;
		c->rbl_end[k] = iv->end;
	}
	for (k = 0; k < g->yields.len; k++) {
		const struct yield *y = &VEC_AT(&g->yields, struct yield, k);

		c->yld_utid[k] = y->utid;
		c->yld_ts[k] = y->ts;
		c->yld_seg[k] = rm(g, y->seg);
	}
	/* flags: stable by utid (row order = (ts, row) order inside a thread) */
	{
		uint64_t n = g->flags.len, *cnt = calloc(nt + 1, sizeof(uint64_t));

		if (!cnt)
			return -1;
		for (k = 0; k < n; k++)
			cnt[VEC_AT(&g->flags, struct flag, k).utid + 1]++;
		for (k = 0; k < nt; k++)
			cnt[k + 1] += cnt[k];
		for (k = 0; k < n; k++) {
			const struct flag *fl = &VEC_AT(&g->flags, struct flag, k);
			uint64_t d = cnt[fl->utid]++;

			c->flg_row[d] = fl->row;
			c->flg_utid[d] = fl->utid;
			c->flg_pid[d] = fl->pid;
			c->flg_seg[d] = rm(g, fl->seg);
			c->flg_ts[d] = fl->ts;
			c->flg_addr[d] = fl->addr;
			c->flg_value[d] = fl->value;
			c->flg_write[d] = fl->write;
		}
		free(cnt);
	}
	vec_free(&g->running);
	vec_free(&g->runnable);
	vec_free(&g->yields);
	vec_free(&g->flags);
	return 0;
}

void argus_graph_free(struct argus_graph *g)
{
	if (!g)
		return;
	vec_free(&g->thr);
	vec_free(&g->seg);
	vec_free(&g->wakes);
	vec_free(&g->spawns);
	vec_free(&g->running);
	vec_free(&g->runnable);
	vec_free(&g->yields);
	vec_free(&g->flags);
	vec_free(&g->edges);
	vec_free(&g->msg_edges);
	vec_free(&g->lost);
	vec_free(&g->sendv);
	map_free(&g->tid_map);
	map_free(&g->ppid);
	map_free(&g->futex);
	map_free(&g->channel);
	map_free(&g->sends);
	map_free(&g->timers);
	map_free(&g->fdinfo);
	map_free(&g->owners);
	map_free(&g->tfires);
	vec_free(&g->fdiv);
	vec_free(&g->tfirev);
	vec_free(&g->treqs);
	big_free(g->owner, g->owner_mapped);
	free(g->remap);
	free(g);
}
