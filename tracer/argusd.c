// SPDX-License-Identifier: Apache-2.0
/*
 * argusd: the system-wide tracing daemon.
 *
 *   argusd --buffer FILE --size BYTES --socket PATH [--ready-fd N]
 *          [--foreground] [--log FILE] [--fresh] [--kernel-buffer BYTES]
 *          [--no-syscalls] [--stacks | --no-stacks] [--sample-hz HZ] [--verbose]
 *
 * Loads the platform event source (eBPF on Linux), copies its records into
 * the file-backed ring buffer, and answers `status` / `stop` on a root-only
 * Unix socket.  One thread, one poll loop: the kernel source, the control
 * socket and a signalfd are all file descriptors, and a 1 s tick does the
 * bookkeeping (lost records, the events/s window).
 *
 * Start-up order matters for readers of the trace:
 *   control socket (refuses a second daemon before anything is loaded)
 *   -> buffer -> load -> attach -> /proc snapshot -> "ready"
 * The snapshot comes after attach so that every thread is named either by
 * the snapshot or by a FORK/EXEC/THREAD_NAME record; overlap is harmless.
 *
 * Mappings: user stacks are raw addresses.  For every process whose stack
 * reaches the file, the daemon reads /proc/PID/maps after the drain (never
 * inside it) and writes its executable mappings as MAPPING records, again
 * when they change (exec, dlopen), so a symbolizer has them after the process
 * is gone.
 *
 * After a wrap: the ring overwrites the snapshot, the naming records and the
 * MAPPING records first.  Every record written goes past observe(); at each
 * chunk boundary of the daemon's producer, names (thread_names.c) and the
 * mappings of processes with stacks since are re-emitted when their last copy
 * is half a lap old, so any window of the buffer decodes with names and
 * symbols at a cost of about two records per thread (and two mapping sets
 * per process with stacks) per lap.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#ifdef __linux__
#include <linux/capability.h>
#endif
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/signalfd.h>
#endif
#include <sys/socket.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#ifndef __linux__
#include "compat_macos.h"   /* macOS build: signalfd, accept4, capget shims */
#endif

#include "argus_event.h"
#include "argus_rb.h"
#include "platform.h"
#include "thread_names.h"
#include "sampler.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define POLL_MS 100             /* the kernel side only wakes us past a backlog */
#define TICK_NS 1000000000ull
#define RATE_WINDOW_NS 5000000000ull
#define RATE_SAMPLES 8
#define MAX_CLIENTS 8
#define CLIENT_TIMEOUT_NS 5000000000ull
#define CMD_MAX 256

static struct env {
	char *buffer;
	uint64_t size;
	char *socket;
	char *log;
	int ready_fd;
	bool foreground;
	bool fresh;
	uint64_t kernel_buffer;
	bool no_syscalls;
	bool no_stacks;
	bool verbose;
	uint32_t sample_hz;         /* CPU samples per second per CPU (argus_sample.c); 0 = off */
} env = {
	.size = ARGUS_RB_DEFAULT_SIZE,
	.sample_hz = 99,
	.ready_fd = -1,
};

struct rate_sample {
	uint64_t t_ns;
	uint64_t records;
};

/* What was last written about one process's mappings. */
struct maps_seen {
	uint32_t pid;
	uint64_t read_ns;            /* /proc/PID/maps read (at most once a second) */
	uint64_t hash;               /* of the executable lines written */
	uint64_t written_seq;        /* chunk seq the MAPPING records last went into */
	uint64_t stack_seq;          /* chunk seq of pid's latest USER_STACK */
	uint8_t *recs;               /* those MAPPING records, back to back: re-emitted */
	size_t recs_len;             /* after a wrap (refresh_mappings), even once pid is gone */
};

#define MAPS_SEEN_SLOTS 4096     /* a direct-mapped cache: a collision only costs a re-read */
#define MAPS_REREAD_NS 1000000000ull

struct client {
	int fd;
	size_t len;
	uint64_t since_ns;
	char buf[CMD_MAX];
};

struct daemon {
	const struct argus_platform_ops *ops;
	void *src;
	struct argus_rb *rb;
	struct argus_rb_producer prod;
	bool prod_live;
	int listen_fd;
	bool socket_bound;
	int signal_fd;
	struct client clients[MAX_CLIENTS];
	uint64_t start_ns;
	uint64_t lost_reported;
	struct rate_sample samples[RATE_SAMPLES];
	unsigned nsamples, sample_head;
	bool stopping;
	struct maps_seen maps_seen[MAPS_SEEN_SLOTS];
	uint64_t mapping_records;
	struct thread_names *names;  /* names re-emitted after a wrap (thread_names.c) */
	struct argus_sampler *sampler;  /* NULL: no CPU samples */
	uint64_t refresh_seq;        /* producer chunk seq at the last refresh */
	bool refreshing;
	uint64_t names_emitted;
};

static bool daemonized;   /* log lines get a date once they go to a file */

