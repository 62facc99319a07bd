/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the libbpf loaders of argusd (platform_linux.c for the tracer,
 * argus_sample.c for the CPU sampler, argus_uprobe.c for the hook spec) do
 * alike: the "failed to <verb> <object>" error text, summing a per-CPU drop
 * counter, the queue of pids whose records reached the file (drained by the
 * daemon to record their mappings), and for the two side sources
 * (side_source.h) everything after their attach.
 */
#ifndef ARGUS_BPF_LOADER_UTIL_H
#define ARGUS_BPF_LOADER_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"
#include "side_source.h"

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

/* The part of a side source (side_source.h) that the CPU sampler and the
 * uprobe loader share.  Each embeds it as the first member of its own
 * struct, allocates that through argus_side_new (so close works on a half
 * built source) and calls argus_side_open_ring after attaching. */
#define ARGUS_SIDE_PID_SLOTS 256
/* A process is handed out for its mappings once, then at most this often (a
 * dlopen since): every running process may be sampled, and reading each
 * one's /proc/PID/maps every second cost more than the records. */
#define ARGUS_SIDE_REQUEUE_NS (10ull * 1000000000ull)

struct ring_buffer;

/* What differs between the side sources besides their open. */
struct argus_side_ops {
	void (*before_poll)(struct argus_side_source *s);   /* the loader's own poll work, first; or NULL */
	void (*detach)(struct argus_side_source *s);        /* its links and perf events */
	void (*destroy)(struct argus_side_source *s);       /* its BPF object and its struct */
};

struct argus_side_source {
	const struct argus_side_ops *ops;
	struct ring_buffer *ring;
	struct argus_rb_producer *out;        /* during poll only */
	argus_observe_fn observe;
	void *observe_ctx;
	uint16_t pid_type;                    /* records whose pid is handed out: this type, 0 = all */
	uint64_t records;
	uint64_t rejected;
	int ncpus;
	uint64_t *drop_values;                /* ncpus slots for reading drops */
	const struct bpf_map *drops;          /* per-CPU __u64 at key 0 */
	struct argus_pid_queue queued;
	struct { uint32_t pid; uint64_t ns; } handed[ARGUS_SIDE_PID_SLOTS];
};

/* A loader's struct of size bytes (its struct argus_side_source first),
 * zeroed, with ops and the observer set: NULL and err when out of memory. */
void *argus_side_new(size_t size, const struct argus_side_ops *ops, argus_observe_fn observe, void *observe_ctx,
		     char *err, size_t errlen);

/* After attach: the reader of the BPF ring buffer map records and the drop
 * counter drops.  0, or -errno and err ("failed to <verb> <object>"). */
int argus_side_open_ring(struct argus_side_source *s, const struct bpf_map *records, const struct bpf_map *drops,
			 char *err, size_t errlen);
/* One record of the ring buffer (its callback): into s->out, observed, its
 * pid handed out; invalid input is counted and skipped, never fatal. */
int argus_side_record(void *ctx, void *data, size_t size);

#endif /* ARGUS_BPF_LOADER_UTIL_H */
