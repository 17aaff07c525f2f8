// SPDX-License-Identifier: MIT
/*
 * Reconstruction on hand-built decoded event sequences over real class
 * files compiled by javac at test time (a thread's first position is
 * found by resynchronisation: certain when the whole program's search
 * left one position, else chosen until a compiled pin): a straight-line
 * method, a loop
 * whose exit branch is inferred, identical getters behind a virtual call
 * (ambiguous: chosen among 2), an exception unwinding two frames, and a
 * compiled anchor that pins an ambiguous interpreted run, identical bodies
 * after a resynchronisation, a state-cap overflow; recovery of a
 * loop iteration, of recursion across a gap and of a loop whose exit is
 * lost (the shortest-path fallback).  Each case checks the exact
 * (method, bci, status) sequence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "flow/flow.h"
#include "event_script.h"
#include "java_fixture.h"

static const char *src =
	"public class Cases {\n"
	"    static int straight(int a, int b) { int c = a + b; return c * 2; }\n"
	"    static int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }\n"
	"    static abstract class Shape { abstract int get(); }\n"
	"    static class A extends Shape { int v; int get() { return v; } }\n"
	"    static class B extends Shape { int v; int get() { return v; } }\n"
	"    static int callGet(Shape s) { return s.get(); }\n"
	"    static int thrower(int x) { if (x > 0) throw new IllegalStateException(); return x; }\n"
	"    static int middle(int x) { return thrower(x) + 1; }\n"
	"    static int catcher(int x) { try { return middle(x); } catch (IllegalStateException e) { return -1; } }\n"
	"    static int compiledCallee(int x) { return x + 1; }\n"
	"    static int anchored(int x) { int y = compiledCallee(x); return y * 3; }\n"
	"    static int fact(int n) { if (n <= 1) return 1; return n * fact(n - 1); }\n"
	"    static int sumFact(int n) { int s = 0; for (int i = 0; i < 3; i++) s += fact(n); return s; }\n"
	"    static int callLoop(int n) { return loop(n) * 7; }\n"
	"    static class P { static int twin(int a) { return a * 3 + 1; } }\n"
	"    static class Q { static int twin(int a) { return a * 3 + 1; } }\n"
	"    static int viaP(int a) { int r = P.twin(a); return r - 7; }\n"
	"    static int viaQ(int a) { int r = Q.twin(a); return r * 5; }\n"
	"    static int outer(Shape s) { return callGet(s) + 1; }\n"
	"}\n";

#define CALLEE_ID 0x7001u
#define ANCHORED_ID 0x7002u
#define OUTER_ID 0x7003u
#define CALLGET_ID 0x7004u
#define AGET_ID 0x7005u
enum { CL_ENTRY = 1, CL_EXC = 2 };

struct fx {
	struct jprog *p;
	struct flow *f;
	struct event_script s;
};

static int setup(void **state)
{
	static const char *const cls[] = { "Cases", "Cases$Shape", "Cases$A", "Cases$B",
					   "Cases$P", "Cases$Q" };
	struct jprog *p = java_fixture_program(src, cls, 6);
	*state = NULL;
	if (!p)
		return 0; /* no javac: every case skips */
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->p = p;
	assert_int_equal(jprog_add_method_id(x->p, CALLEE_ID, "LCases;",
					     "compiledCallee", "(I)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, ANCHORED_ID, "LCases;",
					     "anchored", "(I)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, OUTER_ID, "LCases;",
					     "outer", "(LCases$Shape;)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, CALLGET_ID, "LCases;",
					     "callGet", "(LCases$Shape;)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, AGET_ID, "LCases$A;", "get", "()I"), 0);
	assert_int_equal(flow_alloc(&x->f, x->p, NULL), 0);
	assert_int_equal(flow_set_codelet(x->f, CL_ENTRY, "zerolocals"), 0);
	assert_int_equal(flow_set_codelet(x->f, CL_EXC, "exception_continuation"), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	if (x) {
		flow_free(x->f);
		jprog_free(x->p);
		script_fini(&x->s);
		free(x);
	}
	return 0;
}

struct want {
	const char *method; /* name; "A|B" accepts either */
	int32_t bci;
	uint8_t status;
	uint16_t ncand;
};

/* "X|Y" accepts X or Y; "A|B" stands for Cases$A.get|Cases$B.get. */
static int name_matches(const char *want, const char *got)
{
	if (!strcmp(want, "A|B"))
		want = "Cases$A.get|Cases$B.get";
	const char *bar = strchr(want, '|');
	if (!bar)
		return !strcmp(got, want);
	size_t l = (size_t)(bar - want);
	return (strlen(got) == l && !strncmp(got, want, l)) || !strcmp(got, bar + 1);
}

static void check_flow(struct fx *x, struct flow *fl, const struct want *w,
		       size_t nw)
{
	const struct jpb_flow_event *out;
	size_t n;
	struct flow_summary s;
	assert_int_equal(flow_thread(fl, x->s.ev, x->s.n, &out, &n, &s), 0);
	for (size_t i = 0; i < n && i < nw; i++) {
		struct flow_method_info m = flow_method(fl, out[i].method);
		char got[160];
		snprintf(got, sizeof(got), "%s.%s", m.name ? m.class_name : "?",
			 m.name ? m.name : "?");
		int name_ok = name_matches(w[i].method, got);
		if (!name_ok || out[i].bci != w[i].bci || out[i].status != w[i].status ||
		    out[i].ncand != w[i].ncand)
			fail_msg("event %zu: got %s bci %d %s/%u, want %s bci %d %s/%u", i,
				 got, out[i].bci, jpb_flow_status_name(out[i].status),
				 out[i].ncand, w[i].method, w[i].bci,
				 jpb_flow_status_name(w[i].status), w[i].ncand);
	}
	assert_int_equal(n, nw);
	assert_int_equal(s.events, nw);
}

static void check(struct fx *x, const struct want *w, size_t nw)
{
	check_flow(x, x->f, w, nw);
}

#define SKIP_IF_NO_JAVAC(x) do { if (!(x)) skip(); } while (0)
#define C JPB_FLOW_CERTAIN
#define CH JPB_FLOW_CHOSEN
#define DEC JPB_FLOW_DECODED
#define NW(a) (sizeof(a) / sizeof((a)[0]))

static void test_straight(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x1b, 0x60, 0x3d, 0x1c, 0x05, 0x68, 0xac, -1);
	static const struct want w[] = {
		{ "Cases.straight", 0, C, 1 }, { "Cases.straight", 1, C, 1 },
		{ "Cases.straight", 2, C, 1 }, { "Cases.straight", 3, C, 1 },
		{ "Cases.straight", 4, C, 1 }, { "Cases.straight", 5, C, 1 },
		{ "Cases.straight", 6, C, 1 }, { "Cases.straight", 7, C, 1 },
	};
	check(x, w, NW(w));
}

static void test_loop_exit(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	/* loop(1): one iteration, then the exit: both start with iload_1. */
	script_ops(&x->s, 0x03, 0x3c, 0x03, 0x3d, 0x1c, 0x1a, 0xa2, /* init, test */
	    0x1b, 0x1c, 0x60, 0x3c, 0x84, 0xa7,           /* body */
	    0x1c, 0x1a, 0xa2, 0x1b, 0xac, -1);            /* test, exit */
	static const struct want w[] = {
		{ "Cases.loop", 0, C, 1 }, { "Cases.loop", 1, C, 1 },
		{ "Cases.loop", 2, C, 1 }, { "Cases.loop", 3, C, 1 },
		{ "Cases.loop", 4, C, 1 }, { "Cases.loop", 5, C, 1 },
		{ "Cases.loop", 6, C, 1 }, { "Cases.loop", 9, C, 1 },
		{ "Cases.loop", 10, C, 1 }, { "Cases.loop", 11, C, 1 },
		{ "Cases.loop", 12, C, 1 }, { "Cases.loop", 13, C, 1 },
		{ "Cases.loop", 16, C, 1 }, { "Cases.loop", 4, C, 1 },
		{ "Cases.loop", 5, C, 1 }, { "Cases.loop", 6, C, 1 },
		{ "Cases.loop", 19, C, 1 }, { "Cases.loop", 20, C, 1 },
	};
	check(x, w, NW(w));
}

static void test_identical_getters(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb6, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb4, 0xac, 0xac, -1);
	static const struct want w[] = {
		{ "Cases.callGet", 0, C, 1 }, { "Cases.callGet", 1, C, 1 },
		{ "A|B", 0, CH, 2 }, { "A|B", 1, CH, 2 }, { "A|B", 4, CH, 2 },
		{ "Cases.callGet", 4, C, 1 },
	};
	check(x, w, NW(w));
}

