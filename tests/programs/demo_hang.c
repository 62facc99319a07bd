/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bundled demo hang: a hang that crosses processes, the shape the paper
 * describes (main thread waits on another thread, which waits on a daemon,
 * which is busy for some reason).
 *
 *   demo-app (main thread)     event loop: poll() with a timeout, then a
 *                              synchronous request over a Unix socket, blocking
 *                              in read() for the reply
 *   demo-daemon (main thread)  reads a request, hands it to its helper thread
 *                              through a mutex + condition variable, waits for
 *                              the result, replies
 *   demo-helper (thread)       does the work; on request --hang-at it gets
 *                              stuck for --hang-ms in the way --stuck says:
 *                                run    busy on the CPU        (LongRunning)
 *                                sleep  blocked in a long sleep (LongWait)
 *                                yield  polls a flag with sched_yield (RepeatedYield)
 *
 * Normal requests are answered in well under a millisecond, so the trace holds
 * baselines for the hung request.  The first line on stdout is JSON naming the
 * pids and tids, so a driver knows whom to diagnose.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum stuck_kind { STUCK_RUN, STUCK_SLEEP, STUCK_YIELD };

struct demo_options {
	int requests;
	int hang_at;
	int hang_ms;
	int interval_ms;
	enum stuck_kind stuck;
	const char *app_name;        /* the app's comm (tests: names a program chose) */
};

struct work_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending;     /* request number waiting for the helper, 0 if none */
	int done;        /* result of the last request */
	int quit;
};

static struct work_queue queue = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};
static struct demo_options opts = {
	.requests = 40, .hang_at = 30, .hang_ms = 3000, .interval_ms = 50, .stuck = STUCK_RUN, .app_name = "demo-app",
};
/* The flag a stuck "yield" helper polls; set by a timer thread, never traced by the kernel. */
static atomic_int release_flag;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pid_t gettid_compat(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Move exactly len bytes; a short read or write (peer gone) is an error. */
static int transfer_full(int fd, void *buf, size_t len, bool writing)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	return transfer_full(fd, (void *)buf, len, true);
}

static int read_full(int fd, void *buf, size_t len)
{
	return transfer_full(fd, buf, len, false);
}

static void *release_after_hang(void *arg)
{
	prctl(PR_SET_NAME, "demo-timer");
	usleep((useconds_t)opts.hang_ms * 1000);
	atomic_store(&release_flag, 1);
	return NULL;
}

static void get_stuck(void)
{
	uint64_t until = now_ns() + (uint64_t)opts.hang_ms * 1000000ull;
	pthread_t timer;
	volatile uint64_t sink = 0;

	switch (opts.stuck) {
	case STUCK_RUN:
		while (now_ns() < until)
			for (int i = 0; i < 10000; i++)
				sink += (uint64_t)i * 2654435761u;
		break;
	case STUCK_SLEEP:
		usleep((useconds_t)opts.hang_ms * 1000);
		break;
	case STUCK_YIELD:
		atomic_store(&release_flag, 0);
		pthread_create(&timer, NULL, release_after_hang, NULL);
		while (!atomic_load(&release_flag))
			sched_yield();
		pthread_join(timer, NULL);
		break;
	}
}

static void *helper_main(void *arg)
{
	int report_fd = *(int *)arg;
	char line[32];
	int len;

	prctl(PR_SET_NAME, "demo-helper");
	len = snprintf(line, sizeof(line), "%d\n", (int)gettid_compat());
	if (write_full(report_fd, line, (size_t)len) < 0)
		return NULL;
	close(report_fd);
	for (;;) {
		int request;

		pthread_mutex_lock(&queue.lock);
		while (!queue.pending && !queue.quit)
			pthread_cond_wait(&queue.cond, &queue.lock);
		if (queue.quit) {
			pthread_mutex_unlock(&queue.lock);
			return NULL;
		}
		request = queue.pending;
		pthread_mutex_unlock(&queue.lock);

		if (request == opts.hang_at)
			get_stuck();

		pthread_mutex_lock(&queue.lock);
		queue.pending = 0;
		queue.done = request * 2;
		pthread_cond_broadcast(&queue.cond);
		pthread_mutex_unlock(&queue.lock);
	}
}

