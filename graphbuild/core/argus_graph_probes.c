/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Graph core: user-space tracepoint rows (dylib-instrument/, `argus run`;
 * struct argus_ev_probe: obj, obj2 = hooked function, nr = probe id) in the
 * pass (see argus_graph.c for the pass, docs/event-graph.md for the model).
 *
 *   callbacks  CALLBACK_BEGIN and CALLBACK_END cut the thread's segment
 *              exactly (split kind CALLBACK): the begin row opens the
 *              callback's segment, the row after the end opens the next.
 *              A thread that dispatched once needs no event-loop guess: its
 *              later non-blocking loop-wait returns do not split.
 *   enqueue    ENQUEUE on obj (GMainContext, GSource) by one thread ->
 *              the next CALLBACK_BEGIN on the same (pid, obj) by another
 *              thread: a message edge (the handoff the kernel sees only as
 *              an eventfd write, if at all).  The last enqueue of another
 *              thread wins: an enqueue keeps the unused one of another
 *              thread it replaced, for a dispatch by its own thread.
 *   mutex      MUTEX_UNLOCK of (pid, mutex) by one thread -> the PROBE_RETURN
 *              (result 0) of the next MUTEX_LOCK of it by another thread
 *              that asked before that unlock (it waited for the holder): an
 *              ownership edge, owner_kind MUTEX, strong (the library said
 *              so).  An uncontended lock makes no edge.  Edge ts = the lock's
 *              return, src_ts = the unlock.  A lock whose return record
 *              names its object instead of a result (a void function such
 *              as CPython's PyEval_RestoreThread, "return_obj") succeeded.
 *              Lock calls nest (PyEval_RestoreThread takes a pthread mutex
 *              inside): a return pairs with the innermost pending lock of
 *              the same function.
 *   cond       a MUTEX_UNLOCK at entry and a PROBE_RETURN of the same hooked
 *              function in one thread is a condition wait (pthread_cond_wait:
 *              the mutex released at entry, the return record names the
 *              cond).  The last ENQUEUE on (pid, cond) by another thread
 *              made after the wait began (pthread_cond_signal / broadcast)
 *              -> the waiter's segment at the return: a message edge
 *              (stats cond_edges; not consumed, so one broadcast reaches
 *              every waiter).  The re-acquired mutex: the last unlock of it
 *              by another thread since the wait began -> the same segment,
 *              an ownership edge, owner_kind MUTEX.
 *   ipc        IPC_SEND of (pid, serial) by one thread -> the next IPC_RECV
 *              of that serial (nonzero) by another thread of the process:
 *              a message edge (stats ipc_edges).  GDBus: the caller's
 *              g_dbus_message_set_serial (a call goes out) -> the worker's
 *              g_dbus_message_get_reply_serial (its reply came in); each
 *              send is used once.  Serials are per connection and a probe
 *              record names no peer, so no edge crosses processes.
 *   input      INPUT (a key / button event read) opens a vertex (split kind
 *              INPUT): the work that follows it in the thread starts there,
 *              and a slice of that work stops at it (diagnose/slice.py).
 *              An input vertex runs until an exact boundary (a callback cut,
 *              a block, a wakeup): no heuristic split inside it (argus_graph.c
 *              split_at), and a further input read meanwhile (a key press
 *              and its release returned by one socket read) stays in it: the
 *              first input is what started the work.
 *
 *   go         Go's scheduler (GO_READY / GO_EXECUTE / GO_PARK on a g; uprobes
 *              on Go executables).  A goroutine hands its link over in user
 *              space: the M that wakes for it is whichever the runtime
 *              picked, so the kernel's wakeup names a spare thread.  A
 *              GO_READY of g by a thread running a goroutine (not the
 *              runtime's own timers or poller: no goroutine on that thread)
 *              -> the GO_EXECUTE of g by another thread: a wakeup edge,
 *              strong, from the readier's segment at the ready (src_ts) to
 *              the goroutine's stint.  The stint is the executing thread's
 *              segment when no goroutine ran in it yet (the M woke for this
 *              one: the goroutine edge takes the place of that segment's
 *              kernel wakeup), else a new segment cut at the execute (split
 *              kind GOROUTINE).  A signal's wake is no spare M's: when the
 *              syscall whose wait opened the segment returned as a signal
 *              interrupted it (-EINTR or a restart code, -ERESTARTSYS ...:
 *              signal_interrupted, thr.sig_seg), the M ran the handler
 *              there first (Go's handler wakes the M where the runtime's
 *              signal receiver sleeps, and that one readies the
 *              signal.Notify waiter): the wake from the signal's sender
 *              stays, and the goroutine's stint is cut at the execute.  Resuming the
 *              goroutine the thread last ran (after a preemption) with no
 *              ready from elsewhere is no boundary.  GO_PARK ends the
 *              thread's goroutine: a ready it makes afterwards is the
 *              runtime's.  Each ready is used once.
 *              A parked goroutine run again with no GO_READY was readied by
 *              the netpoller (injectglist names no one): when the wake that
 *              opened its stint is there, the first receive of data sent
 *              while it was parked takes that wake's place (go_polled_receive).
 *              (stats go_edges, splits_goroutine)
 *
 * Invariants: without probe rows nothing here runs and the graph is the one
 * the kernel rows give.  Every handler owns its row; maps are keyed (pid, obj)
 * since the addresses are per process.
 */

#include "argus_graph_int.h"

/* The last unconsumed ENQUEUE / MUTEX_UNLOCK of a (pid, obj). */
static struct handoff *last_handoff(struct argus_graph *g, struct map *m, uint32_t pid, uint64_t obj, int create)
{
	struct map_slot *s;
	int ins;

	if (!create) {
		s = map_find(m, pid, obj);
		return s ? &VEC_AT(&g->handoffs, struct handoff, s->val) : NULL;
	}
	s = map_upsert(m, pid, obj, -1, &ins);
	if (!s)
		return g->oom = 1, NULL;
	if (ins) {
		if (!vec_push(&g->handoffs))
			return g->oom = 1, NULL;
		s->val = (int64_t)g->handoffs.len - 1;
	}
	return &VEC_AT(&g->handoffs, struct handoff, s->val);
}

static void note_handoff(struct argus_graph *g, struct map *m, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);
	struct handoff *h = last_handoff(g, m, t->pid, r->obj, 1);

	if (!h)
		return;
	h->utid = u;
	h->seg = t->seg;
	h->ts = (int64_t)r->ts_ns;
	h->row = (int64_t)i;
	h->used = 0;
}

