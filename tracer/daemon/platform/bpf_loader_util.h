/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the two libbpf loaders of argusd (platform_linux.c for the tracer,
 * argus_sample.c for the CPU sampler) do alike: the "failed to <verb>
 * <object>" error text, summing a per-CPU drop counter, and the queue of
 * pids whose user stacks reached the file (drained by the daemon through
 * argus_platform_ops.stack_pids to record their mappings).
 */
#ifndef ARGUS_BPF_LOADER_UTIL_H
#define ARGUS_BPF_LOADER_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"

struct bpf_map;

/* Formats into err (errlen bytes) when err is given; a loader's one line. */
void argus_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The sum over ncpus of the per-CPU __u64 at key 0 of map, read through
 * values (ncpus slots): 0 and *sum set, or the lookup's negative errno. */
int argus_percpu_sum(const struct bpf_map *map, uint64_t *values, int ncpus, uint64_t *sum);

/* Pids in arrival order, each at most once; a full queue drops the pid (the
 * next stack record of that process queues it again). */
struct argus_pid_queue {
	uint32_t pids[ARGUS_STACK_PID_QUEUE];
	size_t n;
};

void argus_pid_queue_push(struct argus_pid_queue *q, uint32_t pid);
/* Moves up to max of the oldest pids to out: how many. */
size_t argus_pid_queue_take(struct argus_pid_queue *q, uint32_t *out, size_t max);

#endif /* ARGUS_BPF_LOADER_UTIL_H */
