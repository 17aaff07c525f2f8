// SPDX-License-Identifier: MIT
/*
 * Linkage frames chosen by their shape (RECONSTRUCTION.md, "Linkage frames
 * by their shape"; callees.c flow_linkage_targets): an interpreted
 * MethodHandle.invokeExact call (link_kind 1) has as candidate callees the
 * hidden LambdaForm$ methods (added here with flow_add_method_code, as
 * flow_io.c does for jvm_method_code records; the fixture has no *$Holder
 * classes), and stages only those whose descriptor in basic types is P,
 * P L, L P or L P L (P the call's parameters) with the call's return; all
 * of them when none fits.
 *
 * The hidden frames of each case have the same bytes of code (the tool
 * reads their descriptor only), so neither the lookahead of the method
 * entry (callee_runs_ops, 8 opcodes) nor the rest of the trace can tell
 * them apart: only their shape does.  They are added wrong-shaped first,
 * so that without the shape the first (the wrong one) would be chosen.
 *
 * Each thread starts in Ls.call / Ls.call2 (a resynchronisation with one
 * survivor: the caller's events are certain), enters the linkage frame,
 * runs all of its code, returns into the caller and ends there.  Each case
 * checks the exact (method, bci, status, ncand) sequence, and that the
 * only resynchronisation is the first.  On 230fe45 (before the shapes)
 * all but test_shape_none_fits fail: the first-added frame is chosen
 * among all of them.
 *
 * The last two cases (their own fixture) pin 1a342fe: the methods of a
 * class the program has whose name contains LambdaForm$ (a hidden
 * LambdaForm class the agent rebuilt) are linkage frames, its linkTo*
 * ones for invokedynamic call sites too.  On cc5a51e their events are
 * the same but the entry was an unknown callee: 2 and 3 resyncs.
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
#include "flow_expect.h"
#include "script_fixture.h"

/* Bytecode (javac 17): call: aload_0 iload_1 invokevirtual(2)
 * MethodHandle.invokeExact (I)I, istore_2(5) iload_2 iconst_3 iadd
 * ireturn(9); call2: aload_0 aload_1 iload_2 aload_3 invokevirtual(4)
 * MethodHandle.invokeExact (Ljava/lang/String;Z[I)V, return(7). */
static const char *src =
	"import java.lang.invoke.MethodHandle;\n"
	"public class Ls {\n"
	"    static int call(MethodHandle mh, int a) throws Throwable {\n"
	"        int r = (int) mh.invokeExact(a);\n"
	"        return r + 3;\n"
	"    }\n"
	"    static void call2(MethodHandle mh, String s, boolean z, int[] v) throws Throwable {\n"
	"        mh.invokeExact(s, z, v);\n"
	"    }\n"
	"}\n";

enum { CL_ENTRY = 1 };

/* A hidden LambdaForm method: jmethodID ID (unknown to the program). */
struct hidden {
	uint64_t id;
	const char *class_sig, *name, *sig;
};

#define LF(n) "Ljava/lang/invoke/LambdaForm$MH.0x0000000800c0" n ";"
#define LFN(n) "java/lang/invoke/LambdaForm$MH.0x0000000800c0" n ".invoke"

/* The code of the (I)I call's linkage frames: aload_0 pop iload_1
 * iconst_1 iadd iconst_2 imul iconst_3 isub iconst_4 iadd ireturn, 12
 * opcodes at bcis 0..11. */
static const uint8_t code_ii[] = { 0x2a, 0x57, 0x1b, 0x04, 0x60, 0x05,
				   0x68, 0x06, 0x64, 0x07, 0x60, 0xac };

/* The (Ljava/lang/String;Z[I)V call's: aload_0 pop aload_1 pop iload_2
 * pop aload_3 pop iconst_1 pop return, 11 opcodes at bcis 0..10. */
static const uint8_t code_v[] = { 0x2a, 0x57, 0x2b, 0x57, 0x1c, 0x57,
				  0x2d, 0x57, 0x04, 0x57, 0xb1 };

static int setup(void **state)
{
	static const char *const cls[] = { "Ls" };
	*state = script_fx_new(src, cls, 1);
	return 0;
}

