// SPDX-License-Identifier: MIT
/* Class file parser: hand-made classes with every constant pool tag,
 * precise errors with offsets, and truncation/bit-flip robustness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "java/cfg.h"
#include "java/classfile.h"
#include "jclass_build.h"

/* Constant pool indices of the rich class, for the checks. */
static struct {
	uint16_t integer, flt, lng, dbl, str, fref, mref, iref, mtype, bsm_mh,
		impl_mh, dyn, indy, module, package, after_long;
} ix;

static const uint8_t rich_code[] = {
	0x03,             /* 0: iconst_0 */
	0x3c,             /* 1: istore_1 */
	0x1b,             /* 2: iload_1 */
	0x3c,             /* 3: istore_1 */
	0xb1,             /* 4: return */
};

/* A class with every constant pool tag, a BootstrapMethods attribute for
 * a lambda, two methods (one abstract) and a SourceFile. */
static uint8_t *rich_class(size_t *len)
{
	struct jb j;
	jb_init(&j, "pkg/Rich", "java/lang/Object", 0x0421);
	jb_iface(&j, "java/lang/Runnable");
	uint8_t i42[] = { 3, 0, 0, 0, 42 };
	uint8_t f1[] = { 4, 0x3f, 0x80, 0, 0 };
	uint8_t l7[] = { 5, 0, 0, 0, 1, 0, 0, 0, 7 };
	uint8_t d2[] = { 6, 0x40, 0, 0, 0, 0, 0, 0, 0 };
	ix.integer = jb_cp_raw(&j, i42, sizeof(i42), 1);
	ix.flt = jb_cp_raw(&j, f1, sizeof(f1), 1);
	ix.lng = jb_cp_raw(&j, l7, sizeof(l7), 2);
	ix.dbl = jb_cp_raw(&j, d2, sizeof(d2), 2);
	ix.after_long = (uint16_t)(ix.lng + 1);
	ix.str = jb_cp2(&j, 8, jb_utf8(&j, "hi"), -1);
	ix.fref = jb_ref(&j, 9, "pkg/Rich", "count", "I");
	ix.mref = jb_ref(&j, 10, "pkg/Rich", "lambda$run$0", "()V");
	ix.iref = jb_ref(&j, 11, "java/lang/Runnable", "run", "()V");
	ix.mtype = jb_cp2(&j, 16, jb_utf8(&j, "()V"), -1);
	uint16_t meta = jb_ref(&j, 10, "java/lang/invoke/LambdaMetafactory",
			       "metafactory", "(Ljava/lang/invoke/MethodHandles"
			       "$Lookup;)Ljava/lang/invoke/CallSite;");
	ix.bsm_mh = jb_method_handle(&j, 6, meta);
	ix.impl_mh = jb_method_handle(&j, 6, ix.mref);
	ix.dyn = jb_cp2(&j, 17, 0, jb_nat(&j, "constant", "I"));
	ix.indy = jb_cp2(&j, 18, 0, jb_nat(&j, "run", "()Ljava/lang/Runnable;"));
	ix.module = jb_cp2(&j, 19, jb_utf8(&j, "java.base"), -1);
	ix.package = jb_cp2(&j, 20, jb_utf8(&j, "pkg"), -1);

	struct jb_exc exc[] = { { 0, 4, 4, "java/lang/Exception" },
				{ 2, 4, 4, NULL } };
	uint16_t lines[] = { 4, 12, 0, 10, 2, 11 }; /* unsorted on purpose */
	jb_method(&j, 0x0001, "run", "()V", rich_code, sizeof(rich_code), exc,
		  2, lines, 3);
	jb_method(&j, 0x0401, "abs", "(IJ)Ljava/lang/String;", NULL, 0, NULL,
		  0, NULL, 0);

	struct jb_buf bsm = { 0 };
	jb_u2(&bsm, 1);
	jb_u2(&bsm, ix.bsm_mh);
	jb_u2(&bsm, 3);
	jb_u2(&bsm, ix.mtype);
	jb_u2(&bsm, ix.impl_mh);
	jb_u2(&bsm, ix.mtype);
	jb_attr(&j, "BootstrapMethods", bsm.p, bsm.n);
	free(bsm.p);
	uint16_t src = jb_utf8(&j, "Rich.java");
	uint8_t sf[2] = { (uint8_t)(src >> 8), (uint8_t)src };
	jb_attr(&j, "SourceFile", sf, 2);
	return jb_finish(&j, len);
}

