// SPDX-License-Identifier: MIT
/* Per-method CFG: hand-assembled bytecode for a loop, both switch kinds,
 * wide forms, try/catch/finally, jsr/ret, and malformed code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "java/bytecodes.h"
#include "java/cfg.h"

static struct jcf_method method(const uint8_t *code, size_t len)
{
	struct jcf_method m = { 0 };
	m.name = "t";
	m.descriptor = "()V";
	m.code = code;
	m.code_length = (uint32_t)len;
	return m;
}

/* The hot copies (jcfg_hots) say what the instructions say. */
static void expect_hot(const struct jcfg *g)
{
	const struct jcfg_hot *hot = jcfg_hots(g);
	for (uint32_t i = 0; i < jcfg_insn_count(g); i++) {
		const struct jcfg_insn *in = jcfg_insn(g, i);
		uint32_t n, hn;
		const uint32_t *s = jcfg_succs(g, i, &n), *hs = jcfg_hot_succs(hot, i, &hn);
		assert_int_equal(hot[i].op, in->op);
		assert_int_equal(hot[i].kind, in->kind);
		assert_int_equal(hn, n);
		for (uint32_t k = 0; k < n; k++)
			assert_int_equal(hs[k], s[k]);
		/* every list within jcfg_hot_size */
		assert_true((size_t)((const char *)(hs + n) - (const char *)hot) <=
			    jcfg_hot_size(hot, jcfg_insn_count(g)));
	}
}

static struct jcfg *build(const struct jcf_method *m)
{
	struct jcfg *g = NULL;
	struct java_diag d = { 0 };
	int err = jcfg_build(&g, m, &d);
	if (err)
		fail_msg("jcfg_build: %s: %s", java_errstr(err), d.msg);
	assert_int_equal(jcfg_check(m), java_ok);
	expect_hot(g);
	return g;
}

/* The successor list of instruction I as bcis, for readable checks. */
static void expect_succ_bcis(const struct jcfg *g, uint32_t i, int xs,
			     const uint32_t *bcis, uint32_t n)
{
	uint32_t got;
	const uint32_t *s = xs ? jcfg_xsuccs(g, i, &got) :
				 jcfg_succs(g, i, &got);
	if (got != n)
		fail_msg("insn %u (bci %u): %u %ssuccessors, wanted %u", i,
			 jcfg_insn(g, i)->bci, got, xs ? "exception " : "", n);
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(jcfg_insn(g, s[k])->bci, bcis[k]);
}

static uint32_t at(const struct jcfg *g, uint32_t bci)
{
	int32_t i = jcfg_index_of(g, bci);
	assert_true(i >= 0);
	return (uint32_t)i;
}

static const uint8_t loop_code[] = {
	0x03,             /* 0: iconst_0 */
	0x3b,             /* 1: istore_0 */
	0x1a,             /* 2: iload_0 */
	0x10, 10,         /* 3: bipush 10 */
	0xa2, 0x00, 0x09, /* 5: if_icmpge 14 */
	0x84, 0x00, 0x01, /* 8: iinc 0 1 */
	0xa7, 0xff, 0xf7, /* 11: goto 2 */
	0x1a,             /* 14: iload_0 */
	0xac,             /* 15: ireturn */
};

