/* A request/reply pair of threads whose worker once computes for long: the
 * CPU-bound culprit of the profile tests (docs/profile.md).
 *
 *   argus-cpu-culprit SECONDS [ROUNDS]
 *
 * The main thread sends ROUNDS (default 8) requests over a pipe to the
 * worker, each answered after ~5 ms of computing, 50 ms apart (the
 * baseline waits), then one that the worker answers after SECONDS of
 * computing: the main thread blocks in read() on the reply pipe meanwhile
 * (LongWait), the worker is the LongRunning root cause.  The work is
 * digest_block() -> mix_round() (and a little checksum_block()), built with
 * frame pointers, noinline and exported (.dynsym survives the install's
 * strip) so sampled stacks name them.
 *
 * Prints {"pid": P, "tid": T, "worker_tid": W} first; exits 0 when done.
 */
#ifndef _GNU_SOURCE   /* CMake passes -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int req_pipe[2], rep_pipe[2];
static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t mix_round(uint64_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 64; i++)
		h = (h ^ (v + i)) * 0x100000001b3ull;
	return h;
}

__attribute__((noinline)) uint64_t checksum_block(uint64_t h)
{
	return h + (h >> 7);
}

__attribute__((noinline)) uint64_t digest_block(uint64_t seed)
{
	uint64_t h = seed;
	int i;

	for (i = 0; i < 256; i++)
		h = mix_round(h, (uint64_t)i);
	return checksum_block(h);
}

static void compute_for(double seconds)
{
	double end = now_s() + seconds;
	uint64_t h = 1;

	while (now_s() < end)
		h = digest_block(h);
	sink = h;
}

static void *worker(void *arg)
{
	double seconds;

	(void)arg;
	printf("{\"pid\": %d, \"tid\": %d, \"worker_tid\": %ld}\n", getpid(), getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	while (read(req_pipe[0], &seconds, sizeof(seconds)) == sizeof(seconds)) {
		compute_for(seconds);
		if (write(rep_pipe[1], &seconds, sizeof(seconds)) != sizeof(seconds))
			break;
	}
	return NULL;
}

static void ask(double seconds)
{
	double reply;

	if (write(req_pipe[1], &seconds, sizeof(seconds)) != sizeof(seconds) ||
	    read(rep_pipe[0], &reply, sizeof(reply)) != sizeof(reply)) {
		perror("argus-cpu-culprit");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	int rounds = argc > 2 ? atoi(argv[2]) : 8, i;
	struct timespec gap = { 0, 50 * 1000 * 1000 };
	pthread_t t;

	if (argc < 2 || seconds <= 0 || rounds < 0) {
		fprintf(stderr, "usage: argus-cpu-culprit SECONDS [ROUNDS]\n");
		return 2;
	}
	if (pipe(req_pipe) || pipe(rep_pipe) || pthread_create(&t, NULL, worker, NULL)) {
		perror("argus-cpu-culprit");
		return 1;
	}
	for (i = 0; i < rounds; i++) {
		ask(0.005);
		nanosleep(&gap, NULL);
	}
	ask(seconds);
	close(req_pipe[1]);
	pthread_join(t, NULL);
	return 0;
}
