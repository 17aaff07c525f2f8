// SPDX-License-Identifier: MIT
/*
 * Recovery's candidate rules (user/flow/recover.c): only the best-ranked
 * candidate may fill a gap, with at most 20000 events, and only on a
 * concrete common suffix of 64 events, or of 16 when the copy is no
 * longer than the suffix (issue 8 fifth round).  A hand-built thread
 * output: four earlier occurrences of the event before the gap (the
 * anchor), preceded by CTX - 1, CTX - 2, CTX - 3 and CTX - 4 events of
 * the gap's own history (CTX 80 unless a test says otherwise; so they
 * rank in that order), of which only one continues into
 * the three events after the gap.  Ranked first, it fills the gap with
 * the events between; ranked second, the gap stays unfilled (no program
 * model: no shortest path either).  A first-ranked candidate whose
 * continuation reconnects only after more than 20000 events is declined,
 * and so is one that repeats the 3 events after the gap but not 8 (16
 * after a copy of 1024 events or more).  Where none reconnects, the
 * start that two others repeat fills part of the gap (test_partial_fill).
 * Below the periods of a loop the gap cut, a candidate from elsewhere is
 * not tried (test_loop_elsewhere).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/flow/flow_int.h"

#define CTX 80          /* history before the gap */
#define ANCHOR 200      /* bci of the anchor event */
#define FILLER 300      /* bci of the event a good candidate fills in */
#define AFTER 400       /* bci of the first event after the gap */
#define NAFTER 12       /* events after the gap */
#define SHARED 10000    /* bci of the first event candidates share (partial fills) */
#define LOOP 3000       /* bci of the first of a loop's 8 events */
#define HIST 2000       /* bci of the first event of the gap's history:
                         * past every other bci, for histories of any length */

struct th {
	struct flow f;
	struct gapmark gap;
	size_t cap;
	int ctx; /* events of history before the gap */
};

static void put(struct th *t, int32_t bci)
{
	assert_true(t->f.nout < t->cap);
	t->f.out[t->f.nout++] = (struct jpb_flow_event){
		.method = 1, .bci = bci, .status = JPB_FLOW_CERTAIN, .ncand = 1,
	};
}

/* A candidate: an unrelated event, the last LEN events of the gap's
 * history, the anchor, then either GOOD filler events and the events
 * after the gap or (GOOD 0) a dead end. */
static void candidate(struct th *t, int len, int good, int32_t other)
{
	put(t, other);
	for (int k = t->ctx - len; k < t->ctx; k++)
		put(t, HIST + k);
	put(t, ANCHOR);
	if (good) {
		for (int k = 0; k < good; k++)
			put(t, FILLER);
		for (int k = 0; k < NAFTER; k++)
			put(t, AFTER + k);
	} else {
		for (int k = 0; k < 3; k++)
			put(t, 500 + other + k);
	}
}

/* The thread, with the one good candidate (NFILL filler events) at rank
 * GOOD_RANK (0-based); candidates are laid out good first, so that the
 * dead ends (after it) cannot reconnect through it. */
static struct th *thread_ctx(int good_rank, int nfill, int ctx)
{
	struct th *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->ctx = ctx;
	t->cap = 6 * (size_t)ctx + 256 + (size_t)nfill;
	t->f.out = malloc(t->cap * sizeof(*t->f.out));
	assert_non_null(t->f.out);
	candidate(t, ctx - 1 - good_rank, nfill, 900);
	for (int r = 0, o = 0; r < 4; r++)
		if (r != good_rank)
			candidate(t, ctx - 1 - r, 0, 910 + 10 * o++);
	for (int k = 0; k < ctx; k++)
		put(t, HIST + k);
	put(t, ANCHOR);
	t->gap = (struct gapmark){ .at = t->f.nout };
	for (int k = 0; k < NAFTER; k++)
		put(t, AFTER + k);
	t->f.gaps = &t->gap;
	t->f.ngaps = 1;
	return t;
}

static struct th *thread(int good_rank, int nfill)
{
	return thread_ctx(good_rank, nfill, CTX);
}

static size_t recovered(const struct th *t, size_t *at)
{
	size_t n = 0;
	for (size_t i = 0; i < t->f.nout; i++)
		if (t->f.out[i].status == JPB_FLOW_RECOVERED) {
			*at = i;
			n++;
		}
	return n;
}

/* Recover T's gap and free T: the events recovered, which the output
 * gained, the last of them a filler. */
static size_t recover_and_free(struct th *t)
{
	size_t before = t->f.nout, at = 0;
	assert_int_equal(flow_recover(&t->f), 0);
	size_t n = recovered(t, &at);
	assert_int_equal(t->f.nout, before + n);
	if (n)
		assert_int_equal(t->f.out[at].bci, FILLER);
	free(t->f.out);
	free(t);
	return n;
}

