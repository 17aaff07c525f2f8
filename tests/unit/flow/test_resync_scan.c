// SPDX-License-Identifier: MIT
/*
 * Resynchronisation's search of the whole program (resync.c): the index
 * lists code offsets among every method's code, so a candidate's method is
 * found from its offset.  Rs places its three negations between long
 * methods, each in other 64-byte pages of code: a search by one opcode
 * (the union of its lists), by two (a pair's list), at a method entry
 * (the lists of first instructions) and after a return must each find
 * exactly the instructions that fit, in their own methods.  A search by
 * three opcodes or more skips a list's entries by their third opcode:
 * three methods test that it keeps those that fit after a fused pair and
 * a branch.  Third opcodes are made as scans reach them, 256 entries at a
 * time: many's one iload_1 bipush that goes on to iadd is its list's
 * last, past the first 256.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flow/flow.h"
#include "script_fixture.h"

#define LONG_BODY                                                            \
	"int s = a; s = s * 31 + 7; s = s * 37 + 11; s = s * 41 + 13;"      \
	" s = s * 43 + 17; s = s * 47 + 19; s = s * 53 + 23; s = s * 59 + 29;" \
	" s = s * 61 + 31; s = s * 67 + 37; s = s * 71 + 41; s = s * 73 + 43;" \
	" s = s * 79 + 47; s = s * 83 + 53; s = s * 89 + 59; return s;"

#define TEN_STEPS                                                           \
	"s = s * 31 + 7; s = s * 31 + 7; s = s * 31 + 7; s = s * 31 + 7;"      \
	" s = s * 31 + 7; s = s * 31 + 7; s = s * 31 + 7; s = s * 31 + 7;"     \
	" s = s * 31 + 7; s = s * 31 + 7; "
#define HUNDRED_STEPS                                                       \
	TEN_STEPS TEN_STEPS TEN_STEPS TEN_STEPS TEN_STEPS TEN_STEPS TEN_STEPS  \
	TEN_STEPS TEN_STEPS TEN_STEPS

static const char *src =
	"public class Rs {\n"
	"    static int long1(int a) { " LONG_BODY " }\n"
	"    static int neg1(int a) { return -a; }\n"
	"    static int long2(int a) { " LONG_BODY " }\n"
	"    static int neg2(int a, int b) { int c = -a; return c + b; }\n"
	"    static int long3(int a) { " LONG_BODY " }\n"
	"    static int neg3(int a) { return -a; }\n"
	"    static int callNeg(int a) { int r = neg2(a, 1); return r - 5; }\n"
	"    Rs o; int i;\n"
	"    int fieldOfField() { return this.o.i; }\n"
	"    int plusField(int a) { return a + this.i; }\n"
	"    static int square(int a) { if (a == 0) return 1; return a * a; }\n"
	"    static int pick(int a) { int r; if (a == 0) r = 3; else r = 4; return r; }\n"
	"    static int many(int a) { int s = a; " HUNDRED_STEPS HUNDRED_STEPS HUNDRED_STEPS
	"s = s + 31; return s; }\n"
	"}\n";

enum { CL_ENTRY = 1 };

static int setup(void **state)
{
	static const char *const cls[] = { "Rs" };
	*state = script_fx_new(src, cls, 1);
	return 0;
}

/* X's script through a fresh flow (the entry codelet known), which must
 * give N events (*OUT); the flow, to free. */
static struct flow *reconstruct(struct script_fx *x, size_t n,
				const struct jpb_flow_event **out)
{
	struct flow *f;
	assert_int_equal(flow_alloc(&f, x->p, NULL), 0);
	assert_int_equal(flow_set_codelet(f, CL_ENTRY, "zerolocals"), 0);
	size_t got;
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, out, &got, NULL), 0);
	assert_int_equal(got, n);
	return f;
}

