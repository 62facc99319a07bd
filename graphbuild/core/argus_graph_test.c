// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the graph core (argus_graph*.c) through its API, on rows
 * written the way the decoder would produce them from the Linux tracer.
 * The invariants of argus_graph.c checked:
 *
 *   segments   a blocking switch-out ends a segment and its wakeup starts the
 *              next; a preemption does not; an event-loop wait that did not
 *              block splits (weak program order), never with NO_SPLITS
 *   wakeups    a task wakeup pairs the waker's running segment with the
 *              segment it starts in the wakee; kernel-context wakeups are
 *              culled and counted; a wakeup of a running thread is ignored
 *   channels   a send that wakes a blocked receive teaches the channel, and
 *              a later receive that did not block gets a MESSAGE edge from
 *              the segment of the send (one per pair, not for the send the
 *              wakeup already stands for)
 *   owners     a PI futex's owner tid (strong) and a mutex's owner field
 *              (weak) give an OWNERSHIP edge from the owner's segment to the
 *              waiter's; the waiter itself, another process's tid, or no
 *              owner give none; a failed lock try points to the holder the
 *              kernel named
 *   probes     callback_begin / callback_end cut segments exactly (split
 *              kind CALLBACK, with NO_SPLITS too) and stop the event-loop
 *              guess on that thread; an enqueue by another thread -> the
 *              next dispatch of the same object is a MESSAGE edge; a mutex
 *              unlock -> the return of a lock that waited for it is an
 *              OWNERSHIP edge (owner_kind MUTEX), an uncontended lock none;
 *              an input opens a vertex (split kind INPUT)
 *   order      segments come out by (utid, start), edges by (ts, type, src);
 *              every edge joins existing segments at times inside them; the
 *              CSR index orders ids by (key, ts, id); unsorted rows are
 *              refused, naming the row
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "argus_event.h"
#include "argus_graph.h"

#define MS 1000000ll
#define US 1000ll

/* Syscall numbers (x86_64) and the roles graphbuild/sysroles.py gives them. */
enum { NR_READ = 0, NR_WRITE = 1, NR_NANOSLEEP = 35, NR_FCNTL = 72, NR_FUTEX = 202, NR_EPOLL_WAIT = 232,
       NROLES = 512 };
#define FUTEX_PRIVATE 128
#define FUTEX_WAIT_OP 0
#define FUTEX_LOCK_PI_OP 6
#define EAGAIN_NEG (-11)

/* ---- writing rows --------------------------------------------------------- */

struct trace {
	struct argus_row *rows;
	size_t n, cap;
	uint8_t roles[NROLES];
	uint32_t flags;
};

static void trace_init(struct trace *t)
{
	memset(t, 0, sizeof(*t));
	t->roles[NR_READ] = ARGUS_ROLE_MSG_RECV;
	t->roles[NR_WRITE] = ARGUS_ROLE_MSG_SEND | ARGUS_ROLE_SEND;
	t->roles[NR_FUTEX] = ARGUS_ROLE_FUTEX;
	t->roles[NR_EPOLL_WAIT] = ARGUS_ROLE_LOOP_WAIT;
}

static struct argus_row *row(struct trace *t, int64_t ts, uint32_t pid, uint32_t tid, uint16_t type)
{
	struct argus_row *r;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->rows = realloc(t->rows, t->cap * sizeof(*t->rows));
		assert_non_null(t->rows);
	}
	r = &t->rows[t->n++];
	memset(r, 0, sizeof(*r));
	r->ts_ns = (uint64_t)ts;
	r->pid = pid;
	r->tid = tid;
	r->type = type;
	r->nr = ARGUS_SYSCALL_NONE;
	return r;
}

static void snapshot(struct trace *t, uint32_t pid, uint32_t tid, const char *comm)
{
	struct argus_row *r = row(t, 0, pid, tid, ARGUS_EV_PROC_SNAPSHOT);

	r->peer_pid = 1;
	r->state = pid == tid;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
}

static void run(struct trace *t, uint32_t pid, uint32_t tid, int64_t ts)
{
	row(t, ts, pid, tid, ARGUS_EV_SWITCH_IN);
}

static void preempt(struct trace *t, uint32_t pid, uint32_t tid, int64_t ts)
{
	struct argus_row *r = row(t, ts, pid, tid, ARGUS_EV_SWITCH_OUT);

	r->state = ARGUS_STATE_RUNNABLE;
	r->reason = ARGUS_WAIT_PREEMPTED;
}

static void enter(struct trace *t, uint32_t pid, uint32_t tid, int64_t ts, uint32_t nr, int32_t aux, uint64_t obj)
{
	struct argus_row *r = row(t, ts, pid, tid, ARGUS_EV_SYSCALL_ENTER);

	r->nr = nr;
	r->aux = aux;
	r->obj = obj;
}

static void leave(struct trace *t, uint32_t pid, uint32_t tid, int64_t ts, uint32_t nr, int64_t ret)
{
	struct argus_row *r = row(t, ts, pid, tid, ARGUS_EV_SYSCALL_EXIT);

	r->nr = nr;
	r->val = ret;
}

/* SYSCALL_ENTER + SWITCH_OUT blocked in it. */
static void block(struct trace *t, uint32_t pid, uint32_t tid, int64_t ts, uint8_t reason, uint32_t nr, int32_t aux,
		  uint64_t obj)
{
	struct argus_row *r;

	enter(t, pid, tid, ts, nr, aux, obj);
	r = row(t, ts, pid, tid, ARGUS_EV_SWITCH_OUT);
	r->state = ARGUS_STATE_BLOCKED;
	r->reason = reason;
	r->nr = nr;
	r->obj = obj;
}

/* WAKEUP: header = waker (tid 0: the idle task / an interrupt), peer = wakee. */
static void wake(struct trace *t, uint32_t pid, uint32_t tid, uint32_t wakee_pid, uint32_t wakee, int64_t ts,
		 uint8_t ctx, uint8_t irq)
{
	struct argus_row *r = row(t, ts, pid, tid, ARGUS_EV_WAKEUP);

	r->peer_pid = wakee_pid;
	r->peer_tid = wakee;
	r->reason = ctx;
	r->irq = irq;
}

/* A user-space tracepoint row (struct argus_ev_probe: obj, obj2 = fn, nr = probe id). */
static void probe(struct trace *t, uint32_t pid, uint32_t tid, int64_t ts, uint16_t type, uint64_t obj, uint64_t fn)
{
	struct argus_row *r = row(t, ts, pid, tid, type);

	r->cpu = 0xFFFF;
	r->obj = obj;
	r->obj2 = fn;
}

/* ---- building and reading the graph -------------------------------------- */

