// SPDX-License-Identifier: Apache-2.0
/* Helpers shared by the libbpf loaders of argusd (bpf_loader_util.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

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
