// SPDX-License-Identifier: MIT
/*
 * Recovery's shortest-path fallback (recover_path.c) on a method whose
 * only instruction jumps to itself: the search starts at that instruction,
 * reaches it again through the loop and finds no call to the method that
 * follows the gap.  The start instruction entered the search queue twice,
 * one more entry than the method has instructions (a heap overflow that
 * ASan reports; found on h2 at 40% loss).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "user/flow/flow_int.h"
#include "java_fixture.h"

static const char *src =
	"public class Spin {\n"
	"    static void spin() { for (;;) { } }\n"
	"    static int other(int a) { return a + 1; }\n"
	"}\n";

#define SPIN_ID 0x7101u
#define OTHER_ID 0x7102u

struct fx {
	struct jprog *p;
	struct flow *f;
};

static int setup(void **state)
{
	static const char *const cls[] = { "Spin" };
	struct jprog *p = java_fixture_program(src, cls, 1);
	*state = NULL;
	if (!p)
		return 0; /* no javac: every case skips */
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->p = p;
	assert_int_equal(jprog_add_method_id(x->p, SPIN_ID, "LSpin;", "spin", "()V"), 0);
	assert_int_equal(jprog_add_method_id(x->p, OTHER_ID, "LSpin;", "other", "(I)I"), 0);
	assert_int_equal(flow_alloc(&x->f, x->p, NULL), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	if (x) {
		flow_free(x->f);
		jprog_free(x->p);
		free(x);
	}
	return 0;
}

static void test_self_loop_no_path(void **state)
{
	struct fx *x = *state;
	if (!x)
		skip();
	int64_t spin = flow_meth_of_id(x->f, SPIN_ID);
	int64_t other = flow_meth_of_id(x->f, OTHER_ID);
	assert_true(spin >= 0 && other >= 0);
	assert_int_equal(jcfg_insn_count(flow_meth_cfg(x->f, (uint32_t)spin)), 1);
	/* After the gap: the first instruction of another method, which spin
	 * never calls. */
	struct jpb_flow_event pre = { .method = (uint32_t)spin + 1, .bci = 0 };
	struct jpb_flow_event post = { .method = (uint32_t)other + 1, .bci = 0 };
	struct jpb_flow_event *out = NULL;
	size_t n = 1;
	assert_int_equal(flow_path(x->f, &pre, &post, &out, &n), 0);
	assert_null(out);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_loop_no_path),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
