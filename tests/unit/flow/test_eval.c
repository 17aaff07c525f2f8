// SPDX-License-Identifier: MIT
/* The alignment behind every accuracy figure of `jpbpf eval`: pairs are
 * equal, in order and used once; skips on either side are found; unknown
 * flow events never align. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "eval/eval.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_identical(void **state)
{
	(void)state;
	uint64_t t[] = { 1, 2, 3, 4, 5, 6 };
	uint8_t m[6] = { 0 };
	assert_int_equal(eval_align(t, N(t), t, N(t), m), 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(m[i], 1);
}

static void test_flow_misses_a_stretch(void **state)
{
	(void)state;
	/* a loop body repeated: the flow lost 2 iterations in the middle */
	uint64_t t[] = { 9, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 4, 5, 6, 7 };
	uint64_t f[] = { 9, 1, 2, 3, 1, 2, 4, 5, 6, 7 };
	uint8_t m[N(f)] = { 0 };
	assert_int_equal(eval_align(t, N(t), f, N(f), m), N(f));
}

static void test_wrong_events_do_not_align(void **state)
{
	(void)state;
	uint64_t t[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	uint64_t f[] = { 1, 2, 33, 44, 5, 6, 7, 8, 9, 10 };
	uint8_t m[N(f)] = { 0 };
	assert_int_equal(eval_align(t, N(t), f, N(f), m), 8);
	assert_int_equal(m[2], 0);
	assert_int_equal(m[3], 0);
	assert_int_equal(m[4], 1);
}

static void test_extra_flow_events(void **state)
{
	(void)state;
	uint64_t t[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint64_t f[] = { 1, 2, 50, 51, 52, 3, 4, 5, 6, 7, 8 };
	uint8_t m[N(f)] = { 0 };
	assert_int_equal(eval_align(t, N(t), f, N(f), m), 8);
	assert_int_equal(m[2] + m[3] + m[4], 0);
}

static void test_unknown_never_aligns(void **state)
{
	(void)state;
	uint64_t t[] = { 0, 0, 0 };
	uint64_t f[] = { 0, 0, 0 };
	assert_int_equal(eval_align(t, N(t), f, N(f), NULL), 0);
}

static void test_reordered_counts_once(void **state)
{
	(void)state;
	/* the flow has the right events in the wrong order: at most one of
	 * the swapped pair can align (the LCS is 8; the greedy alignment is
	 * a lower bound of it and may drop the other one too) */
	uint64_t t[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	uint64_t f[] = { 1, 2, 3, 4, 6, 5, 7, 8, 9 };
	uint64_t n = eval_align(t, N(t), f, N(f), NULL);
	assert_true(n >= 7 && n <= 8);
	/* nothing in common */
	uint64_t g[] = { 11, 12, 13, 14, 15, 16, 17, 18, 19 };
	assert_int_equal(eval_align(t, N(t), g, N(g), NULL), 0);
}

static void test_definitions_printed(void **state)
{
	(void)state;
	const char *d = eval_definitions();
	const char *keys[] = { "PMD", "PDC", "PD ", "DA ", "PR ", "RA ", "hot10",
			       "attribution", "unjudged" };
	for (size_t i = 0; i < N(keys); i++)
		assert_non_null(strstr(d, keys[i]));
}

/* Extra stretches on both sides at one place (truth events lost from
 * the flow, flow events the truth does not hold there): both are
 * skipped at once and everything around them pairs. */
static void test_two_sided_skip(void **state)
{
	(void)state;
	static uint64_t t[1050], f[1300];
	size_t nt = 0, nf = 0;
	for (uint64_t k = 1; k <= 500; k++)
		t[nt++] = f[nf++] = k;           /* A */
	for (uint64_t k = 0; k < 50; k++)
		t[nt++] = 5000 + k % 7;          /* X: only in T */
	for (uint64_t k = 0; k < 300; k++)
		f[nf++] = 9000 + k % 11;         /* Y: only in F */
	for (uint64_t k = 501; k <= 1000; k++)
		t[nt++] = f[nf++] = k;           /* B */
	uint8_t m[1300] = { 0 };
	assert_int_equal(eval_align(t, nt, f, nf, m), 1000);
	for (size_t j = 500; j < 800; j++)
		assert_int_equal(m[j], 0);
	assert_int_equal(m[800], 1);
}

/* A recursive method returning twice through one areturn: the truth (JVMTI
 * steps) holds the location once, the flow twice; the second is unjudged,
 * and so is a third, but not a repeat whose run began unaligned nor a
 * wrong event. */
static void test_repeats_unjudged(void **state)
{
	(void)state;
	uint64_t t[] = { 1, 2, 7, 3, 4, 5, 6, 8, 10, 11, 12, 13 };
	uint64_t f[] = { 1, 2, 7, 7, 7, 3, 4, 5, 6, 9, 9, 10, 11, 12, 13 };
	uint8_t m[N(f)] = { 0 }, rep[N(f)];
	assert_int_equal(eval_align(t, N(t), f, N(f), m), 11);
	assert_int_equal(m[2], 1);
	assert_int_equal(m[3] + m[4] + m[9] + m[10], 0);
	assert_int_equal(eval_repeats(f, m, N(f), rep), 2);
	static const uint8_t want[N(f)] = { 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_memory_equal(rep, want, N(f));
	/* an aligned repeat (the truth has it twice) is no repeat to forgive */
	uint64_t t2[] = { 1, 7, 7, 3 }, f2[] = { 1, 7, 7, 3 };
	uint8_t m2[4] = { 0 }, rep2[4];
	assert_int_equal(eval_align(t2, 4, f2, 4, m2), 4);
	assert_int_equal(eval_repeats(f2, m2, 4, rep2), 0);
}

/* The decoder's gap began a few events before the simulator's loss: the
 * captured truth holds D (the events the decoder dropped), then the
 * events after the loss, which repeat D's code.  Skipping the flow's
 * first events after the gap agrees only until the truth's loss;
 * skipping D agrees on, and must be the resync taken, so every flow
 * event aligns. */
static void test_resync_prefers_longer_agreement(void **state)
{
	(void)state;
	static uint64_t t[200], f[200];
	size_t nt = 0, nf = 0;
	for (uint64_t k = 1; k <= 40; k++)
		t[nt++] = f[nf++] = k;                /* before the gap */
	static const uint64_t d[] = { 106, 107, 110, 114, 209, 210 };
	for (size_t k = 0; k < N(d); k++)
		t[nt++] = d[k];                       /* dropped by the decoder */
	static const uint64_t after[] = { 336, 338, 339, 100, 103, 106, 107,
					  110, 114, 209, 210 };
	for (size_t k = 0; k < N(after); k++)
		t[nt++] = f[nf++] = after[k];         /* after the loss */
	for (uint64_t k = 500; k < 560; k++)
		t[nt++] = f[nf++] = k;
	uint8_t m[200] = { 0 };
	assert_int_equal(eval_align(t, nt, f, nf, m), nf);
	assert_int_equal(m[40], 1);  /* 336, the first event after the gap */
}

/* A stretch wrong on both sides, longer than the one-sided skips tried
 * (a twin's code placed for 1500 events), whose flow part the truth
 * holds much later: both sides skip the stretch (3000 skipped) rather
 * than the truth jumping 4500 ahead, which would leave the 3000 events
 * after the stretch unaligned. */
static void test_long_two_sided_skip(void **state)
{
	(void)state;
	enum { A = 300, X = 1500, B = 3000 };
	static uint64_t t[A + X + B + X], f[A + X + B];
	size_t nt = 0, nf = 0;
	for (uint64_t k = 0; k < A; k++)
		t[nt++] = f[nf++] = 1 + k;
	for (uint64_t k = 0; k < X; k++)
		t[nt++] = 100000 + k;                 /* the truth's code */
	for (uint64_t k = 0; k < X; k++)
		f[nf++] = 200000 + k;                 /* the twin's */
	for (uint64_t k = 0; k < B; k++)
		t[nt++] = f[nf++] = 10000 + k;
	for (uint64_t k = 0; k < X; k++)
		t[nt++] = 200000 + k;                 /* the twin, later */
	static uint8_t m[A + X + B];
	assert_int_equal(eval_align(t, nt, f, nf, m), A + B);
	assert_int_equal(m[A + X], 1);
	assert_int_equal(m[A], 0);
}

/* A repeated body (a loop over similar strings) whose repetitions differ
 * in one element, and a gap after which the decoder resumed 150
 * repetitions (3 150 captured events) after the truth's position: the
 * greedy walk resynchronises at once on the next repetition's 20 equal
 * elements and stays 150 repetitions behind (batik at 40% loss: 6 000
 * events behind for 100 000 flow events, DA 0.91 where the LCS gives
 * 0.997).  Anchored on K-grams unique on both sides, every flow event
 * pairs with its own repetition. */
static void test_anchor_right_repetition(void **state)
{
	(void)state;
	enum { BODY = 20, REP = 200, KEPT = 10, RESUME = 160 };
	static uint64_t t[REP * (BODY + 1)], f[REP * (BODY + 1)];
	size_t nt = 0, nf = 0;
	for (uint64_t r = 0; r < REP; r++) {
		for (uint64_t k = 1; k <= BODY; k++) {
			t[nt++] = k;
			if (r < KEPT || r >= RESUME)
				f[nf++] = k;
		}
		t[nt++] = 100 + r;
		if (r < KEPT || r >= RESUME)
			f[nf++] = 100 + r;
	}
	static uint8_t m[REP * (BODY + 1)];
	assert_int_equal(eval_align(t, nt, f, nf, m), nf);
	assert_int_equal(m[KEPT * (BODY + 1) + BODY], 1); /* 100 + RESUME */
}

/* Compiled code runs the second instruction of a pair HotSpot's
 * interpreter fuses (iload+iload at bci 32 after 31), the truth does not
 * hold it.  In a loop dense with such pairs (HashMap.merge and a lambda
 * calling Integer.intValue, SimWork) those events broke every run of 4
 * agreeing events and equal ones around them went unpaired (DA_compiled
 * 0.966).  Left out of the alignment, every truth event pairs, in order,
 * and the left-out events stay unaligned. */
static void test_skip_fused_seconds(void **state)
{
	(void)state;
	/* one iteration: truth 31 35 39 42 46 | 100 104 207 208 211;
	 * compiled flow adds 32, 36, 43 and 101 (fused seconds) */
	static const uint64_t ti[] = { 31, 35, 39, 42, 46, 100, 104, 207, 208, 211 };
	static const uint64_t fi[] = { 31, 32, 35, 36, 39, 42, 43, 46, 100, 101,
				       104, 207, 208, 211 };
	static const uint8_t si[] = { 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 };
	enum { IT = 40 };
	static uint64_t t[N(ti) * IT], f[N(fi) * IT];
	static uint8_t skip[N(fi) * IT], m[N(fi) * IT];
	static size_t tof[N(fi) * IT];
	for (size_t k = 0; k < IT; k++) {
		memcpy(t + k * N(ti), ti, sizeof(ti));
		memcpy(f + k * N(fi), fi, sizeof(fi));
		memcpy(skip + k * N(fi), si, sizeof(si));
	}
	assert_int_equal(eval_align_skip(t, N(t), f, N(f), skip, m, tof), N(t));
	for (size_t j = 0, i = 0; j < N(f); j++) {
		assert_int_equal(m[j], !skip[j]);
		if (skip[j]) {
			assert_true(tof[j] == SIZE_MAX);
			continue;
		}
		assert_int_equal(tof[j], i);
		assert_true(t[tof[j]] == f[j]);
		i++;
	}
	/* nothing skipped: the same as eval_align_pairs */
	static uint8_t none[N(fi) * IT], m2[N(fi) * IT];
	memset(m, 0, sizeof(m));
	assert_int_equal(eval_align_skip(t, N(t), f, N(f), none, m2, NULL),
			 eval_align(t, N(t), f, N(f), m));
	assert_memory_equal(m, m2, N(f));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_sided_skip),
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_flow_misses_a_stretch),
		cmocka_unit_test(test_wrong_events_do_not_align),
		cmocka_unit_test(test_extra_flow_events),
		cmocka_unit_test(test_unknown_never_aligns),
		cmocka_unit_test(test_reordered_counts_once),
		cmocka_unit_test(test_definitions_printed),
		cmocka_unit_test(test_repeats_unjudged),
		cmocka_unit_test(test_resync_prefers_longer_agreement),
		cmocka_unit_test(test_long_two_sided_skip),
		cmocka_unit_test(test_skip_fused_seconds),
		cmocka_unit_test(test_anchor_right_repetition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
