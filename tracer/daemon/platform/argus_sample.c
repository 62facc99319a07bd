// SPDX-License-Identifier: Apache-2.0
/*
 * Loader of the CPU sampler (kext/linux/argus_sample.bpf.c), in the
 * libbpf-tools shape: open -> configure (rodata) -> load -> attach one
 * perf event per CPU -> poll the ring buffer; one cleanup path.
 *
 * The perf events are cpu-clock software events (they exist in VMs and
 * containers without a PMU) in frequency mode, system-wide on each online
 * CPU.  Kernel stacks are taken only when /proc/kallsyms names _stext (the
 * BPF side writes frames as offsets from it); with kptr_restrict hiding it,
 * samples keep their user stacks only.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "argus_event.h"
#include "argus_sample.h"
#include "argus_sample.skel.h"
#include "bpf_loader_util.h"
#include "sampler.h"

/* Pids whose stacks reached the file, with when they were last handed out.
 * A sampled process is handed to the daemon for its mappings once, then at
 * most every REQUEUE_NS (a dlopen since): every running process is sampled,
 * and reading each one's /proc/PID/maps every second cost the daemon more
 * than the samples themselves.  The daemon re-emits known mappings after a
 * wrap on its own (refresh_mappings). */
#define PID_SLOTS 256
#define REQUEUE_NS (10ull * 1000000000ull)

struct argus_sampler {
	struct argus_sample_bpf *obj;
	struct ring_buffer *ring;
	struct bpf_link **links;
	int *pfds;
	int ncpus;
	struct argus_rb_producer *out;
	void (*observe)(void *ctx, const void *rec, uint32_t size);
	void *observe_ctx;
	uint64_t records;
	uint64_t rejected;
	uint64_t *drop_values;
	struct argus_pid_queue queued;
	struct { uint32_t pid; uint64_t ns; } handed[PID_SLOTS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* _stext from /proc/kallsyms, or 0 (not root, kptr_restrict, no such file). */
static uint64_t kernel_text_base(void)
{
	char line[256], name[128], type;
	unsigned long long addr;
	uint64_t base = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) == 3 && !strcmp(name, "_stext")) {
			base = addr;
			break;
		}
	}
	fclose(f);
	return base;
}

static int open_cpu_clock(int cpu, uint32_t freq_hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = freq_hz,
	};

	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void queue_pid(struct argus_sampler *s, uint32_t pid)
{
	size_t slot = pid % PID_SLOTS;
	uint64_t t;

	if (s->handed[slot].pid == pid && mono_ns() - s->handed[slot].ns < REQUEUE_NS)
		return;
	argus_pid_queue_push(&s->queued, pid);
	t = mono_ns();
	s->handed[slot].pid = pid;
	s->handed[slot].ns = t;
}

