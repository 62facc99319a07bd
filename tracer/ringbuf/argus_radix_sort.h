/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one radix sort of the native parts: a stable LSD radix sort of
 * (64-bit key, 32-bit index) pairs.  The decoder sorts rows by time with it
 * (argus_decode.c), the graph core its edges and CSR indexes
 * (graphbuild/core); header-only so that both libraries, loaded side by side
 * with ctypes, carry their own copy and export nothing more.
 *
 * Algorithm: 11-bit digits, only as many as max_key's highest set bit needs
 * (a time range of a few seconds sorts in 3 passes, not 6); one histogram
 * pass counts every digit at once; a digit all keys share is skipped (the
 * pass would be the identity).  Keys and indexes sit in separate arrays:
 * 12 bytes an entry, twice (the scratch), instead of 16-byte pairs.
 *
 * Invariants: stable (equal keys keep their input order: rows keep (chunk
 * seq, position) order among equal timestamps, edges their earlier sort);
 * keys above max_key are not allowed; on return keys[] / idx[] (which may
 * have swapped with the scratch) hold the sorted pairs.
 *
 * Written by hand: libc has no radix sort, qsort is neither stable nor
 * fast enough for 10^8 rows, and the sort is a few dozen lines.
 */
#ifndef ARGUS_RADIX_SORT_H
#define ARGUS_RADIX_SORT_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define ARGUS_RADIX_BITS 11
#define ARGUS_RADIX_BUCKETS (1u << ARGUS_RADIX_BITS)

struct argus_radix_sort {
	uint64_t *keys, *tmp_keys;       /* n entries each */
	uint32_t *idx, *tmp_idx;
};

/* Sorts s->keys / s->idx (n pairs) by key; 0, or -ENOMEM (nothing sorted). */
static inline int argus_radix_sort(struct argus_radix_sort *s, uint64_t n, uint64_t max_key)
{
	_Static_assert(ARGUS_RADIX_BITS * 6 >= 64, "six passes cover 64 bits");
	unsigned bits = max_key ? 64 - (unsigned)__builtin_clzll(max_key) : 0;
	unsigned passes = (bits + ARGUS_RADIX_BITS - 1) / ARGUS_RADIX_BITS;
	uint64_t *count;

	if (!passes || n < 2)
		return 0;
	count = calloc((size_t)passes * ARGUS_RADIX_BUCKETS, sizeof *count);
	if (!count)
		return -ENOMEM;
	/* One histogram pass for every digit. */
	for (uint64_t i = 0; i < n; i++)
		for (unsigned p = 0; p < passes; p++)
			count[p * ARGUS_RADIX_BUCKETS + ((s->keys[i] >> (p * ARGUS_RADIX_BITS)) & (ARGUS_RADIX_BUCKETS - 1))]++;
	for (unsigned p = 0; p < passes; p++) {
		uint64_t *c = count + p * ARGUS_RADIX_BUCKETS, sum = 0;
		unsigned shift = p * ARGUS_RADIX_BITS;
		int trivial = 0;

		for (unsigned b = 0; b < ARGUS_RADIX_BUCKETS; b++) {
			uint64_t k = c[b];

			trivial |= k == n;      /* every key has the same digit */
			c[b] = sum;
			sum += k;
		}
		if (trivial)
			continue;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t pos = c[(s->keys[i] >> shift) & (ARGUS_RADIX_BUCKETS - 1)]++;

			s->tmp_keys[pos] = s->keys[i];
			s->tmp_idx[pos] = s->idx[i];
		}
		uint64_t *sk = s->keys;
		uint32_t *si = s->idx;

		s->keys = s->tmp_keys;
		s->tmp_keys = sk;
		s->idx = s->tmp_idx;
		s->tmp_idx = si;
	}
	free(count);
	return 0;
}

#endif /* ARGUS_RADIX_SORT_H */