/* Reconstruct X's script with the hidden methods H[0..NH) (each with
 * CODE) added in order, and fail unless the flow is exactly W and it
 * took RESYNCS resynchronisations. */
static void expect(struct script_fx *x, const struct hidden *h, size_t nh,
		   const uint8_t *code, size_t len, const struct flow_want *w,
		   size_t nw, uint64_t resyncs)
{
	struct flow_summary sum;
	struct flow *f;
	assert_int_equal(flow_alloc(&f, x->p, NULL), 0);
	assert_int_equal(flow_set_codelet(f, CL_ENTRY, "zerolocals"), 0);
	for (size_t k = 0; k < nh; k++)
		assert_int_equal(flow_add_method_code(f, h[k].id, h[k].class_sig, h[k].name,
						      h[k].sig, code, len),
				 0);
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, &n, &sum), 0);
	flow_expect_events(f, out, n, 256, w, nw);
	assert_int_equal(sum.resyncs, resyncs);
	flow_free(f);
}

/* Ls.call's script: its ops to the invoke, the entry, the linkage frame's
 * 12 opcodes, the rest of call. */
static void script_call(struct script_fx *x)
{
	x->s.n = 0;
	script_ops(&x->s, 0x2a, 0x1b, 0xb6, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0x57, 0x1b, 0x04, 0x60, 0x05, 0x68, 0x06, 0x64, 0x07, 0x60,
		   0xac, -1);
	script_ops(&x->s, 0x3d, 0x1c, 0x06, 0x60, 0xac, -1);
}

/* The flow of script_call with linkage frame LF, each of its events with
 * STATUS and NCAND, into W (20 events). */
static void want_call(struct flow_want *w, const char *lf, uint8_t status, uint16_t ncand)
{
	static const int32_t cbci[] = { 0, 1, 2, 5, 6, 7, 8, 9 };
	size_t n = 0;
	for (int k = 0; k < 3; k++)
		w[n++] = (struct flow_want){ "Ls.call", cbci[k], JPB_FLOW_CERTAIN, 1 };
	for (int32_t b = 0; b < 12; b++)
		w[n++] = (struct flow_want){ lf, b, status, ncand };
	for (int k = 3; k < 8; k++)
		w[n++] = (struct flow_want){ "Ls.call", cbci[k], JPB_FLOW_CERTAIN, 1 };
}

/* Ls.call2's script: its ops to the invoke, the entry, the linkage
 * frame's 11 opcodes, call2's return. */
static void script_call2(struct script_fx *x)
{
	x->s.n = 0;
	script_ops(&x->s, 0x2a, 0x2b, 0x1c, 0x2d, 0xb6, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0x57, 0x2b, 0x57, 0x1c, 0x57, 0x2d, 0x57, 0x04, 0x57, 0xb1, -1);
	script_ops(&x->s, 0xb1, -1);
}

/* The flow of script_call2 with linkage frame LF, its events with STATUS
 * and NCAND, into W (17 events). */
static void want_call2(struct flow_want *w, const char *lf, uint8_t status, uint16_t ncand)
{
	static const int32_t cbci[] = { 0, 1, 2, 3, 4, 7 };
	size_t n = 0;
	for (int k = 0; k < 5; k++)
		w[n++] = (struct flow_want){ "Ls.call2", cbci[k], JPB_FLOW_CERTAIN, 1 };
	for (int32_t b = 0; b < 11; b++)
		w[n++] = (struct flow_want){ lf, b, status, ncand };
	w[n++] = (struct flow_want){ "Ls.call2", 7, JPB_FLOW_CERTAIN, 1 };
}

#define NH(h) (sizeof(h) / sizeof((h)[0]))

/* script_call with hidden frames H: the flow is want_call's with LF. */
static void check_call(void **state, const struct hidden *h, size_t nh, const char *lf,
		       uint8_t status, uint16_t ncand)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	script_call(x);
	struct flow_want w[20];
	want_call(w, lf, status, ncand);
	expect(x, h, nh, code_ii, sizeof(code_ii), w, 20, 1);
}

/* script_call2 with hidden frames H: the flow is want_call2's with LF. */
static void check_call2(void **state, const struct hidden *h, size_t nh, const char *lf,
			uint8_t status, uint16_t ncand)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	script_call2(x);
	struct flow_want w[17];
	want_call2(w, lf, status, ncand);
	expect(x, h, nh, code_v, sizeof(code_v), w, 17, 1);
}

