/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snapshot writer: copies the ring's records around one hang into a file of
 * its own, in the ring buffer format, so every reader of a trace reads it.
 */
#ifndef SNAPSHOT_WRITER_H
#define SNAPSHOT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hang_detector.h"

struct snapshot_request {
	char id[48];                 /* file name stem: <UTC time>-<tid> */
	uint32_t pid, tid;
	char comm[16], process[16];  /* the thread's and the main thread's names */
	uint64_t start_ns, end_ns;   /* the hang (end = last seen when ongoing) */
	uint64_t detect_ns;
	bool ongoing;
	uint64_t since_ns, until_ns; /* the records copied (and the state before since) */
	uint64_t threshold_ns;
	const char *block_type;      /* the detector's guess */
	uint8_t wait_reason;         /* of the last wait out of the loop (enum argus_wait_reason) */
	uint64_t run_ns, wait_ns;    /* on CPU / blocked during the hang */
	uint32_t switches;           /* switch-outs during the hang */
};

/* Writes <dir>/<id>.argus (ring format, mode 0600) and <dir>/<id>.json
 * (what `argus hangs --recorded` lists), each under a temporary name renamed
 * into place, then deletes the oldest snapshots past the count and size
 * bounds.  An existing snapshot of the same id is replaced (an ongoing hang
 * written again when it ends), unless the ring no longer holds since_ns:
 * then the earlier file stays.  0 or -errno, err says why. */
int snapshot_write(const struct hang_detector_config *cfg, const struct snapshot_request *req,
		   char *err, size_t errlen);

/* Deletes the oldest snapshots (by id: ids sort by time) until at most
 * max_count remain and their files total at most max_total bytes. */
void snapshot_prune(const char *dir, uint32_t max_count, uint64_t max_total);

#endif /* SNAPSHOT_WRITER_H */