static void test_rich_class(void **state)
{
	(void)state;
	size_t len;
	uint8_t *data = rich_class(&len);
	struct jcf *cf;
	struct java_diag d = { 0 };
	assert_int_equal(jcf_parse(&cf, data, len, &d), java_ok);
	free(data); /* the jcf holds its own copy */

	unsigned major, minor;
	jcf_version(cf, &major, &minor);
	assert_int_equal(major, 61);
	assert_int_equal(minor, 0);
	assert_int_equal(jcf_access_flags(cf), 0x0421);
	assert_string_equal(jcf_this_class(cf), "pkg/Rich");
	assert_string_equal(jcf_super_class(cf), "java/lang/Object");
	assert_int_equal(jcf_interface_count(cf), 1);
	assert_string_equal(jcf_interface(cf, 0), "java/lang/Runnable");
	assert_null(jcf_interface(cf, 1));
	assert_string_equal(jcf_source_file(cf), "Rich.java");

	assert_int_equal(jcf_method_count(cf), 2);
	const struct jcf_method *m = jcf_method(cf, 0);
	assert_string_equal(m->name, "run");
	assert_string_equal(m->descriptor, "()V");
	assert_int_equal(m->access_flags, 0x0001);
	assert_int_equal(m->code_length, sizeof(rich_code));
	assert_memory_equal(m->code, rich_code, sizeof(rich_code));
	assert_int_equal(m->max_stack, 8);
	assert_int_equal(m->nexc, 2);
	assert_int_equal(m->exc[0].start_pc, 0);
	assert_int_equal(m->exc[0].end_pc, 4);
	assert_int_equal(m->exc[0].handler_pc, 4);
	assert_string_equal(m->exc[0].catch_class, "java/lang/Exception");
	assert_int_equal(m->exc[1].catch_type, 0);
	assert_null(m->exc[1].catch_class);
	assert_int_equal(m->nlines, 3);
	assert_int_equal(m->lines[0].start_pc, 0); /* sorted */
	assert_int_equal(jcf_line_at(m, 0), 10);
	assert_int_equal(jcf_line_at(m, 1), 10);
	assert_int_equal(jcf_line_at(m, 2), 11);
	assert_int_equal(jcf_line_at(m, 3), 11);
	assert_int_equal(jcf_line_at(m, 4), 12);

	const struct jcf_method *a = jcf_method(cf, 1);
	assert_null(a->code);
	assert_int_equal(a->code_length, 0);
	assert_int_equal(jcf_line_at(a, 0), -1);
	assert_ptr_equal(jcf_method_find(cf, "abs", "(IJ)Ljava/lang/String;"),
			 a);
	assert_ptr_equal(jcf_method_find(cf, "run", NULL), m);
	assert_null(jcf_method_find(cf, "run", "(I)V"));
	assert_null(jcf_method(cf, 2));
	jcf_free(cf);
}

static void test_every_tag(void **state)
{
	(void)state;
	size_t len;
	uint8_t *data = rich_class(&len);
	struct jcf *cf;
	assert_int_equal(jcf_parse(&cf, data, len, NULL), java_ok);
	free(data);

	assert_int_equal(jcf_cp_tag(cf, ix.integer), JCF_CONSTANT_Integer);
	assert_int_equal(jcf_cp_value(cf, ix.integer), 42);
	assert_int_equal(jcf_cp_value(cf, ix.flt), 0x3f800000);
	assert_int_equal(jcf_cp_tag(cf, ix.lng), JCF_CONSTANT_Long);
	assert_int_equal(jcf_cp_value(cf, ix.lng), 0x100000007ull);
	assert_int_equal(jcf_cp_tag(cf, ix.after_long), 0); /* unusable */
	assert_int_equal(jcf_cp_value(cf, ix.dbl), 0x4000000000000000ull);
	assert_int_equal(jcf_cp_value(cf, ix.str), 0); /* not a number */
	assert_int_equal(jcf_cp_value(cf, jcf_cp_count(cf)), 0);
	assert_int_equal(jcf_cp_tag(cf, ix.str), JCF_CONSTANT_String);
	assert_string_equal(jcf_cp_utf8(cf, jcf_cp(cf, ix.str)->a), "hi");
	assert_int_equal(jcf_cp_tag(cf, ix.module), JCF_CONSTANT_Module);
	assert_string_equal(jcf_cp_utf8(cf, jcf_cp(cf, ix.module)->a),
			    "java.base");
	assert_int_equal(jcf_cp_tag(cf, ix.package), JCF_CONSTANT_Package);
	assert_int_equal(jcf_cp_tag(cf, ix.mtype), JCF_CONSTANT_MethodType);
	assert_int_equal(jcf_cp(cf, ix.bsm_mh)->a, 6);
	assert_null(jcf_cp(cf, jcf_cp_count(cf)));
	assert_int_equal(jcf_cp_tag(cf, 0), 0);
	assert_int_equal(jcf_cp_tag(cf, jcf_cp_count(cf)), 0);
	assert_int_equal(jcf_cp_tag(cf, ix.fref), JCF_CONSTANT_Fieldref);
	assert_null(jcf_cp_class_name(cf, ix.integer));
	assert_null(jcf_cp_utf8(cf, 0));

	struct jcf_ref r;
	assert_int_equal(jcf_cp_ref(cf, ix.fref, &r), java_ok);
	assert_int_equal(r.tag, JCF_CONSTANT_Fieldref);
	assert_string_equal(r.class_name, "pkg/Rich");
	assert_string_equal(r.name, "count");
	assert_string_equal(r.descriptor, "I");
	assert_int_equal(r.bsm, -1);
	assert_int_equal(jcf_cp_ref(cf, ix.iref, &r), java_ok);
	assert_int_equal(r.tag, JCF_CONSTANT_InterfaceMethodref);
	assert_string_equal(r.class_name, "java/lang/Runnable");
	assert_int_equal(jcf_cp_ref(cf, ix.indy, &r), java_ok);
	assert_int_equal(r.tag, JCF_CONSTANT_InvokeDynamic);
	assert_null(r.class_name);
	assert_int_equal(r.bsm, 0);
	assert_string_equal(r.name, "run");
	assert_int_equal(jcf_cp_ref(cf, ix.dyn, &r), java_ok);
	assert_int_equal(r.tag, JCF_CONSTANT_Dynamic);
	assert_string_equal(r.descriptor, "I");
	assert_int_equal(jcf_cp_ref(cf, ix.integer, &r), java_err_bad_cpool);

	assert_int_equal(jcf_bootstrap_count(cf), 1);
	const struct jcf_bootstrap *b = jcf_bootstrap(cf, 0);
	assert_int_equal(b->method_handle, ix.bsm_mh);
	assert_int_equal(b->nargs, 3);
	assert_int_equal(b->args[1], ix.impl_mh);
	assert_null(jcf_bootstrap(cf, 1));

	unsigned kind = 0;
	assert_int_equal(jcf_lambda_impl(cf, ix.indy, &r, &kind), java_ok);
	assert_int_equal(kind, 6);
	assert_string_equal(r.class_name, "pkg/Rich");
	assert_string_equal(r.name, "lambda$run$0");
	assert_string_equal(r.descriptor, "()V");
	assert_int_equal(jcf_lambda_impl(cf, ix.dyn, &r, &kind),
			 java_err_bad_cpool);
	jcf_free(cf);
}

