/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-thread user-space rings: one shared-memory file per traced thread,
 * written by that thread alone (the trampolines) and drained by one reader
 * (argusd, or a test).  Single producer, single consumer, no lock and no
 * syscall per record: the producer publishes with a release store of head,
 * the consumer frees space with a release store of tail.  Layout and rules
 * follow the LTTng / perf ring idea of free-running byte counters.
 *
 * File: one 4096-byte header page, then data_size bytes (a power of two).
 * Records never straddle the end: when one does not fit before it, the
 * producer pads (a header with type ARGUS_URING_PAD: the rest up to the end
 * is skipped; when fewer than 24 bytes remain, nothing: both sides skip it).
 * A full ring drops the record and counts it in `lost`.
 *
 * Registration: the file existing in the registration directory
 * ($ARGUS_URING_DIR, e.g. $ARGUS_RUN_DIR/urings) is the registration; its
 * name is <pid>-<tid>.ring.  The producer sets `closed` when the thread exits;
 * the reader sets `detached` when tracing stops for good (the agent then
 * takes its hooks out).
 */
#ifndef ARGUS_URING_H
#define ARGUS_URING_H

#include <stddef.h>
#include <stdint.h>

#include "argus_event.h"

#define ARGUS_URING_MAGIC 0x3152555355475241ull   /* "ARGUSUR1" little endian */
#define ARGUS_URING_VERSION 1
#define ARGUS_URING_HEADER_SIZE 4096
#define ARGUS_URING_PAD 0                          /* record type of padding */
#define ARGUS_URING_DEFAULT_SIZE (1u << 20)   /* 21845 records: 10 ms of a very busy thread */
/* clock_id of a ring whose ts_ns fields hold raw x86 TSC ticks: reading the
 * TSC costs a fraction of clock_gettime, and the reader converts to
 * CLOCK_MONOTONIC (tracer/daemon/urings.c) from (TSC, CLOCK_MONOTONIC) pairs it
 * samples itself.  Any other value is a clockid_t. */
#define ARGUS_URING_CLOCK_TSC 0x7473635fu   /* "_cst" */

struct argus_uring_header {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;
	uint32_t pid, tid;
	uint64_t data_size;
	uint32_t clock_id;             /* CLOCK_MONOTONIC, or ARGUS_URING_CLOCK_TSC */
	uint32_t closed;               /* 1 after the thread exited */
	uint32_t detached;             /* 1 after the reader stopped: record no more */
	uint64_t head __attribute__((aligned(64)));   /* producer: bytes written */
	uint64_t lost;                 /* producer: records dropped, ring full */
	uint64_t tail __attribute__((aligned(64)));   /* consumer: bytes consumed */
};

struct argus_uring {
	struct argus_uring_header *hdr;
	uint8_t *data;
	uint64_t mask;
	uint64_t tail_cache;           /* producer's last view of tail */
	size_t map_size;
};

/* Producer side. */
int argus_uring_create(struct argus_uring *r, const char *path, uint32_t data_size,
		       uint32_t pid, uint32_t tid, uint32_t clock_id);
/* Reserves size bytes (a multiple of 8, >= 24) contiguous in the ring, or
 * NULL when full (counted in lost).  Fill the record, then commit. */
void *argus_uring_reserve(struct argus_uring *r, uint32_t size);
void argus_uring_commit(struct argus_uring *r, uint32_t size);
void argus_uring_close(struct argus_uring *r);     /* marks closed and unmaps */

/* Consumer side. */
int argus_uring_open(struct argus_uring *r, const char *path);
/* The same on an open file (left open): the file is mapped at its current
 * size, which must be the header's.  The mapping is the caller's to guard: a
 * file truncated later raises SIGBUS on access (tracer/daemon/urings.c). */
int argus_uring_open_fd(struct argus_uring *r, int fd);
/* Calls fn for each committed record, then frees the space.  Returns the
 * number of records, or -1 when the ring is corrupt (a size out of bounds). */
typedef void (*argus_uring_fn)(const struct argus_event_header *rec, void *arg);
long argus_uring_drain(struct argus_uring *r, argus_uring_fn fn, void *arg);
void argus_uring_unmap(struct argus_uring *r);

#endif
