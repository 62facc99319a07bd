// SPDX-License-Identifier: Apache-2.0
/* Helpers shared by the libbpf loaders of argusd (bpf_loader_util.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "argus_event.h"
#include "bpf_loader_util.h"

void argus_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int argus_percpu_sum(const struct bpf_map *map, uint64_t *values, int ncpus, uint64_t *sum)
{
	__u32 zero = 0;
	int i, ret;

	*sum = 0;
	ret = bpf_map__lookup_elem(map, &zero, sizeof(zero), values, sizeof(*values) * ncpus, 0);
	if (ret)
		return ret;
	for (i = 0; i < ncpus; i++)
		*sum += values[i];
	return 0;
}

void argus_pid_queue_push(struct argus_pid_queue *q, uint32_t pid)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		if (q->pids[i] == pid)
			return;
	if (q->n < ARGUS_STACK_PID_QUEUE)
		q->pids[q->n++] = pid;
}

size_t argus_pid_queue_take(struct argus_pid_queue *q, uint32_t *out, size_t max)
{
	size_t n = q->n < max ? q->n : max;

	memcpy(out, q->pids, n * sizeof(*out));
	memmove(q->pids, q->pids + n, (q->n - n) * sizeof(*out));
	q->n -= n;
	return n;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void *argus_side_new(size_t size, const struct argus_side_ops *ops, argus_observe_fn observe, void *observe_ctx,
		     char *err, size_t errlen)
{
	struct argus_side_source *s = calloc(1, size);

	if (!s) {
		argus_set_err(err, errlen, "failed to allocate side source: out of memory");
		return NULL;
	}
	s->ops = ops;
	s->observe = observe;
	s->observe_ctx = observe_ctx;
	return s;
}

int argus_side_open_ring(struct argus_side_source *s, const struct bpf_map *records, const struct bpf_map *drops,
			 char *err, size_t errlen)
{
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		argus_set_err(err, errlen, "failed to count CPUs: %s", strerror(s->ncpus ? -s->ncpus : ENODEV));
		return s->ncpus ? s->ncpus : -ENODEV;
	}
	s->drop_values = calloc(s->ncpus, sizeof(*s->drop_values));
	if (!s->drop_values) {
		argus_set_err(err, errlen, "failed to allocate drop counters");
		return -ENOMEM;
	}
	s->drops = drops;
	s->ring = ring_buffer__new(bpf_map__fd(records), argus_side_record, s, NULL);
	if (!s->ring) {
		argus_set_err(err, errlen, "failed to create ring buffer reader: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static void hand_out(struct argus_side_source *s, uint32_t pid)
{
	size_t slot = pid % ARGUS_SIDE_PID_SLOTS;
	uint64_t t = mono_ns();

	if (s->handed[slot].pid == pid && t - s->handed[slot].ns < ARGUS_SIDE_REQUEUE_NS)
		return;
	argus_pid_queue_push(&s->queued, pid);
	s->handed[slot].pid = pid;
	s->handed[slot].ns = t;
}

int argus_side_record(void *ctx, void *data, size_t size)
{
	struct argus_side_source *s = ctx;
	const struct argus_event_header *h = data;

	if (size < sizeof(*h) || h->size < sizeof(*h) || h->size > size || !s->out ||
	    argus_rb_write(s->out, data, h->size)) {
		s->rejected++;
		return 0;
	}
	s->records++;
	if (s->observe)
		s->observe(s->observe_ctx, data, h->size);
	if (!s->pid_type || h->type == s->pid_type)
		hand_out(s, h->pid);
	return 0;
}

int argus_side_poll(struct argus_side_source *s, struct argus_rb_producer *out)
{
	uint64_t before = s->records;
	int ret;

	if (s->ops->before_poll)
		s->ops->before_poll(s);
	s->out = out;
	ret = ring_buffer__consume(s->ring);
	s->out = NULL;
	if (ret < 0 && ret != -EINTR)
		return ret;
	return (int)((s->records - before) > INT_MAX ? INT_MAX : (s->records - before));
}

size_t argus_side_pids(struct argus_side_source *s, uint32_t *out, size_t max)
{
	return argus_pid_queue_take(&s->queued, out, max);
}

uint64_t argus_side_lost(struct argus_side_source *s)
{
	uint64_t drops;

	if (!s->drops || argus_percpu_sum(s->drops, s->drop_values, s->ncpus, &drops))
		return s->rejected;
	return s->rejected + drops;
}

/* libbpf-tools' teardown order: stop the probes, then the reader, then the object. */
void argus_side_close(struct argus_side_source *s)
{
	if (!s)
		return;
	s->ops->detach(s);
	ring_buffer__free(s->ring);
	free(s->drop_values);
	s->ops->destroy(s);
}