/* Parse DATA and expect ERR at OFFSET (SIZE_MAX: any offset). */
static void expect_err(uint8_t *data, size_t len, int err, size_t offset)
{
	struct jcf *cf = (struct jcf *)1;
	struct java_diag d = { 0 };
	int got = jcf_parse(&cf, data, len, &d);
	free(data);
	if (got != err)
		fail_msg("got %d (%s), wanted %d; %s", got, java_errstr(got),
			 err, d.msg);
	assert_null(cf);
	assert_int_equal(d.err, err);
	assert_true(strncmp(d.msg, "class file: offset ", 19) == 0);
	if (offset != SIZE_MAX)
		assert_int_equal(d.offset, offset);
}

static uint8_t *simple(struct jb *j, size_t *len)
{
	static const uint8_t code[] = { 0xb1 };
	jb_method(j, 9, "m", "()V", code, 1, NULL, 0, NULL, 0);
	return jb_finish(j, len);
}

static void test_header_errors(void **state)
{
	(void)state;
	struct jb j;
	size_t len;
	uint8_t *d;

	jb_init(&j, "A", "java/lang/Object", 0x21);
	d = simple(&j, &len);
	d[0] = 0xca;
	d[1] = 0xfe;
	d[2] = 0xd0;
	d[3] = 0x0d;
	expect_err(d, len, java_err_bad_magic, 0);

	jb_init(&j, "A", "java/lang/Object", 0x21);
	j.major = 44;
	d = simple(&j, &len);
	expect_err(d, len, java_err_bad_version, 6);

	jb_init(&j, "A", "java/lang/Object", 0x21);
	j.major = JCF_MAX_MAJOR + 1;
	d = simple(&j, &len);
	expect_err(d, len, java_err_bad_version, 6);

	jb_init(&j, "A", "java/lang/Object", 0x21);
	d = simple(&j, &len);
	d = realloc(d, len + 1);
	d[len] = 0;
	expect_err(d, len + 1, java_err_corrupt, len);

	struct jcf *cf;
	assert_int_equal(jcf_parse(&cf, NULL, 0, NULL), java_err_truncated);
	assert_int_equal(jcf_parse(NULL, NULL, 0, NULL), java_err_invalid);
}

static void test_cpool_errors(void **state)
{
	(void)state;
	struct jb j;
	size_t len, off;
	uint8_t *d;

	/* Unknown tag 2: the offset is the tag byte's. */
	jb_init(&j, "A", "java/lang/Object", 0x21);
	off = 10 + j.cp.n;
	uint8_t bad_tag[] = { 2, 0, 0 };
	jb_cp_raw(&j, bad_tag, 3, 1);
	d = simple(&j, &len);
	expect_err(d, len, java_err_bad_cpool, off);

	/* A Class naming an Integer. */
	jb_init(&j, "A", "java/lang/Object", 0x21);
	uint8_t i1[] = { 3, 0, 0, 0, 1 };
	uint16_t ii = jb_cp_raw(&j, i1, 5, 1);
	off = 10 + j.cp.n;
	jb_cp2(&j, 7, ii, -1);
	d = simple(&j, &len);
	expect_err(d, len, java_err_bad_cpool, off);

	/* A Class naming a Long, after a Methodref and the Long's two
	 * slots: the message's offset is found again by walking entries
	 * of every size up to it. */
	jb_init(&j, "A", "java/lang/Object", 0x21);
	jb_ref(&j, 10, "A", "m", "()V");
	uint8_t l2[] = { 5, 0, 0, 0, 0, 0, 0, 0, 2 };
	uint16_t li = jb_cp_raw(&j, l2, 9, 2);
	off = 10 + j.cp.n;
	jb_cp2(&j, 7, li, -1);
	d = simple(&j, &len);
	expect_err(d, len, java_err_bad_cpool, off);

	/* A Utf8 with a NUL byte. */
	jb_init(&j, "A", "java/lang/Object", 0x21);
	off = 10 + j.cp.n;
	uint8_t nul[] = { 1, 0, 2, 'a', 0 };
	jb_cp_raw(&j, nul, 5, 1);
	d = simple(&j, &len);
	expect_err(d, len, java_err_bad_cpool, off + 4);

	/* A MethodHandle of kind 10. */
	jb_init(&j, "A", "java/lang/Object", 0x21);
	uint16_t mr = jb_ref(&j, 10, "A", "m", "()V");
	off = 10 + j.cp.n;
	jb_method_handle(&j, 10, mr);
	d = simple(&j, &len);
	expect_err(d, len, java_err_bad_cpool, off);

	/* An InvokeDynamic without BootstrapMethods. */
	jb_init(&j, "A", "java/lang/Object", 0x21);
	uint16_t nt = jb_nat(&j, "x", "()V");
	off = 10 + j.cp.n;
	jb_cp2(&j, 18, 0, nt);
	d = simple(&j, &len);
	expect_err(d, len, java_err_bad_cpool, off);

	/* A Long in the last slot: its second slot does not exist. */
	static const uint8_t code[] = { 0xb1 };
	jb_init(&j, "A", "java/lang/Object", 0x21);
	jb_method(&j, 9, "m", "()V", code, 1, NULL, 0, NULL, 0);
	off = 10 + j.cp.n;
	uint8_t l1[] = { 5, 0, 0, 0, 0, 0, 0, 0, 1 };
	jb_cp_raw(&j, l1, 9, 1);
	d = jb_finish(&j, &len);
	expect_err(d, len, java_err_bad_cpool, off);
}

