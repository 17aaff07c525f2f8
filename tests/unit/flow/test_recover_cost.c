// SPDX-License-Identifier: MIT
/*
 * Recovery costs a copied stretch by its methods' state at the gap
 * (user/flow/recover.c, docs/RECONSTRUCTION.md "The time budget"): a
 * stretch copied from where its method still ran interpreted, into a gap
 * after the method's first compiled event, costs compiled events.  A
 * hand-built thread whose TSCs give 10 ticks per interpreted and 1 per
 * compiled event: the only candidate copies 64 interpreted events of
 * method 2, compiled before the gap; the gap's budget is 64 ticks, which
 * the copy fits as compiled code (64) and not as interpreted (640 > 1.5
 * x 64 + 32 x 10).  When method 2 is compiled only after the gap, the
 * copy stays interpreted and is declined.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/flow/flow_int.h"

#define BLOCK 16   /* events per TSC */
#define NFILL 64   /* the copy's events */
#define NAFTER 12  /* events after the gap */

struct th {
	struct flow f;
	struct gapmark gap;
	struct jpb_flow_event ev[512];
	struct fmeth meths[3]; /* no code: no shortest path */
};

static void put(struct th *t, uint32_t method, int32_t bci, uint8_t status)
{
	assert_true(t->f.nout < 512);
	t->ev[t->f.nout++] = (struct jpb_flow_event){
		.method = method, .bci = bci, .status = status, .ncand = 1,
	};
}

/* 64 events and the anchor: a suffix long enough for a copy longer
 * than it (recover.c, MIN_MATCH) */
static void history(struct th *t)
{
	for (int k = 0; k < 64; k++)
		put(t, 1, 100 + k, JPB_FLOW_CERTAIN);
	put(t, 1, 200, JPB_FLOW_CERTAIN); /* the anchor */
}

static void compiled_run(struct th *t)
{
	for (int k = 0; k < 2 * BLOCK; k++)
		put(t, 2, 50, JPB_FLOW_DECODED);
}

/* One TSC per BLOCK events, advancing by what they cost (10 ticks an
 * interpreted event, 1 a compiled one); the gap's bounds: 64 ticks. */
static void stamp(struct th *t)
{
	uint64_t tsc = 1000;
	for (size_t b = 0; b < t->f.nout; b += BLOCK) {
		uint64_t cost = 0;
		for (size_t i = b; i < b + BLOCK && i < t->f.nout; i++) {
			t->ev[i].tsc = tsc;
			cost += t->ev[i].status == JPB_FLOW_DECODED ? 1 : 10;
		}
		tsc += cost;
	}
	uint64_t t0 = t->ev[t->gap.at - 1].tsc;
	t->gap.t0 = t0;
	t->gap.t1 = t0 + NFILL;
}

/* The thread: method 2 compiled before the gap (COMPILED_FIRST) or only
 * after it; returns the events recovered. */
static size_t run(int compiled_first)
{
	struct th *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->f.out = t->ev;
	t->f.capo = 512;
	t->f.nmeths = 3;
	t->f.meths = t->meths;
	for (int m = 0; m < 3; m++)
		t->meths[m].cfg_tried = 1;
	put(t, 3, 900, JPB_FLOW_CERTAIN);
	history(t);
	for (int k = 0; k < NFILL; k++)
		put(t, 2, 60, JPB_FLOW_CERTAIN);
	for (int k = 0; k < NAFTER; k++)
		put(t, 1, 400 + k, JPB_FLOW_CERTAIN);
	for (int k = 0; k < 3 * BLOCK; k++)
		put(t, 3, 901, JPB_FLOW_CERTAIN);
	if (compiled_first)
		compiled_run(t);
	put(t, 3, 902, JPB_FLOW_CERTAIN);
	history(t);
	t->gap = (struct gapmark){ .at = t->f.nout };
	for (int k = 0; k < NAFTER; k++)
		put(t, 1, 400 + k, JPB_FLOW_CERTAIN);
	if (!compiled_first)
		compiled_run(t);
	for (int k = 0; k < 2 * BLOCK; k++)
		put(t, 3, 903, JPB_FLOW_CERTAIN);
	t->f.gaps = &t->gap;
	t->f.ngaps = 1;
	stamp(t);
	size_t before = t->f.nout;
	assert_int_equal(flow_recover(&t->f), 0);
	size_t n = t->f.nout - before;
	for (size_t i = 0; i < n; i++) {
		const struct jpb_flow_event *e = &t->f.out[t->gap.at + i];
		assert_int_equal(e->status, JPB_FLOW_RECOVERED);
		assert_int_equal(e->method, 2);
	}
	if (t->f.out != t->ev)
		free(t->f.out);
	free(t);
	return n;
}

static void test_copy_costed_compiled_at_gap(void **state)
{
	(void)state;
	assert_int_equal(run(1), NFILL);
}

static void test_copy_interpreted_before_compilation(void **state)
{
	(void)state;
	assert_int_equal(run(0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_costed_compiled_at_gap),
		cmocka_unit_test(test_copy_interpreted_before_compilation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
