// SPDX-License-Identifier: MIT
/* The simulator's locals-zeroing loop (tests/sim/model.c, locals.c):
 * HotSpot's bytes in the zerolocals entries only, and the count n =
 * locals beyond the parameters, from descriptors and, for hand-made
 * truths, from bytecodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/sim/codegen.c"
#include "tests/sim/locals.c"
#include "tests/sim/model.c"
#include "tests/sim/util.c"

/* lea; test; jle +9 (rel32); push $0; dec %edx; jg -9 */
static const uint8_t loop_bytes[] = {
	0x4c, 0x8d, 0x74, 0xcc, 0xf8, 0x85, 0xd2, 0x0f, 0x8e, 0x09, 0x00,
	0x00, 0x00, 0x68, 0x00, 0x00, 0x00, 0x00, 0xff, 0xca, 0x7f, 0xf7,
};

static const uint8_t *at(const struct interp *in, uint64_t ip)
{
	return in->r.bytes.data + (ip - in->r.base);
}

static void test_entry_loop(void **state)
{
	(void)state;
	struct interp in;
	interp_build(&in, 0);
	for (int k = MK_NORMAL; k <= MK_SYNC; k++) {
		uint64_t e = in.entry[k];
		assert_memory_equal(at(&in, e), loop_bytes, sizeof(loop_bytes));
		long i = cg_find(&in.r, e + 7); /* the jle */
		assert_true(i >= 0);
		assert_int_equal(in.r.insns[i].role, CR_LOCALS_SKIP);
		assert_int_equal(in.r.insns[i].target, e + sizeof(loop_bytes));
		i = cg_find(&in.r, e + 20); /* the jg */
		assert_true(i >= 0);
		assert_int_equal(in.r.insns[i].role, CR_LOCALS_LOOP);
		assert_int_equal(in.r.insns[i].target, e + 13);
		/* before the invocation counter's check */
		long chk = i;
		while (in.r.insns[chk].role != CR_CHECK)
			chk++;
		assert_true(in.r.insns[chk].ip > e + 20);
	}
	for (int k = MK_NATIVE; k < MK_N; k++) {
		long a = cg_find(&in.r, in.entry[k]);
		for (long i = a; i < (long)in.r.ninsns &&
				 in.r.insns[i].ip < in.entry[k] + 40; i++)
			assert_true(in.r.insns[i].role != CR_LOCALS_SKIP &&
				    in.r.insns[i].role != CR_LOCALS_LOOP);
	}
	interp_fini(&in);
}

/* The scenario's methods (tests/sim/scenario.c) and a few forms. */
static void test_from_code(void **state)
{
	(void)state;
	static const uint8_t loop[] = { /* static int loop(int): slots 0-2 */
		0x03, 0x3c, 0x03, 0x3d, 0x1c, 0x1a, 0xa2, 0x00, 0x16, 0x1c,
		0x05, 0x70, 0x9a, 0x00, 0x0a, 0x1b, 0x1c, 0xb8, 0x00, 0x03,
		0x60, 0x3c, 0x84, 0x02, 0x01, 0xa7, 0xff, 0xeb, 0x1b, 0xb8,
		0x00, 0x09, 0x88, 0x57, 0xac,
	};
	static const uint8_t safe[] = { 0x1a, 0x1b, 0xb8, 0x00, 0x05, /* astore_2 */
					0xac, 0x4d, 0x02, 0xac };
	static const uint8_t sq[] = { 0x1a, 0x1a, 0x68, 0xac };
	static const uint8_t lstore3[] = { 0x09, 0x42, 0xb1 };       /* lconst_0; lstore_3 */
	static const uint8_t dstore[] = { 0x0e, 0x39, 0x07, 0xb1 };  /* dconst_0; dstore 7 */
	static const uint8_t wide[] = { 0xc4, 0x84, 0x01, 0x00, 0x00, 0x01, 0xb1 };
	assert_int_equal(locals_from_code(loop, sizeof(loop), 1), 3);
	assert_int_equal(locals_from_code(safe, sizeof(safe), 2), 3);
	assert_int_equal(locals_from_code(sq, sizeof(sq), 1), 1);
	assert_int_equal(locals_from_code(sq, sizeof(sq), 4), 4); /* unused params */
	assert_int_equal(locals_from_code(lstore3, sizeof(lstore3), 0), 5);
	assert_int_equal(locals_from_code(dstore, sizeof(dstore), 0), 9);
	assert_int_equal(locals_from_code(wide, sizeof(wide), 0), 257); /* wide iinc 256 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_loop),
		cmocka_unit_test(test_from_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
