/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File-backed, multi-producer ring buffer (see argus_rb.h for the layout).
 *
 * Algorithm
 *   The file is mapped MAP_SHARED by every producer process and by readers.
 *   The data area is N fixed-size chunks; chunk i is described by chunk
 *   header i in the chunk table.  A producer owns one chunk at a time:
 *
 *   write (fast path, lock-free, owner only):
 *       memcpy the record at `used`, update first_ts/last_ts, then
 *       store-release {committed_bytes, nrecords} += {size, 1} (one word).
 *   take a chunk (slow path, out of line):
 *       seal the current chunk; seq = fetch_add(header.next_seq, 1);
 *       idx = seq % N; claim chunk idx with a CAS on its ownership word
 *       (state | owner_pid << 32).  A live OPEN chunk is skipped (counted in
 *       chunks_skipped) and the next seq is tried; a dead owner's OPEN chunk
 *       (kill(pid, 0) == ESRCH) is first sealed on its behalf.  Once claimed:
 *       count the old records as overwritten, mark seq = UINT64_MAX, reset
 *       the chunk header, store-release seq = the new sequence number.
 *   read (seqlock discipline, never writes):
 *       snapshot (seq, index) of every chunk holding data, sort by seq; per
 *       chunk: load seq + ownership, acquire committed_bytes, copy the data,
 *       acquire fence, reload seq + ownership; any change (other than the
 *       owner sealing its own chunk) means the chunk was taken meanwhile:
 *       drop the copy and count it torn.  Only verified copies are walked.
 *
 * Invariants
 *   I1 every byte below chunk.committed_bytes belongs to a complete record;
 *      committed_bytes only grows while chunk.seq is unchanged.
 *   I2 a chunk's seq only grows (a taker holding a stale, smaller seq gives
 *      the chunk back untouched), so readers can order chunks by seq.
 *   I3 accounting is exact when producers are quiescent:
 *        records_written = header.records_written + sum(nrecords of OPEN chunks)
 *                        = records_present + records_overwritten
 *      header.records_written/bytes_written are credited when a chunk is
 *      sealed (by its owner, or by the taker that finds the owner dead);
 *      records_overwritten is credited before a claimed chunk is reset.
 *      (A producer killed between its two sealing steps leaves the counters
 *      short by that chunk; the window is a few instructions per chunk.)
 *   I4 nothing in the file is a pointer; geometry is validated once on open,
 *      cached in the process-local handle and never re-read from the file, and
 *      every data address comes from argus_rb_chunk_data() (bounds-checked).
 *
 * Two pairs of adjacent, 8-aligned u32 fields of struct argus_rb_chunk_header
 * are always accessed as one 64-bit word:
 *   ownership word {state, owner_pid}: one CAS decides every ownership change;
 *   commit word {committed_bytes, nrecords}: one store-release commits a
 *   record, so a kill -9 can never leave the two counts disagreeing.  Liveness is kill(pid, 0): a zombie still counts as alive until
 * it is reaped, and a recycled pid keeps a dead chunk skipped (never lost).
 */
#include "argus_rb.h"
#include "argus_event.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the file format is little-endian");
_Static_assert(sizeof(struct argus_event_header) == 24, "schema v1 record header");
_Static_assert(sizeof(struct argus_rb_chunk_header) == 40, "chunk header layout");
_Static_assert(offsetof(struct argus_rb_chunk_header, state) % 8 == 0 &&
	       offsetof(struct argus_rb_chunk_header, owner_pid) ==
	       offsetof(struct argus_rb_chunk_header, state) + 4,
	       "state and owner_pid form one 8-byte ownership word");
_Static_assert(offsetof(struct argus_rb_chunk_header, committed_bytes) % 8 == 0 &&
	       offsetof(struct argus_rb_chunk_header, nrecords) ==
	       offsetof(struct argus_rb_chunk_header, committed_bytes) + 4,
	       "committed_bytes and nrecords form one 8-byte commit word");

#define CHUNK_TABLE_ALIGN 64u
#define DATA_ALIGN 4096u
#define MIN_CHUNKS 2u

struct argus_rb {
	int fd;
	int writable;
	uint8_t *map;                       /* whole file, MAP_SHARED */
	uint64_t map_size;
	struct argus_rb_file_header *hdr;
	struct argus_rb_chunk_header *chunks;
	/* Geometry validated on open; never re-read from the (shared) file. */
	uint64_t data_offset;
	uint32_t chunk_size;
	uint32_t nchunks;
	char path[256];
	char error[256 + 2 + 256];           /* "path: message" */
	/* argus_rb_create only: the new file's directory and names until renamed */
	int create_dfd;
	char create_name[256];
	char create_tmp[PATH_MAX];
	/* argus_rb_keep_on_full_disk: reuse allocated chunks on ENOSPC; while
	 * the disk is full, no new chunk's blocks are tried before this time */
	bool keep_on_full_disk;
	uint64_t nospace_retry_ns;
};

/* ---- errors ------------------------------------------------------------- */

/* Set the handle's message.  Producers in several threads share one handle:
 * concurrent failures may overwrite each other's text, never the return codes. */

__attribute__((format(printf, 3, 4)))
static int fail(struct argus_rb *rb, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(rb->error, sizeof rb->error, "%s: %s", rb->path, msg);
	return -err;
}

const char *argus_rb_error(const struct argus_rb *rb)
{
	if (!rb)
		return "out of memory";
	return rb->error[0] ? rb->error : "no error";
}

/* ---- addressing: the only places that turn file offsets into addresses --- */

static inline struct argus_rb_chunk_header *chunk_header(const struct argus_rb *rb, uint32_t idx)
{
	return idx < rb->nchunks ? &rb->chunks[idx] : NULL;
}

/* (chunk index, offset, length) -> address, or NULL when out of bounds. */
static inline uint8_t *argus_rb_chunk_data(const struct argus_rb *rb, uint32_t idx,
					   uint32_t offset, uint32_t len)
{
	if (idx >= rb->nchunks || offset > rb->chunk_size || len > rb->chunk_size - offset)
		return NULL;
	return rb->map + rb->data_offset + (uint64_t)idx * rb->chunk_size + offset;
}

/* Two adjacent u32 fields accessed as one 8-byte atomic word (see top). */
typedef uint64_t __attribute__((may_alias)) packed_word;

static inline packed_word *ownership(struct argus_rb_chunk_header *c)
{
	return (packed_word *)(void *)&c->state;
}

static inline uint64_t owner_make(uint32_t state, uint32_t pid)
{
	return (uint64_t)pid << 32 | state;
}

static inline uint32_t owner_state(uint64_t w) { return (uint32_t)w; }
static inline uint32_t owner_pid(uint64_t w) { return (uint32_t)(w >> 32); }

static inline packed_word *commit_word(struct argus_rb_chunk_header *c)
{
	return (packed_word *)(void *)&c->committed_bytes;
}

static inline uint64_t commit_make(uint32_t bytes, uint32_t nrecords)
{
	return (uint64_t)nrecords << 32 | bytes;
}

static inline uint32_t commit_bytes(uint64_t w) { return (uint32_t)w; }
static inline uint32_t commit_nrecords(uint64_t w) { return (uint32_t)(w >> 32); }

