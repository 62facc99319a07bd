// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the loaders' pid queue (bpf_loader_util.h): a pid is queued
 * once however often its stacks arrive, a full queue drops new pids, and take
 * hands out the oldest first, leaving the rest in order.  And the record path
 * of the side sources (argus_side_record): a record goes into the trace file
 * and past observe, its pid is handed out once per interval and only for the
 * source's record type, bad input is counted, never written.  (The ring
 * buffer reader, argus_set_err and argus_percpu_sum run under the e2e tests,
 * against the real kernel.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "argus_event.h"
#include "argus_rb.h"
#include "bpf_loader_util.h"

static void test_push_dedups(void **state)
{
	struct argus_pid_queue q = { .n = 0 };
	uint32_t out[4];

	(void)state;
	argus_pid_queue_push(&q, 7);
	argus_pid_queue_push(&q, 9);
	argus_pid_queue_push(&q, 7);
	assert_int_equal(argus_pid_queue_take(&q, out, 4), 2);
	assert_int_equal(out[0], 7);
	assert_int_equal(out[1], 9);
	assert_int_equal(q.n, 0);
}

static void test_full_queue_drops_new_pids(void **state)
{
	struct argus_pid_queue q = { .n = 0 };
	uint32_t out[ARGUS_STACK_PID_QUEUE + 1];
	uint32_t pid;

	(void)state;
	for (pid = 1; pid <= ARGUS_STACK_PID_QUEUE + 1; pid++)
		argus_pid_queue_push(&q, pid);
	assert_int_equal(q.n, ARGUS_STACK_PID_QUEUE);
	assert_int_equal(argus_pid_queue_take(&q, out, ARGUS_STACK_PID_QUEUE + 1), ARGUS_STACK_PID_QUEUE);
	assert_int_equal(out[ARGUS_STACK_PID_QUEUE - 1], ARGUS_STACK_PID_QUEUE);
}

static void test_take_part_keeps_the_rest_in_order(void **state)
{
	struct argus_pid_queue q = { .n = 0 };
	uint32_t out[2];

	(void)state;
	argus_pid_queue_push(&q, 1);
	argus_pid_queue_push(&q, 2);
	argus_pid_queue_push(&q, 3);
	assert_int_equal(argus_pid_queue_take(&q, out, 2), 2);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 2);
	assert_int_equal(argus_pid_queue_take(&q, out, 2), 1);
	assert_int_equal(out[0], 3);
	assert_int_equal(argus_pid_queue_take(&q, out, 2), 0);
	/* Taken pids may be queued again. */
	argus_pid_queue_push(&q, 1);
	assert_int_equal(q.n, 1);
}


/* The side source's record path (argus_side_record), the ring buffer's
 * callback: a real trace file in a temporary directory. */
struct side_fixture {
	char dir[64], path[96];
	struct argus_rb *rb;
	struct argus_rb_producer prod;
	struct argus_side_source s;
	unsigned observed;
	uint32_t last_pid;
};

static void count_observed(void *ctx, const void *rec, uint32_t size)
{
	struct side_fixture *f = ctx;

	f->observed++;
	f->last_pid = ((const struct argus_event_header *)rec)->pid;
	assert_int_equal(size, ((const struct argus_event_header *)rec)->size);
}

static int side_setup(void **state)
{
	struct side_fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/argus-side-test-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/trace.argus", f->dir);
	assert_int_equal(argus_rb_create(f->path, 8u << 20, ARGUS_RB_DEFAULT_CHUNK_SIZE, &f->rb), 0);
	argus_rb_producer_init(f->rb, &f->prod, 1);
	f->s.observe = count_observed;
	f->s.observe_ctx = f;
	*state = f;
	return 0;
}

static int side_teardown(void **state)
{
	struct side_fixture *f = *state;

	argus_rb_producer_close(&f->prod);
	argus_rb_close(f->rb);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void record(struct side_fixture *f, uint16_t type, uint32_t pid, size_t given)
{
	struct argus_event_header h = { .ts_ns = 1, .pid = pid, .tid = pid, .type = type, .size = sizeof(h) };

	argus_side_record(&f->s, &h, given);
}

static void test_side_record_writes_observes_and_hands_out_once(void **state)
{
	struct side_fixture *f = *state;
	struct argus_rb_stats st;
	uint32_t pids[4];

	f->s.out = &f->prod;
	record(f, ARGUS_EV_USER_STACK, 42, sizeof(struct argus_event_header));
	record(f, ARGUS_EV_USER_STACK, 42, sizeof(struct argus_event_header));
	record(f, ARGUS_EV_USER_STACK, 43, sizeof(struct argus_event_header));
	assert_int_equal(f->s.records, 3);
	assert_int_equal(f->s.rejected, 0);
	assert_int_equal(f->observed, 3);
	assert_int_equal(f->last_pid, 43);
	argus_rb_producer_close(&f->prod);
	assert_int_equal(argus_rb_stats(f->rb, &st), 0);
	assert_int_equal(st.records_written, 3);
	/* 42 twice within ARGUS_SIDE_REQUEUE_NS: handed out once */
	assert_int_equal(argus_side_pids(&f->s, pids, 4), 2);
	assert_int_equal(pids[0], 42);
	assert_int_equal(pids[1], 43);
	/* taken, and still within the interval: not again */
	record(f, ARGUS_EV_USER_STACK, 42, sizeof(struct argus_event_header));
	assert_int_equal(argus_side_pids(&f->s, pids, 4), 0);
}

static void test_side_record_hands_out_only_its_type(void **state)
{
	struct side_fixture *f = *state;
	uint32_t pids[4];

	f->s.out = &f->prod;
	f->s.pid_type = ARGUS_EV_USER_STACK;
	record(f, ARGUS_EV_PROC_SNAPSHOT, 7, sizeof(struct argus_event_header));
	record(f, ARGUS_EV_USER_STACK, 8, sizeof(struct argus_event_header));
	assert_int_equal(f->s.records, 2);
	assert_int_equal(argus_side_pids(&f->s, pids, 4), 1);
	assert_int_equal(pids[0], 8);
}

static void test_side_record_rejects_bad_input(void **state)
{
	struct side_fixture *f = *state;
	uint32_t pids[4];

	record(f, ARGUS_EV_USER_STACK, 9, sizeof(struct argus_event_header));   /* not polling: no out */
	f->s.out = &f->prod;
	record(f, ARGUS_EV_USER_STACK, 9, sizeof(struct argus_event_header) - 1);   /* shorter than a header */
	record(f, ARGUS_EV_USER_STACK, 9, sizeof(struct argus_event_header) / 2);   /* size past the data */
	assert_int_equal(f->s.rejected, 3);
	assert_int_equal(f->s.records, 0);
	assert_int_equal(f->observed, 0);
	assert_int_equal(argus_side_pids(&f->s, pids, 4), 0);
	/* nothing to read the drops from: the rejected ones are what is lost */
	assert_int_equal(argus_side_lost(&f->s), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_dedups),
		cmocka_unit_test(test_full_queue_drops_new_pids),
		cmocka_unit_test(test_take_part_keeps_the_rest_in_order),
		cmocka_unit_test_setup_teardown(test_side_record_writes_observes_and_hands_out_once, side_setup,
						side_teardown),
		cmocka_unit_test_setup_teardown(test_side_record_hands_out_only_its_type, side_setup, side_teardown),
		cmocka_unit_test_setup_teardown(test_side_record_rejects_bad_input, side_setup, side_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
