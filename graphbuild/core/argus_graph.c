/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Graph core: one pass over time-sorted rows -> segments (vertices) and edges.
 *
 * Algorithm (the reference is docs/event-graph.md; tests/support/reference/
 * holds the same state machine in Python as the test oracle):
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
 *  owners    ownership edges from the holder of a futex or file lock to
 *            the vertex that waits for it or failed to take it
 *            (argus_graph_owners.c).
 *  probes    user-space tracepoints (argus_graph_probes.c): callback
 *            begin / end cut segments exactly (split kind callback, and no
 *            event-loop guess on that thread after its first dispatch);
 *            enqueue -> dispatch on the same object is a message edge; a
 *            mutex unlock -> the waiting locker's lock return is an
 *            ownership edge (owner_kind mutex); an input record opens a
 *            vertex (split kind input) that slices stop at.
 *  sites     a blocking event-loop wait names its wait site (the thread's
 *            last WAIT_SITE row: fd set hash), timeout and user stack; every
 *            blocking wait names the thread's last action since its previous
 *            wait ended (a send on an fd, or a wakeup of another thread).
 *  gaps      a LOST row at ts (records dropped, or switches the kernel never
 *            reported: either kind) marks [ts - lost_window, ts] as lost; with
 *            overwritten records [trace_start, head_gap_end] is lost too;
 *            segments whose start or end falls in a lost region get gap = 1.
 *
 * Units: this file is the pass (tracker, state machine, row handlers,
 * argus_graph_build); argus_graph_channels.c channel identities, channels
 * learned from wakeups, message matching, timer fires and their wakeups; argus_graph_edges.c edges, vertex order, edge
 * sort and gaps; argus_graph_export.c the exports, CSR and free;
 * argus_graph_util.c growable arrays, hash map; tracer/ringbuf/argus_radix_sort.h the
 * radix sort (shared with the decoder).
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

#include "argus_graph_int.h"

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
	t->act_seg = t->act_wakee = -1;
	t->fx_ts = -1;
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
	s->act_seg = s->act_wakee = -1;
	s->timeout_ms = ARGUS_GRAPH_TIMEOUT_NA;
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

void own_row(struct argus_graph *g, int64_t u, uint64_t i)
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

static void start_running(struct argus_graph *g, int64_t u)
{
	open_seg(g, u, g->cfg.trace_start, ARGUS_START_TRACE, -1, 0, -1);
	set_running(TH(g, u), g->cfg.trace_start);
}

static void end_wait(struct argus_graph *g, int64_t u, int64_t ts)
{
	struct thr *t = TH(g, u);

	SG(g, t->seg)->wait_end = ts;
	t->pending_exit = t->seg;
	t->act_kind = ARGUS_ACT_NONE;   /* actions count from the end of the last wait */
}

/* The thread named by a row's header, as a running thread. */
int64_t own(struct argus_graph *g, uint32_t tid, uint32_t pid, int64_t ts, int switch_out)
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
	if (TH(g, u)->state == BLOCKED && ts > SG(g, TH(g, u)->seg)->end) {
		/* Its own row after it blocked (rows at the switch-out's ts are
		 * part of it): the kernel ran it and did not report the
		 * switch-in (on some kernels no tracepoint fires while certain
		 * tasks are current; the tracer counts those switches unreported,
		 * kext/linux/stage.bpf.h): the wait ends here, not at the next
		 * switch-in, which may come much later. */
		end_wait(g, u, ts);
		open_seg(g, u, ts, ARGUS_START_SWITCH_IN, -1, 0, -1);
		set_running(TH(g, u), ts);
	}
	return u;
}

/* A split of a running thread's segment at ts (the row at ts opens the new
 * one): a heuristic one, or an exact one (a callback boundary a probe
 * recorded, made without heuristics too). */
void split_at(struct argus_graph *g, int64_t u, int64_t ts, int criterion, int exact)
{
	struct thr *t = TH(g, u);

	if ((g->cfg.flags & ARGUS_GRAPH_NO_SPLITS) && !exact)
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
	/* an input's vertex holds the work the input starts: only an exact
	 * boundary ends it (argus_graph_probes.c) */
	if (!exact && t->seg >= 0 && SG(g, t->seg)->split_kind == ARGUS_SPLIT_INPUT)
		return;
	flush(g, u, ts, ARGUS_END_SPLIT);
	open_seg(g, u, ts, ARGUS_START_SPLIT, -1, 0, -1);
	SG(g, TH(g, u)->seg)->split_kind = (uint8_t)criterion;
	if (criterion == ARGUS_SPLIT_EVENT_LOOP)
		g->st.splits_event_loop++;
	else if (criterion == ARGUS_SPLIT_PEER_CHANGE)
		g->st.splits_peer_change++;
	else if (criterion == ARGUS_SPLIT_CALLBACK)
		g->st.splits_callback++;
	else if (criterion == ARGUS_SPLIT_INPUT)
		g->st.splits_input++;
	else if (criterion == ARGUS_SPLIT_GOROUTINE)
		g->st.splits_goroutine++;
	else
		g->st.splits_batch++;
}

