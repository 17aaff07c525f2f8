// SPDX-License-Identifier: MIT
/* The program model facade: classes and method ids from a bundle's jvm
 * stream, bad class files counted, CFGs cached per method. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bundle.h"
#include "java/program.h"
#include "jclass_build.h"
#include "records.h"
#include "records_jvm.h"

static char dir[256];

static const uint8_t loop_code[] = {
	0x03, 0x3b, 0x1a, 0x10, 10, 0xa2, 0x00, 0x09,
	0x84, 0x00, 0x01, 0xa7, 0xff, 0xf7, 0x1a, 0xac,
};

static uint8_t *class_bytes(const char *name, const char *super, size_t *len)
{
	struct jb j;
	jb_init(&j, name, super, 0x21);
	jb_method(&j, 9, "loop", "()I", loop_code, sizeof(loop_code), NULL, 0,
		  NULL, 0);
	jb_method(&j, 0x0109, "nat", "()V", NULL, 0, NULL, 0, NULL, 0);
	return jb_finish(&j, len);
}

static void put_class(struct jpb_writer *w, struct jpb_buf *s,
		      const uint8_t *p, size_t n, uint64_t loader)
{
	struct jpb_rec_jvm_class c = { 0 };
	c.loader = loader;
	c.name = jpb_str_c("");
	c.bytes.ptr = p;
	c.bytes.len = (uint32_t)n;
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(
						       JPB_REC_JVM_CLASS),
					    1, &c, s), 0);
}

static void put_method(struct jpb_writer *w, struct jpb_buf *s, uint64_t id,
		       const char *cls, const char *name, const char *sig)
{
	struct jpb_rec_jvm_method m = { 0 };
	m.method_id = id;
	m.class_sig = jpb_str_c(cls);
	m.name = jpb_str_c(name);
	m.signature = jpb_str_c(sig);
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(
						       JPB_REC_JVM_METHOD),
					    2, &m, s), 0);
}

/* A new bundle in DIR with its jvm stream open for writing. */
static struct jpb_writer *new_jvm_stream(struct jpb_bundle **b)
{
	struct jpb_writer *w;
	const char *tmp = getenv("TESTTMP");
	snprintf(dir, sizeof(dir), "%s/program.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(jpb_bundle_create(b, dir), 0);
	assert_int_equal(jpb_writer_open(*b, "jvm", &w), 0);
	return w;
}

static void remove_dir(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Two good classes (one sent twice), one corrupt, and method ids. */
static void make_bundle(void)
{
	struct jpb_bundle *b;
	struct jpb_writer *w = new_jvm_stream(&b);
	struct jpb_buf s = { 0 };
	size_t n;
	uint8_t *p = class_bytes("java/lang/Object", NULL, &n);
	put_class(w, &s, p, n, 0);
	free(p);
	p = class_bytes("app/Main", "java/lang/Object", &n);
	put_class(w, &s, p, n, 5);
	put_class(w, &s, p, n, 5); /* retransformed: same name and loader */
	p[0] = 0; /* not a class file */
	put_class(w, &s, p, n, 5);
	free(p);
	put_method(w, &s, 0x7000, "Lapp/Main;", "loop", "()I");
	put_method(w, &s, 0x6000, "Ljava/lang/Object;", "nat", "()V");
	put_method(w, &s, 0x6500, "Lapp/Gone;", "x", "()V");
	assert_int_equal(jpb_writer_close(w), 0);
	jpb_buf_fini(&s);
	jpb_bundle_free(b);
}

/* Counts the records it is handed; fails with jpb_err_nomem at STOP. */
struct visit_count {
	int n, stop;
	uint16_t types[16];
};

static int count_visit(void *arg, const struct jpb_record *rec)
{
	struct visit_count *v = arg;
	if (v->n < 16)
		v->types[v->n] = rec->type;
	return ++v->n == v->stop ? jpb_err_nomem : 0;
}

/* One pass serves the program and a caller's own records (the flow's
 * codelets): every record is handed over, in the stream's order, and the
 * caller's failure ends the load with it, named with its record. */
static void test_load_bundle_visit(void **state)
{
	(void)state;
	make_bundle();
	struct jpb_bundle *b;
	struct jprog *p;
	struct java_diag d = { 0 };
	struct visit_count v = { 0 };
	assert_int_equal(jpb_bundle_open(&b, dir), 0);
	assert_int_equal(jprog_alloc(&p), 0);
	assert_int_equal(jprog_load_bundle_visit(p, b, &d, count_visit, &v), 2);
	assert_int_equal(v.n, 7); /* 4 class records, 3 method records */
	assert_int_equal(v.types[0], JPB_REC_JVM_CLASS);
	assert_int_equal(v.types[6], JPB_REC_JVM_METHOD);
	assert_string_equal(d.msg, "");
	jprog_free(p);

	v = (struct visit_count){ .stop = 2 };
	assert_int_equal(jprog_alloc(&p), 0);
	assert_int_equal(jprog_load_bundle_visit(p, b, &d, count_visit, &v), jpb_err_nomem);
	assert_int_equal(v.n, 2);
	assert_non_null(strstr(d.msg, "jvm: record at offset "));
	jprog_free(p);
	jpb_bundle_free(b);
}

static void test_load_bundle(void **state)
{
	(void)state;
	make_bundle();
	struct jpb_bundle *b;
	struct jprog *p;
	struct java_diag d = { 0 };
	assert_int_equal(jpb_bundle_open(&b, dir), 0);
	assert_int_equal(jprog_alloc(&p), 0);
	assert_int_equal(jprog_load_bundle(p, b, &d), 2);
	assert_int_equal(jhier_class_count(jprog_hier(p)), 2);
	assert_int_equal(jprog_bad_classes(p), 1);
	assert_int_equal(jprog_first_bad(p)->err, java_err_bad_magic);
	/* the parser's offset is within the class file: the record's says
	 * where in the bundle */
	assert_non_null(strstr(jprog_first_bad(p)->msg, "jvm: class record at offset "));
	assert_string_equal(d.msg, "");

	struct jhier_method m;
	assert_int_equal(jprog_method_by_id(p, 0x7000, &m), 0);
	assert_string_equal(jcf_this_class(m.cls), "app/Main");
	assert_string_equal(m.m->name, "loop");
	assert_int_equal(jprog_method_by_id(p, 0x6000, &m), 0);
	assert_string_equal(m.m->name, "nat");
	assert_int_equal(jprog_method_by_id(p, 0x6500, &m), java_err_not_found);
	assert_int_equal(jprog_method_by_id(p, 1, &m), java_err_not_found);

	/* A method's CFG is built once and then served from the cache. */
	assert_int_equal(jprog_method_by_id(p, 0x7000, &m), 0);
	const struct jcfg *g1, *g2;
	assert_int_equal(jprog_cfg(p, m.m, &g1, &d), 0);
	assert_int_equal(jcfg_block_count(g1), 4);
	assert_int_equal(jprog_cfg(p, m.m, &g2, &d), 0);
	assert_ptr_equal(g1, g2);
	assert_int_equal(jprog_method_by_id(p, 0x6000, &m), 0);
	assert_int_equal(jprog_cfg(p, m.m, &g1, &d), java_err_no_code);
	assert_int_equal(jprog_cfg(p, m.m, &g1, &d), java_err_no_code);
	assert_null(g1);
	jprog_free(p);
	jpb_bundle_free(b);
	remove_dir();
}

/* Many methods: the cache grows and every entry stays findable. */
static void test_cfg_cache_growth(void **state)
{
	(void)state;
	struct jprog *p;
	assert_int_equal(jprog_alloc(&p), 0);
	struct jb j;
	jb_init(&j, "Many", NULL, 0x21);
	char names[300][16];
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "m%d", i);
		jb_method(&j, 9, names[i], "()I", loop_code,
			  sizeof(loop_code), NULL, 0, NULL, 0);
	}
	size_t n;
	uint8_t *bytes = jb_finish(&j, &n);
	assert_int_equal(jprog_add_class(p, bytes, n, 0, NULL), 0);
	assert_int_equal(jprog_add_class(p, bytes, 3, 0, NULL),
			 java_err_truncated);
	free(bytes);
	const struct jcf *cf = jhier_class(jprog_hier(p), "Many", 0);
	const struct jcfg *first[300];
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(jprog_cfg(p, jcf_method(cf, i), &first[i],
					   NULL), 0);
	for (unsigned i = 0; i < 300; i++) {
		const struct jcfg *g;
		assert_int_equal(jprog_cfg(p, jcf_method(cf, i), &g, NULL), 0);
		assert_ptr_equal(g, first[i]);
	}
	assert_int_equal(jprog_bad_classes(p), 1);
	jprog_free(p);
}

