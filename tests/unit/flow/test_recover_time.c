// SPDX-License-Identifier: MIT
/*
 * Recovery's time model (user/flow/recover_time.c): ticks per interpreted
 * and per compiled event as medians over timing windows, so a window in
 * which the thread was descheduled does not skew them; a gap's budget
 * from the decoder's bounds, else from the window around it less the
 * traced events inside; unknown when another gap shares the window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/flow/flow_int.h"

#define INTERP JPB_FLOW_CERTAIN
#define COMP JPB_FLOW_DECODED

struct tl {
	struct flow f;
	struct jpb_flow_event ev[1024];
	struct gapmark gaps[4];
	uint64_t tsc;
};

/* A window of N events of STATUS (COMPILED of them compiled) at the
 * current TSC, then the TSC advances by TICKS. */
static void window(struct tl *t, size_t n, size_t compiled, uint64_t ticks)
{
	for (size_t i = 0; i < n; i++) {
		assert_true(t->f.nout < 1024);
		struct jpb_flow_event *e = &t->ev[t->f.nout++];
		memset(e, 0, sizeof(*e));
		e->method = 1;
		e->status = i < compiled ? COMP : INTERP;
		e->tsc = t->tsc;
	}
	t->tsc += ticks;
}

static void gap(struct tl *t, uint64_t t0, uint64_t t1)
{
	t->gaps[t->f.ngaps++] = (struct gapmark){ t->f.nout, t0, t1 };
}

static struct tl *tl_new(void)
{
	struct tl *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->f.out = t->ev;
	t->f.gaps = t->gaps;
	t->tsc = 1000;
	return t;
}

static void test_rates_are_medians(void **state)
{
	(void)state;
	struct tl *t = tl_new();
	/* interpreted: 20 events in 40 ticks, three times; once descheduled */
	for (int i = 0; i < 3; i++)
		window(t, 20, 0, 40);
	window(t, 20, 0, 100000);
	/* mostly compiled: 2 interpreted (4 ticks) + 18 compiled in 13 */
	for (int i = 0; i < 3; i++)
		window(t, 20, 18, 4 + 9);
	window(t, 20, 0, 40); /* the last window has no successor: unused */
	struct fcost c;
	flow_cost_fit(&t->f, &c);
	assert_true(c.interp > 1.99 && c.interp < 2.01);
	assert_true(c.compiled > 0.49 && c.compiled < 0.51);
	assert_true(flow_cost_of(&c, t->ev + 80, 20) > 12.9 &&
		    flow_cost_of(&c, t->ev + 80, 20) < 13.1);
	free(t);
}

static void test_gap_budget(void **state)
{
	(void)state;
	struct tl *t = tl_new();
	for (int i = 0; i < 4; i++)
		window(t, 20, 0, 40);
	/* 10 events traced, a gap, 10 more, all in one window of 100
	 * ticks: 20 events cost 40, so 60 ticks were lost */
	window(t, 10, 0, 0);
	gap(t, t->tsc, t->tsc);
	window(t, 10, 0, 100);
	window(t, 20, 0, 40);
	window(t, 20, 0, 40);
	struct fcost c;
	flow_cost_fit(&t->f, &c);
	double b = flow_gap_budget(&t->f, &c, 0);
	assert_true(b > 59.9 && b < 60.1);
	/* the decoder's own bounds win */
	t->gaps[0].t1 = t->gaps[0].t0 + 7;
	b = flow_gap_budget(&t->f, &c, 0);
	assert_true(b > 6.9 && b < 7.1);
	free(t);
}

static void test_gap_budget_unknown(void **state)
{
	(void)state;
	struct tl *t = tl_new();
	for (int i = 0; i < 4; i++)
		window(t, 20, 0, 40);
	/* two gaps in one window: neither's share is known */
	window(t, 5, 0, 0);
	gap(t, t->tsc, t->tsc);
	window(t, 5, 0, 0);
	gap(t, t->tsc, t->tsc);
	window(t, 5, 0, 100);
	window(t, 20, 0, 40);
	struct fcost c;
	flow_cost_fit(&t->f, &c);
	assert_true(flow_gap_budget(&t->f, &c, 0) < 0);
	assert_true(flow_gap_budget(&t->f, &c, 1) < 0);
	/* no windows of 16 events: no cost model, no budget even with
	 * the decoder's bounds */
	struct tl *u = tl_new();
	for (int i = 0; i < 8; i++)
		window(u, 4, 0, 8);
	gap(u, u->tsc, u->tsc + 50);
	window(u, 4, 0, 8);
	flow_cost_fit(&u->f, &c);
	assert_true(flow_gap_budget(&u->f, &c, 0) < 0);
	free(t);
	free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates_are_medians),
		cmocka_unit_test(test_gap_budget),
		cmocka_unit_test(test_gap_budget_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
