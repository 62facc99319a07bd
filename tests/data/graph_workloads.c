/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workloads that make each graph heuristic fire on the real kernel
 * (tests/test_graph_real.py compiles and runs this under the tracer).
 *
 *   batch   a server loop on a socketpair that replies to one request and
 *           receives the next back to back (write then read, no blocking in
 *           between, because the client queued several requests): batch splits;
 *           the client's sends that the server reads without blocking are
 *           message edges (the channel was learned from the first, blocking round)
 *   mutex   four threads contend one pthread mutex: lock-like futex, weak edges
 *   poll    an event loop whose poll(…, 0) returns at once: event-loop splits
 *   proxy   a proxy relays between two peer processes A and B: peer-change splits
 *   timer   one thread arms a periodic timerfd, another reads three expirations: timer edges
 *
 * Prints one line "ok <mode>" at the end.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void spin_us(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static int batch(void)
{
	int sv[2], i, round;
	char buf[4];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	if (fork() == 0) {              /* server: read request, work, write reply */
		close(sv[0]);
		for (;;) {
			if (read(sv[1], buf, 4) != 4)
				_exit(0);
			spin_us(50);
			if (write(sv[1], "rep!", 4) != 4)
				_exit(1);
		}
	}
	close(sv[1]);
	for (round = 0; round < 20; round++) {
		usleep(2000);               /* the server blocks in read: a wakeup teaches the channel */
		for (i = 0; i < 8; i++)     /* then a burst: requests queue up */
			if (write(sv[0], "req!", 4) != 4)
				return 1;
		for (i = 0; i < 8; i++)
			if (read(sv[0], buf, 4) != 4)
				return 1;
	}
	close(sv[0]);
	wait(NULL);
	return 0;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *contend(void *arg)
{
	int i;

	for (i = 0; i < 3000; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		spin_us(20);
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

static int mutex(void)
{
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, contend, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return counter != 12000;
}

static int poll_loop(void)
{
	int i;

	for (i = 0; i < 300; i++) {
		poll(NULL, 0, 0);           /* returns at once: one loop iteration */
		spin_us(30);
	}
	return 0;
}

static int peer(int fd)
{
	char buf[4];

	for (;;) {
		if (read(fd, buf, 4) != 4)
			_exit(0);
		if (write(fd, "ack!", 4) != 4)
			_exit(1);
	}
}

static int proxy(void)
{
	int a[2], b[2], i;
	char buf[4];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) || socketpair(AF_UNIX, SOCK_STREAM, 0, b))
		return 1;
	if (fork() == 0) {
		close(a[0]);
		close(b[0]);
		close(b[1]);
		peer(a[1]);
	}
	if (fork() == 0) {
		close(a[0]);
		close(a[1]);
		close(b[0]);
		peer(b[1]);
	}
	close(a[1]);
	close(b[1]);
	for (i = 0; i < 100; i++) {     /* ask A, then B, then A, ... in one run of the proxy */
		if (write(a[0], "to-A", 4) != 4 || read(a[0], buf, 4) != 4)
			return 1;
		if (write(b[0], "to-B", 4) != 4 || read(b[0], buf, 4) != 4)
			return 1;
	}
	close(a[0]);
	close(b[0]);
	wait(NULL);
	wait(NULL);
	return 0;
}

static int timer_fd = -1;

static void *timer_reader(void *arg)
{
	uint64_t n;
	int i;

	for (i = 0; i < 3; i++)
		if (read(timer_fd, &n, sizeof n) != sizeof n)
			return (void *)1;
	return arg;
}

static int timer(void)
{
	struct itimerspec its = { .it_interval = { 0, 5000000 }, .it_value = { 0, 5000000 } };
	pthread_t t;
	void *rc;

	timer_fd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (timer_fd < 0 || pthread_create(&t, NULL, timer_reader, NULL))
		return 1;
	usleep(2000);                   /* the reader blocks first; this thread arms */
	if (timerfd_settime(timer_fd, 0, &its, NULL))
		return 1;
	pthread_join(t, &rc);
	close(timer_fd);
	return rc != NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int rc;

	if (!strcmp(mode, "batch"))
		rc = batch();
	else if (!strcmp(mode, "mutex"))
		rc = mutex();
	else if (!strcmp(mode, "poll"))
		rc = poll_loop();
	else if (!strcmp(mode, "proxy"))
		rc = proxy();
	else if (!strcmp(mode, "timer"))
		rc = timer();
	else {
		fprintf(stderr, "usage: graph_workloads batch|mutex|poll|proxy|timer\n");
		return 2;
	}
	if (!rc)
		printf("ok %s\n", mode);
	return rc;
}
