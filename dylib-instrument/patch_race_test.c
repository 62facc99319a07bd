/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hooks installed and removed while other threads run the hooked function
 * (what the agent does after a dlopen in a threaded program, and when
 * tracing stops).  Threads call race_multi / race_straddle in a tight loop
 * and check each result while the main thread installs and removes the
 * hook ROUNDS times.  A thread that runs a half-written patch, or resumes
 * between two prologue instructions that the patch has just replaced, dies
 * (SIGSEGV/SIGILL) or computes a wrong result: the test fails.
 *
 *   argus-patch-race-test RING_DIR {multi|straddle} ROUNDS THREADS
 * Exit 0 and one line "ok <installed> <refused>" when every call was right.
 */
#include "hook.h"
#include "recorder.h"
#include "reloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long race_multi(long x);
long race_straddle(long x);

static long (*volatile target)(long);
static volatile int stop;
static long wrong;

static void *caller(void *arg)
{
	long calls = 0;
	while (!stop) {
		if (target(calls) != calls + 1)
			__atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
		calls++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[2], "multi") && strcmp(argv[2], "straddle"))) {
		fprintf(stderr, "usage: %s RING_DIR {multi|straddle} ROUNDS THREADS\n", argv[0]);
		return 2;
	}
	target = strcmp(argv[2], "multi") == 0 ? race_multi : race_straddle;
	int rounds = atoi(argv[3]), nthreads = atoi(argv[4]);
	if (argus_recorder_init(argv[1], 0))
		return 2;
	pthread_t t[64];
	nthreads = nthreads > 64 ? 64 : nthreads;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, caller, NULL);

	struct argus_hook_spec spec = {.probe_id = 1, .enter_type = 48, .fn_size = 16};
	long installed = 0, refused = 0;
	int last_err = 0;
	for (int r = 0; r < rounds; r++) {
		struct argus_hook h;
		int err = argus_hook_install((void *)target, &spec, &h);
		if (err) {
			refused++;
			last_err = err;
			continue;
		}
		installed++;
		for (volatile int spin = 0; spin < 2000; spin++)
			;
		if (argus_hook_remove(&h)) {
			fprintf(stderr, "remove failed\n");
			return 1;
		}
	}
	stop = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	argus_recorder_thread_done();
	if (wrong) {
		printf("FAIL %ld wrong results\n", wrong);
		return 1;
	}
	printf("ok %ld %ld%s%s\n", installed, refused, refused ? " " : "", refused ? argus_reloc_strerror(last_err) : "");
	return 0;
}
