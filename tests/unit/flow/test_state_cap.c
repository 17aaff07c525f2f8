// SPDX-License-Identifier: MIT
/*
 * The state cap (flow_opts.max_states) at a method entry, over real class
 * files compiled by javac at test time: when the candidate callees of the
 * states at an invoke are more than the cap, each state keeps its most
 * likely callee before any keeps a second (a state with one candidate is
 * not crowded out by a virtual call with many), and a state's candidates
 * rank by evidence (methods the trace has placed for sure), then in
 * class-hierarchy order.  The same after a switch: jython dispatches every
 * Python function through a virtual call_function(id) whose tableswitch
 * calls one method per case, so the states after the switch are the
 * candidate classes times their cases, and a class that loaded late must
 * not be crowded out by the cases of those before it.  RECONSTRUCTION.md,
 * "hot10 on jython at 0% loss".
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
#include "flow_expect.h"
#include "script_fixture.h"

static const char *cap_src =
	"public class Cap {\n"
	"    static abstract class Shape { abstract int get(); }\n"
	"    static class A extends Shape { int v; int get() { return v; } }\n"
	"    static class B extends Shape { int v; int get() { return v; } }\n"
	"    static class C extends Shape { int v; int get() { return v; } }\n"
	"    static final class Str { int n; int len() { return n * 2; } }\n"
	"    static int callGet(Shape s) { return s.get(); }\n"
	"    static int callLen(Str s) { return s.len(); }\n"
	"    static int outer(Shape s) { return callGet(s) + 1; }\n"
	"}\n";

/* javac makes both switches tableswitches (3 or more dense cases);
 * T1's functions return iconst_N, T2's g0 sipush, g1 and g2 ldc. */
static const char *sw_src =
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

/* K1.k starts with bipush, K2.k with aload_0; J1.j and J2.j both with
 * aload_0, then invokevirtual and getfield; Other.k is K2.k's twin outside
 * the hierarchies, which only a resynchronisation can reach */
static const char *first_src =
	"public class First {\n"
	"    static abstract class K { abstract int k(); }\n"
	"    static class K1 extends K { int k() { return 7; } }\n"
	"    static class K2 extends K { int v; int k() { return v; } }\n"
	"    static class Other { int v; int k() { return v; } }\n"
	"    static int callK(K s) { return s.k(); }\n"
	"    static abstract class J { abstract int j(); }\n"
	"    static class J1 extends J { int j() { return hashCode(); } }\n"
	"    static class J2 extends J { int v; int j() { return v; } }\n"
	"    static int callJ(J s) { return s.j(); }\n"
	"    static int twice(int a) {\n"
	"        if (a != 0) { if (a != 0) return a; }\n"
	"        return a;\n"
	"    }\n"
	"}\n";

#define OUTER_ID 0x7101u
#define BGET_ID 0x7102u
#define SW_OUTER_ID 0x7201u
#define CALLK_ID 0x7301u
#define CALLJ_ID 0x7302u
enum { CL_ENTRY = 1 };