/* Utf8 texts of 0, 1, 2 and many bytes, next to each other and to
 * numbers, read back whole with their lengths: the parser makes them C
 * strings inside its copy, each NUL on the next entry's tag byte, so no
 * NUL may land on a text or a number, and the caller's bytes must stay
 * as they were. */
static void test_utf8_in_place(void **state)
{
	(void)state;
	static const char *const texts[] = {
		"", "x", "ab", "java/lang/invoke/MethodHandles$Lookup", "",
	};
	uint16_t idx[5];
	struct jb j;
	jb_init(&j, "A", "java/lang/Object", 0x21);
	uint8_t i7[] = { 3, 0, 0, 0, 7 };
	uint8_t l9[] = { 5, 0, 0, 0, 0, 0, 0, 0, 9 };
	for (unsigned i = 0; i < 5; i++)
		idx[i] = jb_utf8(&j, texts[i]);
	uint16_t num = jb_cp_raw(&j, i7, sizeof(i7), 1);
	uint16_t after = jb_utf8(&j, "y");
	uint16_t lng = jb_cp_raw(&j, l9, sizeof(l9), 2);
	size_t len;
	uint8_t *data = simple(&j, &len);
	uint8_t *orig = malloc(len);
	memcpy(orig, data, len);

	struct jcf *cf;
	assert_int_equal(jcf_parse(&cf, data, len, NULL), java_ok);
	assert_memory_equal(data, orig, len);
	free(data);
	free(orig);
	for (unsigned i = 0; i < 5; i++) {
		assert_string_equal(jcf_cp_utf8(cf, idx[i]), texts[i]);
		assert_int_equal(jcf_cp_value(cf, idx[i]), strlen(texts[i]));
	}
	assert_int_equal(jcf_cp_value(cf, num), 7);
	assert_string_equal(jcf_cp_utf8(cf, after), "y");
	assert_int_equal(jcf_cp_value(cf, lng), 9);
	assert_string_equal(jcf_this_class(cf), "A");
	assert_string_equal(jcf_method(cf, 0)->name, "m");
	assert_string_equal(jcf_method(cf, 0)->descriptor, "()V");
	assert_int_equal(jcf_method(cf, 0)->code[0], 0xb1);
	jcf_free(cf);
}

/* The class J built, parsed (it must parse), its bytes freed. */
static struct jcf *parse_built(struct jb *j)
{
	size_t len;
	uint8_t *data = jb_finish(j, &len);
	struct jcf *cf;
	assert_int_equal(jcf_parse(&cf, data, len, NULL), java_ok);
	free(data);
	return cf;
}

/* A table already in code order is kept as written, equal start_pcs
 * included (the last of them gives the line), like a stable sort. */
static void test_lines_in_order(void **state)
{
	(void)state;
	static const uint8_t code[] = { 0x03, 0x3c, 0xb1 };
	uint16_t lines[] = { 0, 10, 0, 11, 2, 12 };
	struct jb j;
	jb_init(&j, "A", "java/lang/Object", 0x21);
	jb_method(&j, 9, "m", "()V", code, sizeof(code), NULL, 0, lines, 3);
	struct jcf *cf = parse_built(&j);
	const struct jcf_method *m = jcf_method(cf, 0);
	assert_int_equal(m->nlines, 3);
	assert_int_equal(m->lines[0].line, 10);
	assert_int_equal(m->lines[1].line, 11);
	assert_int_equal(jcf_line_at(m, 0), 11);
	assert_int_equal(jcf_line_at(m, 1), 11);
	assert_int_equal(jcf_line_at(m, 2), 12);
	jcf_free(cf);
}

/* Parse a class whose one extra Utf8 is TEXT (N bytes); -1 when it
 * parses, else the error's offset from the text's first byte. */
