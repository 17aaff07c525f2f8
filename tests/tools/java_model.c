// SPDX-License-Identifier: MIT
/*
 * The program model on real class files (driven by
 * tests/integration/java_model.sh, which compiles tests/workloads/Model*
 * and extracts JDK classes):
 *
 *   test_java_model --dump FILE...     canonical listing to compare with
 *                                      `javap -c -l -p -s`
 *   test_java_model [--fuzz] FILE...   parse, CFG invariants, call-site
 *                                      resolution; --fuzz adds truncation
 *                                      and bit flips of every file
 *   test_java_model --model DIR        call-site candidates of the Model*
 *                                      workloads compiled into DIR
 *
 * Without arguments there is nothing to check and the suite skips.
 */
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
#include "java/classfile.h"
#include "java/hierarchy.h"

static char **files;
static int nfiles;
static const char *model_dir;

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	uint8_t *p = malloc(cap);
	for (size_t got; p && (got = fread(p + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			uint8_t *q = realloc(p, cap *= 2);
			if (!q) {
				free(p);
				p = NULL;
			}
			p = q;
		}
	}
	fclose(f);
	*len = n;
	return p;
}

static struct jcf *load(const char *path)
{
	size_t len;
	uint8_t *data = slurp(path, &len);
	if (!data)
		fail_msg("%s: cannot read", path);
	struct jcf *cf;
	struct java_diag d = { 0 };
	int err = jcf_parse(&cf, data, len, &d);
	free(data);
	if (err)
		fail_msg("%s: %s", path, d.msg);
	return cf;
}

/* ---- --dump: the format java_model.sh derives from javap ---------------- */

static int branches(unsigned kind)
{
	return kind == JBC_COND_BRANCH || kind == JBC_GOTO || kind == JBC_JSR;
}

static void dump_insn(const struct jcfg *g, const struct jcf_method *m,
		      unsigned k, uint32_t i)
{
	const struct jcfg_insn *in = jcfg_insn(g, i);
	printf("m%u insn %u ", k, in->bci);
	if (in->op == JBC_WIDE)
		printf("%s_w", jbc_name(in->wide_op));
	else
		printf("%s", jbc_name(in->op));
	if (branches(in->kind))
		printf(" %ld", jbc_branch_target(m->code, m->code_length,
						 in->bci));
	if (in->cp_index)
		printf(" #%u", in->cp_index);
	if (in->kind == JBC_SWITCH) {
		uint32_t def, n, t;
		int32_t key;
		jcfg_switch_default(g, i, &def, &n);
		for (uint32_t c = 0; c < n; c++) {
			jcfg_switch_case(g, i, c, &key, &t);
			printf(" %d:%u", key, t);
		}
		printf(" default:%u", def);
	}
	printf("\n");
}

static int dump_class(const char *path)
{
	struct jcf *cf = load(path);
	for (unsigned k = 0; k < jcf_method_count(cf); k++) {
		const struct jcf_method *m = jcf_method(cf, k);
		printf("m%u method %s %s\n", k, m->name, m->descriptor);
		if (!m->code)
			continue;
		struct jcfg *g;
		struct java_diag d = { 0 };
		if (jcfg_build(&g, m, &d)) {
			fprintf(stderr, "%s: %s\n", path, d.msg);
			jcf_free(cf);
			return 1;
		}
		for (uint32_t i = 0; i < jcfg_insn_count(g); i++)
			dump_insn(g, m, k, i);
		for (unsigned x = 0; x < m->nexc; x++)
			printf("m%u exc %u %u %u %u %s\n", k, x,
			       m->exc[x].start_pc, m->exc[x].end_pc,
			       m->exc[x].handler_pc,
			       m->exc[x].catch_class ? m->exc[x].catch_class :
						       "any");
		for (uint32_t l = 0; l < m->nlines; l++)
			printf("m%u line %u %u\n", k, m->lines[l].start_pc,
			       m->lines[l].line);
		jcfg_free(g);
	}
	jcf_free(cf);
	return 0;
}

/* ---- invariants on every class ------------------------------------------ */

