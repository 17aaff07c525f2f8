// SPDX-License-Identifier: MIT
/*
 * The states' memory and tables (resolve.c).  Their frames live in an
 * arena that is copied (the one state's stack alone) into a fresh one
 * once it holds ARENA_COMPACT frames, so a long thread keeps only what is
 * alive.  A loop that calls a method 40000 times allocates frames past
 * the threshold in single-state stretches; the stack under the loop must
 * survive every copy: its return reaches its caller, certain, where an
 * unknown caller would be outer or its twin (identical code).  Steps of
 * 16 states and more are indexed by a hash and their positions counted
 * with a set; a step whose staged states exceed the cap is added by rank
 * (RECONSTRUCTION.md, "Pruning").
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
#include "script_fixture.h"

/* Deep's loop, and a virtual call with NGET identical getters: a step
 * of that many states, indexed by a hash (16 and more). */
#define NGET 20

static const char *src_head =
	"public class Deep {\n"
	"    static int f(int i) { return i; }\n"
	"    static int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += f(i); return s; }\n"
	"    static int outer(int n) { return loop(n) + 1; }\n"
	"    static int twin(int n) { return loop(n) + 1; }\n"
	"    static int main0(int n) { return outer(n); }\n"
	"    static abstract class Shape { abstract int get(); }\n"
	"    static int callGet(Shape s) { return s.get(); }\n"
	"    static int outerGet(Shape s) { return callGet(s) + 1; }\n";

#define MAIN_ID 0x7301u
#define OUTER_GET_ID 0x7302u
#define GET_ID0 0x7400u /* + i: Deep$Cii.get */
#define ITERATIONS 40000
enum { CL_ENTRY = 1 };

static int setup(void **state)
{
	static char src[4096], names[NGET][16];
	const char *cls[NGET + 2] = { "Deep", "Deep$Shape" };
	size_t len = (size_t)snprintf(src, sizeof(src), "%s", src_head);
	for (int i = 0; i < NGET; i++) {
		len += (size_t)snprintf(src + len, sizeof(src) - len,
					"    static class C%02d extends Shape { int v; int get() { return v; } }\n",
					i);
		snprintf(names[i], sizeof(names[i]), "Deep$C%02d", i);
		cls[i + 2] = names[i];
	}
	char sig[NGET][24];
	for (int i = 0; i < NGET; i++)
		snprintf(sig[i], sizeof(sig[i]), "LDeep$C%02d;", i);
	snprintf(src + len, sizeof(src) - len, "}\n");
	struct script_fx *x = script_fx_new(src, cls, NGET + 2);
	*state = x;
	if (!x)
		return 0; /* no javac: the cases skip */
	assert_int_equal(jprog_add_method_id(x->p, MAIN_ID, "LDeep;", "main0", "(I)I"), 0);
	assert_int_equal(jprog_add_method_id(x->p, OUTER_GET_ID, "LDeep;", "outerGet",
					     "(LDeep$Shape;)I"),
			 0);
	for (int i = 0; i < NGET; i++)
		assert_int_equal(jprog_add_method_id(x->p, GET_ID0 + (uint64_t)i, sig[i], "get", "()I"),
				 0);
	return 0;
}

static void entry(struct script_fx *x)
{
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
}

/* Compiled main0 calls interpreted outer, which calls loop. */
static void script_deep(struct script_fx *x)
{
	x->s.n = 0;
	script_compiled(&x->s, MAIN_ID, 0);
	script_compiled(&x->s, MAIN_ID, 1);
	entry(x);
	script_ops(&x->s, 0x1a, 0xb8, -1); /* outer: iload_0 invokestatic */
	entry(x);
	script_ops(&x->s, 0x03, 0x3c, 0x03, 0x3d, -1); /* loop: s = 0, i = 0 */
	for (int i = 0; i < ITERATIONS; i++) {
		/* i < n, s + f(i) */
		script_ops(&x->s, 0x1c, 0x1a, 0xa2, 0x1b, 0x1c, 0xb8, -1);
		entry(x);
		script_ops(&x->s, 0x1a, 0xac, -1);       /* f */
		script_ops(&x->s, 0x60, 0x3c, 0x84, 0xa7, -1); /* s =, i++, goto */
	}
	script_ops(&x->s, 0x1c, 0x1a, 0xa2, 0x1b, 0xac, -1); /* the exit */
	script_ops(&x->s, 0x04, 0x60, 0xac, -1);             /* outer returns */
	script_compiled(&x->s, MAIN_ID, 4);
}

