/* A busy switching workload for the tracer's record-consistency test
 * (tests/test_record_consistency.py): pairs of threads ping-pong a byte
 * through pipes (every hop a wakeup, a switch and syscalls on both CPUs),
 * threads hand a pthread condition variable back and forth (futex waits and
 * wakes), and sleepers wake from short nanosleeps (hrtimer wakeups in
 * interrupts, which land on whatever the CPU runs then).
 *
 *   argus-switch-storm [SECONDS]     (default 3)
 *
 * Prints {"pid": P} at start and exits 0 after SECONDS.
 */
#ifndef _GNU_SOURCE   /* CMake passes -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PIPE_PAIRS 3
#define COND_PAIRS 2
#define SLEEPERS 3

static volatile int stop;

struct pipe_pair {
	int ab[2], ba[2];
};

static void *pipe_ping(void *arg)
{
	struct pipe_pair *p = arg;
	char c = 'x';

	while (!stop) {
		if (write(p->ab[1], &c, 1) != 1 || read(p->ba[0], &c, 1) != 1)
			break;
	}
	close(p->ab[1]);
	return NULL;
}

static void *pipe_pong(void *arg)
{
	struct pipe_pair *p = arg;
	char c;

	while (read(p->ab[0], &c, 1) == 1)
		if (write(p->ba[1], &c, 1) != 1)
			break;
	close(p->ba[1]);
	return NULL;
}

struct cond_pair {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int turn;
};

struct cond_side {
	struct cond_pair *p;
	int me;
};

static void *cond_player(void *arg)
{
	struct cond_side *s = arg;
	struct cond_pair *p = s->p;

	pthread_mutex_lock(&p->lock);
	while (!stop) {
		while (p->turn != s->me && !stop)
			pthread_cond_wait(&p->cond, &p->lock);
		p->turn = !s->me;
		pthread_cond_signal(&p->cond);
	}
	p->turn = !s->me;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = {0, 50000 + 37000 * (long)(size_t)arg};

	while (!stop)
		nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 3;
	pthread_t th[2 * PIPE_PAIRS + 2 * COND_PAIRS + SLEEPERS];
	struct pipe_pair pipes[PIPE_PAIRS];
	struct cond_pair conds[COND_PAIRS];
	struct cond_side sides[2 * COND_PAIRS];
	int i, n = 0;

	if (seconds <= 0) {
		fprintf(stderr, "usage: argus-switch-storm [SECONDS > 0]\n");
		return 2;
	}
	printf("{\"pid\": %d}\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < PIPE_PAIRS; i++) {
		if (pipe(pipes[i].ab) || pipe(pipes[i].ba)) {
			perror("pipe");
			return 1;
		}
		pthread_create(&th[n++], NULL, pipe_ping, &pipes[i]);
		pthread_create(&th[n++], NULL, pipe_pong, &pipes[i]);
	}
	for (i = 0; i < COND_PAIRS; i++) {
		pthread_mutex_init(&conds[i].lock, NULL);
		pthread_cond_init(&conds[i].cond, NULL);
		conds[i].turn = 0;
		sides[2 * i] = (struct cond_side){&conds[i], 0};
		sides[2 * i + 1] = (struct cond_side){&conds[i], 1};
		pthread_create(&th[n++], NULL, cond_player, &sides[2 * i]);
		pthread_create(&th[n++], NULL, cond_player, &sides[2 * i + 1]);
	}
	for (i = 0; i < SLEEPERS; i++)
		pthread_create(&th[n++], NULL, sleeper, (void *)(size_t)i);
	sleep(seconds);
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