static void add_bytes(struct jprog *p, struct jb *j)
{
	size_t n;
	uint8_t *b = jb_finish(j, &n);
	assert_int_equal(jprog_add_class(p, b, n, 0, NULL), 0);
	free(b);
}

/* jprog_has_cfg answers as jprog_cfg would, without building good code;
 * checked methods are built when asked for, also after the cache grew;
 * bad code asked about first still gets the builder's message from
 * jprog_cfg (where it failed), the cached error only after. */
static void test_has_cfg(void **state)
{
	(void)state;
	static const uint8_t off_end[] = { 0x03 }; /* falls off the end */
	struct jprog *p;
	struct jb j;
	assert_int_equal(jprog_alloc(&p), 0);
	jb_init(&j, "Some", NULL, 0x21);
	char names[100][16];
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "m%d", i);
		jb_method(&j, 9, names[i], "()I", i % 10 ? loop_code : off_end,
			  i % 10 ? sizeof(loop_code) : 1, NULL, 0, NULL, 0);
	}
	jb_method(&j, 0x0109, "nat", "()V", NULL, 0, NULL, 0, NULL, 0);
	add_bytes(p, &j);
	const struct jcf *cf = jhier_class(jprog_hier(p), "Some", 0);
	for (unsigned i = 0; i < 100; i++)
		assert_int_equal(jprog_has_cfg(p, jcf_method(cf, i)), i % 10 != 0);
	assert_int_equal(jprog_has_cfg(p, jcf_method(cf, 100)), 0);
	assert_int_equal(jprog_has_cfg(NULL, jcf_method(cf, 0)), java_err_invalid);
	for (unsigned i = 0; i < 100; i++) {
		const struct jcfg *g = (const struct jcfg *)1;
		struct java_diag d = { 0 };
		int err = jprog_cfg(p, jcf_method(cf, i), &g, &d);
		if (i % 10) {
			assert_int_equal(err, 0);
			assert_int_equal(jcfg_block_count(g), 4);
		} else {
			assert_int_equal(err, java_err_bad_code);
			assert_null(g);
			assert_null(strstr(d.msg, "(cached)"));
			assert_non_null(strstr(d.msg, names[i]));
			struct java_diag again = { 0 };
			assert_int_equal(jprog_cfg(p, jcf_method(cf, i), &g, &again),
					 java_err_bad_code);
			assert_non_null(strstr(again.msg, "(cached)"));
		}
		assert_int_equal(jprog_has_cfg(p, jcf_method(cf, i)), i % 10 != 0);
	}
	jprog_free(p);
}

