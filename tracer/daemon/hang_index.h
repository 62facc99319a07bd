/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ring index (argusd): the long waits of main threads and the hang
 * detector's spans out of an event loop, written as they end into a small
 * file beside the snapshots, so `argus hangs` / `argus debug` answer without
 * decoding the buffer (tracer/ringindex.py reads it; docs/ring-buffer.md,
 * "The ring index", has the layout).  hang_index.c has the algorithm.
 */
#ifndef HANG_INDEX_H
#define HANG_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "argus_event.h"

#define HX_MAGIC "ARGUSIX"
#define HX_VERSION 1
#define HX_ENTRIES 65536             /* ended intervals kept (4 MiB) */
#define HX_OPEN 1024                 /* intervals still going on, shown at once */
#define HX_MIN_NS 500000000ull       /* shorter intervals are not indexed */

enum { HX_KIND_WAIT = 1, HX_KIND_OUT_OF_LOOP = 2 };
enum { HX_GUESS_NONE = 0, HX_GUESS_LONG_WAIT = 1, HX_GUESS_REPEATED_YIELD = 2, HX_GUESS_LONG_RUNNING = 3 };
enum { HX_FLAG_LOOP = 1, HX_FLAG_ONGOING = 2, HX_FLAG_USER = 4 };

/* 128 bytes, little-endian, at offset 0 */
struct hx_header {
	char magic[8];               /* "ARGUSIX\0", written last at creation */
	uint32_t version;            /* HX_VERSION */
	uint32_t header_size;        /* sizeof(struct hx_header) */
	uint32_t entry_size;         /* sizeof(struct hx_entry) */
	uint32_t nentries;           /* ring slots */
	uint32_t nopen;              /* open-table slots */
	uint32_t flags;              /* 0 */
	uint64_t buffer_ino;         /* the buffer this indexes (st_ino) */
	uint64_t buffer_created_ns;  /* and its header's created_ns */
	uint64_t since_ns;           /* ts of the first record this index saw */
	uint64_t min_ns;             /* intervals shorter than this are not written */
	uint64_t next_seq;           /* ended intervals written; entry n + 1 is in slot n % nentries */
	uint64_t open_gen;           /* seqlock of the open table: odd while rewritten */
	uint32_t open_count;         /* valid open entries */
	uint32_t daemon_pid;
	uint64_t last_ts;            /* the latest record ts seen, as of the last open-table write */
	uint8_t reserved[32];
};

/* 64 bytes: the open table (nopen) follows the header, then the ring (nentries) */
struct hx_entry {
	uint64_t seq;                /* ring: its sequence number + 1, stored last; open: nonzero */
	uint64_t start_ns, end_ns;   /* open: end = the last record ts seen */
	uint32_t pid, tid;
	uint8_t kind;                /* HX_KIND_* */
	uint8_t reason;              /* enum argus_wait_reason (out of loop: of its longest wait) */
	uint8_t guess;               /* HX_GUESS_* (out of loop: the detector's block type guess) */
	uint8_t flags;               /* HX_FLAG_* */
	uint32_t nr;                 /* syscall, or ARGUS_SYSCALL_NONE */
	uint64_t obj;                /* wait object: fd, futex address, ... */
	char comm[16];
};

struct hang_index;

/* Creates dir_fd/ring-<ino>.idx for the buffer (safe_dir: O_EXCL temporary,
 * 0600, blocks reserved, renamed into place; other ring-*.idx removed).
 * NULL with err set when it cannot. */
struct hang_index *hang_index_create(int dir_fd, const char *dir, uint64_t buffer_ino, uint64_t buffer_created_ns,
				     char *err, size_t errlen);
void hang_index_free(struct hang_index *hx);

/* Per record (split switch / syscall records): main threads' waits, names,
 * kernel threads.  Never allocates, never does I/O. */
void hang_index_observe(struct hang_index *hx, const struct argus_event_header *h);

/* An interval that ended (the hang detector's spans out of a loop). */
void hang_index_add(struct hang_index *hx, const struct hx_entry *e);

/* The open table, rewritten at most every 100 ms: begin, the index's own
 * ongoing waits and whatever open_add() brings (the detector's spans), end. */
bool hang_index_open_begin(struct hang_index *hx, uint64_t now_ns);
void hang_index_open_add(struct hang_index *hx, const struct hx_entry *e);
void hang_index_open_end(struct hang_index *hx);
uint64_t hang_index_last_ts(const struct hang_index *hx);
/* e->comm from the names the index learnt (PROC_SNAPSHOT, FORK, EXEC) of e->tid. */
void hang_index_name(struct hang_index *hx, struct hx_entry *e);

#endif /* HANG_INDEX_H */