/* The (I)I call: a frame (L L)I (no shape of P = I: I, I L, L I, L I L)
 * added first, then (L I)I (L P): only the second is staged, so its
 * events are certain.  Without the shape both were, and the first was
 * chosen (ncand 2). */
static void test_shape_params(void **state)
{
	static const struct hidden h[] = {
		{ 0x7001, LF("1000"), "invoke", "(Ljava/lang/Object;Ljava/lang/Object;)I" },
		{ 0x7002, LF("1400"), "invoke", "(Ljava/lang/Object;I)I" },
	};
	check_call(state, h, NH(h), LFN("1400"), JPB_FLOW_CERTAIN, 1);
}

/* The same call: (L I)J first, its parameters right but its return not,
 * then (I L)I (P L): the second alone. */
static void test_shape_return(void **state)
{
	static const struct hidden h[] = {
		{ 0x7001, LF("1000"), "invoke", "(Ljava/lang/Object;I)J" },
		{ 0x7002, LF("1400"), "invoke", "(ILjava/lang/Object;)I" },
	};
	check_call(state, h, NH(h), LFN("1400"), JPB_FLOW_CERTAIN, 1);
}

/* Every shape: (L L)I first, then (I)I (P), (I L)I (P L), (L I)I (L P)
 * and (L I L)I (L P L): the four are staged (ncand 4), the first of them
 * chosen. */
static void test_shape_all_four(void **state)
{
	static const struct hidden h[] = {
		{ 0x7001, LF("1000"), "invoke", "(Ljava/lang/Object;Ljava/lang/Object;)I" },
		{ 0x7002, LF("1400"), "invoke", "(I)I" },
		{ 0x7003, LF("1800"), "invoke", "(ILjava/lang/Object;)I" },
		{ 0x7004, LF("1c00"), "invoke", "(Ljava/lang/Object;I)I" },
		{ 0x7005, LF("2000"), "invoke", "(Ljava/lang/Object;ILjava/lang/Object;)I" },
	};
	check_call(state, h, NH(h), LFN("1400"), JPB_FLOW_CHOSEN, 4);
}

/* No frame of the call's shape ((L L)I, (L I)J, (L I L L)I): all are
 * staged as before the shapes, the first chosen among the 3, and the
 * caller after the return is still certain (the flow keeps its place).
 * A hidden method of another class (a lambda proxy's apply, not a
 * linkage frame) with the same code is not among them: left to
 * resynchronisation (an unknown callee at the entry), it would be a 4th
 * candidate and the resyncs 2. */
static void test_shape_none_fits(void **state)
{
	static const struct hidden h[] = {
		{ 0x7001, LF("1000"), "invoke", "(Ljava/lang/Object;Ljava/lang/Object;)I" },
		{ 0x7002, LF("1400"), "invoke", "(Ljava/lang/Object;I)J" },
		{ 0x7003, LF("1800"), "invoke",
		  "(Ljava/lang/Object;ILjava/lang/Object;Ljava/lang/Object;)I" },
		{ 0x7004, "LLs$$Lambda$14.0x0000000800c02000;", "apply", "(Ljava/lang/Object;I)I" },
	};
	check_call(state, h, NH(h), LFN("1000"), JPB_FLOW_CHOSEN, 3);
}

/* Basic types: (String, boolean, int[])V is P = L I L, so the frame
 * (Object, Object, int, Object)V (L P) fits; (Object, Object, long,
 * Object)V (J for I) and one of 6 parameters (L L I L L L) added before it
 * do not. */
static void test_shape_basic_types(void **state)
{
	static const struct hidden h[] = {
		{ 0x7001, LF("1000"), "invoke",
		  "(Ljava/lang/Object;Ljava/lang/Object;JLjava/lang/Object;)V" },
		{ 0x7002, LF("1400"), "invoke",
		  "(Ljava/lang/Object;Ljava/lang/Object;ILjava/lang/Object;Ljava/lang/Object;"
		  "Ljava/lang/Object;)V" },
		{ 0x7003, LF("1800"), "invoke",
		  "(Ljava/lang/Object;Ljava/lang/Object;ILjava/lang/Object;)V" },
	};
	check_call2(state, h, NH(h), LFN("1800"), JPB_FLOW_CERTAIN, 1);
}

