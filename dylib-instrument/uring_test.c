/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-thread rings under load: THREADS producers each write COUNT probe
 * records (obj = a per-thread sequence number) into their own small ring
 * while one consumer drains every ring concurrently.  Checks, per ring:
 * records arrive in order with no gap except the ones counted as lost,
 * delivered + lost == COUNT, the ring wrapped, every record is well formed, and the files are
 * 0600.  Small rings force wraps, padding and drops.
 *
 *   argus-uring-test DIR [threads] [count] [ring_bytes]
 * Prints "N passed, N failed" (one check per ring); exit 1 on failure.
 */
#include "probe_record.h"
#include "uring.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16

static struct argus_uring prod[MAX_THREADS], cons[MAX_THREADS];
static char paths[MAX_THREADS][512];
static int nthreads, count;

struct check {
	uint64_t next_seq, delivered, gaps, bad;
};
static struct check checks[MAX_THREADS];

static void *producer(void *arg)
{
	long i = (long)arg;
	struct argus_uring *r = &prod[i];
	for (int seq = 0; seq < count; seq++) {
		/* alternate sizes so padding happens at varying offsets */
		uint32_t size = (seq % 3 == 0) ? 56 : sizeof(struct argus_ev_probe);
		if (seq % 64 == 0)
			sched_yield();   /* let the consumer in: wraps, not only drops */
		/* Three records in four wait (boundedly) for room, so the ring
		 * wraps however the scheduler treats the consumer on a loaded
		 * machine; the fourth is dropped when the ring is full, so drops
		 * still happen.  Room for 2 * size covers a pad to the end. */
		for (int tries = 0; seq % 4 != 3 && tries < 10000 &&
		     r->hdr->data_size - (r->hdr->head - __atomic_load_n(&r->hdr->tail, __ATOMIC_ACQUIRE)) < 2ull * size;
		     tries++)
			sched_yield();
		struct argus_ev_probe *e = argus_uring_reserve(r, size);
		if (!e)
			continue;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		e->h.ts_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		e->h.pid = (uint32_t)getpid();
		e->h.tid = (uint32_t)i;
		e->h.type = ARGUS_EV_CALLBACK_BEGIN;
		e->h.size = (uint16_t)size;
		e->h.cpu = ARGUS_CPU_UNKNOWN;
		e->h.flags = 0;
		e->obj = (uint64_t)seq;
		e->fn = 0;
		e->probe_id = (uint32_t)i;
		argus_uring_commit(r, size);
	}
	argus_uring_close(r);   /* as the thread-exit destructor does */
	return NULL;
}

static void on_record(const struct argus_event_header *rec, void *arg)
{
	struct check *c = arg;
	const struct argus_ev_probe *e = (const void *)rec;
	if (rec->type != ARGUS_EV_CALLBACK_BEGIN || (rec->size != 48 && rec->size != 56) ||
	    e->probe_id != (uint32_t)(c - checks) || e->obj < c->next_seq) {
		c->bad++;
		return;
	}
	if (e->obj > c->next_seq)
		c->gaps += e->obj - c->next_seq;
	c->next_seq = e->obj + 1;
	c->delivered++;
}

static int drain_all(void)
{
	for (int i = 0; i < nthreads; i++)
		if (argus_uring_drain(&cons[i], on_record, &checks[i]) < 0)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [threads] [count] [ring_bytes]\n", argv[0]);
		return 2;
	}
	nthreads = argc > 2 ? atoi(argv[2]) : 4;
	count = argc > 3 ? atoi(argv[3]) : 200000;
	uint32_t ring_bytes = argc > 4 ? (uint32_t)atoi(argv[4]) : 8192;
	if (nthreads < 1 || nthreads > MAX_THREADS || count < 1) {
		fprintf(stderr, "uring-test: threads 1..%d, count >= 1\n", MAX_THREADS);
		return 2;
	}
	for (int i = 0; i < nthreads; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%d-%d.ring", argv[1], (int)getpid(), i);
		int err = argus_uring_create(&prod[i], paths[i], ring_bytes, (uint32_t)getpid(), (uint32_t)i,
					     CLOCK_MONOTONIC);
		if (err || argus_uring_open(&cons[i], paths[i])) {
			fprintf(stderr, "uring-test: failed to create ring %s (%d)\n", paths[i], err);
			return 1;
		}
	}
	pthread_t th[MAX_THREADS];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, producer, (void *)i);
	/* drain through the consumer's own mapping, as argusd would, until
	 * every producer has closed its ring; then once more */
	int corrupt = 0;
	for (int open_rings = nthreads; open_rings;) {
		open_rings = 0;
		for (int i = 0; i < nthreads; i++)
			open_rings += !__atomic_load_n(&cons[i].hdr->closed, __ATOMIC_ACQUIRE);
		corrupt |= drain_all() < 0;
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	corrupt |= drain_all() < 0;
	int passed = 0, failed = 0;
	for (int i = 0; i < nthreads; i++) {
		struct stat st;
		uint64_t lost = cons[i].hdr->lost;
		struct check *c = &checks[i];
		/* every drop is a gap before a later record or at the end */
		int ok = !corrupt && !c->bad && c->delivered + lost == (uint64_t)count &&
			 c->gaps + ((uint64_t)count - c->next_seq) == lost &&
			 c->delivered * 48 > 3ull * ring_bytes / 2 &&   /* it wrapped */
			 stat(paths[i], &st) == 0 && (st.st_mode & 0777) == 0600;
		printf("%s ring %d: delivered %llu lost %llu gaps %llu bad %llu\n", ok ? "ok" : "FAIL", i,
		       (unsigned long long)c->delivered, (unsigned long long)lost,
		       (unsigned long long)c->gaps, (unsigned long long)c->bad);
		ok ? passed++ : failed++;
		argus_uring_unmap(&cons[i]);
		unlink(paths[i]);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
