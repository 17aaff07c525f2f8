// SPDX-License-Identifier: MIT
/* The flow export's formatter on hand-built flows: straight-line ranges,
 * branch directions, status and method breaks, --full, JSON Lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "bundle.h"
#include "export/flow/format.h"
#include "export/model/clock.h"
#include "export/model/methods.h"

/*  0 iload_0; 1 ifeq -> 8; 4 iconst_1; 5 goto -> 9; 8 iconst_0; 9 ireturn */
static const uint8_t code[] = { 0x1a, 0x99, 0x00, 0x07, 0x04, 0xa7, 0x00,
				0x04, 0x03, 0xac };
static const struct jcf_line lines[] = { { 0, 10 }, { 4, 11 }, { 8, 12 },
					 { 9, 13 } };
static struct jcf_method m1 = { .name = "pick", .descriptor = "(I)I",
				.code_length = sizeof(code), .code = code,
				.nlines = 4, .lines = lines };

static struct xmethods *methods(void)
{
	struct xmethods *m;
	assert_int_equal(xmethods_alloc(&m), 0);
	assert_int_equal(xmethods_add(m, 1, "Lp/Foo;", "pick", "(I)I", NULL, &m1), 0);
	/* method 2 has no code: directions come from the fall-through */
	assert_int_equal(xmethods_add(m, 2, "Lp/Bar;", "run", "()V", NULL, NULL), 0);
	return m;
}

static struct jpb_flow_event ev(uint32_t m, int32_t bci, uint8_t op,
				uint8_t status, uint64_t tsc)
{
	return (struct jpb_flow_event){ m, bci, op, status,
					status == JPB_FLOW_CHOSEN ? 3 : 1, 0, tsc };
}