#define SEG_COLS(X) X(utid) X(tid) X(pid) X(start) X(end) X(start_kind) X(start_ctx) X(start_irq) X(start_row) \
	X(end_kind) X(wait_start) X(wait_end) X(wait_ongoing) X(wait_known) X(wait_state) X(wait_reason)          \
	X(wait_nr) X(wait_obj) X(wait_aux) X(wait_timedout) X(wait_done) X(cpu_ns) X(runnable_ns) X(preempts)     \
	X(yields) X(nsyscalls) X(row_lo) X(row_hi) X(split_kind) X(gap) X(wait_site) X(wait_stack)                \
	X(wait_timeout_ms) X(act_kind) X(act_ts) X(act_obj) X(act_seg) X(act_wakee)
#define EDGE_COLS(X) X(src) X(dst) X(type) X(weak) X(ts) X(src_ts) X(row) X(ctx) X(obj) X(wait_ns) X(owner_kind)

struct graph {
	struct argus_graph_counts n;
	struct argus_graph_stats st;
	struct argus_graph_seg_cols seg;
	struct argus_graph_edge_cols edge;
};

static void build(struct trace *t, int64_t trace_end, struct graph *out)
{
	struct argus_graph_config cfg = { .trace_start = 0, .trace_end = trace_end, .roles = t->roles,
					  .nroles = NROLES, .flags = t->flags, .lost_window_ns = MS,
					  .head_gap_end = -1 };
	struct argus_graph *g;
	char err[256] = "";

	memset(out, 0, sizeof(*out));
	g = argus_graph_build(t->rows, t->n, &cfg, err, sizeof(err));
	if (!g)
		fail_msg("build: %s", err);
	argus_graph_counts(g, &out->n);
	argus_graph_stats(g, &out->st);
#define ALLOC_SEG(f) assert_non_null(out->seg.f = calloc(out->n.segments + 1, sizeof(*out->seg.f)));
#define ALLOC_EDGE(f) assert_non_null(out->edge.f = calloc(out->n.edges + 1, sizeof(*out->edge.f)));
	SEG_COLS(ALLOC_SEG)
	EDGE_COLS(ALLOC_EDGE)
	assert_int_equal(argus_graph_export_segments(g, &out->seg), 0);
	assert_int_equal(argus_graph_export_edges(g, &out->edge), 0);
	argus_graph_free(g);
}

static void graph_free(struct graph *g)
{
#define FREE_COL(f) free((void *)g->seg.f);
#define FREE_EDGE(f) free((void *)g->edge.f);
	SEG_COLS(FREE_COL)
	EDGE_COLS(FREE_EDGE)
}

/* The segments of tid, in order: their ids into ids[]; returns how many. */
static int segments_of(const struct graph *g, uint32_t tid, int64_t *ids, int max)
{
	int n = 0;

	for (uint64_t k = 0; k < g->n.segments; k++)
		if (g->seg.tid[k] == tid) {
			assert_true(n < max);
			ids[n++] = (int64_t)k;
		}
	return n;
}

/* The edges of a type, in order: their ids; returns how many. */
static int edges_of(const struct graph *g, int type, int64_t *ids, int max)
{
	int n = 0;

	for (uint64_t k = 0; k < g->n.edges; k++)
		if (g->edge.type[k] == type) {
			assert_true(n < max);
			ids[n++] = (int64_t)k;
		}
	return n;
}

/* ---- segments ----------------------------------------------------------------- */

enum { A = 100, B = 200, C = 300 };

/* A reads fd 5, blocks, B wakes it at 6 ms; A was preempted once before. */
static void reader_woken_by_writer(struct trace *t)
{
	trace_init(t);
	snapshot(t, A, A, "reader");
	snapshot(t, B, B, "writer");
	run(t, A, A, 1 * MS);
	run(t, B, B, 1 * MS);
	preempt(t, A, A, 2 * MS);
	run(t, A, A, 3 * MS);
	block(t, A, A, 4 * MS, ARGUS_WAIT_READ, NR_READ, 0, 5);
	wake(t, B, B, A, A, 6 * MS, ARGUS_WAKE_TASK, ARGUS_IRQ_NONE);
	run(t, A, A, 6 * MS);
	leave(t, A, A, 6 * MS, NR_READ, 10);
}

static void test_blocking_switch_out_ends_a_segment_and_preemption_does_not(void **state)
{
	struct trace t;
	struct graph g;
	int64_t a[4], b[4];

	(void)state;
	reader_woken_by_writer(&t);
	build(&t, 10 * MS, &g);
	assert_int_equal(segments_of(&g, A, a, 4), 2);
	assert_int_equal(segments_of(&g, B, b, 4), 1);
	/* A: [trace start, its wait at 4 ms], then from the wakeup to the end */
	assert_int_equal(g.seg.start_kind[a[0]], ARGUS_START_TRACE);
	assert_int_equal(g.seg.end[a[0]], 4 * MS);
	assert_int_equal(g.seg.end_kind[a[0]], ARGUS_END_BLOCKED);
	assert_int_equal(g.seg.wait_reason[a[0]], ARGUS_WAIT_READ);
	assert_int_equal(g.seg.wait_nr[a[0]], NR_READ);
	assert_int_equal(g.seg.wait_obj[a[0]], 5);
	assert_int_equal(g.seg.wait_end[a[0]], 6 * MS);
	assert_int_equal(g.seg.preempts[a[0]], 1);
	assert_int_equal(g.seg.runnable_ns[a[0]], 1 * MS);
	assert_int_equal(g.seg.cpu_ns[a[0]], 2 * MS);
	assert_int_equal(g.seg.start[a[1]], 6 * MS);
	assert_int_equal(g.seg.start_kind[a[1]], ARGUS_START_WAKEUP);
	assert_int_equal(g.seg.end[a[1]], 10 * MS);
	assert_int_equal(g.seg.end_kind[a[1]], ARGUS_END_TRACE);
	assert_int_equal(g.st.splits_blocking_wait, 1);
	free(t.rows);
	graph_free(&g);
}

static void test_event_loop_wait_that_did_not_block_splits_unless_disabled(void **state)
{
	struct trace t;
	struct graph g;
	int64_t a[4], po[4];

	(void)state;
	trace_init(&t);
	snapshot(&t, A, A, "loop");
	run(&t, A, A, 1 * MS);
	enter(&t, A, A, 2 * MS, NR_EPOLL_WAIT, 100, 3);
	leave(&t, A, A, 2 * MS + 10 * US, NR_EPOLL_WAIT, 1);        /* an event was ready: no block */
	build(&t, 5 * MS, &g);
	assert_int_equal(segments_of(&g, A, a, 4), 2);
	assert_int_equal(g.seg.end_kind[a[0]], ARGUS_END_SPLIT);
	assert_int_equal(g.seg.start_kind[a[1]], ARGUS_START_SPLIT);
	assert_int_equal(g.seg.start[a[1]], 2 * MS + 10 * US);
	assert_int_equal(g.seg.split_kind[a[1]], ARGUS_SPLIT_EVENT_LOOP);
	assert_int_equal(g.st.splits_event_loop, 1);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_PROGRAM_ORDER, po, 4), 1);
	assert_int_equal(g.edge.weak[po[0]], 1);                      /* a split is a guess: weak */
	graph_free(&g);

	t.flags = ARGUS_GRAPH_NO_SPLITS;
	build(&t, 5 * MS, &g);
	assert_int_equal(segments_of(&g, A, a, 4), 1);
	assert_int_equal(g.st.splits_event_loop, 0);
	free(t.rows);
	graph_free(&g);
}

