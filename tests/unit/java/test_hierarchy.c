// SPDX-License-Identifier: MIT
/* Class hierarchy and call-site resolution over hand-made classes:
 *
 *   Object                      interface I { m(); default d() }
 *   A extends Object impl I     interface J extends I { default d() }
 *   E extends A (m, super.m)    abstract B impl J
 *   C extends B (m, private p)  D extends C
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
#include "java/hierarchy.h"
#include "jclass_build.h"

static const uint8_t ret[] = { 0xb1 };
static const uint8_t aret[] = { 0x01, 0xb0 };

/* Call site operands in the Caller and E classes. */
static struct {
	uint16_t i_m, i_d, b_m, c_p, obj_str, stat, init, missing, lambda,
		e_super_m, wrong_kind, e_m, e_str;
} cp;

static void add(struct jhier *h, struct jb *j, uint64_t loader, int want)
{
	size_t len;
	uint8_t *data = jb_finish(j, &len);
	struct jcf *cf;
	struct java_diag d = { 0 };
	if (jcf_parse(&cf, data, len, &d))
		fail_msg("%s", d.msg);
	free(data);
	assert_int_equal(jhier_add(h, cf, loader), want);
}

static void add_classes(struct jhier *h)
{
	struct jb j;
	jb_init(&j, "java/lang/Object", NULL, 0x21);
	jb_method(&j, 1, "<init>", "()V", ret, 1, NULL, 0, NULL, 0);
	jb_method(&j, 1, "toString", "()Ljava/lang/String;", aret, 2, NULL,
		  0, NULL, 0);
	add(h, &j, 0, 0);

	jb_init(&j, "I", "java/lang/Object", 0x0601);
	jb_method(&j, 0x0401, "m", "()V", NULL, 0, NULL, 0, NULL, 0);
	jb_method(&j, 1, "d", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 0, 0);

	jb_init(&j, "J", "java/lang/Object", 0x0601);
	jb_iface(&j, "I");
	jb_method(&j, 1, "d", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 0, 0);

	jb_init(&j, "A", "java/lang/Object", 0x21);
	jb_iface(&j, "I");
	jb_method(&j, 1, "<init>", "()V", ret, 1, NULL, 0, NULL, 0);
	jb_method(&j, 1, "m", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 0, 0);

	jb_init(&j, "B", "java/lang/Object", 0x0421);
	jb_iface(&j, "J");
	add(h, &j, 0, 0);

	jb_init(&j, "C", "B", 0x21);
	jb_method(&j, 1, "m", "()V", ret, 1, NULL, 0, NULL, 0);
	jb_method(&j, 2, "p", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 0, 0);

	jb_init(&j, "D", "C", 0x21);
	add(h, &j, 0, 0);

	jb_init(&j, "E", "A", 0x31);
	cp.e_super_m = jb_ref(&j, 10, "A", "m", "()V");
	jb_method(&j, 0x11, "m", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 0, 0);
}

/* The caller with one constant per call site, including a lambda. */
static struct jcf *caller(void)
{
	struct jb j;
	jb_init(&j, "Caller", "java/lang/Object", 0x21);
	cp.i_m = jb_ref(&j, 11, "I", "m", "()V");
	cp.i_d = jb_ref(&j, 11, "I", "d", "()V");
	cp.b_m = jb_ref(&j, 10, "B", "m", "()V");
	cp.c_p = jb_ref(&j, 10, "C", "p", "()V");
	cp.obj_str = jb_ref(&j, 10, "java/lang/Object", "toString",
			    "()Ljava/lang/String;");
	cp.stat = jb_ref(&j, 10, "Caller", "s", "()V");
	cp.init = jb_ref(&j, 10, "A", "<init>", "()V");
	cp.missing = jb_ref(&j, 10, "x/Missing", "foo", "()V");
	cp.wrong_kind = cp.b_m;
	cp.e_m = jb_ref(&j, 10, "E", "m", "()V");
	cp.e_str = jb_ref(&j, 10, "E", "toString", "()Ljava/lang/String;");
	uint16_t meta = jb_ref(&j, 10, "java/lang/invoke/LambdaMetafactory",
			       "metafactory", "()V");
	uint16_t bsm = jb_method_handle(&j, 6, meta);
	uint16_t type = jb_cp2(&j, 16, jb_utf8(&j, "()V"), -1);
	uint16_t impl = jb_method_handle(&j, 6, cp.stat);
	cp.lambda = jb_cp2(&j, 18, 0, jb_nat(&j, "run", "()LR;"));
	jb_method(&j, 9, "s", "()V", ret, 1, NULL, 0, NULL, 0);
	uint8_t attr[] = { 0, 1, (uint8_t)(bsm >> 8), (uint8_t)bsm, 0, 3,
			   (uint8_t)(type >> 8), (uint8_t)type,
			   (uint8_t)(impl >> 8), (uint8_t)impl,
			   (uint8_t)(type >> 8), (uint8_t)type };
	jb_attr(&j, "BootstrapMethods", attr, sizeof(attr));
	size_t len;
	uint8_t *data = jb_finish(&j, &len);
	struct jcf *cf;
	struct java_diag d = { 0 };
	if (jcf_parse(&cf, data, len, &d))
		fail_msg("%s", d.msg);
	free(data);
	return cf;
}