static void test_loop(void **state)
{
	(void)state;
	struct jcf_line lines[] = { { 0, 1 }, { 2, 2 }, { 14, 5 } };
	struct jcf_method m = method(loop_code, sizeof(loop_code));
	m.lines = lines;
	m.nlines = 3;
	struct jcfg *g = build(&m);
	static const uint32_t bcis[] = { 0, 1, 2, 3, 5, 8, 11, 14, 15 };
	assert_int_equal(jcfg_insn_count(g), 9);
	for (uint32_t i = 0; i < 9; i++) {
		assert_int_equal(jcfg_insn(g, i)->bci, bcis[i]);
		assert_int_equal(jcfg_index_of(g, bcis[i]), i);
	}
	assert_int_equal(jcfg_insn(g, 4)->op, 0xa2);
	assert_int_equal(jcfg_insn(g, 4)->kind, JBC_COND_BRANCH);
	assert_int_equal(jcfg_insn(g, 4)->len, 3);
	assert_int_equal(jcfg_insn(g, 0)->line, 1);
	assert_int_equal(jcfg_insn(g, 4)->line, 2);
	assert_int_equal(jcfg_insn(g, 8)->line, 5);
	assert_int_equal(jcfg_index_of(g, 4), -1);      /* inside bipush */
	assert_int_equal(jcfg_index_covering(g, 4), 3);
	assert_int_equal(jcfg_index_covering(g, 15), 8);
	assert_int_equal(jcfg_index_covering(g, 16), -1);

	expect_succ_bcis(g, 0, 0, (uint32_t[]){ 1 }, 1);
	expect_succ_bcis(g, 4, 0, (uint32_t[]){ 8, 14 }, 2); /* fall, taken */
	expect_succ_bcis(g, 6, 0, (uint32_t[]){ 2 }, 1);
	expect_succ_bcis(g, 8, 0, NULL, 0);
	expect_succ_bcis(g, 4, 1, NULL, 0);

	/* Blocks: [0,2) [2,8) [8,14) [14,16). */
	static const uint32_t starts[] = { 0, 2, 8, 14 }, ends[] = { 2, 8, 14,
								     16 };
	assert_int_equal(jcfg_block_count(g), 4);
	for (uint32_t b = 0; b < 4; b++) {
		assert_int_equal(jcfg_block(g, b)->start_bci, starts[b]);
		assert_int_equal(jcfg_block(g, b)->end_bci, ends[b]);
	}
	assert_int_equal(jcfg_insn(g, 3)->block, 1);
	uint32_t n;
	const uint32_t *s = jcfg_block_succs(g, 1, &n);
	assert_int_equal(n, 2);
	assert_int_equal(s[0], 2);
	assert_int_equal(s[1], 3);
	s = jcfg_block_succs(g, 2, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0], 1);
	jcfg_block_succs(g, 3, &n);
	assert_int_equal(n, 0);
	assert_null(jcfg_block(g, 4));
	jcfg_free(g);
}

static const uint8_t switch_code[] = {
	0x1a,                   /* 0: iload_0 */
	0xaa, 0, 0,             /* 1: tableswitch, 2 pad bytes */
	0, 0, 0, 31,            /* 4: default -> 32 */
	0, 0, 0, 1,             /* 8: low 1 */
	0, 0, 0, 3,             /* 12: high 3 */
	0, 0, 0, 27,            /* 16: 1 -> 28 */
	0, 0, 0, 29,            /* 20: 2 -> 30 */
	0, 0, 0, 27,            /* 24: 3 -> 28 (again) */
	0x04, 0xac,             /* 28: iconst_1; ireturn */
	0x05, 0xac,             /* 30: iconst_2; ireturn */
	0x1a,                   /* 32: iload_0 */
	0xab, 0, 0,             /* 33: lookupswitch, 2 pad bytes */
	0, 0, 0, 27,            /* 36: default -> 60 */
	0, 0, 0, 2,             /* 40: npairs 2 */
	0xff, 0xff, 0xff, 0xfb, /* 44: key -5 */
	0xff, 0xff, 0xff, 0xfb, /* 48:   -> 28 */
	0, 0x01, 0x86, 0xa0,    /* 52: key 100000 */
	0, 0, 0, 27,            /* 56:   -> 60 */
	0x03, 0xac,             /* 60: iconst_0; ireturn */
};

