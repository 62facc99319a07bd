// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the loaders' pid queue (bpf_loader_util.h): a pid is queued
 * once however often its stacks arrive, a full queue drops new pids, and take
 * hands out the oldest first, leaving the rest in order.  (argus_set_err and
 * argus_percpu_sum run under the e2e tests, against the real kernel.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_dedups),
		cmocka_unit_test(test_full_queue_drops_new_pids),
		cmocka_unit_test(test_take_part_keeps_the_rest_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