static void check_cfg(const char *path, const struct jcf_method *m,
		      const struct jcfg *g)
{
	uint32_t n = jcfg_insn_count(g), bci = 0, nb = jcfg_block_count(g);
	for (uint32_t i = 0; i < n; i++) {
		const struct jcfg_insn *in = jcfg_insn(g, i);
		if (in->bci != bci)
			fail_msg("%s %s: insn %u at %u, wanted %u", path,
				 m->name, i, in->bci, bci);
		assert_int_equal(jcfg_index_of(g, bci), i);
		assert_int_equal(in->line, jcf_line_at(m, bci));
		bci += in->len;
		uint32_t ns, nx;
		const uint32_t *s = jcfg_succs(g, i, &ns);
		const uint32_t *x = jcfg_xsuccs(g, i, &nx);
		for (uint32_t k = 0; k < ns; k++)
			assert_true(s[k] < n);
		/* Handlers start blocks. */
		for (uint32_t k = 0; k < nx; k++)
			assert_int_equal(jcfg_block(g, jcfg_insn(g, x[k])->block)
						 ->first, x[k]);
		const struct jcfg_block *b = jcfg_block(g, in->block);
		/* Inside a block control only falls through. */
		if (i != b->last) {
			assert_int_equal(ns, 1);
			assert_int_equal(s[0], i + 1);
		}
	}
	assert_int_equal(bci, m->code_length);
	uint32_t next = 0;
	for (uint32_t b = 0; b < nb; b++) {
		assert_int_equal(jcfg_block(g, b)->first, next);
		next = jcfg_block(g, b)->last + 1;
	}
	assert_int_equal(next, n);
}

static void test_parse_and_cfg(void **state)
{
	(void)state;
	size_t methods = 0, insns = 0, blocks = 0;
	for (int f = 0; f < nfiles; f++) {
		struct jcf *cf = load(files[f]);
		for (unsigned k = 0; k < jcf_method_count(cf); k++) {
			const struct jcf_method *m = jcf_method(cf, k);
			struct jcfg *g;
			struct java_diag d = { 0 };
			int err = jcfg_build(&g, m, &d);
			if (err == java_err_no_code && !m->code)
				continue;
			if (err)
				fail_msg("%s: %s", files[f], d.msg);
			check_cfg(files[f], m, g);
			methods++;
			insns += jcfg_insn_count(g);
			blocks += jcfg_block_count(g);
			jcfg_free(g);
		}
		jcf_free(cf);
	}
	printf("# %d classes, %zu methods with code, %zu instructions, "
	       "%zu blocks\n", nfiles, methods, insns, blocks);
	assert_true(methods > 0);
}

/* Resolve every call site of every method; static and special sites whose
 * class is loaded must give exactly one exact target. */
static void test_call_sites(void **state)
{
	(void)state;
	struct jhier *h;
	assert_int_equal(jhier_alloc(&h), 0);
	for (int f = 0; f < nfiles; f++)
		assert_true(jhier_add(h, load(files[f]), 0) >= 0);
	size_t sites = 0, exact = 0, multi = 0, none = 0;
	struct jhier_method out[4];
	for (size_t c = 0; c < jhier_class_count(h); c++) {
		const struct jcf *cf = jhier_class_at(h, c, NULL);
		for (unsigned k = 0; k < jcf_method_count(cf); k++) {
			struct jcfg *g;
			if (jcfg_build(&g, jcf_method(cf, k), NULL))
				continue;
			for (uint32_t i = 0; i < jcfg_insn_count(g); i++) {
				const struct jcfg_insn *in = jcfg_insn(g, i);
				if (!jbc_is_invoke(in->kind))
					continue;
				int n = jhier_call_targets(h, cf, 0, in->kind,
							   in->cp_index, out,
							   4);
				if (n < 0)
					fail_msg("%s: bci %u: %s",
						 jcf_this_class(cf), in->bci,
						 java_errstr(n));
				sites++;
				none += n == 0;
				multi += n > 1;
				if (n == 1 && (out[0].flags & JHIER_T_EXACT))
					exact++;
				if ((in->kind == JBC_INVOKE_STATIC ||
				     in->kind == JBC_INVOKE_SPECIAL) && n)
					assert_true(n == 1 && (out[0].flags &
							       JHIER_T_EXACT));
			}
			jcfg_free(g);
		}
	}
	printf("# %zu call sites: %zu exact, %zu with several candidates, "
	       "%zu unresolved (class not among these)\n", sites, exact, multi,
	       none);
	assert_true(sites > 0);
	jhier_free(h);
}

