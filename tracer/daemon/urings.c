/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ring registry and drain (urings.h).  A fixed table of open rings; rings
 * are matched to directory entries by name, opened through
 * dylib-instrument/uring.c's consumer side, and unlinked once closed and
 * drained, so the directory only holds live threads.
 *
 * A ring file is shared with its (untrusted) producer, who may truncate it
 * under our mapping: an access past the new end raises SIGBUS.  Two lines of
 * defence: every drain pass first fstat()s the ring's own fd and drops a
 * ring whose size is no longer the one its header gave at open; the
 * residual race (truncation between that fstat and the reads) is caught by a
 * SIGBUS handler that siglongjmp()s out of the guarded reads when the fault
 * address lies inside the ring being read (any other SIGBUS keeps its old
 * disposition).  Either way the ring is dropped with one log line.
 *
 * Whose ring it is: the file name and the header both say <pid>-<tid>, and
 * both are written by whoever created the file, so neither is a proof.  The
 * directory is 0700 and ours, so only processes of our uid register at all;
 * among those, a ring is credited to pid P only when the kernel vouches for
 * it at first sight (Linux, /proc/P/maps): P maps this very file (device and
 * inode), or, for a ring whose thread already closed it before our scan, P
 * maps some other file of this directory (P runs the recorder).  A live P
 * that does neither is refused, so `1-1.ring` cannot speak for init.  A ring
 * whose P has exited cannot be checked any more; its records are kept (they
 * describe no live process: the residual, and why the scan runs often).
 */
#include "urings.h"
#include "argusd_ctx.h"
#include "argus_event.h"
#include "probe_record.h"
#include "uring.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/sysmacros.h>   /* major(), minor() */
#endif
#include <time.h>
#include <unistd.h>

#define MAX_RINGS 4096
#define SCAN_NS 200000000ull

struct open_ring {
	struct argus_uring r;
	int fd;                    /* the mapped file: fstat'ed every drain pass */
	uint32_t pid, tid;
	uint64_t lost_seen;
	int used;
};

/* TSC -> CLOCK_MONOTONIC for rings with ARGUS_URING_CLOCK_TSC: a pair
 * sampled before each drain anchors the conversion (records are at most one
 * poll old), the rate comes from the longest baseline since start. */
struct tsc_clock {
	uint64_t tsc0, ns0;        /* first pair */
	uint64_t tsc, ns;          /* pair of this drain */
	double ns_per_tick;
};

typedef int (*argus_urings_write_fn)(void *ctx, const void *rec, uint32_t size);

struct argus_urings {
	const struct argusd_ctx *ctx;   /* records and log lines go through it */
	char dir[512];
	char real_dir[PATH_MAX];   /* dir as /proc/PID/maps spells it */
	uint64_t next_scan_ns;
	struct tsc_clock clock;
	int nopen;
	struct open_ring rings[MAX_RINGS];
};

struct drain_ctx {
	struct open_ring *ring;
	const struct tsc_clock *clock;   /* NULL: the ring's ts are CLOCK_MONOTONIC */
	argus_urings_write_fn write;
	void *ctx;
	long written, rejected;
};

/* The clock a ring may be stamped with and copied as is: the trace's time
 * line.  macOS: mach absolute time in ns (CLOCK_UPTIME_RAW), the kdebug
 * records' clock (docs/macos.md); TSC rings exist only on Linux. */
#if defined(__APPLE__)
#define TRACE_CLOCK CLOCK_UPTIME_RAW
#else
#define TRACE_CLOCK CLOCK_MONOTONIC
#endif

#if defined(__x86_64__) && !defined(__APPLE__)
#include <x86intrin.h>
#define HAVE_TSC 1
static void sample_tsc(struct tsc_clock *c)
{
	uint64_t a = now_ns(), t = __rdtsc(), b = now_ns();
	c->tsc = t;
	c->ns = a + (b - a) / 2;
	if (!c->tsc0) {
		c->tsc0 = c->tsc;
		c->ns0 = c->ns;
	} else if (c->tsc > c->tsc0 && c->ns - c->ns0 >= 5000000) {
		c->ns_per_tick = (double)(c->ns - c->ns0) / (double)(c->tsc - c->tsc0);
	}
}
#else
#define HAVE_TSC 0
static void sample_tsc(struct tsc_clock *c) {}
#endif

