/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Online hang detector (argusd): watches event-loop threads as the records go
 * past and freezes a snapshot around each hang (snapshot_writer.c).
 *
 * docs/flight-recorder.md describes the rule; hang_detector.c has the
 * algorithm and its invariants at the top.
 */
#ifndef HANG_DETECTOR_H
#define HANG_DETECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "argus_event.h"

#define HD_MAX_WATCH 32

struct argusd_ctx;

struct hang_detector_config {
	uint64_t threshold_ns;       /* out of the loop this long is a hang (default 2 s) */
	uint64_t before_ns;          /* the snapshot starts this long before the hang (default 30 s) */
	uint64_t flush_after_ns;     /* an ongoing hang is written this long after detection (default 10 s) */
	uint64_t max_snapshot_bytes; /* one snapshot's records at most (oldest dropped first) */
	uint64_t max_total_bytes;    /* all snapshots together (oldest snapshot deleted first) */
	uint32_t max_count;          /* snapshots kept */
	const char *dir;             /* where snapshots go (created 0700), for messages */
	int dir_fd;                  /* that directory, verified (safe_dir.h): every file goes through it */
	const char *ring_path;       /* the ring buffer they are copied from */
	const struct argusd_ctx *ctx; /* where its log lines go (argusd_ctx.h) */
};

struct hang_detector;

struct hang_detector *hang_detector_new(const struct hang_detector_config *cfg);
void hang_detector_free(struct hang_detector *hd);
/* A pid or comm the user names: its threads are watched whether or not they
 * run an event loop.  0, or -ENOSPC when HD_MAX_WATCH are named already. */
int hang_detector_watch_pid(struct hang_detector *hd, uint32_t pid);
int hang_detector_watch_comm(struct hang_detector *hd, const char *comm);

/* Per record, from argusd's observe(): cheap (a type test, then one hash
 * probe for main threads' scheduler records). */
void hang_detector_observe(struct hang_detector *hd, const struct argus_event_header *h);

/* From the drain loop, every iteration: at most every 100 ms it looks at the
 * watched threads, opens hangs, starts snapshot writers, reaps them. */
void hang_detector_check(struct hang_detector *hd, uint64_t now_ns);

/* At shutdown, after the last drain: every hang not yet written is written
 * by one last child, which the daemon does not wait for. */
void hang_detector_finish(struct hang_detector *hd, uint64_t now_ns);

struct hang_detector_stats {
	uint64_t threads;            /* entries in the table */
	uint64_t loops;              /* of those, event loops or user-named */
	uint64_t hangs;              /* detected */
	uint64_t snapshots;          /* written */
};
void hang_detector_stats(const struct hang_detector *hd, struct hang_detector_stats *st);

/* The ring index (hang_index.h) the detector feeds: every record goes on to
 * it, and its spans out of a loop and its open table come from here.  The
 * caller owns it (frees it after the detector). */
struct hang_index;
void hang_detector_set_index(struct hang_detector *hd, struct hang_index *hx);

/* The watched thread that has been out of its loop longest, if that is at
 * least min_ns at now (a hang beginning: `argus start --detail auto` turns
 * full detail on for it, detail_tier.c): its tid and time out, else false.
 * named_only: only threads of the pids and comms the user named. */
bool hang_detector_longest_out(const struct hang_detector *hd, uint64_t now, uint64_t min_ns, bool named_only,
			       uint32_t *tid, uint64_t *out_ns);

#endif /* HANG_DETECTOR_H */
