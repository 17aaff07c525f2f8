// SPDX-License-Identifier: MIT
/* The agent's hash set (agent/hashset.c): integer keys and names, growth,
 * names that share a prefix or a hash slot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/hashset.c"

static void test_keys(void **state)
{
	(void)state;
	struct hset *s = hset_new();
	assert_non_null(s);
	/* Past the first table (4096 slots, grown at half full). */
	for (uint64_t k = 1; k <= 20000; k++)
		assert_int_equal(hset_add(s, k * 0x10), 1);
	for (uint64_t k = 1; k <= 20000; k++)
		assert_int_equal(hset_add(s, k * 0x10), 0);
	assert_int_equal(hset_add(s, 0x18), 1);
	hset_free(s);
}

static void test_names(void **state)
{
	(void)state;
	struct hset *s = hset_new();
	assert_non_null(s);
	const char *n = "java/lang/StringBuilder";
	assert_false(hset_has_name(s, n, strlen(n)));
	assert_int_equal(hset_add_name(s, n, strlen(n)), 1);
	assert_true(hset_has_name(s, n, strlen(n)));
	/* A prefix is another name: lengths count, not NUL bytes. */
	assert_false(hset_has_name(s, n, 16)); /* java/lang/String */
	assert_int_equal(hset_add_name(s, n, 16), 1);
	assert_int_equal(hset_add_name(s, n, strlen(n)), 0);
	char name[32];
	for (int i = 0; i < 10000; i++) {
		int len = snprintf(name, sizeof(name), "C%d", i);
		assert_int_equal(hset_add_name(s, name, (size_t)len), 1);
	}
	for (int i = 0; i < 10000; i++) {
		int len = snprintf(name, sizeof(name), "C%d", i);
		assert_true(hset_has_name(s, name, (size_t)len));
	}
	assert_false(hset_has_name(s, "C10000", 6));
	hset_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
