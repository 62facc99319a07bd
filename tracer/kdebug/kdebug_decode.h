/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdebug decoder (tracker stage): 64-byte kd_buf records -> Argus records
 * (argus_event.h).  Platform-neutral: the live macOS reader
 * (platform_macos.c) and the file importer (kdebug_file.c) feed it, and it is
 * unit-tested on Linux.
 *
 * Algorithm: one pass, in the order the kernel merged the events (time
 * order).  The decoder keeps a small state per thread (pid, name, a MACH_BLOCK
 * seen since its last dispatch, the syscall in progress with the arguments
 * that name what it waits on, idle-thread mark) and per CPU (interrupt
 * nesting and type, the last wakee announced by the patched kernel).  Every
 * kd_buf either updates that state, produces Argus records through the emit
 * callback, or is ignored.  docs/macos.md has the full mapping table.
 *
 * Invariants:
 *   - records are handed to emit in input order, already in final format,
 *     ts_ns = mach time * numer / denom;
 *   - thread and process ids are the low 32 bits of xnu's 64-bit ids;
 *     kernel_task threads have pid 0, and idle threads (known from MACH_IDLE)
 *     are reported as tid 0, like Linux's idle task;
 *   - syscall numbers live in their own namespaces so they never collide with
 *     Linux numbers in a graph: BSD n -> ARGUS_KD_NR_BSD | n, Mach trap n ->
 *     ARGUS_KD_NR_MACH | n;
 *   - nothing read from a record is used as a pointer or an index without a
 *     bounds check (traces are untrusted input).
 *
 * Errors: emit returns 0 or -errno; kdd_feed stops at the first failure and
 * returns it.
 */
#ifndef ARGUS_KDEBUG_DECODE_H
#define ARGUS_KDEBUG_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "kdebug.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ARGUS_KD_NR_MACH 0x10000u   /* Mach trap n   -> syscall nr 0x10000 | n */
#define ARGUS_KD_NR_BSD  0x20000u   /* BSD syscall n -> syscall nr 0x20000 | n */

typedef int (*kdd_emit_fn)(void *ctx, const void *rec, uint32_t size);

struct kdd_config {
	uint32_t timebase_numer;     /* mach_timebase_info; 0/0 means 1/1 */
	uint32_t timebase_denom;
	uint32_t exclude_pid;        /* never emitted (the daemon); 0 = none */
	int trace_syscalls;          /* emit SYSCALL_ENTER/EXIT (wait reasons are derived anyway) */
};

struct kdd_stats {
	uint64_t kd_records;         /* kd_bufs fed */
	uint64_t emitted;            /* Argus records emitted */
	uint64_t ignored;            /* kd_bufs that map to nothing */
	uint64_t lost_markers;       /* TRACE_LOST_EVENTS seen */
	uint64_t patched_events;     /* Argus xnu patch events seen */
	uint64_t threads;            /* threads known */
};

struct kdd;

/* NULL when out of memory. */
struct kdd *kdd_create(const struct kdd_config *cfg, kdd_emit_fn emit, void *ctx);
void kdd_destroy(struct kdd *d);

/* Registers the thread map (kd_threadmap entries; zeroed entries are
 * padding) and emits one PROC_SNAPSHOT per thread at ts (mach time).  The
 * main thread of a process is its lowest thread id.  Returns 0 or -errno. */
int kdd_threadmap(struct kdd *d, const struct kd_threadmap64 *map, size_t n, uint64_t ts);

/* Decodes n records.  Returns 0 or the first emit failure. */
int kdd_feed(struct kdd *d, const struct kd_buf64 *recs, size_t n);

/* A gap the reader knows of (buffer wrapped, short read): LOST record. */
int kdd_lost(struct kdd *d, uint64_t ts, uint64_t count);

/* mach time -> ns with this decoder's timebase. */
uint64_t kdd_ns(const struct kdd *d, uint64_t mach_time);

void kdd_get_stats(const struct kdd *d, struct kdd_stats *st);

/* Whether decoded syscall number nr (ARGUS_KD_NR_BSD | n) is one of xnu's
 * poll-family waits (select, poll, kevent...): the decoder's own table. */
int kdd_is_poll_syscall(uint32_t nr);

#ifdef __cplusplus
}
#endif
#endif /* ARGUS_KDEBUG_DECODE_H */
