/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU sampler as argusd sees it (loader: argus_sample.c, BPF side:
 * kext/linux/argus_sample.bpf.c): a side source (side_source.h) with its
 * own BPF object, ring buffer and perf events; failing to set it up (no
 * perf events in a container) only leaves the trace without CPU samples.
 *
 *   open   load, configure and attach one cpu-clock perf event per CPU;
 *          then poll, pids (those of USER_STACK records), lost and close
 *          are side_source.h's
 *
 * Elsewhere than Linux open is a stub that says "not supported".
 */
#ifndef ARGUS_SAMPLER_H
#define ARGUS_SAMPLER_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "side_source.h"

struct argus_sampler_config {
	uint32_t freq_hz;             /* samples per second per CPU, > 0 */
	uint32_t exclude_tgid;        /* never sampled: the daemon */
	int verbose;                  /* loader diagnostics on stderr */
	void (*observe)(void *ctx, const void *rec, uint32_t size);  /* as argus_tracer_config */
	void *observe_ctx;
};

#ifdef __linux__
/* 0 with *out set, or -errno and err. */
int argus_sampler_open(const struct argus_sampler_config *cfg, struct argus_side_source **out, char *err,
		       size_t errlen);
#else
static inline int argus_sampler_open(const struct argus_sampler_config *cfg, struct argus_side_source **out,
				     char *err, size_t errlen)
{
	(void)cfg; (void)err; (void)errlen;
	*out = NULL;
	return -ENOTSUP;
}
#endif

#endif /* ARGUS_SAMPLER_H */