/* An enqueue keeps the unused one of another thread it replaces: the loop
 * thread waking its own loop must not hide a worker's enqueue still waiting
 * for its dispatch (node: the main thread and V8's background threads post
 * to the same uv_async_t). */
static void on_enqueue(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct handoff *h = last_handoff(g, &g->enqueues, TH(g, u)->pid, r->obj, 0);

	if (h && !h->used && h->utid != u) {
		h->o_utid = h->utid;
		h->o_seg = h->seg;
		h->o_ts = h->ts;
		h->o_row = h->row;
		h->o_used = 0;
	}
	note_handoff(g, &g->enqueues, u, r, i);
	if (!h && (h = last_handoff(g, &g->enqueues, TH(g, u)->pid, r->obj, 0)))
		h->o_used = 1;
}

/* Segment boundary at ts for a callback begin / end or an input (not a
 * heuristic: runs without splits too).  No empty segment: a segment that
 * started at ts and owns no row yet is already the boundary; an input at the
 * ts of a callback begin makes that vertex the input's. */
static void cut(struct argus_graph *g, int64_t u, int64_t ts, int criterion)
{
	struct thr *t = TH(g, u);
	struct seg *s = SG(g, t->seg);

	if (s->start != ts) {
		split_at(g, u, ts, criterion, 1);
	} else if (criterion == ARGUS_SPLIT_INPUT && s->start_kind == ARGUS_START_SPLIT &&
		   s->split_kind == ARGUS_SPLIT_CALLBACK) {
		s->split_kind = ARGUS_SPLIT_INPUT;     /* a dispatch that starts with the input */
		g->st.splits_callback--;
		g->st.splits_input++;
	} else if (s->row_lo != t->nrows) {
		split_at(g, u, ts, criterion, 1);
	}
}

static void on_callback_begin(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	int64_t ts = (int64_t)r->ts_ns;
	struct handoff *h;
	struct thr *t;

	cut(g, u, ts, ARGUS_SPLIT_CALLBACK);
	own_row(g, u, i);
	t = TH(g, u);
	t->cb_seen = 1;
	h = last_handoff(g, &g->enqueues, t->pid, r->obj, 0);
	if (h && !h->used && h->utid != u) {
		h->used = h->o_used = 1;
		push_edge(g, &g->msg_edges, h->seg, t->seg, ARGUS_EDGE_MESSAGE, 0, ts, h->ts, h->row, -1,
			  r->obj, 0);
		g->st.enqueue_edges++;
	} else if (h && !h->o_used && h->o_utid != u) {
		h->used = h->o_used = 1;   /* the dispatch ran both */
		push_edge(g, &g->msg_edges, h->o_seg, t->seg, ARGUS_EDGE_MESSAGE, 0, ts, h->o_ts, h->o_row, -1,
			  r->obj, 0);
		g->st.enqueue_edges++;
	}
}