/* Call-site candidates are cached per instruction and recomputed when a
 * new class (here a subclass that overrides) arrives. */
static void test_call_cache(void **state)
{
	(void)state;
	static const uint8_t ret[] = { 0xb1 };
	struct jprog *p;
	struct jb j;
	assert_int_equal(jprog_alloc(&p), 0);
	jb_init(&j, "java/lang/Object", NULL, 0x21);
	add_bytes(p, &j);
	jb_init(&j, "app/Base", "java/lang/Object", 0x21);
	jb_method(&j, 1, "v", "()V", ret, 1, NULL, 0, NULL, 0);
	add_bytes(p, &j);
	jb_init(&j, "app/Call", "java/lang/Object", 0x21);
	uint16_t v = jb_ref(&j, 10, "app/Base", "v", "()V");
	uint16_t g = jb_ref(&j, 10, "app/Call", "f", "()V");
	uint8_t code[] = { 0x01, 0xb6, (uint8_t)(v >> 8), (uint8_t)v,
			   0xb8, (uint8_t)(g >> 8), (uint8_t)g, 0xb1 };
	jb_method(&j, 9, "f", "()V", code, sizeof(code), NULL, 0, NULL, 0);
	add_bytes(p, &j);

	const struct jcf *call = jhier_class(jprog_hier(p), "app/Call", 0);
	const struct jcf_method *f = jcf_method_find(call, "f", "()V");
	const struct jhier_method *t1, *t2;
	assert_int_equal(jprog_call_targets(p, call, 0, f, 1, &t1), 1);
	assert_string_equal(jcf_this_class(t1[0].cls), "app/Base");
	assert_int_equal(jprog_call_targets(p, call, 0, f, 1, &t2), 1);
	assert_ptr_equal(t1, t2);
	assert_int_equal(jprog_call_targets(p, call, 0, f, 2, &t1), 1);
	assert_ptr_equal(t1[0].m, f);
	assert_int_equal(t1[0].flags, JHIER_T_EXACT);
	assert_int_equal(jprog_call_targets(p, call, 0, f, 0, &t1),
			 java_err_invalid); /* aconst_null */
	assert_int_equal(jprog_call_targets(p, call, 0, f, 9, &t1),
			 java_err_invalid);

	jb_init(&j, "app/Sub", "app/Base", 0x21);
	jb_method(&j, 1, "v", "()V", ret, 1, NULL, 0, NULL, 0);
	add_bytes(p, &j);
	assert_int_equal(jprog_call_targets(p, call, 0, f, 1, &t1), 2);
	assert_string_not_equal(jcf_this_class(t1[0].cls),
				jcf_this_class(t1[1].cls));
	jprog_free(p);
}

/* Candidates are kept in chunks of room for many sites: 1500 sites,
 * more than a chunk holds, each get their own room that stays theirs
 * when asked again, and the chunks go with the classes' next change. */
