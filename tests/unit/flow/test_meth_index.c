// SPDX-License-Identifier: MIT
/*
 * flow_meth_index (user/flow/reconstruct/methods.c) numbers a class-file
 * method once, in the order first asked, and finds it again by its class
 * and its index in the class (class_slots), not by its pointer: two
 * classes' methods of the same index are two methods, a method asked again
 * is the same one, and a method that is not its class's method at its
 * index is refused.  The names come back through flow_method.
 * flow_meth_index_class numbers a class's other methods with code in its
 * order, after those already numbered, as flow_meth_index would one by
 * one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/flow/flow_int.h"
#include "java_fixture.h"

static const char src[] =
	"public class Mi {\n"
	"    static int a(int x) { return x + 1; }\n"
	"    static int b(int x) { return x * 2; }\n"
	"}\n"
	"class Mj {\n"
	"    static int c(int x) { return x - 1; }\n"
	"}\n";

/* Method K of class NAME, as the hierarchy gives it. */
static struct jhier_method method_of(struct jprog *p, const char *name, unsigned k)
{
	struct jhier_method hm = { 0 };
	hm.cls = jhier_class(jprog_hier(p), name, 0);
	assert_non_null(hm.cls);
	hm.m = jcf_method(hm.cls, k);
	assert_non_null(hm.m);
	return hm;
}

/* The index of method NAME in class CLS. */
static unsigned index_of(const struct jcf *cls, const char *name)
{
	for (unsigned k = 0; k < jcf_method_count(cls); k++)
		if (!strcmp(jcf_method(cls, k)->name, name))
			return k;
	fail_msg("no method %s", name);
	return 0;
}

/* A flow over classes Mi and Mj (*P their program); skips the test
 * without javac. */
static struct flow *mi_mj_flow(struct jprog **p)
{
	static const char *const cls[] = { "Mi", "Mj" };
	struct flow *f;
	*p = java_fixture_program(src, cls, 2);
	if (!*p)
		skip();
	assert_int_equal(flow_alloc(&f, *p, NULL), 0);
	return f;
}

static void test_numbered_once_by_class(void **state)
{
	(void)state;
	struct jprog *p;
	struct flow *f = mi_mj_flow(&p);
	struct jhier_method mi = method_of(p, "Mi", 0);
	struct jhier_method b = method_of(p, "Mi", index_of(mi.cls, "b"));
	struct jhier_method a = method_of(p, "Mi", index_of(mi.cls, "a"));
	struct jhier_method c = method_of(p, "Mj", index_of(method_of(p, "Mj", 0).cls, "c"));
	uint32_t ib, ia, ic, again;
	/* b first: numbers follow the asking, not the class's order */
	assert_int_equal(flow_meth_index(f, &b, &ib), 0);
	assert_int_equal(flow_meth_index(f, &a, &ia), 0);
	assert_int_equal(flow_meth_index(f, &c, &ic), 0);
	assert_int_equal(ib, 0);
	assert_int_equal(ia, 1);
	assert_int_equal(ic, 2);
	assert_int_equal(flow_meth_index(f, &a, &again), 0);
	assert_int_equal(again, ia);
	assert_int_equal(flow_meth_index(f, &c, &again), 0);
	assert_int_equal(again, ic);
	assert_int_equal(flow_method_count(f), 3);
	struct flow_method_info m = flow_method(f, ic + 1);
	assert_string_equal(m.class_name, "Mj");
	assert_string_equal(m.name, "c");
	assert_string_equal(m.descriptor, "(I)I");
	m = flow_method(f, ib + 1);
	assert_string_equal(m.class_name, "Mi");
	assert_string_equal(m.name, "b");
	assert_null(flow_method(f, 4).name); /* past the last index */
	/* Mj's method with Mi as its class: not Mi's method at that index */
	struct jhier_method wrong = c;
	wrong.cls = mi.cls;
	assert_int_equal(flow_meth_index(f, &wrong, &again), jpb_err_invalid);
	assert_int_equal(flow_method_count(f), 3);
	flow_free(f);
	jprog_free(p);
}

static void test_class_numbered_in_order(void **state)
{
	(void)state;
	struct jprog *p;
	struct flow *f = mi_mj_flow(&p);
	struct jhier_method mi = method_of(p, "Mi", 0);
	unsigned n = jcf_method_count(mi.cls), kb = index_of(mi.cls, "b");
	assert_int_equal(n, 3); /* <init>, a, b */
	struct jhier_method b = method_of(p, "Mi", kb);
	uint32_t ib, idx;
	assert_int_equal(flow_meth_index(f, &b, &ib), 0);
	assert_int_equal(flow_meth_index_class(f, mi.cls, mi.loader), 0);
	assert_int_equal(flow_method_count(f), 3);
	/* b keeps its number; the others follow in the class's order */
	uint32_t next = 1;
	for (unsigned k = 0; k < n; k++) {
		struct jhier_method hm = method_of(p, "Mi", k);
		assert_int_equal(flow_meth_index(f, &hm, &idx), 0);
		assert_int_equal(idx, k == kb ? ib : next++);
		assert_string_equal(flow_method(f, idx + 1).name, hm.m->name);
	}
	/* a second time: nothing new */
	assert_int_equal(flow_meth_index_class(f, mi.cls, mi.loader), 0);
	assert_int_equal(flow_method_count(f), 3);
	flow_free(f);
	jprog_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbered_once_by_class),
		cmocka_unit_test(test_class_numbered_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
