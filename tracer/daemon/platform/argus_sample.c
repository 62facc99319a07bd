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

/* The ring buffer, drops and the pids of USER_STACK records (handed to the
 * daemon for their mappings) are the side source's (bpf_loader_util.c). */
struct argus_sampler {
	struct argus_side_source side;   /* first: the daemon holds &side */
	struct argus_sample_bpf *obj;
	struct bpf_link **links;
	int *pfds;
	int ncpus;
};

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

static void detach(struct argus_side_source *side)
{
	struct argus_sampler *s = (struct argus_sampler *)side;
	int cpu;

	for (cpu = 0; s->links && cpu < s->ncpus; cpu++)
		bpf_link__destroy(s->links[cpu]);
	for (cpu = 0; s->pfds && cpu < s->ncpus; cpu++)
		if (s->pfds[cpu] >= 0)
			close(s->pfds[cpu]);
}

static void destroy(struct argus_side_source *side)
{
	struct argus_sampler *s = (struct argus_sampler *)side;

	argus_sample_bpf__destroy(s->obj);
	free(s->links);
	free(s->pfds);
	free(s);
}

static const struct argus_side_ops sampler_ops = { .detach = detach, .destroy = destroy };

int argus_sampler_open(const struct argus_sampler_config *cfg, struct argus_side_source **out, char *err,
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
	s = argus_side_new(sizeof(*s), &sampler_ops, cfg->observe, cfg->observe_ctx, err, errlen);
	if (!s)
		return -ENOMEM;
	s->side.pid_type = ARGUS_EV_USER_STACK;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		ret = s->ncpus ? s->ncpus : -ENODEV;
		argus_set_err(err, errlen, "failed to count CPUs: %s", strerror(-ret));
		goto cleanup;
	}
	s->links = calloc(s->ncpus, sizeof(*s->links));
	s->pfds = malloc(s->ncpus * sizeof(*s->pfds));
	if (!s->links || !s->pfds) {
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
	s->obj->rodata->scope_on = cfg->scope_cgroup_id || cfg->scope_netns;
	s->obj->rodata->scope_cgroup_id = cfg->scope_cgroup_id;
	s->obj->rodata->scope_netns = cfg->scope_netns;
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
	ret = argus_side_open_ring(&s->side, s->obj->maps.samples, s->obj->maps.drops, err, errlen);
	if (ret)
		goto cleanup;
	if (cfg->verbose)
		fprintf(stderr, "argus_sample: %d CPUs at %u Hz, kernel stacks %s\n", attached, cfg->freq_hz,
			s->obj->rodata->kernel_base ? "on" : "off (no _stext in /proc/kallsyms)");
	*out = &s->side;
	return 0;

cleanup:
	argus_side_close(&s->side);
	return ret;
}