/* ---- wakeups ------------------------------------------------------------------- */

static void test_task_wakeup_pairs_the_wakers_segment_with_the_one_it_starts(void **state)
{
	struct trace t;
	struct graph g;
	int64_t a[4], b[4], c[4], wk[4], po[4];

	(void)state;
	reader_woken_by_writer(&t);
	snapshot(&t, C, C, "sleeper");
	/* C sleeps and a timer interrupt wakes it: culled, no edge */
	run(&t, C, C, 7 * MS);
	block(&t, C, C, 7 * MS + 1, ARGUS_WAIT_SLEEP, NR_NANOSLEEP, 0, 0);
	wake(&t, 0, 0, C, C, 8 * MS, ARGUS_WAKE_HARDIRQ, ARGUS_IRQ_TIMER);
	run(&t, C, C, 8 * MS);
	leave(&t, C, C, 8 * MS, NR_NANOSLEEP, 0);
	/* B wakes A while A runs: nothing to end, ignored */
	wake(&t, B, B, A, A, 9 * MS, ARGUS_WAKE_TASK, ARGUS_IRQ_NONE);
	/* rows above were added out of time order for C: sort them (stable) */
	for (size_t i = 1; i < t.n; i++)
		for (size_t j = i; j > 0 && t.rows[j].ts_ns < t.rows[j - 1].ts_ns; j--) {
			struct argus_row tmp = t.rows[j];

			t.rows[j] = t.rows[j - 1];
			t.rows[j - 1] = tmp;
		}
	build(&t, 10 * MS, &g);
	segments_of(&g, A, a, 4);
	segments_of(&g, B, b, 4);
	assert_int_equal(segments_of(&g, C, c, 4), 2);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_WAKEUP, wk, 4), 1);
	assert_int_equal(g.edge.src[wk[0]], b[0]);
	assert_int_equal(g.edge.dst[wk[0]], a[1]);
	assert_int_equal(g.edge.ts[wk[0]], 6 * MS);
	assert_int_equal(g.edge.ctx[wk[0]], ARGUS_WAKE_TASK);
	assert_int_equal(g.seg.start_kind[c[1]], ARGUS_START_WAKEUP);
	assert_int_equal(g.st.culled_wakeups, 1);
	assert_int_equal(g.st.culled_by_irq[ARGUS_IRQ_TIMER], 1);
	assert_int_equal(g.st.ignored_wakeups, 1);
	/* program order within A and within C, strong (a real wait between) */
	assert_int_equal(edges_of(&g, ARGUS_EDGE_PROGRAM_ORDER, po, 4), 2);
	assert_int_equal(g.edge.src[po[0]], a[0]);
	assert_int_equal(g.edge.dst[po[0]], a[1]);
	assert_int_equal(g.edge.src_ts[po[0]], 4 * MS);
	assert_int_equal(g.edge.weak[po[0]], 0);
	assert_int_equal(g.edge.src[po[1]], c[0]);
	assert_int_equal(g.edge.dst[po[1]], c[1]);
	free(t.rows);
	graph_free(&g);
}

/* ---- channels -------------------------------------------------------------------- */

static void test_channel_learned_from_a_wakeup_carries_a_later_message(void **state)
{
	struct trace t;
	struct graph g;
	int64_t a[4], b[4], msg[4], wk[4];

	(void)state;
	trace_init(&t);
	snapshot(&t, A, A, "server");
	snapshot(&t, B, B, "client");
	run(&t, A, A, 1 * MS);
	run(&t, B, B, 1 * MS);
	block(&t, A, A, 2 * MS, ARGUS_WAIT_READ, NR_READ, 0, 5);           /* A waits on fd 5 */
	enter(&t, B, B, 3 * MS, NR_WRITE, 0, 7);                          /* B writes fd 7 ... */
	wake(&t, B, B, A, A, 3 * MS, ARGUS_WAKE_TASK, ARGUS_IRQ_NONE);    /* ... and wakes A */
	leave(&t, B, B, 3 * MS, NR_WRITE, 10);
	run(&t, A, A, 3 * MS);
	leave(&t, A, A, 3 * MS, NR_READ, 10);
	block(&t, B, B, 3 * MS + 500 * US, ARGUS_WAIT_SLEEP, NR_NANOSLEEP, 0, 0);
	wake(&t, 0, 0, B, B, 3 * MS + 900 * US, ARGUS_WAKE_HARDIRQ, ARGUS_IRQ_TIMER);
	run(&t, B, B, 3 * MS + 900 * US);
	leave(&t, B, B, 3 * MS + 900 * US, NR_NANOSLEEP, 0);
	enter(&t, B, B, 4 * MS, NR_WRITE, 0, 7);                          /* B writes again, A runs */
	leave(&t, B, B, 4 * MS, NR_WRITE, 10);
	enter(&t, A, A, 5 * MS, NR_READ, 0, 5);                           /* data is there: no block */
	leave(&t, A, A, 5 * MS + 1 * US, NR_READ, 10);
	build(&t, 10 * MS, &g);
	assert_int_equal(segments_of(&g, A, a, 4), 2);
	assert_int_equal(segments_of(&g, B, b, 4), 2);
	assert_int_equal(g.st.learned_channels, 1);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_WAKEUP, wk, 4), 1);      /* stands for the first write */
	assert_int_equal(edges_of(&g, ARGUS_EDGE_MESSAGE, msg, 4), 1);
	assert_int_equal(g.st.message_edges, 1);
	assert_int_equal(g.edge.src[msg[0]], b[1]);
	assert_int_equal(g.edge.dst[msg[0]], a[1]);
	assert_int_equal(g.edge.src_ts[msg[0]], 4 * MS);                  /* the send */
	assert_int_equal(g.edge.ts[msg[0]], 5 * MS + 1 * US);            /* the receive's return */
	assert_int_equal(g.edge.obj[msg[0]], 5);
	free(t.rows);
	graph_free(&g);
}

/* ---- ownership --------------------------------------------------------------------- */

struct futex_case {
	const char *what;
	uint8_t flags;               /* FUTEX_STATE flags */
	int32_t op;
	uint32_t word, owner_field;
	int edges;                   /* ownership edges expected */
	uint8_t weak;
	uint8_t kind;                /* ARGUS_OWNER_* of the edge */
};