static void test_exception_two_frames(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0xb8, -1); /* catcher */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0xb8, -1); /* middle */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x9e, 0xbb, 0x59, 0xb7, -1); /* thrower */
	/* IllegalStateException.<init> runs outside the traced code. */
	script_transition(&x->s, JPB_TR_DISABLED, 0);
	script_transition(&x->s, JPB_TR_ENABLED, 0);
	script_ops(&x->s, 0xbf, -1);
	script_transition(&x->s, JPB_TR_DISABLED, 0);
	script_transition(&x->s, JPB_TR_ENABLED, 0);
	script_transition(&x->s, JPB_TR_INTERP_STUB, CL_EXC);
	script_ops(&x->s, 0x4c, 0x02, 0xac, -1); /* catcher's handler */
	static const struct want w[] = {
		{ "Cases.catcher", 0, CH, 2 }, { "Cases.catcher", 1, CH, 2 },
		{ "Cases.middle", 0, CH, 2 }, { "Cases.middle", 1, CH, 2 },
		{ "Cases.thrower", 0, CH, 2 }, { "Cases.thrower", 1, CH, 2 },
		{ "Cases.thrower", 4, CH, 2 }, { "Cases.thrower", 7, CH, 2 },
		{ "Cases.thrower", 8, CH, 2 }, { "Cases.thrower", 11, CH, 2 },
		{ "Cases.catcher", 5, CH, 2 }, { "Cases.catcher", 6, CH, 2 },
		{ "Cases.catcher", 7, CH, 2 },
	};
	check(x, w, NW(w));
}

