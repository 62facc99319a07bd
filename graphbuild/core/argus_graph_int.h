/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to the graph core: the build state shared by its units
 *   argus_graph.c           the pass: tracker, per-thread state machine, row handlers
 *   argus_graph_channels.c  channel identities and learning, message matching, timer fires
 *   argus_graph_owners.c    lock table, futex owners and channels, ownership edges
 *   argus_graph_probes.c    user-space tracepoints: callback cuts, enqueue and mutex edges
 *   argus_graph_edges.c     edges, vertex order, edge sort, gaps
 *   argus_graph_export.c    counts, exports to numpy columns, CSR, free
 * See argus_graph.c for the algorithm and its invariants.
 */
#ifndef ARGUS_GRAPH_INT_H
#define ARGUS_GRAPH_INT_H

#include <stdint.h>

#include "argus_event.h"
#include "argus_graph.h"
#include "argus_graph_util.h"

enum { UNKNOWN, RUNNING, RUNNABLE, BLOCKED, NEW, DEAD };

#define NR_NONE 0xFFFFFFFFu
/* GO_READY handoffs share the enqueue map, in their own key space */
#define GO_KEY (1u << 31)
#define GO_PARKED (-2)   /* a handoff's utid: the g parked and no one readied it yet */
#define FUTEX_OP_MASK 0x7F
#define ETIMEDOUT_NEG (-110)
/* a syscall's return when a signal interrupted it: -EINTR, or a restart code
 * (-ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK)
 * that the kernel turns into a restart or -EINTR once the handler ran */
static inline int signal_interrupted(int64_t ret)
{
	return ret == -4 || ret == -512 || ret == -513 || ret == -514 || ret == -516;
}
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
	/* the wait site (loop waits) and the action before the wait */
	uint64_t site, stack, act_obj;
	int64_t act_ts, act_seg, act_wakee;
	int32_t timeout_ms;
	uint8_t act_kind;
};

#define ARGUS_MX_DEPTH 4   /* nested lock calls followed per thread; deeper ones are not */

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
	/* the last WAIT_SITE row of this thread (a switch_out with the same nr uses it) */
	uint64_t site_id;
	uint32_t site_nr;
	/* the last action since the thread's last wait ended (ARGUS_ACT_*) */
	uint8_t act_kind;
	uint64_t act_obj;
	int64_t act_ts, act_seg, act_wakee;
	/* FUTEX_STATE row just before a blocking switch_out (same ts) */
	uint64_t fx_uaddr;
	int64_t fx_ts;
	uint32_t fx_word, fx_owner;
	uint8_t fx_flags;
	/* FILE_LOCK request in progress (between its SYSCALL_ENTER and EXIT) */
	uint8_t lk_active, lk_kind, lk_type, lk_wait, lk_edge;
	uint32_t lk_nr, lk_holder_pid;
	int32_t lk_fd;
	int64_t lk_start, lk_end, lk_row;
	uint64_t lk_inode;
	/* probes: dispatched a callback once; the MUTEX_LOCKs waiting for
	 * their return, innermost last (a lock function may take other hooked
	 * locks inside: CPython's PyEval_RestoreThread a pthread mutex) */
	uint8_t cb_seen, mx_depth;
	struct { uint64_t obj, fn; int64_t ts; } mx[ARGUS_MX_DEPTH];
	/* the last MUTEX_UNLOCK: a PROBE_RETURN of the same function is a
	 * condition wait's return (pthread_cond_wait: unlock at entry) */
	uint64_t cw_fn, cw_mutex;
	int64_t cw_ts;
	/* Go (GO_* rows): the goroutine this thread runs (0: none, it parked),
	 * the last one it ran (a preempted one resumes without a ready), and
	 * the segment + 1 in which it last started one (0: never) */
	uint64_t go_g, go_last;
	int64_t go_seg;
	/* a goroutine the netpoller readied (parked, run with no GO_READY): its
	 * stint's segment + 1 (0: none), the wake that opened it + 1 (0: none),
	 * its execute and its park; its first receive names the cause */
	int64_t go_np_seg, go_np_wake, go_np_ts, go_np_park;
	uint64_t go_np_g;
	/* a GO_READY by this thread before any other GO_* row of it: whether a
	 * goroutine ran here is known at its next row (a park of another g:
	 * yes); the ready's handoff + 1 (0: none) and its g */
	int64_t go_tent;
	uint64_t go_tent_g;
	uint8_t go_seen;          /* any GO_* row of this thread yet */
	/* the segment + 1 (0: none) opened by the end of a wait whose syscall a
	 * signal interrupted (its exit): the wake was the signal's, and the
	 * thread runs the handler there before anything else */
	int64_t sig_seg;
};

struct wake {
	int64_t row, ts;
	int64_t waker_utid, waker_seg, wakee_utid, dst, prev;
	uint64_t waker_last_obj;
	uint32_t waker_cur_nr, waker_last_nr;
	int32_t waker_last_aux;
	int8_t ctx;
	uint8_t irq;
	/* a goroutine's ready (argus_graph_probes.c) took the place of this
	 * kernel wakeup: the edge leaves the readier at src_ts, obj = the g */
	uint8_t go;
	int64_t src_ts;
	uint64_t go_obj;
};

