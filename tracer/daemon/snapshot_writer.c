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
 *      hold them all, with the ring's clock stamps: created in the snapshot
 *      directory's verified fd (safe_dir.c: ".<id>.argus.<pid>.<hex>.tmp",
 *      O_CREAT | O_EXCL | O_NOFOLLOW, 0600), its blocks reserved per chunk,
 *      so a full disk is an error, never SIGBUS.
 *   5. Under flock of the directory (the writer at shutdown may overlap the
 *      next daemon's): list the id in the index, rename the file to
 *      <id>.argus (renameat), write <id>.json the same way, prune.
 *
 * The directory is never reached by its path: argusd opens it once at start
 * (O_DIRECTORY | O_NOFOLLOW, root's, nobody else may write it) and writers
 * inherit that fd, so swapping the state directory for another one (a
 * RENAME_EXCHANGE loop) sends nothing elsewhere.  Pruning deletes, with
 * unlinkat in that fd, only snapshots listed in the index ("index": one id
 * per line), which lists only what a writer wrote: never a file someone
 * else put there, nor one of older versions (those stay until removed by
 * hand).
 *
 * Exit paths: every error removes the temporary file; a fatal signal does
 * too (snapshot_writer_child_init); a writer killed outright (SIGKILL) is
 * reaped by argusd, which removes the files named with its pid
 * (snapshot_sweep), and argusd's start-up sweep removes the temporary files
 * of writers no longer alive.
 *
 * Invariants: a snapshot is a valid ring buffer file, so `argus debug
 * --buffer` and every trust check of the loader apply to it; nothing half
 * written carries a final name; the newest snapshot is never pruned.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argus_event.h"
#include "argus_rb.h"
#include "safe_dir.h"
#include "snapshot_writer.h"

#define SNAP_CHUNK_SIZE (64u << 10)
#define SNAPSHOT_ID_MAX 48           /* sizeof(snapshot_request.id) */
#define INDEX_NAME "index"
#define INDEX_MAX 4096               /* ids kept in the index */

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
	       type == ARGUS_EV_PROC_NS || type == ARGUS_EV_GO_SNAPSHOT ||
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

/* The metadata <id>.json (what `argus hangs --recorded` lists). */
static int write_meta(int dir_fd, const struct snapshot_request *q, const struct collect *c,
		      uint64_t created_ns, uint64_t created_realtime_ns, char *err, size_t errlen)
{
	char name[64], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f) {
		snprintf(err, errlen, "failed to format %s.json: out of memory", q->id);
		return -ENOMEM;
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
	if (fclose(f)) {
		free(buf);
		snprintf(err, errlen, "failed to format %s.json: out of memory", q->id);
		return -ENOMEM;
	}
	snprintf(name, sizeof(name), "%s.json", q->id);
	ret = safe_dir_write_file(dir_fd, name, buf, len);
	free(buf);
	if (ret)
		snprintf(err, errlen, "failed to write %s: %s", name, strerror(-ret));
	return ret;
}

/* ---- the index: the snapshots Argus wrote --------------------------------- */

struct index {
	char (*ids)[SNAPSHOT_ID_MAX];
	size_t n;
};

/* An id as hang_detector.c makes them (<UTC time>-<tid>): letters, digits,
 * '-' and '_', never a '/' or a leading '.'. */
static bool valid_id(const char *id)
{
	size_t len = strlen(id);

	return len > 0 && len < SNAPSHOT_ID_MAX && isalnum((unsigned char)id[0]) &&
	       strspn(id, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_") == len;
}

/* The ids listed in INDEX_NAME (missing: none yet).  A line that is no id is
 * skipped: nothing in the index names a file outside the directory. */
static int index_read(int dir_fd, struct index *ix)
{
	char *data, *line, *save = NULL;
	size_t len;
	int ret = safe_dir_read_file(dir_fd, INDEX_NAME, (size_t)INDEX_MAX * SNAPSHOT_ID_MAX + 64, &data, &len);

	ix->ids = calloc(INDEX_MAX + 1, sizeof(*ix->ids));
	ix->n = 0;
	if (!ix->ids) {
		free(data);
		return -ENOMEM;
	}
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || !valid_id(line) || ix->n >= INDEX_MAX)
			continue;
		snprintf(ix->ids[ix->n++], SNAPSHOT_ID_MAX, "%s", line);
	}
	free(data);
	return 0;
}

static int index_write(int dir_fd, const struct index *ix)
{
	size_t cap = 64 + ix->n * (SNAPSHOT_ID_MAX + 1), off;
	char *buf = malloc(cap);
	int ret;

	if (!buf)
		return -ENOMEM;
	off = (size_t)snprintf(buf, cap, "# argus.snapshot-index/1: the snapshots argusd wrote\n");
	for (size_t i = 0; i < ix->n; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s\n", ix->ids[i]);
	ret = safe_dir_write_file(dir_fd, INDEX_NAME, buf, off);
	free(buf);
	return ret;
}

static bool index_has(const struct index *ix, const char *id)
{
	for (size_t i = 0; i < ix->n; i++)
		if (!strcmp(ix->ids[i], id))
			return true;
	return false;
}

static int by_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Deletes the oldest indexed snapshots (ids sort by time) past the bounds,
 * never keep_id (the one just written) nor the newest; drops from the index
 * the ids whose files are gone. */
static void index_prune(int dir_fd, struct index *ix, const char *keep_id, uint32_t max_count,
			uint64_t max_total)
{
	uint64_t *sizes = calloc(ix->n + 1, sizeof(*sizes)), total = 0;
	char name[SNAPSHOT_ID_MAX + 8];
	struct stat st;
	size_t i, kept = 0, n;

	if (!sizes)
		return;
	qsort(ix->ids, ix->n, sizeof(*ix->ids), by_id);
	for (i = 0; i < ix->n; i++) {
		snprintf(name, sizeof(name), "%s.argus", ix->ids[i]);
		if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			sizes[i] = (uint64_t)st.st_blocks * 512;
		else if (strcmp(ix->ids[i], keep_id))
			ix->ids[i][0] = 0;      /* gone (removed by hand): forgotten */
		total += sizes[i];
	}
	n = ix->n;
	for (i = 0; i < ix->n; i++)
		if (!ix->ids[i][0])
			n--;
	/* oldest first; the newest, and the one just written, stay whatever their size */
	for (i = 0; i + 1 < ix->n && ((max_count && n > max_count) || (max_total && total > max_total)); i++) {
		if (!ix->ids[i][0] || !strcmp(ix->ids[i], keep_id))
			continue;
		snprintf(name, sizeof(name), "%s.json", ix->ids[i]);
		safe_dir_unlink(dir_fd, name);
		snprintf(name, sizeof(name), "%s.argus", ix->ids[i]);
		safe_dir_unlink(dir_fd, name);
		total -= sizes[i];
		ix->ids[i][0] = 0;
		n--;
	}
	for (i = 0; i < ix->n; i++)
		if (ix->ids[i][0])
			memmove(ix->ids[kept++], ix->ids[i], SNAPSHOT_ID_MAX);
	ix->n = kept;
	free(sizes);
}

/* ---- cleanup of a writer that is stopped ---------------------------------- */

/* The temporary file being written, for the signal handler (one writer per
 * process: a writer child, or the one at shutdown). */
static volatile sig_atomic_t tmp_live;
static int tmp_dir_fd = -1;
static char tmp_name[SAFE_DIR_TMP_MAX];

static void on_fatal_signal(int sig)
{
	if (tmp_live)
		unlinkat(tmp_dir_fd, tmp_name, 0);    /* async-signal-safe */
	_exit(128 + sig);
}

void snapshot_writer_child_init(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGBUS, SIGSEGV, SIGXFSZ };
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	sigset_t mask;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&mask, sigs[i]);
	}
	/* argusd blocks these for its signalfd; a writer must die on them, and clean up */
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
}