/* Basic types on the frame's side too: (MethodHandle, Object[], byte,
 * String)V is L L I L as well, and (Object, Object, int, Object,
 * Object)V is L P L: the two fit and are both staged, the first of them
 * chosen (ncand 2); the long one added before them is not. */
static void test_shape_two_fit(void **state)
{
	static const struct hidden h[] = {
		{ 0x7001, LF("1000"), "invoke",
		  "(Ljava/lang/Object;Ljava/lang/Object;JLjava/lang/Object;)V" },
		{ 0x7002, LF("1400"), "invoke",
		  "(Ljava/lang/invoke/MethodHandle;[Ljava/lang/Object;BLjava/lang/String;)V" },
		{ 0x7003, LF("1800"), "invoke",
		  "(Ljava/lang/Object;Ljava/lang/Object;ILjava/lang/Object;Ljava/lang/Object;)V" },
	};
	check_call2(state, h, NH(h), LFN("1400"), JPB_FLOW_CHOSEN, 2);
}

/* A method of a hidden class added once a flow has entered a call site
 * (flow_add_method_code between two threads) is among the site's
 * callees from then on: the site's filtered candidates, kept across
 * entries and threads (flow_entry_cands), are made again.  The call's
 * name and descriptor fit the method (a hidden-class target, no linkage
 * frame in the group's fixture).  Without it the first thread's entry is
 * an unknown callee, and so was the second's when the kept answer was
 * used (its events unknown, 2 resyncs). */
static void test_hidden_added_late(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	script_call(x);
	struct flow_summary sum;
	struct flow *f;
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_alloc(&f, x->p, NULL), 0);
	assert_int_equal(flow_set_codelet(f, CL_ENTRY, "zerolocals"), 0);
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, &n, &sum), 0);
	assert_true(sum.resyncs > 1);
	assert_int_equal(flow_add_method_code(f, 0x7001, "LLs$$Lambda$14.0x0000000800c02000;",
					      "invokeExact", "(I)I", code_ii, sizeof(code_ii)),
			 0);
	assert_int_equal(flow_thread(f, x->s.ev, x->s.n, &out, &n, &sum), 0);
	struct flow_want w[20];
	want_call(w, "Ls$$Lambda$14.0x0000000800c02000.invokeExact", JPB_FLOW_CERTAIN, 1);
	flow_expect_events(f, out, n, 256, w, 20);
	assert_int_equal(sum.resyncs, 1);
	flow_free(f);
}

/* The fixture of the rebuilt LambdaForm class cases: Ls again (call at
 * the same bcis), with lam and a nested class whose internal name,
 * Ls$LambdaForm$MH, contains LambdaForm$ as a hidden LambdaForm class's
 * does: the program has its class file, as it has those the agent
 * rebuilt.  Bytecode (javac 17): lam: iload_0 iconst_2 iadd istore_1(3)
 * invokedynamic(4) ()Ljava/util/function/IntSupplier;, astore_2(9)
 * iload_1 ireturn(11); Ls$LambdaForm$MH.invoke (Object, int)I: iload_1
 * iconst_2 imul iconst_1 iadd ireturn(5); linkToTargetMethod (Object)
 * Object: aload_0 areturn(1).  Its own fixture: in the group's, the
 * frame would be among the candidates of the other cases' calls. */
static const char *src_rebuilt =
	"import java.lang.invoke.MethodHandle;\n"
	"import java.util.function.IntSupplier;\n"
	"public class Ls {\n"
	"    static int call(MethodHandle mh, int a) throws Throwable {\n"
	"        int r = (int) mh.invokeExact(a);\n"
	"        return r + 3;\n"
	"    }\n"
	"    static int lam(int a) {\n"
	"        int b = a + 2;\n"
	"        IntSupplier s = () -> 7;\n"
	"        return b;\n"
	"    }\n"
	"    static class LambdaForm$MH {\n"
	"        static int invoke(Object mh, int a) {\n"
	"            return a * 2 + 1;\n"
	"        }\n"
	"        static Object linkToTargetMethod(Object site) {\n"
	"            return site;\n"
	"        }\n"
	"    }\n"
	"}\n";