static const char usage[] =
	"usage: argusd --buffer FILE --size BYTES --socket PATH [--ready-fd N] [--foreground]\n"
	"              [--log FILE] [--fresh] [--kernel-buffer BYTES] [--no-syscalls]\n"
	"              [--stacks | --no-stacks] [--sample-hz HZ] [--verbose]\n"
	"\n"
	"System-wide tracing daemon: records scheduler, wakeup, syscall and process events\n"
	"into the ring buffer FILE and answers `status` and `stop` on the Unix socket PATH.\n"
	"\n"
	"  --buffer FILE         ring buffer file; an existing buffer of the same size is\n"
	"                        continued, anything else is created (mode 0600)\n"
	"  --size BYTES          buffer size, sparse (suffixes K, M, G); default 2G\n"
	"  --socket PATH         control socket, root-only (mode 0600)\n"
	"  --ready-fd N          write \"ready\" (or \"error: ...\") to fd N once tracing is live\n"
	"  --foreground          do not daemonize\n"
	"  --log FILE            daemon output (default: argusd.log next to the socket)\n"
	"  --fresh               truncate an existing buffer instead of continuing it\n"
	"  --kernel-buffer BYTES kernel staging buffer (default 64M)\n"
	"  --no-syscalls         leave out syscall enter/exit records\n"
	"  --stacks, --no-stacks user stacks at blocking waits and the mappings to\n"
	"                        symbolize them (default: on)\n"
	"  --sample-hz HZ        CPU samples per second per CPU with stacks (default 99; 0 = off;\n"
	"                        --no-stacks turns them off too)\n"
	"  --verbose             loader diagnostics\n";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void log_msg(const char *fmt, ...)
{
	char when[32] = "";
	struct tm tm;
	time_t t;
	va_list ap;

	if (daemonized) {
		t = time(NULL);
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S ", &tm);
	}
	fprintf(stderr, "%sargusd[%d]: ", when, (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* The one line a failed start reports, both to the log and to `argus start`. */
static void report_failure(const char *fmt, ...)
{
	char msg[512], line[540];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *c = msg; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	log_msg("%s", msg);
	if (env.ready_fd >= 0) {
		n = snprintf(line, sizeof(line), "error: %s\n", msg);
		if (write(env.ready_fd, line, (size_t)n) < 0)
			log_msg("failed to write ready fd %d: %s", env.ready_fd, strerror(errno));
		close(env.ready_fd);
		env.ready_fd = -1;
	}
}

static void report_ready(void)
{
	static const char ready[] = "ready\n";

	if (env.ready_fd < 0)
		return;
	if (write(env.ready_fd, ready, sizeof(ready) - 1) < 0)
		log_msg("failed to write ready fd %d: %s", env.ready_fd, strerror(errno));
	close(env.ready_fd);
	env.ready_fd = -1;
}

static int parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 0:
		break;
	case 'K':
		v <<= 10, end++;
		break;
	case 'M':
		v <<= 20, end++;
		break;
	case 'G':
		v <<= 30, end++;
		break;
	case 'T':
		v <<= 40, end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static char *absolute_path(const char *p)
{
	char cwd[PATH_MAX], *out;

	if (p[0] == '/')
		return strdup(p);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, p) < 0)
		return NULL;
	return out;
}

static char *default_log_path(const char *socket_path)
{
	const char *slash = strrchr(socket_path, '/');
	char *out;

	if (asprintf(&out, "%.*s/argusd.log", (int)(slash - socket_path), socket_path) < 0)
		return NULL;
	return out;
}

enum { OPT_LOG = 256, OPT_FRESH, OPT_KBUF, OPT_NO_SYSCALLS, OPT_STACKS, OPT_NO_STACKS, OPT_SAMPLE_HZ };

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "buffer", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "socket", required_argument, NULL, 'S' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "fresh", no_argument, NULL, OPT_FRESH },
		{ "kernel-buffer", required_argument, NULL, OPT_KBUF },
		{ "no-syscalls", no_argument, NULL, OPT_NO_SYSCALLS },
		{ "stacks", no_argument, NULL, OPT_STACKS },
		{ "no-stacks", no_argument, NULL, OPT_NO_STACKS },
		{ "sample-hz", required_argument, NULL, OPT_SAMPLE_HZ },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *buffer = NULL, *socket_path = NULL, *log = NULL;
	long fd;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "b:s:S:r:fvh", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			buffer = optarg;
			break;
		case 's':
			if (parse_bytes(optarg, &env.size) || env.size == 0) {
				report_failure("bad --size '%s': give bytes, optionally with K, M or G", optarg);
				return -EINVAL;
			}
			break;
		case 'S':
			socket_path = optarg;
			break;
		case 'r':
			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || *end || fd < 0 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) {
				report_failure("bad --ready-fd '%s': not an open file descriptor", optarg);
				return -EINVAL;
			}
			env.ready_fd = (int)fd;
			fcntl(env.ready_fd, F_SETFD, FD_CLOEXEC);
			break;
		case 'f':
			env.foreground = true;
			break;
		case OPT_LOG:
			log = optarg;
			break;
		case OPT_FRESH:
			env.fresh = true;
			break;
		case OPT_KBUF:
			if (parse_bytes(optarg, &env.kernel_buffer)) {
				report_failure("bad --kernel-buffer '%s': give bytes, optionally with K, M or G", optarg);
				return -EINVAL;
			}
			break;
		case OPT_NO_SYSCALLS:
			env.no_syscalls = true;
			break;
		case OPT_STACKS:
			env.no_stacks = false;
			break;
		case OPT_NO_STACKS:
			env.no_stacks = true;
			break;
		case OPT_SAMPLE_HZ:
			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || *end || fd < 0 || fd > 100000) {
				report_failure("bad --sample-hz '%s': give 0 (off) to 100000", optarg);
				return -EINVAL;
			}
			env.sample_hz = (uint32_t)fd;
			break;
		case 'v':
			env.verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		report_failure("unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (!buffer || !socket_path) {
		report_failure("--buffer and --socket are required (see --help)");
		return -EINVAL;
	}
	/* Daemonizing changes to /: resolve relative paths first. */
	env.buffer = absolute_path(buffer);
	env.socket = absolute_path(socket_path);
	env.log = log ? absolute_path(log) : (env.socket ? default_log_path(env.socket) : NULL);
	if (!env.buffer || !env.socket || !env.log) {
		report_failure("failed to resolve paths: %s", strerror(errno ? errno : ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

static bool has_tracing_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	uint64_t eff;

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	eff = data[0].effective | (uint64_t)data[1].effective << 32;
	return (eff >> CAP_BPF & 1) && (eff >> CAP_PERFMON & 1);
}

/* A uid that may own the files the daemon keeps: root or whoever runs it. */
static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* The log is appended to as root next to paths a user may choose: never
 * through a link (O_NOFOLLOW), never a FIFO or another user's file. */
static int open_log(void)
{
	struct stat st;
	int fd = open(env.log, O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		      0600);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !trusted_uid(st.st_uid) || fchmod(fd, 0600) < 0) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* The control socket's directory must be one nobody else can write (or a
 * sticky one): otherwise a link or a fake socket planted there would take
 * root's `status` and `stop`, and the socket could be swapped between bind
 * and the check after it.  `argus start` keeps it in ARGUS_RUN_DIR, which the
 * CLI requires to be private (cli/common.py open_run_dir). */
static int check_socket_dir(void)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(env.socket, '/');
	struct stat st;
	int fd;

	snprintf(dir, sizeof(dir), "%.*s", slash == env.socket ? 1 : (int)(slash - env.socket), env.socket);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		report_failure("failed to open control socket directory %s: %s", dir,
			       errno == ELOOP || errno == ENOTDIR ? "it is a symbolic link or not a directory" :
			       strerror(errno));
		return -1;
	}
	/* Sticky (like /tmp): others cannot rename or remove our socket there. */
	if (fstat(fd, &st) < 0 || !trusted_uid(st.st_uid) || ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
		report_failure("refusing control socket directory %s: it must be root's (or yours) and not "
			       "writable by others unless sticky (owner uid %u, mode %04o)", dir, (unsigned)st.st_uid,
			       (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int daemonize(void)
{
	pid_t pid;
	int fd;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		return -errno;
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	fd = open_log();
	if (fd < 0)
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	daemonized = true;
	if (chdir("/") < 0)
		return -errno;
	return 0;
}

/* Refuses to start when another daemon answers on the path; removes a
 * socket left behind by one that died. */
static int control_listen(struct daemon *d)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old_mask;
	int fd = -1, probe, ret;

	if (strlen(env.socket) >= sizeof(addr.sun_path)) {
		report_failure("failed to create control socket %s: path longer than %zu bytes",
			       env.socket, sizeof(addr.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, env.socket);

	if (lstat(env.socket, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			report_failure("failed to create control socket %s: the path exists and is not a socket",
				       env.socket);
			return -EEXIST;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
			close(probe);
			report_failure("failed to create control socket %s: another argusd is running there",
				       env.socket);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(env.socket);
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		report_failure("failed to create control socket %s: %s", env.socket, strerror(errno));
		goto cleanup;
	}
	/* The mode must be right from the first instant, not fixed afterwards. */
	old_mask = umask(0077);
	ret = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old_mask);
	if (ret < 0) {
		ret = -errno;
		report_failure("failed to bind control socket %s: %s", env.socket, strerror(errno));
		goto cleanup;
	}
	d->socket_bound = true;
	/* bind made it 0600 (umask above) and ours; lstat checks, never a
	 * chmod/chown that would follow a link swapped in since. */
	if (lstat(env.socket, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		ret = -EPERM;
		report_failure("failed to restrict control socket %s: not our 0600 socket after bind", env.socket);
		goto cleanup;
	}
	if (listen(fd, MAX_CLIENTS) < 0) {
		ret = -errno;
		report_failure("failed to listen on control socket %s: %s", env.socket, strerror(errno));
		goto cleanup;
	}
	d->listen_fd = fd;
	return 0;

cleanup:
	if (fd >= 0)
		close(fd);
	return ret;
}

/* A daemon that still owns the buffer: alive, not a zombie, and argusd (the
 * pid may have been reused since it wrote its pid into the header). */
static bool daemon_alive(uint32_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	if (!pid || (kill((pid_t)pid, 0) < 0 && errno != EPERM))
		return false;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return false;
	return strstr(buf, "(argusd)") != NULL;
}

/* A killed daemon closes its socket at once but takes a moment to die
 * (tearing down BPF programs): wait a little before calling it busy. */
static bool daemon_still_alive(uint32_t pid)
{
	int i;

	for (i = 0; i < 60 && daemon_alive(pid); i++)
		usleep(50 * 1000);
	return daemon_alive(pid);
}

/* Continue an existing buffer of the requested size (a restarted daemon
 * extends the same trace); create one otherwise.  A file that is not an
 * Argus buffer is left alone: the path may be a typo for something precious. */
static int open_buffer(struct daemon *d)
{
	struct argus_rb *rb = NULL;
	struct stat st;
	uint32_t owner;
	int ret;

	/* lstat: a link or FIFO at the path goes to argus_rb_open / _create,
	 * which refuse it with the reason (both check the opened file itself). */
	if (!env.fresh && lstat(env.buffer, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_size > 0)) {
		ret = argus_rb_open(env.buffer, 1, &rb);
		if (ret) {
			report_failure("failed to open buffer %s%s", argus_rb_error(rb),
				       ret == -EBADMSG || ret == -ENOTSUP ?
				       " (not an Argus ring buffer? remove it or choose another path)" : "");
			goto cleanup;
		}
		owner = argus_rb_header(rb)->daemon_pid;
		if (owner && owner != (uint32_t)getpid() && daemon_still_alive(owner)) {
			ret = -EBUSY;
			report_failure("failed to open buffer %s: argusd pid %u is writing to it", env.buffer, owner);
			goto cleanup;
		}
		if (argus_rb_header(rb)->file_size == env.size) {
			d->rb = rb;
			log_msg("continuing buffer %s", env.buffer);
			return 0;
		}
		argus_rb_close(rb);
		rb = NULL;
	}
	ret = argus_rb_create(env.buffer, env.size, ARGUS_RB_DEFAULT_CHUNK_SIZE, &rb);
	if (ret) {
		report_failure("failed to create buffer %s", argus_rb_error(rb));
		goto cleanup;
	}
	d->rb = rb;
	return 0;

cleanup:
	argus_rb_close(rb);
	return ret;
}

static void fill_header(struct argus_event_header *h, uint16_t type, uint16_t size, uint32_t pid, uint32_t tid)
{
	int cpu = sched_getcpu();

	h->ts_ns = now_ns();
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	h->cpu = cpu < 0 ? 0 : (uint16_t)cpu;
	h->flags = 0;
}

static void refresh_after_wrap(struct daemon *d);
static int emit_name(void *ctx, struct argus_ev_proc_snapshot *rec);

/* Every record the daemon writes itself, and (platform observe hook) every
 * record the kernel side writes, with the chunk it went into.  Names and
 * mappings written from here (d->refreshing) are observed too, but start
 * nothing more. */
static void observe(void *ctx, const void *rec, uint32_t size)
{
	struct daemon *d = ctx;
	const struct argus_event_header *h = rec;
	uint64_t seq = d->prod.seq;
	uint32_t due = d->names ? thread_names_observe(d->names, rec, size, seq) : 0;

	if (h->type == ARGUS_EV_USER_STACK && d->maps_seen[h->pid % MAPS_SEEN_SLOTS].pid == h->pid)
		d->maps_seen[h->pid % MAPS_SEEN_SLOTS].stack_seq = seq;
	/* The common case, per record: nobody due and no new chunk. */
	if ((!due && seq == d->refresh_seq) || d->refreshing || argus_rb_faulted(d->rb, NULL))
		return;
	d->refreshing = true;
	if (due)
		d->names_emitted += thread_names_name_now(d->names, due, seq, emit_name, d);
	d->refreshing = false;
	if (seq != d->refresh_seq)
		refresh_after_wrap(d);
}

static int daemon_write(struct daemon *d, const void *rec, uint32_t size)
{
	int rc = argus_rb_write(&d->prod, rec, size);

	if (rc == 0)
		observe(d, rec, size);
	return rc;
}

static uint32_t parse_id(const char *s)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

static uint32_t read_ppid(uint32_t pid)
{
	char path[64], buf[512], *p;
	unsigned ppid = 0;
	char state;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and parentheses: the last ')' ends it. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %u", &state, &ppid) != 2)
		return 0;
	return ppid;
}

static void read_comm(uint32_t pid, uint32_t tid, char comm[ARGUS_COMM_LEN])
{
	char path[80], buf[64];
	ssize_t n;
	int fd;

	memset(comm, 0, ARGUS_COMM_LEN);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	n = (ssize_t)strcspn(buf, "\n");
	memcpy(comm, buf, n < ARGUS_COMM_LEN - 1 ? (size_t)n : ARGUS_COMM_LEN - 1);
}

/* Threads that vanish while we walk are simply not in the snapshot. */
static uint64_t write_snapshot(struct daemon *d)
{
	struct argus_ev_proc_snapshot rec;
	struct dirent *pe, *te;
	DIR *proc, *tasks;
	char path[64];
	uint32_t pid, tid, ppid;
	uint64_t n = 0;

	proc = opendir("/proc");
	if (!proc) {
		log_msg("failed to open /proc: %s (no process snapshot)", strerror(errno));
		return 0;
	}
	while ((pe = readdir(proc))) {
		pid = parse_id(pe->d_name);
		if (!pid)
			continue;
		ppid = read_ppid(pid);
		snprintf(path, sizeof(path), "/proc/%u/task", pid);
		tasks = opendir(path);
		if (!tasks)
			continue;
		while ((te = readdir(tasks))) {
			tid = parse_id(te->d_name);
			if (!tid)
				continue;
			memset(&rec, 0, sizeof(rec));
			rec.ppid = ppid;
			rec.is_main_thread = tid == pid;
			read_comm(pid, tid, rec.comm);
			fill_header(&rec.h, ARGUS_EV_PROC_SNAPSHOT, sizeof(rec), pid, tid);
			if (daemon_write(d, &rec, sizeof(rec)) == 0)
				n++;
		}
		closedir(tasks);
	}
	closedir(proc);
	return n;
}

/* "major:minor" of /proc/PID/maps as the kernel's dev_t (major << 20 | minor). */
static uint32_t parse_dev(const char *s)
{
	unsigned major = 0, minor = 0;

	if (sscanf(s, "%x:%x", &major, &minor) != 2)
		return 0;
	return major << 20 | (minor & 0xfffff);
}

/* One executable line of /proc/PID/maps as a MAPPING record; false for
 * lines that are not executable or do not parse. */
static bool parse_mapping(const char *line, struct argus_ev_mapping *rec, uint32_t *size)
{
	unsigned long long start, end, pgoff, inode;
	char perms[8], dev[32];
	int path_at = 0;
	const char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %31s %llu %n", &start, &end, perms, &pgoff, dev, &inode,
		   &path_at) < 6 || perms[2] != 'x')
		return false;
	memset(rec, 0, sizeof(*rec));
	rec->start = start;
	rec->end = end;
	rec->pgoff = pgoff;
	rec->inode = inode;
	rec->dev = parse_dev(dev);
	rec->prot = (perms[0] == 'r' ? ARGUS_MAP_READ : 0) | (perms[1] == 'w' ? ARGUS_MAP_WRITE : 0) |
		    ARGUS_MAP_EXEC;
	path = path_at ? line + path_at : "";
	len = strcspn(path, "\n");
	/* The tail names the file; a path that does not fit keeps it. */
	if (len >= ARGUS_MAPPING_MAX_PATH) {
		path += len - (ARGUS_MAPPING_MAX_PATH - 1);
		len = ARGUS_MAPPING_MAX_PATH - 1;
		rec->prot |= ARGUS_MAP_TRUNCATED;
	}
	memcpy(rec->path, path, len);
	*size = (uint32_t)((offsetof(struct argus_ev_mapping, path) + len + 1 + 7) & ~7ull);
	return true;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

/* Writes the executable mappings of pid unless the same set was written
 * before (refresh_mappings re-emits that one after a wrap); reads
 * /proc/PID/maps at most once a second.  A process that is already gone has
 * no mappings to record (the limitation of reading them from user space,
 * after the fact). */
static void record_mappings(struct daemon *d, uint32_t pid, uint64_t t)
{
	struct maps_seen *seen = &d->maps_seen[pid % MAPS_SEEN_SLOTS];
	struct argus_ev_mapping *recs = NULL, *grown;
	size_t n = 0, cap = 0, i;
	uint32_t *sizes = NULL, *grown_sizes, size;
	uint64_t hash = 0xcbf29ce484222325ull;
	char path[64], line[4096 + 256];
	FILE *f;

	if (seen->pid == pid && t - seen->read_ns < MAPS_REREAD_NS)
		return;
	if (seen->pid != pid) {
		free(seen->recs);
		memset(seen, 0, sizeof(*seen));
	}
	seen->pid = pid;
	seen->read_ns = t;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct argus_ev_mapping rec;

		if (!parse_mapping(line, &rec, &size))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			grown = realloc(recs, cap * sizeof(*recs));
			grown_sizes = grown ? realloc(sizes, cap * sizeof(*sizes)) : NULL;
			if (grown)
				recs = grown;
			if (!grown || !grown_sizes)
				goto out;
			sizes = grown_sizes;
		}
		hash = fnv1a(hash, &rec, size);
		recs[n] = rec;
		sizes[n++] = size;
	}
	if (!n || (hash == seen->hash && seen->recs))
		goto out;
	free(seen->recs);
	seen->recs_len = 0;
	for (i = 0; i < n; i++)
		seen->recs_len += sizes[i];
	seen->recs = malloc(seen->recs_len);
	if (!seen->recs)
		seen->recs_len = 0;
	for (i = 0, size = 0; i < n; i++) {
		fill_header(&recs[i].h, ARGUS_EV_MAPPING, (uint16_t)sizes[i], pid, pid);
		if (seen->recs) {
			memcpy(seen->recs + size, &recs[i], sizes[i]);
			size += sizes[i];
		}
		if (daemon_write(d, &recs[i], sizes[i]) == 0)
			d->mapping_records++;
	}
	seen->hash = hash;
	seen->written_seq = d->prod.seq;
out:
	fclose(f);
	free(recs);
	free(sizes);
}

/* Re-writes the MAPPING records of every process with stacks since its
 * mappings went out half a lap ago (the rule of thread_names.c), from the
 * copy kept: also for a process that has exited since. */
static void refresh_mappings(struct daemon *d, uint64_t cur, uint64_t half)
{
	for (size_t k = 0; k < MAPS_SEEN_SLOTS; k++) {
		struct maps_seen *seen = &d->maps_seen[k];
		struct argus_event_header h;

		if (!seen->recs || seen->stack_seq <= seen->written_seq || cur - seen->written_seq < half)
			continue;
		for (size_t off = 0; off + sizeof(h) <= seen->recs_len; off += h.size) {
			memcpy(&h, seen->recs + off, sizeof(h));
			if (h.size < sizeof(h) || h.size > seen->recs_len - off)
				break;
			fill_header((struct argus_event_header *)(seen->recs + off), ARGUS_EV_MAPPING, h.size,
				    seen->pid, seen->pid);
			if (daemon_write(d, seen->recs + off, h.size) == 0)
				d->mapping_records++;
		}
		seen->written_seq = cur;
	}
}

static int emit_name(void *ctx, struct argus_ev_proc_snapshot *rec)
{
	struct daemon *d = ctx;
	uint32_t pid = rec->h.pid, tid = rec->h.tid;

	if (!rec->comm[0])
		read_comm(pid, tid, rec->comm);
	if (!rec->comm[0])
		return -ENOENT;             /* gone, and never named: nothing to say */
	if (!rec->ppid && rec->is_main_thread)
		rec->ppid = read_ppid(pid);
	fill_header(&rec->h, ARGUS_EV_PROC_SNAPSHOT, sizeof(*rec), pid, tid);
	return daemon_write(d, rec, sizeof(*rec));
}

/* At a chunk boundary of our producer (observe): names and mappings whose
 * last copy the ring will overwrite before the records that need them. */
static void refresh_after_wrap(struct daemon *d)
{
	uint32_t nchunks = argus_rb_header(d->rb)->nchunks;
	uint64_t cur = d->prod.seq;

	d->refresh_seq = cur;
	if (d->prod.chunk_index == UINT32_MAX)
		return;
	d->refreshing = true;
	if (d->names)
		d->names_emitted += thread_names_refresh(d->names, cur, emit_name, d);
	refresh_mappings(d, cur, nchunks / 2 ? nchunks / 2 : 1);
	d->refreshing = false;
}

/* Bounded work per loop iteration: the drain comes first. */
static void record_stack_mappings(struct daemon *d)
{
	uint32_t pids[32];
	size_t n, i;
	uint64_t t;

	if (!d->ops->stack_pids)
		return;
	n = d->ops->stack_pids(d->src, pids, sizeof(pids) / sizeof(pids[0]));
	t = now_ns();
	for (i = 0; i < n; i++)
		record_mappings(d, pids[i], t);
	n = d->sampler ? argus_sampler_stack_pids(d->sampler, pids, sizeof(pids) / sizeof(pids[0])) : 0;
	for (i = 0; i < n; i++)
		record_mappings(d, pids[i], t);
}

/* Drops are reported twice: in the header (a total for `status`) and as a
 * LOST record, so a reader knows *where* in time the trace has a hole. */
static void account_lost(struct daemon *d)
{
	struct argus_ev_lost rec;
	uint64_t lost = d->ops->lost(d->src), delta;

	if (lost <= d->lost_reported)
		return;
	delta = lost - d->lost_reported;
	d->lost_reported = lost;
	argus_rb_add_lost(d->rb, delta);
	memset(&rec, 0, sizeof(rec));
	rec.count = delta;
	fill_header(&rec.h, ARGUS_EV_LOST, sizeof(rec), (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid));
	if (daemon_write(d, &rec, sizeof(rec)))
		argus_rb_add_lost(d->rb, 1);
	log_msg("lost %llu records before they reached the buffer (kernel buffer full, or probes "
		"skipped while already running on that CPU)", (unsigned long long)delta);
}

static void sample_rate(struct daemon *d, uint64_t t, uint64_t records)
{
	d->samples[d->sample_head] = (struct rate_sample){ t, records };
	d->sample_head = (d->sample_head + 1) % RATE_SAMPLES;
	if (d->nsamples < RATE_SAMPLES)
		d->nsamples++;
}

/* Rate against the oldest sample that is at most ~5 s old. */
static double events_per_s(struct daemon *d, uint64_t t, uint64_t records)
{
	const struct rate_sample *best = NULL;
	unsigned i;

	for (i = 0; i < d->nsamples; i++) {
		const struct rate_sample *s = &d->samples[i];

		if (t - s->t_ns > RATE_WINDOW_NS + TICK_NS / 2)
			continue;
		if (!best || s->t_ns < best->t_ns)
			best = s;
	}
	if (!best || t - best->t_ns < TICK_NS / 10 || records < best->records)
		return 0.0;
	return (double)(records - best->records) * 1e9 / (double)(t - best->t_ns);
}

static void tick(struct daemon *d)
{
	struct argus_rb_stats st;

	account_lost(d);
	if (argus_rb_stats(d->rb, &st) == 0)
		sample_rate(d, now_ns(), st.records_written);
}

static size_t json_string(char *out, size_t n, const char *s)
{
	size_t o = 0;

	for (; *s && o + 7 < n; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = c;
		} else if (c < 0x20) {
			o += snprintf(out + o, n - o, "\\u%04x", c);
		} else {
			out[o++] = c;
		}
	}
	out[o] = 0;
	return o;
}

static void format_status(struct daemon *d, char *out, size_t n)
{
	struct argus_rb_stats st;
	char buffer[PATH_MAX * 2];
	uint64_t t = now_ns();

	memset(&st, 0, sizeof(st));
	argus_rb_stats(d->rb, &st);
	json_string(buffer, sizeof(buffer), env.buffer);
	snprintf(out, n,
		 "{\"pid\":%d,\"buffer\":\"%s\",\"events\":%llu,\"bytes\":%llu,\"lost\":%llu,"
		 "\"overwritten\":%llu,\"events_per_s\":%.1f,\"bytes_per_event\":%.2f,\"fill\":%.4f,"
		 "\"uptime_s\":%.1f,\"size\":%llu,\"platform\":\"%s\"}\n",
		 (int)getpid(), buffer, (unsigned long long)st.records_written,
		 (unsigned long long)st.bytes_written, (unsigned long long)st.records_lost,
		 (unsigned long long)st.records_overwritten, events_per_s(d, t, st.records_written),
		 st.records_written ? (double)st.bytes_written / (double)st.records_written : 0.0,
		 st.nchunks ? (double)st.chunks_in_use / (double)st.nchunks : 0.0,
		 (double)(t - d->start_ns) / 1e9, (unsigned long long)st.file_size, d->ops->name);
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->len = 0;
}

static void client_reply(struct client *c, const char *text)
{
	/* Replies are one short line into an empty socket buffer: a client that
	 * does not read it loses it, the daemon never blocks on it. */
	if (send(c->fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_msg("failed to answer control client: %s", strerror(errno));
}

static void handle_command(struct daemon *d, struct client *c)
{
	char reply[PATH_MAX * 2 + 512];
	char *cmd = c->buf, *end;

	c->buf[c->len < CMD_MAX ? c->len : CMD_MAX - 1] = 0;
	cmd[strcspn(cmd, "\r\n")] = 0;
	while (isspace((unsigned char)*cmd))
		cmd++;
	end = cmd + strlen(cmd);
	while (end > cmd && isspace((unsigned char)end[-1]))
		*--end = 0;

	if (!strcmp(cmd, "status")) {
		format_status(d, reply, sizeof(reply));
	} else if (!strcmp(cmd, "stop")) {
		snprintf(reply, sizeof(reply), "ok\n");
		d->stopping = true;
		log_msg("stop requested on the control socket");
	} else {
		char shown[64];

		json_string(shown, sizeof(shown), cmd);
		snprintf(reply, sizeof(reply), "error: unknown command '%s' (commands: status, stop)\n", shown);
	}
	client_reply(c, reply);
	client_close(c);
}

static void accept_clients(struct daemon *d)
{
	struct client *slot;
	int fd, i;

	for (;;) {
		fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		slot = NULL;
		for (i = 0; i < MAX_CLIENTS; i++)
			if (d->clients[i].fd < 0) {
				slot = &d->clients[i];
				break;
			}
		if (!slot) {
			send(fd, "error: busy\n", 12, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		slot->fd = fd;
		slot->len = 0;
		slot->since_ns = now_ns();
	}
}

static void read_client(struct daemon *d, struct client *c)
{
	ssize_t n;

	n = recv(c->fd, c->buf + c->len, CMD_MAX - 1 - c->len, 0);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			client_close(c);
		return;
	}
	c->len += (size_t)n;
	/* A command is one line; EOF or a full buffer also end it. */
	if (n == 0 || memchr(c->buf, '\n', c->len) || c->len >= CMD_MAX - 1) {
		if (c->len)
			handle_command(d, c);
		else
			client_close(c);
	}
}

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			log_msg("stopping on signal %d", (int)si.ssi_signo);
			d->stopping = true;
		}
	}
}

/* The buffer file was truncated under us (SIGBUS, argus_rb_guard_sigbus):
 * say so once and stop; later writes went to memory, not the file. */
static bool buffer_faulted(struct daemon *d)
{
	uint64_t off;

	if (!argus_rb_faulted(d->rb, &off))
		return false;
	log_msg("buffer %s was truncated under the daemon (SIGBUS at offset %llu): stopping; the records "
		"still in the file are kept", env.buffer, (unsigned long long)off);
	return true;
}

static int run_loop(struct daemon *d)
{
	struct pollfd pfd[3 + MAX_CLIENTS];
	int src_fd = d->ops->fd(d->src);
	uint64_t next_tick = now_ns() + TICK_NS, t;
	int n, i, ret, timeout;

	while (!d->stopping) {
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = d->signal_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d->listen_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = src_fd, .events = POLLIN };
		for (i = 0; i < MAX_CLIENTS; i++)
			pfd[n++] = (struct pollfd){ .fd = d->clients[i].fd, .events = POLLIN };
		t = now_ns();
		timeout = next_tick > t ? (int)((next_tick - t) / 1000000) : 0;
		if (timeout > POLL_MS)
			timeout = POLL_MS;
		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			ret = -errno;
			log_msg("failed to poll: %s", strerror(-ret));
			return ret;
		}
		ret = d->ops->poll(d->src, &d->prod, 0);
		if (ret < 0 && ret != -EINTR) {
			log_msg("failed to drain kernel events: %s", strerror(-ret));
			return ret;
		}
		if (d->sampler)
			argus_sampler_poll(d->sampler, &d->prod);
		if (buffer_faulted(d))
			return -EIO;
		record_stack_mappings(d);
		if (pfd[0].revents)
			handle_signals(d);
		if (pfd[1].revents)
			accept_clients(d);
		t = now_ns();
		for (i = 0; i < MAX_CLIENTS; i++) {
			struct client *c = &d->clients[i];

			if (c->fd < 0)
				continue;
			if (pfd[3 + i].fd == c->fd && pfd[3 + i].revents)
				read_client(d, c);
			else if (t - c->since_ns > CLIENT_TIMEOUT_NS)
				client_close(c);
		}
		if (t >= next_tick) {
			tick(d);
			next_tick = t + TICK_NS;
		}
	}
	return 0;
}

