// SPDX-License-Identifier: Apache-2.0
/* The recording tier and its switches (detail_tier.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#else
#include "compat_macos.h"   /* macOS build: syscall(SYS_gettid) */
#endif

#include "argusd_ctx.h"
#include "detail_tier.h"
#include "platform.h"

bool detail_tier_want_lean(struct detail_tier *dt, bool out, uint64_t now)
{
	if (dt->mode != ARGUS_DETAIL_MODE_AUTO)
		return dt->mode == ARGUS_DETAIL_MODE_LEAN;
	if (out) {
		dt->calm_since = 0;
		return false;
	}
	if (dt->lean)
		return true;
	/* Full, and nobody out: lean once that has lasted hold_ns, so the
	 * hang's end and what follows it are recorded in full too, and a loop
	 * that leaves and comes back does not flap the links. */
	if (!dt->calm_since)
		dt->calm_since = now;
	return now - dt->calm_since >= DETAIL_HOLD_NS;
}

static const char *tier_name(bool lean)
{
	return lean ? "lean" : "full";
}

static void write_record(struct detail_tier *dt, const struct argusd_ctx *ctx, uint32_t cause_tid, uint64_t out_ns)
{
	struct argus_ev_detail rec;

	memset(&rec, 0, sizeof(rec));
	rec.tier = dt->lean ? ARGUS_DETAIL_LEAN : ARGUS_DETAIL_FULL;
	rec.mode = dt->mode;
	rec.cause_tid = cause_tid;
	rec.out_ns = out_ns;
	fill_header(&rec.h, ARGUS_EV_DETAIL, sizeof(rec), (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid));
	if (argusd_write(ctx, &rec, sizeof(rec)))
		argusd_log(ctx, "failed to write the detail record (%s)", tier_name(dt->lean));
}

int detail_tier_apply(struct detail_tier *dt, const struct argus_platform_ops *ops, void *src,
		      const struct argusd_ctx *ctx, bool lean, uint32_t cause_tid, uint64_t out_ns, uint64_t now)
{
	bool first = !dt->tier_since;
	int ret;

	if (!first && lean == dt->lean)
		return 0;
	if (!ops->set_detail) {
		if (lean)
			argusd_log(ctx, "this platform has one recording tier: full detail");
		dt->lean = 0;
		dt->tier_since = now;
		return lean ? -ENOTSUP : 0;
	}
	if (!first) {
		if (dt->lean)
			dt->lean_ns += now - dt->tier_since;
		else
			dt->full_ns += now - dt->tier_since;
		dt->switches++;
	}
	if (!lean) {
		/* the records from here on are full: the mark goes first; a
		 * trace that is full throughout (--detail full) has none */
		dt->lean = 0;
		if (!first)
			write_record(dt, ctx, cause_tid, out_ns);
	}
	ret = ops->set_detail(src, lean);
	if (ret)
		argusd_log(ctx, "failed to switch to %s detail: %s", tier_name(lean), strerror(-ret));
	if (lean) {
		dt->lean = 1;
		write_record(dt, ctx, cause_tid, out_ns);
	}
	dt->tier_since = now;
	dt->calm_since = 0;
	if (!first)
		argusd_log(ctx, "%s detail from now on%s", tier_name(lean),
			   cause_tid ? " (a watched thread is out of its loop)" : "");
	return ret;
}
