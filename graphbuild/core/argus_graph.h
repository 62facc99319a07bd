/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Graph core: decoder rows (struct argus_row, time-sorted) -> event graph
 * tables (segments = vertices, typed edges, threads, thread_state intervals,
 * yields, data-flag accesses, CSR edge indexes).  The algorithm and its
 * invariants are stated at the top of argus_graph.c; the Python side
 * (graphbuild/native_core.py) wraps the tables into numpy columns.
 *
 * Lifetime: argus_graph_build() returns a handle owning every table; the
 * caller sizes numpy arrays from argus_graph_counts(), fills them with one
 * argus_graph_export_*() call per table (each call frees that table's build
 * storage), then argus_graph_free().  Errors are status values: NULL plus a
 * message in err.
 */
#ifndef ARGUS_GRAPH_H
#define ARGUS_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "argus_decode.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ARGUS_GRAPH_ABI 4

/* The library is built with hidden visibility: only these functions are
 * exported (the units' internal functions stay private). */
#define ARGUS_GRAPH_API __attribute__((visibility("default")))

/* Syscall roles: cfg.roles[nr] is a bit set (nr < cfg.nroles). */
enum argus_graph_role {
	ARGUS_ROLE_YIELD = 1 << 0,       /* sched_yield */
	ARGUS_ROLE_FUTEX = 1 << 1,       /* futex */
	ARGUS_ROLE_SEND = 1 << 2,        /* loopback rule: write, sendto, connect, close, ... */
	ARGUS_ROLE_MSG_SEND = 1 << 3,    /* message send on an fd: write(v), sendto, sendmsg, sendmmsg */
	ARGUS_ROLE_MSG_RECV = 1 << 4,    /* message receive on an fd: read(v), recvfrom, recvmsg, recvmmsg */
	ARGUS_ROLE_LOOP_WAIT = 1 << 5,   /* event-loop wait: epoll_wait, epoll_pwait(2), poll, ppoll, select, pselect6 */
	ARGUS_ROLE_URING = 1 << 6,       /* io_uring_enter (aux = min_complete, obj2 = to_submit) */
	ARGUS_ROLE_TIMER_ARM = 1 << 7,   /* timerfd_settime (obj = fd) */
};

/* Segment start kinds / end kinds / split criteria / edge types: the values
 * graphbuild/graph.py names. */
enum { ARGUS_START_TRACE, ARGUS_START_THREAD, ARGUS_START_WAKEUP, ARGUS_START_SWITCH_IN,
       ARGUS_START_PRE_TRACE, ARGUS_START_SPLIT };
enum { ARGUS_END_BLOCKED, ARGUS_END_EXIT, ARGUS_END_TRACE, ARGUS_END_SPLIT };
enum { ARGUS_SPLIT_NONE, ARGUS_SPLIT_EVENT_LOOP, ARGUS_SPLIT_PEER_CHANGE, ARGUS_SPLIT_BATCH,
       ARGUS_SPLIT_CALLBACK, ARGUS_SPLIT_INPUT, ARGUS_SPLIT_GOROUTINE };
enum { ARGUS_EDGE_PROGRAM_ORDER, ARGUS_EDGE_WAKEUP, ARGUS_EDGE_SPAWN, ARGUS_EDGE_DATA_FLAG,
       ARGUS_EDGE_MESSAGE, ARGUS_EDGE_TIMER, ARGUS_EDGE_OWNERSHIP };
/* edge.owner_kind of an ownership edge (0 on every other edge) */
enum { ARGUS_OWNER_NONE, ARGUS_OWNER_FUTEX_OWNER, ARGUS_OWNER_FUTEX_CHANNEL, ARGUS_OWNER_FILE_LOCK,
       ARGUS_OWNER_MUTEX, ARGUS_OWNER_THREAD_EXIT };
/* seg.act_kind: the thread's last action before its blocking wait */
enum { ARGUS_ACT_NONE, ARGUS_ACT_SEND, ARGUS_ACT_WAKE };
/* seg.wait_timeout_ms of a wait that is not an event-loop wait */
#define ARGUS_GRAPH_TIMEOUT_NA (-2)

struct argus_graph_config {
	int64_t trace_start, trace_end;
	const uint8_t *roles;       /* enum argus_graph_role bits per syscall nr */
	uint32_t nroles;
	uint32_t flags;             /* ARGUS_GRAPH_* below */
	int64_t lost_window_ns;     /* a LOST row at ts marks [ts - window, ts] as a gap */
	int64_t head_gap_end;       /* records were overwritten: [trace_start, head_gap_end] is a gap; -1 none */
};

enum {
	ARGUS_GRAPH_NO_SPLITS = 1 << 0,  /* only the blocking-wait criterion (the pre-heuristics graph) */
};