static bool process_alive(uint32_t pid)
{
	if (pid == 0)
		return false;
	if (pid == (uint32_t)getpid())
		return true;
	return !(kill((pid_t)pid, 0) == -1 && errno == ESRCH);
}

/* ---- layout ------------------------------------------------------------- */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct layout {
	uint64_t chunk_table_offset, data_offset;
	uint32_t nchunks;
};

/* Largest N such that table + N chunks fit in `size`; N >= MIN_CHUNKS. */
static int compute_layout(uint64_t size, uint32_t chunk_size, struct layout *l)
{
	uint64_t table = align_up(sizeof(struct argus_rb_file_header), CHUNK_TABLE_ALIGN);
	uint64_t per_chunk = (uint64_t)chunk_size + sizeof(struct argus_rb_chunk_header);
	uint64_t n;

	if (size <= table)
		return -1;
	n = (size - table) / per_chunk;
	if (n > UINT32_MAX - 1)
		n = UINT32_MAX - 1;
	while (n >= MIN_CHUNKS &&
	       align_up(table + n * sizeof(struct argus_rb_chunk_header), DATA_ALIGN) +
	       n * chunk_size > size)
		n--;
	if (n < MIN_CHUNKS)
		return -1;
	l->chunk_table_offset = table;
	l->data_offset = align_up(table + n * sizeof(struct argus_rb_chunk_header), DATA_ALIGN);
	l->nchunks = (uint32_t)n;
	return 0;
}

/* This host as its processes see it: the kernel's boot id (a UUID string,
 * 16 bytes here) and the hostname of the caller's UTS namespace.  Either is
 * left zero when it cannot be read (no procfs: a sandbox, macOS). */
