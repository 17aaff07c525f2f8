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
#include "script_fixture.h"

/* A.get and B.get are aload_0 getfield ireturn both; javac gives B's
 * unused local a slot (max_locals 2: n = 1), A has none (n = 0).  call
 * is static with one parameter: n = 0.  P.one and Q.two are getstatic
 * ireturn both, n = 0 and 1; pick's two branches call them with the
 * same opcodes (invokestatic, ireturn).  C.get and D.get differ only in
 * D's synchronized, which HotSpot enters by zerolocals_synchronized. */
static const char *loc_src =
	"public class Loc {\n"
	"    static abstract class S { abstract int get(); }\n"
	"    static class A extends S { int v; int get() { return v; } }\n"
	"    static class B extends S { int v; int get() { int u; return v; } }\n"
	"    static class P { static int f; static int one() { return f; } }\n"
	"    static class Q { static int g; static int two() { int u; return g; } }\n"
	"    static int call(S s) { return s.get(); }\n"
	"    static int outer(S s) { return call(s) + 1; }\n"
	"    static int pick(boolean b) { if (b) return P.one(); return Q.two(); }\n"
	"    static int outer2(boolean b) { return pick(b) + 1; }\n"
	"    static abstract class T { abstract int get(); }\n"
	"    static class C extends T { int v; int get() { return v; } }\n"
	"    static class D extends T { int v; synchronized int get() { return v; } }\n"
	"    static int callT(T t) { return t.get(); }\n"
	"    static int outer3(T t) { return callT(t) + 1; }\n"
	"}\n";

#define OUTER_ID 0x7301u
#define OUTER2_ID 0x7302u
#define OUTER3_ID 0x7303u
/* call's entry, and the getter's (whose kind each case sets) */
enum { CL_ENTRY = 1, CL_GET = 2 };

#define ZEROLOCALS "method entry point (kind = zerolocals)"
#define NATIVE "method entry point (kind = native)"

static int setup(void **state)
{
	/* A loads before B: the hierarchy's candidate order */
	static const char *const cls[] = { "Loc",   "Loc$S", "Loc$A", "Loc$B", "Loc$P",
					   "Loc$Q", "Loc$T", "Loc$C", "Loc$D" };
	struct script_fx *x = script_fx_new(loc_src, cls, 9);
	*state = x;
	if (!x)
		return 0; /* no javac: every case skips */
	assert_int_equal(jprog_add_method_id(x->p, OUTER_ID, "LLoc;", "outer", "(LLoc$S;)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, OUTER2_ID, "LLoc;", "outer2", "(Z)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, OUTER3_ID, "LLoc;", "outer3", "(LLoc$T;)I"), 0);
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
static void script(struct script_fx *x, uint32_t call_locals, uint32_t get_locals)
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
static void run(struct script_fx *x, const char *get_desc, unsigned cap, const struct flow_want *w,
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
	struct script_fx *x = *state;
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
	struct script_fx *x = *state;
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
	struct script_fx *x = *state;
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
	struct script_fx *x = *state;
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
	struct script_fx *x = *state;
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
 * instruction, among the methods the entry fits.  aload_0 getfield
 * ireturn starts A.get, B.get, C.get and D.get; D.get is synchronized,
 * so a zerolocals entry leaves A.get, B.get and C.get without a count
 * (chosen among 3); n = 0 leaves A.get and C.get (B.get has n = 1); n = 1
 * B.get alone (certain: the search covered the whole program and left
 * one); a count that fits none keeps all four.  The getter returns into call, or into callT for C.get and
 * D.get: chosen among 2 unless B.get alone is left. */
static void test_resync_at_entry(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	struct flow_summary sum;
	static const struct { uint32_t locals; const char *get; uint8_t st; uint16_t nc;
			      uint8_t rst; uint16_t rnc; uint64_t mismatched; } c[] = {
		{ 0, "Loc$A.get", CH, 3, CH, 2, 0 }, { 1, "Loc$A.get", CH, 2, CH, 2, 0 },
		{ 2, "Loc$B.get", CE, 1, CE, 1, 0 }, { 5, "Loc$A.get", CH, 4, CH, 2, 1 },
	};
	for (size_t k = 0; k < NW(c); k++) {
		x->s.n = 0;
		script_add(&x->s, JPB_DEV_GAP);
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_GET);
		x->s.ev[x->s.n - 1].entry_locals = c[k].locals;
		script_ops(&x->s, 0x2a, 0xb4, 0xac, 0xac, -1); /* a getter, call returns */
		const struct flow_want w[] = {
			{ c[k].get, 0, c[k].st, c[k].nc }, { c[k].get, 1, c[k].st, c[k].nc },
			{ c[k].get, 4, c[k].st, c[k].nc }, { "Loc.call", 4, c[k].rst, c[k].rnc },
		};
		run(x, ZEROLOCALS, 256, w, NW(w), &sum);
		assert_int_equal(sum.entries_narrowed, 0); /* no candidates at the entry */
		assert_int_equal(sum.entries_mismatched, c[k].mismatched);
	}
}

/* Compiled outer2 calls interpreted pick, whose two branches call P.one
 * or Q.two with the same opcodes: two states at the callee's entry, one
 * candidate each.  Without a count both stay (chosen among 2 up to
 * outer2's return).  With one, the state whose callee does not fit dies
 * like any path the trace contradicts, and the other is certain: the
 * fallback keeps all only when no state fits (n = 4). */
static void test_locals_choose_branch(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	static const struct { uint32_t locals; const char *callee; int32_t at;
			      uint8_t st; uint16_t nc; uint64_t narrowed, mismatched; } c[] = {
		{ 0, "Loc$P.one", 4, CH, 2, 0, 0 }, { 1, "Loc$P.one", 4, CE, 1, 1, 0 },
		{ 2, "Loc$Q.two", 8, CE, 1, 1, 0 }, { 5, "Loc$P.one", 4, CH, 2, 0, 1 },
	};
	for (size_t k = 0; k < NW(c); k++) {
		struct flow_summary sum;
		x->s.n = 0;
		script_compiled(&x->s, OUTER2_ID, 0);
		script_compiled(&x->s, OUTER2_ID, 1);
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
		x->s.ev[x->s.n - 1].entry_locals = 1; /* pick: n = 0 */
		script_ops(&x->s, 0x1a, 0x99, 0xb8, -1); /* iload_0 ifeq invokestatic */
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_GET);
		x->s.ev[x->s.n - 1].entry_locals = c[k].locals;
		script_ops(&x->s, 0xb2, 0xac, 0xac, -1); /* the callee, pick returns */
		script_compiled(&x->s, OUTER2_ID, 4);
		const struct flow_want w[] = {
			{ "Loc.outer2", 0, DEC, 1 },
			{ "Loc.outer2", 1, DEC, 1 },
			{ "Loc.pick", 0, CE, 1 },
			{ "Loc.pick", 1, CE, 1 },
			{ "Loc.pick", c[k].at, c[k].st, c[k].nc },
			{ c[k].callee, 0, c[k].st, c[k].nc },
			{ c[k].callee, 3, c[k].st, c[k].nc },
			{ "Loc.pick", c[k].at + 3, c[k].st, c[k].nc },
			{ "Loc.outer2", 4, DEC, 1 },
		};
		run(x, ZEROLOCALS, 256, w, NW(w), &sum);
		assert_int_equal(sum.entries_narrowed, c[k].narrowed);
		assert_int_equal(sum.entries_mismatched, c[k].mismatched);
	}
}

