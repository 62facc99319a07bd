/* SPDX-License-Identifier: Apache-2.0 */
/* Growable arrays, hash map: see argus_graph_util.h. */
#include <sys/mman.h>

#include "argus_graph_util.h"

#define HUGE_PAGE (2u << 20)

static size_t round_huge(size_t bytes)
{
	return (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
}

void *big_alloc(size_t bytes, size_t *mapped)
{
	size_t len = round_huge(bytes);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_HUGEPAGE);   /* advice only */
	*mapped = len;
	return p;
}

void big_free(void *p, size_t mapped)
{
	if (p)
		munmap(p, mapped);
}

int vec_grow(struct vec *v, uint64_t need)
{
	uint64_t cap = v->cap ? v->cap : 64;
	size_t bytes;
	void *p;

	while (cap < need)
		cap *= 2;
	bytes = cap * v->esize;
	if (v->mapped) {
		size_t len = round_huge(bytes);

		p = mremap(v->data, v->mapped, len, MREMAP_MAYMOVE);
		if (p == MAP_FAILED)
			p = NULL;
		else {
			madvise(p, len, MADV_HUGEPAGE);
			v->mapped = len;
		}
	} else if (bytes >= BIG_BYTES) {
		size_t len;

		p = big_alloc(bytes, &len);
		if (p) {
			memcpy(p, v->data, v->len * v->esize);
			free(v->data);
			v->mapped = len;
		}
	} else {
		p = realloc(v->data, bytes);
	}
	if (!p) {
		v->oom = 1;
		return -1;
	}
	v->data = p;
	v->cap = cap;
	return 0;
}

static inline uint64_t mix(uint64_t k1, uint64_t k2)
{
	/* splitmix64 finalizer over both halves */
	uint64_t x = k1 * 0x9E3779B97F4A7C15ull ^ (k2 + 0x632BE59BD9B4E019ull + (k1 << 6));
	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

int map_init(struct map *m, uint64_t cap)
{
	uint64_t i;

	m->slots = malloc(cap * sizeof(*m->slots));
	if (!m->slots)
		return -1;
	for (i = 0; i < cap; i++)
		m->slots[i].k1 = UINT64_MAX;
	m->mask = cap - 1;
	m->used = 0;
	return 0;
}

void map_free(struct map *m)
{
	free(m->slots);
	m->slots = NULL;
}

struct map_slot *map_find(const struct map *m, uint64_t k1, uint64_t k2)
{
	uint64_t i = mix(k1, k2) & m->mask;

	for (;;) {
		struct map_slot *s = &m->slots[i];

		if (s->k1 == UINT64_MAX)
			return NULL;
		if (s->k1 == k1 && s->k2 == k2)
			return s;
		i = (i + 1) & m->mask;
	}
}

static int map_rehash(struct map *m)
{
	struct map old = *m;
	uint64_t i;

	if (map_init(m, (old.mask + 1) * 2)) {
		*m = old;
		return -1;
	}
	for (i = 0; i <= old.mask; i++) {
		struct map_slot *s = &old.slots[i];
		int ins;

		if (s->k1 != UINT64_MAX)
			map_upsert(m, s->k1, s->k2, s->val, &ins);
	}
	map_free(&old);
	return 0;
}

struct map_slot *map_upsert(struct map *m, uint64_t k1, uint64_t k2, int64_t init, int *inserted)
{
	uint64_t i;

	if ((m->used + 1) * 4 > (m->mask + 1) * 3 && map_rehash(m))
		return NULL;
	i = mix(k1, k2) & m->mask;
	for (;;) {
		struct map_slot *s = &m->slots[i];

		if (s->k1 == UINT64_MAX) {
			s->k1 = k1;
			s->k2 = k2;
			s->val = init;
			m->used++;
			*inserted = 1;
			return s;
		}
		if (s->k1 == k1 && s->k2 == k2) {
			*inserted = 0;
			return s;
		}
		i = (i + 1) & m->mask;
	}
}