static void ownership_from_unlock(struct argus_graph *g, int64_t u, uint64_t mutex, int64_t asked, int64_t ts,
				  uint64_t i);

static void on_mutex_return(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);

	int d = t->mx_depth;

	while (d > 0 && t->mx[d - 1].fn != r->obj2)
		d--;
	if (!d)
		return;
	t->mx_depth = (uint8_t)(d - 1);   /* calls above it never returned (longjmp): dropped */
	if (r->obj != 0 && r->obj != t->mx[d - 1].obj)   /* the lock failed: nothing handed over */
		return;
	ownership_from_unlock(g, u, t->mx[d - 1].obj, t->mx[d - 1].ts, (int64_t)r->ts_ns, i);
}

static void ownership_from_unlock(struct argus_graph *g, int64_t u, uint64_t mutex, int64_t asked, int64_t ts,
				  uint64_t i)
{
	struct thr *t = TH(g, u);
	struct handoff *h = last_handoff(g, &g->unlocks, t->pid, mutex, 0);

	if (!h || h->used || h->utid == u || h->ts < asked)
		return;                   /* uncontended, or our own unlock */
	h->used = 1;
	push_edge(g, &g->msg_edges, h->seg, t->seg, ARGUS_EDGE_OWNERSHIP, 0, ts, h->ts, (int64_t)i, -1, mutex, 0);
	if (!g->oom)
		VEC_AT(&g->msg_edges, struct edge, g->msg_edges.len - 1).owner_kind = ARGUS_OWNER_MUTEX;
	g->st.mutex_edges++;
	g->st.ownership_edges++;
}

static void on_ipc_recv(struct argus_graph *g, int64_t u, const struct argus_row *r)
{
	struct thr *t = TH(g, u);
	struct handoff *h = r->obj ? last_handoff(g, &g->ipc_sends, t->pid, r->obj, 0) : NULL;

	if (!h || h->used || h->utid == u)
		return;
	h->used = 1;
	push_edge(g, &g->msg_edges, h->seg, t->seg, ARGUS_EDGE_MESSAGE, 0, (int64_t)r->ts_ns, h->ts, h->row, -1,
		  r->obj, 0);
	g->st.ipc_edges++;
}

/* The return of a condition wait: r->obj = the cond. */
static void on_cond_wake(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);
	struct handoff *h = last_handoff(g, &g->enqueues, t->pid, r->obj, 0);
	int64_t ts = (int64_t)r->ts_ns;

	t->cw_fn = 0;
	if (h && h->utid != u && h->ts >= t->cw_ts) {
		push_edge(g, &g->msg_edges, h->seg, t->seg, ARGUS_EDGE_MESSAGE, 0, ts, h->ts, h->row, -1, r->obj, 0);
		g->st.cond_edges++;
	}
	ownership_from_unlock(g, u, t->cw_mutex, t->cw_ts, ts, i);
}

/* A receive by a goroutine the netpoller readied (on_go_execute: parked,
 * then run with no GO_READY: runtime.netpoll hands it over through
 * injectglist, which readies no one by name) returned data sent while it
 * was parked: the sender ended its wait, not the M that polled.  The wake
 * that opened the stint then leaves the sender's segment at the send (as a
 * goroutine's readier does).  Returns 1 when it took the send. */
int go_polled_receive(struct argus_graph *g, int64_t u, const struct send *sd)
{
	struct thr *t = TH(g, u);
	struct wake *w;
	int64_t k = t->go_np_wake - 1;

	if (!t->go_np_seg || t->go_np_seg != t->seg + 1)
		return 0;
	t->go_np_seg = 0;
	if (k < 0 || sd->ts > t->go_np_ts || sd->ts < t->go_np_park)
		return 0;
	w = &VEC_AT(&g->wakes, struct wake, k);
	w->go = 1;
	w->waker_utid = SG(g, sd->seg)->utid;
	w->waker_seg = sd->seg;
	w->src_ts = sd->ts;
	w->row = sd->row;
	w->ctx = ARGUS_WAKE_TASK;
	w->go_obj = t->go_np_g;
	SG(g, w->dst)->wake_src = sd->seg;
	g->st.go_edges++;
	return 1;
}