static void test_switches(void **state)
{
	(void)state;
	struct jcf_method m = method(switch_code, sizeof(switch_code));
	struct jcfg *g = build(&m);
	uint32_t ts = at(g, 1), ls = at(g, 33);
	assert_int_equal(jcfg_insn(g, ts)->len, 27);
	assert_int_equal(jcfg_insn(g, ls)->len, 27);
	assert_int_equal(jcfg_insn(g, ts)->kind, JBC_SWITCH);
	/* Default first; duplicates removed. */
	expect_succ_bcis(g, ts, 0, (uint32_t[]){ 32, 28, 30 }, 3);
	expect_succ_bcis(g, ls, 0, (uint32_t[]){ 60, 28 }, 2);

	uint32_t def, np, target;
	int32_t key;
	assert_int_equal(jcfg_switch_default(g, ts, &def, &np), 0);
	assert_int_equal(def, 32);
	assert_int_equal(np, 3);
	assert_int_equal(jcfg_switch_case(g, ts, 2, &key, &target), 0);
	assert_int_equal(key, 3);
	assert_int_equal(target, 28);
	assert_int_equal(jcfg_switch_default(g, ls, &def, &np), 0);
	assert_int_equal(def, 60);
	assert_int_equal(np, 2);
	assert_int_equal(jcfg_switch_case(g, ls, 0, &key, &target), 0);
	assert_int_equal(key, -5);
	assert_int_equal(target, 28);
	assert_int_equal(jcfg_switch_case(g, ls, 1, &key, &target), 0);
	assert_int_equal(key, 100000);
	assert_int_equal(jcfg_switch_case(g, ls, 2, &key, &target),
			 java_err_invalid);
	assert_int_equal(jcfg_switch_default(g, 0, &def, &np),
			 java_err_invalid);

	/* Blocks start at 0, 28, 30, 32, 60. */
	assert_int_equal(jcfg_block_count(g), 5);
	assert_int_equal(jcfg_block(g, 3)->start_bci, 32);
	assert_int_equal(jcfg_block(g, 3)->last, ls);
	jcfg_free(g);
}

static void test_wide(void **state)
{
	(void)state;
	static const uint8_t code[] = {
		0xc4, 0x15, 0x01, 0x00,             /* 0: wide iload 256 */
		0xc4, 0x84, 0x01, 0x00, 0x03, 0xe8, /* 4: wide iinc 256 1000 */
		0xac,                               /* 10: ireturn */
	};
	struct jcf_method m = method(code, sizeof(code));
	struct jcfg *g = build(&m);
	assert_int_equal(jcfg_insn_count(g), 3);
	assert_int_equal(jcfg_insn(g, 0)->len, 4);
	assert_int_equal(jcfg_insn(g, 0)->op, JBC_WIDE);
	assert_int_equal(jcfg_insn(g, 0)->wide_op, 0x15);
	assert_int_equal(jcfg_insn(g, 1)->len, 6);
	assert_int_equal(jcfg_insn(g, 1)->wide_op, 0x84);
	assert_int_equal(jcfg_insn(g, 2)->bci, 10);
	assert_int_equal(jcfg_block_count(g), 1);
	jcfg_free(g);
}

static const uint8_t try_code[] = {
	0x1a,             /* 0: iload_0 */
	0xb8, 0x00, 0x05, /* 1: invokestatic #5 */
	0x3c,             /* 4: istore_1 */
	0x1b,             /* 5: iload_1 */
	0xac,             /* 6: ireturn */
	0x4d,             /* 7: astore_2  (catch Exception) */
	0x02,             /* 8: iconst_m1 */
	0xac,             /* 9: ireturn */
	0x4d,             /* 10: astore_2 (finally) */
	0x2c,             /* 11: aload_2 */
	0xbf,             /* 12: athrow */
};