/* H (tid 301) and W (tid 302) in process 300; X (tid 400) in another. */
static void test_futex_owner_gives_an_edge_from_the_owners_segment(void **state)
{
	const struct futex_case cases[] = {
		{ "PI word names the owner", ARGUS_FUTEX_PI, FUTEX_LOCK_PI_OP, 301 | 0x80000000u, 0, 1, 0,
		  ARGUS_OWNER_FUTEX_OWNER },
		{ "mutex owner field", ARGUS_FUTEX_OWNER_READ, FUTEX_WAIT_OP, 2, 301, 1, 1, ARGUS_OWNER_FUTEX_OWNER },
		{ "the waiter itself", ARGUS_FUTEX_OWNER_READ, FUTEX_WAIT_OP, 2, 302, 0, 0, 0 },
		{ "a tid of another process", ARGUS_FUTEX_PI, FUTEX_LOCK_PI_OP, 400, 0, 0, 0, 0 },
		{ "no owner", 0, FUTEX_WAIT_OP, 0, 0, 0, 0, 0 },
		{ "a join names the joined thread", ARGUS_FUTEX_THREAD_EXIT, FUTEX_WAIT_OP, 301, 301, 1, 0,
		  ARGUS_OWNER_THREAD_EXIT },
		{ "a join of another process's thread", ARGUS_FUTEX_THREAD_EXIT, FUTEX_WAIT_OP, 400, 400, 0, 0, 0 },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct futex_case *fc = &cases[k];
		struct trace t;
		struct graph g;
		struct argus_row *r;
		int64_t h[4], w[4], own[4];
		int n;

		trace_init(&t);
		snapshot(&t, 300, 301, "holder");
		snapshot(&t, 300, 302, "waiter");
		snapshot(&t, 400, 400, "other");
		run(&t, 300, 301, 1 * MS);
		run(&t, 300, 302, 1 * MS);
		run(&t, 400, 400, 1 * MS);
		enter(&t, 300, 302, 2 * MS, NR_FUTEX, FUTEX_PRIVATE | fc->op, 0x1000);
		r = row(&t, 2 * MS, 300, 302, ARGUS_EV_FUTEX_STATE);
		r->obj = 0x1000;
		r->val = fc->word;
		r->peer_tid = fc->owner_field;
		r->state = fc->flags;
		r = row(&t, 2 * MS, 300, 302, ARGUS_EV_SWITCH_OUT);
		r->state = ARGUS_STATE_BLOCKED;
		r->reason = ARGUS_WAIT_FUTEX;
		r->nr = NR_FUTEX;
		r->obj = 0x1000;
		build(&t, 10 * MS, &g);
		segments_of(&g, 301, h, 4);
		segments_of(&g, 302, w, 4);
		n = edges_of(&g, ARGUS_EDGE_OWNERSHIP, own, 4);
		if (n != fc->edges)
			fail_msg("%s: %d ownership edges, expected %d", fc->what, n, fc->edges);
		if (n) {
			assert_int_equal(g.edge.src[own[0]], h[0]);
			assert_int_equal(g.edge.dst[own[0]], w[0]);
			assert_int_equal(g.edge.ts[own[0]], 2 * MS);
			assert_int_equal(g.edge.obj[own[0]], 0x1000);
			assert_int_equal(g.edge.owner_kind[own[0]], fc->kind);
			assert_int_equal(g.edge.weak[own[0]], fc->weak);
		}
		assert_int_equal(g.st.ownership_edges, (uint64_t)n);
		free(t.rows);
		graph_free(&g);
	}
}

static void test_failed_lock_try_points_to_the_holder_the_kernel_named(void **state)
{
	enum { HOLDER = 100, POLLER = 200, INODE = 4242 };
	struct trace t;
	struct graph g;
	struct argus_row *r;
	int64_t h[4], p[4], own[4];

	(void)state;
	trace_init(&t);
	snapshot(&t, HOLDER, HOLDER, "holder");
	snapshot(&t, POLLER, POLLER, "poller");
	run(&t, HOLDER, HOLDER, 1 * MS);
	run(&t, POLLER, POLLER, 1 * MS);
	enter(&t, POLLER, POLLER, 5 * MS, NR_FCNTL, 6, 3);
	t.rows[t.n - 1].obj2 = INODE;
	r = row(&t, 5 * MS, POLLER, POLLER, ARGUS_EV_FILE_LOCK);
	r->aux = 3;
	r->state = ARGUS_LOCK_POSIX;
	r->reason = ARGUS_LOCK_WRITE;
	r->obj = INODE;
	r->peer_pid = HOLDER;                 /* the kernel's lock list names the holder */
	leave(&t, POLLER, POLLER, 5 * MS + 1 * US, NR_FCNTL, EAGAIN_NEG);
	build(&t, 10 * MS, &g);
	segments_of(&g, HOLDER, h, 4);
	segments_of(&g, POLLER, p, 4);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_OWNERSHIP, own, 4), 1);
	assert_int_equal(g.edge.src[own[0]], h[0]);
	assert_int_equal(g.edge.dst[own[0]], p[0]);
	assert_int_equal(g.edge.owner_kind[own[0]], ARGUS_OWNER_FILE_LOCK);
	assert_int_equal(g.edge.weak[own[0]], 0);
	assert_int_equal(g.edge.obj[own[0]], INODE);
	free(t.rows);
	graph_free(&g);
}

/* ---- probes ------------------------------------------------------------------------ */

#define CTX 0x10
#define DISPATCH_FN 0xD00
#define LOCK_FN 0xF00
#define MUTEX 0x2000