/* Run X's script through a fresh flow: its events must be N, each of one
 * of the methods named in NAMES ("a|b"), at BCI[i], with STATUS and
 * NCAND. */
static void expect(struct script_fx *x, size_t n, const char *const *names,
		   const int32_t *bci, uint8_t status, const uint16_t *ncand)
{
	const struct jpb_flow_event *out;
	struct flow *f = reconstruct(x, n, &out);
	for (size_t i = 0; i < n; i++) {
		struct flow_method_info m = flow_method(f, out[i].method);
		assert_non_null(m.name);
		char bar[80];
		snprintf(bar, sizeof(bar), "|%s|", names[i]);
		char me[80];
		snprintf(me, sizeof(me), "|%s|", m.name);
		if (!strstr(bar, me))
			fail_msg("event %zu: %s, want %s", i, m.name, names[i]);
		assert_int_equal(out[i].bci, bci[i]);
		assert_int_equal(out[i].status, status);
		assert_int_equal(out[i].ncand, ncand[i]);
	}
	flow_free(f);
}

/* ineg alone: every ineg of the program, in three methods. */
static void test_one_opcode(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	script_ops(&x->s, 0x74, -1);
	static const char *const names[] = { "neg1|neg2|neg3" };
	static const int32_t bci[] = { 1 };
	static const uint16_t ncand[] = { 3 };
	expect(x, 1, names, bci, JPB_FLOW_CHOSEN, ncand);
}

/* ineg then ireturn: neg2's ineg is followed by istore_2. */
static void test_opcode_pair(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	script_ops(&x->s, 0x74, 0xac, -1);
	static const char *const names[] = { "neg1|neg3", "neg1|neg3" };
	static const int32_t bci[] = { 1, 2 };
	static const uint16_t ncand[] = { 2, 2 };
	expect(x, 2, names, bci, JPB_FLOW_CHOSEN, ncand);
}

/* An unknown method entered, running iload_0 ineg ireturn: the negations'
 * first instructions, not the long methods' iload_0 (then istore_1). */
static void test_entry(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x74, 0xac, -1);
	static const char *const names[] = { "neg1|neg3", "neg1|neg3", "neg1|neg3" };
	static const int32_t bci[] = { 0, 1, 2 };
	static const uint16_t ncand[] = { 2, 2, 2 };
	expect(x, 3, names, bci, JPB_FLOW_CHOSEN, ncand);
}

/* neg2 entered with its caller unknown, then the code after its call:
 * callNeg's istore_1 after invokestatic, the one place in the program. */
static void test_after_return(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x74, 0x3d, 0x1c, 0x1b, 0x60, 0xac, -1); /* neg2 */
	script_ops(&x->s, 0x3c, 0x1b, 0x08, 0x64, 0xac, -1);             /* callNeg */
	static const char *const names[] = { "neg2", "neg2", "neg2", "neg2", "neg2",
					     "neg2", "neg2", "callNeg", "callNeg",
					     "callNeg", "callNeg", "callNeg" };
	static const int32_t bci[] = { 0, 1, 2, 3, 4, 5, 6, 5, 6, 7, 8, 9 };
	static const uint16_t ncand[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	expect(x, 12, names, bci, JPB_FLOW_CERTAIN, ncand);
}

/* Run X's script through a fresh flow: N events, all in method NAME, at
 * BCI[i]. */
static void expect_path(struct script_fx *x, size_t n, const char *name, const int32_t *bci)
{
	const struct jpb_flow_event *out;
	struct flow *f = reconstruct(x, n, &out);
	for (size_t i = 0; i < n; i++) {
		struct flow_method_info m = flow_method(f, out[i].method);
		assert_non_null(m.name);
		assert_string_equal(m.name, name);
		assert_int_equal(out[i].bci, bci[i]);
	}
	assert_int_equal(out[0].ncand, 1);
	flow_free(f);
}

/* OPS alone (ending in -1), through a fresh flow: one event each, all in
 * method NAME, at BCI. */
