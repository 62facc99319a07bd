/*
 * flag_handshake: two threads synchronized by a plain shared-memory flag, the
 * ad hoc synchronization the kernel never sees (Argus paper §3.2).
 *
 *   flag_handshake START_MS WORK_MS[,WORK_MS...] [LINGER_MS] [gated]
 *
 * Prints one JSON line (pid, tids, the flag's address), sleeps START_MS (time
 * to attach bp_watch), then for each round r the worker runs on the CPU for
 * WORK_MS and stores r+1 into `handshake_flag`, while the main thread polls it
 * with sched_yield + usleep(1 ms) (a RepeatedYield hang when WORK_MS is
 * long).  After the last round the main thread keeps counting
 * `handshake_progress` every 10 ms for LINGER_MS (default 0) while the worker
 * idles; both wait in poll() like an idle event loop (so the hang ends), so a test can see both threads alive and the process
 * still making progress after a debugger left it; SIGUSR1 ends the linger.
 * With "gated" the worker waits for a SIGUSR2 before each round's work, so a
 * test decides when the poller's spin ends.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile int handshake_flag;
volatile unsigned long handshake_progress;

static long work_ms[64];
static int nrounds;
static long start_ms;
static int gated;
static volatile pid_t worker_tid;
static volatile int stop_worker;
static volatile sig_atomic_t stop_linger;

static void on_usr1(int sig)
{
	stop_linger = 1;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

void *handshake_worker(void *arg)
{
	volatile unsigned long spin = 0;

	worker_tid = (pid_t)syscall(SYS_gettid);
	sleep_ms(start_ms);
	for (int r = 0; r < nrounds; r++) {
		long end;

		if (gated) {
			sigset_t set;
			int sig;

			sigemptyset(&set);
			sigaddset(&set, SIGUSR2);
			sigwait(&set, &sig);
		}
		end = now_ms() + work_ms[r];
		while (now_ms() < end)
			spin++;
		handshake_flag = r + 1;
	}
	while (!stop_worker)	/* stays alive, idle like an event loop, until main is done */
		poll(NULL, 0, 10);
	return NULL;
}

/* One read of the flag; a real call, so an instruction trace of the poll loop
 * (argus lldb-script) sees a function entry inside the application. */
__attribute__((noinline)) int handshake_check(int want)
{
	return handshake_flag >= want;
}

/* The poll loop (RepeatedYield). */
void handshake_wait(int want)
{
	while (!handshake_check(want)) {
		sched_yield();
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	pthread_t t;
	long linger_ms = 0;
	char *s, *tok;

	if (argc < 3) {
		fprintf(stderr, "usage: %s START_MS WORK_MS[,WORK_MS...] [LINGER_MS]\n", argv[0]);
		return 2;
	}
	start_ms = atol(argv[1]);
	s = strdup(argv[2]);
	for (tok = strtok(s, ","); tok && nrounds < 64; tok = strtok(NULL, ","))
		work_ms[nrounds++] = atol(tok);
	if (argc > 3)
		linger_ms = atol(argv[3]);
	if (argc > 4 && strcmp(argv[4], "gated") == 0) {
		sigset_t set;

		gated = 1;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &set, NULL);	/* inherited: only sigwait takes it */
	}

	signal(SIGUSR1, on_usr1);
	if (pthread_create(&t, NULL, handshake_worker, NULL) != 0) {
		perror("failed to create worker");
		return 1;
	}
	while (!worker_tid)
		sched_yield();
	printf("{\"pid\": %d, \"main_tid\": %d, \"worker_tid\": %d, \"flag_addr\": %lu, \"rounds\": %d}\n",
	       (int)getpid(), (int)getpid(), (int)worker_tid, (unsigned long)&handshake_flag, nrounds);
	fflush(stdout);

	for (int r = 0; r < nrounds; r++)
		handshake_wait(r + 1);
	for (long end = now_ms() + linger_ms; now_ms() < end && !stop_linger;) {
		handshake_progress++;
		poll(NULL, 0, 10);	/* an idle event loop: the hang is over */
	}
	stop_worker = 1;
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