static int setup_cap(void **state)
{
	static const char *const cls[] = { "Cap", "Cap$Shape", "Cap$A", "Cap$B", "Cap$C", "Cap$Str" };
	struct script_fx *x = script_fx_new(cap_src, cls, 6);
	*state = x;
	if (!x)
		return 0; /* no javac: every case skips */
	assert_int_equal(jprog_add_method_id(x->p, OUTER_ID, "LCap;", "outer",
					     "(LCap$Shape;)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, BGET_ID, "LCap$B;", "get", "()I"), 0);
	return 0;
}

static int setup_switch(void **state)
{
	/* T1 loads first: the hierarchy's candidate order */
	static const char *const cls[] = { "Sw", "Sw$Tab", "Sw$T1", "Sw$T2" };
	struct script_fx *x = script_fx_new(sw_src, cls, 4);
	*state = x;
	if (!x)
		return 0; /* no javac: every case skips */
	assert_int_equal(jprog_add_method_id(x->p, SW_OUTER_ID, "LSw;", "outer", "(LSw$Tab;)I"),
			 0);
	return 0;
}

static int setup_first(void **state)
{
	/* K1 loads first: the hierarchy's candidate order */
	static const char *const cls[] = { "First", "First$K", "First$K1", "First$K2",
					    "First$Other", "First$J", "First$J1", "First$J2" };
	struct script_fx *x = script_fx_new(first_src, cls, 8);
	*state = x;
	if (!x)
		return 0; /* no javac: every case skips */
	assert_int_equal(jprog_add_method_id(x->p, CALLK_ID, "LFirst;", "callK",
					     "(LFirst$K;)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, CALLJ_ID, "LFirst;", "callJ",
					     "(LFirst$J;)I"), 0);
	return 0;
}

/* Reconstruct x's events with at most MAX_STATES states per step and
 * compare with W, exactly. */
static void check(struct script_fx *x, unsigned max_states, const struct flow_want *w,
		  size_t nw)
{
	flow_expect_exact(x->p, &x->s, max_states, CL_ENTRY, w, nw);
}

#define SKIP_IF_NO_JAVAC(x) do { if (!(x)) skip(); } while (0)
#define CH JPB_FLOW_CHOSEN
#define CE JPB_FLOW_CERTAIN
#define DEC JPB_FLOW_DECODED
#define NW(a) (sizeof(a) / sizeof((a)[0]))

/* aload_0 invokevirtual, found by resynchronisation, is callGet or
 * callLen: callGet's call has three candidates (A, B, C.get), callLen's
 * one (Str.len), and the callee runs Str.len's body.  With room for two
 * states, callGet's first two candidates used to fill the step and
 * Str.len was never pushed: the trace then had no explanation (resync,
 * unknown events).  Each state's first candidate now goes in first. */
static void test_one_callee_not_crowded_out(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_ops(&x->s, 0x2a, 0xb6, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb4, 0x05, 0x68, 0xac, 0xac, -1); /* Str.len, callLen returns */
	static const struct flow_want w[] = {
		{ "Cap.callLen", 0, CH, 2 },   { "Cap.callLen", 1, CH, 2 },
		{ "Cap$Str.len", 0, CH, 2 },   { "Cap$Str.len", 1, CH, 2 },
		{ "Cap$Str.len", 4, CH, 2 },   { "Cap$Str.len", 5, CH, 2 },
		{ "Cap$Str.len", 6, CH, 2 },   { "Cap.callLen", 4, CH, 2 },
	};
	check(x, 2, w, NW(w));
	check(x, 256, w, NW(w));
}

/* Compiled B.get proves B.get three times; then compiled outer calls
 * interpreted callGet, whose getter is A, B or C.get (identical code).
 * With room for one state the cap keeps the candidate with evidence,
 * B.get, where it kept the first loaded, A.get; with room for all, the
 * choice rule picks B.get too (its path has the most evidence).  The
 * getter is never certain. */
static void test_cap_keeps_evidence(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_compiled(&x->s, BGET_ID, 0);
	script_compiled(&x->s, BGET_ID, 1);
	script_compiled(&x->s, BGET_ID, 4);
	script_compiled(&x->s, OUTER_ID, 0);
	script_compiled(&x->s, OUTER_ID, 1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb6, -1); /* callGet */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb4, 0xac, 0xac, -1); /* a getter, callGet returns */
	script_compiled(&x->s, OUTER_ID, 4);
	static const struct flow_want capped[] = {
		{ "Cap$B.get", 0, DEC, 1 },   { "Cap$B.get", 1, DEC, 1 },
		{ "Cap$B.get", 4, DEC, 1 },   { "Cap.outer", 0, DEC, 1 },
		{ "Cap.outer", 1, DEC, 1 },   { "Cap.callGet", 0, JPB_FLOW_CERTAIN, 1 },
		{ "Cap.callGet", 1, JPB_FLOW_CERTAIN, 1 },
		{ "Cap$B.get", 0, CH, 2 },    { "Cap$B.get", 1, CH, 2 },
		{ "Cap$B.get", 4, CH, 2 },    { "Cap.callGet", 4, CH, 2 },
		{ "Cap.outer", 4, DEC, 1 },
	};
	check(x, 1, capped, NW(capped));
	static const struct flow_want all[] = {
		{ "Cap$B.get", 0, DEC, 1 },   { "Cap$B.get", 1, DEC, 1 },
		{ "Cap$B.get", 4, DEC, 1 },   { "Cap.outer", 0, DEC, 1 },
		{ "Cap.outer", 1, DEC, 1 },   { "Cap.callGet", 0, JPB_FLOW_CERTAIN, 1 },
		{ "Cap.callGet", 1, JPB_FLOW_CERTAIN, 1 },
		{ "Cap$B.get", 0, CH, 3 },    { "Cap$B.get", 1, CH, 3 },
		{ "Cap$B.get", 4, CH, 3 },    { "Cap.callGet", 4, JPB_FLOW_CERTAIN, 1 },
		{ "Cap.outer", 4, DEC, 1 },
	};
	check(x, 256, all, NW(all));
}

/* Compiled outer calls interpreted dispatch, whose t.call(id) is T1's or
 * T2's; the switch's aload_0 leaves 4 cases of T1 and 3 of T2, and the
 * callee runs g0's sipush.  With room for 4 states, T1's cases filled
 * the step and T2's were never added: sipush had no explanation (a
 * resynchronisation, then unknown events).  Now T1's and T2's first
 * two cases are kept, and the path through T2's case 0 is found; with
 * room for all, the same path. */
static void test_late_class_not_crowded_out(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_compiled(&x->s, SW_OUTER_ID, 0);
	script_compiled(&x->s, SW_OUTER_ID, 1);
	script_compiled(&x->s, SW_OUTER_ID, 2);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0x1b, 0xb6, -1); /* dispatch */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1b, 0xaa, 0x2a, 0xb6, -1); /* call: iload_1, tableswitch, a case */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	/* g0's sipush and ireturn, call's and dispatch's ireturn */
	script_ops(&x->s, 0x11, 0xac, 0xac, 0xac, -1);
	script_compiled(&x->s, SW_OUTER_ID, 5);
	static const struct flow_want capped[] = {
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
	static const struct flow_want all[] = {
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

/* Compiled CALLER (jmethodID ID) calls an interpreted getter at bci 1,
 * which runs aload_0, getfield, ireturn: CALLEE, the one state, certain,
 * with room for one state or for all. */
static void check_getter_call(struct script_fx *x, uint64_t id, const char *caller,
			      const char *callee)
{
	x->s.n = 0;
	script_compiled(&x->s, id, 0);
	script_compiled(&x->s, id, 1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb4, 0xac, -1);
	script_compiled(&x->s, id, 4);
	const struct flow_want w[] = {
		{ caller, 0, DEC, 1 }, { caller, 1, DEC, 1 }, { callee, 0, CE, 1 },
		{ callee, 1, CE, 1 },  { callee, 4, CE, 1 },  { caller, 4, DEC, 1 },
	};
	check(x, 1, w, NW(w));
	check(x, 256, w, NW(w));
}

/* Compiled callK calls interpreted K1.k or K2.k, and the callee runs
 * K2.k.  With room for one state, K1.k (first in hierarchy order) took it
 * and died at aload_0, and a resynchronisation placed the callee in K2.k
 * or its twin Other.k.  A callee whose first instruction is not the next
 * event's opcode is no longer staged. */
static void test_first_instruction_filters(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	check_getter_call(x, CALLK_ID, "First.callK", "First$K2.k");
}

/* The same a few opcodes in: J1.j and J2.j both start with aload_0, and
 * the callee runs J2.j.  With room for one state, J1.j took it and died
 * at getfield, and a resynchronisation placed getfield in J2.j, K2.k or
 * Other.k.  The lookahead's opcodes (flow_opts.lookahead) filter the
 * callees at their entry. */
static void test_lookahead_filters(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	check_getter_call(x, CALLJ_ID, "First.callJ", "First$J2.j");
}

/* A step whose staged states exceed the cap but fit once merged keeps
 * them all, in staging order, as without a cap.  twice(a) is iload_0,
 * ifeq 10, iload_0, ifeq 10, iload_0, ireturn, then 10: iload_0, ireturn.
 * The thread starts lost and runs iload_0, ifeq, iload_0, ireturn: a
 * resynchronisation leaves bcis 0 and 4, the ifeqs 1 and 5, and iload_0
 * stages 4 and 10 from 1, 8 and 10 from 5: four states, three once the
 * two 10s merge.  With room for three they are added by rank first (4,
 * 8, 10), found to fit, and added again as staged (4, 10, 8): the path
 * chosen at the end (by order among equals) is the same as with room
 * for all. */
static void test_fits_after_merging(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_ops(&x->s, 0x1a, 0x99, 0x1a, 0xac, -1);
	static const struct flow_want w[] = {
		{ "First.twice", 0, CH, 2 },  { "First.twice", 1, CH, 2 },
		{ "First.twice", 10, CH, 2 }, { "First.twice", 11, CH, 2 },
	};
	check(x, 3, w, NW(w));
	check(x, 256, w, NW(w));
}

int main(void)
{
	const struct CMUnitTest at_entry[] = {
		cmocka_unit_test(test_one_callee_not_crowded_out),
		cmocka_unit_test(test_cap_keeps_evidence),
	};
	const struct CMUnitTest after_switch[] = {
		cmocka_unit_test(test_late_class_not_crowded_out),
	};
	const struct CMUnitTest first[] = {
		cmocka_unit_test(test_first_instruction_filters),
		cmocka_unit_test(test_lookahead_filters),
		cmocka_unit_test(test_fits_after_merging),
	};
	int failed = cmocka_run_group_tests_name("at a method entry", at_entry,
						 setup_cap, script_fx_teardown);
	failed |= cmocka_run_group_tests_name("after a switch", after_switch,
					      setup_switch, script_fx_teardown);
	return failed | cmocka_run_group_tests_name("the callee's first instruction", first,
						    setup_first, script_fx_teardown);
}
