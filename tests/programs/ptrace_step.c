/*
 * ptrace_step: single-step one thread with ptrace for a while, as a debugger
 * stepping through a spinning loop does (lldb `thread step-inst`).
 *
 *   ptrace_step TID MS
 *
 * Seizes only that thread (PTRACE_SEIZE + PTRACE_INTERRUPT: no SIGSTOP, so
 * the rest of its process keeps running), single-steps it for MS
 * milliseconds (every step is a tracer stop, __TASK_TRACED), detaches, and
 * prints one JSON line {"tid", "steps"}.  Exits 1 with one line on stderr
 * when the thread cannot be traced; stops early when it exits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv)
{
	pid_t tid;
	long deadline, steps = 0;
	int status;

	if (argc != 3) {
		fprintf(stderr, "usage: ptrace_step TID MS\n");
		return 2;
	}
	tid = (pid_t)atoi(argv[1]);
	deadline = now_ms() + atol(argv[2]);
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		fprintf(stderr, "ptrace_step: failed to seize thread %d: %s\n", tid, strerror(errno));
		return 1;
	}
	if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status)) {
		fprintf(stderr, "ptrace_step: thread %d did not stop\n", tid);
		return 1;
	}
	while (now_ms() < deadline) {
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, 0))
			break;
		if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status))
			break;          /* exited */
		steps++;
	}
	ptrace(PTRACE_DETACH, tid, 0, 0);
	printf("{\"tid\": %d, \"steps\": %ld}\n", tid, steps);
	return 0;
}
