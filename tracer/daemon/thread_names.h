/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names that survive the ring's wrap-around (argusd; see thread_names.c).
 *
 *   observe   every record the daemon writes, with the chunk seq it went into;
 *             name_now the thread it returns
 *   refresh   at chunk boundaries: emit a PROC_SNAPSHOT for every thread whose
 *             last name record would be overwritten before its last record
 */
#ifndef ARGUS_THREAD_NAMES_H
#define ARGUS_THREAD_NAMES_H

#include <stdint.h>

#include "argus_event.h"

struct thread_names;

/* Writes one PROC_SNAPSHOT (header pid / tid set; comm[0] == 0 or ppid == 0
 * when unknown: the callee may fill them from /proc).  Returns 0 when
 * written; the callee passes what it wrote to thread_names_observe. */
typedef int (*thread_names_emit_fn)(void *ctx, struct argus_ev_proc_snapshot *rec);

struct thread_names *thread_names_new(uint32_t nchunks);
void thread_names_free(struct thread_names *n);
/* Returns the tid to name now (thread_names_name_now), or 0. */
uint32_t thread_names_observe(struct thread_names *n, const void *rec, uint32_t size, uint64_t seq);
uint64_t thread_names_name_now(struct thread_names *n, uint32_t tid, uint64_t cur, thread_names_emit_fn emit,
			       void *ctx);
/* At a chunk boundary; does its work every nchunks / 8 chunks (see
 * thread_names.c).  Returns the records emitted. */
uint64_t thread_names_refresh(struct thread_names *n, uint64_t cur, thread_names_emit_fn emit, void *ctx);
uint64_t thread_names_count(const struct thread_names *n);

#endif /* ARGUS_THREAD_NAMES_H */