static int setup(void **state)
{
	struct jhier *h;
	if (jhier_alloc(&h))
		return -1;
	add_classes(h);
	struct jcf *c = caller();
	if (jhier_add(h, c, 0))
		return -1;
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	jhier_free(*state);
	return 0;
}

static const struct jcf *cls(struct jhier *h, const char *name)
{
	const struct jcf *c = jhier_class(h, name, 0);
	assert_non_null(c);
	return c;
}

/* The candidates of a call site as sorted "Class.name" strings joined by
 * spaces, so a check reads as the expected set. */
static void expect_targets(struct jhier *h, const char *in, unsigned kind,
			   unsigned idx, const char *want, unsigned flags)
{
	struct jhier_method out[16];
	int n = jhier_call_targets(h, cls(h, in), 0, kind, idx, out, 16);
	assert_true(n >= 0);
	char names[16][64], joined[512] = "";
	for (int i = 0; i < n; i++)
		snprintf(names[i], sizeof(names[i]), "%s.%s",
			 jcf_this_class(out[i].cls), out[i].m->name);
	qsort(names, (size_t)n, sizeof(names[0]),
	      (int (*)(const void *, const void *))strcmp);
	for (int i = 0; i < n; i++) {
		strcat(joined, i ? " " : "");
		strcat(joined, names[i]);
	}
	if (strcmp(joined, want))
		fail_msg("%s #%u kind %u: got \"%s\", wanted \"%s\"", in, idx,
			 kind, joined, want);
	for (int i = 0; i < n; i++)
		assert_int_equal(out[i].flags, flags);
}

static void test_lookup(void **state)
{
	struct jhier *h = *state;
	assert_int_equal(jhier_class_count(h), 9);
	assert_string_equal(jcf_this_class(cls(h, "D")), "D");
	assert_null(jhier_class(h, "Nope", 0));
	assert_true(jhier_is_subtype(h, "D", "I", 0));
	assert_true(jhier_is_subtype(h, "D", "B", 0));
	assert_true(jhier_is_subtype(h, "E", "E", 0));
	assert_false(jhier_is_subtype(h, "A", "J", 0));
	assert_false(jhier_is_subtype(h, "I", "A", 0));
	assert_false(jhier_is_subtype(h, "Nope", "A", 0));
}

static void test_resolve(void **state)
{
	struct jhier *h = *state;
	struct jhier_method r;
	/* B declares no m: the superinterface method I.m resolves it. */
	assert_int_equal(jhier_resolve(h, "B", "m", "()V", 0, &r), 0);
	assert_string_equal(jcf_this_class(r.cls), "I");
	/* D inherits m from C. */
	assert_int_equal(jhier_resolve(h, "D", "m", "()V", 0, &r), 0);
	assert_string_equal(jcf_this_class(r.cls), "C");
	/* Methods of arrays are Object's. */
	assert_int_equal(jhier_resolve(h, "[I", "toString",
				       "()Ljava/lang/String;", 0, &r), 0);
	assert_string_equal(jcf_this_class(r.cls), "java/lang/Object");
	assert_int_equal(jhier_resolve(h, "D", "m", "(I)V", 0, &r),
			 java_err_not_found);
	assert_int_equal(jhier_resolve(h, "Nope", "m", "()V", 0, &r),
			 java_err_not_found);
}

static void test_virtual_interface(void **state)
{
	struct jhier *h = *state;
	/* D selects C.m, so C.m appears once. */
	expect_targets(h, "Caller", JBC_INVOKE_INTERFACE, cp.i_m,
		       "A.m C.m E.m", 0);
	/* Default methods: A and E get I.d; C and D get the more specific
	 * J.d. */
	expect_targets(h, "Caller", JBC_INVOKE_INTERFACE, cp.i_d, "I.d J.d",
		       0);
	expect_targets(h, "Caller", JBC_INVOKE_VIRTUAL, cp.b_m, "C.m", 0);
	/* Nobody overrides toString: every receiver selects Object's. */
	expect_targets(h, "Caller", JBC_INVOKE_VIRTUAL, cp.obj_str,
		       "java/lang/Object.toString", 0);
	/* A final method, and a final receiver class. */
	expect_targets(h, "Caller", JBC_INVOKE_VIRTUAL, cp.e_m, "E.m",
		       JHIER_T_EXACT);
	expect_targets(h, "Caller", JBC_INVOKE_VIRTUAL, cp.e_str,
		       "java/lang/Object.toString", JHIER_T_EXACT);
	/* Private: exact even through invokevirtual (nestmates). */
	expect_targets(h, "Caller", JBC_INVOKE_VIRTUAL, cp.c_p, "C.p",
		       JHIER_T_EXACT);

	/* MAX smaller than the count: the count stays the full one. */
	struct jhier_method one[1];
	assert_int_equal(jhier_call_targets(h, cls(h, "Caller"), 0,
					    JBC_INVOKE_INTERFACE, cp.i_m,
					    one, 1), 3);
	assert_int_equal(jhier_call_targets(h, cls(h, "Caller"), 0,
					    JBC_INVOKE_INTERFACE, cp.i_m,
					    NULL, 0), 3);
}