static int daemon_main(int sock, int report_fd)
{
	pthread_t helper;
	int request, reply;

	prctl(PR_SET_NAME, "demo-daemon");
	if (pthread_create(&helper, NULL, helper_main, &report_fd) != 0)
		return 1;
	for (;;) {
		if (read_full(sock, &request, sizeof(request)) < 0)
			break;
		pthread_mutex_lock(&queue.lock);
		queue.pending = request;
		pthread_cond_broadcast(&queue.cond);
		while (queue.pending)
			pthread_cond_wait(&queue.cond, &queue.lock);
		reply = queue.done;
		pthread_mutex_unlock(&queue.lock);
		if (write_full(sock, &reply, sizeof(reply)) < 0)
			break;
	}
	pthread_mutex_lock(&queue.lock);
	queue.quit = 1;
	pthread_cond_broadcast(&queue.cond);
	pthread_mutex_unlock(&queue.lock);
	pthread_join(helper, NULL);
	return 0;
}

static int app_main(int sock)
{
	int idle_pipe[2];
	struct pollfd pfd;

	prctl(PR_SET_NAME, opts.app_name);
	if (pipe(idle_pipe) < 0)
		return 1;
	pfd.fd = idle_pipe[0];
	pfd.events = POLLIN;
	for (int request = 1; request <= opts.requests; request++) {
		int reply;

		/* The event loop's idle wait: what a GUI main thread does between events. */
		poll(&pfd, 1, opts.interval_ms);
		if (write_full(sock, &request, sizeof(request)) < 0)
			return 1;
		if (read_full(sock, &reply, sizeof(reply)) < 0)
			return 1;
		if (reply != request * 2)
			return 1;
	}
	return 0;
}

static int parse_options(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(arg, "--help")) {
			printf("usage: argus-demo-hang [--requests N] [--hang-at K] [--hang-ms MS]\n"
			       "                      [--interval-ms MS] [--stuck run|sleep|yield] [--app-name NAME]\n");
			exit(0);
		}
		if (!val) {
			fprintf(stderr, "argus-demo-hang: %s needs a value\n", arg);
			return -1;
		}
		i++;
		if (!strcmp(arg, "--requests"))
			opts.requests = atoi(val);
		else if (!strcmp(arg, "--hang-at"))
			opts.hang_at = atoi(val);
		else if (!strcmp(arg, "--hang-ms"))
			opts.hang_ms = atoi(val);
		else if (!strcmp(arg, "--interval-ms"))
			opts.interval_ms = atoi(val);
		else if (!strcmp(arg, "--app-name"))
			opts.app_name = val;
		else if (!strcmp(arg, "--stuck")) {
			if (!strcmp(val, "run"))
				opts.stuck = STUCK_RUN;
			else if (!strcmp(val, "sleep"))
				opts.stuck = STUCK_SLEEP;
			else if (!strcmp(val, "yield"))
				opts.stuck = STUCK_YIELD;
			else {
				fprintf(stderr, "argus-demo-hang: unknown --stuck %s\n", val);
				return -1;
			}
		} else {
			fprintf(stderr, "argus-demo-hang: unknown option %s\n", arg);
			return -1;
		}
	}
	if (opts.requests < 1 || opts.hang_ms < 0 || opts.interval_ms < 0) {
		fprintf(stderr, "argus-demo-hang: bad option values\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int sv[2], tidpipe[2];
	pid_t daemon_pid;
	int status, app_rc;
	char buf[32] = {0};
	ssize_t n;

	if (parse_options(argc, argv) < 0)
		return 2;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(tidpipe) < 0) {
		perror("argus-demo-hang: socketpair");
		return 1;
	}
	daemon_pid = fork();
	if (daemon_pid < 0) {
		perror("argus-demo-hang: fork");
		return 1;
	}
	if (daemon_pid == 0) {
		close(sv[0]);
		close(tidpipe[0]);
		_exit(daemon_main(sv[1], tidpipe[1]));
	}
	close(sv[1]);
	close(tidpipe[1]);
	n = read(tidpipe[0], buf, sizeof(buf) - 1);
	close(tidpipe[0]);
	if (n <= 0) {
		fprintf(stderr, "argus-demo-hang: daemon did not start\n");
		kill(daemon_pid, SIGKILL);
		return 1;
	}
	printf("{\"app_pid\": %d, \"app_tid\": %d, \"daemon_pid\": %d, \"daemon_tid\": %d, "
	       "\"helper_tid\": %d, \"hang_at\": %d, \"hang_ms\": %d}\n",
	       (int)getpid(), (int)gettid_compat(), (int)daemon_pid, (int)daemon_pid, atoi(buf),
	       opts.hang_at, opts.hang_ms);
	fflush(stdout);

	app_rc = app_main(sv[0]);
	close(sv[0]);
	if (waitpid(daemon_pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		app_rc = app_rc ? app_rc : 1;
	if (app_rc)
		fprintf(stderr, "argus-demo-hang: the request loop failed\n");
	return app_rc;
}
