// SPDX-License-Identifier: MIT
/*
 * Recovery and a candidate cut by a gap of its own (user/flow/recover.c,
 * docs/RECONSTRUCTION.md "Recovery" and issue 8 fifth round).  The best
 * candidate's continuation must reconnect to the events after the gap
 * within its own segment.  Where it runs into its own gap first, it does
 * not fill, even when the events after ITS gap are those after OURS:
 * reading on across the candidate's gap (its events before the gap, then
 * those after it) was measured at 0.15-0.48 aligned per fill on jython
 * and rejected, and a candidate whose own gap ends where ours does never
 * occurred on the workloads.
 *
 * A hand-built thread of one method, no timing (budget unknown): the
 * candidate is 20 events of the gap's history (bci 100-119), the anchor
 * (200), NFILL filler events (300), then the 12 events that follow the
 * gap (400-411); the incomplete segment repeats the history and the
 * anchor, then the gap and the same 12 events.  Without a gap inside the
 * candidate, the fill is the NFILL filler events; with one between its
 * filler and its 400-411, nothing is filled (no program model: no
 * shortest path either).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/flow/flow_int.h"

#define CTX 20
#define ANCHOR 200
#define FILLER 300
#define AFTER 400
#define NAFTER 12
#define NFILL 5
#define CAP 128

struct th {
	struct flow f;
	struct gapmark gaps[2];
	struct jpb_flow_event ev[CAP];
};

static void put(struct th *t, int32_t bci)
{
	assert_true(t->f.nout < CAP);
	t->ev[t->f.nout++] = (struct jpb_flow_event){
		.method = 1, .bci = bci, .status = JPB_FLOW_CERTAIN, .ncand = 1,
	};
}

/* The thread, with (OWN) or without a gap inside the candidate; the
 * recovered events' bcis into FILL, their count returned.  *AT gets the
 * index of the first recovered event, which must be the gap's. */
static size_t run(int own, int32_t *fill, size_t *at)
{
	struct th *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->f.out = t->ev;
	t->f.capo = CAP;
	size_t ng = 0;
	put(t, 900);
	for (int k = 0; k < CTX; k++)
		put(t, 100 + k);
	put(t, ANCHOR);
	for (int k = 0; k < NFILL; k++)
		put(t, FILLER);
	if (own)
		t->gaps[ng++] = (struct gapmark){ .at = t->f.nout };
	for (int k = 0; k < NAFTER; k++)
		put(t, AFTER + k);
	put(t, 950);
	for (int k = 0; k < CTX; k++)
		put(t, 100 + k);
	put(t, ANCHOR);
	size_t gap = t->f.nout;
	t->gaps[ng++] = (struct gapmark){ .at = gap };
	for (int k = 0; k < NAFTER; k++)
		put(t, AFTER + k);
	put(t, 960);
	t->f.gaps = t->gaps;
	t->f.ngaps = ng;
	size_t before = t->f.nout, n = 0;
	assert_int_equal(flow_recover(&t->f), 0);
	*at = 0;
	for (size_t i = 0; i < t->f.nout; i++) {
		const struct jpb_flow_event *e = &t->f.out[i];
		if (e->status != JPB_FLOW_RECOVERED)
			continue;
		if (!n)
			*at = i;
		fill[n++] = e->bci;
	}
	assert_int_equal(t->f.nout, before + n);
	/* the last gap's events are untouched */
	assert_int_equal(t->f.out[gap + n].bci, AFTER);
	assert_int_equal(t->f.out[t->f.nout - 1].bci, 960);
	if (t->f.out != t->ev)
		free(t->f.out);
	free(t);
	return n;
}

/* The control: the candidate reconnects in its own segment and fills
 * its NFILL filler events, at the gap. */
static void test_candidate_reconnects(void **state)
{
	(void)state;
	int32_t fill[CAP];
	size_t at;
	assert_int_equal(run(0, fill, &at), NFILL);
	assert_int_equal(at, 1 + CTX + 1 + NFILL + NAFTER + 1 + CTX + 1);
	for (int k = 0; k < NFILL; k++)
		assert_int_equal(fill[k], FILLER);
}

/* Its own gap between its filler and the events after ours: no fill,
 * though what follows its gap is what follows ours. */
static void test_cut_by_own_gap(void **state)
{
	(void)state;
	int32_t fill[CAP];
	size_t at;
	assert_int_equal(run(1, fill, &at), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_candidate_reconnects),
		cmocka_unit_test(test_cut_by_own_gap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
