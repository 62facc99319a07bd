// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of detail_tier.c: auto's policy, and the order of a switch's
 * DETAIL record against the platform's switch.
 *
 *   policy   full and lean stay put; auto goes full as soon as a thread is
 *            out, stays full while one is, and goes lean only after
 *            DETAIL_HOLD_NS with none out (a thread out again restarts it)
 *   apply    a lean start writes a lean record after the programs stopped;
 *            a switch to full writes its record before the programs run;
 *            a full start writes none; a platform without tiers refuses lean
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "argusd_ctx.h"
#include "detail_tier.h"
#include "platform.h"

#define MS 1000000ull

struct trace {
	char events[16];       /* 'L' / 'F': platform switched; 'l' / 'f': record written */
	int n;
	struct argus_ev_detail last;
};

static struct trace tr;

static void ctx_log(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static int ctx_write(void *arg, const void *rec, uint32_t size)
{
	const struct argus_ev_detail *d = rec;

	(void)arg;
	assert_int_equal(size, sizeof(*d));
	assert_int_equal(d->h.type, ARGUS_EV_DETAIL);
	tr.last = *d;
	tr.events[tr.n++] = d->tier == ARGUS_DETAIL_LEAN ? 'l' : 'f';
	return 0;
}

static int set_detail(void *state, int lean)
{
	(void)state;
	tr.events[tr.n++] = lean ? 'L' : 'F';
	return 0;
}

static const struct argusd_ctx ctx = { .log = ctx_log, .fail = ctx_log, .write = ctx_write };
static const struct argus_platform_ops tiered = { .name = "t", .set_detail = set_detail };
static const struct argus_platform_ops untiered = { .name = "u" };

static int reset(void **state)
{
	(void)state;
	memset(&tr, 0, sizeof(tr));
	return 0;
}

static void test_fixed_modes(void **state)
{
	struct detail_tier full = { .mode = ARGUS_DETAIL_MODE_FULL }, lean = { .mode = ARGUS_DETAIL_MODE_LEAN };

	(void)state;
	assert_false(detail_tier_want_lean(&full, false, 5000 * MS));
	assert_false(detail_tier_want_lean(&full, true, 5000 * MS));
	assert_true(detail_tier_want_lean(&lean, true, 5000 * MS));
	assert_true(detail_tier_want_lean(&lean, false, 5000 * MS));
}

static void test_auto_holds_full(void **state)
{
	struct detail_tier dt = { .mode = ARGUS_DETAIL_MODE_AUTO, .lean = 1 };

	(void)state;
	assert_true(detail_tier_want_lean(&dt, false, 1000 * MS));
	assert_false(detail_tier_want_lean(&dt, true, 1100 * MS));       /* out: full at once */
	dt.lean = 0;
	assert_false(detail_tier_want_lean(&dt, true, 1200 * MS));
	assert_false(detail_tier_want_lean(&dt, false, 1300 * MS));      /* back: hold starts */
	assert_false(detail_tier_want_lean(&dt, false, 2000 * MS));
	assert_false(detail_tier_want_lean(&dt, true, 2200 * MS));       /* out again: hold reset */
	assert_false(detail_tier_want_lean(&dt, false, 2300 * MS));
	assert_false(detail_tier_want_lean(&dt, false, 3299 * MS));
	assert_true(detail_tier_want_lean(&dt, false, 3300 * MS));       /* 1 s calm */
}

static void test_apply_order(void **state)
{
	struct detail_tier dt = { .mode = ARGUS_DETAIL_MODE_AUTO };

	(void)state;
	assert_int_equal(detail_tier_apply(&dt, &tiered, NULL, &ctx, true, 0, 0, 1000 * MS), 0);
	assert_int_equal(detail_tier_apply(&dt, &tiered, NULL, &ctx, true, 0, 0, 1050 * MS), 0);   /* no change */
	assert_int_equal(detail_tier_apply(&dt, &tiered, NULL, &ctx, false, 42, 150 * MS, 1200 * MS), 0);
	assert_int_equal(tr.last.cause_tid, 42);
	assert_int_equal(tr.last.out_ns, 150 * MS);
	assert_int_equal(tr.last.mode, ARGUS_DETAIL_MODE_AUTO);
	assert_int_equal(detail_tier_apply(&dt, &tiered, NULL, &ctx, true, 0, 0, 3000 * MS), 0);
	tr.events[tr.n] = 0;
	assert_string_equal(tr.events, "LlfFLl");
	assert_int_equal(dt.switches, 2);
	assert_int_equal(dt.lean_ns, 200 * MS);
	assert_int_equal(dt.full_ns, 1800 * MS);
}

static void test_full_start_writes_nothing(void **state)
{
	struct detail_tier dt = { .mode = ARGUS_DETAIL_MODE_FULL };

	(void)state;
	assert_int_equal(detail_tier_apply(&dt, &tiered, NULL, &ctx, false, 0, 0, 1000 * MS), 0);
	tr.events[tr.n] = 0;
	assert_string_equal(tr.events, "F");
	assert_false(dt.lean);
}

static void test_untiered_platform(void **state)
{
	struct detail_tier dt = { .mode = ARGUS_DETAIL_MODE_LEAN };

	(void)state;
	assert_int_equal(detail_tier_apply(&dt, &untiered, NULL, &ctx, true, 0, 0, 1000 * MS), -ENOTSUP);
	assert_false(dt.lean);
	assert_int_equal(tr.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fixed_modes, reset),
		cmocka_unit_test_setup(test_auto_holds_full, reset),
		cmocka_unit_test_setup(test_apply_order, reset),
		cmocka_unit_test_setup(test_full_start_writes_nothing, reset),
		cmocka_unit_test_setup(test_untiered_platform, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