static void test_compiled_anchor(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	/* No entry seen: iload_0 invokestatic fits middle, catcher and
	 * anchored; only anchored calls the compiled method that follows. */
	script_ops(&x->s, 0x1a, 0xb8, -1);
	script_transition(&x->s, JPB_TR_STUB, 1);
	script_compiled(&x->s, CALLEE_ID, 0);
	script_compiled(&x->s, CALLEE_ID, 1);
	script_compiled(&x->s, CALLEE_ID, 2);
	script_compiled(&x->s, CALLEE_ID, 3);
	script_ops(&x->s, 0x3c, 0x1b, 0x06, 0x68, 0xac, -1);
	static const struct want w[] = {
		{ "Cases.anchored", 0, CH, 2 }, { "Cases.anchored", 1, CH, 2 },
		{ "Cases.compiledCallee", 0, DEC, 1 }, { "Cases.compiledCallee", 1, DEC, 1 },
		{ "Cases.compiledCallee", 2, DEC, 1 }, { "Cases.compiledCallee", 3, DEC, 1 },
		{ "Cases.anchored", 4, CH, 2 }, { "Cases.anchored", 5, CH, 2 },
		{ "Cases.anchored", 6, CH, 2 }, { "Cases.anchored", 7, CH, 2 },
		{ "Cases.anchored", 8, CH, 2 },
	};
	check(x, w, NW(w));
}

/* Compiled code at (INNER, IBCI) inlined into (OUTER, OBCI). */
static void script_inlined(struct event_script *s, uint64_t inner, int32_t ibci,
			   uint64_t outer, int32_t obci)
{
	script_compiled(s, inner, ibci);
	struct jpb_decoded_event *e = &s->ev[s->n - 1];
	e->nframes = 2;
	e->frames[1] = (struct jpb_decoded_frame){ outer, obci };
}

/* Interpreted outer calls compiled callGet, with A.get inlined; the
 * activation's last event is the inlined getter's ireturn, so the
 * interpreted opcodes after it run in outer, the caller of the
 * activation's outermost frame (callGet), not in callGet after its
 * call of the getter. */
