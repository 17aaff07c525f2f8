// SPDX-License-Identifier: MIT
/*
 * Recovery within a window (user/flow/recover.c, thread.c's window_cut;
 * docs/RECONSTRUCTION.md, "Windows"): the gaps of the context (before
 * plen) were filled and written with the window before, so recovery
 * leaves them unfilled and fills the new part's gaps only; several fills
 * go into the output in gap order, each at its gap.  A hand-built thread
 * output repeats one 20-event body (bcis 100-119) 13 times; the first gap
 * loses bcis 110-114 of repetition 2, the second 105-109 of repetition 9,
 * and the repetitions around them are the candidates that fill them (the
 * segment between the gaps is the longer, so that each gap's best
 * candidate is a whole repetition, not one cut by the other gap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/flow/flow_int.h"

#define BODY 20
#define REPS 13
#define GAP1_REP 2
#define GAP2_REP 9
#define CAP 1024

struct th {
	struct flow f;
	struct gapmark gap[2];
};

static void put(struct th *t, int32_t bci)
{
	assert_true(t->f.nout < CAP);
	t->f.out[t->f.nout++] = (struct jpb_flow_event){
		.method = 1, .bci = bci, .status = JPB_FLOW_CERTAIN, .ncand = 1,
	};
}

static void reps(struct th *t, int n)
{
	for (int r = 0; r < n; r++)
		for (int k = 0; k < BODY; k++)
			put(t, 100 + k);
}

/* A repetition that loses bcis [LOST0, LOST1) to gap G. */
static void rep_with_gap(struct th *t, int g, int32_t lost0, int32_t lost1)
{
	for (int32_t b = 100; b < 100 + BODY; b++) {
		if (b == lost0)
			t->gap[g] = (struct gapmark){ .at = t->f.nout };
		if (b < lost0 || b >= lost1)
			put(t, b);
	}
}

static struct th *thread(void)
{
	struct th *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->f.out = malloc(CAP * sizeof(*t->f.out));
	assert_non_null(t->f.out);
	reps(t, GAP1_REP);
	rep_with_gap(t, 0, 110, 115);
	reps(t, GAP2_REP - GAP1_REP - 1);
	rep_with_gap(t, 1, 105, 110);
	reps(t, REPS - GAP2_REP - 1);
	t->f.gaps = t->gap;
	t->f.ngaps = 2;
	return t;
}

static void free_thread(struct th *t)
{
	free(t->f.out);
	free(t);
}

/* The output is the body repeated, but for the events the gaps of the
 * repetitions not in FILLED_REPS lost; fills are marked recovered, the
 * rest not. */
static void check_output(const struct th *t, const int *filled_reps, int nfilled)
{
	size_t i = 0;
	for (int r = 0; r < REPS; r++) {
		int filled = 0;
		for (int k = 0; k < nfilled; k++)
			filled |= filled_reps[k] == r;
		for (int32_t b = 100; b < 100 + BODY; b++) {
			int gap_rep = r == GAP1_REP ? b >= 110 && b < 115 :
				      r == GAP2_REP ? b >= 105 && b < 110 : 0;
			if (gap_rep && !filled)
				continue;
			assert_true(i < t->f.nout);
			assert_int_equal(t->f.out[i].bci, b);
			assert_int_equal(t->f.out[i].status,
					 gap_rep ? JPB_FLOW_RECOVERED : JPB_FLOW_CERTAIN);
			i++;
		}
	}
	assert_int_equal(i, t->f.nout);
}

static void test_both_gaps_filled(void **state)
{
	(void)state;
	struct th *t = thread();
	size_t before = t->f.nout;
	assert_int_equal(flow_recover(&t->f), 0);
	assert_int_equal(t->f.nout, before + 10);
	const int filled[] = { GAP1_REP, GAP2_REP };
	check_output(t, filled, 2);
	assert_int_equal(t->f.sum.by_status[JPB_FLOW_RECOVERED], 10);
	free_thread(t);
}

static void test_context_gap_left(void **state)
{
	(void)state;
	struct th *t = thread();
	size_t before = t->f.nout;
	t->f.plen = t->gap[0].at + 5; /* the first gap lies in the context */
	assert_int_equal(flow_recover(&t->f), 0);
	assert_int_equal(t->f.nout, before + 5);
	const int filled[] = { GAP2_REP };
	check_output(t, filled, 1);
	assert_int_equal(t->f.sum.by_status[JPB_FLOW_RECOVERED], 5);
	free_thread(t);
}

static void test_all_context(void **state)
{
	(void)state;
	struct th *t = thread();
	size_t before = t->f.nout;
	t->f.plen = t->gap[1].at + 1;
	assert_int_equal(flow_recover(&t->f), 0);
	assert_int_equal(t->f.nout, before);
	check_output(t, NULL, 0);
	assert_int_equal(t->f.sum.by_status[JPB_FLOW_RECOVERED], 0);
	free_thread(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_gaps_filled),
		cmocka_unit_test(test_context_gap_left),
		cmocka_unit_test(test_all_context),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