static long parse_utf8_text(const uint8_t *text, size_t n)
{
	struct jb j;
	size_t len;
	jb_init(&j, "A", "java/lang/Object", 0x21);
	size_t at = 10 + j.cp.n + 3;
	uint8_t *raw = malloc(n + 3);
	raw[0] = 1;
	raw[1] = (uint8_t)(n >> 8);
	raw[2] = (uint8_t)n;
	memcpy(raw + 3, text, n);
	jb_cp_raw(&j, raw, n + 3, 1);
	free(raw);
	uint8_t *data = simple(&j, &len);
	struct jcf *cf;
	struct java_diag d = { 0 };
	int err = jcf_parse(&cf, data, len, &d);
	free(data);
	if (!err) {
		jcf_free(cf);
		return -1;
	}
	assert_int_equal(err, java_err_bad_cpool);
	return (long)d.offset - (long)at;
}

/* Every forbidden byte (NUL, 0xF0-0xFF) is found at every position of a
 * text longer than two words, and the bytes around them pass. */
static void test_utf8_bytes(void **state)
{
	(void)state;
	static const uint8_t bad[] = { 0x00, 0xf0, 0xf7, 0xff };
	static const uint8_t good[] = { 0x01, 0x7f, 0x80, 0xc0, 0xe0, 0xef };
	uint8_t text[21];
	for (size_t g = 0; g < sizeof(good); g++) {
		memset(text, good[g], sizeof(text));
		assert_int_equal(parse_utf8_text(text, sizeof(text)), -1);
	}
	for (size_t pos = 0; pos < sizeof(text); pos++) {
		for (size_t b = 0; b < sizeof(bad); b++) {
			memset(text, 'a', sizeof(text));
			text[pos] = bad[b];
			assert_int_equal(parse_utf8_text(text, sizeof(text)),
					 (long)pos);
		}
	}
}

/* The jcf keeps each method's code, not the caller's bytes: the code
 * reads back after the input is freed (ASan sees any use of it), and
 * code_offset still says where it was in the file. */
static void test_code_kept(void **state)
{
	(void)state;
	static const uint8_t a_code[] = { 0xb1 };
	static const uint8_t c_code[] = { 0x03, 0xac };
	struct jb j;
	size_t len;
	jb_init(&j, "A", "java/lang/Object", 0x421);
	jb_method(&j, 9, "a", "()V", a_code, 1, NULL, 0, NULL, 0);
	jb_method(&j, 0x401, "b", "()V", NULL, 0, NULL, 0, NULL, 0);
	jb_method(&j, 9, "c", "()I", c_code, 2, NULL, 0, NULL, 0);
	uint8_t *data = jb_finish(&j, &len);
	struct jcf *cf;
	assert_int_equal(jcf_parse(&cf, data, len, NULL), java_ok);
	const struct jcf_method *a = jcf_method(cf, 0);
	const struct jcf_method *b = jcf_method(cf, 1);
	const struct jcf_method *c = jcf_method(cf, 2);
	assert_memory_equal(data + a->code_offset, a_code, 1);
	assert_memory_equal(data + c->code_offset, c_code, 2);
	memset(data, 0, len);
	free(data);
	assert_memory_equal(a->code, a_code, 1);
	assert_null(b->code);
	assert_int_equal(b->code_length, 0);
	assert_memory_equal(c->code, c_code, 2);
	assert_int_equal(c->code_length, 2);
	jcf_free(cf);
}

/* A method with two Code attributes is corrupt, at the second one. */
static void test_second_code(void **state)
{
	(void)state;
	struct jb j;
	size_t len;
	jb_init(&j, "A", "java/lang/Object", 0x21);
	uint16_t name = jb_utf8(&j, "m"), desc = jb_utf8(&j, "()V");
	uint16_t code_name = jb_utf8(&j, "Code");
	struct jb_buf *m = &j.methods;
	jb_u2(m, 9);
	jb_u2(m, name);
	jb_u2(m, desc);
	jb_u2(m, 2);
	size_t second = 0;
	for (int k = 0; k < 2; k++) {
		jb_u2(m, code_name);
		jb_u4(m, 13);
		second = m->n; /* the attribute's contents */
		jb_u2(m, 1);
		jb_u2(m, 0);
		jb_u4(m, 1);
		jb_u1(m, 0xb1);
		jb_u2(m, 0);
		jb_u2(m, 0);
	}
	j.nmethods++;
	size_t methods_at_end = m->n;
	uint8_t *data = jb_finish(&j, &len);
	/* The methods end 2 bytes before the class's attribute count. */
	size_t at = len - 2 - methods_at_end + second;
	expect_err(data, len, java_err_corrupt, at);
}

/* Each method gets its own exception and line tables, though all of a
 * class's tables share two blocks: a method without code in between, an
 * unsorted table sorted within its own run only. */
