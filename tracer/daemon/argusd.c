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
 *
 * The pieces (argusd.h): argusd_options.c the command line, argusd_control.c
 * the control socket, proc_snapshot.c the /proc snapshot, mappings_writer.c
 * the MAPPING records; this file the life cycle and the drain loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __linux__
#include <linux/capability.h>
#endif
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/signalfd.h>
#endif
#include <sys/stat.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include <time.h>
#include <unistd.h>
#ifndef __linux__
#include "compat_macos.h"   /* macOS build: signalfd, capget shims */
#endif

#include "argusd.h"
#include "proc_snapshot.h"
#include "safe_dir.h"
#include "hang_index.h"
#include "snapshot_writer.h"
#include "urings.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define POLL_MS 100             /* the kernel side only wakes us past a backlog */
#define URINGS_POLL_MS 10       /* tracepoint rings never wake us: drain them this often while any is open */

static struct env env;    /* the command line (argusd_options.c); role files get what they need */
static bool daemonized;   /* log lines get a date once they go to a file */

static void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_msg(const char *fmt, ...)
{
	char when[32] = "", msg[1024];
	struct tm tm;
	time_t t;
	va_list ap;

	if (daemonized) {
		t = time(NULL);
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S ", &tm);
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%sargusd[%d]: ", when, (int)getpid());
	/* Messages quote names others chose (comm, paths): a control byte
	 * (ESC, CR, newline) would forge or rewrite lines in a terminal or a
	 * log reader, so each goes out as \xNN. */
	for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
		if (*c < 0x20 || *c == 0x7f)
			fprintf(stderr, "\\x%02x", *c);
		else
			fputc(*c, stderr);
	}
	fputc('\n', stderr);
	fflush(stderr);
}