static void test_callback_probes_cut_segments_exactly(void **state)
{
	struct trace t;
	struct graph g;
	int64_t a[8];
	const uint8_t kinds[6] = { ARGUS_SPLIT_NONE, ARGUS_SPLIT_EVENT_LOOP, ARGUS_SPLIT_CALLBACK,
				   ARGUS_SPLIT_CALLBACK, ARGUS_SPLIT_CALLBACK, ARGUS_SPLIT_CALLBACK };
	const int64_t starts[6] = { 0, 2 * MS + 10 * US, 3 * MS, 4 * MS, 6 * MS, 7 * MS };

	(void)state;
	trace_init(&t);
	snapshot(&t, A, A, "loop");
	run(&t, A, A, 1 * MS);
	enter(&t, A, A, 2 * MS, NR_EPOLL_WAIT, 100, 3);
	leave(&t, A, A, 2 * MS + 10 * US, NR_EPOLL_WAIT, 1);        /* no probe yet: the loop guess */
	probe(&t, A, A, 3 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);
	probe(&t, A, A, 4 * MS, ARGUS_EV_CALLBACK_END, 1, DISPATCH_FN);
	enter(&t, A, A, 5 * MS, NR_EPOLL_WAIT, 100, 3);
	leave(&t, A, A, 5 * MS + 10 * US, NR_EPOLL_WAIT, 1);        /* dispatches cut this loop now */
	probe(&t, A, A, 6 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);
	probe(&t, A, A, 7 * MS, ARGUS_EV_CALLBACK_END, 1, DISPATCH_FN);
	build(&t, 10 * MS, &g);
	assert_int_equal(segments_of(&g, A, a, 8), 6);
	for (int k = 1; k < 6; k++) {
		assert_int_equal(g.seg.start[a[k]], starts[k]);
		assert_int_equal(g.seg.split_kind[a[k]], kinds[k]);
		assert_int_equal(g.seg.end[a[k - 1]], starts[k]);
	}
	/* the begin row opens the callback's segment, the end row closes it */
	assert_int_equal(g.seg.row_hi[a[2]] - g.seg.row_lo[a[2]], 2);
	assert_int_equal(g.st.splits_callback, 4);
	assert_int_equal(g.st.splits_event_loop, 1);
	assert_int_equal(g.st.probe_rows, 4);
	graph_free(&g);

	t.flags = ARGUS_GRAPH_NO_SPLITS;                              /* exact cuts are no heuristic */
	build(&t, 10 * MS, &g);
	assert_int_equal(segments_of(&g, A, a, 8), 5);
	assert_int_equal(g.st.splits_callback, 4);
	assert_int_equal(g.st.splits_event_loop, 0);
	free(t.rows);
	graph_free(&g);
}

static void test_input_opens_a_vertex(void **state)
{
	struct trace t;
	struct graph g;
	int64_t a[8];

	(void)state;
	trace_init(&t);
	snapshot(&t, A, A, "gui");
	run(&t, A, A, 1 * MS);
	probe(&t, A, A, 2 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);
	probe(&t, A, A, 3 * MS, ARGUS_EV_INPUT, 0x77, 0xB00);           /* inside the dispatch */
	probe(&t, A, A, 4 * MS, ARGUS_EV_CALLBACK_END, 1, DISPATCH_FN);
	probe(&t, A, A, 5 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);
	probe(&t, A, A, 5 * MS, ARGUS_EV_INPUT, 0x77, 0xB00);           /* first thing it does */
	build(&t, 10 * MS, &g);
	assert_int_equal(segments_of(&g, A, a, 8), 5);
	assert_int_equal(g.seg.split_kind[a[2]], ARGUS_SPLIT_INPUT);
	assert_int_equal(g.seg.start[a[2]], 3 * MS);
	assert_int_equal(g.seg.split_kind[a[4]], ARGUS_SPLIT_INPUT);    /* no empty vertex: relabelled */
	assert_int_equal(g.seg.start[a[4]], 5 * MS);
	assert_int_equal(g.st.splits_input, 2);
	assert_int_equal(g.st.splits_callback, 2);
	free(t.rows);
	graph_free(&g);
}

/* A key press and its release read in one go (a lock row between them, as
 * libxcb takes its mutex): one vertex, the press's; no heuristic split
 * inside it; an input after a callback cut opens its own. */
static void test_inputs_read_back_to_back_share_a_vertex(void **state)
{
	struct trace t;
	struct graph g;
	int64_t a[8];

	(void)state;
	trace_init(&t);
	snapshot(&t, A, A, "gui");
	run(&t, A, A, 1 * MS);
	probe(&t, A, A, 2 * MS, ARGUS_EV_INPUT, 0x4102, 0xB00);          /* press */
	probe(&t, A, A, 2 * MS + 500, ARGUS_EV_MUTEX_LOCK, 0x10, 0xC00);
	probe(&t, A, A, 2 * MS + 1000, ARGUS_EV_INPUT, 0x4103, 0xB00);   /* its release, same read */
	enter(&t, A, A, 2 * MS + 2000, NR_EPOLL_WAIT, 100, 3);
	leave(&t, A, A, 2 * MS + 3000, NR_EPOLL_WAIT, 1);                 /* did not block: no split here */
	probe(&t, A, A, 3 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);
	probe(&t, A, A, 4 * MS, ARGUS_EV_INPUT, 0x4102, 0xB00);          /* after another row */
	build(&t, 10 * MS, &g);
	assert_int_equal(segments_of(&g, A, a, 8), 4);
	assert_int_equal(g.seg.split_kind[a[1]], ARGUS_SPLIT_INPUT);
	assert_int_equal(g.seg.start[a[1]], 2 * MS);
	assert_int_equal(g.seg.split_kind[a[2]], ARGUS_SPLIT_CALLBACK);
	assert_int_equal(g.seg.split_kind[a[3]], ARGUS_SPLIT_INPUT);
	assert_int_equal(g.seg.start[a[3]], 4 * MS);
	assert_int_equal(g.st.splits_input, 2);
	assert_int_equal(g.st.splits_event_loop, 0);
	free(t.rows);
	graph_free(&g);
}

static void test_enqueue_by_another_thread_is_a_message_edge_to_the_dispatch(void **state)
{
	struct trace t;
	struct graph g;
	int64_t a[8], b[4], msg[4];

	(void)state;
	trace_init(&t);
	snapshot(&t, A, A, "loop");
	snapshot(&t, A, B, "worker");
	run(&t, A, A, 1 * MS);
	run(&t, A, B, 1 * MS);
	probe(&t, A, B, 2 * MS, ARGUS_EV_ENQUEUE, CTX, 0xE00);
	probe(&t, A, A, 3 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);
	probe(&t, A, A, 4 * MS, ARGUS_EV_CALLBACK_END, 1, DISPATCH_FN);
	probe(&t, A, A, 5 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);   /* consumed: no second edge */
	probe(&t, A, A, 5 * MS + 1, ARGUS_EV_ENQUEUE, 0x99, 0xE00);            /* own thread: program order */
	probe(&t, A, A, 6 * MS, ARGUS_EV_CALLBACK_END, 1, DISPATCH_FN);
	probe(&t, A, A, 7 * MS, ARGUS_EV_CALLBACK_BEGIN, 0x99, DISPATCH_FN);
	build(&t, 10 * MS, &g);
	segments_of(&g, A, a, 8);
	segments_of(&g, B, b, 4);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_MESSAGE, msg, 4), 1);
	assert_int_equal(g.edge.src[msg[0]], b[0]);
	assert_int_equal(g.edge.dst[msg[0]], a[1]);
	assert_int_equal(g.edge.src_ts[msg[0]], 2 * MS);
	assert_int_equal(g.edge.ts[msg[0]], 3 * MS);
	assert_int_equal(g.edge.obj[msg[0]], CTX);
	assert_int_equal(g.st.enqueue_edges, 1);
	free(t.rows);
	graph_free(&g);
}