static void host_identity(uint8_t boot_id[16], char hostname[64])
{
	char text[64];
	struct utsname u;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	unsigned n = 0;

	if (f && fgets(text, sizeof text, f)) {
		for (const char *c = text; *c && n < 32; c++) {
			int v = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 :
				*c >= 'A' && *c <= 'F' ? *c - 'A' + 10 : -1;
			if (v < 0)
				continue;       /* the dashes */
			boot_id[n / 2] = (uint8_t)(boot_id[n / 2] << 4 | v);
			n++;
		}
		if (n != 32)
			memset(boot_id, 0, 16);
	}
	if (f)
		fclose(f);
	if (uname(&u) == 0)
		memcpy(hostname, u.nodename, strnlen(u.nodename, 64));   /* NUL-padded (h is zeroed) */
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- open / create / close ---------------------------------------------- */

static struct argus_rb *handle_new(const char *path)
{
	struct argus_rb *rb = calloc(1, sizeof *rb);

	if (!rb)
		return NULL;
	rb->fd = -1;
	rb->create_dfd = -1;
	snprintf(rb->path, sizeof rb->path, "%s", path);
	return rb;
}

static int map_file(struct argus_rb *rb, uint64_t size)
{
	int prot = PROT_READ | (rb->writable ? PROT_WRITE : 0);
	void *m = mmap(NULL, size, prot, MAP_SHARED, rb->fd, 0);

	if (m == MAP_FAILED)
		return fail(rb, errno, "mmap of %llu bytes: %s", (unsigned long long)size, strerror(errno));
	rb->map = m;
	rb->map_size = size;
	rb->hdr = m;
	return 0;
}

#define OFF(field) ((unsigned)offsetof(struct argus_rb_file_header, field))

/* Check a header copy against itself and the real file size. */
static int validate_header(struct argus_rb *rb, const struct argus_rb_file_header *h, uint64_t st_size)
{
	uint64_t table_end, data_end;

	if (memcmp(h->magic, ARGUS_RB_MAGIC, sizeof h->magic) != 0)
		return fail(rb, EBADMSG, "bad magic at offset 0x%x: not an Argus ring buffer", OFF(magic));
	if (h->version != ARGUS_RB_VERSION)
		return fail(rb, ENOTSUP, "unsupported version %u at offset 0x%x (this build reads %u)",
			    h->version, OFF(version), ARGUS_RB_VERSION);
	/* A file from before the host identity fields is read as it is. */
	if (h->header_size != sizeof *h && h->header_size != ARGUS_RB_HEADER_SIZE_V1)
		return fail(rb, EBADMSG, "bad header_size %u at offset 0x%x, expected %zu (or %u)",
			    h->header_size, OFF(header_size), sizeof *h, ARGUS_RB_HEADER_SIZE_V1);
	if (h->chunk_header_size != sizeof(struct argus_rb_chunk_header))
		return fail(rb, EBADMSG, "bad chunk_header_size %u at offset 0x%x, expected %zu",
			    h->chunk_header_size, OFF(chunk_header_size), sizeof(struct argus_rb_chunk_header));
	if (h->schema_version < ARGUS_SCHEMA_VERSION_MIN || h->schema_version > ARGUS_SCHEMA_VERSION)
		return fail(rb, ENOTSUP, "unsupported schema_version %u at offset 0x%x (this build reads %u to %u)",
			    h->schema_version, OFF(schema_version), ARGUS_SCHEMA_VERSION_MIN, ARGUS_SCHEMA_VERSION);
	if (st_size < h->file_size)
		return fail(rb, EBADMSG, "truncated: file is %llu bytes, header says %llu",
			    (unsigned long long)st_size, (unsigned long long)h->file_size);
	if (h->chunk_size % 8 || h->chunk_size < ARGUS_EVENT_MAX_SIZE)
		return fail(rb, EBADMSG, "bad chunk_size %u at offset 0x%x: must be a multiple of 8 and >= %u",
			    h->chunk_size, OFF(chunk_size), ARGUS_EVENT_MAX_SIZE);
	if (h->nchunks < 1 || h->nchunks == UINT32_MAX)
		return fail(rb, EBADMSG, "bad nchunks %u at offset 0x%x", h->nchunks, OFF(nchunks));
	if (h->chunk_table_offset < h->header_size || h->chunk_table_offset % 8 ||
	    __builtin_mul_overflow((uint64_t)h->nchunks, sizeof(struct argus_rb_chunk_header), &table_end) ||
	    __builtin_add_overflow(table_end, h->chunk_table_offset, &table_end) ||
	    table_end > h->data_offset)
		return fail(rb, EBADMSG, "bad chunk_table_offset 0x%llx at offset 0x%x: "
			    "table of %u chunks must lie between the header and data_offset 0x%llx",
			    (unsigned long long)h->chunk_table_offset, OFF(chunk_table_offset),
			    h->nchunks, (unsigned long long)h->data_offset);
	if (h->data_offset % 8 ||
	    __builtin_mul_overflow((uint64_t)h->nchunks, (uint64_t)h->chunk_size, &data_end) ||
	    __builtin_add_overflow(data_end, h->data_offset, &data_end) ||
	    data_end > h->file_size)
		return fail(rb, EBADMSG, "bad data_offset 0x%llx at offset 0x%x: %u chunks of %u bytes "
			    "end past file_size %llu",
			    (unsigned long long)h->data_offset, OFF(data_offset), h->nchunks,
			    h->chunk_size, (unsigned long long)h->file_size);
	return 0;
}

static void adopt_geometry(struct argus_rb *rb, const struct argus_rb_file_header *h)
{
	rb->chunks = (struct argus_rb_chunk_header *)(rb->map + h->chunk_table_offset);
	rb->data_offset = h->data_offset;
	rb->chunk_size = h->chunk_size;
	rb->nchunks = h->nchunks;
}

/*
 * Producers write the whole system's trace into the file, so the file must be
 * nobody else's: a buffer another user created beforehand (they may hold a
 * descriptor opened earlier and read or change the trace through it, or chmod
 * it back), or one group/others can open, is refused, never fixed up.
 */
static int check_writable_file(struct argus_rb *rb, const struct stat *st)
{
	if (st->st_uid != geteuid())
		return fail(rb, EPERM, "owned by uid %u, not by uid %u: another user could read or change the "
			    "trace through it; remove it or choose another path", (unsigned)st->st_uid,
			    (unsigned)geteuid());
	if (st->st_mode & 077)
		return fail(rb, EPERM, "mode %04o lets group or others open it: traces are owner-only "
			    "(chmod 600 it, or remove it)", (unsigned)(st->st_mode & 07777));
	return 0;
}

/* The directory a new buffer is created in: others must not be able to
 * replace our file there (sticky directories like /tmp protect our entry). */
static int check_create_dir(struct argus_rb *rb, int dfd, const char *dir)
{
	struct stat st;

	if (fstat(dfd, &st) < 0)
		return fail(rb, errno, "fstat of directory %s: %s", dir, strerror(errno));
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return fail(rb, EPERM, "directory %s is owned by uid %u (not root or you): refused",
			    dir, (unsigned)st.st_uid);
	if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
		return fail(rb, EPERM, "directory %s is writable by other users (mode %04o) and not sticky: "
			    "refused", dir, (unsigned)(st.st_mode & 07777));
	return 0;
}

int argus_rb_open(const char *path, int writable, struct argus_rb **out)
{
	struct argus_rb *rb = handle_new(path);
	struct argus_rb_file_header h;
	struct stat st;
	ssize_t got;
	int rc;

	*out = rb;
	if (!rb)
		return -ENOMEM;
	rb->writable = writable;
	/* O_NONBLOCK: a FIFO (or a device) at the path must not block the open
	 * before fstat can refuse it; it changes nothing for a regular file. */
	rb->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (rb->fd < 0 && errno == ELOOP)
		return fail(rb, ELOOP, "is a symbolic link: refused, pass the file it points to");
	if (rb->fd < 0)
		return fail(rb, errno, "%s", strerror(errno));
	if (fstat(rb->fd, &st) < 0)
		return fail(rb, errno, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(rb, EINVAL, "not a regular file");
	if (writable) {
		rc = check_writable_file(rb, &st);
		if (rc)
			return rc;
	}
	if ((uint64_t)st.st_size < ARGUS_RB_HEADER_SIZE_V1)
		return fail(rb, EBADMSG, "truncated: file is %llu bytes, smaller than the %u-byte header",
			    (unsigned long long)st.st_size, ARGUS_RB_HEADER_SIZE_V1);
	/* An old, shorter header reads with zeros past its end (never used:
	 * header_size says which fields the file has). */
	memset(&h, 0, sizeof h);
	got = pread(rb->fd, &h, sizeof h, 0);
	if (got < (ssize_t)ARGUS_RB_HEADER_SIZE_V1)
		return fail(rb, got < 0 ? errno : EIO, "reading the header: %s",
			    got < 0 ? strerror(errno) : "short read");
	if ((uint64_t)got < sizeof h && h.header_size == sizeof h)
		return fail(rb, EBADMSG, "truncated: file is %llu bytes, smaller than the %zu-byte header",
			    (unsigned long long)st.st_size, sizeof h);
	rc = validate_header(rb, &h, (uint64_t)st.st_size);
	if (rc)
		return rc;
	rc = map_file(rb, h.file_size);
	if (rc)
		return rc;
	/* The file may have been re-created between pread and mmap: the mapped
	 * geometry must be the one we validated (fields up to `next_seq` never
	 * change after creation). */
	if (memcmp(rb->hdr, &h, offsetof(struct argus_rb_file_header, next_seq)) != 0)
		return fail(rb, EAGAIN, "header changed while opening (file re-created?)");
	adopt_geometry(rb, &h);
	/* A continued older buffer gets this build's records from now on, and
	 * readers take every version up to the one the header names. */
	if (writable && rb->hdr->schema_version < ARGUS_SCHEMA_VERSION)
		rb->hdr->schema_version = ARGUS_SCHEMA_VERSION;
	rb->error[0] = 0;
	return 0;
}

/* A failed create: the temporary file goes, with the directory handle; rc passes through. */
static int drop_tmp(struct argus_rb *rb, int rc)
{
	unlinkat(rb->create_dfd, rb->create_tmp, 0);
	close(rb->create_dfd);
	rb->create_dfd = -1;
	return rc;
}

/*
 * A new buffer is never an existing file truncated (its owner, and whoever
 * opened it earlier, would keep access to the trace): it is a new 0600 file
 * under a temporary name (O_CREAT | O_EXCL | O_NOFOLLOW) in the target's
 * directory, renamed over the path once its header is complete.  An existing
 * entry at the path must be a regular file of ours (or root's) to be replaced:
 * a link, a FIFO or another user's file is refused.  Sets rb->fd and the
 * rename state (create_dfd, create_tmp, create_name); the caller renames.
 */
static int create_file(struct argus_rb *rb, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[sizeof rb->create_tmp];
	struct stat st;
	int rc;

	if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + (slash == path), path);
	else
		snprintf(dir, sizeof dir, ".");
	snprintf(rb->create_name, sizeof rb->create_name, "%s", slash ? slash + 1 : path);
	if (!rb->create_name[0] || strlen(slash ? slash + 1 : path) >= sizeof rb->create_name)
		return fail(rb, EINVAL, "bad file name");
	rb->create_dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rb->create_dfd < 0)
		return fail(rb, errno, "directory %s: %s", dir, strerror(errno));
	rc = check_create_dir(rb, rb->create_dfd, dir);
	if (rc == 0 && fstatat(rb->create_dfd, rb->create_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			rc = fail(rb, ELOOP, "is a symbolic link: refused, pass the file it points to");
		else if (!S_ISREG(st.st_mode))
			rc = fail(rb, EINVAL, "not a regular file: refused");
		else if (st.st_uid != 0 && st.st_uid != geteuid())
			rc = fail(rb, EPERM, "owned by uid %u (not root or you): refused; remove it or choose "
				  "another path", (unsigned)st.st_uid);
	}
	for (unsigned attempt = 0; rc == 0 && attempt < 64; attempt++) {
		uint64_t r = clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)attempt * 0x9e3779b97f4a7c15ull;

		snprintf(rb->create_tmp, sizeof rb->create_tmp, ".%.200s.%016llx.tmp", rb->create_name,
			 (unsigned long long)r);
		rb->fd = openat(rb->create_dfd, rb->create_tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0600);
		if (rb->fd >= 0)
			break;
		if (errno != EEXIST)
			rc = fail(rb, errno, "creating a file in %s: %s", dir, strerror(errno));
	}
	if (rc == 0 && rb->fd < 0)
		rc = fail(rb, EEXIST, "creating a file in %s: no free temporary name", dir);
	if (rc) {
		close(rb->create_dfd);
		rb->create_dfd = -1;
		return rc;
	}
	/* The umask may have cleared bits we want, never added: still, owner
	 * only whatever it is (traces hold names and addresses of everyone). */
	if (fchmod(rb->fd, 0600) < 0)
		return drop_tmp(rb, fail(rb, errno, "fchmod 0600: %s", strerror(errno)));
	return 0;
}

