/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MAPPING records (mappings_writer.c): the executable mappings of every
 * process whose user stack reaches the trace, read from /proc/PID/maps after
 * the drain (never inside it), written again when they change (exec, dlopen)
 * and re-emitted from a kept copy after a wrap.
 */
#ifndef MAPPINGS_WRITER_H
#define MAPPINGS_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* What was last written about one process's mappings. */
struct maps_seen {
	uint32_t pid;
	uint64_t read_ns;            /* /proc/PID/maps read (at most once a second) */
	uint64_t hash;               /* of the executable lines written */
	uint64_t written_seq;        /* chunk seq the MAPPING records last went into */
	uint64_t stack_seq;          /* chunk seq of pid's latest USER_STACK */
	uint8_t *recs;               /* those MAPPING records, back to back: re-emitted */
	size_t recs_len;             /* after a wrap (refresh_mappings), even once pid is gone */
};

#define MAPS_SEEN_SLOTS 4096     /* a direct-mapped cache: a collision only costs a re-read */
#define MAPS_REREAD_NS 1000000000ull

struct daemon;

/* Bounded work per loop iteration: the pids with fresh stacks since the last call. */
void record_stack_mappings(struct daemon *d);
/* After a wrap: re-writes the mappings whose last copy is half a lap (half chunks) old. */
void refresh_mappings(struct daemon *d, uint64_t cur, uint64_t half);

#endif /* MAPPINGS_WRITER_H */