static int setup_rebuilt(void **state)
{
	static const char *const cls[] = { "Ls", "Ls$LambdaForm$MH" };
	*state = script_fx_new(src_rebuilt, cls, 2);
	return 0;
}

/* The (I)I invokeExact enters Ls$LambdaForm$MH.invoke, (L I)I (L P), a
 * method of a class the program has whose name contains LambdaForm$,
 * and no hidden frame is known by its bytecode: since 1a342fe it is a
 * linkage frame (list 1), the one candidate, so its events are certain
 * and the only resynchronisation is the thread's start.  Before it was
 * in no list: an unknown callee left to resynchronisation, a second. */
static void test_rebuilt_lambda_form(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	script_ops(&x->s, 0x2a, 0x1b, 0xb6, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1b, 0x05, 0x68, 0x04, 0x60, 0xac, -1);
	script_ops(&x->s, 0x3d, 0x1c, 0x06, 0x60, 0xac, -1);
	static const int32_t cbci[] = { 0, 1, 2, 5, 6, 7, 8, 9 };
	struct flow_want w[14];
	size_t n = 0;
	for (int k = 0; k < 3; k++)
		w[n++] = (struct flow_want){ "Ls.call", cbci[k], JPB_FLOW_CERTAIN, 1 };
	for (int32_t b = 0; b < 6; b++)
		w[n++] = (struct flow_want){ "Ls$LambdaForm$MH.invoke", b, JPB_FLOW_CERTAIN, 1 };
	for (int k = 3; k < 8; k++)
		w[n++] = (struct flow_want){ "Ls.call", cbci[k], JPB_FLOW_CERTAIN, 1 };
	expect(x, NULL, 0, NULL, 0, w, n, 1);
}

/* lam's invokedynamic (()L: shapes ()L, (L)L, (L L)L) enters the call
 * site's adapter Ls$LambdaForm$MH.linkToTargetMethod, (L)L (P L, the
 * appendix after the call's no parameters), as HotSpot's spun
 * LambdaForm$MH.linkToTargetMethod: since 1a342fe a rebuilt class's
 * linkTo* methods are call-site linkage (list 0) too, so it is placed
 * there, certain/1, and the one resynchronisation is the thread's start.
 * Before, list 0 held Invokers$Holder's linkTo* only (none here). */
static void test_rebuilt_call_site_adapter(void **state)
{
	struct script_fx *x = *state;
	if (!x)
		skip();
	x->s.n = 0;
	script_ops(&x->s, 0x1a, 0x05, 0x60, 0x3c, 0xba, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0xb0, -1);
	script_ops(&x->s, 0x4d, 0x1b, 0xac, -1);
	static const int32_t lbci[] = { 0, 1, 2, 3, 4, 9, 10, 11 };
	struct flow_want w[10];
	size_t n = 0;
	for (int k = 0; k < 5; k++)
		w[n++] = (struct flow_want){ "Ls.lam", lbci[k], JPB_FLOW_CERTAIN, 1 };
	for (int32_t b = 0; b < 2; b++)
		w[n++] = (struct flow_want){ "Ls$LambdaForm$MH.linkToTargetMethod", b,
					     JPB_FLOW_CERTAIN, 1 };
	for (int k = 5; k < 8; k++)
		w[n++] = (struct flow_want){ "Ls.lam", lbci[k], JPB_FLOW_CERTAIN, 1 };
	expect(x, NULL, 0, NULL, 0, w, n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape_params),
		cmocka_unit_test(test_shape_return),
		cmocka_unit_test(test_shape_all_four),
		cmocka_unit_test(test_shape_none_fits),
		cmocka_unit_test(test_shape_basic_types),
		cmocka_unit_test(test_shape_two_fit),
		cmocka_unit_test(test_hidden_added_late),
		cmocka_unit_test_setup_teardown(test_rebuilt_lambda_form, setup_rebuilt,
						script_fx_teardown),
		cmocka_unit_test_setup_teardown(test_rebuilt_call_site_adapter, setup_rebuilt,
						script_fx_teardown),
	};
	return cmocka_run_group_tests(tests, setup, script_fx_teardown);
}
