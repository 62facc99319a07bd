/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one interface between argusd and a kernel event source.  Linux (eBPF,
 * platform_linux.c) and macOS (kdebug) both deliver final-format records
 * from tracer/ringbuf/argus_event.h, so everything above this line is shared.
 *
 * Life cycle, driven by the daemon:
 *
 *   open   load the kernel side, configured; nothing is traced yet
 *   start  attach: events flow from here on
 *   poll   move pending records into the file ring buffer (repeatedly)
 *   stop   detach; a last poll(0) then drains what was already produced
 *   close  free everything
 *
 * open and start put a one-line reason into err ("failed to <verb> <object>:
 * <cause>") so the daemon can pass it to whoever started it.
 */
#ifndef ARGUS_PLATFORM_H
#define ARGUS_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "argus_rb.h"

/* Pids with fresh user stacks a platform remembers between two stack_pids calls. */
#define ARGUS_STACK_PID_QUEUE 256

struct argus_tracer_config {
	uint32_t exclude_tgid;        /* never traced: the daemon, whose draining would trace itself */
	uint64_t kernel_buffer_bytes; /* kernel-side staging buffer; 0 = platform default */
	uint64_t wakeup_bytes;        /* kernel wakes the daemon at this backlog; 0 = a quarter of the buffer */
	int trace_syscalls;           /* syscall enter/exit records and wait reasons from them */
	int syscall_probes;           /* enum argus_syscall_probes: how syscalls are traced */
	int capture_stacks;           /* user stacks at blocking switch-outs (USER_STACK records) */
	int lean_programs;            /* load the lean tier's scheduler programs (--detail lean or auto):
	                               * under full detail they would run on every switch and wakeup */
	int verbose;                  /* loader diagnostics on stderr */
	uint64_t scope_cgroup_id;     /* record only this cgroup v2 and below (kext/linux/scope.bpf.h); 0 = any */
	uint32_t scope_netns;         /* record only this network namespace inode; 0 = any */
	/* Called with every record written into the file (argusd tracks what
	 * each thread last wrote, thread_names.c); may be NULL. */
	void (*observe)(void *ctx, const void *rec, uint32_t size);
	void *observe_ctx;
};

/* How the Linux tracer hooks syscalls: fentry/fexit on the traced syscalls'
 * entry points where the kernel allows it (untraced syscalls then cost
 * nothing), else the raw_syscalls tracepoints; or one of them only. */
enum argus_syscall_probes {
	ARGUS_SYSCALL_PROBES_AUTO,
	ARGUS_SYSCALL_PROBES_FENTRY,
	ARGUS_SYSCALL_PROBES_TRACEPOINT,
};

struct argus_platform_stats {
	uint64_t records;             /* records moved into the file */
	uint64_t kernel_drops;        /* never produced: kernel buffer full, or the kernel skipped a probe */
	uint64_t rejected;            /* malformed or not writable into the file */
	const char *syscall_probes;   /* how syscalls are traced: "fentry", "tracepoint", "off"; NULL = n/a */
	int syscall_functions;        /* fentry: the kernel functions probed */
};

struct argus_platform_ops {
	const char *name;
	int (*open)(const struct argus_tracer_config *cfg, void **state, char *err, size_t errlen);
	int (*start)(void *state, char *err, size_t errlen);
	/* Readable when records are pending, or -1: then the daemon polls on its timer. */
	int (*fd)(void *state);
	/* Records moved (>= 0) or -errno; waits up to timeout_ms for the first one. */
	int (*poll)(void *state, struct argus_rb_producer *out, int timeout_ms);
	/* Records that never reached the file, cumulative (kernel drops + rejected). */
	uint64_t (*lost)(void *state);
	/* Switches the kernel never reported (it ran no tracepoint), cumulative:
	 * holes in its reporting, not records lost.  NULL: none are seen. */
	uint64_t (*switches_unreported)(void *state);
	void (*stats)(void *state, struct argus_platform_stats *st);
	/* Moves up to max pids whose user stacks reached the file since the last
	 * call into out (each once); the daemon records their mappings. */
	size_t (*stack_pids)(void *state, uint32_t *out, size_t max);
	/* The recording tier (docs/linux-tracer.md, "Detail tiers"): lean != 0
	 * stops the syscall programs (a flag they read, and their links
	 * detached), 0 brings them back.  Takes effect for the next event on
	 * every CPU; 0 or -errno.  NULL: the platform has one tier. */
	int (*set_detail)(void *state, int lean);
	void (*stop)(void *state);
	void (*close)(void *state);
};

/* The event source of the system this binary was built for, or NULL. */
const struct argus_platform_ops *argus_platform_native(void);

#endif /* ARGUS_PLATFORM_H */
