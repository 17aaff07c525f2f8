// SPDX-License-Identifier: MIT
/*
 * Windowed reconstruction (docs/RECONSTRUCTION.md, "Windows"): a thread
 * reconstructed in windows of 1, 2, 3, 7 and 64 flow events gives the
 * same flow as in one window (but for recovered events, with a gap), and a recursion 40 frames deep whose
 * returns come windows after its calls still returns through every frame
 * with certainty (the stack is carried across the cuts, the decoded
 * events are dropped behind them); a thread said to have no gap is
 * written in smaller windows, with the same flow.
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
#include "flow/flow_int.h"
#include "event_script.h"
#include "script_fixture.h"

static const char *src =
	"public class Deep {\n"
	"    static int down(int n) { if (n == 0) return 0; return down(n - 1) + 1; }\n"
	"}\n";

#define DEPTH 40
#define CL_ENTRY 1

static int setup(void **state)
{
	static const char *const cls[] = { "Deep" };
	struct script_fx *x = script_fx_new(src, cls, 1);
	*state = x;
	if (!x)
		return 0; /* no javac: every case skips */
	return 0;
}

/* down(DEPTH) interpreted: each level runs iload_0 ifne iload_0 iconst_1
 * isub invokestatic (bcis 0 1 6 7 8 9), the last iload_0 ifne iconst_0
 * ireturn (0 1 4 5), then every level iconst_1 iadd ireturn (12 13 14). */
static void append(struct script_fx *x)
{
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	for (int i = 0; i < DEPTH; i++) {
		script_ops(&x->s, 0x1a, 0x9a, 0x1a, 0x04, 0x64, 0xb8, -1);
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	}
	script_ops(&x->s, 0x1a, 0x9a, 0x03, 0xac, -1);
	for (int i = 0; i < DEPTH; i++)
		script_ops(&x->s, 0x04, 0x60, 0xac, -1);
}

static void build(struct script_fx *x)
{
	x->s.n = 0;
	append(x);
}

/* The flow of the events with flow_opts.window WINDOW, copied. */
static struct jpb_flow_event *run(struct script_fx *x, unsigned window, size_t *n,
				  struct flow_summary *s)
{
	struct flow *f;
	struct flow_opts o = { .window = window };
	assert_int_equal(flow_alloc(&f, x->p, &o), 0);
	assert_int_equal(flow_set_codelet(f, CL_ENTRY, "zerolocals"), 0);
	const struct jpb_flow_event *out;
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, n, s), 0);
	struct jpb_flow_event *v = malloc((*n + 1) * sizeof(*v));
	assert_non_null(v);
	memcpy(v, out, *n * sizeof(*v));
	if (*n) {
		struct flow_method_info m = flow_method(f, v[0].method);
		assert_non_null(m.name);
		assert_string_equal(m.name, "down");
	}
	flow_free(f);
	return v;
}

static void test_deep_stack_across_windows(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	build(x);
	size_t n;
	struct flow_summary s;
	struct jpb_flow_event *v = run(x, 1, &n, &s);
	size_t want = DEPTH * 6 + 4 + DEPTH * 3;
	assert_int_equal(n, want);
	size_t k = 0;
	for (int i = 0; i < DEPTH; i++) {
		static const int32_t call[] = { 0, 1, 6, 7, 8, 9 };
		for (int j = 0; j < 6; j++, k++)
			assert_int_equal(v[k].bci, call[j]);
	}
	static const int32_t last[] = { 0, 1, 4, 5 };
	for (int j = 0; j < 4; j++, k++)
		assert_int_equal(v[k].bci, last[j]);
	for (int i = 0; i < DEPTH; i++) {
		static const int32_t ret[] = { 12, 13, 14 };
		for (int j = 0; j < 3; j++, k++) {
			assert_int_equal(v[k].bci, ret[j]);
			/* the outermost return's caller is unknown: still certain,
			 * nothing follows it */
			assert_int_equal(v[k].status, JPB_FLOW_CERTAIN);
			assert_int_equal(v[k].method, v[0].method);
		}
	}
	assert_int_equal(s.by_status[JPB_FLOW_CERTAIN], want);
	free(v);
}

/* The events other than recovered ones, in order (recovery sees one
 * window's history, so its fills may differ; nothing else may). */
static size_t unrecovered(struct jpb_flow_event *v, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].status != JPB_FLOW_RECOVERED)
			v[w++] = v[i];
	return w;
}