struct spawn { int64_t src, dst, ts, row; };
struct interval { int64_t utid, start, end; };
struct yield { int64_t utid, ts, seg; };
struct flag { int64_t row, utid, pid, seg, ts; uint64_t addr; int64_t value; uint8_t write; };
struct edge {
	int64_t src, dst, ts, src_ts, row, wait_ns;
	uint64_t obj;
	uint8_t type, weak, owner_kind;
	int8_t ctx;
};
/* ownership edge, the holder's vertex resolved at the end */
struct oreq { int64_t holder, dst, ts, row; uint64_t obj; uint8_t kind, weak; };
/* one held file lock (the lock table); type 0 = free slot */
struct held {
	uint64_t inode, owner;      /* owner: pid (POSIX) or pid << 32 | fd (OFD, flock) */
	int64_t start, end, utid, next;
	uint32_t pid;
	uint8_t kind, type;
};
struct send { int64_t seg, ts, row; uint8_t matched; };
struct fdi { uint64_t local, peer; uint8_t kind; };                /* FD_INFO of one (pid, fd, inode) */
struct handoff {          /* the last ENQUEUE / MUTEX_UNLOCK / IPC_SEND of an object */
	int64_t utid, seg, ts, row;
	uint8_t used, o_used;
	int64_t o_utid, o_seg, o_ts, o_row;   /* ENQUEUE: the one it replaced, if another thread's and unused */
};
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
	struct map fchan;         /* (pid, futex uaddr) -> the last two wakers (utid + 1 each, 32 bits) */
	struct map locks;         /* inode -> first struct held of its chain in lockv */
	struct map enqueues;      /* (pid, obj) -> its last ENQUEUE in handoffs; (GO_KEY | pid, g) its last GO_READY */
	struct map unlocks;       /* (pid, mutex) -> its last MUTEX_UNLOCK in handoffs */
	struct map ipc_sends;     /* (pid, serial) -> its last IPC_SEND in handoffs */
	struct vec sendv, fdiv, tfirev, treqs, lockv, oreqs, handoffs;
	int32_t *owner;           /* row -> utid, -1 */
	size_t owner_mapped;

	/* exported after the pass */
	int64_t *remap;           /* creation id -> final segment id */
	uint64_t nowned;
};

/* FUTEX_WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, WAKE_BITSET: the ops that wake waiters */
static inline int futex_wake_op(int32_t aux)
{
	int op = aux & FUTEX_OP_MASK;

	return op == 1 || op == 3 || op == 4 || op == 5 || op == 10;
}

static inline uint8_t role(const struct argus_graph *g, uint32_t nr)
{
	return nr < g->cfg.nroles ? g->cfg.roles[nr] : 0;
}

#define TH(g, u) (&VEC_AT(&(g)->thr, struct thr, (u)))
#define SG(g, s) (&VEC_AT(&(g)->seg, struct seg, (s)))

static inline uint64_t chan_key(uint32_t pid, uint64_t fd)
{
	return ((uint64_t)pid << 32) | (uint32_t)fd;
}

static inline int64_t rm(const struct argus_graph *g, int64_t s)
{
	return s >= 0 ? g->remap[s] : s;
}

void push_edge(struct argus_graph *g, struct vec *v, int64_t src, int64_t dst, int type, int weak,
		      int64_t ts, int64_t src_ts, int64_t row, int ctx, uint64_t obj, int64_t wait_ns);
int64_t peer_of(const struct argus_graph *g, uint32_t pid, uint64_t fd);
int msg_channel(const struct argus_graph *g, uint32_t pid, uint64_t fd, uint64_t inode, int dir,
		       uint64_t *k1, uint64_t *k2, int64_t *peer);
void on_fd_info(struct argus_graph *g, const struct argus_row *r);
void on_timer(struct argus_graph *g, const struct argus_row *r);
void match_message(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i);
int go_polled_receive(struct argus_graph *g, int64_t u, const struct send *sd);
int learn_channel(struct argus_graph *g, const struct thr *k, uint32_t wakee_pid, const struct seg *ps);
void match_timer_wakeup(struct argus_graph *g, const struct argus_row *r, uint64_t i, int64_t dst);
void build_wake_edges(struct argus_graph *g);
void build_spawn_edges(struct argus_graph *g);
void build_flag_edges(struct argus_graph *g);
int order_segments(struct argus_graph *g);
int finish_edges(struct argus_graph *g);
void mark_gaps(struct argus_graph *g);
void free_pass_tables(struct argus_graph *g);
/* argus_graph.c, for the units' row handlers */
int64_t own(struct argus_graph *g, uint32_t tid, uint32_t pid, int64_t ts, int switch_out);
void own_row(struct argus_graph *g, int64_t u, uint64_t i);
void split_at(struct argus_graph *g, int64_t u, int64_t ts, int criterion, int exact);
/* argus_graph_probes.c */
void on_probe(struct argus_graph *g, const struct argus_row *r, uint64_t i);
/* argus_graph_owners.c */
void on_futex_state(struct argus_graph *g, int64_t u, const struct argus_row *r);
void on_file_lock(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i);
void learn_futex_waker(struct argus_graph *g, int64_t waker, int64_t wakee, uint64_t uaddr);
void owner_edges_at_block(struct argus_graph *g, int64_t u, int64_t ts, uint64_t i);
void file_lock_exit(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i);
void file_locks_released(struct argus_graph *g, uint32_t pid);

#endif /* ARGUS_GRAPH_INT_H */