static void fuzz_one(const uint8_t *data, size_t len)
{
	for (size_t n = 0; n < len; n++) {
		uint8_t *cut = malloc(n ? n : 1);
		memcpy(cut, data, n);
		struct jcf *cf;
		assert_int_equal(jcf_parse(&cf, cut, n, NULL),
				 java_err_truncated);
		free(cut);
	}
	uint8_t *c = malloc(len);
	for (size_t i = 0; i < len; i++) {
		memcpy(c, data, len);
		c[i] ^= (uint8_t)(1u << (i % 8)) | 0x40;
		struct jcf *cf;
		if (jcf_parse(&cf, c, len, NULL))
			continue;
		for (unsigned k = 0; k < jcf_method_count(cf); k++) {
			struct jcfg *g;
			if (!jcfg_build(&g, jcf_method(cf, k), NULL))
				jcfg_free(g);
		}
		jcf_free(cf);
	}
	free(c);
}

static void test_fuzz(void **state)
{
	(void)state;
	for (int f = 0; f < nfiles; f++) {
		size_t len;
		uint8_t *data = slurp(files[f], &len);
		assert_non_null(data);
		fuzz_one(data, len);
		free(data);
	}
}

/* ---- --model: the Model* workloads -------------------------------------- */

static struct jhier *model;

static const struct jcf *model_class(const char *name)
{
	const struct jcf *c = jhier_class(model, name, 0);
	if (!c)
		fail_msg("%s not loaded from %s", name, model_dir);
	return c;
}

/* Candidates of the NTH invoke (0-based) of opcode kind KIND in METHOD of
 * CLS, as sorted "Class.method" joined by spaces. */
static void expect_site(const char *cls, const char *method, unsigned kind,
			int nth, const char *want, unsigned flags)
{
	const struct jcf *cf = model_class(cls);
	const struct jcf_method *m = jcf_method_find(cf, method, NULL);
	assert_non_null(m);
	struct jcfg *g;
	assert_int_equal(jcfg_build(&g, m, NULL), 0);
	int seen = 0;
	for (uint32_t i = 0; i < jcfg_insn_count(g); i++) {
		const struct jcfg_insn *in = jcfg_insn(g, i);
		if (in->kind != kind || seen++ != nth)
			continue;
		struct jhier_method out[8];
		int n = jhier_call_targets(model, cf, 0, kind, in->cp_index,
					   out, 8);
		assert_true(n >= 0 && n <= 8);
		char names[8][96], joined[800] = "";
		for (int k = 0; k < n; k++) {
			snprintf(names[k], sizeof(names[k]), "%s.%s",
				 jcf_this_class(out[k].cls), out[k].m->name);
			assert_int_equal(out[k].flags, flags);
		}
		qsort(names, (size_t)n, sizeof(names[0]),
		      (int (*)(const void *, const void *))strcmp);
		for (int k = 0; k < n; k++) {
			strcat(joined, k ? " " : "");
			strcat(joined, names[k]);
		}
		if (strcmp(joined, want))
			fail_msg("%s.%s site %d: got \"%s\", wanted \"%s\"",
				 cls, method, nth, joined, want);
		jcfg_free(g);
		return;
	}
	fail_msg("%s.%s: no invoke #%d of kind %u", cls, method, nth, kind);
}

static int model_setup(void **state)
{
	(void)state;
	static const char *const names[] = {
		"ModelCalls", "ModelCalls$Shape", "ModelCalls$Base",
		"ModelCalls$Square", "ModelCalls$Circle", "ModelCalls$Unit",
		"ModelCalls$BigSquare", "ModelControl", "ModelExceptions",
	};
	if (jhier_alloc(&model))
		return -1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[4096];
		size_t len;
		struct jcf *cf;
		snprintf(path, sizeof(path), "%s/%s.class", model_dir, names[i]);
		uint8_t *data = slurp(path, &len);
		if (!data || jcf_parse(&cf, data, len, NULL)) {
			fprintf(stderr, "%s: cannot load\n", path);
			free(data);
			return -1;
		}
		free(data);
		jhier_add(model, cf, 0);
	}
	return 0;
}

static int model_teardown(void **state)
{
	(void)state;
	jhier_free(model);
	return 0;
}

static void test_model_virtual(void **state)
{
	(void)state;
	expect_site("ModelCalls", "total", JBC_INVOKE_INTERFACE, 0,
		    "ModelCalls$Base.area ModelCalls$Unit.area", 0);
	expect_site("ModelCalls", "viaBase", JBC_INVOKE_VIRTUAL, 0,
		    "ModelCalls$BigSquare.scale ModelCalls$Circle.scale "
		    "ModelCalls$Square.scale", 0);
	/* s.label() in main: the default method or Circle's override. */
	expect_site("ModelCalls", "main", JBC_INVOKE_INTERFACE, 0,
		    "ModelCalls$Circle.label ModelCalls$Shape.label", 0);
}