/* The ring's records into a new file under a temporary name in dir_fd (its
 * fd; publish renames it to <id>.argus), or -errno. */
static int write_ring(int dir_fd, const struct snapshot_request *q, const struct collect *c,
		      uint64_t created_ns, uint64_t created_rt, char *err, size_t errlen)
{
	struct argus_rb *out = NULL;
	struct argus_rb_producer prod;
	uint64_t nchunks, size;
	char final[SNAPSHOT_ID_MAX + 8];
	int fd, ret;

	/* room for every record: a chunk wastes less than one record at its end */
	nchunks = (c->state.len + c->window.len) / (SNAP_CHUNK_SIZE - ARGUS_EVENT_MAX_SIZE) + 2;
	size = 8192 + nchunks * (SNAP_CHUNK_SIZE + sizeof(struct argus_rb_chunk_header));
	snprintf(final, sizeof(final), "%s.argus", q->id);
	fd = safe_dir_create_tmp(dir_fd, final, tmp_name);
	if (fd < 0) {
		snprintf(err, errlen, "failed to create a temporary file for %s: %s", final, strerror(-fd));
		return fd;
	}
	tmp_dir_fd = dir_fd;
	tmp_live = 1;
	ret = argus_rb_create_fd(fd, size, SNAP_CHUNK_SIZE, &out);
	if (ret) {
		snprintf(err, errlen, "failed to create snapshot %s: %s", final, argus_rb_error(out));
		goto cleanup;
	}
	argus_rb_header(out)->created_ns = created_ns;
	argus_rb_header(out)->created_realtime_ns = created_rt;
	argus_rb_producer_init(out, &prod, (uint32_t)getpid());
	ret = write_recs(&prod, &c->state);
	if (!ret)
		ret = write_recs(&prod, &c->window);
	argus_rb_producer_close(&prod);
	if (ret) {
		snprintf(err, errlen, "failed to write snapshot %s: %s", final, argus_rb_error(out));
		goto cleanup;
	}
cleanup:
	argus_rb_close(out);
	if (ret) {
		unlinkat(dir_fd, tmp_name, 0);
		tmp_live = 0;
		close(fd);
		return ret;
	}
	return fd;
}

