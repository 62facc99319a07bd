/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The recording tier (docs/linux-tracer.md, "Detail tiers"; `argus start
 * --detail full|lean|auto`): full runs the syscall programs, lean does not
 * and takes a wait's syscall from the saved registers.  auto is lean until
 * the hang detector sees a watched thread out of its loop for escalate_ns,
 * full while one is, and lean again hold_ns after the last one is back.
 * Each switch, and the start when lean, is a DETAIL record in the trace, so
 * a reader knows which records came from which tier (none: full throughout).
 */
#ifndef DETAIL_TIER_H
#define DETAIL_TIER_H

#include <stdbool.h>
#include <stdint.h>

#include "argus_event.h"

#define DETAIL_ESCALATE_NS_DEFAULT 100000000ull   /* --escalate-ms 100 */
#define DETAIL_HOLD_NS 1000000000ull              /* full this long after the hang ends */

struct argusd_ctx;
struct argus_platform_ops;

struct detail_tier {
	uint8_t mode;                /* enum argus_detail_mode */
	uint8_t lean;                /* the tier in force */
	uint64_t escalate_ns;
	uint64_t calm_since;         /* auto, full: no thread out since (0: one is) */
	uint64_t switches;           /* tier changes after the start */
	uint64_t tier_since;         /* the current tier began */
	uint64_t lean_ns, full_ns;   /* time spent in each, before tier_since */
};

/* The tier auto wants at now: out says whether a watched thread has been
 * out of its loop for escalate_ns (hang_detector_longest_out).  Pure: the
 * policy, unit-tested alone. */
bool detail_tier_want_lean(struct detail_tier *dt, bool out, uint64_t now);

/* Applies tier lean (platform set_detail) and writes its DETAIL record;
 * 0 or -errno (logged).  The record of a switch to full is written before
 * the programs run, of a switch to lean after they stopped. */
int detail_tier_apply(struct detail_tier *dt, const struct argus_platform_ops *ops, void *src,
		      const struct argusd_ctx *ctx, bool lean, uint32_t cause_tid, uint64_t out_ns, uint64_t now);

#endif /* DETAIL_TIER_H */