static void test_model_exact(void **state)
{
	(void)state;
	/* super.scale() */
	expect_site("ModelCalls$BigSquare", "scale", JBC_INVOKE_SPECIAL, 0,
		    "ModelCalls$Square.scale", JHIER_T_EXACT);
	/* A private method: invokevirtual between nestmates since Java 11,
	 * exact all the same. */
	expect_site("ModelCalls$Base", "area", JBC_INVOKE_VIRTUAL, 1,
		    "ModelCalls$Base.unit", JHIER_T_EXACT);
	expect_site("ModelExceptions", "catcher", JBC_INVOKE_STATIC, 0,
		    "ModelExceptions.thrower", JHIER_T_EXACT);
	/* The super constructor of Square from BigSquare's constructor. */
	expect_site("ModelCalls$BigSquare", "<init>", JBC_INVOKE_SPECIAL, 0,
		    "ModelCalls$Square.<init>", JHIER_T_EXACT);
}

static void test_model_indy(void **state)
{
	(void)state;
	/* x -> x + k, then shapes[1]::label. */
	expect_site("ModelCalls", "main", JBC_INVOKE_DYNAMIC, 0,
		    "ModelCalls.lambda$main$0", JHIER_T_INDIRECT);
	expect_site("ModelCalls", "main", JBC_INVOKE_DYNAMIC, 1,
		    "ModelCalls$Shape.label", JHIER_T_INDIRECT);
	/* String concatenation: not a lambda, no candidates. */
	expect_site("ModelCalls", "main", JBC_INVOKE_DYNAMIC, 2, "", 0);
}

static void test_model_cfg(void **state)
{
	(void)state;
	const struct jcf *cf = model_class("ModelExceptions");
	const struct jcf_method *m = jcf_method_find(cf, "catcher", "(I)I");
	assert_non_null(m);
	struct jcfg *g;
	assert_int_equal(jcfg_build(&g, m, NULL), 0);
	/* The call to thrower is inside every try range: it reaches the
	 * two catch handlers and the finally handler. */
	uint32_t call = 0, n;
	while (jcfg_insn(g, call)->kind != JBC_INVOKE_STATIC)
		call++;
	jcfg_xsuccs(g, call, &n);
	assert_int_equal(n, 3);
	jcfg_free(g);

	cf = model_class("ModelControl");
	m = jcf_method_find(cf, "dense", "(I)I");
	assert_int_equal(jcfg_build(&g, m, NULL), 0);
	uint32_t sw = 0;
	while (jcfg_insn(g, sw)->op != JBC_TABLESWITCH)
		sw++;
	jcfg_succs(g, sw, &n);
	assert_int_equal(n, 5); /* default and four cases */
	assert_int_equal(jcfg_block(g, jcfg_insn(g, sw)->block)->last, sw);
	jcfg_free(g);
}

int main(int argc, char **argv)
{
	int fuzz = 0;
	if (argc > 1 && !strcmp(argv[1], "--dump")) {
		int rc = 0;
		for (int i = 2; i < argc; i++)
			rc |= dump_class(argv[i]);
		return rc;
	}
	if (argc > 2 && !strcmp(argv[1], "--model")) {
		model_dir = argv[2];
		const struct CMUnitTest tests[] = {
			cmocka_unit_test(test_model_virtual),
			cmocka_unit_test(test_model_exact),
			cmocka_unit_test(test_model_indy),
			cmocka_unit_test(test_model_cfg),
		};
		return cmocka_run_group_tests(tests, model_setup,
					      model_teardown);
	}
	if (argc > 1 && !strcmp(argv[1], "--fuzz")) {
		fuzz = 1;
		argv++;
		argc--;
	}
	files = argv + 1;
	nfiles = argc - 1;
	if (nfiles == 0) {
		/* Run without class files by tests/run: the integration test
		 * java_model.sh runs this driver for real. */
		printf("1..1\nok 1 - java model # SKIP no class files given "
		       "(run by tests/integration/java_model.sh)\n");
		return 0;
	}
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_parse_and_cfg),
		cmocka_unit_test(test_call_sites),
	};
	const struct CMUnitTest with_fuzz[] = {
		cmocka_unit_test(test_parse_and_cfg),
		cmocka_unit_test(test_call_sites),
		cmocka_unit_test(test_fuzz),
	};
	if (fuzz)
		return cmocka_run_group_tests(with_fuzz, NULL, NULL);
	return cmocka_run_group_tests(all, NULL, NULL);
}