static uint64_t tsc_to_ns(const struct tsc_clock *c, uint64_t tsc)
{
	return c->ns + (uint64_t)(int64_t)((double)(int64_t)(tsc - c->tsc) * c->ns_per_tick);
}

/* ---- SIGBUS guard: reads of a ring mapping its producer may truncate ---- */

struct bus_guard {
	sigjmp_buf env;
	const uint8_t *lo, *hi;    /* the mapping being read */
};

static __thread struct bus_guard *volatile active_guard;
static struct sigaction previous_bus;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct bus_guard *g = active_guard;

	if (g && (const uint8_t *)si->si_addr >= g->lo && (const uint8_t *)si->si_addr < g->hi) {
		active_guard = NULL;
		siglongjmp(g->env, 1);   /* SA_NODEFER: no mask to restore */
	}
	/* Not a ring's: whatever handled SIGBUS before handles it (the default
	 * kills us on the re-executed access, as without this handler). */
	if (previous_bus.sa_flags & SA_SIGINFO) {
		previous_bus.sa_sigaction(sig, si, uc);
		return;
	}
	if (previous_bus.sa_handler == SIG_IGN || previous_bus.sa_handler == SIG_DFL) {
		signal(SIGBUS, SIG_DFL);
		return;
	}
	previous_bus.sa_handler(sig);
}

static int install_bus_guard(void)
{
	struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER};

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, &previous_bus) ? -errno : 0;
}

/* Enough descriptors for a full table of rings, as far as the hard limit allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	rlim_t want = MAX_RINGS + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int argus_urings_new(const char *dir, const struct argusd_ctx *c, struct argus_urings **out)
{
	struct stat st;
	if (strlen(dir) >= sizeof(((struct argus_urings *)0)->dir))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -ENOTDIR;
	int err = install_bus_guard();
	if (err)
		return err;
	raise_fd_limit();
	struct argus_urings *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->ctx = c;
	snprintf(u->dir, sizeof(u->dir), "%s", dir);
	if (!realpath(dir, u->real_dir))
		snprintf(u->real_dir, sizeof(u->real_dir), "%s", dir);
	if (HAVE_TSC) {   /* a first rate from a 10 ms baseline, refined as the daemon runs */
		struct timespec ten_ms = {0, 10000000};
		sample_tsc(&u->clock);
		nanosleep(&ten_ms, NULL);
		sample_tsc(&u->clock);
	}
	*out = u;
	return 0;
}

static int parse_name(const char *name, uint32_t *pid, uint32_t *tid)
{
	unsigned p, t;
	int end = 0;
	if (sscanf(name, "%u-%u.ring%n", &p, &t, &end) != 2 || name[end] || !p || !t)
		return -1;
	*pid = p;
	*tid = t;
	return 0;
}

static struct open_ring *find(struct argus_urings *u, uint32_t pid, uint32_t tid)
{
	for (int i = 0; i < MAX_RINGS; i++)
		if (u->rings[i].used && u->rings[i].pid == pid && u->rings[i].tid == tid)
			return &u->rings[i];
	return NULL;
}

static void forget(struct argus_urings *u, struct open_ring *o)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%u-%u.ring", u->dir, o->pid, o->tid);
	argus_uring_unmap(&o->r);
	close(o->fd);
	o->fd = -1;
	unlink(path);
	o->used = 0;
	u->nopen--;
}

/* A ring we stop reading because its file broke the rules: one line. */
static void drop(struct argus_urings *u, struct open_ring *o, const char *why)
{
	argusd_log(u->ctx, "dropped tracepoint ring %u-%u.ring: %s", o->pid, o->tid, why);
	forget(u, o);
}

#if defined(__linux__)
/* Does process pid map the file (dev, ino), or, with any_in_dir, any file
 * of dir?  1 yes, 0 no (or its maps cannot be read), -1 it maps nothing
 * at all or is gone: a zombie or a process in exit has no mappings left (a
 * forked child that ended before our scan, not yet reaped), which is
 * "exited", not "not its ring".
 * /proc/PID/maps lines: "lo-hi perms offset MAJ:MIN inode path". */
static int maps_file(uint32_t pid, dev_t dev, ino_t ino, const char *dir, bool any_in_dir)
{
	char path[64], line[PATH_MAX + 128];
	size_t dirlen = strlen(dir);
	bool found = false, any = false;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ESRCH ? -1 : 0;   /* gone; unreadable proves nothing */
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long inode;
		int name = 0;

		any = true;
		if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &inode, &name) < 3)
			continue;
		if (maj == major(dev) && min == minor(dev) && inode == (unsigned long long)ino)
			found = true;
		else if (any_in_dir && name && !strncmp(line + name, dir, dirlen) && line[name + dirlen] == '/')
			found = true;
	}
	fclose(f);
	return found ? 1 : any ? 0 : -1;
}

