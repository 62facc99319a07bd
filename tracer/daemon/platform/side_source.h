/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A side source of argusd: a kernel event source with its own BPF object
 * and ring buffer besides the platform's (platform.h), whose failure only
 * leaves the trace without its records.  Two exist: the CPU sampler
 * (sampler.h, argus_sample.c) and the hook spec through uprobes (uprobes.h,
 * argus_uprobe.c).  Each has its own open; once open, the daemon drives both
 * alike through this header, and one piece (bpf_loader_util.c) does the
 * work they share: the ring buffer into the file, the per-CPU drop count,
 * the pids handed to the daemon for their mappings, the teardown.
 *
 *   open   the loader's own (argus_sampler_open, argus_uprobes_open)
 *   poll   move pending records into the file ring buffer (never blocks)
 *   close  detach and free
 *
 * Elsewhere than Linux there is no side source: every call is a stub.
 */
#ifndef ARGUS_SIDE_SOURCE_H
#define ARGUS_SIDE_SOURCE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "argus_rb.h"

struct argus_side_source;

#ifdef __linux__
/* Records moved (>= 0) or -errno. */
int argus_side_poll(struct argus_side_source *s, struct argus_rb_producer *out);
/* Pids whose records reached the file, each at most every 10 s, so the
 * daemon records their mappings (as argus_platform_ops.stack_pids). */
size_t argus_side_pids(struct argus_side_source *s, uint32_t *out, size_t max);
/* Records that never reached the file, cumulative. */
uint64_t argus_side_lost(struct argus_side_source *s);
void argus_side_close(struct argus_side_source *s);
#else
static inline int argus_side_poll(struct argus_side_source *s, struct argus_rb_producer *out)
{ (void)s; (void)out; return 0; }
static inline size_t argus_side_pids(struct argus_side_source *s, uint32_t *out, size_t max)
{ (void)s; (void)out; (void)max; return 0; }
static inline uint64_t argus_side_lost(struct argus_side_source *s) { (void)s; return 0; }
static inline void argus_side_close(struct argus_side_source *s) { (void)s; }
#endif

#endif /* ARGUS_SIDE_SOURCE_H */
