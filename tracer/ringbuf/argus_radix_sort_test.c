// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the shared radix sort (argus_radix_sort.h): the result is the
 * stable sort by key (checked against a merge sort of the same pairs), for
 * key ranges that need 0 to 6 digits, with digits every key shares (skipped
 * passes), and for 0, 1 and 2 entries.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "argus_radix_sort.h"

struct pair {
	uint64_t key;
	uint32_t idx;
};

/* The reference: a stable merge sort of (key, idx) by key. */
static void merge_sort(struct pair *a, struct pair *tmp, size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	merge_sort(a, tmp, mid);
	merge_sort(a + mid, tmp, n - mid);
	while (i < mid && j < n)
		tmp[k++] = a[j].key < a[i].key ? a[j++] : a[i++];
	while (i < mid)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Sorts n keys drawn by make_key with argus_radix_sort and checks the result
 * against the reference, pair by pair. */
static void check_against_reference(size_t n, uint64_t (*make_key)(size_t i))
{
	uint64_t *keys = malloc(2 * (n ? n : 1) * sizeof(*keys)), max_key = 0;
	uint32_t *idx = malloc(2 * (n ? n : 1) * sizeof(*idx));
	struct pair *ref = malloc((n ? n : 1) * sizeof(*ref)), *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	struct argus_radix_sort s;

	assert_non_null(keys);
	assert_non_null(idx);
	assert_non_null(ref);
	assert_non_null(tmp);
	for (size_t i = 0; i < n; i++) {
		keys[i] = make_key(i);
		idx[i] = (uint32_t)i;
		ref[i] = (struct pair){ keys[i], (uint32_t)i };
		if (keys[i] > max_key)
			max_key = keys[i];
	}
	merge_sort(ref, tmp, n);
	s = (struct argus_radix_sort){ keys, keys + n, idx, idx + n };
	assert_int_equal(argus_radix_sort(&s, n, max_key), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s.keys[i], ref[i].key);
		assert_int_equal(s.idx[i], ref[i].idx);
	}
	free(keys);
	free(idx);
	free(ref);
	free(tmp);
}

static uint64_t few_distinct(size_t i) { (void)i; return next_random() % 5; }               /* many ties */
static uint64_t one_digit(size_t i) { (void)i; return next_random() % 2000; }
static uint64_t timestamps(size_t i) { return 1000000000ull + i * 37 % 5000 * 1000; }       /* ns, 5 ms range */
static uint64_t full_width(size_t i) { (void)i; return next_random(); }                    /* 6 digits */
static uint64_t shared_middle(size_t i)
{
	/* digits 1 and 2 the same for every key: those passes are skipped */
	return (next_random() & 0x7ff) | (0x5ull << 11) | (0x3ull << 22) | ((next_random() & 0xff) << 33);
}
static uint64_t all_equal(size_t i) { (void)i; return 42; }

static void test_stable_sort_by_key_for_every_width(void **state)
{
	(void)state;
	check_against_reference(10000, few_distinct);
	check_against_reference(10000, one_digit);
	check_against_reference(10000, timestamps);
	check_against_reference(10000, full_width);
	check_against_reference(10000, shared_middle);
	check_against_reference(1000, all_equal);
}

static void test_tiny_inputs(void **state)
{
	(void)state;
	check_against_reference(0, full_width);
	check_against_reference(1, full_width);
	check_against_reference(2, full_width);
}

static void test_zero_max_key_leaves_the_arrays_alone(void **state)
{
	uint64_t keys[6] = { 0, 0, 0 };
	uint32_t idx[6] = { 2, 0, 1 };
	struct argus_radix_sort s = { keys, keys + 3, idx, idx + 3 };

	(void)state;
	assert_int_equal(argus_radix_sort(&s, 3, 0), 0);
	assert_ptr_equal(s.idx, idx);
	assert_int_equal(idx[0], 2);
	assert_int_equal(idx[1], 0);
	assert_int_equal(idx[2], 1);
}

/* Edges are sorted twice (by src, then by ts): the second sort keeps the
 * first one's order among equal keys. */
static void test_two_sorts_give_lexicographic_order(void **state)
{
	enum { N = 5000 };
	uint64_t *keys = malloc(2 * N * sizeof(*keys)), src[N], ts[N];
	uint32_t *idx = malloc(2 * N * sizeof(*idx));
	struct argus_radix_sort s = { keys, keys + N, idx, idx + N };

	(void)state;
	assert_non_null(keys);
	assert_non_null(idx);
	for (uint32_t i = 0; i < N; i++) {
		src[i] = next_random() % 300;
		ts[i] = next_random() % 100;
		keys[i] = src[i];
		idx[i] = i;
	}
	assert_int_equal(argus_radix_sort(&s, N, 299), 0);
	for (uint32_t i = 0; i < N; i++)
		s.keys[i] = ts[s.idx[i]];
	assert_int_equal(argus_radix_sort(&s, N, 99), 0);
	for (uint32_t i = 1; i < N; i++) {
		uint32_t a = s.idx[i - 1], b = s.idx[i];

		assert_true(ts[a] < ts[b] || (ts[a] == ts[b] && (src[a] < src[b] || (src[a] == src[b] && a < b))));
	}
	free(keys);
	free(idx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stable_sort_by_key_for_every_width),
		cmocka_unit_test(test_tiny_inputs),
		cmocka_unit_test(test_zero_max_key_leaves_the_arrays_alone),
		cmocka_unit_test(test_two_sorts_give_lexicographic_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