/* Feed N events through a formatter with OPTS; the output, malloc'ed. */
static char *run(const struct xflow_opts *o, const struct jpb_flow_event *e,
		 size_t n, const struct xclock *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xmethods *m = methods();
	struct xflow *x;
	assert_non_null(f);
	assert_int_equal(xflow_alloc(&x, f, o, m, c), 0);
	assert_int_equal(xflow_begin(x, 42, "worker"), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(xflow_event(x, &e[i]), 0);
	assert_int_equal(xflow_end(x), 0);
	xflow_free(x);
	xmethods_free(m);
	fclose(f);
	return buf;
}

/* pick() twice: ifeq falls through, then jumps. */
static const struct jpb_flow_event twice[] = {
	{ 1, 0, 0x1a, JPB_FLOW_CERTAIN, 1, 0, 100 },
	{ 1, 1, 0x99, JPB_FLOW_CERTAIN, 1, 0, 110 },
	{ 1, 4, 0x04, JPB_FLOW_CERTAIN, 1, 0, 120 },
	{ 1, 5, 0xa7, JPB_FLOW_CERTAIN, 1, 0, 130 },
	{ 1, 9, 0xac, JPB_FLOW_CERTAIN, 1, 0, 140 },
	{ 1, 0, 0x1a, JPB_FLOW_DECODED, 1, 0, 200 },
	{ 1, 1, 0x99, JPB_FLOW_DECODED, 1, 0, 210 },
	{ 1, 8, 0x03, JPB_FLOW_DECODED, 1, 0, 220 },
	{ 1, 9, 0xac, JPB_FLOW_DECODED, 1, 0, 230 },
};

static void test_ranges_text(void **state)
{
	(void)state;
	struct xflow_opts o = { 0, 0 };
	char *out = run(&o, twice, 9, NULL);
	const char *want =
		"thread 42 \"worker\"\n"
		"           100  certain     p.Foo.pick(I)I @0..1 iload_0..ifeq (2) ?:10 not taken\n"
		"           120  certain     p.Foo.pick(I)I @4..5 iconst_1..goto (2) ?:11\n"
		"           140  certain     p.Foo.pick(I)I @9 ireturn ?:13\n"
		"           200  decoded     p.Foo.pick(I)I @0..1 iload_0..ifeq (2) ?:10 taken\n"
		"           220  decoded     p.Foo.pick(I)I @8..9 iconst_0..ireturn (2) ?:12-13\n";
	assert_string_equal(out, want);
	free(out);
}

static void test_full_json(void **state)
{
	(void)state;
	struct xflow_opts o = { 1, 1 };
	char *out = run(&o, twice, 9, NULL);
	char *save, *line = strtok_r(out, "\n", &save);
	size_t n = 0;
	const char *branch[9] = { NULL, "not_taken", NULL, NULL, NULL,
				  NULL, "taken", NULL, NULL };
	for (; line; line = strtok_r(NULL, "\n", &save), n++) {
		json_error_t je;
		json_t *j = json_loads(line, 0, &je);
		assert_non_null(j);
		assert_int_equal(json_integer_value(json_object_get(j, "bci")),
				 twice[n].bci);
		assert_int_equal(json_integer_value(json_object_get(j, "t")),
				 (json_int_t)twice[n].tsc);
		assert_string_equal(json_string_value(json_object_get(j, "method")),
				    "p.Foo.pick(I)I");
		assert_null(json_object_get(j, "count")); /* no ranges in --full */
		const char *b = json_string_value(json_object_get(j, "branch"));
		if (branch[n])
			assert_string_equal(b, branch[n]);
		else
			assert_null(b);
		json_decref(j);
	}
	assert_int_equal(n, 9);
	free(out);
}

/* A range breaks at a status change, a method change and an unknown
 * position; CHOSEN shows its candidate count; the clock converts. */
static void test_breaks_and_clock(void **state)
{
	(void)state;
	struct jpb_flow_event e[] = {
		ev(2, 0, 0x2a, JPB_FLOW_CHOSEN, 1000),  /* aload_0 */
		ev(2, 1, 0x59, JPB_FLOW_CHOSEN, 1000),  /* dup */
		ev(2, 2, 0x57, JPB_FLOW_RECOVERED, 1000), /* pop */
		ev(0, -1, 0x60, JPB_FLOW_UNKNOWN, 2000), /* iadd */
		ev(2, 3, 0x99, JPB_FLOW_CERTAIN, 3000), /* ifeq */
		ev(2, 6, 0xb1, JPB_FLOW_CERTAIN, 3000), /* return */
		ev(2, 9, 0x99, JPB_FLOW_CERTAIN, 3000), /* ifeq, last event */
	};
	/* 2 ns per tick from tsc 0 = mono 5000, recording started at 5000 */
	uint64_t tsc[] = { 0, 1000 }, ns[] = { 5000, 7000 };
	struct xclock *c;
	assert_int_equal(xclock_alloc(&c, tsc, ns, 2, 5000), 0);
	struct xflow_opts o = { 0, 0 };
	char *out = run(&o, e, 7, c);
	const char *want =
		"thread 42 \"worker\"\n"
		"          2000  chosen(3)   p.Bar.run()V @0..1 aload_0..dup (2)\n"
		"          2000  recovered   p.Bar.run()V @2 pop\n"
		"          4000  unknown     ? @? iadd\n"
		"          6000  certain     p.Bar.run()V @3 ifeq not taken\n"
		"          6000  certain     p.Bar.run()V @6 return\n"
		"          6000  certain     p.Bar.run()V @9 ifeq unknown\n";
	assert_string_equal(out, want);
	free(out);
	xclock_free(c);
}

static void test_direction(void **state)
{
	(void)state;
	struct xmethods *m = methods();
	struct jpb_flow_event br = ev(1, 1, 0x99, JPB_FLOW_DECODED, 0);
	struct jpb_flow_event fall = ev(1, 4, 0x04, JPB_FLOW_DECODED, 0);
	struct jpb_flow_event jump = ev(1, 8, 0x03, JPB_FLOW_DECODED, 0);
	struct jpb_flow_event odd = ev(1, 9, 0xac, JPB_FLOW_DECODED, 0);
	struct jpb_flow_event other = ev(2, 8, 0x03, JPB_FLOW_DECODED, 0);
	assert_int_equal(xflow_direction(&br, &fall, m), XF_BRANCH_NOT_TAKEN);
	assert_int_equal(xflow_direction(&br, &jump, m), XF_BRANCH_TAKEN);
	/* neither the fall-through nor the target: an exception, a gap */
	assert_int_equal(xflow_direction(&br, &odd, m), XF_BRANCH_UNKNOWN);
	assert_int_equal(xflow_direction(&br, &other, m), XF_BRANCH_UNKNOWN);
	assert_int_equal(xflow_direction(&br, NULL, m), XF_BRANCH_UNKNOWN);
	assert_int_equal(xflow_direction(&fall, &jump, m), XF_BRANCH_NONE);
	/* without code: the fall-through is bci + 3, anything else a jump */
	struct jpb_flow_event br2 = ev(2, 3, 0x99, JPB_FLOW_CERTAIN, 0);
	struct jpb_flow_event n2 = ev(2, 6, 0xb1, JPB_FLOW_CERTAIN, 0);
	struct jpb_flow_event j2 = ev(2, 20, 0xb1, JPB_FLOW_CERTAIN, 0);
	assert_int_equal(xflow_direction(&br2, &n2, m), XF_BRANCH_NOT_TAKEN);
	assert_int_equal(xflow_direction(&br2, &j2, m), XF_BRANCH_TAKEN);
	xmethods_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges_text),
		cmocka_unit_test(test_full_json),
		cmocka_unit_test(test_breaks_and_clock),
		cmocka_unit_test(test_direction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
