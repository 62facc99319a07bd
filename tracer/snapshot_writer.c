// SPDX-License-Identifier: Apache-2.0
/*
 * Snapshot writer: the ring's records around one hang, frozen into a file of
 * their own before the ring overwrites them.
 *
 * Algorithm (runs in a forked child of argusd, or in argusd at shutdown):
 *   1. Open the ring read-only (a handle of its own: the seqlock reader of
 *      argus_rb.c, so a chunk overwritten while it is copied is dropped, never
 *      half-copied).
 *   2. One pass in chunk order (argus_rb_read_window): from the chunks that
 *      overlap [since, until], every record with a row in the window (a
 *      SYSCALL record: its enter or its exit); from every chunk, the state
 *      records a decoder needs to name what the window shows (PROC_SNAPSHOT,
 *      THREAD_NAME, FD_INFO, MAPPING: the set argus_decode_file_window keeps
 *      from before a window).
 *   3. Over max_snapshot_bytes: the oldest window records are dropped (the
 *      hang is at the end), the state records kept; while reading already,
 *      so the copy's memory stays within 1.25 x the bound.
 *   4. Write them with the ordinary producer into a new ring file sized to
 *      hold them all (argus_rb_create: mode 0600, temporary name, O_EXCL),
 *      with the ring's clock stamps, then rename it to <id>.argus; then the
 *      metadata <id>.json the same way; then prune.
 * Invariants: a snapshot is a valid ring buffer file, so `argus debug
 * --buffer` and every trust check of the loader apply to it; nothing half
 * written carries a final name; the newest snapshot is never pruned.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argus_event.h"
#include "argus_rb.h"
#include "snapshot_writer.h"

#define SNAP_CHUNK_SIZE (64u << 10)

struct recs {
	unsigned char *buf;
	size_t len, cap;
	uint64_t n;
};

struct collect {
	uint64_t since, until;
	uint64_t max;                /* max_snapshot_bytes, 0: no bound */
	struct recs state, window;
	int oom;
};

static bool is_state(uint16_t type)
{
	return type == ARGUS_EV_PROC_SNAPSHOT || type == ARGUS_EV_THREAD_NAME || type == ARGUS_EV_FD_INFO ||
	       type == ARGUS_EV_MAPPING;
}

static int append(struct recs *r, const void *rec, uint32_t size)
{
	if (r->len + size > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : (1u << 20);
		unsigned char *p;

		while (cap < r->len + size)
			cap *= 2;
		p = realloc(r->buf, cap);
		if (!p)
			return -ENOMEM;
		r->buf = p;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, rec, size);
	r->len += size;
	r->n++;
	return 0;
}

/* A well-framed record (a malformed frame ends its chunk: skipped here). */
static bool framed(const void *rec, uint32_t size)
{
	const struct argus_event_header *h = rec;

	return size >= sizeof(*h) && h->size == size;
}

/* Drops the oldest window records until state + window fit in max bytes. */
static void trim(struct collect *c, uint64_t max)
{
	size_t off = 0;

	while (c->state.len + c->window.len - off > max && off < c->window.len) {
		const struct argus_event_header *h = (const void *)(c->window.buf + off);

		off += h->size;
		c->window.n--;
	}
	memmove(c->window.buf, c->window.buf + off, c->window.len - off);
	c->window.len -= off;
}

static int keep_window(const void *rec, uint32_t size, uint64_t seq, void *ctx)
{
	struct collect *c = ctx;
	const struct argus_event_header *h = rec;

	(void)seq;
	if (!framed(rec, size))
		return 0;
	if (argus_rb_record_last_ts(rec) >= c->since && h->ts_ns <= c->until) {
		c->oom |= append(&c->window, rec, size);
		/* memory stays near the bound: the oldest records go as we read */
		if (c->max && c->window.len > c->max + c->max / 4)
			trim(c, c->max);
	}
	else if (h->ts_ns < c->since && is_state(h->type))
		c->oom |= append(&c->state, rec, size);
	return c->oom;
}

