/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File-backed, multi-producer ring buffer of Argus event records.
 *
 * Layout of the file (all integers little-endian, all references are byte
 * offsets from the start of the file, never pointers):
 *
 *   [ struct argus_rb_file_header        ]  offset 0, header_size bytes
 *   [ struct argus_rb_chunk_header  x N  ]  offset chunk_table_offset
 *   [ chunk data 0 | chunk data 1 | ...   ]  offset data_offset, chunk_size each
 *
 * Algorithm: the data area is split into N fixed-size chunks.  A producer owns
 * one chunk at a time and appends records to it with no lock; when the chunk is
 * full it takes the next one by an atomic fetch-add on the header's global
 * chunk sequence number (seq); chunk index = seq % N.  Taking a chunk that held
 * older data overwrites it: its record count is added to the overwritten
 * counters first, so losses are counted exactly.  A chunk still owned by a live
 * producer (state OPEN) is skipped; one owned by a dead producer (kill -9) is
 * sealed by the next taker (slow path).
 *
 * Invariants:
 *   - chunk.committed_bytes only grows while chunk.seq is unchanged, and every
 *     record below committed_bytes is complete (store-release after the copy).
 *   - a reader that sees the same chunk.seq before and after reading a chunk
 *     read consistent records (seqlock discipline); otherwise it drops them.
 *   - nothing in the file is a pointer; every reference is resolved by one
 *     bounds-checked accessor (argus_rb_chunk_data).
 *
 * Error convention: functions return 0 or a negative errno; the handle carries
 * a human-readable message (argus_rb_error()).  argus_rb_create/open set *out
 * even when they fail (to a handle holding only the message, or NULL when out
 * of memory): read argus_rb_error(*out), then argus_rb_close(*out).
 *
 * docs/ring-buffer.md describes the format, the chunk states and the
 * accounting in full.
 */
#ifndef ARGUS_RB_H
#define ARGUS_RB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARGUS_RB_MAGIC "ARGUSRB\0"
#define ARGUS_RB_VERSION 1
#define ARGUS_RB_DEFAULT_SIZE (2ull << 30)       /* 2 GiB, sparse */
#define ARGUS_RB_DEFAULT_CHUNK_SIZE (1u << 20)   /* 1 MiB */

enum argus_rb_chunk_state {
	ARGUS_RB_CHUNK_FREE = 0,     /* never written */
	ARGUS_RB_CHUNK_OPEN = 1,     /* owned by a producer, being appended to */
	ARGUS_RB_CHUNK_SEALED = 2,   /* complete; may be taken and overwritten */
};

struct argus_rb_file_header {
	char magic[8];               /* ARGUS_RB_MAGIC */
	uint32_t version;            /* ARGUS_RB_VERSION */
	uint32_t header_size;        /* sizeof(struct argus_rb_file_header) */
	uint32_t chunk_header_size;  /* sizeof(struct argus_rb_chunk_header) */
	uint32_t schema_version;     /* ARGUS_SCHEMA_VERSION of the records */
	uint64_t file_size;
	uint64_t chunk_table_offset;
	uint64_t data_offset;
	uint32_t chunk_size;
	uint32_t nchunks;
	uint64_t created_ns;         /* CLOCK_MONOTONIC at creation */
	uint64_t created_realtime_ns;/* CLOCK_REALTIME at creation, to print wall times */
	/* Shared, updated atomically by producers. */
	uint64_t next_seq;           /* next chunk sequence number to hand out */
	uint64_t records_written;    /* committed records, ever */
	uint64_t bytes_written;      /* committed record bytes, ever */
	uint64_t records_overwritten;/* records lost to wrap-around */
	uint64_t chunks_overwritten;
	uint64_t records_lost;       /* dropped before reaching the file (BPF ring full, ...) */
	uint64_t chunks_skipped;     /* busy chunks skipped when taking a chunk */
	uint32_t daemon_pid;         /* the tracing daemon, 0 when none */
	uint32_t flags;
	/* Decoded rows beyond one per record, ever: a record the decoder splits
	 * into two rows (schema v3 SWITCH, v4 SYSCALL) adds 1, so the events written are
	 * records_written + extra_rows.  0 in files of schema v1 / v2, where
	 * every record is one row (it was a reserved word). */
	uint64_t extra_rows;
	/* CLOCK_REALTIME when a producer that keeps tracing on a full disk
	 * (argus_rb_keep_on_full_disk) first found no disk blocks for a new
	 * chunk (ENOSPC); 0 while there is room.  Was reserved (0). */
	uint64_t disk_full_since_ns;
	/* sched_switches the kernel never reported (no tracepoint ran: holes
	 * in its own reporting, not records the tracer dropped), counted apart
	 * from records_lost.  Was reserved (0): files older than the field read
	 * 0 (docs/ring-buffer.md says what their records_lost holds). */
	uint64_t switches_unreported;
	uint64_t reserved[5];
	/* Host identity, to name hosts when buffers of several are merged:
	 * the creator's boot id (/proc/sys/kernel/random/boot_id, 16 bytes)
	 * and hostname (uname() in its UTS namespace, NUL-padded, not always
	 * NUL-terminated).  Files made before these fields have a header_size
	 * of ARGUS_RB_HEADER_SIZE_V1: readers treat both as empty. */
	uint8_t boot_id[16];
	char hostname[64];
};

