// SPDX-License-Identifier: MIT
/* The call-structure walker and the CCT on hand-built flows: each test
 * lists flow events (method, bci, opcode) and the calls, returns, unwinds
 * and breaks the walker must find (docs/EXPORTS.md, "Walker rules"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "export/calls/cct.h"
#include "export/calls/walk.h"
#include "records_flow.h"

/* JVMS opcodes used below */
enum {
	NOP = 0x00, ICONST_0 = 0x03, ILOAD = 0x15, IADD = 0x60, IDIV = 0x6c,
	GOTO = 0xa7, IRETURN = 0xac, RETURN = 0xb1, NEW = 0xbb,
	INVOKESTATIC = 0xb8, INVOKEVIRTUAL = 0xb6, ATHROW = 0xbf,
};

struct ev {
	uint32_t method;
	int32_t bci;
	uint8_t opcode;
};

/* What the walker reported, as "call B@1 return B ..." */
struct log {
	char s[2048];
	struct cct *cct;
};

static int record(void *arg, const struct walk_event *we)
{
	struct log *l = arg;
	char one[64] = "";
	switch (we->kind) {
	case WALK_CALL:
		snprintf(one, sizeof(one), "call %u@%d ", we->frame->method,
			 we->frame->callsite);
		break;
	case WALK_ROOT:
	case WALK_RETURN:
	case WALK_UNWIND:
		snprintf(one, sizeof(one), "%s %u ", walk_kind_name(we->kind),
			 we->frame->method);
		break;
	case WALK_DROP:
		snprintf(one, sizeof(one), "drop %u(%s) ", we->frame->method,
			 walk_reason_name(we->reason));
		break;
	case WALK_BREAK:
		snprintf(one, sizeof(one), "break(%s) ", walk_reason_name(we->reason));
		break;
	default:
		break;
	}
	strncat(l->s, one, sizeof(l->s) - strlen(l->s) - 1);
	return l->cct ? cct_on_event(l->cct, we) : 0;
}

