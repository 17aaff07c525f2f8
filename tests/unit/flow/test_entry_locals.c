// SPDX-License-Identifier: MIT
/*
 * The locals count of a method entry (entry_locals, RECONSTRUCTION.md
 * "The locals of a method entry"), over real class files compiled by
 * javac at test time.  HotSpot's zerolocals entry zeroes the entered
 * method's non-parameter locals in a loop whose iterations the decoder
 * counts; two getters with the same code but a different max_locals are
 * then told apart where the opcodes cannot.
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
#include "java_fixture.h"

/* A.get and B.get are aload_0 getfield ireturn both; javac gives B's
 * unused local a slot (max_locals 2: n = 1), A has none (n = 0).  call
 * is static with one parameter: n = 0. */
static const char *loc_src =
	"public class Loc {\n"
	"    static abstract class S { abstract int get(); }\n"
	"    static class A extends S { int v; int get() { return v; } }\n"
	"    static class B extends S { int v; int get() { int u; return v; } }\n"
	"    static int call(S s) { return s.get(); }\n"
	"    static int outer(S s) { return call(s) + 1; }\n"
	"}\n";

#define OUTER_ID 0x7301u
/* call's entry, and the getter's (whose kind each case sets) */
enum { CL_ENTRY = 1, CL_GET = 2 };

#define ZEROLOCALS "method entry point (kind = zerolocals)"
#define NATIVE "method entry point (kind = native)"

struct fx {
	struct jprog *p;
	struct event_script s;
};