static void test_mutex_unlock_to_the_waiting_lock_is_an_ownership_edge(void **state)
{
	struct trace t;
	struct graph g;
	int64_t h[4], w[4], own[4];

	(void)state;
	trace_init(&t);
	snapshot(&t, 300, 301, "holder");
	snapshot(&t, 300, 302, "waiter");
	run(&t, 300, 301, 1 * MS);
	run(&t, 300, 302, 1 * MS);
	probe(&t, 300, 302, 2 * MS, ARGUS_EV_MUTEX_LOCK, MUTEX, LOCK_FN);
	block(&t, 300, 302, 2 * MS + 1, ARGUS_WAIT_FUTEX, NR_FUTEX, FUTEX_PRIVATE | FUTEX_WAIT_OP, MUTEX);
	probe(&t, 300, 301, 3 * MS, ARGUS_EV_MUTEX_UNLOCK, MUTEX, 0xF10);
	wake(&t, 300, 301, 300, 302, 3 * MS + 1, ARGUS_WAKE_TASK, ARGUS_IRQ_NONE);
	run(&t, 300, 302, 3 * MS + 2);
	leave(&t, 300, 302, 3 * MS + 3, NR_FUTEX, 0);
	probe(&t, 300, 302, 3 * MS + 10 * US, ARGUS_EV_PROBE_RETURN, 0, LOCK_FN);
	/* uncontended: the lock is asked after the unlock, no edge */
	probe(&t, 300, 302, 4 * MS, ARGUS_EV_MUTEX_UNLOCK, MUTEX, 0xF10);
	probe(&t, 300, 301, 5 * MS, ARGUS_EV_MUTEX_LOCK, MUTEX, LOCK_FN);
	probe(&t, 300, 301, 5 * MS + 1, ARGUS_EV_PROBE_RETURN, 0, LOCK_FN);
	build(&t, 10 * MS, &g);
	segments_of(&g, 301, h, 4);
	assert_int_equal(segments_of(&g, 302, w, 4), 2);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_OWNERSHIP, own, 4), 1);
	assert_int_equal(g.edge.src[own[0]], h[0]);
	assert_int_equal(g.edge.dst[own[0]], w[1]);
	assert_int_equal(g.edge.src_ts[own[0]], 3 * MS);
	assert_int_equal(g.edge.ts[own[0]], 3 * MS + 10 * US);
	assert_int_equal(g.edge.obj[own[0]], MUTEX);
	assert_int_equal(g.edge.owner_kind[own[0]], ARGUS_OWNER_MUTEX);
	assert_int_equal(g.edge.weak[own[0]], 0);
	assert_int_equal(g.st.mutex_edges, 1);
	assert_int_equal(g.st.ownership_edges, 1);
	free(t.rows);
	graph_free(&g);
}

/* pthread_cond_wait: the waiter's entry releases the mutex (MUTEX_UNLOCK,
 * fn = the wait), the signaller takes it, signals (ENQUEUE on the cond) and
 * unlocks; the wait's return (PROBE_RETURN, same fn, obj = the cond) gets
 * the signal's message edge and the re-acquired mutex's ownership edge. */
static void test_cond_signal_to_the_waiters_return_is_a_message_edge(void **state)
{
	struct trace t;
	struct graph g;
	int64_t s[4], w[4], msg[4], own[4];
	const uint64_t COND = 0xC0D0, WAIT_FN = 0xF20, SIGNAL_FN = 0xF30, UNLOCK_FN = 0xF10;

	(void)state;
	trace_init(&t);
	snapshot(&t, 300, 301, "signaller");
	snapshot(&t, 300, 302, "waiter");
	run(&t, 300, 301, 1 * MS);
	run(&t, 300, 302, 1 * MS);
	probe(&t, 300, 301, 1 * MS + 1, ARGUS_EV_ENQUEUE, COND, SIGNAL_FN);   /* before the wait: not its wake */
	probe(&t, 300, 302, 2 * MS, ARGUS_EV_MUTEX_UNLOCK, MUTEX, WAIT_FN);
	block(&t, 300, 302, 2 * MS + 1, ARGUS_WAIT_FUTEX, NR_FUTEX, FUTEX_PRIVATE | FUTEX_WAIT_OP, COND);
	probe(&t, 300, 301, 3 * MS, ARGUS_EV_MUTEX_LOCK, MUTEX, LOCK_FN);
	probe(&t, 300, 301, 3 * MS + 1, ARGUS_EV_PROBE_RETURN, 0, LOCK_FN);  /* uncontended */
	probe(&t, 300, 301, 3 * MS + 2, ARGUS_EV_ENQUEUE, COND, SIGNAL_FN);
	probe(&t, 300, 301, 3 * MS + 3, ARGUS_EV_MUTEX_UNLOCK, MUTEX, UNLOCK_FN);
	wake(&t, 300, 301, 300, 302, 3 * MS + 4, ARGUS_WAKE_TASK, ARGUS_IRQ_NONE);
	run(&t, 300, 302, 3 * MS + 5);
	leave(&t, 300, 302, 3 * MS + 6, NR_FUTEX, 0);
	probe(&t, 300, 302, 3 * MS + 10 * US, ARGUS_EV_PROBE_RETURN, COND, WAIT_FN);
	build(&t, 10 * MS, &g);
	segments_of(&g, 301, s, 4);
	assert_int_equal(segments_of(&g, 302, w, 4), 2);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_MESSAGE, msg, 4), 1);
	assert_int_equal(g.edge.src[msg[0]], s[0]);
	assert_int_equal(g.edge.dst[msg[0]], w[1]);
	assert_int_equal(g.edge.src_ts[msg[0]], 3 * MS + 2);
	assert_int_equal(g.edge.ts[msg[0]], 3 * MS + 10 * US);
	assert_int_equal(g.edge.obj[msg[0]], COND);
	assert_int_equal(g.st.cond_edges, 1);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_OWNERSHIP, own, 4), 1);
	assert_int_equal(g.edge.src_ts[own[0]], 3 * MS + 3);
	assert_int_equal(g.edge.dst[own[0]], w[1]);
	assert_int_equal(g.edge.obj[own[0]], MUTEX);
	assert_int_equal(g.edge.owner_kind[own[0]], ARGUS_OWNER_MUTEX);
	assert_int_equal(g.st.mutex_edges, 1);
	free(t.rows);
	graph_free(&g);
}

/* A lock function that returns nothing (CPython's PyEval_RestoreThread)
 * records its object at return ("return_obj"): that is a success too, and
 * the pthread lock it takes inside does not hide it. */
