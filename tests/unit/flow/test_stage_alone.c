// SPDX-License-Identifier: MIT
/*
 * A method entry's staged callees (resolve.c, flow_stage_entries) are
 * added without searching the step for an equal state when none can be
 * equal: a callee's frame pushed on its caller's top, of a method the
 * caller's callees list once.  A method listed twice for one caller, or a
 * caller staged twice, must still give one state (with an edge for each
 * staging), as the search did; a callee on another caller stays its own
 * state.
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

static const char src[] = "public class Sa {\n"
			  "    static int a(int x) { return x + 1; }\n"
			  "}\n";

/* Method ids only: staging reads no code. */
enum { CALLER0 = 5, CALLER1 = 6, M7 = 7, M8 = 8, M9 = 9 };

struct fx {
	struct jprog *p;
	struct flow *f;
	struct frame *t0, *t1;
};

/* Step 0 holds two callers' states, T0 and T1; node 1 is doubtful, so
 * that their callees of one method are not joined (joins.c). */
static int fx_make(struct fx *x)
{
	static const char *const cls[] = { "Sa" };
	x->p = java_fixture_program(src, cls, 1);
	if (!x->p)
		return 0;
	assert_int_equal(flow_alloc(&x->f, x->p, NULL), 0);
	struct flow *f = x->f;
	x->t0 = flow_frame_new(f, NULL, CALLER0, 3, 1);
	x->t1 = flow_frame_new(f, NULL, CALLER1, 3, 1);
	assert_non_null(x->t0);
	assert_non_null(x->t1);
	assert_int_equal(flow_step_begin(f, 0, 0, 0), 0);
	assert_int_equal(jpb_grow((void **)&f->nodes, &f->capn, 2, sizeof(*f->nodes)), 0);
	f->nodes[0] = (struct node){ .top = x->t0 };
	f->nodes[1] = (struct node){ .top = x->t1, .doubt = 1 };
	f->nnodes = 2;
	flow_cur_step(f)->n = 2;
	assert_int_equal(flow_step_begin(f, 1, 0, 0), 0);
	flow_stage_begin(f);
	return 1;
}

static void fx_free(struct fx *x)
{
	flow_free(x->f);
	jprog_free(x->p);
}

/* The states of step 1 on caller T of method M, and their edges. */
static unsigned states_of(const struct flow *f, const struct frame *t, uint32_t m,
			  unsigned *edges)
{
	const struct step *s = &f->steps[1];
	unsigned n = 0;
	*edges = 0;
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		const struct node *nd = &f->nodes[i];
		if (nd->lost || nd->top->up != t || nd->top->meth != m)
			continue;
		n++;
		for (uint32_t e = nd->edge; e; e = f->edges[e - 1].next)
			++*edges;
	}
	return n;
}

static void test_method_listed_twice(void **state)
{
	(void)state;
	struct fx x;
	if (!fx_make(&x))
		skip();
	struct flow *f = x.f;
	static const uint32_t c0[] = { M7, M8, M7 }, c1[] = { M7, M9 };
	assert_int_equal(flow_stage_entries(f, x.t0, c0, 3, 0), 0);
	assert_int_equal(flow_stage_entries(f, x.t1, c1, 2, 1), 0);
	assert_int_equal(flow_stage_end_entries(f), 0);
	assert_int_equal(f->njoins, 0);
	assert_int_equal(f->steps[1].n, 4);
	unsigned e;
	assert_int_equal(states_of(f, x.t0, M7, &e), 1);
	assert_int_equal(e, 2);
	assert_int_equal(states_of(f, x.t0, M8, &e), 1);
	assert_int_equal(e, 1);
	assert_int_equal(states_of(f, x.t1, M7, &e), 1);
	assert_int_equal(e, 1);
	assert_int_equal(states_of(f, x.t1, M9, &e), 1);
	assert_int_equal(e, 1);
	fx_free(&x);
}

static void test_caller_staged_twice(void **state)
{
	(void)state;
	struct fx x;
	if (!fx_make(&x))
		skip();
	struct flow *f = x.f;
	static const uint32_t c0[] = { M7 }, c1[] = { M9 };
	assert_int_equal(flow_stage_entries(f, x.t0, c0, 1, 0), 0);
	assert_int_equal(flow_stage_entries(f, x.t1, c1, 1, 1), 0);
	assert_int_equal(flow_stage_entries(f, x.t0, c0, 1, 0), 0);
	assert_int_equal(flow_stage_end_entries(f), 0);
	assert_int_equal(f->steps[1].n, 2);
	unsigned e;
	assert_int_equal(states_of(f, x.t0, M7, &e), 1);
	assert_int_equal(e, 2);
	assert_int_equal(states_of(f, x.t1, M9, &e), 1);
	assert_int_equal(e, 1);
	fx_free(&x);
}

/* More callees than the cap: those alone are dropped past it without a
 * search, and the step is marked truncated. */
static void test_callees_past_cap(void **state)
{
	(void)state;
	struct fx x;
	if (!fx_make(&x))
		skip();
	struct flow *f = x.f;
	f->o.max_states = 2;
	static const uint32_t c0[] = { M7, M8, M9 }, c1[] = { M7 };
	assert_int_equal(flow_stage_entries(f, x.t0, c0, 3, 0), 0);
	assert_int_equal(flow_stage_entries(f, x.t1, c1, 1, 1), 0);
	assert_int_equal(flow_stage_end_entries(f), 0);
	assert_int_equal(f->steps[1].n, 2);
	assert_true(f->steps[1].trunc);
	unsigned e;
	/* by rank: each caller's first callee before any second */
	assert_int_equal(states_of(f, x.t0, M7, &e), 1);
	assert_int_equal(states_of(f, x.t1, M7, &e), 1);
	fx_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_listed_twice),
		cmocka_unit_test(test_caller_staged_twice),
		cmocka_unit_test(test_callees_past_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