static void test_try_catch(void **state)
{
	(void)state;
	struct jcf_exc exc[] = { { 0, 5, 7, 3, "java/lang/Exception" },
				 { 0, 5, 10, 0, NULL },
				 { 0, 7, 10, 0, NULL } };
	struct jcf_method m = method(try_code, sizeof(try_code));
	m.exc = exc;
	m.nexc = 3;
	struct jcfg *g = build(&m);
	uint32_t call = at(g, 1);
	assert_true(jcfg_insn(g, call)->can_throw);
	assert_int_equal(jcfg_insn(g, call)->cp_index, 5);
	assert_int_equal(jcfg_insn(g, call)->kind, JBC_INVOKE_STATIC);
	assert_false(jcfg_insn(g, at(g, 0))->can_throw);
	/* Calls do not end a block; the invoke falls through. */
	assert_int_equal(jcfg_insn(g, call)->block,
			 jcfg_insn(g, at(g, 4))->block);
	expect_succ_bcis(g, call, 0, (uint32_t[]){ 4 }, 1);
	/* In table order, the repeated finally handler once. */
	expect_succ_bcis(g, call, 1, (uint32_t[]){ 7, 10 }, 2);
	expect_succ_bcis(g, at(g, 0), 1, NULL, 0);    /* cannot throw */
	expect_succ_bcis(g, at(g, 4), 1, NULL, 0);
	expect_succ_bcis(g, at(g, 6), 1, (uint32_t[]){ 10 }, 1);
	expect_succ_bcis(g, at(g, 12), 1, NULL, 0);   /* outside the ranges */
	expect_succ_bcis(g, at(g, 12), 0, NULL, 0);

	assert_int_equal(jcfg_block_count(g), 3);
	uint32_t n;
	const uint32_t *x = jcfg_block_xsuccs(g, 0, &n);
	assert_int_equal(n, 2);
	assert_int_equal(jcfg_block(g, x[0])->start_bci, 7);
	assert_int_equal(jcfg_block(g, x[1])->start_bci, 10);
	jcfg_block_xsuccs(g, 1, &n);
	assert_int_equal(n, 0);
	jcfg_free(g);

	/* A catch-all first hides the later entries. */
	struct jcf_exc first_any[] = { { 0, 5, 10, 0, NULL },
				       { 0, 5, 7, 3, "java/lang/Exception" } };
	m.exc = first_any;
	m.nexc = 2;
	g = build(&m);
	expect_succ_bcis(g, at(g, 1), 1, (uint32_t[]){ 10 }, 1);
	jcfg_free(g);
}

static void test_jsr_ret(void **state)
{
	(void)state;
	static const uint8_t code[] = {
		0xa8, 0x00, 0x04, /* 0: jsr 4 */
		0xb1,             /* 3: return */
		0x4c,             /* 4: astore_1 */
		0xa9, 0x01,       /* 5: ret 1 */
	};
	struct jcf_method m = method(code, sizeof(code));
	struct jcfg *g = build(&m);
	expect_succ_bcis(g, 0, 0, (uint32_t[]){ 4 }, 1);
	expect_succ_bcis(g, at(g, 5), 0, (uint32_t[]){ 3 }, 1);
	assert_int_equal(jcfg_insn(g, at(g, 5))->kind, JBC_RET);
	assert_int_equal(jcfg_block_count(g), 3);
	jcfg_free(g);
}

/* Each instruction's line is the last entry starting at or before it,
 * as jcf_line_at finds; before the first entry there is none. */
static void test_lines(void **state)
{
	(void)state;
	struct jcf_line lines[] = { { 1, 7 }, { 3, 8 }, { 4, 9 }, { 14, 5 } };
	struct jcf_method m = method(loop_code, sizeof(loop_code));
	m.lines = lines;
	m.nlines = 4;
	struct jcfg *g = build(&m);
	static const int32_t want[] = { -1, 7, 7, 8, 9, 9, 9, 5, 5 };
	for (uint32_t i = 0; i < jcfg_insn_count(g); i++) {
		const struct jcfg_insn *in = jcfg_insn(g, i);
		assert_int_equal(in->line, want[i]);
		assert_int_equal(in->line, jcf_line_at(&m, in->bci));
	}
	jcfg_free(g);
}

/* Code of 65535 bytes (the most a class file holds) is indexed to its
 * last byte; longer code is refused by both jcfg_build and jcfg_check. */