static void expect_cands(struct flow *f, const struct jpb_flow_event *e, const char *cls,
			 const char *name, int32_t bci, uint8_t status, uint16_t ncand)
{
	struct flow_method_info m = flow_method(f, e->method);
	assert_non_null(m.name);
	if (cls)
		assert_string_equal(m.class_name, cls);
	assert_string_equal(m.name, name);
	assert_int_equal(e->bci, bci);
	assert_int_equal(e->status, status);
	assert_int_equal(e->ncand, ncand);
}

static void expect_at(struct flow *f, const struct jpb_flow_event *e, const char *name,
		      int32_t bci, uint8_t status)
{
	expect_cands(f, e, NULL, name, bci, status, 1);
}

static struct flow *flow_new(struct script_fx *x)
{
	struct flow_opts o = { 0 };
	struct flow *f;
	assert_int_equal(flow_alloc(&f, x->p, &o), 0);
	assert_int_equal(flow_set_codelet(f, CL_ENTRY, "zerolocals"), 0);
	return f;
}

static void test_stack_survives_compaction(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	script_deep(x);
	struct flow *f = flow_new(x);
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, &n, NULL), 0);
	/* every event but the transitions, each placed for sure */
	assert_int_equal(n, 2 + 2 + 4 + 12 * (size_t)ITERATIONS + 5 + 3 + 1);
	for (size_t i = 2; i + 1 < n; i++)
		if (out[i].status != JPB_FLOW_CERTAIN)
			fail_msg("event %zu: %s", i, jpb_flow_status_name(out[i].status));
	expect_at(f, &out[n - 5], "loop", 23, JPB_FLOW_CERTAIN);
	expect_at(f, &out[n - 4], "outer", 4, JPB_FLOW_CERTAIN);
	expect_at(f, &out[n - 2], "outer", 6, JPB_FLOW_CERTAIN);
	expect_at(f, &out[n - 1], "main0", 4, JPB_FLOW_DECODED);
	flow_free(f);
}

/* Compiled outerGet calls interpreted callGet, which calls a getter. */
static void script_call_get(struct script_fx *x)
{
	script_compiled(&x->s, OUTER_GET_ID, 0);
	script_compiled(&x->s, OUTER_GET_ID, 1);
	entry(x);
	script_ops(&x->s, 0x2a, 0xb6, -1); /* callGet: aload_0 invokevirtual */
	entry(x);
	script_ops(&x->s, 0x2a, 0xb4, 0xac, -1); /* a getter */
	script_ops(&x->s, 0xac, -1);             /* callGet returns */
	script_compiled(&x->s, OUTER_GET_ID, 4);
}

/* Compiled outerGet calls interpreted callGet twice, whose virtual call
 * reaches NGET getters: every step of the getter holds NGET states,
 * found through the hash index, and counted through the position set
 * (count_cands); the returns into callGet merge them into one state.
 * The second call's steps must not see the first's index entries. */