static void test_inlined_return_to_interpreted(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_ops(&x->s, 0x2a, 0xb8, -1); /* outer: aload_0 invokestatic */
	script_transition(&x->s, JPB_TR_STUB, 1);
	script_compiled(&x->s, CALLGET_ID, 0);
	script_inlined(&x->s, AGET_ID, 0, CALLGET_ID, 1);
	script_inlined(&x->s, AGET_ID, 1, CALLGET_ID, 1);
	script_inlined(&x->s, AGET_ID, 4, CALLGET_ID, 1);
	script_ops(&x->s, 0x04, 0x60, 0xac, -1); /* outer: iconst_1 iadd ireturn */
	static const struct want w[] = {
		{ "Cases.outer", 0, C, 1 }, { "Cases.outer", 1, C, 1 },
		{ "Cases.callGet", 0, DEC, 1 }, { "Cases$A.get", 0, DEC, 1 },
		{ "Cases$A.get", 1, DEC, 1 }, { "Cases$A.get", 4, DEC, 1 },
		{ "Cases.outer", 4, C, 1 }, { "Cases.outer", 5, C, 1 },
		{ "Cases.outer", 6, C, 1 },
	};
	check(x, w, NW(w));
}

/* loop(7) with the fifth iteration lost: the flow resynchronises after
 * the gap, and recovery fills the gap with one iteration copied from the
 * third: the candidate after the fourth matches more history but runs
 * into the gap itself; the one after the second iteration matches 21
 * events back (>= 16 needed) and reconnects after one iteration. */
static void test_recover_loop_iteration(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x03, 0x3c, 0x03, 0x3d, 0x1c, 0x1a, 0xa2, -1);        /* init, test */
	for (int it = 0; it < 4; it++)
		script_ops(&x->s, 0x1b, 0x1c, 0x60, 0x3c, 0x84, 0xa7, 0x1c, 0x1a, 0xa2, -1);
	script_add(&x->s, JPB_DEV_GAP)->what = JPB_GAP_OVERFLOW;
	for (int it = 0; it < 2; it++)
		script_ops(&x->s, 0x1b, 0x1c, 0x60, 0x3c, 0x84, 0xa7, 0x1c, 0x1a, 0xa2, -1);
	script_ops(&x->s, 0x1b, 0xac, -1);                                        /* exit */
	const struct jpb_flow_event *out;
	size_t n;
	struct flow_summary s;
	assert_int_equal(flow_thread(x->f, x->s.ev, x->s.n, &out, &n, &s), 0);
	static const int32_t iter[] = { 9, 10, 11, 12, 13, 16, 4, 5, 6 };
	/* 7 + 4 x 9 before the gap, 9 recovered, 2 x 9 + 2 after */
	assert_int_equal(n, 7 + 36 + 9 + 18 + 2);
	assert_int_equal(s.gaps, 1);
	assert_int_equal(s.by_status[JPB_FLOW_RECOVERED], 9);
	for (size_t i = 0; i < 9; i++) {
		const struct jpb_flow_event *e = &out[43 + i];
		assert_int_equal(e->status, JPB_FLOW_RECOVERED);
		assert_int_equal(e->bci, iter[i]);
		assert_string_equal(flow_method(x->f, e->method).name, "loop");
	}
	for (size_t i = 52; i < n; i++)
		assert_int_not_equal(out[i].status, JPB_FLOW_RECOVERED);
	assert_int_equal(out[n - 1].bci, 20);
}

#define F8 0x1a, 0x04, 0xa3, 0x1a, 0x1a, 0x04, 0x64, 0xb8 /* fact, n > 1 */
#define RC JPB_FLOW_RECOVERED

/* sumFact(3): fact(3) three times; in the third, fact(2) and fact(1) are
 * lost.  Of the 4 candidates (the recursive invokes of fact(3) and
 * fact(2) in the first two calls), the second call's fact(3), whose
 * history before the invoke matches longest, fills the gap with fact(2)'s
 * and fact(1)'s events up to where it reconnects with the imul, ireturn,
 * iadd after the gap. */