static void expect_ops(struct script_fx *x, const int *ops, const char *name,
		       const int32_t *bci)
{
	size_t n = 0;
	x->s.n = 0;
	for (; ops[n] >= 0; n++)
		script_add(&x->s, JPB_DEV_INTERP)->opcode = (uint8_t)ops[n];
	expect_path(x, n, name, bci);
}

/* fieldOfField's aload_0 getfield o getfield i ireturn, where both the
 * pair's second instruction and the one after the pair run getfield:
 * aload_0 getfield ireturn, the first two one dispatch, and aload_0
 * getfield getfield ireturn, each its own.  plusField's aload_0 getfield
 * i, followed by iadd, fits neither. */
static void test_fused_third(void **state)
{
	if (!*state)
		skip();
	static const int fused[] = { 0x2a, 0xb4, 0xac, -1 }, apart[] = { 0x2a, 0xb4, 0xb4, 0xac, -1 };
	static const int32_t fused_at[] = { 0, 4, 7 }, apart_at[] = { 0, 1, 4, 7 };
	expect_ops(*state, fused, "fieldOfField", fused_at);
	expect_ops(*state, apart, "fieldOfField", apart_at);
}

/* iload_1, then aload_0 getfield as one dispatch, iadd, ireturn:
 * plusField, whose iload_1 has no third opcode, as the instruction after
 * it starts a fused pair. */
static void test_third_after_fused(void **state)
{
	if (!*state)
		skip();
	static const int ops[] = { 0x1b, 0x2a, 0x60, 0xac, -1 };
	static const int32_t at[] = { 0, 1, 5, 6 };
	expect_ops(*state, ops, "plusField", at);
}

/* ifne, then iload_0 iload_0 imul ireturn: square's branch taken, where
 * the way not taken runs iconst_1 ireturn. */
static void test_branch_third(void **state)
{
	if (!*state)
		skip();
	static const int ops[] = { 0x9a, 0x1a, 0x1a, 0x68, 0xac, -1 };
	static const int32_t at[] = { 1, 6, 7, 8, 9 };
	expect_ops(*state, ops, "square", at);
}

/* The index lists a fused pair's first instruction by what follows the
 * pair too, and a goto by its target's opcode: aload_0 (with getfield)
 * iadd ireturn is plusField's from bci 1, goto iload_1 ireturn pick's
 * from bci 6. */
static void test_index_two_ways(void **state)
{
	if (!*state)
		skip();
	static const int pair[] = { 0x2a, 0x60, 0xac, -1 }, jump[] = { 0xa7, 0x1b, 0xac, -1 };
	static const int32_t pair_at[] = { 1, 5, 6 }, jump_at[] = { 6, 11, 12 };
	expect_ops(*state, pair, "plusField", pair_at);
	expect_ops(*state, jump, "pick", jump_at);
}

/* iload_1 bipush iadd istore_1 iload_1 ireturn: many's last statements,
 * after 300 of iload_1 bipush imul (8 bytes each, from bci 2). */
static void test_third_far_in_list(void **state)
{
	if (!*state)
		skip();
	static const int ops[] = { 0x1b, 0x10, 0x60, 0x3c, 0x1b, 0xac, -1 };
	static const int32_t at[] = { 2402, 2403, 2405, 2406, 2407, 2408 };
	expect_ops(*state, ops, "many", at);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_opcode),
		cmocka_unit_test(test_opcode_pair),
		cmocka_unit_test(test_entry),
		cmocka_unit_test(test_after_return),
		cmocka_unit_test(test_fused_third),
		cmocka_unit_test(test_third_after_fused),
		cmocka_unit_test(test_branch_third),
		cmocka_unit_test(test_index_two_ways),
		cmocka_unit_test(test_third_far_in_list),
	};
	return cmocka_run_group_tests(tests, setup, script_fx_teardown);
}