static void same_as_one(struct script_fx *x)
{
	size_t n1;
	struct flow_summary s1;
	struct jpb_flow_event *one = run(x, 1u << 30, &n1, &s1);
	n1 = unrecovered(one, n1);
	static const unsigned windows[] = { 1, 2, 3, 7, 64 };
	for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
		size_t n;
		struct flow_summary s;
		struct jpb_flow_event *v = run(x, windows[w], &n, &s);
		n = unrecovered(v, n);
		assert_int_equal(n, n1);
		assert_memory_equal(v, one, n * sizeof(*v));
		assert_int_equal(s.gaps, s1.gaps);
		assert_int_equal(s.resyncs, s1.resyncs);
		free(v);
	}
	free(one);
}

/* An overflow gap before the script's event AT, timed from its
 * neighbours. */
static void insert_gap(struct script_fx *x, size_t at)
{
	script_add(&x->s, JPB_DEV_TRANSITION); /* room for one more event */
	memmove(&x->s.ev[at + 1], &x->s.ev[at], (x->s.n - 1 - at) * sizeof(*x->s.ev));
	struct jpb_decoded_event *g = &x->s.ev[at];
	memset(g, 0, sizeof(*g));
	g->kind = JPB_DEV_GAP;
	g->what = JPB_GAP_OVERFLOW;
	g->tsc = g[-1].tsc;
	g->end_tsc = g[1].tsc;
}

static void test_windows_same_as_one(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	build(x);
	same_as_one(x);
	/* a gap in the middle of the unwinding: the position is found again
	 * by resynchronisation, identically whatever the window */
	build(x);
	insert_gap(x, x->s.n - 3 * (DEPTH / 2));
	same_as_one(x);
}

/* What a sink was given: the events, its largest put, and how many
 * events it had before the thread's end (flow_finish). */
struct got {
	struct jpb_flow_event *v;
	size_t n, cap, largest, before_end;
};

static int got_put(void *arg, const struct jpb_flow_event *v, size_t n)
{
	struct got *g = arg;
	if (jpb_grow((void **)&g->v, &g->cap, g->n + n, sizeof(*v)))
		return jpb_err_nomem;
	memcpy(g->v + g->n, v, n * sizeof(*v));
	g->n += n;
	g->largest = n > g->largest ? n : g->largest;
	return 0;
}

/* The script's flow with the default window, the thread said GAPLESS. */
static void run_gapless(struct script_fx *x, int gapless, struct got *g)
{
	struct flow *f;
	struct flow_opts o = { 0 };
	assert_int_equal(flow_alloc(&f, x->p, &o), 0);
	assert_int_equal(flow_set_codelet(f, CL_ENTRY, "zerolocals"), 0);
	struct flow_sink sk = { got_put, g };
	memset(g, 0, sizeof(*g));
	assert_int_equal(flow_begin(f, &sk, gapless), 0);
	for (size_t i = 0; i < x->s.n; i++)
		assert_int_equal(flow_push(f, &x->s.ev[i]), 0);
	g->before_end = g->n;
	assert_int_equal(flow_finish(f, NULL), 0);
	flow_free(f);
}

/* A thread of 40 k flow events, more than a gapless thread's window
 * (32 k) and less than the default (512 k): said gapless, it is written
 * in several windows (some written before its end), with the flow of
 * one; said gapless but with a gap (a summary that does not match the
 * stream), it gets the default window from that gap on, so here one
 * window, as without the word. */
static void test_gapless_window(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	build(x);
	while (x->s.n < 40000)
		append(x);
	struct got one, parts;
	run_gapless(x, 0, &one);
	run_gapless(x, 1, &parts);
	assert_true(one.n > 32768);
	assert_int_equal(one.before_end, 0);
	assert_true(parts.before_end > 0);
	assert_true(parts.largest <= 32768);
	assert_int_equal(parts.n, one.n);
	assert_memory_equal(parts.v, one.v, one.n * sizeof(*one.v));
	free(parts.v);
	free(one.v);
	/* a gap among the first events */
	insert_gap(x, 100);
	run_gapless(x, 0, &one);
	run_gapless(x, 1, &parts);
	assert_int_equal(one.before_end, 0);
	assert_int_equal(parts.before_end, 0);
	assert_int_equal(parts.n, one.n);
	assert_memory_equal(parts.v, one.v, one.n * sizeof(*one.v));
	free(parts.v);
	free(one.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deep_stack_across_windows),
		cmocka_unit_test(test_windows_same_as_one),
		cmocka_unit_test(test_gapless_window),
	};
	return cmocka_run_group_tests(tests, setup, script_fx_teardown);
}