/* Counters, one field per stat the Python side reports. */
struct argus_graph_stats {
	uint64_t rows, ignored_wakeups, lost_records, lost_rows, tid_reuse;
	uint64_t culled_wakeups, loopback_edges, weak_edges;
	uint64_t culled_by_irq[16];     /* culled wakeups with an irq kind, by kind */
	uint64_t culled_by_ctx[8];      /* culled wakeups without one, by context */
	uint64_t splits_blocking_wait, splits_event_loop, splits_peer_change, splits_batch;
	uint64_t weak_program_order, message_edges, timer_edges, learned_channels;
	uint64_t gap_segments, lost_regions;
	uint64_t ownership_edges, wait_sites;
	uint64_t probe_rows, splits_callback, enqueue_edges, mutex_edges, splits_input;
	uint64_t cond_edges, ipc_edges;
	uint64_t go_edges, splits_goroutine;
	uint64_t unreported_switches;   /* LOST rows of kind SWITCHES_UNREPORTED: not in lost_records */
};

struct argus_graph_counts {
	uint64_t segments, edges, threads, running, runnable, yields, flags, thread_rows, ppids;
};

/* numpy-owned destinations, one pointer per column (NULL = skip). */
struct argus_graph_seg_cols {
	int64_t *utid, *tid, *pid, *start, *end;
	uint8_t *start_kind; int8_t *start_ctx; uint8_t *start_irq; int64_t *start_row;
	uint8_t *end_kind; int64_t *wait_start, *wait_end;
	uint8_t *wait_ongoing, *wait_known, *wait_state, *wait_reason;
	uint32_t *wait_nr; uint64_t *wait_obj; int32_t *wait_aux;
	uint8_t *wait_timedout, *wait_done;
	int64_t *cpu_ns, *runnable_ns, *preempts, *yields, *nsyscalls, *row_lo, *row_hi;
	uint8_t *split_kind, *gap;
	uint64_t *wait_site, *wait_stack; int32_t *wait_timeout_ms;
	uint8_t *act_kind; int64_t *act_ts; uint64_t *act_obj; int64_t *act_seg, *act_wakee;
};

struct argus_graph_edge_cols {
	int64_t *src, *dst; uint8_t *type, *weak; int64_t *ts, *src_ts, *row;
	int8_t *ctx; uint64_t *obj; int64_t *wait_ns;
	uint8_t *owner_kind;
};

struct argus_graph_thread_cols {
	int64_t *tid, *pid; char *comm /* 16 bytes each */; int64_t *first_ts, *start_ts, *end_ts;
	uint8_t *created; int64_t *parent_utid; uint8_t *snapshot_main;
	int64_t *thread_rows, *thread_rows_ptr;          /* nrows_owned / nthreads + 1 */
	int64_t *ppid_pid, *ppid_ppid;                   /* pid -> ppid pairs */
};

struct argus_graph_misc_cols {
	int64_t *run_utid, *run_start, *run_end;         /* running intervals, sorted (utid, start) */
	int64_t *rbl_utid, *rbl_start, *rbl_end;         /* runnable intervals */
	int64_t *yld_utid, *yld_ts, *yld_seg;            /* yields, sorted (utid, ts) */
	int64_t *flg_row, *flg_utid, *flg_pid, *flg_seg, *flg_ts; uint64_t *flg_addr;
	int64_t *flg_value; uint8_t *flg_write;          /* data flags, sorted (utid, ts, row) */
};

struct argus_graph;

ARGUS_GRAPH_API int argus_graph_abi(void);
/* rows must be sorted by ts_ns (returns NULL with "unsorted at row N" otherwise). */
ARGUS_GRAPH_API struct argus_graph *argus_graph_build(const struct argus_row *rows, uint64_t nrows,
				      const struct argus_graph_config *cfg, char *err, size_t errlen);
ARGUS_GRAPH_API void argus_graph_counts(const struct argus_graph *g, struct argus_graph_counts *out);
ARGUS_GRAPH_API void argus_graph_stats(const struct argus_graph *g, struct argus_graph_stats *out);
ARGUS_GRAPH_API int argus_graph_export_segments(struct argus_graph *g, const struct argus_graph_seg_cols *c);
ARGUS_GRAPH_API int argus_graph_export_edges(struct argus_graph *g, const struct argus_graph_edge_cols *c);
ARGUS_GRAPH_API int argus_graph_export_threads(struct argus_graph *g, const struct argus_graph_thread_cols *c);
ARGUS_GRAPH_API int argus_graph_export_misc(struct argus_graph *g, const struct argus_graph_misc_cols *c);
ARGUS_GRAPH_API void argus_graph_free(struct argus_graph *g);
/* CSR index over n edges keyed by key[] (< nseg): ids sorted by (key,
 * order_ts, eid), or (key, eid) when order_ts is NULL.  ptr: nseg + 1. */
ARGUS_GRAPH_API int argus_graph_csr(const int64_t *key, const int64_t *order_ts, uint64_t n, uint64_t nseg,
		    int64_t *ptr, int64_t *ids);
/* 1 if rows are sorted by ts_ns, else 0 (no allocation). */
ARGUS_GRAPH_API int argus_rows_sorted(const struct argus_row *rows, uint64_t nrows);
/* One pass: argus_rows_sorted, and learned[nr] |= ARGUS_ROLE_FUTEX / _YIELD for
 * the syscall numbers SWITCH_OUTs with wait reason FUTEX / YIELD name. */
ARGUS_GRAPH_API int argus_rows_scan(const struct argus_row *rows, uint64_t nrows, uint8_t *learned, uint32_t nlearned);

#ifdef __cplusplus
}
#endif
#endif /* ARGUS_GRAPH_H */