/* A uprobe hook skipped (side_source.h): one log line each. */
static void log_line(const char *line)
{
	log_msg("%s", line);
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

static void refresh_after_wrap(struct daemon *d);

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

	if (d->hangs)
		hang_detector_observe(d->hangs, h);
	/* two rows: `status` counts events as the decoder does; an exit that
	 * stands for a NET_IO row (schema v6) one more, as readers rebuild it */
	if (h->type == ARGUS_EV_SWITCH || h->type == ARGUS_EV_SYSCALL)
		argus_rb_add_extra_rows(d->rb, 1 + !!(h->flags & ARGUS_HF_NET_IO_MASK));
	else if (h->type == ARGUS_EV_SYSCALL_EXIT && (h->flags & ARGUS_HF_NET_IO_MASK))
		argus_rb_add_extra_rows(d->rb, 1);

	if (h->type == ARGUS_EV_USER_STACK && d->maps_seen[h->pid % MAPS_SEEN_SLOTS].pid == h->pid)
		d->maps_seen[h->pid % MAPS_SEEN_SLOTS].stack_seq = seq;
	/* The common case, per record: nobody due and no new chunk. */
	if ((!due && seq == d->refresh_seq) || d->refreshing || argus_rb_faulted(d->rb, NULL))
		return;
	d->refreshing = true;
	if (due)
		d->names_emitted += thread_names_name_now(d->names, due, seq, emit_name, &d->ctx);
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

/* The context of the role files (argusd_ctx.h). */
static void ctx_log(void *d, const char *msg)
{
	log_msg("%s", msg);
}

static void ctx_fail(void *d, const char *msg)
{
	report_failure("%s", msg);
}

static int ctx_write(void *d, const void *rec, uint32_t size)
{
	return daemon_write(d, rec, size);
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
		d->names_emitted += thread_names_refresh(d->names, cur, emit_name, &d->ctx);
	refresh_mappings(d, cur, nchunks / 2 ? nchunks / 2 : 1);
	d->refreshing = false;
}

/* Drops are reported twice: in the header (a total for `status`) and as a
 * LOST record, so a reader knows *where* in time the trace has a hole.
 * Switches the kernel never reported are holes too, but not drops: their
 * own header counter and LOST records of their own kind, so "lost" stays
 * what the tracer lost. */
static void write_lost(struct daemon *d, uint64_t count, uint32_t kind)
{
	struct argus_ev_lost rec;

	memset(&rec, 0, sizeof(rec));
	rec.count = count;
	rec.kind = kind;
	fill_header(&rec.h, ARGUS_EV_LOST, sizeof(rec), (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid));
	if (daemon_write(d, &rec, sizeof(rec)))
		argus_rb_add_lost(d->rb, 1);
}

static void account_lost(struct daemon *d)
{
	uint64_t lost = d->ops->lost(d->src), delta;
	uint64_t unreported = d->ops->switches_unreported ? d->ops->switches_unreported(d->src) : 0;

	if (unreported > d->unreported_reported) {
		delta = unreported - d->unreported_reported;
		d->unreported_reported = unreported;
		argus_rb_add_switches_unreported(d->rb, delta);
		write_lost(d, delta, ARGUS_LOST_SWITCHES_UNREPORTED);
	}
	if (lost <= d->lost_reported)
		return;
	delta = lost - d->lost_reported;
	d->lost_reported = lost;
	argus_rb_add_lost(d->rb, delta);
	write_lost(d, delta, ARGUS_LOST_DROPPED);
	log_msg("lost %llu records before they reached the buffer (%s)", (unsigned long long)delta,
		argus_rb_header(d->rb)->disk_full_since_ns ? "disk full: ENOSPC, and no chunk free to reuse; or the "
		"kernel buffer full" : "kernel buffer full, or probes skipped while already running on that CPU");
}

/* A full disk (argus_rb_keep_on_full_disk): one line when it starts, one
 * when it ends; the ring goes on in the chunks it has meanwhile. */
static void note_disk_full(struct daemon *d)
{
	static uint64_t logged;
	struct argus_rb_stats st;
	char when[32] = "?";
	time_t t;
	struct tm tm;

	if (argus_rb_stats(d->rb, &st) || st.disk_full_since_ns == logged)
		return;
	if (st.disk_full_since_ns) {
		t = (time_t)(st.disk_full_since_ns / 1000000000ull);
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		log_msg("disk full (ENOSPC) since %s: no blocks for new chunks of %s; the ring goes on in the %llu "
			"chunks it has (%.1f s of history), the oldest records overwritten first", when, env.buffer,
			(unsigned long long)st.chunks_in_use,
			st.last_ts > st.first_ts ? (double)(st.last_ts - st.first_ts) / 1e9 : 0.0);
	} else {
		log_msg("disk space available again for %s: the ring grows into its free chunks", env.buffer);
	}
	logged = st.disk_full_since_ns;
}

static void tick(struct daemon *d)
{
	struct argus_rb_stats st;

	note_disk_full(d);
	account_lost(d);
	if (argus_rb_stats(d->rb, &st) == 0)
		sample_rate(d, now_ns(), st.records_written + st.extra_rows);
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

/* --detail auto: full detail while a watched thread is out of its loop
 * (detail_tier.h). */
static void escalate(struct daemon *d, uint64_t now)
{
	uint32_t tid = 0;
	uint64_t out_ns = 0;
	bool out = hang_detector_longest_out(d->hangs, now, d->tier.escalate_ns, d->env->escalate_named, &tid, &out_ns);
	bool lean = detail_tier_want_lean(&d->tier, out, now);

	if (lean != d->tier.lean)
		detail_tier_apply(&d->tier, d->ops, d->src, &d->ctx, lean, out ? tid : 0, out_ns, now);
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
		if (d->urings && argus_urings_active(d->urings) && timeout > URINGS_POLL_MS)
			timeout = URINGS_POLL_MS;
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
			argus_side_poll(d->sampler, &d->prod);
		if (d->uprobes)
			argus_side_poll(d->uprobes, &d->prod);
		if (d->urings)
			argus_urings_poll(d->urings, now_ns());
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
		if (d->hangs)
			hang_detector_check(d->hangs, t);
		if (d->hangs && d->tier.mode == ARGUS_DETAIL_MODE_AUTO)
			escalate(d, t);
		if (t >= next_tick) {
			tick(d);
			next_tick = t + TICK_NS;
		}
	}
	return 0;
}

/* Rings of user-space tracepoints register in <socket dir>/urings
 * (`argus run` points its agent there). */
static void open_urings(struct daemon *d)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(env.socket, '/');
	snprintf(dir, sizeof(dir), "%.*s/urings", slash ? (int)(slash - env.socket) : 1, slash ? env.socket : ".");
	int ret = argus_urings_new(dir, &d->ctx, &d->urings);
	if (ret)
		log_msg("failed to open the tracepoint ring directory %s: %s", dir, strerror(-ret));
}