/* header_size of files written before the host identity fields. */
#define ARGUS_RB_HEADER_SIZE_V1 200u

struct argus_rb_chunk_header {
	uint64_t seq;                /* sequence number this chunk holds; UINT64_MAX while being reset */
	uint32_t state;              /* enum argus_rb_chunk_state */
	uint32_t owner_pid;          /* producer process while OPEN */
	uint32_t committed_bytes;    /* bytes of complete records in the data area */
	uint32_t nrecords;           /* records committed in this chunk */
	uint64_t first_ts;
	uint64_t last_ts;
};

struct argus_rb;                 /* process-local handle: mapping + fd */

struct argus_rb_producer {
	struct argus_rb *rb;
	uint32_t chunk_index;        /* current chunk, or UINT32_MAX */
	uint64_t seq;
	uint32_t used;               /* local copy of committed_bytes */
	uint32_t producer_id;
};

struct argus_rb_stats {
	uint64_t file_size, chunk_size, nchunks;
	uint64_t records_written, bytes_written;
	uint64_t records_overwritten, chunks_overwritten, records_lost, chunks_skipped;
	uint64_t chunks_in_use;      /* chunks holding records */
	uint64_t records_present;    /* records currently readable */
	uint64_t bytes_present;
	uint64_t first_ts, last_ts;  /* of readable records */
	uint64_t created_ns, created_realtime_ns;
	uint32_t daemon_pid;
	uint64_t extra_rows;         /* header.extra_rows: events written = records_written + extra_rows */
	uint64_t disk_full_since_ns; /* header.disk_full_since_ns: CLOCK_REALTIME, 0 = not full */
	uint8_t boot_id[16];         /* header.boot_id, zeros in files without one */
	char hostname[65];           /* header.hostname NUL-terminated, "" in files without one */
	uint64_t switches_unreported;/* header.switches_unreported, 0 in files older than it */
};

/* Create a sparse file of `size` bytes, mode 0600: a new file renamed over
 * the path once its header is written.  Refused (-EPERM, -ELOOP, -EINVAL):
 * a directory others may write into (unless sticky), or an existing link,
 * non-regular file, or file of another user at the path. */
int argus_rb_create(const char *path, uint64_t size, uint32_t chunk_size, struct argus_rb **out);
/* argus_rb_create in a new, empty file the caller opened (safe_dir.c
 * safe_dir_create_tmp: the caller checks, names and renames it).  fd is
 * duplicated; the caller keeps its own.  The header's blocks are reserved
 * first, so a full disk is -ENOSPC, never SIGBUS. */
int argus_rb_create_fd(int fd, uint64_t size, uint32_t chunk_size, struct argus_rb **out);
/* A full disk (ENOSPC / EDQUOT when a never-used chunk gets its blocks) no
 * longer fails the write: producers of this handle reuse the chunks that
 * have blocks already, in ring order (a shorter history, not a stop), and
 * header.disk_full_since_ns says since when; a new chunk's blocks are tried
 * again at most once a second, and the flag clears once they are got. */
void argus_rb_keep_on_full_disk(struct argus_rb *rb);
/* Map an existing buffer; writable=1 to produce into it (e.g. bp_watch).  The
 * path must be a regular file, never followed as a link, opened without
 * blocking (a FIFO is refused, not waited on); writable=1 also refuses a file
 * of another user or one that group / others may open (-EPERM). */
