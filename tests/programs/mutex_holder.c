/* A poll() event loop that shares a pthread mutex with a worker thread, and
 * the worker once holds the mutex across slow work: the commonest lock hang
 * in C servers and GUI programs ("log flush / disk write under the lock").
 *
 *   argus-mutex-holder MODE SECONDS [DELAY]
 *
 * The main thread ticks every 20 ms: poll() on a pipe (its event-loop wait,
 * 20 ms timeout), then takes `state_lock` to update the shared state.  The
 * worker takes the same lock every 50 ms for a short update; after DELAY
 * seconds (default 1) it takes it and, MODE "sleep", sleeps SECONDS in
 * nanosleep (slow I/O under the lock), or, MODE "compute", spins on the CPU
 * SECONDS; then it unlocks and exits.  The main thread blocks in
 * pthread_mutex_lock (futex wait) for the whole time: a plain, default glibc
 * mutex, whose owner's tid sits in the mutex beside the lock word.  MODE
 * "join": a shutdown hang instead: after DELAY seconds the worker computes
 * SECONDS without the lock while the main thread leaves its loop and joins
 * it (pthread_join: a futex wait on the worker's tid word).
 *
 * The worker prints {"pid": P, "tid": T, "worker_tid": W} first (the main
 * thread never waits for it: no wait of the main thread but the mutex's is
 * ended by the worker); exits 0 when both threads are done.
 */
#ifndef _GNU_SOURCE   /* CMake passes -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long state;
static volatile int worker_done;
static pid_t main_tid;

static const char *mode;
static double seconds, delay = 1.0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *worker(void *arg)
{
	double start = now(), t;

	(void)arg;
	printf("{\"pid\": %d, \"tid\": %d, \"worker_tid\": %d}\n", getpid(), (int)main_tid,
	       (int)syscall(SYS_gettid));
	fflush(stdout);
	while (now() - start < delay) {
		sleep_s(0.05);
		pthread_mutex_lock(&state_lock);
		state++;
		pthread_mutex_unlock(&state_lock);
	}
	if (strcmp(mode, "join") == 0) {
		for (t = now() + seconds; now() < t;)
			state++;
		return NULL;
	}
	pthread_mutex_lock(&state_lock);
	if (strcmp(mode, "sleep") == 0) {
		sleep_s(seconds);
	} else {
		for (t = now() + seconds; now() < t;)
			state++;
	}
	pthread_mutex_unlock(&state_lock);
	worker_done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct pollfd pfd;
	pthread_t th;
	int pipefd[2], after = 0;

	if (argc < 3 || (strcmp(argv[1], "sleep") != 0 && strcmp(argv[1], "compute") != 0 &&
			 strcmp(argv[1], "join") != 0)) {
		fprintf(stderr, "usage: %s sleep|compute|join SECONDS [DELAY]\n", argv[0]);
		return 2;
	}
	mode = argv[1];
	seconds = atof(argv[2]);
	if (argc > 3)
		delay = atof(argv[3]);
	if (pipe(pipefd) != 0) {
		perror("failed to create pipe");
		return 1;
	}
	main_tid = (pid_t)syscall(SYS_gettid);
	if (pthread_create(&th, NULL, worker, NULL) != 0) {
		fprintf(stderr, "failed to create worker thread\n");
		return 1;
	}
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	/* join: the loop ends after DELAY (shutdown) and the join waits */
	for (double start = now(); strcmp(mode, "join") == 0 && now() - start < delay + 0.1;)
		poll(&pfd, 1, 20);
	while (strcmp(mode, "join") != 0 && (!worker_done || after++ < 5)) {
		poll(&pfd, 1, 20);
		pthread_mutex_lock(&state_lock);
		state++;
		pthread_mutex_unlock(&state_lock);
	}
	pthread_join(th, NULL);
	return 0;
}