/* The kernel's word that the ring's claimed pid created it (see the top). */
static const char *unproven_creator(const struct argus_urings *u, uint32_t pid, const struct stat *st, bool closed)
{
	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return NULL;   /* exited: cannot be checked, nothing live to misattribute */
	if (maps_file(pid, st->st_dev, st->st_ino, u->real_dir, closed) != 0)
		return NULL;   /* it maps the ring (1), or nothing any more (-1: exiting, a zombie) */
	return "its pid does not map it (not that process's ring)";
}
#else
/* No /proc to ask: the directory's 0700 is the whole check. */
static const char *unproven_creator(const struct argus_urings *u, uint32_t pid, const struct stat *st, bool closed)
{
	return NULL;
}
#endif

static void scan(struct argus_urings *u)
{
	DIR *d = opendir(u->dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		uint32_t pid, tid;
		if (parse_name(de->d_name, &pid, &tid) || find(u, pid, tid))
			continue;
		struct open_ring *slot = NULL;
		for (int i = 0; i < MAX_RINGS && !slot; i++)
			if (!u->rings[i].used)
				slot = &u->rings[i];
		if (!slot)
			break;
		int fd = openat(dirfd(d), de->d_name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;   /* gone again, or out of descriptors: next scan */
		struct bus_guard g;
		struct stat st;
		const char *refused = NULL;
		slot->fd = fd;
		slot->pid = pid;
		slot->tid = tid;
		slot->r.hdr = NULL;
		if (sigsetjmp(g.env, 0)) {   /* truncated while we read the header */
			argus_uring_unmap(&slot->r);
			argusd_log(u->ctx, "dropped tracepoint ring %s: file truncated while opened", de->d_name);
			close(fd);
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		/* open_fd reads the header right after mapping it: any SIGBUS
		 * until it returns is that mapping's */
		g.lo = NULL;
		g.hi = (const uint8_t *)UINTPTR_MAX;
		active_guard = &g;
		int err = fstat(fd, &st) ? -errno : argus_uring_open_fd(&slot->r, fd);
		active_guard = NULL;
		if (err) {
			close(fd);
			continue;   /* still being created, or not a ring: next scan */
		}
		g.lo = (const uint8_t *)slot->r.hdr;
		g.hi = g.lo + slot->r.map_size;
		active_guard = &g;
		if (slot->r.hdr->pid != pid || slot->r.hdr->tid != tid)
			refused = "its header names another thread";
		else
			refused = unproven_creator(u, pid, &st, __atomic_load_n(&slot->r.hdr->closed, __ATOMIC_ACQUIRE));
		active_guard = NULL;
		if (refused) {
			argusd_log(u->ctx, "refused tracepoint ring %s: %s", de->d_name, refused);
			argus_uring_unmap(&slot->r);
			close(fd);
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		slot->lost_seen = 0;
		slot->used = 1;
		u->nopen++;
	}
	if (d)
		closedir(d);
}

static void on_record(const struct argus_event_header *shared, void *arg)
{
	struct drain_ctx *c = arg;
	struct argus_ev_probe rec;
	/* copy first: the producer may rewrite the shared bytes meanwhile */
	if (shared->size != sizeof(rec)) {
		c->rejected++;
		return;
	}
	memcpy(&rec, shared, sizeof(rec));
	if (rec.h.size != sizeof(rec) || rec.h.type < ARGUS_PROBE_TYPE_FIRST || rec.h.type > ARGUS_PROBE_TYPE_LAST) {
		c->rejected++;
		return;
	}
	if (c->clock)
		rec.h.ts_ns = tsc_to_ns(c->clock, rec.h.ts_ns);
	rec.h.pid = c->ring->pid;
	rec.h.tid = c->ring->tid;
	rec.h.cpu = ARGUS_CPU_UNKNOWN;
	rec.h.flags = 0;
	rec.reserved = 0;
	if (c->write(c->ctx, &rec, sizeof(rec)) == 0)
		c->written++;
}

static void report_lost(struct open_ring *o, struct drain_ctx *c, uint64_t now_ns)
{
	uint64_t lost = __atomic_load_n(&o->r.hdr->lost, __ATOMIC_RELAXED);
	if (lost <= o->lost_seen)
		return;
	struct argus_ev_lost rec = {
		.h = {.ts_ns = now_ns, .pid = o->pid, .tid = o->tid, .type = ARGUS_EV_LOST,
		      .size = sizeof(rec), .cpu = ARGUS_CPU_UNKNOWN},
		.count = lost - o->lost_seen,
	};
	o->lost_seen = lost;
	c->write(c->ctx, &rec, sizeof(rec));
}

/* One ring's drain pass, under the SIGBUS guard.  Returns the records
 * written, or -1 after dropping the ring. */
static long drain_one(struct argus_urings *u, struct open_ring *o, uint64_t now_ns, int rescan,
		      argus_urings_write_fn write, void *ctx)
{
	struct bus_guard g;
	struct stat st;

	/* The producer may have truncated (or grown) the file since the last
	 * pass: the mapping would fault, or describe another file. */
	if (fstat(o->fd, &st) || (uint64_t)st.st_size != o->r.map_size) {
		char why[96];
		snprintf(why, sizeof(why), "file is now %lld bytes, its header says %zu",
			 (long long)st.st_size, o->r.map_size);
		drop(u, o, why);
		return -1;
	}
	if (sigsetjmp(g.env, 0)) {   /* truncated since the fstat above */
		drop(u, o, "file truncated while being read");
		return -1;
	}
	g.lo = (const uint8_t *)o->r.hdr;
	g.hi = g.lo + o->r.map_size;
	active_guard = &g;
	uint32_t clock_id = o->r.hdr->clock_id;
	if (clock_id != TRACE_CLOCK && !(HAVE_TSC && clock_id == ARGUS_URING_CLOCK_TSC)) {
		active_guard = NULL;
		forget(u, o);   /* a clock we cannot put on the trace's time line */
		return -1;
	}
	struct drain_ctx c = {.ring = o, .write = write, .ctx = ctx,
			      .clock = clock_id == ARGUS_URING_CLOCK_TSC ? &u->clock : NULL};
	int closed = __atomic_load_n(&o->r.hdr->closed, __ATOMIC_ACQUIRE);
	long n = argus_uring_drain(&o->r, on_record, &c);
	report_lost(o, &c, now_ns);
	active_guard = NULL;
	int gone = rescan && kill((pid_t)o->pid, 0) && errno == ESRCH;
	/* closed before the drain: nothing can follow what was drained */
	if (n < 0 || c.rejected)
		drop(u, o, "inconsistent counters or records");
	else if (closed || gone)
		forget(u, o);
	return c.written;
}

long argus_urings_poll(struct argus_urings *u, uint64_t now_ns)
{
	int rescan = now_ns >= u->next_scan_ns;
	if (rescan) {
		scan(u);
		u->next_scan_ns = now_ns + SCAN_NS;
	}
	long total = 0;
	sample_tsc(&u->clock);
	for (int i = 0; i < MAX_RINGS; i++) {
		if (!u->rings[i].used)
			continue;
		long n = drain_one(u, &u->rings[i], now_ns, rescan, u->ctx->write, u->ctx->arg);
		if (n > 0)
			total += n;
	}
	return total;
}

void argus_urings_rescan(struct argus_urings *u)
{
	if (u)
		scan(u);
}

int argus_urings_active(const struct argus_urings *u)
{
	return u->nopen > 0;
}

void argus_urings_free(struct argus_urings *u)
{
	if (!u)
		return;
	/* tracing stops: producers see `detached`, take their hooks out and
	 * record no more; the files go (a new daemon starts with none).  The
	 * scan first: a thread's ring created since the last one is detached
	 * too, not left behind with its hooks in. */
	scan(u);
	for (int i = 0; i < MAX_RINGS; i++) {
		if (!u->rings[i].used)
			continue;
		struct open_ring *o = &u->rings[i];
		struct bus_guard g;
		if (!sigsetjmp(g.env, 0)) {   /* a truncated ring: nobody left to tell */
			g.lo = (const uint8_t *)o->r.hdr;
			g.hi = g.lo + o->r.map_size;
			active_guard = &g;
			__atomic_store_n(&o->r.hdr->detached, 1, __ATOMIC_RELEASE);
		}
		active_guard = NULL;
		forget(u, o);
	}
	free(u);
}
