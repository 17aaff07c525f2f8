// SPDX-License-Identifier: MIT
/* The opcode table against JVMS §6.5 and instruction lengths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bundle.h"
#include "java/bytecodes.h"

static void test_names_and_lengths(void **state)
{
	(void)state;
	assert_string_equal(jbc_name(0x00), "nop");
	assert_string_equal(jbc_name(0x2a), "aload_0");
	assert_string_equal(jbc_name(0x84), "iinc");
	assert_string_equal(jbc_name(0xa7), "goto");
	assert_string_equal(jbc_name(0xb9), "invokeinterface");
	assert_string_equal(jbc_name(0xc9), "jsr_w");
	assert_string_equal(jbc_name(0xcb), "invalid");
	assert_int_equal(jbc_info(0x10)->length, 2); /* bipush */
	assert_int_equal(jbc_info(0x11)->length, 3); /* sipush */
	assert_int_equal(jbc_info(0xb9)->length, 5);
	assert_int_equal(jbc_info(0xba)->length, 5);
	assert_int_equal(jbc_info(0xc5)->length, 4); /* multianewarray */
	assert_int_equal(jbc_info(0xc8)->length, 5); /* goto_w */
	assert_int_equal(jbc_info(0xcb)->kind, JBC_INVALID);
}

static void test_kinds(void **state)
{
	(void)state;
	for (int op = 0x99; op <= 0xa6; op++)
		assert_int_equal(jbc_info((uint8_t)op)->kind, JBC_COND_BRANCH);
	assert_int_equal(jbc_info(0xc6)->kind, JBC_COND_BRANCH);
	assert_int_equal(jbc_info(0xc7)->kind, JBC_COND_BRANCH);
	for (int op = 0xac; op <= 0xb1; op++)
		assert_int_equal(jbc_info((uint8_t)op)->kind, JBC_RETURN);
	assert_int_equal(jbc_info(0xb6)->kind, JBC_INVOKE_VIRTUAL);
	assert_int_equal(jbc_info(0xb7)->kind, JBC_INVOKE_SPECIAL);
	assert_int_equal(jbc_info(0xb8)->kind, JBC_INVOKE_STATIC);
	assert_int_equal(jbc_info(0xb9)->kind, JBC_INVOKE_INTERFACE);
	assert_int_equal(jbc_info(0xba)->kind, JBC_INVOKE_DYNAMIC);
	assert_int_equal(jbc_info(0xbf)->kind, JBC_ATHROW);
	assert_int_equal(jbc_info(0xaa)->kind, JBC_SWITCH);
	assert_int_equal(jbc_info(0x60)->kind, JBC_OTHER);
	assert_true(jbc_is_invoke(JBC_INVOKE_DYNAMIC));
	assert_false(jbc_is_invoke(JBC_RETURN));
	int defined = 0;
	for (int op = 0; op < 256; op++)
		defined += jbc_info((uint8_t)op)->kind != JBC_INVALID;
	assert_int_equal(defined, 205); /* 0x00-0xca, impdep1, impdep2 */
}

static void test_switch_lengths(void **state)
{
	(void)state;
	/* at bci 1: tableswitch, 2 pad bytes, default, low 0, high 2, 3 offsets */
	uint8_t ts[1 + 1 + 2 + 12 + 12] = { 0x00, 0xaa };
	ts[4 + 7] = 0;  /* low = 0 */
	ts[4 + 11] = 2; /* high = 2 */
	assert_int_equal(jbc_length(ts, sizeof(ts), 1), 1 + 2 + 12 + 12);
	assert_int_equal(jbc_length(ts, sizeof(ts) - 1, 1), jpb_err_truncated);
	/* at bci 0: lookupswitch, 3 pad bytes, default, npairs 1, one pair */
	uint8_t ls[1 + 3 + 8 + 8] = { 0xab };
	ls[4 + 7] = 1;
	assert_int_equal(jbc_length(ls, sizeof(ls), 0), (int)sizeof(ls));
	/* high < low is corrupt */
	uint8_t bad[16] = { 0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1 };
	assert_int_equal(jbc_length(bad, sizeof(bad), 0), jpb_err_corrupt);
}

static void test_wide_and_targets(void **state)
{
	(void)state;
	uint8_t w1[] = { 0xc4, 0x15, 0x01, 0x00 };             /* wide iload */
	uint8_t w2[] = { 0xc4, 0x84, 0x00, 0x01, 0x00, 0x05 }; /* wide iinc */
	assert_int_equal(jbc_length(w1, sizeof(w1), 0), 4);
	assert_int_equal(jbc_length(w2, sizeof(w2), 0), 6);
	assert_int_equal(jbc_length(w2, 5, 0), jpb_err_truncated);
	uint8_t code[] = { 0x00, 0x00, 0xa7, 0xff, 0xfe, 0x99, 0x00, 0x07,
			   0xc8, 0x00, 0x00, 0x00, 0x10 };
	assert_int_equal(jbc_branch_target(code, sizeof(code), 2), 0);
	assert_int_equal(jbc_branch_target(code, sizeof(code), 5), 12);
	assert_int_equal(jbc_branch_target(code, sizeof(code), 8), 24);
	assert_int_equal(jbc_branch_target(code, sizeof(code), 0), -1);
	assert_int_equal(jbc_branch_target(code, 7, 5), -1);
	uint8_t inval[] = { 0xcb };
	assert_true(jbc_length(inval, 1, 0) < 0);
}