static int setup(void **state)
{
	char dir[512];
	if (java_fixture_compile("Loc", loc_src, dir, sizeof(dir))) {
		*state = NULL; /* no javac: every case skips */
		return 0;
	}
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(jprog_alloc(&x->p), 0);
	/* A loads before B: the hierarchy's candidate order */
	static const char *cls[] = { "Loc", "Loc$S", "Loc$A", "Loc$B" };
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(java_fixture_load(x->p, dir, cls[i]), 0);
	assert_int_equal(jprog_add_method_id(x->p, OUTER_ID, "LLoc;", "outer", "(LLoc$S;)I"), 0);
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

#define SKIP_IF_NO_JAVAC(x) do { if (!(x)) skip(); } while (0)
#define CH JPB_FLOW_CHOSEN
#define CE JPB_FLOW_CERTAIN
#define DEC JPB_FLOW_DECODED
#define NW(a) (sizeof(a) / sizeof((a)[0]))

/* Compiled outer calls interpreted call (entry CALL_LOCALS), whose
 * s.get() enters a getter (entry GET_LOCALS); the getter and call
 * return into outer. */
static void script(struct fx *x, uint32_t call_locals, uint32_t get_locals)
{
	x->s.n = 0;
	script_compiled(&x->s, OUTER_ID, 0);
	script_compiled(&x->s, OUTER_ID, 1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	x->s.ev[x->s.n - 1].entry_locals = call_locals;
	script_ops(&x->s, 0x2a, 0xb6, -1); /* call */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_GET);
	x->s.ev[x->s.n - 1].entry_locals = get_locals;
	script_ops(&x->s, 0x2a, 0xb4, 0xac, 0xac, -1); /* a getter, call returns */
	script_compiled(&x->s, OUTER_ID, 4);
}

/* The flow with getter GET (status GS, GN candidates), call's return
 * RS/RN. */
#define FLOW(name, get, gs, gn, rs, rn)                                           \
	const struct flow_want name[] = {                                         \
		{ "Loc.outer", 0, DEC, 1 }, { "Loc.outer", 1, DEC, 1 },           \
		{ "Loc.call", 0, CE, 1 },   { "Loc.call", 1, CE, 1 },             \
		{ get, 0, gs, gn },         { get, 1, gs, gn },                   \
		{ get, 4, gs, gn },         { "Loc.call", 4, rs, rn },            \
		{ "Loc.outer", 4, DEC, 1 },                                       \
	}

/* Reconstruct with the getter's entry of kind GET_DESC and at most CAP
 * states per step, and compare with W. */
static void run(struct fx *x, const char *get_desc, unsigned cap, const struct flow_want *w,
		size_t nw, struct flow_summary *sum)
{
	const char *const desc[] = { ZEROLOCALS, get_desc, NULL };
	flow_expect_exact_desc(x->p, &x->s, cap, CL_ENTRY, desc, sum, w, nw);
}

/* Without entry_locals the getters cannot be told apart: A.get, the
 * first loaded, is chosen among 2.  With one state per step the cap
 * drops B.get, so call's return is chosen too (RECONSTRUCTION.md, "When
 * an event is certain", 2). */
static void test_unknown_locals_chosen(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	struct flow_summary sum;
	script(x, 0, 0);
	FLOW(w, "Loc$A.get", CH, 2, CE, 1);
	run(x, ZEROLOCALS, 256, w, NW(w), &sum);
	assert_int_equal(sum.entries_narrowed, 0);
	assert_int_equal(sum.entries_mismatched, 0);
	FLOW(capped, "Loc$A.get", CH, 2, CH, 2);
	run(x, ZEROLOCALS, 1, capped, NW(capped), &sum);
}

/* n = 0: A.get alone fits, certain; with one state per step too (the
 * filter runs before the cap, which then drops nothing). */
static void test_locals_pick_a(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	struct flow_summary sum;
	script(x, 1, 1);
	FLOW(w, "Loc$A.get", CE, 1, CE, 1);
	for (unsigned cap = 1; cap <= 256; cap *= 256) {
		run(x, ZEROLOCALS, cap, w, NW(w), &sum);
		assert_int_equal(sum.entries_narrowed, 1);
		assert_int_equal(sum.entries_mismatched, 0);
	}
}

/* n = 1: B.get, the second candidate, certain; the same when call's
 * count is unknown. */
static void test_locals_pick_b(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	struct flow_summary sum;
	FLOW(w, "Loc$B.get", CE, 1, CE, 1);
	for (uint32_t call = 0; call <= 1; call++) {
		script(x, call, 2);
		for (unsigned cap = 1; cap <= 256; cap *= 256) {
			run(x, ZEROLOCALS, cap, w, NW(w), &sum);
			assert_int_equal(sum.entries_narrowed, 1);
			assert_int_equal(sum.entries_mismatched, 0);
		}
	}
}

/* n = 3 fits no candidate: both are kept, as without a count, and the
 * disagreement is counted.  A count that fits no callee of call's entry
 * (n = 2, call has 0) keeps call, and the getter's count still picks
 * B.get. */
static void test_locals_mismatch_keeps_all(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	struct flow_summary sum;
	script(x, 1, 4);
	FLOW(w, "Loc$A.get", CH, 2, CE, 1);
	run(x, ZEROLOCALS, 256, w, NW(w), &sum);
	assert_int_equal(sum.entries_narrowed, 0);
	assert_int_equal(sum.entries_mismatched, 1);
	script(x, 3, 2);
	FLOW(wb, "Loc$B.get", CE, 1, CE, 1);
	run(x, ZEROLOCALS, 256, wb, NW(wb), &sum);
	assert_int_equal(sum.entries_narrowed, 1);
	assert_int_equal(sum.entries_mismatched, 1);
}

/* The count is only read at a zerolocals entry.  An entry of another
 * kind that runs bytecode (here HotSpot's name of an accessor entry) is
 * not filtered.  A native entry runs no bytecode whatever it says:
 * call's invoke falls through, its ireturn does not explain aload_0, and
 * the getter is found by resynchronisation (A.get and B.get, the only
 * code that runs aload_0 getfield ireturn ireturn), the same flow with
 * and without the count. */
static void test_other_entries_not_filtered(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	struct flow_summary sum;
	FLOW(w, "Loc$A.get", CH, 2, CE, 1);
	for (uint32_t l = 0; l <= 2; l += 2) {
		script(x, 1, l);
		run(x, "method entry point (kind = accessor)", 256, w, NW(w), &sum);
		assert_int_equal(sum.entries_narrowed, 0);
		run(x, NATIVE, 256, w, NW(w), &sum);
		assert_int_equal(sum.entries_narrowed, 0);
		assert_int_equal(sum.entries_mismatched, 0);
	}
}

/* After a gap, a method entry whose callee is unknown (no state to call
 * it from): the callee is found by resynchronisation at a method's first
 * instruction, among the methods whose locals the entry zeroed.  aload_0
 * getfield ireturn starts A.get and B.get: chosen among 2 without a
 * count, the one that fits with it (certain: the search covered the
 * whole program and left one); a count that fits neither keeps both. */
static void test_resync_at_entry(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	struct flow_summary sum;
	static const struct { uint32_t locals; const char *get; uint8_t st; uint16_t nc;
			      uint64_t mismatched; } c[] = {
		{ 0, "Loc$A.get", CH, 2, 0 }, { 1, "Loc$A.get", CE, 1, 0 },
		{ 2, "Loc$B.get", CE, 1, 0 }, { 5, "Loc$A.get", CH, 2, 1 },
	};
	for (size_t k = 0; k < NW(c); k++) {
		x->s.n = 0;
		script_add(&x->s, JPB_DEV_GAP);
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_GET);
		x->s.ev[x->s.n - 1].entry_locals = c[k].locals;
		script_ops(&x->s, 0x2a, 0xb4, 0xac, 0xac, -1); /* a getter, call returns */
		const struct flow_want w[] = {
			{ c[k].get, 0, c[k].st, c[k].nc }, { c[k].get, 1, c[k].st, c[k].nc },
			{ c[k].get, 4, c[k].st, c[k].nc }, { "Loc.call", 4, CE, 1 },
		};
		run(x, ZEROLOCALS, 256, w, NW(w), &sum);
		assert_int_equal(sum.entries_narrowed, 0); /* no candidates at the entry */
		assert_int_equal(sum.entries_mismatched, c[k].mismatched);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_locals_chosen),
		cmocka_unit_test(test_locals_pick_a),
		cmocka_unit_test(test_locals_pick_b),
		cmocka_unit_test(test_locals_mismatch_keeps_all),
		cmocka_unit_test(test_other_entries_not_filtered),
		cmocka_unit_test(test_resync_at_entry),
	};
	return cmocka_run_group_tests_name("entry locals", tests, setup, teardown);
}