/* Walk EV (N events, TSC = 10 * index) to the end; the log is in L. */
static struct walk_stats run(const struct ev *ev, size_t n, struct log *l)
{
	struct walk *w;
	assert_int_equal(walk_alloc(&w, record, l), 0);
	for (size_t i = 0; i < n; i++) {
		struct jpb_flow_event e = { ev[i].method, ev[i].bci, ev[i].opcode,
					    ev[i].method ? JPB_FLOW_CERTAIN : JPB_FLOW_UNKNOWN,
					    1, 0, 10 * i };
		assert_int_equal(walk_event(w, &e), 0);
	}
	assert_int_equal(walk_end(w), 0);
	assert_int_equal(walk_depth(w), 0);
	struct walk_stats st = *walk_stats(w);
	walk_free(w);
	if (l->cct)
		cct_thread_done(l->cct, &st);
	return st;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_call_return(void **state)
{
	(void)state;
	/* 1 calls 2 at bci 1; 2 returns; 1 returns */
	static const struct ev ev[] = {
		{ 1, 0, ICONST_0 }, { 1, 1, INVOKESTATIC }, { 2, 0, ILOAD },
		{ 2, 1, IRETURN }, { 1, 4, RETURN },
	};
	struct log l = { "", NULL };
	struct walk_stats st = run(ev, N(ev), &l);
	assert_string_equal(l.s, "root 1 call 2@1 return 2 return 1 ");
	assert_int_equal(st.calls, 1);
	assert_int_equal(st.breaks, 0);
	assert_int_equal(st.max_depth, 2);
}

static void test_native_invoke_no_frame(void **state)
{
	(void)state;
	/* the invoke at bci 1 is followed by the caller's next bytecode */
	static const struct ev ev[] = {
		{ 1, 0, ICONST_0 }, { 1, 1, INVOKESTATIC }, { 1, 4, ILOAD },
		{ 1, 5, GOTO }, { 1, 0, ICONST_0 },
	};
	struct log l = { "", NULL };
	struct walk_stats st = run(ev, N(ev), &l);
	assert_string_equal(l.s, "root 1 drop 1(end) ");
	assert_int_equal(st.native, 1);
	assert_int_equal(st.calls, 0);
}

static void test_athrow_unwinds_two_frames(void **state)
{
	(void)state;
	/* 1 -> 2 -> 3; 3 throws; the handler is in 1 at bci 20 */
	static const struct ev ev[] = {
		{ 1, 3, INVOKESTATIC }, { 2, 0, INVOKEVIRTUAL }, { 3, 0, NEW },
		{ 3, 7, ATHROW }, { 1, 20, ILOAD }, { 1, 21, RETURN },
	};
	struct log l = { "", NULL };
	struct walk_stats st = run(ev, N(ev), &l);
	assert_string_equal(l.s, "root 1 call 2@3 call 3@0 unwind 3 unwind 2 return 1 ");
	assert_int_equal(st.unwinds, 2);
	assert_int_equal(st.breaks, 0);
}

static void test_implicit_exception(void **state)
{
	(void)state;
	/* idiv in 2 throws; caught in its caller 1 */
	static const struct ev ev[] = {
		{ 1, 0, INVOKESTATIC }, { 2, 0, ILOAD }, { 2, 1, IDIV },
		{ 1, 9, ILOAD },
	};
	struct log l = { "", NULL };
	run(ev, N(ev), &l);
	assert_string_equal(l.s, "root 1 call 2@0 unwind 2 drop 1(end) ");
}

static void test_start_mid_stack(void **state)
{
	(void)state;
	/* the trace starts inside 2, which returns into 1, whose caller 3 is
	 * reached by another return: each becomes a new root */
	static const struct ev ev[] = {
		{ 2, 5, ILOAD }, { 2, 6, IRETURN }, { 1, 7, IADD },
		{ 1, 8, IRETURN }, { 3, 12, RETURN },
	};
	struct log l = { "", NULL };
	struct walk_stats st = run(ev, N(ev), &l);
	assert_string_equal(l.s, "root 2 return 2 root 1 return 1 root 3 return 3 ");
	assert_int_equal(st.roots, 3);
	assert_int_equal(st.breaks, 0);
}

static void test_unknown_resync_below(void **state)
{
	(void)state;
	/* 1 -> 2, unknown events, then 1 again: 2 is dropped, 1 kept */
	static const struct ev ev[] = {
		{ 1, 0, INVOKESTATIC }, { 2, 0, ILOAD }, { 0, -1, IADD },
		{ 0, -1, IADD }, { 1, 30, ILOAD }, { 1, 31, RETURN },
	};
	struct log l = { "", NULL };
	struct walk_stats st = run(ev, N(ev), &l);
	assert_string_equal(l.s, "root 1 call 2@0 break(unknown) drop 2(unknown) return 1 ");
	assert_int_equal(st.breaks, 1);
	assert_int_equal(st.lost, 2);
}

static void test_gap_new_root(void **state)
{
	(void)state;
	/* a jump to the middle of 4, which is nowhere on the stack */
	static const struct ev ev[] = {
		{ 1, 0, INVOKESTATIC }, { 2, 0, ILOAD }, { 2, 1, IADD },
		{ 4, 17, ILOAD }, { 4, 18, IRETURN }, { 5, 3, RETURN },
	};
	struct log l = { "", NULL };
	struct walk_stats st = run(ev, N(ev), &l);
	/* 4 is a new root above 1 and 2, now stale; when 4 returns, 5 is
	 * not on the stack either */
	assert_string_equal(l.s, "root 1 call 2@0 break(jump) root 4 return 4 "
				 "break(jump) root 5 return 5 drop 2(end) drop 1(end) ");
	assert_int_equal(st.breaks, 2);
	assert_int_equal(st.max_depth, 3);
}

static void test_stale_frames_resume(void **state)
{
	(void)state;
	/* 1 -> 2, unknown events, a new root 3 (not on the stack); 3 returns
	 * into 1: 2 returned in the lost trace (dropped), 1 resumes with its
	 * context */
	static const struct ev ev[] = {
		{ 1, 0, INVOKESTATIC }, { 2, 0, ILOAD }, { 0, -1, NOP },
		{ 3, 5, IRETURN }, { 1, 3, ILOAD }, { 1, 4, RETURN },
	};
	struct log l = { "", NULL };
	assert_int_equal(cct_alloc(&l.cct, 0, NULL), 0);
	struct walk_stats st = run(ev, N(ev), &l);
	cct_finish(l.cct);
	assert_string_equal(l.s, "root 1 call 2@0 break(unknown) root 3 return 3 "
				 "drop 2(unknown) return 1 ");
	assert_int_equal(st.breaks, 1);
	assert_int_equal(st.drops, 1);
	/* contexts: 1, 1/2@0, 3 (a root); 1's three events are in node 1 */
	assert_int_equal(cct_count(l.cct), 4);
	assert_int_equal(cct_node(l.cct, 1)->bytecodes, 3);
	assert_int_equal(cct_node(l.cct, 3)->parent, 0);
	assert_int_equal(cct_node(l.cct, 3)->method, 3);
	cct_free(l.cct);
}

static void test_compiled_events(void **state)
{
	(void)state;
	/* compiled code: the callee's first event is not at bci 0, and an
	 * event whose bci is no instruction start (opcode 0) is followed by
	 * the caller: a return */
	static const struct ev ev[] = {
		{ 1, 2, INVOKEVIRTUAL }, { 2, 7, ILOAD }, { 2, 9, NOP },
		{ 1, 5, ILOAD }, { 1, 6, RETURN },
	};
	struct log l = { "", NULL };
	struct walk *w;
	assert_int_equal(walk_alloc(&w, record, &l), 0);
	for (size_t i = 0; i < N(ev); i++) {
		struct jpb_flow_event e = { ev[i].method, ev[i].bci, ev[i].opcode,
					    JPB_FLOW_DECODED, 1, 0, i };
		assert_int_equal(walk_event(w, &e), 0);
	}
	assert_int_equal(walk_end(w), 0);
	assert_string_equal(l.s, "root 1 call 2@2 return 2 return 1 ");
	assert_int_equal(walk_stats(w)->breaks, 0);
	walk_free(w);
}

/* 1 calls 2 at bci 4; 2 recurses (bci 6) twice; TSC 10 per event */
static const struct ev recursion[] = {
	{ 1, 4, INVOKESTATIC }, { 2, 0, ILOAD }, { 2, 6, INVOKESTATIC },
	{ 2, 0, ILOAD }, { 2, 6, INVOKESTATIC }, { 2, 0, ILOAD },
	{ 2, 1, IRETURN }, { 2, 9, IRETURN }, { 2, 9, IRETURN },
	{ 1, 7, RETURN },
};

static void test_recursion_kept(void **state)
{
	(void)state;
	struct log l = { "", NULL };
	assert_int_equal(cct_alloc(&l.cct, 0, NULL), 0);
	run(recursion, N(recursion), &l);
	cct_finish(l.cct);
	assert_string_equal(l.s, "root 1 call 2@4 call 2@6 call 2@6 return 2 "
				 "return 2 return 2 return 1 ");
	/* 1 / 2@4 / 2@6 / 2@6 */
	assert_int_equal(cct_count(l.cct), 5);
	const struct cct_node *n1 = cct_node(l.cct, 1), *n4 = cct_node(l.cct, 4);
	assert_int_equal(n1->bytecodes, 2);
	assert_int_equal(n1->bytecodes_incl, 10);
	assert_int_equal(n4->depth, 4);
	assert_int_equal(n4->invocations, 1);
	assert_int_equal(n4->bytecodes, 2);
	assert_int_equal(n4->callsite, 6);
	/* time: each event runs until the next one (10 ns), the last one
	 * has no successor */
	assert_int_equal(n1->time_incl_ns, 90);
	assert_int_equal(cct_totals(l.cct)->bytecodes, 10);
	cct_free(l.cct);
}

static void test_recursion_folded(void **state)
{
	(void)state;
	struct log l = { "", NULL };
	assert_int_equal(cct_alloc(&l.cct, 1, NULL), 0);
	run(recursion, N(recursion), &l);
	cct_finish(l.cct);
	assert_int_equal(cct_count(l.cct), 3); /* 1 / 2@4 */
	const struct cct_node *n2 = cct_node(l.cct, 2);
	assert_int_equal(n2->method, 2);
	assert_int_equal(n2->invocations, 3);
	assert_int_equal(n2->bytecodes, 8);
	assert_int_equal(n2->bytecodes_incl, 8);
	assert_int_equal(cct_node(l.cct, 1)->bytecodes_incl, 10);
	cct_free(l.cct);
}

static void test_cct_children_by_call_site(void **state)
{
	(void)state;
	/* 1 calls 2 from bci 3 and from bci 9: two contexts */
	static const struct ev ev[] = {
		{ 1, 3, INVOKESTATIC }, { 2, 0, RETURN }, { 1, 6, ILOAD },
		{ 1, 9, INVOKESTATIC }, { 2, 0, RETURN }, { 1, 12, ILOAD },
		{ 1, 3, INVOKESTATIC }, { 2, 0, RETURN }, { 1, 6, RETURN },
	};
	struct log l = { "", NULL };
	assert_int_equal(cct_alloc(&l.cct, 0, NULL), 0);
	run(ev, N(ev), &l);
	cct_finish(l.cct);
	assert_int_equal(cct_count(l.cct), 4);
	assert_int_equal(cct_node(l.cct, 2)->callsite, 3);
	assert_int_equal(cct_node(l.cct, 2)->invocations, 2);
	assert_int_equal(cct_node(l.cct, 3)->callsite, 9);
	assert_int_equal(cct_node(l.cct, 3)->invocations, 1);
	assert_int_equal(cct_node(l.cct, 1)->first_child, 2);
	assert_int_equal(cct_node(l.cct, 2)->next_sibling, 3);
	cct_free(l.cct);
}

static void test_unknown_events_have_no_context(void **state)
{
	(void)state;
	static const struct ev ev[] = {
		{ 0, -1, NOP }, { 1, 0, ILOAD }, { 0, -1, NOP }, { 1, 5, RETURN },
	};
	struct log l = { "", NULL };
	assert_int_equal(cct_alloc(&l.cct, 0, NULL), 0);
	struct walk_stats st = run(ev, N(ev), &l);
	cct_finish(l.cct);
	/* an unknown event before any frame breaks nothing */
	assert_int_equal(st.breaks, 1);
	assert_int_equal(cct_totals(l.cct)->lost, 2);
	assert_int_equal(cct_node(l.cct, 1)->bytecodes, 2);
	assert_int_equal(cct_node(l.cct, 0)->bytecodes_incl, 2);
	cct_free(l.cct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_return),
		cmocka_unit_test(test_native_invoke_no_frame),
		cmocka_unit_test(test_athrow_unwinds_two_frames),
		cmocka_unit_test(test_implicit_exception),
		cmocka_unit_test(test_start_mid_stack),
		cmocka_unit_test(test_unknown_resync_below),
		cmocka_unit_test(test_gap_new_root),
		cmocka_unit_test(test_stale_frames_resume),
		cmocka_unit_test(test_compiled_events),
		cmocka_unit_test(test_recursion_kept),
		cmocka_unit_test(test_recursion_folded),
		cmocka_unit_test(test_cct_children_by_call_site),
		cmocka_unit_test(test_unknown_events_have_no_context),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
