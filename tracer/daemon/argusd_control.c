// SPDX-License-Identifier: Apache-2.0
/*
 * argusd's control socket: root-only, in a directory nobody else can write,
 * one line in (`status` or `stop`), one line out, then the connection closes.
 * At most MAX_CLIENTS at once; a client silent for CLIENT_TIMEOUT_NS is
 * dropped, a reply the client does not read is lost: the daemon never blocks.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#ifndef __linux__
#include "compat_macos.h"   /* macOS build: accept4, SOCK_* flags */
#endif

#include "argusd.h"

#define RATE_WINDOW_NS 5000000000ull

/* The control socket's directory must be one nobody else can write (or a
 * sticky one): otherwise a link or a fake socket planted there would take
 * root's `status` and `stop`, and the socket could be swapped between bind
 * and the check after it.  `argus start` keeps it in ARGUS_RUN_DIR, which the
 * CLI requires to be private (cli/common.py open_run_dir). */
int check_socket_dir(struct daemon *d)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(d->env->socket, '/');
	struct stat st;
	int fd;

	snprintf(dir, sizeof(dir), "%.*s", slash == d->env->socket ? 1 : (int)(slash - d->env->socket), d->env->socket);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		argusd_fail(&d->ctx, "failed to open control socket directory %s: %s", dir,
			       errno == ELOOP || errno == ENOTDIR ? "it is a symbolic link or not a directory" :
			       strerror(errno));
		return -1;
	}
	/* Sticky (like /tmp): others cannot rename or remove our socket there. */
	if (fstat(fd, &st) < 0 || !trusted_uid(st.st_uid) || ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
		argusd_fail(&d->ctx, "refusing control socket directory %s: it must be root's (or yours) and not "
			       "writable by others unless sticky (owner uid %u, mode %04o)", dir, (unsigned)st.st_uid,
			       (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Refuses to start when another daemon answers on the path; removes a
 * socket left behind by one that died. */
int control_listen(struct daemon *d)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old_mask;
	int fd = -1, probe, ret;

	if (strlen(d->env->socket) >= sizeof(addr.sun_path)) {
		argusd_fail(&d->ctx, "failed to create control socket %s: path longer than %zu bytes",
			       d->env->socket, sizeof(addr.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, d->env->socket);

	if (lstat(d->env->socket, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			argusd_fail(&d->ctx, "failed to create control socket %s: the path exists and is not a socket",
				       d->env->socket);
			return -EEXIST;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
			close(probe);
			argusd_fail(&d->ctx, "failed to create control socket %s: another argusd is running there",
				       d->env->socket);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(d->env->socket);
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		argusd_fail(&d->ctx, "failed to create control socket %s: %s", d->env->socket, strerror(errno));
		goto cleanup;
	}
	/* The mode must be right from the first instant, not fixed afterwards. */
	old_mask = umask(0077);
	ret = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old_mask);
	if (ret < 0) {
		ret = -errno;
		argusd_fail(&d->ctx, "failed to bind control socket %s: %s", d->env->socket, strerror(errno));
		goto cleanup;
	}
	d->socket_bound = true;
	/* bind made it 0600 (umask above) and ours; lstat checks, never a
	 * chmod/chown that would follow a link swapped in since. */
	if (lstat(d->env->socket, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		ret = -EPERM;
		argusd_fail(&d->ctx, "failed to restrict control socket %s: not our 0600 socket after bind", d->env->socket);
		goto cleanup;
	}
	if (listen(fd, MAX_CLIENTS) < 0) {
		ret = -errno;
		argusd_fail(&d->ctx, "failed to listen on control socket %s: %s", d->env->socket, strerror(errno));
		goto cleanup;
	}
	d->listen_fd = fd;
	return 0;

cleanup:
	if (fd >= 0)
		close(fd);
	return ret;
}

void sample_rate(struct daemon *d, uint64_t t, uint64_t records)
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
	char buffer[PATH_MAX * 2], scope[sizeof(d->env->scope.cgroup) * 2];
	struct hang_detector_stats hs = {};
	struct argus_platform_stats ps = {};
	uint64_t t = now_ns(), events;

	memset(&st, 0, sizeof(st));
	argus_rb_stats(d->rb, &st);
	/* Events are what a reader gets: decoded rows, one per record except a
	 * SWITCH or SYSCALL record (two); bytes/event is record bytes per row. */
	events = st.records_written + st.extra_rows;
	json_string(buffer, sizeof(buffer), d->env->buffer);
	json_string(scope, sizeof(scope), d->env->scope.cgroup);
	if (d->hangs)
		hang_detector_stats(d->hangs, &hs);
	if (d->ops->stats)
		d->ops->stats(d->src, &ps);
	snprintf(out, n,
		 "{\"pid\":%d,\"buffer\":\"%s\",\"events\":%llu,\"bytes\":%llu,\"lost\":%llu,"
		 "\"switches_unreported\":%llu,\"overwritten\":%llu,"
		 "\"events_per_s\":%.1f,\"bytes_per_event\":%.2f,\"fill\":%.4f,"
		 "\"uptime_s\":%.1f,\"size\":%llu,\"platform\":\"%s\",\"syscall_probes\":\"%s\","
		 "\"syscall_functions\":%d,\"hang_detector\":%s,"
		 "\"watched_loops\":%llu,\"hangs_detected\":%llu,\"snapshots_written\":%llu,"
		 "\"detail\":\"%s\",\"detail_mode\":\"%s\",\"detail_switches\":%llu,\"lean_s\":%.1f,\"full_s\":%.1f,"
		 "\"scope_cgroup\":\"%s\",\"scope_netns\":%u}\n",
		 (int)getpid(), buffer, (unsigned long long)events,
		 (unsigned long long)st.bytes_written, (unsigned long long)st.records_lost,
		 (unsigned long long)st.switches_unreported, (unsigned long long)st.records_overwritten,
		 events_per_s(d, t, events),
		 events ? (double)st.bytes_written / (double)events : 0.0,
		 st.nchunks ? (double)st.chunks_in_use / (double)st.nchunks : 0.0,
		 (double)(t - d->start_ns) / 1e9, (unsigned long long)st.file_size, d->ops->name,
		 ps.syscall_probes ? ps.syscall_probes : "n/a", ps.syscall_functions,
		 d->hangs ? "true" : "false", (unsigned long long)hs.loops, (unsigned long long)hs.hangs,
		 (unsigned long long)hs.snapshots, d->tier.lean ? "lean" : "full",
		 d->tier.mode == ARGUS_DETAIL_MODE_AUTO ? "auto" : d->tier.mode == ARGUS_DETAIL_MODE_LEAN ? "lean" : "full",
		 (unsigned long long)d->tier.switches,
		 (double)(d->tier.lean_ns + (d->tier.lean && t > d->tier.tier_since ? t - d->tier.tier_since : 0)) / 1e9,
		 (double)(d->tier.full_ns + (!d->tier.lean && t > d->tier.tier_since ? t - d->tier.tier_since : 0)) / 1e9,
		 scope, d->env->scope.netns);
}

void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->len = 0;
}

static void client_reply(struct daemon *d, struct client *c, const char *text)
{
	/* Replies are one short line into an empty socket buffer: a client that
	 * does not read it loses it, the daemon never blocks on it. */
	if (send(c->fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		argusd_log(&d->ctx, "failed to answer control client: %s", strerror(errno));
}

/* The processes running now under a name (`watch comm`: those that exec or
 * are renamed later are caught from their records). */
static unsigned watch_running(struct daemon *d, const char *name)
{
	char path[64], comm[32];
	struct dirent *de;
	unsigned n = 0;
	DIR *dp = opendir("/proc");
	ssize_t len;
	int fd;

	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		snprintf(path, sizeof(path), "/proc/%lu/comm", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (len <= 0)
			continue;
		comm[len] = 0;
		comm[strcspn(comm, "\n")] = 0;
		if (!strcmp(comm, name) && hang_detector_watch_pid(d->hangs, (uint32_t)pid) == 0)
			n++;
	}
	closedir(dp);
	return n;
}

/* `watch pid N` / `watch comm NAME`: one more process for the hang detector. */
static void watch_command(struct daemon *d, const char *arg, char *reply, size_t n)
{
	unsigned long long pid;
	char *end;

	if (!d->hangs) {
		snprintf(reply, n, "error: the hang detector is off (argusd runs without --snapshot-dir)\n");
		return;
	}
	if (!strncmp(arg, "pid ", 4)) {
		errno = 0;
		pid = strtoull(arg + 4, &end, 10);
		if (errno || end == arg + 4 || *end || pid == 0 || pid > UINT32_MAX) {
			snprintf(reply, n, "error: watch pid needs a process id\n");
			return;
		}
		if (hang_detector_watch_pid(d->hangs, (uint32_t)pid)) {
			snprintf(reply, n, "error: too many watched processes (at most %d)\n", HD_MAX_WATCH);
			return;
		}
		argusd_log(&d->ctx, "watching pid %llu for hangs (control socket)", pid);
	} else if (!strncmp(arg, "comm ", 5) && arg[5] && strlen(arg + 5) <= 15) {
		if (hang_detector_watch_comm(d->hangs, arg + 5)) {
			snprintf(reply, n, "error: too many watched names (at most %d)\n", HD_MAX_WATCH);
			return;
		}
		argusd_log(&d->ctx, "watching processes named %s for hangs (control socket; %u running)", arg + 5,
			watch_running(d, arg + 5));
	} else {
		snprintf(reply, n, "error: watch pid PID | watch comm NAME (1 to 15 bytes)\n");
		return;
	}
	snprintf(reply, n, "ok\n");
}

static void handle_command(struct daemon *d, struct client *c)
{
	char reply[PATH_MAX * 4 + 1024];   /* two escaped paths: the buffer and the scope cgroup */
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
		argusd_log(&d->ctx, "stop requested on the control socket");
	} else if (!strncmp(cmd, "watch ", 6)) {
		watch_command(d, cmd + 6, reply, sizeof(reply));
	} else {
		char shown[64];

		json_string(shown, sizeof(shown), cmd);
		snprintf(reply, sizeof(reply), "error: unknown command '%s' (commands: status, stop, watch)\n", shown);
	}
	client_reply(d, c, reply);
	client_close(c);
}

void accept_clients(struct daemon *d)
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
			/* Every slot holds a client that has not sent its line yet
			 * (commands are answered at once).  Idle clients must not lock
			 * control out until they time out: the one waiting longest
			 * makes room for the newcomer. */
			static const char busy[] = "error: busy (too many idle control clients)\n";

			slot = &d->clients[0];
			for (i = 1; i < MAX_CLIENTS; i++)
				if (d->clients[i].since_ns < slot->since_ns)
					slot = &d->clients[i];
			send(slot->fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			client_close(slot);
		}
		slot->fd = fd;
		slot->len = 0;
		slot->since_ns = now_ns();
	}
}

void read_client(struct daemon *d, struct client *c)
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
