// SPDX-License-Identifier: MIT
/* The progress bar: disabled means silent, redraws are rate-limited, the
 * final state is always drawn and the line is erased at the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/cli/progress.h"

static void test_disabled_is_silent(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct progress *p = progress_alloc(f, "decode", 0);
	assert_null(p);
	progress_update(p, 1, 2);
	progress_cb(p, 2, 2);
	progress_free(p);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
}

static void test_rate_limit_and_final(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct progress *p = progress_alloc(f, "flow", 1);
	assert_non_null(p);
	for (uint64_t i = 0; i < 1000; i++)
		progress_update(p, i, 1000);
	/* a thousand updates within 100 ms: one drawing */
	assert_int_equal(progress_draws(p), 1);
	progress_cb(p, 1000, 1000);
	assert_int_equal(progress_draws(p), 2);
	progress_update(p, 1000, 1000); /* the final state is drawn once */
	assert_int_equal(progress_draws(p), 2);
	progress_free(p);
	fclose(f);
	assert_non_null(strstr(buf, "\rflow ["));
	assert_non_null(strstr(buf, "100%"));
	assert_non_null(strstr(buf, "[##############################]"));
	/* erased at the end, so the terminal keeps no stale bar */
	assert_true(len >= 4 && strcmp(buf + len - 4, "\r\033[K") == 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disabled_is_silent),
		cmocka_unit_test(test_rate_limit_and_final),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