static int init_new_file(struct argus_rb *rb, uint64_t size, uint32_t chunk_size, const struct layout *lp);

/* The handle of a buffer about to be created, *out set either way (a failed
 * one carries its error); the size and chunk size checked into *l. */
static int new_writable(const char *name, uint64_t size, uint32_t chunk_size, struct layout *l,
			struct argus_rb **out)
{
	struct argus_rb *rb = handle_new(name);

	*out = rb;
	if (!rb)
		return -ENOMEM;
	rb->writable = 1;
	if (chunk_size % 8 || chunk_size < ARGUS_EVENT_MAX_SIZE)
		return fail(rb, EINVAL, "chunk size %u: must be a multiple of 8 and >= %u",
			    chunk_size, ARGUS_EVENT_MAX_SIZE);
	if (compute_layout(size, chunk_size, l) < 0)
		return fail(rb, EINVAL, "size %llu holds fewer than %u chunks of %u bytes",
			    (unsigned long long)size, MIN_CHUNKS, chunk_size);
	return 0;
}

int argus_rb_create(const char *path, uint64_t size, uint32_t chunk_size, struct argus_rb **out)
{
	struct argus_rb *rb;
	struct layout l;
	int rc;

	rc = new_writable(path, size, chunk_size, &l, out);
	if (rc)
		return rc;
	rb = *out;
	rc = create_file(rb, path);
	if (rc)
		return rc;
	rc = init_new_file(rb, size, chunk_size, &l);
	if (rc)
		return drop_tmp(rb, rc);
	/* Publish: the complete buffer replaces whatever is at the path (a link
	 * planted there is replaced, not followed). */
	if (renameat(rb->create_dfd, rb->create_tmp, rb->create_dfd, rb->create_name) < 0)
		return drop_tmp(rb, fail(rb, errno, "rename into place: %s", strerror(errno)));
	close(rb->create_dfd);
	rb->create_dfd = -1;
	return 0;
}

int argus_rb_create_fd(int fd, uint64_t size, uint32_t chunk_size, struct argus_rb **out)
{
	struct argus_rb *rb;
	struct layout l;
	int rc;

	rc = new_writable("(new file)", size, chunk_size, &l, out);
	if (rc)
		return rc;
	rb = *out;
	rb->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (rb->fd < 0)
		return fail(rb, errno, "dup: %s", strerror(errno));
	return init_new_file(rb, size, chunk_size, &l);
}

/* A new buffer in rb->fd (empty, ours): size, mapping, header. */
static int init_new_file(struct argus_rb *rb, uint64_t size, uint32_t chunk_size, const struct layout *lp)
{
	struct argus_rb_file_header h;
	struct layout l = *lp;
	int rc;

	/* Sparse: only touched chunks take disk space.  ftruncate zero-fills, so
	 * every chunk starts FREE with nothing committed. */
	if (ftruncate(rb->fd, (off_t)size) < 0)
		return fail(rb, errno, "ftruncate to %llu bytes: %s", (unsigned long long)size, strerror(errno));
#ifndef __APPLE__
	/* The header and chunk table are stored through the mapping: their
	 * blocks first, so a full disk is ENOSPC here, not SIGBUS below
	 * (filesystems without fallocate keep the old behaviour). */
	rc = posix_fallocate(rb->fd, 0, (off_t)l.data_offset);
	if (rc && rc != EOPNOTSUPP && rc != EINVAL)
		return fail(rb, rc, "cannot allocate disk for the header: %s", strerror(rc));
#endif
	rc = map_file(rb, size);
	if (rc)
		return rc;

	memset(&h, 0, sizeof h);
	h.version = ARGUS_RB_VERSION;
	h.header_size = sizeof h;
	h.chunk_header_size = sizeof(struct argus_rb_chunk_header);
	h.schema_version = ARGUS_SCHEMA_VERSION;
	h.file_size = size;
	h.chunk_table_offset = l.chunk_table_offset;
	h.data_offset = l.data_offset;
	h.chunk_size = chunk_size;
	h.nchunks = l.nchunks;
	h.created_ns = clock_ns(CLOCK_MONOTONIC);
	h.created_realtime_ns = clock_ns(CLOCK_REALTIME);
	host_identity(h.boot_id, h.hostname);
	memcpy(rb->hdr, &h, sizeof h);
	/* Release: orders every header field above before the magic, so an opener
	 * in another process that sees the magic sees a complete header. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(rb->hdr->magic, ARGUS_RB_MAGIC, sizeof h.magic);
	adopt_geometry(rb, &h);
	return 0;
}

/* ---- SIGBUS on the mapping ------------------------------------------------ */

/*
 * A store into a MAP_SHARED page past the end of the file raises SIGBUS: the
 * file was truncated under the producer (by root, or by anyone before the
 * ownership checks existed).  The default action kills the daemon without a
 * word.  Instead the handler replaces the whole mapping, at the same address,
 * with private zero pages, so the faulting instruction re-executes against
 * plain memory and completes; nothing more reaches the file, and what was
 * committed to it before the fault (whatever the truncation left) stays as
 * it is.  The owner polls argus_rb_faulted() and stops.  This needs no
 * sigsetjmp around every write (the fast path stays a memcpy).  One buffer
 * per process is guarded (the daemon's); mmap is a plain system call, safe in
 * a handler on Linux and macOS although POSIX does not list it.
 */
static struct {
	uint8_t *volatile map;
	volatile uint64_t size;
	volatile int prot;
	volatile uint64_t offset;
	volatile sig_atomic_t hit;
} bus_guard;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uint8_t *m = bus_guard.map, *a = si->si_addr;

	(void)uc;
	if (m && a >= m && a < m + bus_guard.size &&
	    mmap(m, bus_guard.size, bus_guard.prot, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED) {
		bus_guard.offset = (uint64_t)(a - m);
		bus_guard.hit = 1;
		return;
	}
	/* Not the buffer: the default action, when the instruction faults again. */
	signal(sig, SIG_DFL);
}

int argus_rb_guard_sigbus(struct argus_rb *rb)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	bus_guard.size = rb->map_size;
	bus_guard.prot = PROT_READ | (rb->writable ? PROT_WRITE : 0);
	bus_guard.hit = 0;
	bus_guard.map = rb->map;
	if (sigaction(SIGBUS, &sa, NULL) < 0)
		return fail(rb, errno, "sigaction SIGBUS: %s", strerror(errno));
	return 0;
}

int argus_rb_faulted(const struct argus_rb *rb, uint64_t *offset)
{
	if (!bus_guard.hit || bus_guard.map != rb->map)
		return 0;
	if (offset)
		*offset = bus_guard.offset;
	return 1;
}