/* Targets are kept per (receiver class, method) across call sites; a
 * class added later must still count: F overrides m below D, abstract K
 * re-declares m over A, and L under K inherits K's abstract m, so a call
 * on an L receiver has no method to run (AbstractMethodError). */
static void test_targets_after_adding(void **state)
{
	struct jhier *h = *state;
	expect_targets(h, "Caller", JBC_INVOKE_VIRTUAL, cp.b_m, "C.m", 0);
	expect_targets(h, "Caller", JBC_INVOKE_INTERFACE, cp.i_m,
		       "A.m C.m E.m", 0);
	static const struct {
		const char *name, *super;
		uint16_t access, m_access; /* m_access 0: no m() */
	} later[] = {
		{ "F", "D", 0x21, 0x0001 },
		{ "G", "F", 0x21, 0 },
		{ "K", "A", 0x0421, 0x0401 },
		{ "L", "K", 0x21, 0 },
	};
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++) {
		struct jb j;
		int abstract = later[i].m_access & 0x0400;
		jb_init(&j, later[i].name, later[i].super, later[i].access);
		if (later[i].m_access)
			jb_method(&j, later[i].m_access, "m", "()V",
				  abstract ? NULL : ret, abstract ? 0 : 1, NULL,
				  0, NULL, 0);
		add(h, &j, 0, 0);
	}
	expect_targets(h, "Caller", JBC_INVOKE_VIRTUAL, cp.b_m, "C.m F.m", 0);
	expect_targets(h, "Caller", JBC_INVOKE_INTERFACE, cp.i_m,
		       "A.m C.m E.m F.m", 0);
	/* Asked again: the kept answer, not a second walk's. */
	expect_targets(h, "Caller", JBC_INVOKE_INTERFACE, cp.i_m,
		       "A.m C.m E.m F.m", 0);
}

static void test_exact_and_special(void **state)
{
	struct jhier *h = *state;
	expect_targets(h, "Caller", JBC_INVOKE_STATIC, cp.stat, "Caller.s",
		       JHIER_T_EXACT);
	expect_targets(h, "Caller", JBC_INVOKE_SPECIAL, cp.init, "A.<init>",
		       JHIER_T_EXACT);
	/* super.m() in E: A.m, not E.m. */
	expect_targets(h, "E", JBC_INVOKE_SPECIAL, cp.e_super_m, "A.m",
		       JHIER_T_EXACT);
	/* The lambda runs its implementation method behind generated
	 * frames. */
	expect_targets(h, "Caller", JBC_INVOKE_DYNAMIC, cp.lambda, "Caller.s",
		       JHIER_T_INDIRECT);
	/* An unloaded class: no candidates, not an error. */
	expect_targets(h, "Caller", JBC_INVOKE_VIRTUAL, cp.missing, "", 0);
	/* invokeinterface must name an InterfaceMethodref. */
	assert_int_equal(jhier_call_targets(h, cls(h, "Caller"), 0,
					    JBC_INVOKE_INTERFACE,
					    cp.wrong_kind, NULL, 0),
			 java_err_bad_cpool);
	assert_int_equal(jhier_call_targets(h, cls(h, "Caller"), 0,
					    JBC_GOTO, cp.stat, NULL, 0),
			 java_err_bad_cpool);
}

/* A hierarchy holding java/lang/Object alone (J the builder's room). */
static struct jhier *hier_with_object(struct jb *j)
{
	struct jhier *h;
	assert_int_equal(jhier_alloc(&h), 0);
	jb_init(j, "java/lang/Object", NULL, 0x21);
	add(h, j, 0, 0);
	return h;
}