static void test_tables_per_method(void **state)
{
	(void)state;
	static const uint8_t code[] = { 0x03, 0x3c, 0x1b, 0x3c, 0xb1 };
	struct jb_exc e1[] = { { 0, 4, 4, "java/lang/Error" } };
	struct jb_exc e3[] = { { 1, 3, 4, NULL },
			       { 0, 2, 4, "java/lang/Exception" } };
	uint16_t l1[] = { 3, 21, 0, 20 };
	uint16_t l3[] = { 0, 30, 2, 31, 4, 32 };
	struct jb j;
	jb_init(&j, "A", "java/lang/Object", 0x421);
	jb_method(&j, 9, "a", "()V", code, sizeof(code), e1, 1, l1, 2);
	jb_method(&j, 0x401, "b", "()V", NULL, 0, NULL, 0, NULL, 0);
	jb_method(&j, 9, "c", "()V", code, sizeof(code), e3, 2, l3, 3);
	struct jcf *cf = parse_built(&j);
	const struct jcf_method *a = jcf_method(cf, 0);
	const struct jcf_method *b = jcf_method(cf, 1);
	const struct jcf_method *c = jcf_method(cf, 2);
	assert_int_equal(a->nexc, 1);
	assert_string_equal(a->exc[0].catch_class, "java/lang/Error");
	assert_int_equal(a->nlines, 2);
	assert_int_equal(a->lines[0].line, 20);
	assert_int_equal(a->lines[1].line, 21);
	assert_int_equal(b->nexc, 0);
	assert_null(b->exc);
	assert_int_equal(b->nlines, 0);
	assert_null(b->lines);
	assert_int_equal(c->nexc, 2);
	assert_int_equal(c->exc[0].start_pc, 1);
	assert_null(c->exc[0].catch_class);
	assert_string_equal(c->exc[1].catch_class, "java/lang/Exception");
	assert_int_equal(c->nlines, 3);
	assert_int_equal(jcf_line_at(a, 2), 20);
	assert_int_equal(jcf_line_at(a, 3), 21);
	assert_int_equal(jcf_line_at(c, 0), 30);
	assert_int_equal(jcf_line_at(c, 4), 32);
	jcf_free(cf);
}

static void test_code_errors(void **state)
{
	(void)state;
	struct jb j;
	size_t len;
	uint8_t *d;
	static const uint8_t code[] = { 0x03, 0xac };

	/* An exception range past the code. */
	struct jb_exc ex = { 0, 3, 1, NULL };
	jb_init(&j, "A", "java/lang/Object", 0x21);
	jb_method(&j, 9, "m", "()I", code, 2, &ex, 1, NULL, 0);
	d = jb_finish(&j, &len);
	expect_err(d, len, java_err_corrupt, SIZE_MAX);

	/* A line number entry past the code. */
	uint16_t lines[] = { 5, 1 };
	jb_init(&j, "A", "java/lang/Object", 0x21);
	jb_method(&j, 9, "m", "()I", code, 2, NULL, 0, lines, 1);
	d = jb_finish(&j, &len);
	expect_err(d, len, java_err_corrupt, SIZE_MAX);

	/* code_length 0. */
	jb_init(&j, "A", "java/lang/Object", 0x21);
	jb_method(&j, 9, "m", "()I", code, 0, NULL, 0, NULL, 0);
	d = jb_finish(&j, &len);
	expect_err(d, len, java_err_corrupt, SIZE_MAX);

	/* A field descriptor as a method descriptor. */
	jb_init(&j, "A", "java/lang/Object", 0x21);
	jb_method(&j, 9, "m", "I", code, 2, NULL, 0, NULL, 0);
	d = jb_finish(&j, &len);
	expect_err(d, len, java_err_corrupt, SIZE_MAX);
}

/* Every strict prefix of a valid class is truncated, never more. */
static void test_truncate_everywhere(void **state)
{
	(void)state;
	size_t len;
	uint8_t *data = rich_class(&len);
	for (size_t n = 0; n < len; n++) {
		/* A fresh exact-size copy so ASan sees any over-read. */
		uint8_t *cut = malloc(n ? n : 1);
		memcpy(cut, data, n);
		struct jcf *cf;
		struct java_diag d = { 0 };
		int err = jcf_parse(&cf, cut, n, &d);
		if (err != java_err_truncated)
			fail_msg("prefix %zu of %zu: %d %s", n, len, err, d.msg);
		assert_true(d.offset <= n);
		free(cut);
	}
	free(data);
}

/* Flip bits at every offset: an error or a class whose methods build a
 * CFG or fail cleanly; never a crash (ASan checks the reads). */
static void test_flip_everywhere(void **state)
{
	(void)state;
	static const uint8_t masks[] = { 0x01, 0x02, 0x10, 0x80, 0xff };
	size_t len, ok = 0, bad = 0;
	uint8_t *data = rich_class(&len);
	for (size_t i = 0; i < len; i++) {
		for (size_t k = 0; k < sizeof(masks); k++) {
			uint8_t *c = malloc(len);
			memcpy(c, data, len);
			c[i] ^= masks[k];
			struct jcf *cf;
			struct java_diag d = { 0 };
			int err = jcf_parse(&cf, c, len, &d);
			free(c);
			if (err) {
				assert_int_equal(d.err, err);
				assert_true(d.offset <= len);
				bad++;
				continue;
			}
			ok++;
			for (unsigned m = 0; m < jcf_method_count(cf); m++) {
				struct jcfg *g;
				if (jcfg_build(&g, jcf_method(cf, m), &d) == 0)
					jcfg_free(g);
			}
			jcf_free(cf);
		}
	}
	free(data);
	/* Both outcomes must occur, or the mutation did not exercise the
	 * parser. */
	assert_true(ok > 0);
	assert_true(bad > 0);
}

