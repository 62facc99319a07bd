/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Building blocks of the graph core: growable arrays and an open-addressing
 * hash map with 128-bit keys (the radix sort is shared with the decoder:
 * tracer/ringbuf/argus_radix_sort.h).
 *
 * Written by hand because the core is plain C with no dependencies beyond libc
 * (it is loaded with ctypes next to libargus_core.so) and each piece is a few
 * dozen lines.  Growth is geometric, so the build does O(log n) reallocations
 * in all, never one allocation per event.
 *
 * Invariants: a vec's elements are contiguous and its pointer changes only on
 * growth (callers never keep element pointers across a push); map keys with
 * k1 == UINT64_MAX are reserved as the empty marker (callers build k1 from a
 * pid or a utid, which never fills 64 bits).
 */
#ifndef ARGUS_GRAPH_UTIL_H
#define ARGUS_GRAPH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct vec {
	void *data;
	uint64_t len, cap;
	uint32_t esize;
	int oom;
	size_t mapped;      /* bytes mapped when data came from big_alloc, else 0 (malloc) */
};

/* Large arrays (>= BIG_BYTES) are anonymous mappings advised to use
 * transparent huge pages: filling gigabytes then costs 512x fewer page
 * faults, and growth is mremap (no copy). */
#define BIG_BYTES (4u << 20)
void *big_alloc(size_t bytes, size_t *mapped);
void big_free(void *p, size_t mapped);

static inline void vec_init(struct vec *v, uint32_t esize)
{
	memset(v, 0, sizeof(*v));
	v->esize = esize;
}

int vec_grow(struct vec *v, uint64_t need);   /* out of line: the slow path */

/* Room for n more elements: the next n vec_push calls cannot fail. */
static inline int vec_reserve(struct vec *v, uint64_t n)
{
	return v->len + n <= v->cap ? 0 : vec_grow(v, v->len + n);
}

/* Pointer to a new zeroed-by-caller slot, or NULL when out of memory. */
static inline void *vec_push(struct vec *v)
{
	if (v->len == v->cap && vec_grow(v, v->len + 1))
		return NULL;
	return (char *)v->data + (v->len++) * v->esize;
}

static inline void vec_free(struct vec *v)
{
	if (v->mapped)
		big_free(v->data, v->mapped);
	else
		free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
	v->mapped = 0;
}

#define VEC_AT(v, type, i) (((type *)(v)->data)[i])

struct map_slot {
	uint64_t k1, k2;
	int64_t val;
};

struct map {
	struct map_slot *slots;
	uint64_t mask, used;
};

int map_init(struct map *m, uint64_t cap_pow2);
void map_free(struct map *m);
/* Slot for (k1, k2), inserted with val = init when missing; NULL when out of memory. */
struct map_slot *map_upsert(struct map *m, uint64_t k1, uint64_t k2, int64_t init, int *inserted);
struct map_slot *map_find(const struct map *m, uint64_t k1, uint64_t k2);

#endif /* ARGUS_GRAPH_UTIL_H */