/* The wake record that opened the thread's current segment, or NULL: wakes
 * are appended in time order, so only those since the segment began are
 * looked at (an M runs its goroutine microseconds after it woke). */
static struct wake *opening_wake(struct argus_graph *g, const struct thr *t)
{
	const struct seg *s = SG(g, t->seg);
	uint64_t k = g->wakes.len;

	if (s->start_kind != ARGUS_START_WAKEUP)
		return NULL;
	while (k-- > 0) {
		struct wake *w = &VEC_AT(&g->wakes, struct wake, k);

		if (w->ts < s->start)
			return NULL;
		if (w->dst == t->seg)
			return w;
	}
	return NULL;
}

static void on_go_execute(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);
	struct handoff *h = last_handoff(g, &g->enqueues, GO_KEY | t->pid, r->obj, 0);
	int64_t ts = (int64_t)r->ts_ns, dst;
	int readied = h && !h->used && h->utid >= 0 && h->utid != u;
	/* parked and not readied by name; or never seen here before: it parked
	 * before the probes came on (or is new: then no data waited for it) */
	int polled = h ? !h->used && h->utid == GO_PARKED : t->go_last != r->obj;
	int timed = h && !h->used && h->utid == -1;   /* readied by Go's timers */
	struct wake *w = NULL;

	if (h && !h->used && h->utid == u)
		h->used = 1;              /* readied and run by this thread: program order */
	/* the same goroutine again: no boundary, unless the M slept between and
	 * the netpoller or a timer readied it (its wake needs a cause) */
	if (t->go_last == r->obj && !readied && !((polled || timed) && t->go_seg != t->seg + 1)) {
		t->go_g = r->obj;         /* resumed after a preemption */
		return own_row(g, u, i);
	}
	if (t->seg >= 0 && (t->go_seg == t->seg + 1 || t->sig_seg == t->seg + 1)) {
		/* another goroutine ran in this segment, or a signal ended its
		 * wait and the handler ran: that wake stays the signal sender's */
		cut(g, u, ts, ARGUS_SPLIT_GOROUTINE);
	} else {
		w = t->seg >= 0 ? opening_wake(g, t) : NULL;
	}
	own_row(g, u, i);
	t = TH(g, u);
	t->go_g = t->go_last = r->obj;
	t->go_seg = t->seg + 1;
	t->go_np_seg = 0;
	if (timed && w) {             /* Go's timer readied it: the M's wake is the runtime's, no cause */
		h->used = 1;
		w->ctx = ARGUS_WAKE_HARDIRQ;
		w->irq = ARGUS_IRQ_TIMER;
		SG(g, w->dst)->start_ctx = ARGUS_WAKE_HARDIRQ;
		SG(g, w->dst)->start_irq = ARGUS_IRQ_TIMER;
		SG(g, w->dst)->wake_src = -1;
		return;
	}
	if (polled && t->seg >= 0) {  /* the netpoller's: its first receive says who */
		if (h)
			h->used = 1;
		t->go_np_seg = t->seg + 1;
		t->go_np_wake = w ? (int64_t)(w - &VEC_AT(&g->wakes, struct wake, 0)) + 1 : 0;
		t->go_np_ts = ts;
		t->go_np_park = h ? h->ts : 0;
		t->go_np_g = r->obj;
		return;
	}
	if (!readied || t->seg < 0)
		return;
	h->used = 1;
	dst = t->seg;
	g->st.go_edges++;
	if (w) {                      /* the goroutine's readier woke this M, whoever did the futex */
		w->go = 1;
		w->waker_utid = h->utid;
		w->waker_seg = h->seg;
		w->src_ts = h->ts;
		w->row = h->row;
		w->ctx = ARGUS_WAKE_TASK;
		w->go_obj = r->obj;
		SG(g, dst)->wake_src = h->seg;
		return;
	}
	push_edge(g, &g->msg_edges, h->seg, dst, ARGUS_EDGE_WAKEUP, 0, ts, h->ts, h->row, ARGUS_WAKE_TASK, r->obj,
		  ts - h->ts);
}

/* The first GO_* row of a thread after a ready it made settles the ready
 * (on_go): a park of another goroutine means one ran there; an execute,
 * that the thread was in the scheduler (the runtime's ready, no cause). */