/* The snapshot directory, opened once: its parent (the state directory) and
 * itself each a directory of root's (or ours) that nobody else may write,
 * never a link (safe_dir.c); every snapshot file then goes through the fd.
 * The temporary files of writers no longer alive are removed from both. */
static int open_snapshot_dir(void)
{
	char parent[PATH_MAX], err[PATH_MAX + 128];
	const char *slash = strrchr(env.snapshot_dir, '/');
	int pfd, fd;
	unsigned swept;

	if (!slash || !slash[1]) {
		report_failure("bad snapshot directory %s: give an absolute path to a directory", env.snapshot_dir);
		return -EINVAL;
	}
	snprintf(parent, sizeof(parent), "%.*s", slash == env.snapshot_dir ? 1 : (int)(slash - env.snapshot_dir),
		 env.snapshot_dir);
	pfd = safe_dir_open(parent, false, err, sizeof(err));
	if (pfd < 0) {
		report_failure("%s", err);
		return pfd;
	}
	fd = safe_dir_openat(pfd, slash + 1, true, env.snapshot_dir, err, sizeof(err));
	if (fd < 0) {
		report_failure("%s", err);
		close(pfd);
		return fd;
	}
	swept = snapshot_sweep(pfd, 0) + snapshot_sweep(fd, 0);
	if (swept)
		log_msg("removed %u temporary files left in %s by writers that did not finish", swept, parent);
	close(pfd);
	return fd;
}

/* The ring index (hang_index.c) beside the snapshots, fed by the detector:
 * without it `argus hangs` decodes the buffer, so a failure is one log line. */
static void start_index(struct daemon *d)
{
	char err[256];
	struct stat st;

	if (stat(env.buffer, &st)) {
		log_msg("no ring index: cannot stat %s: %s", env.buffer, strerror(errno));
		return;
	}
	d->index = hang_index_create(env.hangs.dir_fd, env.hangs.dir, (uint64_t)st.st_ino,
				     argus_rb_header(d->rb)->created_ns, err, sizeof(err));
	if (!d->index)
		log_msg("no ring index: %s", err);
	else
		hang_detector_set_index(d->hangs, d->index);
}

