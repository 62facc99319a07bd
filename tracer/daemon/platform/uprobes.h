/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hook spec through uprobes, as argusd sees it (loader: argus_uprobe.c,
 * BPF side: kext/linux/argus_uprobe.bpf.c): for processes not started under
 * `argus run`.  Like the CPU sampler, a side source (side_source.h) with its
 * own BPF object and ring buffer; a hook that cannot be attached is skipped
 * with one log line, and failing to set up the whole source only leaves the
 * trace without these records.
 *
 *   open   read the hook list `argus start` resolved, load, attach each hook;
 *          then poll, pids (those of every probe record), lost and close
 *          are side_source.h's
 *
 * The hook list (a file, one hook a line, tab separated; cli/uprobe_hooks.py):
 *   probe_id  enter_type  return_type  file_offset  library_path  symbol
 *   [obj_arg  [return_obj  [obj_bits  [ret_deref]]]]
 * types are record type numbers (0 = none, else 48..56), the offset is the
 * symbol's file offset in hexadecimal, the path absolute; obj_arg 0-4 or 6
 * (the process key), return_obj 0 (the return value), 1-5 (argument 0-4
 * saved at entry) or 7 (the process key), obj_bits 32 or 64; ret_deref "-"
 * or the text form of dylib-instrument/ret_deref.h.
 *
 * Go (cfg.go): every Go executable that starts (an exec record of the
 * loader's own BPF tracepoint; and those already running at open) gets the
 * scheduler probes of go_runtime.h, once per file (inode), system-wide:
 * GO_READY / GO_EXECUTE / GO_PARK records.  Poll does the attaching, so a
 * program runs a few milliseconds unprobed after its exec.
 *
 * Elsewhere than Linux open is a stub that says "not supported".
 */
#ifndef ARGUS_UPROBES_H
#define ARGUS_UPROBES_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "side_source.h"

struct argus_uprobes_config {
	const char *hooks_path;       /* the hook list; NULL: none (Go probes only) */
	int go;                       /* probe Go executables as they start */
	void (*notice)(const char *line);   /* one line per Go executable probed (NULL: quiet) */
	uint32_t exclude_tgid;        /* never recorded: the daemon */
	void (*skipped)(const char *line);   /* one line per hook skipped (bad line, attach failure) */
	void (*observe)(void *ctx, const void *rec, uint32_t size);  /* as argus_tracer_config */
	void *observe_ctx;
};

#ifdef __linux__
/* 0 with *out set (at least one hook attached, or Go probes on), or -errno and err. */
int argus_uprobes_open(const struct argus_uprobes_config *cfg, struct argus_side_source **out, char *err,
		       size_t errlen);
#else
static inline int argus_uprobes_open(const struct argus_uprobes_config *cfg, struct argus_side_source **out,
				     char *err, size_t errlen)
{
	(void)cfg; (void)err; (void)errlen;
	*out = NULL;
	return -ENOTSUP;
}
#endif

#endif /* ARGUS_UPROBES_H */