int argus_rb_open(const char *path, int writable, struct argus_rb **out);
/* SIGBUS on the mapping (the file truncated under a producer): from now on a
 * fault in rb's mapping swaps in anonymous memory instead of killing the
 * process, and argus_rb_faulted() reports it (1, and the offset).  One
 * guarded buffer per process. */
int argus_rb_guard_sigbus(struct argus_rb *rb);
int argus_rb_faulted(const struct argus_rb *rb, uint64_t *offset);
void argus_rb_close(struct argus_rb *rb);
const char *argus_rb_error(const struct argus_rb *rb);
struct argus_rb_file_header *argus_rb_header(struct argus_rb *rb);
void argus_rb_set_daemon_pid(struct argus_rb *rb, uint32_t pid);
/* The host identity in the header (argus_rb_create fills it in from the
 * creating process: its boot id and uname() hostname).  get: returns 0 and
 * fills boot_id (16 bytes) and hostname (65 bytes, NUL-terminated), or
 * -ENOENT with both empty for a file older than the fields.  set: a
 * writable handle on a file that has the fields (a snapshot carries its
 * ring's; a test shifts a host); hostname is cut at 64 bytes. */
int argus_rb_identity(const struct argus_rb *rb, uint8_t boot_id[16], char hostname[65]);
int argus_rb_set_identity(struct argus_rb *rb, const uint8_t boot_id[16], const char *hostname);
void argus_rb_add_lost(struct argus_rb *rb, uint64_t count);
/* Count sched_switches the kernel never reported (header.switches_unreported). */
void argus_rb_add_switches_unreported(struct argus_rb *rb, uint64_t count);
/* The ts of the last row a framed record decodes into: its header's, but
 * for a SYSCALL record (schema v4), whose exit row is exit_delta_ns later.
 * Chunk time ranges and windows cover every row of their records. */
uint64_t argus_rb_record_last_ts(const void *rec);

/* Count rows the decoder will make beyond one per record (header.extra_rows). */
void argus_rb_add_extra_rows(struct argus_rb *rb, uint64_t count);

void argus_rb_producer_init(struct argus_rb *rb, struct argus_rb_producer *p, uint32_t producer_id);
/* Append one record (size multiple of 8, <= chunk data size).  Returns 0 or -errno. */
int argus_rb_write(struct argus_rb_producer *p, const void *rec, uint32_t size);
/* Seal the current chunk so readers and other producers see it complete. */
void argus_rb_producer_close(struct argus_rb_producer *p);

int argus_rb_stats(struct argus_rb *rb, struct argus_rb_stats *st);

/*
 * Reading.  The visitor sees each readable chunk in sequence order and each
 * record in it; it returns non-zero to stop.  Chunks that change under the
 * reader are skipped and counted in *torn (may be NULL).
 * Records are handed out only from a private copy (pread from the file)
 * verified by the seqlock.
 * A malformed frame (size field < 24, not a multiple of 8, above
 * ARGUS_EVENT_MAX_SIZE or past the committed bytes) is passed once with
 * `size` = the bytes left in the chunk, so the visitor sees size differ from
 * the record's own size field (or size < 24), and ends that chunk.
 * Returns 0, -errno, or the visitor's non-zero value that stopped the read.
 */
typedef int (*argus_rb_visit_fn)(const void *rec, uint32_t size, uint64_t chunk_seq, void *ctx);
int argus_rb_read(struct argus_rb *rb, argus_rb_visit_fn fn, void *ctx, uint64_t *torn);
/*
 * argus_rb_read restricted to a time window: chunks whose [first_ts, last_ts]
 * (chunk header) overlaps [since_ns, until_ns], and every OPEN chunk, go to
 * fn; the others go to outside_fn, or, when it is NULL, are skipped without
 * touching their records.  One pass in seq order either way, so records keep
 * the order argus_rb_read gives them.  argus_rb_read is the window
 * [0, UINT64_MAX] with no outside_fn.  *torn (may be NULL) also gets the time
 * range the dropped chunks covered, so a reader can say what was lost.
 */
struct argus_rb_torn {
	uint64_t chunks;             /* chunks dropped: changed under the reader, or damaged headers */
	uint64_t first_ts, last_ts;  /* the time range their headers claimed (0, 0 when none) */
};
int argus_rb_read_window(struct argus_rb *rb, uint64_t since_ns, uint64_t until_ns, argus_rb_visit_fn fn,
			 argus_rb_visit_fn outside_fn, void *ctx, struct argus_rb_torn *torn);

#ifdef __cplusplus
}
#endif
#endif /* ARGUS_RB_H */