static void test_be32(void **state)
{
	(void)state;
	const uint8_t a[] = { 0x12, 0x34, 0x56, 0x78 };
	const uint8_t b[] = { 0xff, 0xff, 0xff, 0xfe };
	const uint8_t c[] = { 0x80, 0x00, 0x00, 0x01 };
	assert_int_equal(jbc_be32(a), 0x12345678);
	assert_int_equal(jbc_be32(b), -2);
	assert_int_equal(jbc_be32(c), INT32_MIN + 1);
	assert_int_equal((uint32_t)jbc_be32(b), 0xfffffffeu);
}

static void put32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;
	p[0] = (uint8_t)(u >> 24);
	p[1] = (uint8_t)(u >> 16);
	p[2] = (uint8_t)(u >> 8);
	p[3] = (uint8_t)u;
}

/* The view of the switch at CODE[BCI], whose operands start at P and
 * whose last byte is END - 1: N cases, keys KEYS, targets TO, default
 * DEF. */
static void expect_view(const uint8_t *code, size_t len, size_t bci,
			size_t p, size_t end, int64_t def, uint32_t n,
			const int32_t *keys, const int64_t *to)
{
	assert_int_equal(jbc_switch_operands(bci), p);
	assert_int_equal(jbc_length(code, len, bci), (int)(end - bci));
	struct jbc_switch s = jbc_switch_at(code, bci);
	assert_int_equal(s.ncases, n);
	assert_int_equal(jbc_switch_default(&s), def);
	assert_int_equal(jbc_switch_succ(&s, 0), def);
	for (uint32_t k = 0; k < n; k++) {
		assert_int_equal(jbc_switch_key(&s, k), keys[k]);
		assert_int_equal(jbc_switch_target(&s, k), to[k]);
		assert_int_equal(jbc_switch_succ(&s, k + 1), to[k]);
	}
}

/* A tableswitch at every bci % 4 (its pad 3 - bci % 4 bytes): default
 * 40, low -2, high 1, offsets -bci (to bci 0), 4, 0x7fff and 8. */
static void test_tableswitch_view(void **state)
{
	(void)state;
	for (size_t bci = 0; bci < 8; bci++) {
		uint8_t code[8 + 4 + 12 + 16] = { 0 };
		size_t p = bci + 1 + (3 - bci % 4);
		code[bci] = JBC_TABLESWITCH;
		const int32_t ops[] = { 40, -2, 1, -(int32_t)bci, 4, 0x7fff, 8 };
		for (size_t w = 0; w < 7; w++)
			put32(code + p + 4 * w, ops[w]);
		const int32_t keys[] = { -2, -1, 0, 1 };
		const int64_t to[] = { 0, (int64_t)bci + 4,
				       (int64_t)bci + 0x7fff, (int64_t)bci + 8 };
		expect_view(code, sizeof(code), bci, p, p + 28,
			    (int64_t)bci + 40, 4, keys, to);
	}
}

/* A lookupswitch at every bci % 4: default 20, 3 pairs (-5: offset
 * -1 - bci, to bci -1; 7: 12; INT32_MAX: 0x10000). */
static void test_lookupswitch_view(void **state)
{
	(void)state;
	for (size_t bci = 0; bci < 8; bci++) {
		uint8_t code[8 + 4 + 8 + 24] = { 0 };
		size_t p = bci + 1 + (3 - bci % 4);
		code[bci] = JBC_LOOKUPSWITCH;
		const int32_t ops[] = { 20, 3, -5, -1 - (int32_t)bci, 7, 12,
					INT32_MAX, 0x10000 };
		for (size_t w = 0; w < 8; w++)
			put32(code + p + 4 * w, ops[w]);
		const int32_t keys[] = { -5, 7, INT32_MAX };
		const int64_t to[] = { -1, (int64_t)bci + 12,
				       (int64_t)bci + 0x10000 };
		expect_view(code, sizeof(code), bci, p, p + 32,
			    (int64_t)bci + 20, 3, keys, to);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_lengths),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_switch_lengths),
		cmocka_unit_test(test_wide_and_targets),
		cmocka_unit_test(test_be32),
		cmocka_unit_test(test_tableswitch_view),
		cmocka_unit_test(test_lookupswitch_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
