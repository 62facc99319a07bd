/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Return-value dereference (the hook spec's "ret_deref"): for a function
 * that returns a pointer to a record (xcb_poll_for_event's event), the
 * return hook reads the record and keeps only the returns that match.
 *
 * A deref is up to ARGUS_DEREF_ALTS alternatives, tried in order; the first
 * whose conditions all hold decides the record's obj, assembled from the
 * alternative's copies (bytes of the record at `from`, to byte `to` of obj,
 * little-endian; bytes no copy writes are 0).  No alternative matching, or a
 * NULL return, means no record.  A condition reads a 1, 2, 4 or 8 byte
 * unsigned little-endian value at `offset`, ands it with `mask` and
 * compares it with up to ARGUS_DEREF_VALUES values.
 *
 * The spec vouches that a non-NULL return points to at least the bytes it
 * names (offsets are bounded by ARGUS_DEREF_MAX_OFFSET): nothing here can
 * check a pointer without a syscall.  Applying runs in the return thunk, so
 * it calls nothing (built -mgeneral-regs-only with the recorder); parsing
 * runs when the agent reads its hook list.
 *
 * The uprobe path (kext/linux/argus_uprobe.bpf.c) applies the same struct,
 * one per hook in a map the loader fills (tracer/daemon/platform/argus_uprobe.c), with
 * bpf_probe_read_user: there a bad pointer reads as no match.
 *
 * Text form (one token, the agent's hook list; hooks/hookspec.py writes it):
 *   alt|alt...      alt = conds;copies
 *   conds  = off:size:mask:v.v.v,...      copies = from:size:to,...
 * all numbers decimal.
 */
#ifndef ARGUS_RET_DEREF_H
#define ARGUS_RET_DEREF_H

#ifndef __bpf__
#include <stdint.h>
#endif   /* BPF (kext/linux/argus_uprobe.bpf.c): vmlinux.h has the fixed-width types */

#define ARGUS_DEREF_ALTS 4
#define ARGUS_DEREF_CONDS 4
#define ARGUS_DEREF_VALUES 8
#define ARGUS_DEREF_COPIES 4
#define ARGUS_DEREF_MAX_OFFSET 4096

struct argus_deref_cond {
	uint16_t offset;
	uint8_t size;        /* 1, 2, 4 or 8 */
	uint8_t nvalues;     /* 1..ARGUS_DEREF_VALUES */
	uint64_t mask;
	uint64_t values[ARGUS_DEREF_VALUES];
};

struct argus_deref_copy {
	uint16_t from;
	uint8_t size;        /* 1..8, to + size <= 8 */
	uint8_t to;
};

struct argus_deref_alt {
	uint8_t nconds, ncopies;
	struct argus_deref_cond cond[ARGUS_DEREF_CONDS];
	struct argus_deref_copy copy[ARGUS_DEREF_COPIES];
};

struct argus_ret_deref {
	uint8_t nalts;       /* 0: no deref (the return value itself is obj) */
	struct argus_deref_alt alt[ARGUS_DEREF_ALTS];
};

#ifndef __bpf__
/* 0, or -1 for text that is not a well-formed deref (d is then unusable). */
int argus_ret_deref_parse(const char *text, struct argus_ret_deref *d);

/* 1 and *obj set when the record at ptr matches, else 0 (NULL: 0). */
int argus_ret_deref_apply(const struct argus_ret_deref *d, uint64_t ptr, uint64_t *obj);
#endif

#endif
