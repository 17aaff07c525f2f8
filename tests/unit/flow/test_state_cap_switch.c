// SPDX-License-Identifier: MIT
/*
 * The state cap (flow_opts.max_states) after a switch, over real class
 * files compiled by javac at test time: jython dispatches every Python
 * function through a virtual call_function(id) whose tableswitch calls
 * one method per case, so the states after the switch are the candidate
 * classes times their cases.  When they are more than the cap, each
 * predecessor keeps its first successor before any keeps a second (as at
 * a method entry), so a class that loaded late is not crowded out by the
 * cases of those before it.  RECONSTRUCTION.md, "hot10 on jython at 0%
 * loss".
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
#include "event_script.h"
#include "java_fixture.h"

/* javac makes both switches tableswitches (3 or more dense cases);
 * T1's functions return iconst_N, T2's g0 sipush, g1 and g2 ldc. */
static const char *src =
	"public class Sw {\n"
	"    static abstract class Tab { abstract int call(int id); }\n"
	"    static class T1 extends Tab {\n"
	"        int f0() { return 0; } int f1() { return 1; }\n"
	"        int f2() { return 2; } int f3() { return 3; }\n"
	"        int call(int id) {\n"
	"            switch (id) {\n"
	"            case 0: return f0(); case 1: return f1();\n"
	"            case 2: return f2(); case 3: return f3();\n"
	"            default: return -1;\n"
	"            }\n"
	"        }\n"
	"    }\n"
	"    static class T2 extends Tab {\n"
	"        int g0() { return 1000; } int g1() { return 100000; }\n"
	"        int g2() { return 200000; }\n"
	"        int call(int id) {\n"
	"            switch (id) {\n"
	"            case 0: return g0(); case 1: return g1(); case 2: return g2();\n"
	"            default: return -1;\n"
	"            }\n"
	"        }\n"
	"    }\n"
	"    static int dispatch(Tab t, int id) { return t.call(id); }\n"
	"    static int outer(Tab t) { return dispatch(t, 0) + 1; }\n"
	"}\n";

#define OUTER_ID 0x7201u
enum { CL_ENTRY = 1 };

struct fx {
	struct jprog *p;
	struct event_script s;
};

static int setup(void **state)
{
	char dir[512];
	if (java_fixture_compile("Sw", src, dir, sizeof(dir))) {
		*state = NULL; /* no javac: every case skips */
		return 0;
	}
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(jprog_alloc(&x->p), 0);
	/* T1 loads first: the hierarchy's candidate order */
	static const char *cls[] = { "Sw", "Sw$Tab", "Sw$T1", "Sw$T2" };
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(java_fixture_load(x->p, dir, cls[i]), 0);
	assert_int_equal(jprog_add_method_id(x->p, OUTER_ID, "LSw;", "outer", "(LSw$Tab;)I"),
			 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	if (x) {
		jprog_free(x->p);
		script_fini(&x->s);
		free(x);
	}
	return 0;
}

struct want {
	const char *method;
	int32_t bci;
	uint8_t status;
	uint16_t ncand;
};

/* Reconstruct x's events with at most MAX_STATES states per step and
 * compare with W, exactly. */
static void check(struct fx *x, unsigned max_states, const struct want *w, size_t nw)
{
	struct flow_opts o = { .max_states = max_states };
	struct flow *f;
	assert_int_equal(flow_alloc(&f, x->p, &o), 0);
	assert_int_equal(flow_set_codelet(f, CL_ENTRY, "zerolocals"), 0);
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, &n, NULL), 0);
	for (size_t i = 0; i < n && i < nw; i++) {
		const struct flow_method_info *m = flow_method(f, out[i].method);
		char got[160];
		snprintf(got, sizeof(got), "%s.%s", m ? m->class_name : "?", m ? m->name : "?");
		if (strcmp(got, w[i].method) || out[i].bci != w[i].bci ||
		    out[i].status != w[i].status || out[i].ncand != w[i].ncand)
			fail_msg("max_states %u, event %zu: got %s bci %d %s/%u, want %s bci %d %s/%u",
				 max_states, i, got, out[i].bci,
				 jpb_flow_status_name(out[i].status), out[i].ncand, w[i].method,
				 w[i].bci, jpb_flow_status_name(w[i].status), w[i].ncand);
	}
	assert_int_equal(n, nw);
	flow_free(f);
}

#define SKIP_IF_NO_JAVAC(x) do { if (!(x)) skip(); } while (0)
#define CH JPB_FLOW_CHOSEN
#define CE JPB_FLOW_CERTAIN
#define DEC JPB_FLOW_DECODED
#define NW(a) (sizeof(a) / sizeof((a)[0]))

/* Compiled outer calls interpreted dispatch, whose t.call(id) is T1's or
 * T2's; the switch's aload_0 leaves 4 cases of T1 and 3 of T2, and the
 * callee runs g0's sipush.  With room for 4 states, T1's cases filled
 * the step and T2's were never added: sipush had no explanation (a
 * resynchronisation, then unknown events).  Now T1's and T2's first
 * two cases are kept, and the path through T2's case 0 is found; with
 * room for all, the same path. */
static void test_late_class_not_crowded_out(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_compiled(&x->s, OUTER_ID, 0);
	script_compiled(&x->s, OUTER_ID, 1);
	script_compiled(&x->s, OUTER_ID, 2);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0x1b, 0xb6, -1); /* dispatch */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1b, 0xaa, 0x2a, 0xb6, -1); /* call: iload_1, tableswitch, a case */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	/* g0's sipush and ireturn, call's and dispatch's ireturn */
	script_ops(&x->s, 0x11, 0xac, 0xac, 0xac, -1);
	script_compiled(&x->s, OUTER_ID, 5);
	static const struct want capped[] = {
		{ "Sw.outer", 0, DEC, 1 },       { "Sw.outer", 1, DEC, 1 },
		{ "Sw.outer", 2, DEC, 1 },       { "Sw.dispatch", 0, CE, 1 },
		{ "Sw.dispatch", 1, CE, 1 },     { "Sw.dispatch", 2, CE, 1 },
		{ "Sw$T2.call", 0, CH, 2 },      { "Sw$T2.call", 1, CH, 2 },
		{ "Sw$T2.call", 28, CH, 2 },     { "Sw$T2.call", 29, CH, 2 },
		{ "Sw$T2.g0", 0, CH, 2 },        { "Sw$T2.g0", 3, CH, 2 },
		{ "Sw$T2.call", 32, CH, 2 },     { "Sw.dispatch", 5, CH, 2 },
		{ "Sw.outer", 5, DEC, 1 },
	};
	check(x, 4, capped, NW(capped));
	static const struct want all[] = {
		{ "Sw.outer", 0, DEC, 1 },       { "Sw.outer", 1, DEC, 1 },
		{ "Sw.outer", 2, DEC, 1 },       { "Sw.dispatch", 0, CE, 1 },
		{ "Sw.dispatch", 1, CE, 1 },     { "Sw.dispatch", 2, CE, 1 },
		{ "Sw$T2.call", 0, CE, 1 },      { "Sw$T2.call", 1, CE, 1 },
		{ "Sw$T2.call", 28, CE, 1 },     { "Sw$T2.call", 29, CE, 1 },
		{ "Sw$T2.g0", 0, CE, 1 },        { "Sw$T2.g0", 3, CE, 1 },
		{ "Sw$T2.call", 32, CE, 1 },     { "Sw.dispatch", 5, CE, 1 },
		{ "Sw.outer", 5, DEC, 1 },
	};
	check(x, 256, all, NW(all));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_late_class_not_crowded_out),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
