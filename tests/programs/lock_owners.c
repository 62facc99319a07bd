/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Real lock hangs whose holder the kernel (or the lock word) can name, for
 * the ownership tests (tests/test_ownership.py):
 *
 *   mutex      a holder thread takes a default pthread mutex and sleeps; the
 *              main thread blocks on it (glibc owner field beside the word)
 *   pi-mutex   the same with a PTHREAD_PRIO_INHERIT mutex (FUTEX_LOCK_PI:
 *              the word itself holds the owner tid)
 *   robust-mutex  the same with a PTHREAD_MUTEX_ROBUST mutex (owner tid in
 *              the word and in __owner)
 *   condvar    a GIL-like handoff: a "holder" thread signals a condition the
 *              main thread waits on a few times, then computes for a while
 *              without signalling, while the main thread keeps waiting with
 *              a 5 ms timeout (CPython's take_gil shape)
 *   file-lock  the parent takes an fcntl write lock (F_SETLK); a child polls
 *              it with F_SETLK and usleep in between (SQLite's busy handler
 *              shape) until the parent releases it
 *   flock      the same with flock(LOCK_EX | LOCK_NB)
 *   join       the main thread joins a worker that sleeps (pthread_join:
 *              a futex wait on the worker's tid word, its clear_child_tid)
 *
 * Prints one JSON line first: {"pid", "holder_pid", "holder_tid",
 * "waiter_pid", "waiter_tid", "addr", "path"}; exit status 0 when the waiter
 * eventually got what it waited for.
 */
#ifndef _GNU_SOURCE   /* CMake passes -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOLD_MS 800

static pthread_mutex_t lock;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int ready, stop_signals, gil_free;
static pid_t holder_tid;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(pid_t holder_pid, pid_t htid, pid_t waiter_pid, pid_t wtid, const void *addr, const char *path)
{
	printf("{\"pid\": %d, \"holder_pid\": %d, \"holder_tid\": %d, \"waiter_pid\": %d, \"waiter_tid\": %d, "
	       "\"addr\": %lu, \"path\": \"%s\"}\n",
	       (int)getpid(), (int)holder_pid, (int)htid, (int)waiter_pid, (int)wtid, (unsigned long)addr, path);
	fflush(stdout);
}

static void *mutex_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	holder_tid = gettid_();
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	sleep_ms(HOLD_MS);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int run_mutex(int pi, int robust)
{
	pthread_mutexattr_t attr;
	pthread_t th;

	pthread_mutexattr_init(&attr);
	if (pi)
		pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
	if (robust)
		pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&lock, &attr);
	pthread_create(&th, NULL, mutex_holder, NULL);
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	report(getpid(), holder_tid, getpid(), gettid_(), &lock, "");
	pthread_mutex_lock(&lock);      /* blocks until the holder wakes up */
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);
	return 0;
}

/* The holder hands the "GIL" to the waiter a few times, then keeps it. */
static void *gil_holder(void *arg)
{
	double end;
	int i;

	(void)arg;
	holder_tid = gettid_();
	for (i = 0; i < 5; i++) {
		sleep_ms(20);
		pthread_mutex_lock(&cond_lock);
		gil_free = 1;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&cond_lock);
	}
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	end = now_s() + HOLD_MS / 1000.0;
	while (now_s() < end)          /* computes, holding the GIL */
		;
	pthread_mutex_lock(&cond_lock);
	gil_free = 1;
	stop_signals = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&cond_lock);
	return NULL;
}

static void *join_worker(void *arg)
{
	(void)arg;
	holder_tid = gettid_();
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	sleep_ms(HOLD_MS);
	return NULL;
}

static int run_join(void)
{
	pthread_t th;

	pthread_create(&th, NULL, join_worker, NULL);
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	report(getpid(), holder_tid, getpid(), gettid_(), NULL, "");
	return pthread_join(th, NULL) ? 1 : 0;
}

static int run_condvar(void)
{
	pthread_t th;
	int reported = 0;

	pthread_create(&th, NULL, gil_holder, NULL);
	pthread_mutex_lock(&cond_lock);
	while (!stop_signals) {
		struct timespec ts;

		if (!reported && __atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
			report(getpid(), holder_tid, getpid(), gettid_(), &cond, "");
			reported = 1;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 5000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		while (!gil_free)
			if (pthread_cond_timedwait(&cond, &cond_lock, &ts) == ETIMEDOUT)
				break;
		gil_free = 0;
	}
	pthread_mutex_unlock(&cond_lock);
	pthread_join(th, NULL);
	return reported ? 0 : 1;
}

static int try_lock(int fd, int use_flock)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };

	if (use_flock)
		return flock(fd, LOCK_EX | LOCK_NB);
	return fcntl(fd, F_SETLK, &fl);
}

static int unlock(int fd, int use_flock)
{
	struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };

	if (use_flock)
		return flock(fd, LOCK_UN);
	return fcntl(fd, F_SETLK, &fl);
}

static int run_file_lock(int use_flock)
{
	char path[] = "/tmp/argus-lock-XXXXXX";
	int fd = mkstemp(path), sync[2], status, tries = 0;
	pid_t child;
	char c;

	if (fd < 0 || pipe(sync) || try_lock(fd, use_flock)) {
		perror("lock_owners: failed to set up the file lock");
		return 2;
	}
	child = fork();
	if (child == 0) {
		int cfd = open(path, O_RDWR);

		close(sync[0]);
		if (write(sync[1], "r", 1) != 1)
			_exit(3);
		/* busy handler: try, sleep, try again */
		while (try_lock(cfd, use_flock)) {
			if (errno != EAGAIN && errno != EACCES && errno != EWOULDBLOCK)
				_exit(4);
			tries++;
			usleep(20000);
		}
		unlock(cfd, use_flock);
		_exit(tries > 0 ? 0 : 5);
	}
	close(sync[1]);
	if (read(sync[0], &c, 1) != 1)
		return 2;
	report(getpid(), getpid(), child, child, NULL, path);
	sleep_ms(HOLD_MS);
	unlock(fd, use_flock);
	waitpid(child, &status, 0);
	unlink(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 6;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "mutex"))
		return run_mutex(0, 0);
	if (!strcmp(mode, "pi-mutex"))
		return run_mutex(1, 0);
	if (!strcmp(mode, "robust-mutex"))
		return run_mutex(0, 1);
	if (!strcmp(mode, "condvar"))
		return run_condvar();
	if (!strcmp(mode, "file-lock"))
		return run_file_lock(0);
	if (!strcmp(mode, "flock"))
		return run_file_lock(1);
	if (!strcmp(mode, "join"))
		return run_join();
	fprintf(stderr, "usage: argus-lock-owners mutex|pi-mutex|robust-mutex|condvar|file-lock|flock|join\n");
	return 2;
}
