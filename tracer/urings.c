/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ring registry and drain (urings.h).  A fixed table of open rings; rings
 * are matched to directory entries by name, opened through
 * dylib-instrument/uring.c's consumer side, and unlinked once closed and
 * drained, so the directory only holds live threads.
 */
#include "urings.h"
#include "argus_event.h"
#include "probe_record.h"
#include "uring.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_RINGS 4096
#define SCAN_NS 200000000ull

struct open_ring {
	struct argus_uring r;
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

struct argus_urings {
	char dir[512];
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

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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
	uint64_t a = mono_ns(), t = __rdtsc(), b = mono_ns();
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

int argus_urings_new(const char *dir, struct argus_urings **out)
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
	struct argus_urings *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	snprintf(u->dir, sizeof(u->dir), "%s", dir);
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
	unlink(path);
	o->used = 0;
	u->nopen--;
}

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
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", u->dir, de->d_name);
		if (argus_uring_open(&slot->r, path))
			continue;   /* still being created, or not a ring: next scan */
		if (slot->r.hdr->pid != pid || slot->r.hdr->tid != tid) {
			argus_uring_unmap(&slot->r);
			unlink(path);
			continue;
		}
		slot->pid = pid;
		slot->tid = tid;
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

long argus_urings_poll(struct argus_urings *u, uint64_t now_ns, argus_urings_write_fn write, void *ctx)
{
	int rescan = now_ns >= u->next_scan_ns;
	if (rescan) {
		scan(u);
		u->next_scan_ns = now_ns + SCAN_NS;
	}
	long total = 0;
	sample_tsc(&u->clock);
	for (int i = 0; i < MAX_RINGS; i++) {
		struct open_ring *o = &u->rings[i];
		if (!o->used)
			continue;
		uint32_t clock_id = o->r.hdr->clock_id;
		if (clock_id != TRACE_CLOCK && !(HAVE_TSC && clock_id == ARGUS_URING_CLOCK_TSC)) {
			forget(u, o);   /* a clock we cannot put on the trace's time line */
			continue;
		}
		struct drain_ctx c = {.ring = o, .write = write, .ctx = ctx,
				      .clock = clock_id == ARGUS_URING_CLOCK_TSC ? &u->clock : NULL};
		int closed = __atomic_load_n(&o->r.hdr->closed, __ATOMIC_ACQUIRE);
		long n = argus_uring_drain(&o->r, on_record, &c);
		report_lost(o, &c, now_ns);
		total += c.written;
		int gone = rescan && kill((pid_t)o->pid, 0) && errno == ESRCH;
		/* closed before the drain: nothing can follow what was drained */
		if (n < 0 || c.rejected || closed || gone)
			forget(u, o);
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
		__atomic_store_n(&u->rings[i].r.hdr->detached, 1, __ATOMIC_RELEASE);
		forget(u, &u->rings[i]);
	}
	free(u);
}
