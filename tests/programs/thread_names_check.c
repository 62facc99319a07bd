// SPDX-License-Identifier: Apache-2.0
/*
 * Property check of tracer/daemon/thread_names.c: a simulated ring of N chunks,
 * threads writing records at random (a few busy, most rare, some renaming
 * or exiting), the daemon's refresh at every chunk boundary.  After every
 * chunk, every thread with a record in a chunk still in the ring (seq >
 * cur - N) must have a name record still in the ring.  Also reports how many
 * name records the refresh wrote per thread per lap (the cost).
 *
 *   argus-thread-names-check [NCHUNKS] [LAPS] [SEED]
 * Exit 0 and one line "ok ..." when the invariant held, 1 and the first
 * violation otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thread_names.h"

#define THREADS 300

static uint64_t last_rec[THREADS + 1], last_name[THREADS + 1];
static int dead[THREADS + 1];
static struct thread_names *names;
static uint64_t cur, emitted;

static uint32_t rnd(void)
{
	static uint64_t s = 88172645463325252ull;

	s ^= s << 13, s ^= s >> 7, s ^= s << 17;
	return (uint32_t)s;
}

static int emit(void *ctx, struct argus_ev_proc_snapshot *rec);

static void put(uint16_t type, uint32_t tid, const char *comm)
{
	union {
		struct argus_event_header h;
		struct argus_ev_comm c;              /* THREAD_NAME */
		struct argus_ev_proc_snapshot p;     /* PROC_SNAPSHOT */
	} r;
	uint32_t size = sizeof(r.h), due;

	memset(&r, 0, sizeof(r));
	r.h.type = type;
	r.h.pid = tid;                 /* each thread its own process: names its process too */
	r.h.tid = tid;
	if (type == ARGUS_EV_THREAD_NAME) {
		snprintf(r.c.comm, sizeof(r.c.comm), "%s", comm);
		size = sizeof(r.c);
	} else if (type == ARGUS_EV_PROC_SNAPSHOT) {
		snprintf(r.p.comm, sizeof(r.p.comm), "%s", comm);
		r.p.is_main_thread = 1;
		size = sizeof(r.p);
	}
	r.h.size = (uint16_t)size;
	due = thread_names_observe(names, &r, size, cur);
	last_rec[tid] = cur;
	if (comm)
		last_name[tid] = cur;
	if (due)                       /* as argusd does, right after the record */
		emitted += thread_names_name_now(names, due, cur, emit, NULL);
}

static int emit(void *ctx, struct argus_ev_proc_snapshot *rec)
{
	(void)ctx;
	if (rec->h.tid > THREADS)
		return -1;
	if (!rec->comm[0]) {           /* argusd reads /proc/PID/task/TID/comm: gone when dead */
		if (dead[rec->h.tid])
			return -1;
		snprintf(rec->comm, sizeof(rec->comm), "proc");
	}
	emitted++;
	rec->h.type = ARGUS_EV_PROC_SNAPSHOT;
	rec->h.size = sizeof(*rec);
	thread_names_observe(names, rec, sizeof(*rec), cur);
	last_rec[rec->h.tid] = cur;
	last_name[rec->h.tid] = cur;
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 16;
	uint64_t laps = argc > 2 ? (uint64_t)atoll(argv[2]) : 200;
	char comm[16];

	if (argc > 3)
		for (int k = atoi(argv[3]); k > 0; k--)
			rnd();
	names = thread_names_new(n);
	if (!names || n < 1)
		return 2;
	cur = 1;
	for (uint32_t t = 1; t <= THREADS; t++)
		put(ARGUS_EV_PROC_SNAPSHOT, t, "start");
	for (; cur < laps * n; cur++) {
		emitted += thread_names_refresh(names, cur, emit, NULL);
		for (int k = 0; k < 40; k++) {
			/* thread 1..10 busy, the rest rare */
			uint32_t t = rnd() % 4 ? 1 + rnd() % 10 : 1 + rnd() % THREADS;
			uint32_t what = rnd() % 1000;

			if (dead[t])
				continue;
			if (what == 0) {
				put(ARGUS_EV_EXIT, t, NULL);
				dead[t] = 1;
			} else if (what < 3) {
				snprintf(comm, sizeof(comm), "t%u-%u", t, what);
				put(ARGUS_EV_THREAD_NAME, t, comm);
			} else {
				put(ARGUS_EV_SWITCH_OUT, t, NULL);
			}
		}
		for (uint32_t t = 1; t <= THREADS; t++)
			if (last_rec[t] + n > cur && last_name[t] + n <= cur) {
				printf("violation: chunk %llu, thread %u: last record in %llu, last name in %llu "
				       "(ring of %u)\n", (unsigned long long)cur, t, (unsigned long long)last_rec[t],
				       (unsigned long long)last_name[t], n);
				return 1;
			}
	}
	printf("ok: %u chunks, %llu laps, %llu names re-emitted (%.2f per thread per lap), %llu tracked\n", n,
	       (unsigned long long)laps, (unsigned long long)emitted, (double)emitted / THREADS / (double)laps,
	       (unsigned long long)thread_names_count(names));
	thread_names_free(names);
	return 0;
}