/* Invalid input from the kernel side is counted and skipped, never fatal. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct argus_sampler *s = ctx;
	const struct argus_event_header *h = data;

	if (size < sizeof(*h) || h->size > size || !s->out || argus_rb_write(s->out, data, h->size)) {
		s->rejected++;
		return 0;
	}
	s->records++;
	if (s->observe)
		s->observe(s->observe_ctx, data, h->size);
	if (h->type == ARGUS_EV_USER_STACK)
		queue_pid(s, h->pid);
	return 0;
}

int argus_sampler_open(const struct argus_sampler_config *cfg, struct argus_sampler **out, char *err,
		       size_t errlen)
{
	struct argus_sampler *s;
	int cpu, ret, attached = 0;

	*out = NULL;
	if (!cfg->freq_hz || cfg->freq_hz > 100000) {
		argus_set_err(err, errlen, "failed to configure CPU sampler: frequency %u Hz is not in 1..100000",
			cfg->freq_hz);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		argus_set_err(err, errlen, "failed to allocate CPU sampler");
		return -ENOMEM;
	}
	s->observe = cfg->observe;
	s->observe_ctx = cfg->observe_ctx;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		ret = s->ncpus ? s->ncpus : -ENODEV;
		argus_set_err(err, errlen, "failed to count CPUs: %s", strerror(-ret));
		goto cleanup;
	}
	s->links = calloc(s->ncpus, sizeof(*s->links));
	s->pfds = malloc(s->ncpus * sizeof(*s->pfds));
	s->drop_values = calloc(s->ncpus, sizeof(*s->drop_values));
	if (!s->links || !s->pfds || !s->drop_values) {
		ret = -ENOMEM;
		argus_set_err(err, errlen, "failed to allocate CPU sampler");
		goto cleanup;
	}
	for (cpu = 0; cpu < s->ncpus; cpu++)
		s->pfds[cpu] = -1;

	s->obj = argus_sample_bpf__open();
	if (!s->obj) {
		ret = -errno;
		argus_set_err(err, errlen, "failed to open BPF object argus_sample: %s", strerror(errno));
		goto cleanup;
	}
	s->obj->rodata->targ_exclude_tgid = cfg->exclude_tgid;
	s->obj->rodata->period_us = 1000000u / cfg->freq_hz;
	s->obj->rodata->kernel_base = kernel_text_base();
	ret = argus_sample_bpf__load(s->obj);
	if (ret) {
		argus_set_err(err, errlen, "failed to load BPF object argus_sample: %s", strerror(-ret));
		goto cleanup;
	}
	for (cpu = 0; cpu < s->ncpus; cpu++) {
		s->pfds[cpu] = open_cpu_clock(cpu, cfg->freq_hz);
		if (s->pfds[cpu] < 0) {
			if (errno == ENODEV)   /* offline CPU */
				continue;
			ret = -errno;
			argus_set_err(err, errlen, "failed to open perf event on CPU %d: %s", cpu, strerror(errno));
			goto cleanup;
		}
		s->links[cpu] = bpf_program__attach_perf_event(s->obj->progs.sample_cpu, s->pfds[cpu]);
		if (!s->links[cpu]) {
			ret = -errno;
			argus_set_err(err, errlen, "failed to attach CPU sampler on CPU %d: %s", cpu, strerror(errno));
			goto cleanup;
		}
		attached++;
	}
	if (!attached) {
		ret = -ENODEV;
		argus_set_err(err, errlen, "failed to attach CPU sampler: no online CPU");
		goto cleanup;
	}
	s->ring = ring_buffer__new(bpf_map__fd(s->obj->maps.samples), on_record, s, NULL);
	if (!s->ring) {
		ret = -errno;
		argus_set_err(err, errlen, "failed to create ring buffer reader: %s", strerror(errno));
		goto cleanup;
	}
	if (cfg->verbose)
		fprintf(stderr, "argus_sample: %d CPUs at %u Hz, kernel stacks %s\n", attached, cfg->freq_hz,
			s->obj->rodata->kernel_base ? "on" : "off (no _stext in /proc/kallsyms)");
	*out = s;
	return 0;

cleanup:
	argus_sampler_close(s);
	return ret;
}

int argus_sampler_poll(struct argus_sampler *s, struct argus_rb_producer *out)
{
	uint64_t before = s->records;
	int ret;

	s->out = out;
	ret = ring_buffer__consume(s->ring);
	s->out = NULL;
	if (ret < 0 && ret != -EINTR)
		return ret;
	return (int)((s->records - before) > INT_MAX ? INT_MAX : (s->records - before));
}

size_t argus_sampler_stack_pids(struct argus_sampler *s, uint32_t *out, size_t max)
{
	return argus_pid_queue_take(&s->queued, out, max);
}

uint64_t argus_sampler_lost(struct argus_sampler *s)
{
	uint64_t drops;

	if (argus_percpu_sum(s->obj->maps.drops, s->drop_values, s->ncpus, &drops))
		return s->rejected;
	return s->rejected + drops;
}

void argus_sampler_close(struct argus_sampler *s)
{
	int cpu;

	if (!s)
		return;
	for (cpu = 0; s->links && cpu < s->ncpus; cpu++)
		bpf_link__destroy(s->links[cpu]);
	for (cpu = 0; s->pfds && cpu < s->ncpus; cpu++)
		if (s->pfds[cpu] >= 0)
			close(s->pfds[cpu]);
	ring_buffer__free(s->ring);
	argus_sample_bpf__destroy(s->obj);
	free(s->links);
	free(s->pfds);
	free(s->drop_values);
	free(s);
}