void argus_rb_close(struct argus_rb *rb)
{
	if (!rb)
		return;
	if (rb->map && bus_guard.map == rb->map)
		bus_guard.map = NULL;
	if (rb->map)
		munmap(rb->map, rb->map_size);
	if (rb->create_dfd >= 0)
		close(rb->create_dfd);
	if (rb->fd >= 0)
		close(rb->fd);
	free(rb);
}

struct argus_rb_file_header *argus_rb_header(struct argus_rb *rb)
{
	return rb->hdr;
}

void argus_rb_set_daemon_pid(struct argus_rb *rb, uint32_t pid)
{
	if (rb->writable)  /* a plain flag for readers; nothing is ordered by it */
		__atomic_store_n(&rb->hdr->daemon_pid, pid, __ATOMIC_RELAXED);
}

static bool has_identity(const struct argus_rb *rb)
{
	return rb->hdr->header_size >= offsetof(struct argus_rb_file_header, hostname) + sizeof rb->hdr->hostname;
}

int argus_rb_identity(const struct argus_rb *rb, uint8_t boot_id[16], char hostname[65])
{
	memset(boot_id, 0, 16);
	memset(hostname, 0, 65);
	if (!has_identity(rb))
		return -ENOENT;
	memcpy(boot_id, rb->hdr->boot_id, 16);
	memcpy(hostname, rb->hdr->hostname, 64);
	return 0;
}

int argus_rb_set_identity(struct argus_rb *rb, const uint8_t boot_id[16], const char *hostname)
{
	if (!rb->writable)
		return -EBADF;
	if (!has_identity(rb))
		return -ENOENT;
	memcpy(rb->hdr->boot_id, boot_id, 16);
	memset(rb->hdr->hostname, 0, sizeof rb->hdr->hostname);
	memcpy(rb->hdr->hostname, hostname, strnlen(hostname, sizeof rb->hdr->hostname));
	return 0;
}

void argus_rb_add_lost(struct argus_rb *rb, uint64_t count)
{
	if (rb->writable)  /* statistics counter, no ordering with data needed */
		__atomic_fetch_add(&rb->hdr->records_lost, count, __ATOMIC_RELAXED);
}

void argus_rb_add_switches_unreported(struct argus_rb *rb, uint64_t count)
{
	if (rb->writable)  /* statistics counter, like records_lost */
		__atomic_fetch_add(&rb->hdr->switches_unreported, count, __ATOMIC_RELAXED);
}

void argus_rb_add_extra_rows(struct argus_rb *rb, uint64_t count)
{
	if (rb->writable)  /* statistics counter, like records_lost */
		__atomic_fetch_add(&rb->hdr->extra_rows, count, __ATOMIC_RELAXED);
}

/* ---- producer ------------------------------------------------------------ */

void argus_rb_producer_init(struct argus_rb *rb, struct argus_rb_producer *p, uint32_t producer_id)
{
	p->rb = rb;
	p->chunk_index = UINT32_MAX;
	p->seq = 0;
	p->used = 0;
	p->producer_id = producer_id;
}

/* Credit a chunk's records to the written counters and mark it SEALED.
 * `owner_word` is the chunk's current ownership word (OPEN, pid). */