/* C.get and D.get have the same opcodes and locals (n = 0); D.get is
 * synchronized.  The entry's kind tells them apart, with or without a
 * count (an interrupt may cut the loop): zerolocals enters C.get,
 * zerolocals_synchronized D.get. */
static void test_synchronized_entry(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	static const struct { const char *desc; uint32_t locals; const char *get;
			      uint8_t st; uint16_t nc; } c[] = {
		{ ZEROLOCALS, 0, "Loc$C.get", CE, 1 },
		{ ZEROLOCALS, 1, "Loc$C.get", CE, 1 },
		{ "method entry point (kind = zerolocals_synchronized)", 0, "Loc$D.get", CE, 1 },
		{ "method entry point (kind = zerolocals_synchronized)", 1, "Loc$D.get", CE, 1 },
	};
	for (size_t k = 0; k < NW(c); k++) {
		struct flow_summary sum;
		x->s.n = 0;
		script_compiled(&x->s, OUTER3_ID, 0);
		script_compiled(&x->s, OUTER3_ID, 1);
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
		script_ops(&x->s, 0x2a, 0xb6, -1); /* callT */
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_GET);
		x->s.ev[x->s.n - 1].entry_locals = c[k].locals;
		script_ops(&x->s, 0x2a, 0xb4, 0xac, 0xac, -1); /* a getter, callT returns */
		script_compiled(&x->s, OUTER3_ID, 4);
		const struct flow_want w[] = {
			{ "Loc.outer3", 0, DEC, 1 }, { "Loc.outer3", 1, DEC, 1 },
			{ "Loc.callT", 0, CE, 1 },   { "Loc.callT", 1, CE, 1 },
			{ c[k].get, 0, c[k].st, c[k].nc }, { c[k].get, 1, c[k].st, c[k].nc },
			{ c[k].get, 4, c[k].st, c[k].nc }, { "Loc.callT", 4, CE, 1 },
			{ "Loc.outer3", 4, DEC, 1 },
		};
		run(x, c[k].desc, 256, w, NW(w), &sum);
		assert_int_equal(sum.entries_narrowed, 1); /* the kind drops a twin */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_locals_chosen),
		cmocka_unit_test(test_locals_pick_a),
		cmocka_unit_test(test_locals_pick_b),
		cmocka_unit_test(test_locals_mismatch_keeps_all),
		cmocka_unit_test(test_locals_choose_branch),
		cmocka_unit_test(test_synchronized_entry),
		cmocka_unit_test(test_other_entries_not_filtered),
		cmocka_unit_test(test_resync_at_entry),
	};
	return cmocka_run_group_tests_name("entry locals", tests, setup, script_fx_teardown);
}