static void test_recover_recursion(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x03, 0x3c, 0x03, 0x3d, 0x1c, 0x06, 0xa2, 0x1b, 0x1a, 0xb8, -1);
	for (int it = 0; it < 3; it++) {
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
		script_ops(&x->s, F8, -1); /* fact(3) */
		if (it == 2) {
			script_add(&x->s, JPB_DEV_GAP)->what = JPB_GAP_OVERFLOW;
		} else {
			script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
			script_ops(&x->s, F8, -1); /* fact(2) */
			script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
			script_ops(&x->s, 0x1a, 0x04, 0xa3, 0x04, 0xac, 0x68, 0xac, -1);
		}
		script_ops(&x->s, 0x68, 0xac, 0x60, 0x3c, 0x84, 0xa7, 0x1c, 0x06, 0xa2, -1);
		script_ops(&x->s, 0x1b, it == 2 ? 0xac : 0x1a, -1);
		if (it < 2)
			script_ops(&x->s, 0xb8, -1);
	}
	const struct jpb_flow_event *out;
	size_t n;
	struct flow_summary s;
	assert_int_equal(flow_thread(x->f, x->s.ev, x->s.n, &out, &n, &s), 0);
	static const int32_t lost[] = { 0, 1, 2, 7, 8, 9, 10, 11, /* fact(2) */
					0, 1, 2, 5, 6,              /* fact(1) */
					14, 15 };                   /* fact(2) */
	/* before the gap: sumFact's 10, two calls of 35 (fact(3), fact(2),
	 * fact(1) and the returns, sumFact's loop), fact(3)'s 8 */
	size_t at = 10 + 2 * 35 + 8;
	assert_int_equal(s.by_status[RC], 15);
	assert_int_equal(n, at + 15 + 11);
	for (size_t i = 0; i < 15; i++) {
		const struct jpb_flow_event *e = &out[at + i];
		assert_int_equal(e->status, RC);
		assert_int_equal(e->ncand, 4); /* the candidates ranked */
		assert_int_equal(e->bci, lost[i]);
		assert_string_equal(flow_method(x->f, e->method).name, "fact");
	}
	assert_int_equal(out[at + 15].bci, 14);
	assert_string_equal(flow_method(x->f, out[at + 15].method).name, "fact");
	assert_int_not_equal(out[at + 15].status, RC);
}

/* callLoop(2) with loop's last test and its exit lost: no other stretch
 * of the thread reaches the ireturn that follows the gap, so the gap is
 * filled with the shortest CFG path from the goto to it: the test (4, 5,
 * 6) and the exit's iload_1 (19), marked recovered with ncand 0.  After
 * the gap the ireturn fits every ireturn of the classes (19), but only
 * loop's can return into callLoop's bipush, the only fit after an invoke
 * of the whole program's search (calls and returns match: callLoop calls
 * loop alone), so loop's is the one left; still chosen, ncand 2, since a
 * resynchronisation with 19 survivors placed it (it was chosen among 19
 * before returns had to match their call); callLoop is certain
 * (docs/RECONSTRUCTION.md, "When an event is certain"). */
static void test_recover_lost_loop_exit(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0xb8, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x03, 0x3c, 0x03, 0x3d, 0x1c, 0x1a, 0xa2, -1);
	for (int it = 0; it < 2; it++)
		script_ops(&x->s, 0x1b, 0x1c, 0x60, 0x3c, 0x84, 0xa7, -1);
	script_add(&x->s, JPB_DEV_GAP)->what = JPB_GAP_OVERFLOW;
	script_ops(&x->s, 0xac, 0x10, 0x68, 0xac, -1);
	static const struct want w[] = {
		{ "Cases.callLoop", 0, CH, 2 }, { "Cases.callLoop", 1, CH, 2 },
		{ "Cases.loop", 0, CH, 2 }, { "Cases.loop", 1, CH, 2 },
		{ "Cases.loop", 2, CH, 2 }, { "Cases.loop", 3, CH, 2 },
		{ "Cases.loop", 4, CH, 2 }, { "Cases.loop", 5, CH, 2 },
		{ "Cases.loop", 6, CH, 2 },
		{ "Cases.loop", 9, CH, 2 }, { "Cases.loop", 10, CH, 2 },
		{ "Cases.loop", 11, CH, 2 }, { "Cases.loop", 12, CH, 2 },
		{ "Cases.loop", 13, CH, 2 }, { "Cases.loop", 16, CH, 2 },
		{ "Cases.loop", 9, C, 1 }, { "Cases.loop", 10, C, 1 },
		{ "Cases.loop", 11, C, 1 }, { "Cases.loop", 12, C, 1 },
		{ "Cases.loop", 13, C, 1 }, { "Cases.loop", 16, C, 1 },
		{ "Cases.loop", 4, RC, 0 }, { "Cases.loop", 5, RC, 0 },
		{ "Cases.loop", 6, RC, 0 }, { "Cases.loop", 19, RC, 0 },
		{ "Cases.loop", 20, CH, 2 },
		{ "Cases.callLoop", 4, C, 1 }, { "Cases.callLoop", 6, C, 1 },
		{ "Cases.callLoop", 7, C, 1 },
	};
	check(x, w, NW(w));
}