/* The best candidate fills NFILL events (20000 at most). */
static void best_fills(int nfill)
{
	struct th *t = thread(0, nfill);
	size_t before = t->f.nout, at = 0;
	assert_int_equal(flow_recover(&t->f), 0);
	assert_int_equal(t->f.nout, before + (size_t)nfill);
	assert_int_equal(recovered(t, &at), (size_t)nfill);
	assert_int_equal(at + 1, t->gap.at + (size_t)nfill);
	assert_int_equal(t->f.out[at].bci, FILLER);
	assert_int_equal(t->f.out[at].ncand, 4);
	assert_int_equal(t->f.out[at + 1].bci, AFTER);
	free(t->f.out);
	free(t);
}

static void test_best_fills(void **state)
{
	(void)state;
	best_fills(1);
}

static void test_best_fills_20000(void **state)
{
	(void)state;
	best_fills(20000);
}

static void declined(int good_rank, int nfill)
{
	assert_int_equal(recover_and_free(thread(good_rank, nfill)), 0);
}

static void test_second_best_declined(void **state)
{
	(void)state;
	declined(1, 1);
}

static void test_longer_than_20000_declined(void **state)
{
	(void)state;
	declined(0, 20001);
}

/* The good candidate (NFILL filler events) whose continuation differs
 * from the events after the gap at the (AT+1)-th: recovered events. */
static size_t reconnect_differing(int nfill, int at)
{
	struct th *t = thread(0, nfill);
	size_t i = 0;
	while (t->f.out[i].bci != FILLER)
		i++;
	t->f.out[i + (size_t)nfill + (size_t)at].bci = 999;
	return recover_and_free(t);
}

/* A continuation must repeat 8 events after the gap (3 recur by chance
 * in a loop), 16 after a copy of 1024 events or more (as many as both
 * segments hold: here the 12 after the gap). */
static void test_reconnection_must_agree(void **state)
{
	(void)state;
	assert_int_equal(reconnect_differing(1, 4), 0);
	assert_int_equal(reconnect_differing(1, 9), 1);
	assert_int_equal(reconnect_differing(2000, 9), 0);
	assert_int_equal(reconnect_differing(2000, 11), 0);
	assert_int_equal(reconnect_differing(2000, 12), 2000);
}

/* The events the best candidate fills, CTX events of history (its
 * concrete suffix: CTX - 1 events and the anchor) and NFILL filler
 * events. */
static size_t fills_on_suffix(int ctx, int nfill)
{
	return recover_and_free(thread_ctx(0, nfill, ctx));
}

/* A suffix of 64 events may copy up to 20000; one of 16-63 at most as
 * many events as it holds; one under 16 none. */
static void test_suffix_bounds_copy(void **state)
{
	(void)state;
	assert_int_equal(fills_on_suffix(64, 20000), 20000);
	assert_int_equal(fills_on_suffix(63, 63), 63);
	assert_int_equal(fills_on_suffix(63, 64), 0);
	assert_int_equal(fills_on_suffix(20, 20), 20);
	assert_int_equal(fills_on_suffix(20, 21), 0);
	assert_int_equal(fills_on_suffix(16, 1), 1);
	assert_int_equal(fills_on_suffix(15, 1), 0);
}

/* The concrete suffix is compared up to MAX_SUFFIX (2048) events: where
 * the candidates' histories agree with the gap's for thousands of events,
 * the one agreeing longest ranks first, not the nearest (issue 8 sixth
 * round; with 512 the four candidates below tied and the nearest, a dead
 * end, was tried).  Beyond the cap they tie again and the nearest wins. */
static void test_long_suffix_ranks(void **state)
{
	(void)state;
	assert_int_equal(fills_on_suffix(600, 5), 5);
	assert_int_equal(fills_on_suffix(2047, 5), 5);
	assert_int_equal(fills_on_suffix(2100, 5), 0);
}

/* Timing for the partial fills: windows of 16 events share a TSC, 10
 * ticks per event, so the cost model (recover_time.c) prices an
 * interpreted event at 10 ticks. */
static void put_timed(struct th *t, int32_t bci)
{
	put(t, bci);
	t->f.out[t->f.nout - 1].tsc = (t->f.nout - 1) / 16 * 160;
}

/* NCAND candidates on the gap's history (CTX - 1, CTX - 2, ... events and
 * the anchor), each continuing with the same NSHARED events and then a
 * dead end of its own: none reconnects.  The gap's budget is BUDGET
 * ticks. */
