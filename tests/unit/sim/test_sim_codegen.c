// SPDX-License-Identifier: MIT
/* The simulator's x86-64 assembler and HotSpot-shaped code model
 * (tests/sim/codegen.c, model.c): exact encodings, branch patching,
 * lookup, and the interpreter's layout invariants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/sim/codegen.c"
#include "tests/sim/model.c"
#include "tests/sim/util.c"

static void test_encodings(void **state)
{
	(void)state;
	struct cg_region r = { .base = 0x7f0000001000ull };
	size_t j = cg_jcc(&r, CR_BRANCH);          /* 0f 85 rel32 */
	cg_plain(&r, 0);                           /* 48 89 c1 */
	size_t jm = cg_jmp(&r, 0x7f0000001000ull); /* e9 rel32 back */
	cg_jmp_ind(&r, CR_DISPATCH, 0);            /* 41 ff 24 da */
	cg_call(&r, 0x7f0000001000ull, CR_NONE);   /* e8 rel32 */
	cg_call_ind(&r, CR_INVOKE);                /* 41 ff d3 */
	cg_ret(&r, CR_RETURN);                     /* c3 */
	cg_patch(&r, j, 0x7f0000001000ull + 9);
	static const uint8_t want[] = {
		0x0f, 0x85, 0x03, 0x00, 0x00, 0x00, 0x48, 0x89, 0xc1,
		0xe9, 0xf2, 0xff, 0xff, 0xff, 0x41, 0xff, 0x24, 0xda,
		0xe8, 0xe9, 0xff, 0xff, 0xff, 0x41, 0xff, 0xd3, 0xc3,
	};
	assert_int_equal(r.bytes.len, sizeof(want));
	assert_memory_equal(r.bytes.data, want, sizeof(want));
	assert_int_equal(r.insns[j].target, 0x7f0000001009ull);
	assert_int_equal(r.insns[jm].kind, CK_JMP);
	assert_int_equal(cg_find(&r, 0x7f0000001009ull), 2);
	assert_int_equal(cg_find(&r, 0x7f000000100aull), -1); /* mid-instruction */
	cg_region_fini(&r);
}

static void test_interpreter_layout(void **state)
{
	(void)state;
	struct interp in;
	interp_build(&in, 0);
	/* every defined opcode has a codelet whose two entries are
	 * instructions, the cached-TOS entry right after the vtos one */
	for (int op = 0; op <= 0xc9; op++) {
		assert_true(in.vep[op] >= CG_INTERP_BASE);
		assert_true(cg_find(&in.r, in.vep[op]) >= 0);
		assert_true(cg_find(&in.r, in.tep[op]) >= 0);
		assert_true(in.tep[op] > in.vep[op]);
	}
	/* pieces tile the interpreter code without overlap */
	uint64_t last = 0;
	for (size_t i = 0; i < in.npieces; i++) {
		const struct piece *p = &in.pieces[i];
		if (p->kind == CP_STUB)
			continue;
		assert_true(p->start >= last && p->end > p->start);
		last = p->end;
	}
	assert_int_equal(last, in.r.base + in.r.bytes.len);
	/* each conditional-branch codelet holds exactly one bytecode jcc and
	 * two dispatches; each invoke codelet ends in an invoke jump */
	const struct cg_region *r = &in.r;
	long a = cg_find(r, in.tep[0x99]), b = cg_find(r, in.vep[0x9a]);
	int jcc = 0, disp = 0;
	for (long i = a; i < b; i++) {
		jcc += r->insns[i].role == CR_BRANCH;
		disp += r->insns[i].role == CR_DISPATCH;
	}
	assert_int_equal(jcc, 1);
	assert_int_equal(disp, 2);
	long inv = cg_find(r, in.vep[0xb7]) - 1; /* last of invokevirtual */
	assert_int_equal(r->insns[inv].role, CR_INVOKE);
	assert_int_equal(r->insns[inv - 1].role, CR_PUSH_RET);
	assert_int_equal(r->insns[inv - 1].target, in.ret_entry3);
	interp_fini(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encodings),
		cmocka_unit_test(test_interpreter_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