/* P.twin and Q.twin have one body.  Entered with the caller unknown, the
 * thread resynchronises onto both (chosen among 2); the return then
 * resynchronises onto viaP, the only fit in the whole program: certain.
 * A compiled pin (anchored, calling
 * compiledCallee, which runs interpreted) makes the callee certain again. */
static void test_resync_twins_until_pin(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x06, 0x68, 0x04, 0x60, 0xac, -1); /* twin */
	script_ops(&x->s, 0x3c, 0x1b, 0x10, 0x64, 0xac, -1);       /* viaP after the call */
	script_compiled(&x->s, ANCHORED_ID, 0);
	script_compiled(&x->s, ANCHORED_ID, 1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x04, 0x60, 0xac, -1);             /* compiledCallee */
	script_compiled(&x->s, ANCHORED_ID, 4);
#define TW "Cases$P.twin|Cases$Q.twin"
	static const struct want w[] = {
		{ TW, 0, CH, 2 }, { TW, 1, CH, 2 }, { TW, 2, CH, 2 },
		{ TW, 3, CH, 2 }, { TW, 4, CH, 2 }, { TW, 5, CH, 2 },
		{ "Cases.viaP", 4, C, 1 }, { "Cases.viaP", 5, C, 1 },
		{ "Cases.viaP", 6, C, 1 }, { "Cases.viaP", 8, C, 1 },
		{ "Cases.viaP", 9, C, 1 },
		{ "Cases.anchored", 0, DEC, 1 }, { "Cases.anchored", 1, DEC, 1 },
		{ "Cases.compiledCallee", 0, C, 1 }, { "Cases.compiledCallee", 1, C, 1 },
		{ "Cases.compiledCallee", 2, C, 1 }, { "Cases.compiledCallee", 3, C, 1 },
		{ "Cases.anchored", 4, DEC, 1 },
	};
#undef TW
	check(x, w, NW(w));
}

/* The same twins entered with the caller unknown, returning into viaQ
 * (the only code whose opcodes after a call fit).  Only Q.twin can have
 * returned there: viaQ's invoke calls Q.twin, not P.twin.  Calls and
 * returns must match, so P.twin's return finds no caller and the twin is
 * Q.twin (still chosen: the resynchronisation left 2); viaQ, the one
 * caller, is certain.  Without the match both returns met in viaQ and the
 * first predecessor, P.twin, was chosen. */
static void test_return_matches_call(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x06, 0x68, 0x04, 0x60, 0xac, -1); /* twin */
	script_ops(&x->s, 0x3c, 0x1b, 0x08, 0x68, 0xac, -1);       /* viaQ after the call */
	static const struct want w[] = {
		{ "Cases$Q.twin", 0, CH, 2 }, { "Cases$Q.twin", 1, CH, 2 },
		{ "Cases$Q.twin", 2, CH, 2 }, { "Cases$Q.twin", 3, CH, 2 },
		{ "Cases$Q.twin", 4, CH, 2 }, { "Cases$Q.twin", 5, CH, 2 },
		{ "Cases.viaQ", 4, C, 1 }, { "Cases.viaQ", 5, C, 1 },
		{ "Cases.viaQ", 6, C, 1 }, { "Cases.viaQ", 7, C, 1 },
		{ "Cases.viaQ", 8, C, 1 },
	};
	check(x, w, NW(w));
}