static void test_a_lock_return_naming_its_object_is_a_handover(void **state)
{
	struct trace t;
	struct graph g;
	int64_t own[4];

	(void)state;
	trace_init(&t);
	snapshot(&t, 300, 301, "holder");
	snapshot(&t, 300, 302, "waiter");
	run(&t, 300, 301, 1 * MS);
	run(&t, 300, 302, 1 * MS);
	probe(&t, 300, 302, 2 * MS, ARGUS_EV_MUTEX_LOCK, ARGUS_OBJ_PROCESS, 0xF40);
	/* a lock inside the lock (take_gil's pthread mutex), uncontended */
	probe(&t, 300, 302, 2 * MS + 1, ARGUS_EV_MUTEX_LOCK, MUTEX + 8, LOCK_FN);
	probe(&t, 300, 302, 2 * MS + 2, ARGUS_EV_PROBE_RETURN, 0, LOCK_FN);
	probe(&t, 300, 301, 3 * MS, ARGUS_EV_MUTEX_UNLOCK, ARGUS_OBJ_PROCESS, 0xF10);
	probe(&t, 300, 302, 3 * MS + 10 * US, ARGUS_EV_PROBE_RETURN, ARGUS_OBJ_PROCESS, 0xF40);
	/* an errno-like result is still a failure */
	probe(&t, 300, 302, 4 * MS, ARGUS_EV_MUTEX_UNLOCK, MUTEX, 0xF10);
	probe(&t, 300, 301, 4 * MS + 1, ARGUS_EV_MUTEX_LOCK, MUTEX, LOCK_FN);
	probe(&t, 300, 302, 4 * MS + 2, ARGUS_EV_MUTEX_UNLOCK, MUTEX, 0xF10);
	probe(&t, 300, 301, 4 * MS + 3, ARGUS_EV_PROBE_RETURN, 22, LOCK_FN);
	build(&t, 10 * MS, &g);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_OWNERSHIP, own, 4), 1);
	assert_int_equal(g.edge.obj[own[0]], ARGUS_OBJ_PROCESS);
	assert_int_equal(g.edge.src_ts[own[0]], 3 * MS);
	assert_int_equal(g.st.mutex_edges, 1);
	free(t.rows);
	graph_free(&g);
}

/* GDBus: the caller numbers its call (IPC_SEND, serial 7), the worker
 * reads the reply's reply serial (IPC_RECV 7): a message edge; a serial
 * read back in the sending thread, a 0 (not a reply) and another process's
 * serial 7 make none. */
static void test_ipc_send_to_the_reply_of_its_serial_is_a_message_edge(void **state)
{
	struct trace t;
	struct graph g;
	int64_t c[4], w[4], msg[4];

	(void)state;
	trace_init(&t);
	snapshot(&t, 300, 301, "caller");
	snapshot(&t, 300, 302, "gdbus");
	snapshot(&t, 400, 401, "other");
	run(&t, 300, 301, 1 * MS);
	run(&t, 300, 302, 1 * MS);
	run(&t, 400, 401, 1 * MS);
	probe(&t, 300, 301, 2 * MS, ARGUS_EV_IPC_SEND, 7, 0xD10);
	probe(&t, 400, 401, 2 * MS + 1, ARGUS_EV_IPC_RECV, 7, 0xD20);   /* another process */
	probe(&t, 300, 302, 3 * MS, ARGUS_EV_IPC_RECV, 0, 0xD20);       /* not a reply */
	probe(&t, 300, 302, 4 * MS, ARGUS_EV_IPC_RECV, 7, 0xD20);
	probe(&t, 300, 302, 5 * MS, ARGUS_EV_IPC_RECV, 7, 0xD20);       /* used once */
	build(&t, 10 * MS, &g);
	segments_of(&g, 301, c, 4);
	segments_of(&g, 302, w, 4);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_MESSAGE, msg, 4), 1);
	assert_int_equal(g.edge.src[msg[0]], c[0]);
	assert_int_equal(g.edge.dst[msg[0]], w[0]);
	assert_int_equal(g.edge.src_ts[msg[0]], 2 * MS);
	assert_int_equal(g.edge.ts[msg[0]], 4 * MS);
	assert_int_equal(g.edge.obj[msg[0]], 7);
	assert_int_equal(g.st.ipc_edges, 1);
	free(t.rows);
	graph_free(&g);
}

/* The loop thread waking its own loop after a worker did (node's platform
 * uv_async_t): the dispatch still pairs with the worker's enqueue. */
static void test_own_enqueue_does_not_hide_a_workers(void **state)
{
	struct trace t;
	struct graph g;
	int64_t b[4], msg[4];

	(void)state;
	trace_init(&t);
	snapshot(&t, A, A, "loop");
	snapshot(&t, A, B, "worker");
	run(&t, A, A, 1 * MS);
	run(&t, A, B, 1 * MS);
	probe(&t, A, B, 2 * MS, ARGUS_EV_ENQUEUE, CTX, 0xE00);
	probe(&t, A, A, 2 * MS + 500 * US, ARGUS_EV_ENQUEUE, CTX, 0xE00);
	probe(&t, A, A, 3 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);
	probe(&t, A, A, 4 * MS, ARGUS_EV_CALLBACK_END, 1, DISPATCH_FN);
	probe(&t, A, A, 5 * MS, ARGUS_EV_CALLBACK_BEGIN, CTX, DISPATCH_FN);   /* both consumed */
	build(&t, 10 * MS, &g);
	segments_of(&g, B, b, 4);
	assert_int_equal(edges_of(&g, ARGUS_EDGE_MESSAGE, msg, 4), 1);
	assert_int_equal(g.edge.src[msg[0]], b[0]);
	assert_int_equal(g.edge.src_ts[msg[0]], 2 * MS);
	assert_int_equal(g.edge.ts[msg[0]], 3 * MS);
	assert_int_equal(g.st.enqueue_edges, 1);
	free(t.rows);
	graph_free(&g);
}

/* ---- order ------------------------------------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next_random(uint32_t below)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % below);
}

/* Eight threads in two processes block on futexes and wake each other at
 * random for 3000 steps, with preemptions and sends in between. */
static void random_ping_pong(struct trace *t)
{
	enum { N = 8 };
	int blocked[N] = { 0 }, running = N;
	int64_t ts = 1 * MS;

	trace_init(t);
	for (uint32_t i = 0; i < N; i++)
		snapshot(t, 1000 + i / 4, 1000 + i, "worker");
	for (uint32_t i = 0; i < N; i++)
		run(t, 1000 + i / 4, 1000 + i, ts);
	for (int step = 0; step < 3000; step++) {
		uint32_t a = next_random(N), b = next_random(N);

		ts += 1000 + next_random(5) * 1000;
		if (blocked[a])
			continue;
		if (blocked[b]) {
			wake(t, 1000 + a / 4, 1000 + a, 1000 + b / 4, 1000 + b, ts, ARGUS_WAKE_TASK, ARGUS_IRQ_NONE);
			run(t, 1000 + b / 4, 1000 + b, ts);
			leave(t, 1000 + b / 4, 1000 + b, ts, NR_FUTEX, 0);
			blocked[b] = 0;
			running++;
		} else if (a != b && running > 2) {
			block(t, 1000 + a / 4, 1000 + a, ts, ARGUS_WAIT_FUTEX, NR_FUTEX, FUTEX_PRIVATE | FUTEX_WAIT_OP,
			      0x1000 + 8 * a);
			blocked[a] = 1;
			running--;
		} else if (next_random(2)) {
			preempt(t, 1000 + a / 4, 1000 + a, ts);
			run(t, 1000 + a / 4, 1000 + a, ts + 500);
		} else {
			enter(t, 1000 + a / 4, 1000 + a, ts, NR_WRITE, 0, 4);
			leave(t, 1000 + a / 4, 1000 + a, ts + 100, NR_WRITE, 8);
		}
	}
}