static bool seal_chunk(struct argus_rb *rb, struct argus_rb_chunk_header *c, uint64_t owner_word)
{
	/* Relaxed: the owner is us, or dead; nobody else writes these fields
	 * while the chunk is OPEN. */
	bool resetting = __atomic_load_n(&c->seq, __ATOMIC_RELAXED) == UINT64_MAX;
	uint64_t commit = __atomic_load_n(commit_word(c), __ATOMIC_RELAXED);
	uint64_t expect = owner_word;

	/* Release: orders the owner's record and chunk-header stores before the
	 * SEALED state, so a taker that acquires SEALED sees the final nrecords.
	 * The CAS makes exactly one sealer credit the chunk. */
	if (!__atomic_compare_exchange_n(ownership(c), &expect,
					 owner_make(ARGUS_RB_CHUNK_SEALED, owner_pid(owner_word)),
					 false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return false;
	/* A chunk whose taker died mid-reset (seq == UINT64_MAX) holds records
	 * already credited as overwritten: credit nothing. */
	if (!resetting) {
		/* Statistics counters: no ordering with the data needed. */
		__atomic_fetch_add(&rb->hdr->records_written, commit_nrecords(commit), __ATOMIC_RELAXED);
		__atomic_fetch_add(&rb->hdr->bytes_written, commit_bytes(commit), __ATOMIC_RELAXED);
	}
	return true;
}

static void producer_seal_current(struct argus_rb_producer *p)
{
	struct argus_rb_chunk_header *c = chunk_header(p->rb, p->chunk_index);

	if (c)  /* relaxed: our own ownership word, only we change it while OPEN */
		seal_chunk(p->rb, c, __atomic_load_n(ownership(c), __ATOMIC_RELAXED));
	p->chunk_index = UINT32_MAX;
	p->used = 0;
}

/* Reset a chunk we just claimed and publish it under sequence number `seq`. */
static void reset_claimed_chunk(struct argus_rb *rb, struct argus_rb_chunk_header *c,
				uint64_t old_state, uint64_t seq)
{
	uint64_t old_seq = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
	uint32_t old_n = commit_nrecords(__atomic_load_n(commit_word(c), __ATOMIC_RELAXED));

	if (old_state == ARGUS_RB_CHUNK_SEALED && old_seq != UINT64_MAX && old_n > 0) {
		/* Exact loss accounting before the records disappear.  Relaxed:
		 * counters only, readers tolerate a stale snapshot. */
		__atomic_fetch_add(&rb->hdr->records_overwritten, old_n, __ATOMIC_RELAXED);
		__atomic_fetch_add(&rb->hdr->chunks_overwritten, 1, __ATOMIC_RELAXED);
	}
	/* Seqlock write side: mark the chunk as changing ... */
	__atomic_store_n(&c->seq, UINT64_MAX, __ATOMIC_RELAXED);
	/* Release fence: orders the seq = UINT64_MAX store before every reset and
	 * record store that follows, so a reader that observes any of them after
	 * its acquire fence also observes the changed seq and drops its copy. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(commit_word(c), 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->first_ts, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->last_ts, 0, __ATOMIC_RELAXED);
	/* Release: orders the reset above before the new seq; a reader that
	 * acquires the new seq sees committed_bytes = 0 or later commits. */
	__atomic_store_n(&c->seq, seq, __ATOMIC_RELEASE);
}

/*
 * The file is sparse, so the first write into a never-used chunk allocates
 * disk blocks.  Through a MAP_SHARED mapping a full disk would surface as
 * SIGBUS in the middle of a record; reserving the chunk's blocks with
 * fallocate() first turns that into an ENOSPC the producer can report, and
 * keeps everything already recorded intact.  Once per chunk, so off the
 * fast path.
 */
static int reserve_chunk_blocks(struct argus_rb *rb, uint32_t idx)
{
	off_t off = (off_t)(rb->data_offset + (uint64_t)idx * rb->chunk_size);
#ifdef __APPLE__
	/* macOS has no posix_fallocate, and fcntl(F_PREALLOCATE) only grows a
	 * file at its end: it cannot reserve a hole inside this sparse file.
	 * Skipped: on a full disk a store into a new chunk may fault. */
	int rc = 0;
	(void)off;
#else
	int rc = posix_fallocate(rb->fd, off, (off_t)rb->chunk_size);
#endif

	/* Filesystems without fallocate support (EOPNOTSUPP/EINVAL) keep the
	 * old behaviour rather than refusing to trace. */
	if (rc == 0 || rc == EOPNOTSUPP || rc == EINVAL)
		return 0;
	errno = rc;
	return -1;
}

void argus_rb_keep_on_full_disk(struct argus_rb *rb)
{
	rb->keep_on_full_disk = true;
	/* a new session: a full disk of an earlier one is found again if it is
	 * still full (statistics flag, orders nothing) */
	if (rb->writable)
		__atomic_store_n(&rb->hdr->disk_full_since_ns, 0, __ATOMIC_RELAXED);
}

#define NOSPACE_RETRY_NS 1000000000ull

/* keep_on_full_disk: a FREE chunk whose blocks cannot be had now.  True while
 * the last failure is under a second old (no fallocate tried), else tries
 * them; the header says since when the disk is full, or that it no longer is. */
static bool chunk_blocks_unavailable(struct argus_rb *rb, uint32_t idx, int *err)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (rb->nospace_retry_ns && now < rb->nospace_retry_ns) {
		*err = ENOSPC;
		return true;
	}
	if (reserve_chunk_blocks(rb, idx) == 0) {
		/* statistics flag, read by `status`; orders nothing */
		if (__atomic_load_n(&rb->hdr->disk_full_since_ns, __ATOMIC_RELAXED))
			__atomic_store_n(&rb->hdr->disk_full_since_ns, 0, __ATOMIC_RELAXED);
		rb->nospace_retry_ns = 0;
		return false;
	}
	*err = errno;
	if (*err != ENOSPC && *err != EDQUOT)
		return true;
	rb->nospace_retry_ns = now + NOSPACE_RETRY_NS;
	/* statistics flag as above; the first producer to see the full disk sets it */
	if (!__atomic_load_n(&rb->hdr->disk_full_since_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&rb->hdr->disk_full_since_ns, clock_ns(CLOCK_REALTIME), __ATOMIC_RELAXED);
	return true;
}

/* Slow path: seal the current chunk and claim the next one in ring order. */
__attribute__((noinline))
static int producer_next_chunk(struct argus_rb_producer *p)
{
	struct argus_rb *rb = p->rb;
	uint32_t self = (uint32_t)getpid();

	int nospace = 0;

	if (!rb->writable)
		return fail(rb, EBADF, "buffer is open read-only");
	producer_seal_current(p);
	for (uint64_t attempt = 0; attempt < 2ull * rb->nchunks + 2; attempt++) {
		/* Relaxed: seq numbers only need to be unique; the claim CAS below
		 * orders access to the chunk itself. */
		uint64_t seq = __atomic_fetch_add(&rb->hdr->next_seq, 1, __ATOMIC_RELAXED);
		uint32_t idx = (uint32_t)(seq % rb->nchunks);
		struct argus_rb_chunk_header *c = chunk_header(rb, idx);
		/* Acquire: pairs with the release of the previous owner's SEALED
		 * store (or the creator's zero fill) so we see its final header. */
		uint64_t own = __atomic_load_n(ownership(c), __ATOMIC_ACQUIRE);

		if (owner_state(own) == ARGUS_RB_CHUNK_OPEN) {
			if (process_alive(owner_pid(own)))
				goto skip;
			/* Dead producer (kill -9): its committed records stay
			 * readable; seal them on its behalf, then take over. */
			if (!seal_chunk(rb, c, own))
				goto skip;
			own = owner_make(ARGUS_RB_CHUNK_SEALED, owner_pid(own));
		}
		/* Acquire on success: we must see everything the last owner
		 * wrote before releasing the chunk (nrecords, seq). */
		if (!__atomic_compare_exchange_n(ownership(c), &own,
						 owner_make(ARGUS_RB_CHUNK_OPEN, self), false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			goto skip;
		uint64_t old_seq = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
		if (owner_state(own) != ARGUS_RB_CHUNK_FREE && old_seq != UINT64_MAX && old_seq > seq) {
			/* We were descheduled for a whole lap: the chunk already
			 * holds newer data.  Give it back untouched (keeps I2).
			 * Release: nothing of ours to publish, but keeps the SEALED
			 * store ordered after our reads above. */
			__atomic_store_n(ownership(c), own, __ATOMIC_RELEASE);
			goto skip;
		}
		if (owner_state(own) == ARGUS_RB_CHUNK_FREE && rb->keep_on_full_disk &&
		    chunk_blocks_unavailable(rb, idx, &nospace)) {
			/* Full disk: the next chunk in ring order that has blocks
			 * already takes the records (the oldest go first, as on a
			 * wrap).  Release: keeps our reads above ordered before
			 * the hand-back of the never-written chunk. */
			__atomic_store_n(ownership(c), own, __ATOMIC_RELEASE);
			if (nospace != ENOSPC && nospace != EDQUOT)
				return fail(rb, nospace, "cannot allocate disk for chunk %u: %s", idx, strerror(nospace));
			continue;
		}
		if (owner_state(own) == ARGUS_RB_CHUNK_FREE && !rb->keep_on_full_disk &&
		    reserve_chunk_blocks(rb, idx) < 0) {
			int err = errno;
			/* Give the never-written chunk back; records already in the
			 * file are untouched, the caller counts this record lost.
			 * Release: keeps our reads above ordered before the hand-back. */
			__atomic_store_n(ownership(c), own, __ATOMIC_RELEASE);
			return fail(rb, err, "cannot allocate disk for chunk %u: %s", idx, strerror(err));
		}
		reset_claimed_chunk(rb, c, owner_state(own), seq);
		p->chunk_index = idx;
		p->seq = seq;
		p->used = 0;
		return 0;
skip:
		/* Statistics counter only. */
		__atomic_fetch_add(&rb->hdr->chunks_skipped, 1, __ATOMIC_RELAXED);
	}
	if (nospace)
		return fail(rb, nospace, "cannot allocate disk for a chunk (%s), and none of the %u chunks "
			    "allocated before is free to reuse", strerror(nospace), rb->nchunks);
	return fail(rb, EBUSY, "no chunk available: all %u chunks are owned by live producers",
		    rb->nchunks);
}

static inline bool record_frame_ok(const void *rec, uint32_t size)
{
	uint16_t declared;

	if (size < sizeof(struct argus_event_header) || size % 8 || size > ARGUS_EVENT_MAX_SIZE)
		return false;
	memcpy(&declared, (const uint8_t *)rec + offsetof(struct argus_event_header, size), sizeof declared);
	return declared == size;
}

uint64_t argus_rb_record_last_ts(const void *rec)
{
	const struct argus_event_header *h = rec;

	if (h->type == ARGUS_EV_SYSCALL && h->size >= sizeof(struct argus_ev_syscall))
		return h->ts_ns + ((const struct argus_ev_syscall *)rec)->exit_delta_ns;
	return h->ts_ns;
}

int argus_rb_write(struct argus_rb_producer *p, const void *rec, uint32_t size)
{
	struct argus_rb *rb = p->rb;
	struct argus_rb_chunk_header *c;
	uint8_t *dst;
	uint64_t ts;
	uint32_t n;

	if (__builtin_expect(!record_frame_ok(rec, size), 0))
		return fail(rb, EINVAL, "bad record: size %u (header says otherwise, or not a multiple "
			    "of 8 in [24, %u])", size, ARGUS_EVENT_MAX_SIZE);
	if (__builtin_expect(p->chunk_index == UINT32_MAX || size > rb->chunk_size - p->used, 0)) {
		int rc = producer_next_chunk(p);
		if (rc)
			return rc;
	}
	c = chunk_header(rb, p->chunk_index);
	dst = argus_rb_chunk_data(rb, p->chunk_index, p->used, size);
	if (__builtin_expect(!c || !dst, 0))
		return fail(rb, EFAULT, "producer state out of bounds (chunk %u, offset %u)",
			    p->chunk_index, p->used);
	memcpy(dst, rec, size);
	memcpy(&ts, rec, sizeof ts);
	/* Relaxed: only the owner writes these; they become visible to readers
	 * through the commit word release below. */
	n = commit_nrecords(__atomic_load_n(commit_word(c), __ATOMIC_RELAXED));
	if (n == 0 || ts < __atomic_load_n(&c->first_ts, __ATOMIC_RELAXED))
		__atomic_store_n(&c->first_ts, ts, __ATOMIC_RELAXED);
	ts = argus_rb_record_last_ts(rec);   /* a SYSCALL record's exit row is later */
	if (ts > __atomic_load_n(&c->last_ts, __ATOMIC_RELAXED))
		__atomic_store_n(&c->last_ts, ts, __ATOMIC_RELAXED);
	p->used += size;
	/* Release: orders the record copy and the ts updates above before the
	 * new {committed_bytes, nrecords}, so a reader (or a kill -9 right after
	 * this store) always finds complete records below committed_bytes (I1),
	 * and exactly nrecords of them. */
	__atomic_store_n(commit_word(c), commit_make(p->used, n + 1), __ATOMIC_RELEASE);
	return 0;
}

void argus_rb_producer_close(struct argus_rb_producer *p)
{
	if (p->rb && p->rb->writable)
		producer_seal_current(p);
	p->chunk_index = UINT32_MAX;
}

/* ---- reading ------------------------------------------------------------- */

/* An OPEN chunk being sealed by its owner does not change its contents. */
static bool ownership_unchanged(uint64_t before, uint64_t after)
{
	return before == after ||
	       (owner_state(before) == ARGUS_RB_CHUNK_OPEN &&
		after == owner_make(ARGUS_RB_CHUNK_SEALED, owner_pid(before)));
}

/* The reader's copy of len bytes of the mapping at src.  pread, not memcpy:
 * the kernel copies straight from the page cache (the same pages the
 * producers' MAP_SHARED stores land in), so reading a 2 GiB buffer neither
 * takes half a million page faults nor leaves 2 GiB of file pages in the
 * reader's resident set.  A syscall orders the copy before the seqlock
 * re-check that follows it as memcpy would (and the acquire fence stays).
 * False on an I/O error or a file truncated under us: the chunk is dropped. */
static bool copy_out(struct argus_rb *rb, const uint8_t *src, uint8_t *buf, uint32_t len)
{
	uint64_t off = (uint64_t)(src - rb->map);

	while (len) {
		ssize_t got = pread(rb->fd, buf, len, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		buf += got;
		off += (uint64_t)got;
		len -= (uint32_t)got;
	}
	return true;
}

/* Copy chunk idx's committed records into buf if it still holds `seq`.
 * Returns the number of bytes copied, or -1 when the chunk changed (torn) or
 * its header is out of range. */
static int64_t read_chunk(struct argus_rb *rb, uint32_t idx, uint64_t seq, uint8_t *buf)
{
	struct argus_rb_chunk_header *c = chunk_header(rb, idx);
	const uint8_t *src;
	uint64_t own1, own2;
	uint32_t committed;

	/* Acquire: pairs with the taker's store-release of seq, so the fields
	 * read below are the reset or later values, never the previous lap's. */
	if (__atomic_load_n(&c->seq, __ATOMIC_ACQUIRE) != seq)
		return -1;
	/* Acquire: orders this load before the data copy (state snapshot). */
	own1 = __atomic_load_n(ownership(c), __ATOMIC_ACQUIRE);
	/* Acquire: pairs with the producer's store-release of the commit word,
	 * so every record below committed_bytes is completely copied in (I1). */
	committed = commit_bytes(__atomic_load_n(commit_word(c), __ATOMIC_ACQUIRE));
	src = argus_rb_chunk_data(rb, idx, 0, committed);
	if (!src)
		return -1;  /* committed_bytes beyond the chunk: damaged, untrusted */
	if (!copy_out(rb, src, buf, committed))
		return -1;
	/* Acquire fence (seqlock read side): orders the copy above before the
	 * re-reads below; if the copy saw any store of a new lap, the re-read
	 * sees that lap's seq/ownership change. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	own2 = __atomic_load_n(ownership(c), __ATOMIC_RELAXED);
	if (__atomic_load_n(&c->seq, __ATOMIC_RELAXED) != seq || !ownership_unchanged(own1, own2))
		return -1;
	return committed;
}

struct chunk_ref {
	uint64_t seq;
	uint32_t idx;
	uint32_t inside;             /* may hold records in the window: read with fn */
	uint64_t first_ts, last_ts;  /* header snapshot: what a dropped chunk covered */
};

static int chunk_ref_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct chunk_ref *)a)->seq, y = ((const struct chunk_ref *)b)->seq;

	return (x > y) - (x < y);
}

/* Walk the record frames of a verified chunk copy.  A malformed frame is
 * passed once with `size` = bytes left in the chunk (so the visitor sees
 * size != the record's own size field, or size < a record header) and ends
 * the chunk: nothing after it can be framed. */
static int walk_chunk(const uint8_t *buf, uint32_t len, uint64_t seq, argus_rb_visit_fn fn, void *ctx)
{
	uint32_t off = 0;

	while (off < len) {
		uint32_t left = len - off;
		uint16_t size = 0;

		if (left >= sizeof(struct argus_event_header))
			memcpy(&size, buf + off + offsetof(struct argus_event_header, size), sizeof size);
		if (left < sizeof(struct argus_event_header) || size > left || !record_frame_ok(buf + off, size))
			return fn(buf + off, left, seq, ctx);
		int rc = fn(buf + off, size, seq, ctx);
		if (rc)
			return rc;
		off += size;
	}
	return 0;
}

int argus_rb_read(struct argus_rb *rb, argus_rb_visit_fn fn, void *ctx, uint64_t *torn)
{
	struct argus_rb_torn t;
	int rc = argus_rb_read_window(rb, 0, UINT64_MAX, fn, NULL, ctx, &t);

	if (torn)
		*torn = t.chunks;
	return rc;
}

int argus_rb_read_window(struct argus_rb *rb, uint64_t since_ns, uint64_t until_ns, argus_rb_visit_fn fn,
			 argus_rb_visit_fn outside_fn, void *ctx, struct argus_rb_torn *torn)
{
	struct argus_rb_torn dropped = { 0, UINT64_MAX, 0 };
	struct chunk_ref *refs = malloc((size_t)rb->nchunks * sizeof *refs);
	uint8_t *buf = malloc(rb->chunk_size);
	uint64_t nrefs = 0;
	int rc = 0;

	if (!refs || !buf) {
		rc = fail(rb, ENOMEM, "out of memory for a %u-chunk read", rb->nchunks);
		goto out;
	}
	for (uint32_t i = 0; i < rb->nchunks; i++) {
		struct argus_rb_chunk_header *c = &rb->chunks[i];
		/* Acquire: pairs with the taker's seq store-release (see read_chunk). */
		uint64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		/* Relaxed: a snapshot for ordering and selection only; read_chunk
		 * re-validates seq, so a chunk taken since is dropped as torn. */
		uint64_t own = __atomic_load_n(ownership(c), __ATOMIC_RELAXED);
		uint64_t first = __atomic_load_n(&c->first_ts, __ATOMIC_RELAXED);
		uint64_t last = __atomic_load_n(&c->last_ts, __ATOMIC_RELAXED);
		bool inside;

		if (owner_state(own) == ARGUS_RB_CHUNK_FREE)
			continue;
		/* seq == UINT64_MAX: a reset in progress, or one whose taker died
		 * (or a damaged file).  Records still committed there are lost to
		 * this read: count them torn like any other chunk we cannot use. */
		if (seq == UINT64_MAX) {
			if (commit_nrecords(__atomic_load_n(commit_word(c), __ATOMIC_RELAXED)) > 0) {
				dropped.chunks++;
				if (first < dropped.first_ts)
					dropped.first_ts = first;
				if (last > dropped.last_ts)
					dropped.last_ts = last;
			}
			continue;
		}
		/* A SEALED chunk's [first_ts, last_ts] covers all its records and
		 * no longer changes; an OPEN one may still receive records of any
		 * time, so it is always read. */
		inside = owner_state(own) == ARGUS_RB_CHUNK_OPEN || (first <= until_ns && last >= since_ns);
		if (!inside && !outside_fn)
			continue;
		refs[nrefs].seq = seq;
		refs[nrefs].idx = i;
		refs[nrefs].inside = inside;
		refs[nrefs].first_ts = first;
		refs[nrefs].last_ts = last;
		nrefs++;
	}
	qsort(refs, nrefs, sizeof *refs, chunk_ref_cmp);
	for (uint64_t i = 0; i < nrefs; i++) {
		int64_t len = read_chunk(rb, refs[i].idx, refs[i].seq, buf);

		if (len < 0) {
			dropped.chunks++;
			if (refs[i].first_ts < dropped.first_ts)
				dropped.first_ts = refs[i].first_ts;
			if (refs[i].last_ts > dropped.last_ts)
				dropped.last_ts = refs[i].last_ts;
			continue;
		}
		rc = walk_chunk(buf, (uint32_t)len, refs[i].seq, refs[i].inside ? fn : outside_fn, ctx);
		if (rc)
			break;
	}
out:
	if (!dropped.chunks)
		dropped.first_ts = 0;
	if (torn)
		*torn = dropped;
	free(refs);
	free(buf);
	return rc;
}

/* ---- statistics ---------------------------------------------------------- */

int argus_rb_stats(struct argus_rb *rb, struct argus_rb_stats *st)
{
	struct argus_rb_file_header *h = rb->hdr;
	uint64_t open_records = 0, open_bytes = 0;

	memset(st, 0, sizeof *st);
	st->file_size = rb->map_size;
	st->chunk_size = rb->chunk_size;
	st->nchunks = rb->nchunks;
	st->created_ns = h->created_ns;
	st->created_realtime_ns = h->created_realtime_ns;
	/* Relaxed: independent statistics counters; a snapshot is all we promise. */
	st->records_written = __atomic_load_n(&h->records_written, __ATOMIC_RELAXED);
	st->bytes_written = __atomic_load_n(&h->bytes_written, __ATOMIC_RELAXED);
	st->records_overwritten = __atomic_load_n(&h->records_overwritten, __ATOMIC_RELAXED);
	st->chunks_overwritten = __atomic_load_n(&h->chunks_overwritten, __ATOMIC_RELAXED);
	st->records_lost = __atomic_load_n(&h->records_lost, __ATOMIC_RELAXED);
	st->chunks_skipped = __atomic_load_n(&h->chunks_skipped, __ATOMIC_RELAXED);
	st->daemon_pid = __atomic_load_n(&h->daemon_pid, __ATOMIC_RELAXED);
	st->extra_rows = __atomic_load_n(&h->extra_rows, __ATOMIC_RELAXED);
	st->disk_full_since_ns = __atomic_load_n(&h->disk_full_since_ns, __ATOMIC_RELAXED);
	st->switches_unreported = __atomic_load_n(&h->switches_unreported, __ATOMIC_RELAXED);
	argus_rb_identity(rb, st->boot_id, st->hostname);

	for (uint32_t i = 0; i < rb->nchunks; i++) {
		struct argus_rb_chunk_header *c = &rb->chunks[i];
		/* Acquire: pairs with the taker's seq store-release (seqlock). */
		uint64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		uint64_t own = __atomic_load_n(ownership(c), __ATOMIC_RELAXED);
		/* Acquire: pairs with the producer's commit release; the ts below
		 * cover at least the records counted here. */
		uint64_t commit = __atomic_load_n(commit_word(c), __ATOMIC_ACQUIRE);
		uint32_t bytes = commit_bytes(commit), n = commit_nrecords(commit);
		uint64_t first = __atomic_load_n(&c->first_ts, __ATOMIC_RELAXED);
		uint64_t last = __atomic_load_n(&c->last_ts, __ATOMIC_RELAXED);

		/* Acquire fence: orders the field loads above before the seq
		 * re-read; a changed seq means they mix two laps: skip. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (owner_state(own) == ARGUS_RB_CHUNK_FREE || seq == UINT64_MAX || n == 0 ||
		    __atomic_load_n(&c->seq, __ATOMIC_RELAXED) != seq)
			continue;
		/* Impossible counts mean a damaged chunk header: readers skip
		 * such a chunk, so it holds nothing readable. */
		if (bytes > rb->chunk_size || (uint64_t)n * sizeof(struct argus_event_header) > bytes)
			continue;
		st->chunks_in_use++;
		st->records_present += n;
		st->bytes_present += bytes;
		if (st->chunks_in_use == 1 || first < st->first_ts)
			st->first_ts = first;
		if (last > st->last_ts)
			st->last_ts = last;
		if (owner_state(own) == ARGUS_RB_CHUNK_OPEN) {
			open_records += n;
			open_bytes += bytes;
		}
	}
	/* Records of OPEN chunks are credited to the header when sealed (I3). */
	st->records_written += open_records;
	st->bytes_written += open_bytes;
	return 0;
}