static struct th *unconnected(int ncand, int nshared, uint64_t budget)
{
	struct th *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->ctx = CTX;
	t->cap = (size_t)ncand * (CTX + (size_t)nshared + 8) + CTX + 64;
	t->f.out = malloc(t->cap * sizeof(*t->f.out));
	assert_non_null(t->f.out);
	for (int r = 0; r < ncand; r++) {
		put_timed(t, 900 + 10 * r);
		for (int k = r + 1; k < CTX; k++)
			put_timed(t, HIST + k);
		put_timed(t, ANCHOR);
		for (int k = 0; k < nshared; k++)
			put_timed(t, SHARED + k);
		for (int k = 0; k < 3; k++)
			put_timed(t, 5000 + 10 * r + k);
	}
	for (int k = 0; k < CTX; k++)
		put_timed(t, HIST + k);
	put_timed(t, ANCHOR);
	uint64_t t0 = t->f.out[t->f.nout - 1].tsc + 1;
	t->gap = (struct gapmark){ .at = t->f.nout, .t0 = t0, .t1 = t0 + budget };
	for (int k = 0; k < NAFTER; k++) {
		put(t, AFTER + k);
		t->f.out[t->f.nout - 1].tsc = t0 + budget + 1;
	}
	t->f.gaps = &t->gap;
	t->f.ngaps = 1;
	return t;
}

/* Recovered events at the gap of unconnected(NCAND, NSHARED, BUDGET):
 * the candidates' shared events in order, timed within the gap. */
static size_t partial(int ncand, int nshared, uint64_t budget)
{
	struct th *t = unconnected(ncand, nshared, budget);
	size_t before = t->f.nout, at = 0, n;
	assert_int_equal(flow_recover(&t->f), 0);
	n = recovered(t, &at);
	assert_int_equal(t->f.nout, before + n);
	for (size_t k = 0; k < n; k++) {
		const struct jpb_flow_event *e = &t->f.out[t->gap.at + k];
		assert_int_equal(e->status, JPB_FLOW_RECOVERED);
		assert_int_equal(e->bci, SHARED + (int32_t)k);
		assert_int_equal(e->ncand, ncand);
		assert_true(e->tsc >= t->gap.t0 && e->tsc <= t->gap.t0 + 10 * n);
	}
	if (n)
		assert_int_equal(t->f.out[t->gap.at + n].bci, AFTER);
	free(t->f.out);
	free(t);
	return n;
}

/* Where no candidate reconnects, the start of the best one's
 * continuation fills the gap as far as two other ranked candidates
 * repeat it, no longer than its common suffix (CTX events here), within
 * the budget, and at least 16 events (issue 8 seventh round). */
static void test_partial_fill(void **state)
{
	(void)state;
	assert_int_equal(partial(3, 40, 1000000), 40);
	assert_int_equal(partial(4, 40, 1000000), 40);
	assert_int_equal(partial(3, 200, 1000000), CTX);
	assert_int_equal(partial(3, 40, 300), 30);
	/* one other candidate repeating it is not enough */
	assert_int_equal(partial(2, 40, 1000000), 0);
	assert_int_equal(partial(3, 15, 1000000), 0);
	assert_int_equal(partial(3, 40, 150), 0);
}

/* A loop of 8 events (LOOP.., the anchor its last) ran NELSE periods
 * elsewhere, then 5 filler events and the events after the gap; before
 * the gap it ran NIS periods.  The events recovered. */
static size_t loop_elsewhere(int nelse, int nis)
{
	struct th *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->cap = 8 * (size_t)(nelse + nis) + 2 * NAFTER + 16;
	t->f.out = malloc(t->cap * sizeof(*t->f.out));
	assert_non_null(t->f.out);
	put(t, 900);
	for (int k = 0; k < 8 * nelse; k++)
		put(t, LOOP + k % 8);
	for (int k = 0; k < 5; k++)
		put(t, FILLER);
	for (int k = 0; k < NAFTER; k++)
		put(t, AFTER + k);
	put(t, 910);
	for (int k = 0; k < 8 * nis; k++)
		put(t, LOOP + k % 8);
	t->gap = (struct gapmark){ .at = t->f.nout };
	for (int k = 0; k < NAFTER; k++)
		put(t, AFTER + k);
	t->f.gaps = &t->gap;
	t->f.ngaps = 1;
	return recover_and_free(t);
}

/* The loop's previous periods before the gap (own candidates) rank
 * first and run into the gap.  Where the loop ran as long elsewhere
 * (80 events of history each), that candidate ranks first and fills;
 * where it ran longer before the gap (104 events), the one from
 * elsewhere ranks below three of its periods and is a guess: no fill
 * (11 such fills over 240 runs aligned 0.56). */
static void test_loop_elsewhere(void **state)
{
	(void)state;
	assert_int_equal(loop_elsewhere(10, 10), 5);
	assert_int_equal(loop_elsewhere(10, 13), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_best_fills),
		cmocka_unit_test(test_best_fills_20000),
		cmocka_unit_test(test_second_best_declined),
		cmocka_unit_test(test_longer_than_20000_declined),
		cmocka_unit_test(test_reconnection_must_agree),
		cmocka_unit_test(test_suffix_bounds_copy),
		cmocka_unit_test(test_long_suffix_ranks),
		cmocka_unit_test(test_partial_fill),
		cmocka_unit_test(test_loop_elsewhere),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
