// SPDX-License-Identifier: Apache-2.0
/*
 * PROC_SNAPSHOT records from /proc: at start-up (after attach) one per thread,
 * so that every thread is named either here or by a FORK/EXEC/THREAD_NAME
 * record; after a wrap, one per thread whose last name record is about to be
 * overwritten (thread_names.c decides which, emit_name writes it).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argusd_ctx.h"
#include "proc_snapshot.h"
#include "cgroup_path.h"

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
/* Where a process lives, with its cgroup path (the kernel side writes the
 * same record at exec, fork and cgroup moves). */
static void write_proc_ns(const struct argusd_ctx *c, uint32_t pid)
{
	union {
		struct argus_ev_proc_ns rec;
		char bytes[ARGUS_EVENT_MAX_SIZE];
	} u;
	size_t len;

	memset(&u, 0, sizeof(u));
	u.rec.cgroup_id = argus_proc_cgroup_id(pid);
	u.rec.netns_ino = argus_proc_netns(pid);
	if (!u.rec.cgroup_id && !u.rec.netns_ino)
		return;         /* gone: an empty record would hide what the trace knew */
	len = argus_cgroup_path(pid, u.rec.cgroup_id, u.rec.path, ARGUS_PROC_NS_MAX_PATH);
	fill_header(&u.rec.h, ARGUS_EV_PROC_NS, (uint16_t)(ARGUS_PROC_NS_BASE_SIZE + (len ? (len + 1 + 7) / 8 * 8 : 0)),
		    pid, pid);
	argusd_write(c, &u, u.rec.h.size);
}

uint64_t write_snapshot(const struct argusd_ctx *c, const struct argus_scope *scope)
{
	struct argus_ev_proc_snapshot rec;
	struct dirent *pe, *te;
	DIR *proc, *tasks;
	char path[64];
	uint32_t pid, tid, ppid;
	uint64_t n = 0;

	proc = opendir("/proc");
	if (!proc) {
		argusd_log(c, "failed to open /proc: %s (no process snapshot)", strerror(errno));
		return 0;
	}
	while ((pe = readdir(proc))) {
		pid = parse_id(pe->d_name);
		if (!pid)
			continue;
		if ((scope->cgroup_id || scope->netns) && !argus_scope_has_pid(scope, pid))
			continue;
		ppid = read_ppid(pid);
		write_proc_ns(c, pid);
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
			if (argusd_write(c, &rec, sizeof(rec)) == 0)
				n++;
		}
		closedir(tasks);
	}
	closedir(proc);
	return n;
}

int emit_name(void *ctx, struct argus_ev_proc_snapshot *rec)
{
	const struct argusd_ctx *c = ctx;
	uint32_t pid = rec->h.pid, tid = rec->h.tid;

	if (!rec->comm[0])
		read_comm(pid, tid, rec->comm);
	if (!rec->comm[0])
		return -ENOENT;             /* gone, and never named: nothing to say */
	if (!rec->ppid && rec->is_main_thread)
		rec->ppid = read_ppid(pid);
	fill_header(&rec->h, ARGUS_EV_PROC_SNAPSHOT, sizeof(*rec), pid, tid);
	if (rec->is_main_thread)        /* where it lives, too, while the process does */
		write_proc_ns(c, pid);
	return argusd_write(c, rec, sizeof(*rec));
}