static void settle_tentative(struct argus_graph *g, struct thr *t, const struct argus_row *r)
{
	struct handoff *h;

	if (!t->go_tent || r->type == ARGUS_EV_GO_READY)
		return;
	h = &VEC_AT(&g->handoffs, struct handoff, t->go_tent - 1);
	if (!(r->type == ARGUS_EV_GO_PARK && r->obj != t->go_tent_g) && !h->used)
		h->utid = -1;
	t->go_tent = 0;
}

static void on_go(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);
	struct handoff *h;
	int first = !t->go_seen;     /* no GO_* row of this thread yet */

	t->go_seen = 1;
	settle_tentative(g, t, r);
	if (r->type == ARGUS_EV_GO_EXECUTE)
		return on_go_execute(g, u, r, i);
	own_row(g, u, i);
	if (r->type == ARGUS_EV_GO_PARK) {
		if (t->go_g == r->obj)
			t->go_g = 0;
		t->go_np_seg = 0;
		/* parked: an execute with no GO_READY before it is the netpoller's */
		h = last_handoff(g, &g->enqueues, GO_KEY | t->pid, r->obj, 1);
		if (h) {
			h->utid = GO_PARKED;
			h->seg = t->seg;
			h->ts = (int64_t)r->ts_ns;
			h->row = (int64_t)i;
			h->used = 0;
		}
		return;
	}
	/* GO_READY: by a goroutine, or by the runtime (no goroutine on this
	 * thread: a timer, the poller), which names no cause */
	h = last_handoff(g, &g->enqueues, GO_KEY | t->pid, r->obj, 1);
	if (!h)
		return;
	h->utid = t->go_g || first ? u : -1;
	if (first) {                  /* settled by the thread's next GO_* row */
		t->go_tent = (int64_t)(h - &VEC_AT(&g->handoffs, struct handoff, 0)) + 1;
		t->go_tent_g = r->obj;
	}
	h->seg = t->seg;
	h->ts = (int64_t)r->ts_ns;
	h->row = (int64_t)i;
	h->used = 0;
}

void on_probe(struct argus_graph *g, const struct argus_row *r, uint64_t i)
{
	int64_t u = own(g, r->tid, r->pid, (int64_t)r->ts_ns, 0);
	struct thr *t;

	g->st.probe_rows++;
	if (r->type >= ARGUS_EV_GO_READY && r->type <= ARGUS_EV_GO_PARK)
		return on_go(g, u, r, i);
	switch (r->type) {
	case ARGUS_EV_CALLBACK_BEGIN:
		return on_callback_begin(g, u, r, i);
	case ARGUS_EV_CALLBACK_END:
		own_row(g, u, i);
		return cut(g, u, (int64_t)r->ts_ns, ARGUS_SPLIT_CALLBACK);
	case ARGUS_EV_INPUT:
		if (TH(g, u)->seg < 0 || SG(g, TH(g, u)->seg)->split_kind != ARGUS_SPLIT_INPUT)
			cut(g, u, (int64_t)r->ts_ns, ARGUS_SPLIT_INPUT);
		return own_row(g, u, i);
	}
	own_row(g, u, i);
	t = TH(g, u);
	switch (r->type) {
	case ARGUS_EV_ENQUEUE:
		return on_enqueue(g, u, r, i);
	case ARGUS_EV_IPC_SEND:
		return note_handoff(g, &g->ipc_sends, u, r, i);
	case ARGUS_EV_IPC_RECV:
		return on_ipc_recv(g, u, r);
	case ARGUS_EV_MUTEX_UNLOCK:
		t->cw_fn = r->obj2;
		t->cw_mutex = r->obj;
		t->cw_ts = (int64_t)r->ts_ns;
		return note_handoff(g, &g->unlocks, u, r, i);
	case ARGUS_EV_MUTEX_LOCK:
		if (t->mx_depth == ARGUS_MX_DEPTH)
			return;
		t->mx[t->mx_depth].obj = r->obj;
		t->mx[t->mx_depth].fn = r->obj2;
		t->mx[t->mx_depth++].ts = (int64_t)r->ts_ns;
		return;
	case ARGUS_EV_PROBE_RETURN:
		for (int d = t->mx_depth; d > 0; d--)
			if (t->mx[d - 1].fn == r->obj2)
				return on_mutex_return(g, u, r, i);
		if (t->cw_fn && r->obj2 == t->cw_fn)
			return on_cond_wake(g, u, r, i);
		return;
	default:
		return;
	}
}
