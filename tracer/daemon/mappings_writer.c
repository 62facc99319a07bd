// SPDX-License-Identifier: Apache-2.0
/*
 * MAPPING records: user stacks are raw addresses.  For every process whose
 * stack reaches the file, the daemon reads /proc/PID/maps after the drain
 * (never inside it) and writes its executable mappings as MAPPING records,
 * again when they change (exec, dlopen), so a symbolizer has them after the
 * process is gone.  After a wrap, the sets of processes with stacks since are
 * re-written from the copy kept here (the rule of thread_names.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argusd.h"

/* "major:minor" of /proc/PID/maps as the kernel's dev_t (major << 20 | minor). */
static uint32_t parse_dev(const char *s)
{
	unsigned major = 0, minor = 0;

	if (sscanf(s, "%x:%x", &major, &minor) != 2)
		return 0;
	return major << 20 | (minor & 0xfffff);
}

/* One executable line of /proc/PID/maps as a MAPPING record; false for
 * lines that are not executable or do not parse. */
static bool parse_mapping(const char *line, struct argus_ev_mapping *rec, uint32_t *size)
{
	unsigned long long start, end, pgoff, inode;
	char perms[8], dev[32];
	int path_at = 0;
	const char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %31s %llu %n", &start, &end, perms, &pgoff, dev, &inode,
		   &path_at) < 6 || perms[2] != 'x')
		return false;
	memset(rec, 0, sizeof(*rec));
	rec->start = start;
	rec->end = end;
	rec->pgoff = pgoff;
	rec->inode = inode;
	rec->dev = parse_dev(dev);
	rec->prot = (perms[0] == 'r' ? ARGUS_MAP_READ : 0) | (perms[1] == 'w' ? ARGUS_MAP_WRITE : 0) |
		    ARGUS_MAP_EXEC;
	path = path_at ? line + path_at : "";
	len = strcspn(path, "\n");
	/* The tail names the file; a path that does not fit keeps it. */
	if (len >= ARGUS_MAPPING_MAX_PATH) {
		path += len - (ARGUS_MAPPING_MAX_PATH - 1);
		len = ARGUS_MAPPING_MAX_PATH - 1;
		rec->prot |= ARGUS_MAP_TRUNCATED;
	}
	memcpy(rec->path, path, len);
	*size = (uint32_t)((offsetof(struct argus_ev_mapping, path) + len + 1 + 7) & ~7ull);
	return true;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

/* Writes the executable mappings of pid unless the same set was written
 * before (refresh_mappings re-emits that one after a wrap); reads
 * /proc/PID/maps at most once a second.  A process that is already gone has
 * no mappings to record (the limitation of reading them from user space,
 * after the fact). */
static void record_mappings(struct daemon *d, uint32_t pid, uint64_t t)
{
	struct maps_seen *seen = &d->maps_seen[pid % MAPS_SEEN_SLOTS];
	struct argus_ev_mapping *recs = NULL, *grown;
	size_t n = 0, cap = 0, i;
	uint32_t *sizes = NULL, *grown_sizes, size;
	uint64_t hash = 0xcbf29ce484222325ull;
	char path[64], line[4096 + 256];
	FILE *f;

	if (seen->pid == pid && t - seen->read_ns < MAPS_REREAD_NS)
		return;
	if (seen->pid != pid) {
		free(seen->recs);
		memset(seen, 0, sizeof(*seen));
	}
	seen->pid = pid;
	seen->read_ns = t;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct argus_ev_mapping rec;

		if (!parse_mapping(line, &rec, &size))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			grown = realloc(recs, cap * sizeof(*recs));
			grown_sizes = grown ? realloc(sizes, cap * sizeof(*sizes)) : NULL;
			if (grown)
				recs = grown;
			if (!grown || !grown_sizes)
				goto out;
			sizes = grown_sizes;
		}
		hash = fnv1a(hash, &rec, size);
		recs[n] = rec;
		sizes[n++] = size;
	}
	if (!n || (hash == seen->hash && seen->recs))
		goto out;
	free(seen->recs);
	seen->recs_len = 0;
	for (i = 0; i < n; i++)
		seen->recs_len += sizes[i];
	seen->recs = malloc(seen->recs_len);
	if (!seen->recs)
		seen->recs_len = 0;
	for (i = 0, size = 0; i < n; i++) {
		fill_header(&recs[i].h, ARGUS_EV_MAPPING, (uint16_t)sizes[i], pid, pid);
		if (seen->recs) {
			memcpy(seen->recs + size, &recs[i], sizes[i]);
			size += sizes[i];
		}
		if (argusd_write(&d->ctx, &recs[i], sizes[i]) == 0)
			d->mapping_records++;
	}
	seen->hash = hash;
	seen->written_seq = d->prod.seq;
out:
	fclose(f);
	free(recs);
	free(sizes);
}

/* Re-writes the MAPPING records of every process with stacks since its
 * mappings went out half a lap ago (the rule of thread_names.c), from the
 * copy kept: also for a process that has exited since. */
void refresh_mappings(struct daemon *d, uint64_t cur, uint64_t half)
{
	for (size_t k = 0; k < MAPS_SEEN_SLOTS; k++) {
		struct maps_seen *seen = &d->maps_seen[k];
		struct argus_event_header h;

		if (!seen->recs || seen->stack_seq <= seen->written_seq || cur - seen->written_seq < half)
			continue;
		for (size_t off = 0; off + sizeof(h) <= seen->recs_len; off += h.size) {
			memcpy(&h, seen->recs + off, sizeof(h));
			if (h.size < sizeof(h) || h.size > seen->recs_len - off)
				break;
			fill_header((struct argus_event_header *)(seen->recs + off), ARGUS_EV_MAPPING, h.size,
				    seen->pid, seen->pid);
			if (argusd_write(&d->ctx, seen->recs + off, h.size) == 0)
				d->mapping_records++;
		}
		seen->written_seq = cur;
	}
}

/* Bounded work per loop iteration: the drain comes first. */
void record_stack_mappings(struct daemon *d)
{
	uint32_t pids[32];
	size_t n, i;
	uint64_t t;

	if (!d->ops->stack_pids)
		return;
	n = d->ops->stack_pids(d->src, pids, sizeof(pids) / sizeof(pids[0]));
	t = now_ns();
	for (i = 0; i < n; i++)
		record_mappings(d, pids[i], t);
	n = d->sampler ? argus_side_pids(d->sampler, pids, sizeof(pids) / sizeof(pids[0])) : 0;
	for (i = 0; i < n; i++)
		record_mappings(d, pids[i], t);
	n = d->uprobes ? argus_side_pids(d->uprobes, pids, sizeof(pids) / sizeof(pids[0])) : 0;
	for (i = 0; i < n; i++)
		record_mappings(d, pids[i], t);
}
