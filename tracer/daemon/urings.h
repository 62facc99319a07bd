/* SPDX-License-Identifier: Apache-2.0 */
/*
 * argusd's side of the user-space tracepoints (dylib-instrument/): drains
 * the per-thread rings that traced threads register by creating a file in
 * the registration directory (dylib-instrument/uring.h) into the trace file.
 *
 * Ring contents are written by traced processes and are untrusted: every
 * record is copied out, its type must be a probe type and its size exact,
 * and its pid/tid are replaced by the ring's: the pid its header and name
 * claim, once the kernel vouches for it (urings.c).  A ring whose counters
 * or records are inconsistent, or whose file is truncated, is dropped with
 * one log line; argusd goes on.  Records a
 * full ring dropped come out as one ARGUS_EV_LOST record per drain.
 */
#ifndef ARGUS_URINGS_H
#define ARGUS_URINGS_H

#include <stdint.h>

struct argus_urings;
struct argusd_ctx;

/* Creates dir (0700) if missing; refuses a symlink or a non-directory.
 * Records and log lines go through c, which must outlive the rings. */
int argus_urings_new(const char *dir, const struct argusd_ctx *c, struct argus_urings **out);
/* Rescans the directory at most every 200 ms, drains every ring into the
 * trace (argusd_write), forgets rings whose thread closed them (or whose
 * process is gone) once empty.  Returns the number of records written. */
long argus_urings_poll(struct argus_urings *u, uint64_t now_ns);
/* 1 while any ring is open: the caller polls more often then. */
/* Picks up rings registered since the last scan (the final drain at stop). */
void argus_urings_rescan(struct argus_urings *u);
int argus_urings_active(const struct argus_urings *u);
/* Tracing stops: marks every ring detached (its process stops recording and
 * removes its hooks), unlinks them, frees u. */
void argus_urings_free(struct argus_urings *u);

#endif
