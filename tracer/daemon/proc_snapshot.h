/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PROC_SNAPSHOT records from /proc (proc_snapshot.c): every thread at start-up,
 * and one thread at a time when its name must be written again after a wrap.
 */
#ifndef PROC_SNAPSHOT_H
#define PROC_SNAPSHOT_H

#include <stdint.h>

#include "argus_event.h"

struct argusd_ctx;

/* Every thread in /proc, one record each through c; returns the threads written. */
/* Every thread (of the processes in scope: cgroup_path.h), and a PROC_NS
 * per process (its cgroup and network namespace). */
struct argus_scope;
uint64_t write_snapshot(const struct argusd_ctx *c, const struct argus_scope *scope);
/* thread_names_emit_fn: ctx is the struct argusd_ctx the record goes through;
 * fills comm / ppid from /proc when unknown. */
int emit_name(void *ctx, struct argus_ev_proc_snapshot *rec);

#endif /* PROC_SNAPSHOT_H */