/* Compiled outer calls interpreted callGet, whose virtual call may reach
 * A.get or B.get.  With all states kept, the getter is chosen among 2 and
 * the return into callGet, where both paths meet, is certain.  With
 * max_states 1, B.get is dropped: the getter must not turn certain for
 * it (chosen, ncand 2), nor anything after it until the next pin. */
static void test_state_cap_not_certain(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_compiled(&x->s, OUTER_ID, 0);
	script_compiled(&x->s, OUTER_ID, 1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb6, -1);       /* callGet */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb4, 0xac, -1); /* a getter */
	script_ops(&x->s, 0xac, -1);             /* callGet returns */
	script_compiled(&x->s, OUTER_ID, 4);
	static const struct want all[] = {
		{ "Cases.outer", 0, DEC, 1 }, { "Cases.outer", 1, DEC, 1 },
		{ "Cases.callGet", 0, C, 1 }, { "Cases.callGet", 1, C, 1 },
		{ "A|B", 0, CH, 2 }, { "A|B", 1, CH, 2 }, { "A|B", 4, CH, 2 },
		{ "Cases.callGet", 4, C, 1 }, { "Cases.outer", 4, DEC, 1 },
	};
	check(x, all, NW(all));
	static const struct want capped[] = {
		{ "Cases.outer", 0, DEC, 1 }, { "Cases.outer", 1, DEC, 1 },
		{ "Cases.callGet", 0, C, 1 }, { "Cases.callGet", 1, C, 1 },
		{ "Cases$A.get", 0, CH, 2 }, { "Cases$A.get", 1, CH, 2 },
		{ "Cases$A.get", 4, CH, 2 },
		{ "Cases.callGet", 4, CH, 2 }, { "Cases.outer", 4, DEC, 1 },
	};
	struct flow_opts o = { .max_states = 1 };
	struct flow *fl;
	assert_int_equal(flow_alloc(&fl, x->p, &o), 0);
	assert_int_equal(flow_set_codelet(fl, CL_ENTRY, "zerolocals"), 0);
	check_flow(x, fl, capped, NW(capped));
	flow_free(fl);
}

static void test_unexplained_is_unknown(void **state)
{
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	/* monitorenter appears in no loaded method: never placed. */
	script_ops(&x->s, 0xc2, -1);
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_thread(x->f, x->s.ev, x->s.n, &out, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].status, JPB_FLOW_UNKNOWN);
	assert_int_equal(out[0].method, 0);
	assert_int_equal(out[0].bci, -1);
}

static void test_fast_opcodes(void **state)
{
	(void)state;
	int fused;
	assert_int_equal(flow_java_opcode(0xb6, &fused), 0xb6);
	assert_int_equal(fused, -1);
	assert_int_equal(flow_java_opcode(203, &fused), 0xb4); /* fast_agetfield */
	assert_int_equal(flow_java_opcode(221, &fused), 0x2a); /* fast_iaccess_0 */
	assert_int_equal(fused, 0xb4);
	assert_int_equal(flow_java_opcode(225, &fused), 0x15); /* fast_iload2 */
	assert_int_equal(fused, 0x15);
	assert_int_equal(flow_java_opcode(233, &fused), 0xb6); /* invokehandle */
	assert_int_equal(flow_java_opcode(250, &fused), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_straight),
		cmocka_unit_test(test_loop_exit),
		cmocka_unit_test(test_identical_getters),
		cmocka_unit_test(test_exception_two_frames),
		cmocka_unit_test(test_compiled_anchor),
		cmocka_unit_test(test_inlined_return_to_interpreted),
		cmocka_unit_test(test_recover_loop_iteration),
		cmocka_unit_test(test_recover_recursion),
		cmocka_unit_test(test_recover_lost_loop_exit),
		cmocka_unit_test(test_resync_twins_until_pin),
		cmocka_unit_test(test_return_matches_call),
		cmocka_unit_test(test_state_cap_not_certain),
		cmocka_unit_test(test_unexplained_is_unknown),
		cmocka_unit_test(test_fast_opcodes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