static void test_loaders(void **state)
{
	(void)state;
	struct jb j;
	struct jhier *h = hier_with_object(&j);
	jb_init(&j, "P", "java/lang/Object", 0x21);
	jb_method(&j, 1, "one", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 7, 0);
	/* The same name and loader again: kept out. */
	jb_init(&j, "P", "java/lang/Object", 0x21);
	add(h, &j, 7, 1);
	/* The same name under another loader is another class. */
	jb_init(&j, "P", "java/lang/Object", 0x21);
	jb_method(&j, 1, "two", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 9, 0);
	assert_int_equal(jhier_class_count(h), 3);
	assert_non_null(jcf_method_find(jhier_class(h, "P", 7), "one", NULL));
	assert_non_null(jcf_method_find(jhier_class(h, "P", 9), "two", NULL));
	/* Unknown loader: bootstrap first, else any definition. */
	assert_non_null(jhier_class(h, "P", 3));
	uint64_t loader = 1;
	assert_non_null(jhier_class_at(h, 0, &loader));
	assert_int_equal(loader, 0);
	assert_null(jhier_class_at(h, 3, NULL));
	/* Enough classes to grow the name table several times. */
	for (int i = 0; i < 600; i++) {
		char name[32];
		snprintf(name, sizeof(name), "gen/C%d", i);
		jb_init(&j, name, i ? "gen/C0" : "java/lang/Object", 0x21);
		add(h, &j, 0, 0);
	}
	assert_true(jhier_is_subtype(h, "gen/C599", "gen/C0", 0));
	assert_string_equal(jcf_this_class(jhier_class(h, "gen/C321", 0)),
			    "gen/C321");
	jhier_free(h);
}

/* Corrupt input the JVM would reject: a superclass cycle and a class that
 * implements itself.  Queries must end, with plain answers. */
static void test_cycles(void **state)
{
	(void)state;
	struct jhier *h;
	struct jb j;
	struct jhier_method r;
	assert_int_equal(jhier_alloc(&h), 0);
	jb_init(&j, "X", "Y", 0x21);
	jb_iface(&j, "X");
	jb_method(&j, 1, "m", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 0, 0);
	jb_init(&j, "Y", "X", 0x21);
	uint16_t ref = jb_ref(&j, 10, "X", "m", "()V");
	uint16_t none = jb_ref(&j, 10, "Y", "nope", "()V");
	add(h, &j, 0, 0);
	assert_int_equal(jhier_resolve(h, "Y", "m", "()V", 0, &r), 0);
	assert_string_equal(jcf_this_class(r.cls), "X");
	assert_int_equal(jhier_resolve(h, "Y", "nope", "()V", 0, &r),
			 java_err_not_found);
	assert_true(jhier_is_subtype(h, "X", "Y", 0));
	assert_false(jhier_is_subtype(h, "X", "Nope", 0));
	const struct jcf *y = jhier_class(h, "Y", 0);
	assert_int_equal(jhier_call_targets(h, y, 0, JBC_INVOKE_VIRTUAL, ref,
					    &r, 1), 1);
	assert_string_equal(jcf_this_class(r.cls), "X");
	assert_int_equal(jhier_call_targets(h, y, 0, JBC_INVOKE_VIRTUAL, none,
					    &r, 1), 0);
	jhier_free(h);
}

/* A receiver whose superclass was answered earlier in the same selection
 * takes its answer (select_quick), but where that answer is no method it
 * still looks for the most specific default itself: Q inherits nothing
 * for d from P, which gets I.d, and its own interface K gives K.d. */
static void test_default_below_answered(void **state)
{
	(void)state;
	struct jb j;
	struct jhier *h = hier_with_object(&j);
	jb_init(&j, "I", "java/lang/Object", 0x0601);
	jb_method(&j, 1, "d", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 0, 0);
	/* P before K: I's subtypes are walked P, Q, K, so that P is
	 * answered before Q */
	jb_init(&j, "P", "java/lang/Object", 0x21);
	jb_iface(&j, "I");
	add(h, &j, 0, 0);
	jb_init(&j, "K", "java/lang/Object", 0x0601);
	jb_iface(&j, "I");
	jb_method(&j, 1, "d", "()V", ret, 1, NULL, 0, NULL, 0);
	add(h, &j, 0, 0);
	jb_init(&j, "Q", "P", 0x21);
	jb_iface(&j, "K");
	add(h, &j, 0, 0);
	jb_init(&j, "Caller2", "java/lang/Object", 0x21);
	uint16_t i_d = jb_ref(&j, 11, "I", "d", "()V");
	add(h, &j, 0, 0);
	expect_targets(h, "Caller2", JBC_INVOKE_INTERFACE, i_d, "I.d K.d", 0);
	jhier_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_virtual_interface),
		cmocka_unit_test(test_exact_and_special),
		cmocka_unit_test(test_loaders),
		cmocka_unit_test(test_cycles),
		cmocka_unit_test(test_default_below_answered),
		cmocka_unit_test_setup_teardown(test_targets_after_adding,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