static void split(struct argus_graph *g, int64_t u, int64_t ts, int criterion)
{
	split_at(g, u, ts, criterion, 0);
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

/* ------------------------------------------------------------ row handlers */

/* The last send on channel key (k1, k2), unmatched.  -1 when out of memory. */
static int remember_send(struct argus_graph *g, uint64_t k1, uint64_t k2, int64_t seg, int64_t ts, uint64_t i)
{
	int ins;
	struct map_slot *s = map_upsert(&g->sends, k1, k2, -1, &ins);
	struct send *sd;

	if (!s)
		return g->oom = 1, -1;
	if (ins) {
		sd = vec_push(&g->sendv);
		if (!sd)
			return g->oom = 1, -1;
		s->val = (int64_t)g->sendv.len - 1;
	}
	sd = &VEC_AT(&g->sendv, struct send, s->val);
	sd->seg = seg;
	sd->ts = ts;
	sd->row = (int64_t)i;
	sd->matched = 0;
	return 0;
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
	if (ro & ARGUS_ROLE_MSG_SEND) {
		t->act_kind = ARGUS_ACT_SEND;
		t->act_obj = r->obj;
		t->act_ts = ts;
		t->act_seg = t->seg;
		t->act_wakee = -1;
	}
	if (ro & ARGUS_ROLE_FUTEX) {
		int op = r->aux & FUTEX_OP_MASK;

		if (op == 1 || op == 10)            /* FUTEX_WAKE, FUTEX_WAKE_BITSET */
			futex_used(g, t->pid, r->obj, u, FU_WAKE);
		else if (op == 0 || op == 9)        /* FUTEX_WAIT, FUTEX_WAIT_BITSET */
			futex_used(g, t->pid, r->obj, u, FU_WAIT);
	}
	if ((ro & ARGUS_ROLE_MSG_SEND) && is_msg && k1 != UINT64_MAX) {
		/* a socket's send under (receiving end, sending end), and under the
		 * receiving end alone for a receiver that knows no peer (an
		 * unconnected datagram socket: msg_channel) */
		if (remember_send(g, k1, k2, t->seg, ts, i) || (k2 > 2 && remember_send(g, k1, 1, t->seg, ts, i)))
			return;
	}
	if (ro & ARGUS_ROLE_TIMER_ARM) {
		int ins;
		struct map_slot *s = map_upsert(&g->timers, chan_key(t->pid, r->obj), 0, 0, &ins);

		if (!s)
			return (void)(g->oom = 1);
		s->val = t->seg;
	}
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
		if (signal_interrupted(r->val))   /* a goroutine run here comes after the handler */
			t->sig_seg = t->seg + 1;
	}
	t->pending_exit = -1;
	if (same && (ro & ARGUS_ROLE_LOOP_WAIT) && r->val >= 0) {
		if (!t->cb_seen)          /* callback probes cut this thread's loop exactly */
			split(g, u, ts, ARGUS_SPLIT_EVENT_LOOP);
	}
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
	if (t->lk_active)      /* a FILE_LOCK request in progress: most exits have none */
		file_lock_exit(g, u, r, i);
	TH(g, u)->cur_nr = NR_NONE;
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
	} else if (st == ARGUS_STATE_TRACED) {
		/* A tracer stopped it (ptrace, single step): no wait of the program,
		 * no vertex boundary, no yield; the stop is runnable time, which
		 * blocktype.py takes out of the window (traced_ns). */
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
		s->stack = r->obj2;
		if ((role(g, nr) & ARGUS_ROLE_LOOP_WAIT) && t->cur_nr == nr) {
			s->timeout_ms = t->cur_aux;
			if (t->site_nr == nr)
				s->site = t->site_id;
		}
		s->act_kind = t->act_kind;
		if (t->act_kind) {
			s->act_obj = t->act_obj;
			s->act_ts = t->act_ts;
			s->act_seg = t->act_seg;
			s->act_wakee = t->act_wakee;
		}
		if (r->reason == ARGUS_WAIT_FUTEX)
			futex_used(g, t->pid, obj, u, FU_WAIT);
		owner_edges_at_block(g, u, ts, i);
		t = TH(g, u);
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

/* A WAKEUP_NEW: the first wakeup of a new task (e), whose thread and first
 * segment start here; a task waker (wk) is its parent and spawns it. */
static void on_wakeup_new(struct argus_graph *g, const struct argus_row *r, uint64_t i, int64_t e, int64_t wk,
			  int64_t wk_seg, int ctx)
{
	int64_t ts = (int64_t)r->ts_ns;
	struct thr *t = TH(g, e);

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
}

/* The task waker wk's last action before its next wait is this wakeup of e
 * (or the send that made it); a futex wake of e's futex wait teaches who
 * wakes that futex (argus_graph_owners.c).  ps: e's segment the wakeup ended. */
static void note_waker_action(struct argus_graph *g, int64_t wk, int64_t e, int64_t wk_seg,
			      const struct seg *ps, int64_t ts)
{
	struct thr *k = TH(g, wk);

	if ((role(g, k->cur_nr) & ARGUS_ROLE_MSG_SEND) && k->act_kind == ARGUS_ACT_SEND) {
		k->act_wakee = e;
	} else {
		k->act_kind = ARGUS_ACT_WAKE;
		k->act_obj = k->cur_nr != NR_NONE ? k->cur_obj : 0;
		k->act_ts = ts;
		k->act_seg = wk_seg;
		k->act_wakee = e;
	}
	if ((role(g, k->cur_nr) & ARGUS_ROLE_FUTEX) && futex_wake_op(k->cur_aux) &&
	    ps->wait_reason == ARGUS_WAIT_FUTEX && (ps->wait_obj == k->cur_obj || ps->wait_obj == k->cur_obj2))
		learn_futex_waker(g, wk, e, ps->wait_obj);
}

/* A wakeup of e: a blocked wakee's wait ends and a segment starts at the
 * wakeup (a wake record, the wakeup edge's source resolved at the end); the
 * waker's action, a learned channel (argus_graph_channels.c) and a timer
 * fire's arm -> fire request come from it. */
static void on_wakeup(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t ts = (int64_t)r->ts_ns;
	int ctx = r->tid ? r->reason : ARGUS_WAKE_IDLE;
	int64_t wk = -1, wk_seg = -1, e, prev, dst;
	struct thr *t;
	struct wake *w;

	if (r->tid) {
		/* an interrupt's wakeup names whoever it interrupted: not proof that one runs */
		wk = lookup(g, r->tid, r->pid, ts);
		if (ctx == ARGUS_WAKE_TASK || TH(g, wk)->state != BLOCKED)
			wk = own(g, r->tid, r->pid, ts, 0);
		own_row(g, wk, i);
		wk_seg = TH(g, wk)->seg;
	}
	if (!r->peer_tid)
		return;
	e = lookup(g, r->peer_tid, r->peer_pid, ts);
	if (r->type == ARGUS_EV_WAKEUP_NEW)
		return on_wakeup_new(g, r, i, e, wk, wk_seg, ctx);
	if (TH(g, e)->state == UNKNOWN)
		pre_trace(g, e);
	t = TH(g, e);
	if (t->state == NEW)
		return set_runnable(t, ts);
	if (t->state != BLOCKED) {
		g->st.ignored_wakeups++;
		return;
	}
	prev = t->seg;
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
	w->go = 0;        /* a goroutine's ready may take its place (argus_graph_probes.c) */
	w->waker_cur_nr = w->waker_last_nr = NR_NONE;
	if (wk >= 0) {
		const struct thr *k = TH(g, wk);

		w->waker_cur_nr = k->cur_nr;
		w->waker_last_nr = k->last_nr;
		w->waker_last_aux = k->last_aux;
		w->waker_last_obj = k->last_obj;
		if (ctx == ARGUS_WAKE_TASK && wk != e)
			note_waker_action(g, wk, e, wk_seg, SG(g, prev), ts);
		if (ctx == ARGUS_WAKE_TASK && learn_channel(g, TH(g, wk), TH(g, e)->pid, SG(g, prev)))
			return;
	}
	if (ctx != ARGUS_WAKE_TASK && r->irq == ARGUS_IRQ_TIMER)
		match_timer_wakeup(g, r, i, dst);
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

		/* Records dropped and switches the kernel never reported are both
		 * holes (a region below); they are counted apart. */
		g->st.lost_rows++;
		if (r->state == ARGUS_LOST_SWITCHES_UNREPORTED)
			g->st.unreported_switches += r->val > 0 ? (uint64_t)r->val : 0;
		else
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
	if ((r->type >= ARGUS_EV_CALLBACK_BEGIN && r->type <= ARGUS_EV_PROBE_RETURN) ||
	    (r->type >= ARGUS_EV_GO_READY && r->type <= ARGUS_EV_GO_PARK))
		return on_probe(g, r, i);
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
		if (r->state)    /* the group leader: the process's POSIX locks go with it */
			file_locks_released(g, TH(g, u)->pid);
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
	case ARGUS_EV_WAIT_SITE:
	case ARGUS_EV_FUTEX_STATE:
	case ARGUS_EV_FILE_LOCK:
		u = own(g, r->tid, r->pid, ts, 0);
		own_row(g, u, i);
		t = TH(g, u);
		if (r->type == ARGUS_EV_WAIT_SITE) {
			t->site_id = r->obj2;
			t->site_nr = r->nr;
			g->st.wait_sites++;
		} else if (r->type == ARGUS_EV_FUTEX_STATE) {
			on_futex_state(g, u, r);
		} else {
			on_file_lock(g, u, r, i);
		}
		return;
	case ARGUS_EV_EXEC:
	case ARGUS_EV_THREAD_NAME:
		/* a rename by another thread (pthread_setname_np) names one that may sleep */
		u = lookup(g, r->tid, r->pid, ts);
		if (TH(g, u)->state != BLOCKED)
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

/*
 * Out of memory only between rows.  A row's handler pushes a few elements
 * (threads, segments, intervals, ...) and goes on using the indexes it just
 * made: a push that failed in the middle of a row left, e.g., a new thread's
 * seg at -1, and the next SG(g, t->seg) wrote in front of the segment array,
 * corrupting the allocator's header (glibc then aborted with "free():
 * invalid pointer" when the graph was freed; only under memory pressure, so
 * only sometimes).  Reserving room for the most one row can push before
 * handling it makes every push inside the row succeed; a failed reservation
 * stops the build before the row is touched.
 */
#define ROW_PUSH_MAX 16   /* well above the most pushes into one array by one row (about 4) */

static int reserve_row(struct argus_graph *g)
{
	struct vec *per_row[] = {
		&g->thr, &g->seg, &g->wakes, &g->spawns, &g->running, &g->runnable, &g->yields, &g->flags,
		&g->msg_edges, &g->lost, &g->sendv, &g->fdiv, &g->tfirev, &g->treqs, &g->lockv,
		&g->oreqs, &g->handoffs,
	};
	size_t k;

	for (k = 0; k < sizeof(per_row) / sizeof(per_row[0]); k++)
		if (vec_reserve(per_row[k], ROW_PUSH_MAX))
			return -1;
	return 0;
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
	vec_init(&g->lockv, sizeof(struct held));
	vec_init(&g->oreqs, sizeof(struct oreq));
	vec_init(&g->handoffs, sizeof(struct handoff));
	g->owner = big_alloc((nrows ? nrows : 1) * sizeof(int32_t), &g->owner_mapped);
	if (!g->owner || map_init(&g->tid_map, 1024) || map_init(&g->ppid, 256) || map_init(&g->futex, 1024) ||
	    map_init(&g->channel, 256) || map_init(&g->sends, 1024) || map_init(&g->timers, 64) ||
	    map_init(&g->fdinfo, 1024) || map_init(&g->owners, 1024) || map_init(&g->tfires, 256) ||
	    map_init(&g->fchan, 256) || map_init(&g->locks, 64) || map_init(&g->enqueues, 64) ||
	    map_init(&g->unlocks, 256) || map_init(&g->ipc_sends, 64))
		goto oom;
	for (i = 0; i < nrows; i++) {
		if (i && rows[i].ts_ns < rows[i - 1].ts_ns) {
			snprintf(err, errlen, "rows are not sorted by ts_ns (row %llu)", (unsigned long long)i);
			argus_graph_free(g);
			return NULL;
		}
		if (reserve_row(g))
			goto oom;
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
	free_pass_tables(g);
	if (g->oom || order_segments(g) || finish_edges(g))
		goto oom;
	return g;
oom:
	snprintf(err, errlen, "graph core: out of memory building the graph of %llu rows",
		 (unsigned long long)nrows);
	argus_graph_free(g);
	return NULL;
}