static int setup_signals(struct daemon *d)
{
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	d->signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	return d->signal_fd < 0 ? -errno : 0;
}

int main(int argc, char **argv)
{
	struct argus_tracer_config cfg = {};
	struct daemon d = { .listen_fd = -1, .signal_fd = -1 };
	char err[512] = "";
	uint64_t nsnap;
	int ret, i, exit_code = 1;

	for (i = 0; i < MAX_CLIENTS; i++)
		d.clients[i].fd = -1;

	if (parse_args(argc, argv))
		return 2;
	if (!has_tracing_privileges()) {
		report_failure("tracing needs root (or CAP_BPF and CAP_PERFMON)");
		return 1;
	}
	d.ops = argus_platform_native();
	if (!d.ops) {
		report_failure("no kernel event source for this system");
		return 1;
	}
	if (!env.foreground) {
		ret = daemonize();
		if (ret) {
			report_failure("failed to daemonize: %s", strerror(-ret));
			return 1;
		}
	}
	ret = setup_signals(&d);
	if (ret) {
		report_failure("failed to set up signals: %s", strerror(-ret));
		goto cleanup;
	}
	if (check_socket_dir() || control_listen(&d))
		goto cleanup;
	if (open_buffer(&d))
		goto cleanup;
	if (argus_rb_guard_sigbus(d.rb)) {
		report_failure("failed to guard buffer %s", argus_rb_error(d.rb));
		goto cleanup;
	}
	argus_rb_set_daemon_pid(d.rb, (uint32_t)getpid());
	argus_rb_producer_init(d.rb, &d.prod, (uint32_t)getpid());
	d.prod_live = true;

	cfg.exclude_tgid = (uint32_t)getpid();
	cfg.kernel_buffer_bytes = env.kernel_buffer;
	cfg.trace_syscalls = !env.no_syscalls;
	cfg.capture_stacks = !env.no_stacks;
	cfg.verbose = env.verbose;
	cfg.observe = observe;
	cfg.observe_ctx = &d;
	d.names = thread_names_new(argus_rb_header(d.rb)->nchunks);
	if (!d.names)
		log_msg("out of memory for the name table: names may be missing after the buffer wraps");
	ret = d.ops->open(&cfg, &d.src, err, sizeof(err));
	if (ret) {
		report_failure("%s", err[0] ? err : strerror(-ret));
		goto cleanup;
	}
	ret = d.ops->start(d.src, err, sizeof(err));
	if (ret) {
		report_failure("%s", err[0] ? err : strerror(-ret));
		goto cleanup;
	}
	if (env.sample_hz && !env.no_stacks) {   /* samples without stacks explain nothing */
		struct argus_sampler_config scfg = { .freq_hz = env.sample_hz, .exclude_tgid = (uint32_t)getpid(),
						     .verbose = env.verbose, .observe = observe, .observe_ctx = &d };

		if (argus_sampler_open(&scfg, &d.sampler, err, sizeof(err)))
			log_msg("no CPU samples: %s", err);
	}
	nsnap = write_snapshot(&d);
	d.start_ns = now_ns();
	tick(&d);
	log_msg("tracing into %s (%llu MiB, %s), %llu threads in the snapshot, control socket %s",
		env.buffer, (unsigned long long)(env.size >> 20), d.ops->name, (unsigned long long)nsnap,
		env.socket);
	report_ready();

	exit_code = run_loop(&d) ? 1 : 0;

cleanup:
	if (d.src) {
		d.ops->stop(d.src);
		/* Records produced before detach are part of the trace. */
		if (d.prod_live) {
			d.ops->poll(d.src, &d.prod, 0);
			account_lost(&d);
		}
		d.ops->close(d.src);
	}
	if (d.sampler) {
		if (d.prod_live)
			argus_sampler_poll(d.sampler, &d.prod);
		log_msg("CPU sampler: %llu samples or stacks lost", (unsigned long long)argus_sampler_lost(d.sampler));
		argus_sampler_close(d.sampler);
	}
	for (i = 0; i < MAX_CLIENTS; i++)
		client_close(&d.clients[i]);
	if (d.prod_live)
		argus_rb_producer_close(&d.prod);
	if (d.rb) {
		argus_rb_set_daemon_pid(d.rb, 0);
		argus_rb_close(d.rb);
	}
	if (d.listen_fd >= 0)
		close(d.listen_fd);
	thread_names_free(d.names);
	for (i = 0; i < MAPS_SEEN_SLOTS; i++)
		free(d.maps_seen[i].recs);
	/* Last: `argus stop` waits for the socket to disappear. */
	if (d.socket_bound)
		unlink(env.socket);
	if (d.signal_fd >= 0)
		close(d.signal_fd);
	if (exit_code == 0)
		log_msg("stopped; %llu thread names re-emitted for the wrap-around, %llu MAPPING records written",
			(unsigned long long)d.names_emitted, (unsigned long long)d.mapping_records);
	free(env.buffer);
	free(env.socket);
	free(env.log);
	return exit_code;
}
