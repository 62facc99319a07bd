/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Open addressing over thread ids, shared by the hang detector and the ring
 * index: each keeps a power-of-two array of per-thread slots and, beside it,
 * an array of their tids (0 = free) that is probed instead of the slots, so
 * a lookup touches 4 bytes a step.  Linear probing from a multiplicative
 * hash (Knuth's 2654435761); the caller keeps the table under three quarters
 * full (compacting dead threads away), so a probe always ends.
 */
#ifndef ARGUS_TID_TABLE_H
#define ARGUS_TID_TABLE_H

#include <stdint.h>

static inline uint32_t tid_table_home(uint32_t tid, uint32_t nslots)
{
	return (tid * 2654435761u) & (nslots - 1);
}

/* The slot holding tid, or -1 when it has none. */
static inline int64_t tid_table_find(const uint32_t *keys, uint32_t nslots, uint32_t tid)
{
	for (uint32_t i = tid_table_home(tid, nslots), n = 0; n < nslots; i = (i + 1) & (nslots - 1), n++) {
		if (keys[i] == tid)
			return i;
		if (!keys[i])
			return -1;
	}
	return -1;
}

/* The first free slot on tid's probe sequence (the table is not full). */
static inline uint32_t tid_table_free_slot(const uint32_t *keys, uint32_t nslots, uint32_t tid)
{
	uint32_t i = tid_table_home(tid, nslots);

	while (keys[i])
		i = (i + 1) & (nslots - 1);
	return i;
}

#endif /* ARGUS_TID_TABLE_H */
