/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU sampler as argusd sees it (loader: argus_sample.c, BPF side:
 * kext/linux/argus_sample.bpf.c).  Separate from the platform event source
 * on purpose: it has its own BPF object, ring buffer and perf events, and
 * failing to set it up (no perf events in a container) only leaves the
 * trace without CPU samples.
 *
 *   open   load, configure and attach one cpu-clock perf event per CPU
 *   poll   move pending records into the file ring buffer (never blocks)
 *   close  detach and free
 *
 * Elsewhere than Linux every call is a stub that says "not supported".
 */
#ifndef ARGUS_SAMPLER_H
#define ARGUS_SAMPLER_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "argus_rb.h"

struct argus_sampler;

struct argus_sampler_config {
	uint32_t freq_hz;             /* samples per second per CPU, > 0 */
	uint32_t exclude_tgid;        /* never sampled: the daemon */
	int verbose;                  /* loader diagnostics on stderr */
	void (*observe)(void *ctx, const void *rec, uint32_t size);  /* as argus_tracer_config */
	void *observe_ctx;
};

#ifdef __linux__
int argus_sampler_open(const struct argus_sampler_config *cfg, struct argus_sampler **out, char *err,
		       size_t errlen);
/* Records moved (>= 0) or -errno. */
int argus_sampler_poll(struct argus_sampler *s, struct argus_rb_producer *out);
/* As argus_platform_ops.stack_pids: pids whose stacks reached the file (each
 * pid at most once a second), so the daemon records their mappings. */
size_t argus_sampler_stack_pids(struct argus_sampler *s, uint32_t *out, size_t max);
/* Samples and stack records that never reached the file, cumulative. */
uint64_t argus_sampler_lost(struct argus_sampler *s);
void argus_sampler_close(struct argus_sampler *s);
#else
static inline int argus_sampler_open(const struct argus_sampler_config *cfg, struct argus_sampler **out,
				     char *err, size_t errlen)
{
	(void)cfg; (void)err; (void)errlen;
	*out = NULL;
	return -ENOTSUP;
}
static inline int argus_sampler_poll(struct argus_sampler *s, struct argus_rb_producer *out)
{ (void)s; (void)out; return 0; }
static inline size_t argus_sampler_stack_pids(struct argus_sampler *s, uint32_t *out, size_t max)
{ (void)s; (void)out; (void)max; return 0; }
static inline uint64_t argus_sampler_lost(struct argus_sampler *s) { (void)s; return 0; }
static inline void argus_sampler_close(struct argus_sampler *s) { (void)s; }
#endif

#endif /* ARGUS_SAMPLER_H */