static void test_errstr(void **state)
{
	(void)state;
	assert_string_equal(java_errstr(java_ok), "success");
	assert_string_equal(java_errstr(java_err_truncated),
			    "class file truncated");
	assert_string_equal(java_errstr(-999), "unknown error");
}

/* Parameter slots of method descriptors, `this` counted unless static. */
static void test_param_slots(void **state)
{
	(void)state;
	assert_int_equal(jcf_param_slots("()V", 1), 0);
	assert_int_equal(jcf_param_slots("()V", 0), 1);
	assert_int_equal(jcf_param_slots("(IJ)V", 1), 3);
	assert_int_equal(jcf_param_slots("(DLjava/lang/String;[J[[D)I", 0), 6);
	assert_int_equal(jcf_param_slots("(ZBCSF)V", 1), 5);
	assert_int_equal(jcf_param_slots("(Ljava/lang/String", 1), -1);
	assert_int_equal(jcf_param_slots("(Q)V", 1), -1);
	assert_int_equal(jcf_param_slots("V", 1), -1);
}

/* jcf_name_hash reads a name a word at a time, its last 1-7 bytes by
 * two overlapping loads or three bytes: for every length up to 24 and
 * every position, changing that one byte changes the hash (a byte the
 * hash skipped would leave it), and the hash follows the string, not
 * where it lies. */
static void test_name_hash_every_byte(void **state)
{
	(void)state;
	char a[32], b[40];
	for (size_t n = 1; n <= 24; n++) {
		for (size_t i = 0; i < n; i++)
			a[i] = (char)('a' + i % 26);
		a[n] = 0;
		uint32_t h = jcf_name_hash(a);
		memcpy(b + 3, a, n + 1);
		assert_int_equal(jcf_name_hash(b + 3), h);
		for (size_t k = 0; k < n; k++) {
			a[k] = '_';
			assert_int_not_equal(jcf_name_hash(a), h);
			a[k] = (char)('a' + k % 26);
		}
		a[n - 1] = 0; /* one byte shorter */
		assert_int_not_equal(jcf_name_hash(a), h);
	}
	assert_int_not_equal(jcf_name_hash(""), jcf_name_hash("a"));
}

/* A class of 48 methods (its name table) finds each by name and
 * descriptor, the first of a name when no descriptor is given (three
 * overloads of "f", apart in method order), and nothing for a name or
 * descriptor it lacks; a class of 15 (scanned) answers the same. */
static void test_find_many_methods(void **state)
{
	(void)state;
	for (unsigned total = 15; total <= 48; total += 33) {
		struct jb j;
		size_t len;
		char name[16];
		jb_init(&j, "M", "java/lang/Object", 0x421);
		for (unsigned i = 0; i < total; i++) {
			const char *desc = "()V";
			if (i == 2 || i == 7 || i == 12) { /* f(D), f(J), f(I) */
				snprintf(name, sizeof(name), "f");
				desc = i == 2 ? "(D)V" : i == 7 ? "(J)V" : "(I)V";
			} else {
				snprintf(name, sizeof(name), "m%u", i);
			}
			jb_method(&j, 0x401, name, desc, NULL, 0, NULL, 0, NULL, 0);
		}
		uint8_t *data = jb_finish(&j, &len);
		struct jcf *cf;
		assert_int_equal(jcf_parse(&cf, data, len, NULL), java_ok);
		free(data);
		assert_int_equal(jcf_method_count(cf), total);
		for (unsigned i = 0; i < total; i++) {
			const struct jcf_method *m = jcf_method(cf, i);
			if (strcmp(m->name, "f"))
				assert_ptr_equal(jcf_method_find(cf, m->name, NULL), m);
			assert_ptr_equal(jcf_method_find(cf, m->name, m->descriptor), m);
		}
		/* f(D) at 2, f(J) at 7, f(I) at 12: the first of the name */
		assert_ptr_equal(jcf_method_find(cf, "f", NULL), jcf_method(cf, 2));
		assert_ptr_equal(jcf_method_find(cf, "f", "(I)V"), jcf_method(cf, 12));
		assert_null(jcf_method_find(cf, "f", "(F)V"));
		assert_null(jcf_method_find(cf, "m2", NULL));
		assert_null(jcf_method_find(cf, "m48", NULL));
		assert_null(jcf_method_find(cf, "g", NULL));
		jcf_free(cf);
	}
}

/* A class of tables E and L, one method, parsed into A. */
static struct jcf *parse_tables_in(struct jcf_arena *a, const char *name,
				   const struct jb_exc *e, uint16_t *l,
				   unsigned nl)
{
	static const uint8_t code[] = { 0x03, 0x3c, 0x1b, 0x3c, 0xb1 };
	struct jb j;
	size_t len;
	jb_init(&j, name, "java/lang/Object", 0x421);
	jb_method(&j, 9, "a", "()V", code, sizeof(code), e, 1, l, nl);
	uint8_t *data = jb_finish(&j, &len);
	struct jcf *cf;
	assert_int_equal(jcf_parse_in(a, &cf, data, len, NULL), java_ok);
	free(data);
	return cf;
}

