/* A producer hands ROUNDS items to a consumer through a pthread condition
 * variable, in lock step, so that every round has each record kind of the
 * cond hooks (dylib-instrument/hooks/pthread.json) with no timing assumption:
 *
 *   argus-cond-handoff [ROUNDS]     (default 20)
 *
 * Consumer, each round: take `lock`, set `waiting`, broadcast `ack_cond`,
 * then wait on `item_cond` until `ready` (odd rounds with
 * pthread_cond_timedwait and a 60 s deadline, even rounds with
 * pthread_cond_wait).  It sets `waiting` while it holds the lock and the
 * wait releases the lock atomically, so it always waits (ready is 0 when it
 * checks) and the producer, which needs the lock to see `waiting`, signals
 * only once the consumer is inside the wait.
 * Producer, each round: take `lock`, wait on `ack_cond` until `waiting`,
 * set `ready`, pthread_cond_signal(`item_cond`), unlock.
 * So per round: the consumer's wait entry (its mutex released) precedes the
 * producer's signal, which precedes the wait's return.
 *
 * Prints {"pid", "consumer_tid", "producer_tid", "lock", "item_cond",
 * "ack_cond", "rounds"} (addresses as numbers) when both are done; exits 0.
 */
#ifndef _GNU_SOURCE   /* CMake passes -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t item_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t ack_cond = PTHREAD_COND_INITIALIZER;
static int waiting, ready, rounds = 20;
static pid_t consumer_tid;

static void *consumer(void *arg)
{
	(void)arg;
	consumer_tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock);
		waiting = 1;
		pthread_cond_broadcast(&ack_cond);
		while (!ready) {
			if (i % 2) {
				struct timespec deadline;
				clock_gettime(CLOCK_REALTIME, &deadline);
				deadline.tv_sec += 60;
				pthread_cond_timedwait(&item_cond, &lock, &deadline);
			} else {
				pthread_cond_wait(&item_cond, &lock);
			}
		}
		ready = 0;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (rounds < 1 || rounds > 100000) {
		fprintf(stderr, "usage: argus-cond-handoff [ROUNDS 1-100000]\n");
		return 2;
	}
	if (pthread_create(&t, NULL, consumer, NULL) != 0) {
		fprintf(stderr, "argus-cond-handoff: failed to create the consumer thread\n");
		return 1;
	}
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock);
		while (!waiting)
			pthread_cond_wait(&ack_cond, &lock);
		waiting = 0;
		ready = 1;
		pthread_cond_signal(&item_cond);
		pthread_mutex_unlock(&lock);
	}
	pthread_join(t, NULL);
	printf("{\"pid\": %d, \"consumer_tid\": %d, \"producer_tid\": %d, \"lock\": %lu, \"item_cond\": %lu, "
	       "\"ack_cond\": %lu, \"rounds\": %d}\n",
	       getpid(), consumer_tid, (int)syscall(SYS_gettid), (unsigned long)&lock, (unsigned long)&item_cond,
	       (unsigned long)&ack_cond, rounds);
	return 0;
}