static void drop_tmp(int dir_fd, int fd)
{
	if (tmp_live)
		unlinkat(dir_fd, tmp_name, 0);
	tmp_live = 0;
	close(fd);
}

/* The index, the ring file (fd, written under tmp_name), the metadata and
 * the pruning, under the directory's lock (a writer at shutdown may overlap
 * the next daemon's). */
static int publish(int dir_fd, int fd, const struct hang_detector_config *cfg, const struct snapshot_request *q,
		   const struct collect *c, uint64_t created_ns, uint64_t created_rt, char *err, size_t errlen)
{
	char final[SNAPSHOT_ID_MAX + 8];
	struct index ix = {};
	int ret;

	ret = index_read(dir_fd, &ix);
	if (ret) {
		snprintf(err, errlen, "failed to read the snapshot index %s: %s", INDEX_NAME, strerror(-ret));
		goto cleanup;
	}
	/* listed before its files exist: a writer killed in between leaves
	 * files the index owns, so pruning still finds them */
	if (!index_has(&ix, q->id)) {
		snprintf(ix.ids[ix.n++], SNAPSHOT_ID_MAX, "%s", q->id);
		ret = index_write(dir_fd, &ix);
		if (ret) {
			snprintf(err, errlen, "failed to write the snapshot index %s: %s", INDEX_NAME,
				 strerror(-ret));
			goto cleanup;
		}
	}
	snprintf(final, sizeof(final), "%s.argus", q->id);
	ret = safe_dir_publish(dir_fd, fd, tmp_name, final);
	tmp_live = 0;
	if (ret)
		snprintf(err, errlen, "failed to rename snapshot %s into place: %s", final, strerror(-ret));
	else
		ret = write_meta(dir_fd, q, c, created_ns, created_rt, err, errlen);
	index_prune(dir_fd, &ix, q->id, cfg->max_count, cfg->max_total_bytes);
	if (index_write(dir_fd, &ix) && !ret) {
		snprintf(err, errlen, "failed to write the snapshot index %s", INDEX_NAME);
		ret = -EIO;
	}
cleanup:
	free(ix.ids);
	return ret;
}

int snapshot_write(const struct hang_detector_config *cfg, const struct snapshot_request *q,
		   char *err, size_t errlen)
{
	struct collect c = { .since = q->since_ns, .until = q->until_ns, .max = cfg->max_snapshot_bytes };
	struct argus_rb *ring = NULL;
	struct argus_rb_stats st;
	char final[SNAPSHOT_ID_MAX + 8];
	uint64_t created_ns, created_rt;
	struct stat sb;
	int ret, lock_fd = -1, tmp_fd = -1;

	if (!valid_id(q->id)) {
		snprintf(err, errlen, "bad snapshot id");
		return -EINVAL;
	}
	snprintf(final, sizeof(final), "%s.argus", q->id);
	ret = argus_rb_open(cfg->ring_path, 0, &ring);
	if (ret) {
		snprintf(err, errlen, "failed to open ring %s", argus_rb_error(ring));
		goto cleanup;
	}
	/* written before (an ongoing hang): replace it only while the ring still
	 * holds the hang's start */
	if (fstatat(cfg->dir_fd, final, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (argus_rb_stats(ring, &st) || st.first_ts > q->start_ns)) {
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

	tmp_fd = write_ring(cfg->dir_fd, q, &c, created_ns, created_rt, err, errlen);
	if (tmp_fd < 0) {
		ret = tmp_fd;
		goto cleanup;
	}
	/* An open file description of our own: flock excludes other writers
	 * (an inherited fd would share its lock with them). */
	lock_fd = openat(cfg->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX) < 0) {
		ret = -errno;
		snprintf(err, errlen, "failed to lock the snapshot directory: %s", strerror(errno));
		goto cleanup;
	}
	ret = publish(cfg->dir_fd, tmp_fd, cfg, q, &c, created_ns, created_rt, err, errlen);

cleanup:
	if (tmp_fd >= 0)
		drop_tmp(cfg->dir_fd, tmp_fd);
	if (lock_fd >= 0)
		close(lock_fd);
	argus_rb_close(ring);
	free(c.state.buf);
	free(c.window.buf);
	return ret;
}

unsigned snapshot_sweep(int dir_fd, pid_t writer)
{
	return safe_dir_sweep_tmp(dir_fd, writer);
}