/* Classes of one arena keep their own tables (gathered in the arena's
 * scratch tables, which the next class reuses), survive a failed parse
 * and a class given back after them, and span chunks; a failed parse
 * takes no room, and only the last class gives its room back. */
static void test_shared_arena(void **state)
{
	(void)state;
	struct jb_exc e1[] = { { 0, 4, 4, "java/lang/Error" } };
	struct jb_exc e2[] = { { 1, 3, 2, NULL } };
	uint16_t l1[] = { 0, 10, 2, 11 }, l2[] = { 4, 21, 0, 20, 3, 22 };
	struct jcf_arena *a;
	assert_int_equal(jcf_arena_alloc(&a), java_ok);
	assert_int_equal(jcf_arena_size(a), 0);
	struct jcf *x = parse_tables_in(a, "X", e1, l1, 2);
	size_t after_x = jcf_arena_size(a);
	assert_true(after_x > 0);

	size_t len;
	uint8_t *rich = rich_class(&len);
	struct jcf *bad;
	struct java_diag d = { 0 };
	assert_int_equal(jcf_parse_in(a, &bad, rich, len - 1, &d),
			 java_err_truncated);
	assert_null(bad);
	assert_int_equal(jcf_arena_size(a), after_x);

	struct jcf *y = parse_tables_in(a, "Y", e2, l2, 3);
	jcf_free(x); /* not the last: kept */
	assert_int_equal(jcf_arena_size(a) > after_x, 1);
	/* 300 rich classes take more than a chunk's 256 KB */
	struct jcf *many[300];
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(jcf_parse_in(a, &many[i], rich, len, NULL),
				 java_ok);
	free(rich);
	size_t full = jcf_arena_size(a);
	assert_true(full > (256u << 10));
	jcf_free(many[299]); /* the last: its room given back */
	size_t less = jcf_arena_size(a);
	assert_true(less < full);
	jcf_free(many[298]); /* now no class is the last */
	assert_int_equal(jcf_arena_size(a), less);

	const struct jcf_method *mx = jcf_method(x, 0), *my = jcf_method(y, 0);
	assert_string_equal(jcf_this_class(x), "X");
	assert_string_equal(mx->exc[0].catch_class, "java/lang/Error");
	assert_int_equal(mx->nlines, 2);
	assert_int_equal(jcf_line_at(mx, 3), 11);
	assert_string_equal(jcf_this_class(y), "Y");
	assert_int_equal(my->exc[0].start_pc, 1);
	assert_null(my->exc[0].catch_class);
	assert_int_equal(my->nlines, 3);
	assert_int_equal(jcf_line_at(my, 0), 20);
	assert_int_equal(jcf_line_at(my, 4), 21);
	for (unsigned i = 0; i < 298; i++) {
		const struct jcf_method *m = jcf_method(many[i], 0);
		assert_string_equal(jcf_this_class(many[i]), "pkg/Rich");
		assert_memory_equal(m->code, rich_code, sizeof(rich_code));
		assert_int_equal(jcf_line_at(m, 4), 12);
	}
	jcf_arena_free(a);
}

/* Failed parses between good ones, in one arena: each gives back only
 * its own room, so the good classes stay whole (under ASan a block
 * given back too many would be a use after free). */
static void test_arena_failures(void **state)
{
	(void)state;
	size_t len;
	uint8_t *rich = rich_class(&len);
	struct jcf_arena *a;
	struct jcf *kept[64];
	unsigned nkept = 0;
	assert_int_equal(jcf_arena_alloc(&a), java_ok);
	for (size_t n = 0; n < len; n++) {
		struct jcf *cf;
		size_t before = jcf_arena_size(a);
		assert_int_not_equal(jcf_parse_in(a, &cf, rich, n, NULL), java_ok);
		assert_int_equal(jcf_arena_size(a), before);
		if (n % 16 == 0 && nkept < 64)
			assert_int_equal(jcf_parse_in(a, &kept[nkept++], rich,
						      len, NULL), java_ok);
	}
	free(rich);
	for (unsigned i = 0; i < nkept; i++) {
		const struct jcf_method *m = jcf_method(kept[i], 0);
		assert_string_equal(jcf_this_class(kept[i]), "pkg/Rich");
		assert_string_equal(jcf_source_file(kept[i]), "Rich.java");
		assert_memory_equal(m->code, rich_code, sizeof(rich_code));
		assert_string_equal(m->exc[0].catch_class, "java/lang/Exception");
		assert_int_equal(jcf_line_at(m, 2), 11);
	}
	jcf_arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rich_class),
		cmocka_unit_test(test_every_tag),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_cpool_errors),
		cmocka_unit_test(test_code_errors),
		cmocka_unit_test(test_utf8_in_place),
		cmocka_unit_test(test_lines_in_order),
		cmocka_unit_test(test_utf8_bytes),
		cmocka_unit_test(test_code_kept),
		cmocka_unit_test(test_second_code),
		cmocka_unit_test(test_tables_per_method),
		cmocka_unit_test(test_truncate_everywhere),
		cmocka_unit_test(test_flip_everywhere),
		cmocka_unit_test(test_errstr),
		cmocka_unit_test(test_param_slots),
		cmocka_unit_test(test_name_hash_every_byte),
		cmocka_unit_test(test_find_many_methods),
		cmocka_unit_test(test_shared_arena),
		cmocka_unit_test(test_arena_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
