/* SPDX-License-Identifier: Apache-2.0 */
/*
 * quiesce.h.  The helper is a raw clone (no atfork handlers of the program
 * run, and exit signal 0: no SIGCHLD reaches the program's handlers or its
 * waitpid(-1)); it only makes system calls.  Protocol over two pipes:
 *   parent: clone, (Yama scope 1: PR_SET_PTRACER child), "go"
 *   child:  PTRACE_SEIZE + PTRACE_INTERRUPT every thread but the patcher
 *           (listing /proc/PID/task again until no new thread shows up),
 *           single-steps any stopped inside (lo, hi) out of it, answers 0
 *           or an error; waits for "done"; detaches (the threads resume);
 *           exits
 *   parent: patches when the answer is 0, "done", reaps the child.
 * A thread stopped in a blocking system call resumes it (the kernel
 * restarts it), as under a debugger's attach; calls that report EINTR on
 * a stop (epoll_wait, ...) may do so once.
 */
#include "quiesce.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__) && defined(__x86_64__)

#define MAX_THREADS 4096
#define MAX_STEPS 64     /* a prologue is a few instructions: more means a loop */
#define MAX_LISTS 8

struct stopped {
	pid_t tid[MAX_THREADS];
	int n;
};

static int sys_read1(int fd, char *c)
{
	long r;
	do
		r = syscall(SYS_read, fd, c, 1);
	while (r < 0 && errno == EINTR);
	return r == 1 ? 0 : -1;
}

static void sys_write1(int fd, char c)
{
	while (syscall(SYS_write, fd, &c, 1) < 0 && errno == EINTR)
		;
}

static int is_stopped(const struct stopped *s, pid_t tid)
{
	for (int i = 0; i < s->n; i++)
		if (s->tid[i] == tid)
			return 1;
	return 0;
}

static int wait_stop(pid_t tid)
{
	int status;
	for (;;) {
		long r = syscall(SYS_wait4, tid, &status, __WALL, NULL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status))
			return -1;   /* the thread is gone */
		return 0;
	}
}

/* Stops every thread of pid listed now and not stopped yet; returns how many
 * were new, or -errno. */
static int stop_listed(pid_t pid, pid_t patcher, struct stopped *s)
{
	char path[32] = "/proc/", digits[12], buf[4096];
	int nd = 0, added = 0;
	do   /* no stdio in the helper */
		digits[nd++] = (char)('0' + pid % 10);
	while (pid /= 10);
	char *p = path + 6;
	while (nd)
		*p++ = digits[--nd];
	memcpy(p, "/task", 6);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);
			if (tid <= 0 || tid == patcher || is_stopped(s, tid))
				continue;
			if (s->n == MAX_THREADS) {
				syscall(SYS_close, fd);
				return -E2BIG;
			}
			if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
				if (errno == ESRCH)
					continue;   /* exited meanwhile */
				int err = -errno;
				syscall(SYS_close, fd);
				return err;
			}
			s->tid[s->n++] = tid;   /* detached at the end whatever happens */
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || wait_stop(tid))
				s->tid[--s->n] = 0;   /* gone: nothing to detach */
			else
				added++;
		}
	}
	syscall(SYS_close, fd);
	return added;
}

static int step_out(pid_t tid, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < MAX_STEPS; i++) {
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, tid, 0, &regs))
			return -errno;
		if (regs.rip <= lo || regs.rip >= hi)
			return 0;
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, 0) || wait_stop(tid))
			return -errno ? -errno : -ESRCH;
	}
	return -EBUSY;
}

static void helper(pid_t pid, pid_t patcher, uint64_t lo, uint64_t hi, int in, int out)
{
	static struct stopped s;   /* the child's own copy of this page: no allocation */
	char c;
	int err = sys_read1(in, &c) ? -EPIPE : 0;
	for (int round = 0; !err && round < MAX_LISTS; round++) {
		int added = stop_listed(pid, patcher, &s);
		if (added < 0)
			err = added;
		else if (added == 0)
			break;
		else if (round == MAX_LISTS - 1)
			err = -EAGAIN;   /* threads keep appearing */
	}
	for (int i = 0; !err && i < s.n; i++)
		err = step_out(s.tid[i], lo, hi);
	sys_write1(out, err ? 1 : 0);
	sys_read1(in, &c);   /* the patch is written (or the parent died) */
	for (int i = 0; i < s.n; i++)
		ptrace(PTRACE_DETACH, s.tid[i], 0, 0);
	syscall(SYS_exit_group, 0);
}

static int thread_count(void)
{
	char buf[512];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')');   /* comm may hold spaces and parentheses */
	for (int field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	return p ? atoi(p + 1) : -1;   /* field 20: num_threads */
}

static int yama_scope(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c - '0';
}

int argus_quiesced_patch(uint64_t lo, uint64_t hi, int (*patch)(void *), void *arg)
{
	if (thread_count() == 1)
		return patch(arg);
	int down[2], up[2];
	if (pipe2(down, O_CLOEXEC))
		return -EBUSY;
	if (pipe2(up, O_CLOEXEC)) {
		close(down[0]);
		close(down[1]);
		return -EBUSY;
	}
	pid_t pid = getpid(), patcher = (pid_t)syscall(SYS_gettid);
	long child = syscall(SYS_clone, 0 /* exit signal 0: no SIGCHLD */, NULL, NULL, NULL, NULL);
	if (child == 0)
		helper(pid, patcher, lo, hi, down[0], up[1]);   /* never returns */
	close(down[0]);
	close(up[1]);
	int err = -EBUSY;
	if (child > 0) {
		int yama = yama_scope() == 1;
		if (yama)
			prctl(PR_SET_PTRACER, child, 0, 0, 0);
		char answer = 1;
		sys_write1(down[1], 'g');
		if (sys_read1(up[0], &answer) == 0 && answer == 0)
			err = patch(arg);
		sys_write1(down[1], 'd');
		while (syscall(SYS_wait4, child, NULL, __WALL, NULL) < 0 && errno == EINTR)
			;
		if (yama)
			prctl(PR_SET_PTRACER, 0, 0, 0, 0);
	}
	close(down[1]);
	close(up[0]);
	return err;
}

#else
int argus_quiesced_patch(uint64_t lo, uint64_t hi, int (*patch)(void *), void *arg)
{
	(void)lo;
	(void)hi;
	return patch(arg);   /* TODO(arm64 Linux, macOS): a thread-stopping helper of their own */
}
#endif