static int keep_state(const void *rec, uint32_t size, uint64_t seq, void *ctx)
{
	struct collect *c = ctx;
	const struct argus_event_header *h = rec;

	(void)seq;
	if (framed(rec, size) && h->ts_ns < c->since && is_state(h->type))
		c->oom |= append(&c->state, rec, size);
	return c->oom;
}

static int write_recs(struct argus_rb_producer *p, const struct recs *r)
{
	for (size_t off = 0; off < r->len;) {
		const struct argus_event_header *h = (const void *)(r->buf + off);
		int rc = argus_rb_write(p, h, h->size);

		if (rc)
			return rc;
		off += h->size;
	}
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static int write_meta(const char *dir, const struct snapshot_request *q, const struct collect *c,
		      uint64_t created_ns, uint64_t created_realtime_ns, char *err, size_t errlen)
{
	char tmp[4096], final[4096];
	FILE *f;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.json.tmp", dir, q->id);
	snprintf(final, sizeof(final), "%s/%s.json", dir, q->id);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "failed to create %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	fprintf(f, "{\"schema\":\"argus.snapshot/1\",\"id\":");
	json_str(f, q->id);
	fprintf(f, ",\"pid\":%u,\"tid\":%u,\"comm\":", q->pid, q->tid);
	json_str(f, q->comm);
	fprintf(f, ",\"process\":");
	json_str(f, q->process);
	fprintf(f, ",\"start_ns\":%llu,\"end_ns\":%llu,\"detect_ns\":%llu,\"ongoing\":%s,"
		"\"since_ns\":%llu,\"until_ns\":%llu,\"threshold_ns\":%llu,\"block_type\":",
		(unsigned long long)q->start_ns, (unsigned long long)q->end_ns, (unsigned long long)q->detect_ns,
		q->ongoing ? "true" : "false", (unsigned long long)q->since_ns, (unsigned long long)q->until_ns,
		(unsigned long long)q->threshold_ns);
	json_str(f, q->block_type ? q->block_type : "");
	fprintf(f, ",\"wait_reason\":%u,\"run_ns\":%llu,\"wait_ns\":%llu,\"switches\":%u,"
		"\"records\":%llu,\"state_records\":%llu,\"created_ns\":%llu,\"created_realtime_ns\":%llu}\n",
		q->wait_reason, (unsigned long long)q->run_ns, (unsigned long long)q->wait_ns, q->switches,
		(unsigned long long)(c->window.n + c->state.n), (unsigned long long)c->state.n,
		(unsigned long long)created_ns, (unsigned long long)created_realtime_ns);
	if (fflush(f) || fsync(fileno(f)) || fclose(f)) {
		snprintf(err, errlen, "failed to write %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -EIO;
	}
	if (rename(tmp, final)) {
		snprintf(err, errlen, "failed to rename %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -errno;
	}
	return 0;
}

/* The snapshot directory: created 0700; refused when it is a link, not a
 * directory, someone else's, or open to others. */
static int check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "failed to create %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & 022)) {
		snprintf(err, errlen, "refusing snapshot directory %s: it must be a directory of root's (or "
			 "yours) that others cannot write", dir);
		return -EPERM;
	}
	return 0;
}

int snapshot_write(const struct hang_detector_config *cfg, const struct snapshot_request *q,
		   char *err, size_t errlen)
{
	struct collect c = { .since = q->since_ns, .until = q->until_ns, .max = cfg->max_snapshot_bytes };
	struct argus_rb *ring = NULL, *out = NULL;
	struct argus_rb_producer prod;
	struct argus_rb_stats st;
	char tmp[4096], final[4096];
	uint64_t nchunks, size, created_ns, created_rt;
	struct stat sb;
	int ret;

	ret = check_dir(cfg->dir, err, errlen);
	if (ret)
		return ret;
	snprintf(tmp, sizeof(tmp), "%s/.%s.argus.tmp", cfg->dir, q->id);
	snprintf(final, sizeof(final), "%s/%s.argus", cfg->dir, q->id);
	ret = argus_rb_open(cfg->ring_path, 0, &ring);
	if (ret) {
		snprintf(err, errlen, "failed to open ring %s", argus_rb_error(ring));
		goto cleanup;
	}
	/* written before (an ongoing hang): replace it only while the ring still
	 * holds the hang's start */
	if (lstat(final, &sb) == 0 && (argus_rb_stats(ring, &st) || st.first_ts > q->start_ns)) {
		snprintf(err, errlen, "the ring no longer holds the start of hang %s: the earlier snapshot stays",
			 q->id);
		ret = 0;
		goto cleanup;
	}
	created_ns = argus_rb_header(ring)->created_ns;
	created_rt = argus_rb_header(ring)->created_realtime_ns;
	ret = argus_rb_read_window(ring, q->since_ns, q->until_ns, keep_window, keep_state, &c, NULL);
	if (ret || c.oom) {
		snprintf(err, errlen, "failed to read ring %s: %s", cfg->ring_path,
			 c.oom ? "out of memory" : strerror(ret < 0 ? -ret : EIO));
		ret = ret < 0 ? ret : -ENOMEM;
		goto cleanup;
	}
	argus_rb_close(ring);
	ring = NULL;
	if (cfg->max_snapshot_bytes)
		trim(&c, cfg->max_snapshot_bytes);

	/* room for every record: a chunk wastes less than one record at its end */
	nchunks = (c.state.len + c.window.len) / (SNAP_CHUNK_SIZE - ARGUS_EVENT_MAX_SIZE) + 2;
	size = 8192 + nchunks * (SNAP_CHUNK_SIZE + sizeof(struct argus_rb_chunk_header));
	unlink(tmp);
	ret = argus_rb_create(tmp, size, SNAP_CHUNK_SIZE, &out);
	if (ret) {
		snprintf(err, errlen, "failed to create snapshot %s", argus_rb_error(out));
		goto cleanup;
	}
	argus_rb_header(out)->created_ns = created_ns;
	argus_rb_header(out)->created_realtime_ns = created_rt;
	argus_rb_producer_init(out, &prod, (uint32_t)getpid());
	ret = write_recs(&prod, &c.state);
	if (!ret)
		ret = write_recs(&prod, &c.window);
	argus_rb_producer_close(&prod);
	if (ret) {
		snprintf(err, errlen, "failed to write snapshot %s: %s", tmp, strerror(-ret));
		unlink(tmp);
		goto cleanup;
	}
	argus_rb_close(out);
	out = NULL;
	if (rename(tmp, final)) {
		ret = -errno;
		snprintf(err, errlen, "failed to rename %s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto cleanup;
	}
	ret = write_meta(cfg->dir, q, &c, created_ns, created_rt, err, errlen);
	if (!ret)
		snapshot_prune(cfg->dir, cfg->max_count, cfg->max_total_bytes);

cleanup:
	argus_rb_close(ring);
	argus_rb_close(out);
	free(c.state.buf);
	free(c.window.buf);
	return ret;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void snapshot_prune(const char *dir, uint32_t max_count, uint64_t max_total)
{
	char *names[4096], path[4096];
	uint64_t sizes[4096], total = 0;
	size_t n = 0, i;
	struct dirent *de;
	struct stat st;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((de = readdir(dp)) && n < 4096) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len < 7 || strcmp(de->d_name + len - 6, ".argus"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		names[n] = strndup(de->d_name, len - 6);
		if (!names[n])
			break;
		sizes[n] = (uint64_t)st.st_blocks * 512;
		n++;
	}
	closedir(dp);
	qsort(names, n, sizeof(names[0]), by_name);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s.argus", dir, names[i]);
		if (lstat(path, &st) == 0)
			sizes[i] = (uint64_t)st.st_blocks * 512;
		total += sizes[i];
	}
	/* oldest first; the newest stays whatever its size */
	for (i = 0; i + 1 < n && ((max_count && n - i > max_count) || (max_total && total > max_total)); i++) {
		snprintf(path, sizeof(path), "%s/%s.json", dir, names[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s.argus", dir, names[i]);
		unlink(path);
		total -= sizes[i];
	}
	for (i = 0; i < n; i++)
		free(names[i]);
}
