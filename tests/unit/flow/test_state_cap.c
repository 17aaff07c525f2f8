// SPDX-License-Identifier: MIT
/*
 * The state cap (flow_opts.max_states) at a method entry, over real class
 * files compiled by javac at test time: when the candidate callees of the
 * states at an invoke are more than the cap, each state keeps its most
 * likely callee before any keeps a second (a state with one candidate is
 * not crowded out by a virtual call with many), and a state's candidates
 * rank by evidence (methods the trace has placed for sure), then in
 * class-hierarchy order.  RECONSTRUCTION.md, "hot10 on jython at 0% loss".
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

static const char *src =
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

#define OUTER_ID 0x7101u
#define BGET_ID 0x7102u
enum { CL_ENTRY = 1 };

struct fx {
	struct jprog *p;
	struct event_script s;
};

static int setup(void **state)
{
	char dir[512];
	if (java_fixture_compile("Cap", src, dir, sizeof(dir))) {
		*state = NULL; /* no javac: every case skips */
		return 0;
	}
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(jprog_alloc(&x->p), 0);
	static const char *cls[] = { "Cap", "Cap$Shape", "Cap$A", "Cap$B", "Cap$C", "Cap$Str" };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(java_fixture_load(x->p, dir, cls[i]), 0);
	assert_int_equal(jprog_add_method_id(x->p, OUTER_ID, "LCap;", "outer",
					     "(LCap$Shape;)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, BGET_ID, "LCap$B;", "get", "()I"), 0);
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
	struct fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	x->s.n = 0;
	script_ops(&x->s, 0x2a, 0xb6, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb4, 0x05, 0x68, 0xac, 0xac, -1); /* Str.len, callLen returns */
	static const struct want w[] = {
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
	struct fx *x = *state;
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
	static const struct want capped[] = {
		{ "Cap$B.get", 0, DEC, 1 },   { "Cap$B.get", 1, DEC, 1 },
		{ "Cap$B.get", 4, DEC, 1 },   { "Cap.outer", 0, DEC, 1 },
		{ "Cap.outer", 1, DEC, 1 },   { "Cap.callGet", 0, JPB_FLOW_CERTAIN, 1 },
		{ "Cap.callGet", 1, JPB_FLOW_CERTAIN, 1 },
		{ "Cap$B.get", 0, CH, 2 },    { "Cap$B.get", 1, CH, 2 },
		{ "Cap$B.get", 4, CH, 2 },    { "Cap.callGet", 4, CH, 2 },
		{ "Cap.outer", 4, DEC, 1 },
	};
	check(x, 1, capped, NW(capped));
	static const struct want all[] = {
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_callee_not_crowded_out),
		cmocka_unit_test(test_cap_keeps_evidence),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