static void test_code_size(void **state)
{
	(void)state;
	uint8_t *code = calloc(65536, 1); /* nop ... */
	code[65534] = 0xb1;               /* return */
	struct jcf_method m = method(code, 65535);
	struct jcfg *g = build(&m);
	assert_int_equal(jcfg_insn_count(g), 65535);
	assert_int_equal(jcfg_index_of(g, 65534), 65534);
	assert_int_equal(jcfg_index_covering(g, 65534), 65534);
	assert_int_equal(jcfg_block_count(g), 1);
	jcfg_free(g);
	code[65534] = 0x00;
	code[65535] = 0xb1;
	m = method(code, 65536);
	assert_int_equal(jcfg_check(&m), java_err_bad_code);
	assert_int_equal(jcfg_build(&g, &m, NULL), java_err_bad_code);
	assert_null(g);
	free(code);
}

/* Build CODE and expect java_err_bad_code at BCI. */
static void expect_bad(const uint8_t *code, size_t len,
		       const struct jcf_exc *exc, unsigned nexc, uint32_t bci)
{
	struct jcf_method m = method(code, len);
	m.exc = exc;
	m.nexc = (uint16_t)nexc;
	struct jcfg *g = (struct jcfg *)1;
	struct java_diag d = { 0 };
	assert_int_equal(jcfg_build(&g, &m, &d), java_err_bad_code);
	assert_null(g);
	assert_int_equal(jcfg_check(&m), java_err_bad_code);
	assert_int_equal(d.err, java_err_bad_code);
	if (d.offset != bci)
		fail_msg("error at %zu, wanted %u: %s", d.offset, bci, d.msg);
	assert_true(strncmp(d.msg, "method t()V: bci ", 17) == 0);
}

static void test_bad_code(void **state)
{
	(void)state;
	/* A goto into its own operand. */
	expect_bad((const uint8_t[]){ 0xa7, 0x00, 0x02, 0xb1 }, 4, NULL, 0, 0);
	/* A branch before the code. */
	expect_bad((const uint8_t[]){ 0x03, 0x99, 0xff, 0x00, 0xb1 }, 5, NULL,
		   0, 1);
	/* Falling off the end. */
	expect_bad((const uint8_t[]){ 0x03 }, 1, NULL, 0, 0);
	/* An undefined opcode, and a reserved one. */
	expect_bad((const uint8_t[]){ 0x03, 0xcb, 0xac }, 3, NULL, 0, 1);
	expect_bad((const uint8_t[]){ 0x03, 0xca, 0xac }, 3, NULL, 0, 1);
	/* bipush without its operand. */
	expect_bad((const uint8_t[]){ 0x10 }, 1, NULL, 0, 0);
	/* wide of a non-local instruction. */
	expect_bad((const uint8_t[]){ 0xc4, 0x10, 0x00, 0x00, 0xac }, 5, NULL,
		   0, 0);
	/* A switch with low > high. */
	expect_bad((const uint8_t[]){ 0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
				      0, 0, 0, 1 }, 16, NULL, 0, 0);
	/* A handler inside an instruction. */
	struct jcf_exc x = { 0, 2, 1, 0, NULL };
	expect_bad((const uint8_t[]){ 0x10, 0x01, 0xac }, 3, &x, 1, 1);

	/* A switch case, and an exception range's start and end, inside an
	 * instruction. */
	expect_bad((const uint8_t[]){ 0x03, 0xaa, 0, 0, 0, 0, 0, 19, 0, 0,
				      0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0x10,
				      0x05, 0xb1 }, 23, NULL, 0, 1);
	struct jcf_exc start = { 1, 3, 3, 0, NULL };
	expect_bad((const uint8_t[]){ 0x10, 0x01, 0x57, 0xb1 }, 4, &start, 1,
		   1);
	struct jcf_exc end = { 0, 1, 3, 0, NULL };
	expect_bad((const uint8_t[]){ 0x10, 0x01, 0x57, 0xb1 }, 4, &end, 1, 1);

	struct jcf_method none = { 0 };
	struct jcfg *g;
	assert_int_equal(jcfg_check(&none), java_err_no_code);
	assert_int_equal(jcfg_check(NULL), java_err_invalid);
	assert_int_equal(jcfg_build(&g, &none, NULL), java_err_no_code);
	assert_int_equal(jcfg_build(NULL, &none, NULL), java_err_invalid);
}