static void test_segments_and_edges_come_out_sorted_and_consistent(void **state)
{
	struct trace t;
	struct graph g;
	uint64_t k, wakeups = 0;

	(void)state;
	random_ping_pong(&t);
	build(&t, (int64_t)t.rows[t.n - 1].ts_ns + MS, &g);
	assert_true(g.n.segments > 100 && g.n.edges > 100);
	for (k = 1; k < g.n.segments; k++)                   /* (utid, start) */
		assert_true(g.seg.utid[k - 1] < g.seg.utid[k] ||
			    (g.seg.utid[k - 1] == g.seg.utid[k] && g.seg.start[k - 1] <= g.seg.start[k]));
	for (k = 0; k < g.n.edges; k++) {
		int64_t s = g.edge.src[k], d = g.edge.dst[k];

		if (k)                                       /* (ts, type, src) */
			assert_true(g.edge.ts[k - 1] < g.edge.ts[k] ||
				    (g.edge.ts[k - 1] == g.edge.ts[k] &&
				     (g.edge.type[k - 1] < g.edge.type[k] ||
				      (g.edge.type[k - 1] == g.edge.type[k] && g.edge.src[k - 1] <= g.edge.src[k]))));
		assert_true(s >= 0 && (uint64_t)s < g.n.segments && d >= 0 && (uint64_t)d < g.n.segments);
		/* the source segment holds the moment the edge leaves it */
		assert_true(g.seg.start[s] <= g.edge.src_ts[k] && g.edge.src_ts[k] <= g.seg.end[s]);
		if (g.edge.type[k] == ARGUS_EDGE_PROGRAM_ORDER) {
			assert_int_equal(g.seg.utid[s], g.seg.utid[d]);
			assert_int_equal(d, s + 1);                  /* consecutive segments of one thread */
		}
		if (g.edge.type[k] == ARGUS_EDGE_WAKEUP) {
			assert_int_equal(g.seg.start[d], g.edge.ts[k]);    /* the wakeup starts the wakee's segment */
			assert_int_equal(g.seg.start_kind[d], ARGUS_START_WAKEUP);
			assert_true(g.seg.utid[s] != g.seg.utid[d]);
			wakeups++;
		}
	}
	assert_true(wakeups > 50);
	free(t.rows);
	graph_free(&g);
}

static void test_csr_orders_ids_by_key_then_time_then_id(void **state)
{
	const int64_t key[] = { 2, 0, 2, 1, 2, 0, 2 };
	const int64_t ts[] = { 50, 40, 10, 30, 50, 20, 30 };
	const int64_t want_ptr[] = { 0, 2, 3, 7 };
	const int64_t want_ts_ids[] = { 5, 1, 3, 2, 6, 0, 4 };    /* ties on (key, ts): by id */
	const int64_t want_ids[] = { 1, 5, 3, 0, 2, 4, 6 };       /* without order_ts: (key, id) */
	int64_t ptr[4], ids[7];

	(void)state;
	assert_int_equal(argus_graph_csr(key, ts, 7, 3, ptr, ids), 0);
	assert_memory_equal(ptr, want_ptr, sizeof(want_ptr));
	assert_memory_equal(ids, want_ts_ids, sizeof(want_ts_ids));
	assert_int_equal(argus_graph_csr(key, NULL, 7, 3, ptr, ids), 0);
	assert_memory_equal(ptr, want_ptr, sizeof(want_ptr));
	assert_memory_equal(ids, want_ids, sizeof(want_ids));
}

static void test_unsorted_rows_are_refused_naming_the_row(void **state)
{
	struct trace t;
	struct argus_graph_config cfg;
	char err[256] = "";

	(void)state;
	trace_init(&t);
	snapshot(&t, A, A, "a");
	run(&t, A, A, 5 * MS);
	run(&t, A, A, 3 * MS);
	cfg = (struct argus_graph_config){ .trace_end = 10 * MS, .roles = t.roles, .nroles = NROLES,
					   .head_gap_end = -1 };
	assert_null(argus_graph_build(t.rows, t.n, &cfg, err, sizeof(err)));
	assert_string_equal(err, "rows are not sorted by ts_ns (row 2)");
	assert_int_equal(argus_rows_sorted(t.rows, t.n), 0);
	assert_int_equal(argus_rows_sorted(t.rows, 2), 1);
	free(t.rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocking_switch_out_ends_a_segment_and_preemption_does_not),
		cmocka_unit_test(test_event_loop_wait_that_did_not_block_splits_unless_disabled),
		cmocka_unit_test(test_task_wakeup_pairs_the_wakers_segment_with_the_one_it_starts),
		cmocka_unit_test(test_channel_learned_from_a_wakeup_carries_a_later_message),
		cmocka_unit_test(test_futex_owner_gives_an_edge_from_the_owners_segment),
		cmocka_unit_test(test_failed_lock_try_points_to_the_holder_the_kernel_named),
		cmocka_unit_test(test_callback_probes_cut_segments_exactly),
		cmocka_unit_test(test_input_opens_a_vertex),
		cmocka_unit_test(test_inputs_read_back_to_back_share_a_vertex),
		cmocka_unit_test(test_enqueue_by_another_thread_is_a_message_edge_to_the_dispatch),
		cmocka_unit_test(test_mutex_unlock_to_the_waiting_lock_is_an_ownership_edge),
		cmocka_unit_test(test_cond_signal_to_the_waiters_return_is_a_message_edge),
		cmocka_unit_test(test_a_lock_return_naming_its_object_is_a_handover),
		cmocka_unit_test(test_ipc_send_to_the_reply_of_its_serial_is_a_message_edge),
		cmocka_unit_test(test_own_enqueue_does_not_hide_a_workers),
		cmocka_unit_test(test_segments_and_edges_come_out_sorted_and_consistent),
		cmocka_unit_test(test_csr_orders_ids_by_key_then_time_then_id),
		cmocka_unit_test(test_unsorted_rows_are_refused_naming_the_row),
	};

	if (argus_graph_abi() != ARGUS_GRAPH_ABI) {
		fprintf(stderr, "argus_graph_abi() is %d, the header says %d\n", argus_graph_abi(), ARGUS_GRAPH_ABI);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
