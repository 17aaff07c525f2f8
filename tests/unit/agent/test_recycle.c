// SPDX-License-Identifier: MIT
/* The agent's recycled allocations (agent/recycle.c): size classes, the
 * next class up when one is empty, the limits, and freeing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "agent/recycle.c"

static void test_classes(void **state)
{
	(void)state;
	struct recycle r = { .max = 1u << 20 };
	size_t cap = 0;
	assert_null(recycle_take(&r, 100, &cap));
	void *a = malloc(4096), *b = malloc(256);
	assert_int_equal(recycle_give(&r, a, 4096), 1);
	assert_int_equal(recycle_give(&r, b, 256), 1);
	assert_int_equal(r.bytes, 4096 + 256);
	/* 3000 bytes: the 4 KiB class; 5000: none holds them. */
	assert_null(recycle_take(&r, 5000, &cap));
	assert_ptr_equal(recycle_take(&r, 3000, &cap), a);
	assert_int_equal(cap, 4096);
	/* 100 bytes: the 256 class. */
	assert_ptr_equal(recycle_take(&r, 100, &cap), b);
	assert_int_equal(cap, 256);
	assert_int_equal(r.bytes, 0);
	assert_null(recycle_take(&r, 100, &cap));
	free(a);
	free(b);
}

static void test_next_class(void **state)
{
	(void)state;
	struct recycle r = { .max = 1u << 20 };
	size_t cap = 0;
	void *big = malloc(2048);
	assert_int_equal(recycle_give(&r, big, 2048), 1);
	/* 1000 bytes want the 1 KiB class: empty, the 2 KiB one serves. */
	assert_ptr_equal(recycle_take(&r, 1000, &cap), big);
	assert_int_equal(cap, 2048);
	/* But not two classes up: 500 bytes would waste three quarters. */
	assert_int_equal(recycle_give(&r, big, 2048), 1);
	assert_null(recycle_take(&r, 500, &cap));
	/* A block between sizes serves its lower class, no more. */
	void *odd = malloc(3000);
	assert_int_equal(recycle_give(&r, odd, 3000), 1);
	assert_ptr_equal(recycle_take(&r, 2048, &cap), odd);
	assert_int_equal(cap, 2048);
	free(odd);
	recycle_free(&r);
	assert_int_equal(r.bytes, 0);
	assert_int_equal(r.n[3], 0);
}

static void test_limits(void **state)
{
	(void)state;
	struct recycle r = { .max = 8192 };
	void *small = malloc(64), *huge = malloc(128 * 1024);
	/* Under the smallest class, over the largest: not kept. */
	assert_int_equal(recycle_give(&r, small, 64), 0);
	assert_int_equal(recycle_give(&r, huge, 128 * 1024), 0);
	assert_int_equal(recycle_give(&r, NULL, 4096), 0);
	free(small);
	free(huge);
	/* The byte limit: two 4 KiB blocks fit in 8192, a third does not. */
	void *p[3] = { malloc(4096), malloc(4096), malloc(4096) };
	assert_int_equal(recycle_give(&r, p[0], 4096), 1);
	assert_int_equal(recycle_give(&r, p[1], 4096), 1);
	assert_int_equal(recycle_give(&r, p[2], 4096), 0);
	free(p[2]);
	/* The slot limit of one class. */
	struct recycle s = { .max = UINT64_MAX };
	for (int i = 0; i < RECYCLE_SLOTS; i++)
		assert_int_equal(recycle_give(&s, malloc(256), 256), 1);
	void *extra = malloc(256);
	assert_int_equal(recycle_give(&s, extra, 256), 0);
	free(extra);
	/* ASan's leak check says whether these free everything kept. */
	recycle_free(&r);
	recycle_free(&s);
	assert_int_equal(s.n[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_next_class),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
