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
#include <sys/types.h>

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

/* Writes <id>.argus (ring format, mode 0600) and <id>.json (what `argus
 * hangs --recorded` lists) in cfg->dir_fd, each under a temporary name
 * renamed into place, lists the id in the directory's index, then deletes
 * the oldest indexed snapshots past the count and size bounds.  An existing
 * snapshot of the same id is replaced (an ongoing hang written again when it
 * ends), unless the ring no longer holds since_ns: then the earlier file
 * stays.  0 or -errno, err says why; no temporary file is left either way. */
int snapshot_write(const struct hang_detector_config *cfg, const struct snapshot_request *req,
		   char *err, size_t errlen);

/* In a forked writer: fatal signals (SIGTERM, SIGBUS, ...) remove the
 * temporary file being written, then exit; argusd's blocked signals are
 * unblocked for that. */
void snapshot_writer_child_init(void);

/* Removes the temporary files of writer pid (killed: argusd reaped it), or
 * with pid 0 those of every writer no longer alive (argusd's start-up).
 * Returns how many. */
unsigned snapshot_sweep(int dir_fd, pid_t writer);

#endif /* SNAPSHOT_WRITER_H */