static void test_call_chunks(void **state)
{
	(void)state;
	enum { NSITES = 1500 };
	static const uint8_t ret[] = { 0xb1 };
	static uint8_t code[3 * NSITES + 1];
	static const struct jhier_method *t[NSITES];
	struct jprog *p;
	struct jb j;
	assert_int_equal(jprog_alloc(&p), 0);
	jb_init(&j, "java/lang/Object", NULL, 0x21);
	add_bytes(p, &j);
	jb_init(&j, "app/Many", "java/lang/Object", 0x21);
	uint16_t g = jb_ref(&j, 10, "app/Many", "g", "()V");
	for (int k = 0; k < NSITES; k++) {
		code[3 * k] = 0xb8;
		code[3 * k + 1] = (uint8_t)(g >> 8);
		code[3 * k + 2] = (uint8_t)g;
	}
	code[3 * NSITES] = 0xb1;
	jb_method(&j, 9, "f", "()V", code, sizeof(code), NULL, 0, NULL, 0);
	jb_method(&j, 9, "g", "()V", ret, 1, NULL, 0, NULL, 0);
	add_bytes(p, &j);
	const struct jcf *many = jhier_class(jprog_hier(p), "app/Many", 0);
	const struct jcf_method *f = jcf_method_find(many, "f", "()V");
	const struct jcf_method *gm = jcf_method_find(many, "g", "()V");
	for (int round = 0; round < 2; round++) {
		for (uint32_t k = 0; k < NSITES; k++) {
			assert_int_equal(jprog_call_targets(p, many, 0, f, k,
							    &t[k]), 1);
			assert_ptr_equal(t[k][0].m, gm);
			assert_true(k == 0 || t[k] != t[k - 1]);
		}
		for (uint32_t k = 0; k < NSITES; k++) {
			const struct jhier_method *again;
			assert_int_equal(jprog_call_targets(p, many, 0, f, k,
							    &again), 1);
			assert_ptr_equal(again, t[k]);
			assert_ptr_equal(t[k][0].m, gm);
		}
		jb_init(&j, round ? "app/Other1" : "app/Other0",
			"java/lang/Object", 0x21);
		add_bytes(p, &j); /* drops every site's candidates */
	}
	jprog_free(p);
}

/* Flip one byte of the first record holding NEEDLE in DIR's jvm stream:
 * its checksum fails, its length still holds. */
static void damage_record_with(const char *needle)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/jvm.jpb", dir);
	FILE *fp = fopen(path, "r+b");
	assert_non_null(fp);
	static uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), fp), k = strlen(needle);
	uint8_t *at = NULL;
	for (size_t i = 0; !at && i + k <= n; i++)
		if (!memcmp(buf + i, needle, k))
			at = buf + i;
	assert_non_null(at);
	at[0] ^= 0x20;
	assert_int_equal(fseek(fp, 0, SEEK_SET), 0);
	assert_int_equal(fwrite(buf, 1, n, fp), n);
	fclose(fp);
}

/* One damaged record loses its class, not the records after it. */
static void test_load_bundle_skips_damaged_record(void **state)
{
	(void)state;
	struct jpb_bundle *b;
	struct jpb_writer *w = new_jvm_stream(&b);
	struct jpb_buf s = { 0 };
	static const char *const names[] = { "java/lang/Object", "app/Lost", "app/Kept" };
	for (int i = 0; i < 3; i++) {
		size_t n;
		uint8_t *p = class_bytes(names[i], i ? "java/lang/Object" : NULL, &n);
		put_class(w, &s, p, n, 0);
		free(p);
	}
	put_method(w, &s, 0x7000, "Lapp/Kept;", "loop", "()I");
	assert_int_equal(jpb_writer_close(w), 0);
	jpb_buf_fini(&s);
	jpb_bundle_free(b);
	damage_record_with("app/Lost");

	struct jprog *p;
	struct java_diag d = { 0 };
	assert_int_equal(jpb_bundle_open(&b, dir), 0);
	assert_int_equal(jprog_alloc(&p), 0);
	assert_int_equal(jprog_load_bundle(p, b, &d), 2);
	assert_non_null(strstr(d.msg, "checksum mismatch"));
	assert_int_equal(d.err, jpb_err_corrupt);
	struct jhier_method m;
	assert_int_equal(jprog_method_by_id(p, 0x7000, &m), 0);
	assert_string_equal(jcf_this_class(m.cls), "app/Kept");
	jprog_free(p);
	jpb_bundle_free(b);
	remove_dir();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_cache),
		cmocka_unit_test(test_call_chunks),
		cmocka_unit_test(test_load_bundle),
		cmocka_unit_test(test_load_bundle_visit),
		cmocka_unit_test(test_load_bundle_skips_damaged_record),
		cmocka_unit_test(test_cfg_cache_growth),
		cmocka_unit_test(test_has_cfg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