static void test_many_states_merge(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	script_call_get(x);
	script_call_get(x);
	struct flow *f = flow_new(x);
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, &n, NULL), 0);
	assert_int_equal(n, 2 * 9);
	for (size_t r = 0; r < 2; r++) {
		const struct jpb_flow_event *e = out + 9 * r;
		expect_at(f, &e[0], "outerGet", 0, JPB_FLOW_DECODED);
		expect_at(f, &e[1], "outerGet", 1, JPB_FLOW_DECODED);
		expect_at(f, &e[2], "callGet", 0, JPB_FLOW_CERTAIN);
		expect_at(f, &e[3], "callGet", 1, JPB_FLOW_CERTAIN);
		/* no evidence for any getter: the first loaded is chosen */
		expect_cands(f, &e[4], "Deep$C00", "get", 0, JPB_FLOW_CHOSEN, NGET);
		expect_cands(f, &e[5], "Deep$C00", "get", 1, JPB_FLOW_CHOSEN, NGET);
		expect_cands(f, &e[6], "Deep$C00", "get", 4, JPB_FLOW_CHOSEN, NGET);
		expect_at(f, &e[7], "callGet", 4, JPB_FLOW_CERTAIN);
		expect_at(f, &e[8], "outerGet", 4, JPB_FLOW_DECODED);
	}
	flow_free(f);
}

/* An event chosen among several positions is no evidence for its
 * method: after a first call whose getter is chosen among NGET (C00, the
 * first loaded), compiled code places C05 once, and the second call
 * chooses C05, which has the more evidence. */
static void test_chosen_not_evidence(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	script_call_get(x);
	script_compiled(&x->s, GET_ID0 + 5, 0);
	script_call_get(x);
	struct flow *f = flow_new(x);
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, &n, NULL), 0);
	assert_int_equal(n, 9 + 1 + 9);
	expect_cands(f, &out[4], "Deep$C00", "get", 0, JPB_FLOW_CHOSEN, NGET);
	expect_cands(f, &out[9], "Deep$C05", "get", 0, JPB_FLOW_DECODED, 1);
	expect_cands(f, &out[14], "Deep$C05", "get", 0, JPB_FLOW_CHOSEN, NGET);
	expect_cands(f, &out[16], "Deep$C05", "get", 4, JPB_FLOW_CHOSEN, NGET);
	flow_free(f);
}

/* outerGet calls callGet, whose getter is one of NGET, with room for
 * NGET / 2 states: the cap keeps the getters with the most evidence.
 * Compiled code placed getter i i times, so the evidence runs against
 * the hierarchy's order (the successors' sort leaves its insertion sort
 * for qsort); the one with the most is chosen. */
static void test_cap_by_evidence(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	size_t proven = 0;
	for (int i = 0; i < NGET; i++)
		for (int k = 0; k < i; k++, proven++)
			script_compiled(&x->s, GET_ID0 + (uint64_t)i, 0);
	script_compiled(&x->s, OUTER_GET_ID, 0);
	script_compiled(&x->s, OUTER_GET_ID, 1);
	entry(x);
	script_ops(&x->s, 0x2a, 0xb6, -1);
	entry(x);
	script_ops(&x->s, 0x2a, 0xb4, 0xac, -1);
	script_ops(&x->s, 0xac, -1);
	script_compiled(&x->s, OUTER_GET_ID, 4);
	struct flow_opts o = { .max_states = NGET / 2 };
	struct flow *f;
	assert_int_equal(flow_alloc(&f, x->p, &o), 0);
	assert_int_equal(flow_set_codelet(f, CL_ENTRY, "zerolocals"), 0);
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, &n, NULL), 0);
	assert_int_equal(n, proven + 9);
	const struct jpb_flow_event *e = out + proven;
	expect_at(f, &e[3], "callGet", 1, JPB_FLOW_CERTAIN);
	/* the states kept are getters 10-19, 19 the most proven */
	expect_cands(f, &e[4], "Deep$C19", "get", 0, JPB_FLOW_CHOSEN, NGET / 2);
	expect_cands(f, &e[6], "Deep$C19", "get", 4, JPB_FLOW_CHOSEN, NGET / 2);
	/* a state was dropped: nothing is certain until the next pin */
	expect_cands(f, &e[7], NULL, "callGet", 4, JPB_FLOW_CHOSEN, 2);
	flow_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_survives_compaction),
		cmocka_unit_test(test_many_states_merge),
		cmocka_unit_test(test_chosen_not_evidence),
		cmocka_unit_test(test_cap_by_evidence),
	};
	return cmocka_run_group_tests(tests, setup, script_fx_teardown);
}
