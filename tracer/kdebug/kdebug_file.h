/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdebug raw trace files (reader / tokenizer stage) and `argus
 * import-kdebug`: a V1 or V3 file -> the kdebug decoder -> an Argus ring
 * buffer.
 *
 * Algorithm: map the file read-only; validate the whole layout first (magic,
 * header, thread map and every event chunk in bounds, event bytes a multiple
 * of 64), so a corrupt or truncated file is refused before anything is
 * written; then create the ring buffer, register the thread map (one
 * PROC_SNAPSHOT per thread at the first event's time) and decode the event
 * chunks in file order.
 *
 * Formats (facts from xnu's bsd/kern/kdebug.c and bsd/sys/kdebug*.h):
 *   V1  RAW_header (magic 0x55aa0101, thread count, time of day) | thread map
 *       | zero padding (the CPU map hides in its last page) | events from the
 *       next 4 KiB boundary to the end of the file.  No timebase in the file.
 *   V3  chunks of {tag, sub_tag, 64-bit length} + payload.  The first chunk
 *       (tag 0x1000) holds the timebase; its length also spans the CPU map
 *       sub-chunk.  Thread map 0x1d00; raw events 0x1e00 whose payload starts
 *       with an 8-byte future-events timestamp (older kernels count it in the
 *       length, current ones write it after the header and do not: both are
 *       accepted, the event bytes stay a multiple of 64 either way); config,
 *       CPU map, null and unknown chunks are skipped.
 *
 * Errors are status values: -errno and a one-line message in result->error.
 */
#ifndef ARGUS_KDEBUG_FILE_H
#define ARGUS_KDEBUG_FILE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct argus_kdebug_import_opts {
	uint32_t timebase_numer;     /* 0: from the file (V3), else 1/1 */
	uint32_t timebase_denom;
	uint64_t buffer_size;        /* 0: sized from the event count */
	int trace_syscalls;          /* emit SYSCALL_ENTER/EXIT records */
};

struct argus_kdebug_import_result {
	uint32_t format;             /* 1 or 3 */
	uint32_t timebase_numer, timebase_denom;  /* what was used */
	uint64_t threads;            /* thread map entries */
	uint64_t kd_events;          /* kd_bufs decoded */
	uint64_t records;            /* Argus records written */
	uint64_t lost_markers;
	uint64_t patched_events;     /* events of the Argus xnu patch */
	uint64_t buffer_size;
	char error[256];
};

int argus_kdebug_import(const char *trace_path, const char *buffer_path,
			const struct argus_kdebug_import_opts *opts,
			struct argus_kdebug_import_result *result);

/* Decodes kd_bufs in memory into concatenated Argus records (unit tests and
 * small tools).  Returns 0, -ENOSPC when out_cap is too small, or -ENOMEM. */
int argus_kdebug_decode_mem(const void *kdbufs, size_t nbufs, const void *threadmap, size_t nmap,
			    uint32_t numer, uint32_t denom, int trace_syscalls,
			    void *out, size_t out_cap, size_t *out_len);

#ifdef __cplusplus
}
#endif
#endif /* ARGUS_KDEBUG_FILE_H */
