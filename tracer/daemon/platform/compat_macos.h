/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The few Linux interfaces argusd uses, for the macOS build only (included
 * by argusd.c and argusd_control.c under #ifndef __linux__, so the Linux
 * daemon is untouched):
 *
 *   signalfd     a self-pipe: handlers for the masked signals write a
 *                signalfd_siginfo record; the signals are unblocked again,
 *                because a blocked signal never reaches a handler on macOS
 *   accept4, SOCK_CLOEXEC / SOCK_NONBLOCK on socket()
 *                the flags applied with fcntl; SO_NOSIGPIPE instead of
 *                MSG_NOSIGNAL (argusd also ignores SIGPIPE)
 *   sched_getcpu  -1 (argusd then records CPU 0 for its own records)
 *   syscall(SYS_gettid), syscall(SYS_capget)
 *                the thread id from pthread_threadid_np; capget fails with
 *                ENOSYS (macOS has no capabilities: root is checked first)
 *
 * Why by hand: these are Linux-only system calls with no portable library
 * equivalent; each shim is a handful of lines.
 */
#ifndef ARGUS_COMPAT_MACOS_H
#define ARGUS_COMPAT_MACOS_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* --- capabilities (there are none on macOS) --- */
#define _LINUX_CAPABILITY_VERSION_3 0x20080522
struct __user_cap_header_struct {
	uint32_t version;
	int pid;
};
struct __user_cap_data_struct {
	uint32_t effective, permitted, inheritable;
};

/* --- syscall(): only the two numbers argusd uses --- */
#define SYS_gettid (-1001)
#define SYS_capget (-1002)
static inline long argus_compat_syscall(long nr, ...)
{
	if (nr == SYS_gettid) {
		uint64_t tid = 0;
		pthread_threadid_np(NULL, &tid);
		return (long)tid;
	}
	errno = ENOSYS;
	return -1;
}
#define syscall argus_compat_syscall

/* --- sched_getcpu: no equivalent; the daemon's own records say CPU 0 --- */
static inline int sched_getcpu(void)
{
	return -1;
}

/* --- sockets --- */
#define SOCK_NONBLOCK 0x10000000
#define SOCK_CLOEXEC  0x20000000
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

static inline int argus_compat_sockflags(int fd, int flags)
{
	int one = 1;
	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
	if ((flags & SOCK_CLOEXEC) && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		goto fail;
	if ((flags & SOCK_NONBLOCK) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static inline int argus_compat_socket(int domain, int type, int protocol)
{
	int fd = socket(domain, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC), protocol);
	return argus_compat_sockflags(fd, type);
}
#define socket(d, t, p) argus_compat_socket(d, t, p)

static inline int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	return argus_compat_sockflags(accept(fd, addr, len), flags);
}

/* --- signalfd --- */
#define SFD_NONBLOCK 0x1
#define SFD_CLOEXEC  0x2
struct signalfd_siginfo {
	uint32_t ssi_signo;
	uint8_t pad[124];                /* 128 bytes, like Linux */
};

static int argus_compat_signal_pipe[2] = { -1, -1 };

static inline void argus_compat_on_signal(int signo)
{
	struct signalfd_siginfo si;
	int saved = errno;
	memset(&si, 0, sizeof si);
	si.ssi_signo = (uint32_t)signo;
	/* async-signal-safe; a full pipe drops the signal, like a coalesced one */
	(void)!write(argus_compat_signal_pipe[1], &si, sizeof si);
	errno = saved;
}

static inline int signalfd(int fd, const sigset_t *mask, int flags)
{
	struct sigaction sa;
	if (fd != -1) {
		errno = EINVAL;
		return -1;
	}
	if (pipe(argus_compat_signal_pipe) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		fcntl(argus_compat_signal_pipe[i], F_SETFD, FD_CLOEXEC);
		fcntl(argus_compat_signal_pipe[i], F_SETFL, fcntl(argus_compat_signal_pipe[i], F_GETFL) | O_NONBLOCK);
	}
	(void)flags;                     /* the read end is always non-blocking and close-on-exec */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = argus_compat_on_signal;
	sigemptyset(&sa.sa_mask);
	for (int s = 1; s < NSIG; s++)
		if (sigismember(mask, s) == 1 && sigaction(s, &sa, NULL) < 0)
			return -1;
	if (sigprocmask(SIG_UNBLOCK, mask, NULL) < 0)
		return -1;
	return argus_compat_signal_pipe[0];
}

#endif /* ARGUS_COMPAT_MACOS_H */