/* The hang detector (hang_detector.c), when a snapshot directory is given. */
static int start_hang_detector(struct daemon *d)
{
	unsigned i;
	int fd;

	if (!env.snapshot_dir)
		return 0;
	fd = open_snapshot_dir();
	if (fd < 0)
		return fd;
	env.hangs.dir_fd = fd;   /* open for the daemon's life: writers inherit it */
	env.hangs.dir = env.snapshot_dir;
	env.hangs.ring_path = env.buffer;
	env.hangs.ctx = &d->ctx;
	d->hangs = hang_detector_new(&env.hangs);
	if (!d->hangs) {
		report_failure("failed to allocate the hang detector: out of memory");
		return -ENOMEM;
	}
	start_index(d);
	for (i = 0; i < env.nwatch_pids; i++)
		hang_detector_watch_pid(d->hangs, env.watch_pids[i]);
	for (i = 0; i < env.nwatch_comms; i++)
		hang_detector_watch_comm(d->hangs, env.watch_comms[i]);
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
	struct daemon d = { .listen_fd = -1, .signal_fd = -1, .env = &env };
	char err[512] = "";
	uint64_t nsnap;
	int ret, i, exit_code = 1;

	for (i = 0; i < MAX_CLIENTS; i++)
		d.clients[i].fd = -1;

	d.ctx = (struct argusd_ctx){ .log = ctx_log, .fail = ctx_fail, .write = ctx_write, .arg = &d };
	if (parse_args(argc, argv, &env, &d.ctx))
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
	if (check_socket_dir(&d) || control_listen(&d))
		goto cleanup;
	if (open_buffer(&d))
		goto cleanup;
	if (argus_rb_guard_sigbus(d.rb)) {
		report_failure("failed to guard buffer %s", argus_rb_error(d.rb));
		goto cleanup;
	}
	argus_rb_set_daemon_pid(d.rb, (uint32_t)getpid());
	argus_rb_keep_on_full_disk(d.rb);   /* a full disk shortens the history, never stops the trace */
	argus_rb_producer_init(d.rb, &d.prod, (uint32_t)getpid());
	d.prod_live = true;

	cfg.exclude_tgid = (uint32_t)getpid();
	cfg.kernel_buffer_bytes = env.kernel_buffer;
	cfg.trace_syscalls = !env.no_syscalls;
	cfg.syscall_probes = env.syscall_probes;
	cfg.capture_stacks = !env.no_stacks;
	cfg.lean_programs = env.detail != ARGUS_DETAIL_MODE_FULL;
	cfg.verbose = env.verbose;
	cfg.scope_cgroup_id = env.scope.cgroup_id;
	cfg.scope_netns = env.scope.netns;
	cfg.observe = observe;
	cfg.observe_ctx = &d;
	if (start_hang_detector(&d))
		goto cleanup;
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
						     .scope_cgroup_id = env.scope.cgroup_id, .scope_netns = env.scope.netns,
						     .verbose = env.verbose, .observe = observe, .observe_ctx = &d };

		if (argus_sampler_open(&scfg, &d.sampler, err, sizeof(err)))
			log_msg("no CPU samples: %s", err);
	}
	if (env.uprobe_hooks || !env.no_go_probes) {
		struct argus_uprobes_config ucfg = { .hooks_path = env.uprobe_hooks, .go = !env.no_go_probes,
						     .go_snapshot = env.go_snapshot, .buffer = env.buffer, .scope = &env.scope,
						     .exclude_tgid = (uint32_t)getpid(), .skipped = log_line,
						     .scope_cgroup_id = env.scope.cgroup_id, .scope_netns = env.scope.netns,
						     .notice = log_line,
						     .observe = observe, .observe_ctx = &d };

		if (argus_uprobes_open(&ucfg, &d.uprobes, err, sizeof(err)))
			log_msg("no uprobe hooks or Go probes: %s", err);
	}
	d.tier.mode = env.detail;
	d.tier.escalate_ns = env.escalate_ns;
	if (detail_tier_apply(&d.tier, d.ops, d.src, &d.ctx, env.detail != ARGUS_DETAIL_MODE_FULL, 0, 0, now_ns()) &&
	    env.detail != ARGUS_DETAIL_MODE_FULL) {
		report_failure("failed to start in lean detail (see the log)");
		goto cleanup;
	}
	nsnap = write_snapshot(&d.ctx, &env.scope);
	open_urings(&d);
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
			argus_side_poll(d.sampler, &d.prod);
		log_msg("CPU sampler: %llu samples or stacks lost", (unsigned long long)argus_side_lost(d.sampler));
		argus_side_close(d.sampler);
	}
	if (d.uprobes) {
		if (d.prod_live)
			argus_side_poll(d.uprobes, &d.prod);
		log_msg("uprobe hooks: %llu records lost", (unsigned long long)argus_side_lost(d.uprobes));
		argus_side_close(d.uprobes);
	}
	if (d.urings && d.prod_live) {
		argus_urings_rescan(d.urings);   /* rings of threads that began since the last scan */
		argus_urings_poll(d.urings, now_ns());
	}
	argus_urings_free(d.urings);
	if (d.hangs && d.rb && !argus_rb_faulted(d.rb, NULL)) {
		if (d.prod_live)
			argus_rb_producer_close(&d.prod);
		d.prod_live = false;
		hang_detector_finish(d.hangs, now_ns());
	}
	hang_detector_free(d.hangs);
	hang_index_free(d.index);
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
	free(env.snapshot_dir);
	return exit_code;
}
