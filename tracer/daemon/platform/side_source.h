/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The side sources of argusd: kernel event sources with their own BPF
 * object and ring buffer besides the platform's (platform.h), whose failure
 * only leaves the trace without their records.  Two exist, each with its
 * own open; once open, the daemon drives both alike, and one piece
 * (bpf_loader_util.c) does the work they share: the ring buffer into the
 * file, the per-CPU drop count, the pids handed to the daemon for their
 * mappings, the teardown.
 *
 *   open   the source's own: load, configure, attach
 *   poll   move pending records into the file ring buffer (never blocks)
 *   pids   processes whose records reached the file, each at most every
 *          10 s, so the daemon records their mappings
 *   close  detach and free
 *
 * The CPU sampler (argus_sample.c, kext/linux/argus_sample.bpf.c): one
 * cpu-clock perf event per CPU; failing to set it up (no perf events in a
 * container) only leaves the trace without CPU samples.  Its pids are those
 * of USER_STACK records.
 *
 * The hook spec through uprobes (argus_uprobe.c,
 * kext/linux/argus_uprobe.bpf.c), for processes not started under
 * `argus run`: a hook that cannot be attached is skipped with one log line.
 * Its pids are those of every probe record (so fn can be symbolized).  The
 * hook list (a file, one hook a line, tab separated;
 * dylib-instrument/hooks/uprobe_hooks.py):
 *   probe_id  enter_type  return_type  file_offset  library_path  symbol
 *   [obj_arg  [return_obj  [obj_bits  [ret_deref]]]]
 * types are record type numbers (0 = none, else 48..56), the offset is the
 * symbol's file offset in hexadecimal, the path absolute; obj_arg 0-4 or 6
 * (the process key), return_obj 0 (the return value), 1-5 (argument 0-4
 * saved at entry) or 7 (the process key), obj_bits 32 or 64; ret_deref "-"
 * or the text form of dylib-instrument/ret_deref.h.
 * Go (cfg.go): every Go executable that starts (an exec record of the
 * loader's own BPF tracepoint; and those already running at open) gets the
 * scheduler probes of go_runtime.h, once per file (inode), system-wide:
 * GO_READY / GO_EXECUTE / GO_PARK records.  Poll does the attaching, so a
 * program runs a few milliseconds unprobed after its exec.
 *
 * Elsewhere than Linux there is no side source: open says "not supported"
 * and the rest are stubs.
 */
#ifndef ARGUS_SIDE_SOURCE_H
#define ARGUS_SIDE_SOURCE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "argus_rb.h"

struct argus_side_source;

/* Called with every record written into the file, as argus_tracer_config's. */
typedef void (*argus_observe_fn)(void *ctx, const void *rec, uint32_t size);

struct argus_sampler_config {
	uint32_t freq_hz;             /* samples per second per CPU, > 0 */
	uint32_t exclude_tgid;        /* never sampled: the daemon */
	uint64_t scope_cgroup_id;     /* sample only this cgroup v2 and below; 0 = any (kext/linux/scope.bpf.h) */
	uint32_t scope_netns;         /* sample only this network namespace; 0 = any */
	int verbose;                  /* loader diagnostics on stderr */
	argus_observe_fn observe;
	void *observe_ctx;
};

struct argus_scope;   /* cgroup_path.h */

struct argus_uprobes_config {
	const char *hooks_path;       /* the hook list; NULL: none (Go probes only) */
	int go;                       /* probe Go executables as they start */
	/* with go: the python that records the goroutines parked in a process
	 * when the probes attach to it (PYTHON -m argus.tracer.gosnap --pid P
	 * --ts NS --buffer BUFFER); NULL: none */
	const char *go_snapshot;
	const char *buffer;
	const struct argus_scope *scope;   /* snapshots only of processes in it (NULL or empty: any) */
	void (*notice)(const char *line);   /* one line per Go executable probed (NULL: quiet) */
	uint32_t exclude_tgid;        /* never recorded: the daemon */
	uint64_t scope_cgroup_id;     /* record only this cgroup v2 and below; 0 = any (kext/linux/scope.bpf.h) */
	uint32_t scope_netns;         /* record only this network namespace; 0 = any */
	void (*skipped)(const char *line);   /* one line per hook skipped (bad line, attach failure) */
	argus_observe_fn observe;
	void *observe_ctx;
};

#ifdef __linux__
/* 0 with *out set, or -errno and err ("failed to <verb> <object>: ..."); the
 * uprobes need at least one hook attached, or Go probes on. */
int argus_sampler_open(const struct argus_sampler_config *cfg, struct argus_side_source **out, char *err,
		       size_t errlen);
int argus_uprobes_open(const struct argus_uprobes_config *cfg, struct argus_side_source **out, char *err,
		       size_t errlen);
/* Records moved (>= 0) or -errno. */
int argus_side_poll(struct argus_side_source *s, struct argus_rb_producer *out);
size_t argus_side_pids(struct argus_side_source *s, uint32_t *out, size_t max);
/* Records that never reached the file, cumulative. */
uint64_t argus_side_lost(struct argus_side_source *s);
void argus_side_close(struct argus_side_source *s);
#else
static inline int argus_side_unsupported(struct argus_side_source **out)
{
	*out = NULL;
	return -ENOTSUP;
}
static inline int argus_sampler_open(const struct argus_sampler_config *cfg, struct argus_side_source **out,
				     char *err, size_t errlen) { return argus_side_unsupported(out); }
static inline int argus_uprobes_open(const struct argus_uprobes_config *cfg, struct argus_side_source **out,
				     char *err, size_t errlen) { return argus_side_unsupported(out); }
static inline int argus_side_poll(struct argus_side_source *s, struct argus_rb_producer *out) { return 0; }
static inline size_t argus_side_pids(struct argus_side_source *s, uint32_t *out, size_t max) { return 0; }
static inline uint64_t argus_side_lost(struct argus_side_source *s) { return 0; }
static inline void argus_side_close(struct argus_side_source *s) {}
#endif

#endif /* ARGUS_SIDE_SOURCE_H */