/* Random code over opcodes of every shape (fixed lengths, wide, ret,
 * switches, branches, reserved and undefined opcodes, returns), operand
 * bytes small so that targets often land in the code: jcfg_check says
 * what jcfg_build does, and a built instruction has the length and kind
 * the opcode table and jbc_length give (the walks take fixed lengths
 * from the table without the careful tests). */
static void test_check_agrees_random(void **state)
{
	(void)state;
	static const uint8_t ops[] = { 0x00, 0x03, 0x10, 0x11, 0x12, 0x15,
		0x2a, 0x57, 0x84, 0x99, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac,
		0xb1, 0xb6, 0xb9, 0xba, 0xbf, 0xc4, 0xc8, 0xc9, 0xca, 0xcb,
		0xfe };
	uint64_t x = 88172645463325252ull;
	uint8_t code[48];
	unsigned built = 0;
	for (int it = 0; it < 200000; it++) {
		for (size_t i = 0; i < sizeof(code); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			code[i] = x % 3 ? (uint8_t)(x >> 8) % 8 :
					   ops[(x >> 8) % sizeof(ops)];
		}
		size_t len = 1 + (size_t)(x >> 40) % sizeof(code);
		if (x >> 32 & 1)
			code[len - 1] = 0xb1; /* most often well ended */
		struct jcf_method m = method(code, len);
		struct jcfg *g = NULL;
		int want = jcfg_build(&g, &m, NULL);
		assert_int_equal(jcfg_check(&m), want);
		for (uint32_t i = 0; g && i < jcfg_insn_count(g); i++) {
			const struct jcfg_insn *in = jcfg_insn(g, i);
			uint8_t op = code[in->bci];
			unsigned kind = op == 0xc4 && code[in->bci + 1] == 0xa9 ?
				JBC_RET : jbc_info(op)->kind;
			assert_int_equal(in->len, jbc_length(code, len, in->bci));
			assert_int_equal(in->kind, kind);
		}
		built += g != NULL;
		jcfg_free(g);
	}
	assert_true(built > 1000); /* the walks' good paths were taken */
}

/* jcfg_check lists the jumps it meets and checks their targets after
 * its walk, or walks the code again when there are more than it lists:
 * on either side of that count, a goto into the middle of an
 * instruction, first or last, is found, and jcfg_build agrees. */
static void test_check_many_jumps(void **state)
{
	(void)state;
	static const uint32_t counts[] = { 1, 255, 256, 257, 600 };
	for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		uint32_t n = counts[c];
		uint8_t *code = malloc(3 * n + 1);
		for (int bad = -1; bad < 2; bad++) {
			for (uint32_t i = 0; i < n; i++) { /* goto +3 */
				code[3 * i] = 0xa7;
				code[3 * i + 1] = 0;
				code[3 * i + 2] = 3;
			}
			code[3 * n] = 0xb1;
			if (bad >= 0) /* goto +1: its own operand */
				code[3 * (bad ? n - 1 : 0) + 2] = 1;
			struct jcf_method m = method(code, 3 * n + 1);
			struct jcfg *g = NULL;
			int want = bad < 0 ? java_ok : java_err_bad_code;
			assert_int_equal(jcfg_check(&m), want);
			assert_int_equal(jcfg_build(&g, &m, NULL), want);
			jcfg_free(g);
		}
		free(code);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_switches),
		cmocka_unit_test(test_wide),
		cmocka_unit_test(test_try_catch),
		cmocka_unit_test(test_jsr_ret),
		cmocka_unit_test(test_bad_code),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_code_size),
		cmocka_unit_test(test_check_many_jumps),
		cmocka_unit_test(test_check_agrees_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
