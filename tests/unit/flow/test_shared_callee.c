// SPDX-License-Identifier: MIT
/*
 * Callers that share one callee, over real class files compiled by javac
 * at test time: a virtual call whose candidates P.runN and Q.runN (T's
 * TP, TQ, TR.run) have the same code up to and including a call of the
 * same static method of H, and differ after it.  While the shared callee
 * runs, the automaton holds one state per caller; the trace after the
 * callee returns (or a compiled event, or a handler) tells the callers
 * apart, and every event of the caller, before the call as after it,
 * must be the caller the trace followed.  Each case checks the exact
 * (method, bci, status, ncand) sequence.
 *
 * Each thread starts in compiled outN (pinned: its frames are exact),
 * which calls interpreted callN, whose virtual call enters runN; callN's
 * return goes back into outN (compiled event outN@5).
 *
 * States entering one callee from different callers are one state while
 * it runs (a join, RECONSTRUCTION.md "Callers that share a callee"),
 * split again at its return.  These pin the output it must keep (written
 * against the automaton before joins, and unchanged by them): the return,
 * an exception, nested callees, compiled code in and around the callee,
 * a deoptimisation, and a path that ends inside it; and what joins
 * improve: test_cap_keeps_merged_callers.  test_lost_callee_in_shared_callee
 * (and its mirror): a callee the program does not hold, called by the
 * shared callee, then a second join (crashed on 7fe1a0f, fixed by 230fe45).
 * test_deep_shared_recursion: nested joins as deep as a recursion, the
 * window ending inside 4000 of them (the walks over them recursed before
 * 8f96854) and 600 of them unwinding (resolution kept 256 pending
 * returns before 9c659a9).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "flow/flow.h"
#include "event_script.h"
#include "flow_expect.h"
#include "script_fixture.h"

/* Bytecode (javac 17): H.work iload_0 iconst_5 imul ireturn; P.run1
 * iload_1 invokestatic(1) iconst_1(4) iadd ireturn, Q.run1 the same with
 * iconst_2; run2: iload_1 invokestatic(1) ireturn(4), handler 5: astore_2,
 * iconst_m1 (P) or iconst_2 (Q), ireturn; run7 calls H.work then H.xa (P)
 * or H.xb (Q) at 5; H.split: iload_0 ifle(1) 11, then 4: iload_0 iconst_3
 * imul istore_1 goto(8) 15, 11: iload_0 iconst_4 imul istore_1, 15:
 * iload_1 ireturn; callN aload_0 iload_1 invokevirtual(2) ireturn(5);
 * outN aload_0 iload_1 invokestatic(2) iconst_1(5) iadd ireturn; run9
 * aload_0 iload_1 invokestatic(2) H.lw, iconst_1(5) (P) or iconst_2 (Q),
 * iadd ireturn; H.lw iload_1 invokestatic(1) U.u, aload_0(4) iload_1
 * invokevirtual(6) S.run1, iadd(9) ireturn; U.u is H.xa's code, iload_0
 * iconst_1 isub ireturn, and U is not loaded (not in setup's list). */
static const char *src =
	"public class Shared {\n"
	"    static class H {\n"
	"        static int work(int a) { return a * 5; }\n"
	"        static int boom(int a) { throw new IllegalStateException(); }\n"
	"        static int outer(int a) { return inner(a) + 7; }\n"
	"        static int inner(int a) { return a * 6; }\n"
	"        static int split(int a) { int b; if (a > 0) b = a * 3; else b = a * 4; return b; }\n"
	"        static int viaFast(int a) { return fast(a) + 9; }\n"
	"        static int fast(int a) { return a + 4; }\n"
	"        static int cfast(int a) { return work(a) + 8; }\n"
	"        static int dfast(int a) { return a * 7 + 1; }\n"
	"        static int xa(int a) { return a - 1; }\n"
	"        static int xb(int a) { return a - 2; }\n"
	"        static int lw(S s, int a) { return U.u(a) + s.run1(a); }\n"
	"        static int down(S s, int a) { if (a <= 0) return 0; return s.rec(a - 1); }\n"
	"    }\n"
	"    static class U { static int u(int a) { return a - 1; } }\n"
	"    static abstract class S {\n"
	"        abstract int run1(int a); abstract int run2(int a); abstract int run3(int a);\n"
	"        abstract int run5(int a); abstract int run6(int a); abstract int run7(int a);\n"
	"        abstract int run8(int a); abstract int run9(int a); abstract int rec(int a);\n"
	"    }\n"
	"    static class P extends S {\n"
	"        int run1(int a) { return H.work(a) + 1; }\n"
	"        int run2(int a) { try { return H.boom(a); } catch (IllegalStateException e) { return -1; } }\n"
	"        int run3(int a) { return H.outer(a) + 1; }\n"
	"        int run5(int a) { return H.viaFast(a) + 1; }\n"
	"        int run6(int a) { return H.cfast(a) + 1; }\n"
	"        int run7(int a) { return H.work(a) + H.xa(a); }\n"
	"        int run8(int a) { return H.dfast(a) + 1; }\n"
	"        int run9(int a) { return H.lw(this, a) + 1; }\n"
	"        int rec(int a) { return H.down(this, a) + 1; }\n"
	"    }\n"
	"    static class Q extends S {\n"
	"        int run1(int a) { return H.work(a) + 2; }\n"
	"        int run2(int a) { try { return H.boom(a); } catch (IllegalStateException e) { return 2; } }\n"
	"        int run3(int a) { return H.outer(a) + 2; }\n"
	"        int run5(int a) { return H.viaFast(a) + 2; }\n"
	"        int run6(int a) { return H.cfast(a) + 2; }\n"
	"        int run7(int a) { return H.work(a) + H.xb(a); }\n"
	"        int run8(int a) { return H.dfast(a) + 2; }\n"
	"        int run9(int a) { return H.lw(this, a) + 2; }\n"
	"        int rec(int a) { return H.down(this, a) + 2; }\n"
	"    }\n"
	"    static abstract class T { abstract int run(int a); }\n"
	"    static class TP extends T { int run(int a) { return H.split(a) + 1; } }\n"
	"    static class TQ extends T { int run(int a) { return H.split(a) + 2; } }\n"
	"    static class TR extends T { int run(int a) { return H.split(a) + 3; } }\n"
	"    static int call1(S s, int a) { return s.run1(a); }\n"
	"    static int call2(S s, int a) { return s.run2(a); }\n"
	"    static int call3(S s, int a) { return s.run3(a); }\n"
	"    static int call5(S s, int a) { return s.run5(a); }\n"
	"    static int call6(S s, int a) { return s.run6(a); }\n"
	"    static int call7(S s, int a) { return s.run7(a); }\n"
	"    static int call8(S s, int a) { return s.run8(a); }\n"
	"    static int call9(S s, int a) { return s.run9(a); }\n"
	"    static int callT(T t, int a) { return t.run(a); }\n"
	"    static int callR(S s, int a) { return s.rec(a); }\n"
	"    static int out1(S s, int a) { return call1(s, a) + 1; }\n"
	"    static int out2(S s, int a) { return call2(s, a) + 1; }\n"
	"    static int out3(S s, int a) { return call3(s, a) + 1; }\n"
	"    static int out5(S s, int a) { return call5(s, a) + 1; }\n"
	"    static int out6(S s, int a) { return call6(s, a) + 1; }\n"
	"    static int out7(S s, int a) { return call7(s, a) + 1; }\n"
	"    static int out8(S s, int a) { return call8(s, a) + 1; }\n"
	"    static int out9(S s, int a) { return call9(s, a) + 1; }\n"
	"    static int outT(T t, int a) { return callT(t, a) + 1; }\n"
	"    static int outR(S s, int a) { return callR(s, a) + 1; }\n"
	"}\n";

/* jmethodIDs of the methods compiled events name */
enum {
	OUT1_ID = 0x7501, OUT2_ID, OUT3_ID, OUT5_ID, OUT6_ID, OUT7_ID, OUT8_ID, OUTT_ID,
	FAST_ID, CFAST_ID, DFAST_ID, XA_ID, XB_ID, OUT9_ID, OUTR_ID,
};
/* codelets: the zerolocals method entry, an exception continuation, a
 * deoptimisation */
enum { CL_ENTRY = 1, CL_EXC = 2, CL_DEOPT = 3 };

static int setup(void **state)
{
	/* P before Q, TP before TQ before TR: the hierarchy's candidate order;
	 * Shared$U left out: a class the program does not hold (case 6) */
	static const char *const cls[] = { "Shared", "Shared$H", "Shared$S", "Shared$P",
					   "Shared$Q", "Shared$T", "Shared$TP", "Shared$TQ",
					   "Shared$TR" };
	struct script_fx *x = script_fx_new(src, cls, sizeof(cls) / sizeof(cls[0]));
	*state = x;
	if (!x)
		return 0; /* no javac: every case skips */
	static const struct {
		uint64_t id;
		const char *cls, *name, *desc;
	} ids[] = {
		{ OUT1_ID, "LShared;", "out1", "(LShared$S;I)I" },
		{ OUT2_ID, "LShared;", "out2", "(LShared$S;I)I" },
		{ OUT3_ID, "LShared;", "out3", "(LShared$S;I)I" },
		{ OUT5_ID, "LShared;", "out5", "(LShared$S;I)I" },
		{ OUT6_ID, "LShared;", "out6", "(LShared$S;I)I" },
		{ OUT7_ID, "LShared;", "out7", "(LShared$S;I)I" },
		{ OUT8_ID, "LShared;", "out8", "(LShared$S;I)I" },
		{ OUTT_ID, "LShared;", "outT", "(LShared$T;I)I" },
		{ FAST_ID, "LShared$H;", "fast", "(I)I" },
		{ CFAST_ID, "LShared$H;", "cfast", "(I)I" },
		{ DFAST_ID, "LShared$H;", "dfast", "(I)I" },
		{ XA_ID, "LShared$H;", "xa", "(I)I" },
		{ XB_ID, "LShared$H;", "xb", "(I)I" },
		{ OUT9_ID, "LShared;", "out9", "(LShared$S;I)I" },
		{ OUTR_ID, "LShared;", "outR", "(LShared$S;I)I" },
	};
	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++)
		assert_int_equal(jprog_add_method_id(x->p, ids[k].id, ids[k].cls, ids[k].name,
						     ids[k].desc), 0);
	return 0;
}

/* Reconstruct x's events with at most MAX_STATES states per step and
 * compare with W, exactly. */
static void check(struct script_fx *x, unsigned max_states, const struct flow_want *w,
		  size_t nw)
{
	static const char *const desc[] = { "zerolocals", "exception_continuation",
					    "deoptimization", NULL };
	flow_expect_exact_desc(x->p, &x->s, max_states, CL_ENTRY, desc, NULL, w, nw);
}

#define SKIP_IF_NO_JAVAC(x) do { if (!(x)) skip(); } while (0)
#define CE JPB_FLOW_CERTAIN
#define CH JPB_FLOW_CHOSEN
#define DEC JPB_FLOW_DECODED
#define NW(a) (sizeof(a) / sizeof((a)[0]))

/* outN (ID) compiled at 0 and at its call of callN, which runs up to its
 * virtual call, and the callee's entry. */
static void begin(struct script_fx *x, uint64_t id)
{
	x->s.n = 0;
	script_compiled(&x->s, id, 0);
	script_compiled(&x->s, id, 2);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x2a, 0x1b, 0xb6, -1); /* callN */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
}

/* callN returns into compiled outN (ID). */
static void end(struct script_fx *x, uint64_t id)
{
	script_ops(&x->s, 0xac, -1);
	script_compiled(&x->s, id, 5);
}


/* outN's two compiled events and callN up to its virtual call, all
 * exact; callN's return and outN after it */
#define HEAD(out, call)                                                         \
	{ out, 0, DEC, 1 }, { out, 2, DEC, 1 }, { call, 0, CE, 1 }, { call, 1, CE, 1 }, \
	{ call, 2, CE, 1 }
#define TAIL(out, call) { call, 5, CE, 1 }, { out, 5, DEC, 1 }

/* 1. P.run1 and Q.run1 both run iload_1, invokestatic H.work, and H.work
 * runs; only the opcode after H.work's return (iconst_1 for P, iconst_2
 * for Q) tells them apart.  Every event of the run, before the call as
 * after it, is the caller the trace followed, certain: the other caller's
 * path dies at that opcode, so one path is left (H.work's events too).
 * Both ways round, so that "the first candidate" cannot pass. */
static void check_return_to_caller(struct script_fx *x, int tail, const char *run)
{
	begin(x, OUT1_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x08, 0x68, 0xac, -1); /* H.work */
	script_ops(&x->s, tail, 0x60, 0xac, -1);       /* the run's tail */
	end(x, OUT1_ID);
	const struct flow_want w[] = {
		HEAD("Shared.out1", "Shared.call1"),
		{ run, 0, CE, 1 },             { run, 1, CE, 1 },
		{ "Shared$H.work", 0, CE, 1 }, { "Shared$H.work", 1, CE, 1 },
		{ "Shared$H.work", 2, CE, 1 }, { "Shared$H.work", 3, CE, 1 },
		{ run, 4, CE, 1 },             { run, 5, CE, 1 },
		{ run, 6, CE, 1 },
		TAIL("Shared.out1", "Shared.call1"),
	};
	check(x, 256, w, NW(w));
}

static void test_return_to_right_caller(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	check_return_to_caller(x, 0x05, "Shared$Q.run1");
	check_return_to_caller(x, 0x04, "Shared$P.run1");
}

/* 2. P.run2 and Q.run2 call H.boom inside the same try; H.boom throws
 * (its exception's constructor runs outside the traced code), and the
 * exception continues in the caller's handler: astore_2, then iconst_m1
 * (P) or iconst_2 (Q), ireturn.  The handler's constant decides the
 * caller, before the call as in the handler, certain; H.boom certain. */
static void check_exception_to_caller(struct script_fx *x, int handler, const char *run)
{
	begin(x, OUT2_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0xbb, 0x59, 0xb7, -1); /* H.boom: new, dup, invokespecial */
	script_transition(&x->s, JPB_TR_DISABLED, 0);
	script_transition(&x->s, JPB_TR_ENABLED, 0);
	script_ops(&x->s, 0xbf, -1); /* athrow */
	script_transition(&x->s, JPB_TR_DISABLED, 0);
	script_transition(&x->s, JPB_TR_ENABLED, 0);
	script_transition(&x->s, JPB_TR_INTERP_STUB, CL_EXC);
	script_ops(&x->s, 0x4d, handler, 0xac, -1); /* the caller's handler */
	end(x, OUT2_ID);
	const struct flow_want w[] = {
		HEAD("Shared.out2", "Shared.call2"),
		{ run, 0, CE, 1 },             { run, 1, CE, 1 },
		{ "Shared$H.boom", 0, CE, 1 }, { "Shared$H.boom", 3, CE, 1 },
		{ "Shared$H.boom", 4, CE, 1 }, { "Shared$H.boom", 7, CE, 1 },
		{ run, 5, CE, 1 },             { run, 6, CE, 1 },
		{ run, 7, CE, 1 },
		TAIL("Shared.out2", "Shared.call2"),
	};
	check(x, 256, w, NW(w));
}

static void test_exception_to_right_handler(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	check_exception_to_caller(x, 0x05, "Shared$Q.run2");
	check_exception_to_caller(x, 0x02, "Shared$P.run2");
}

/* 3. Nested shared callees: P.run3 and Q.run3 call H.outer, which calls
 * H.inner: both callees are entered from two callers at once (H.inner's
 * caller frames are equal, H.outer@1, and differ below it).  H.inner
 * returns, then H.outer, then the run's tail decides: the run is that
 * caller throughout, H.outer and H.inner certain. */
static void check_nested(struct script_fx *x, int tail, const char *run)
{
	begin(x, OUT3_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0xb8, -1); /* H.outer up to its call */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x10, 0x68, 0xac, -1); /* H.inner */
	script_ops(&x->s, 0x10, 0x60, 0xac, -1);       /* H.outer's tail */
	script_ops(&x->s, tail, 0x60, 0xac, -1);       /* the run's */
	end(x, OUT3_ID);
	const struct flow_want w[] = {
		HEAD("Shared.out3", "Shared.call3"),
		{ run, 0, CE, 1 },              { run, 1, CE, 1 },
		{ "Shared$H.outer", 0, CE, 1 }, { "Shared$H.outer", 1, CE, 1 },
		{ "Shared$H.inner", 0, CE, 1 }, { "Shared$H.inner", 1, CE, 1 },
		{ "Shared$H.inner", 3, CE, 1 }, { "Shared$H.inner", 4, CE, 1 },
		{ "Shared$H.outer", 4, CE, 1 }, { "Shared$H.outer", 6, CE, 1 },
		{ "Shared$H.outer", 7, CE, 1 },
		{ run, 4, CE, 1 },              { run, 5, CE, 1 },
		{ run, 6, CE, 1 },
		TAIL("Shared.out3", "Shared.call3"),
	};
	check(x, 256, w, NW(w));
}

static void test_nested_shared_callees(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	check_nested(x, 0x05, "Shared$Q.run3");
	check_nested(x, 0x04, "Shared$P.run3");
}

/* 5a. A compiled callee while the shared callee is on top: H.viaFast
 * (entered from P.run5 and Q.run5) calls H.fast, which runs compiled
 * (each compiled event is placed on both callers' stacks), returns into
 * H.viaFast, which returns; Q.run5's tail decides.  Q.run5 throughout,
 * H.viaFast certain, H.fast decoded. */
static void test_compiled_callee_of_shared(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	begin(x, OUT5_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0xb8, -1); /* H.viaFast up to its call */
	for (int b = 0; b < 4; b++)
		script_compiled(&x->s, FAST_ID, b); /* H.fast, compiled */
	script_ops(&x->s, 0x10, 0x60, 0xac, -1); /* H.viaFast's tail */
	script_ops(&x->s, 0x05, 0x60, 0xac, -1); /* Q.run5's */
	end(x, OUT5_ID);
	static const struct flow_want w[] = {
		HEAD("Shared.out5", "Shared.call5"),
		{ "Shared$Q.run5", 0, CE, 1 },    { "Shared$Q.run5", 1, CE, 1 },
		{ "Shared$H.viaFast", 0, CE, 1 }, { "Shared$H.viaFast", 1, CE, 1 },
		{ "Shared$H.fast", 0, DEC, 1 },   { "Shared$H.fast", 1, DEC, 1 },
		{ "Shared$H.fast", 2, DEC, 1 },   { "Shared$H.fast", 3, DEC, 1 },
		{ "Shared$H.viaFast", 4, CE, 1 }, { "Shared$H.viaFast", 6, CE, 1 },
		{ "Shared$H.viaFast", 7, CE, 1 },
		{ "Shared$Q.run5", 4, CE, 1 },    { "Shared$Q.run5", 5, CE, 1 },
		{ "Shared$Q.run5", 6, CE, 1 },
		TAIL("Shared.out5", "Shared.call5"),
	};
	check(x, 256, w, NW(w));
}

/* 5b. The shared callee is compiled: H.cfast's first compiled event is a
 * call from both P.run6 and Q.run6 (pushed on each); it calls interpreted
 * H.work (an entry from a compiled frame), which returns into compiled
 * H.cfast (a compiled event on each stack), which returns into the run;
 * Q.run6's tail decides.  Q.run6 throughout, H.work certain. */
static void test_shared_compiled_callee(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	begin(x, OUT6_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_compiled(&x->s, CFAST_ID, 0);
	script_compiled(&x->s, CFAST_ID, 1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x08, 0x68, 0xac, -1); /* H.work */
	script_compiled(&x->s, CFAST_ID, 4);
	script_compiled(&x->s, CFAST_ID, 6);
	script_compiled(&x->s, CFAST_ID, 7);
	script_ops(&x->s, 0x05, 0x60, 0xac, -1); /* Q.run6's tail */
	end(x, OUT6_ID);
	static const struct flow_want w[] = {
		HEAD("Shared.out6", "Shared.call6"),
		{ "Shared$Q.run6", 0, CE, 1 },   { "Shared$Q.run6", 1, CE, 1 },
		{ "Shared$H.cfast", 0, DEC, 1 }, { "Shared$H.cfast", 1, DEC, 1 },
		{ "Shared$H.work", 0, CE, 1 },   { "Shared$H.work", 1, CE, 1 },
		{ "Shared$H.work", 2, CE, 1 },   { "Shared$H.work", 3, CE, 1 },
		{ "Shared$H.cfast", 4, DEC, 1 }, { "Shared$H.cfast", 6, DEC, 1 },
		{ "Shared$H.cfast", 7, DEC, 1 },
		{ "Shared$Q.run6", 4, CE, 1 },   { "Shared$Q.run6", 5, CE, 1 },
		{ "Shared$Q.run6", 6, CE, 1 },
		TAIL("Shared.out6", "Shared.call6"),
	};
	check(x, 256, w, NW(w));
}

/* 5c. The callers' interpreted code after the shared callee's return is
 * the same too (iload_1, invokestatic): the compiled callee that follows
 * decides, H.xb, which Q.run7 calls and P.run7 cannot (P.run7 calls
 * H.xa).  Q.run7 throughout. */
static void test_compiled_call_decides(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	begin(x, OUT7_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x08, 0x68, 0xac, -1); /* H.work */
	script_ops(&x->s, 0x1b, 0xb8, -1);             /* either run7's second call */
	for (int b = 0; b < 4; b++)
		script_compiled(&x->s, XB_ID, b); /* H.xb, compiled */
	script_ops(&x->s, 0x60, 0xac, -1);
	end(x, OUT7_ID);
	static const struct flow_want w[] = {
		HEAD("Shared.out7", "Shared.call7"),
		{ "Shared$Q.run7", 0, CE, 1 }, { "Shared$Q.run7", 1, CE, 1 },
		{ "Shared$H.work", 0, CE, 1 }, { "Shared$H.work", 1, CE, 1 },
		{ "Shared$H.work", 2, CE, 1 }, { "Shared$H.work", 3, CE, 1 },
		{ "Shared$Q.run7", 4, CE, 1 }, { "Shared$Q.run7", 5, CE, 1 },
		{ "Shared$H.xb", 0, DEC, 1 },  { "Shared$H.xb", 1, DEC, 1 },
		{ "Shared$H.xb", 2, DEC, 1 },  { "Shared$H.xb", 3, DEC, 1 },
		{ "Shared$Q.run7", 8, CE, 1 }, { "Shared$Q.run7", 9, CE, 1 },
		TAIL("Shared.out7", "Shared.call7"),
	};
	check(x, 256, w, NW(w));
}

/* 5d. The shared callee, compiled (H.dfast, called from P.run8 and
 * Q.run8), is deoptimised at its bipush: each state becomes interpreted
 * frames re-executing the bipush or continuing after it; the interpreter
 * runs imul (the continuation), iconst_1, iadd, ireturn, and Q.run8's
 * tail decides.  Q.run8 throughout, dfast's interpreted events certain. */
static void test_deopt_in_shared_callee(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	begin(x, OUT8_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_compiled(&x->s, DFAST_ID, 0);
	script_compiled(&x->s, DFAST_ID, 1);
	script_transition(&x->s, JPB_TR_INTERP_STUB, CL_DEOPT);
	script_ops(&x->s, 0x68, 0x04, 0x60, 0xac, -1); /* H.dfast, interpreted */
	script_ops(&x->s, 0x05, 0x60, 0xac, -1);       /* Q.run8's tail */
	end(x, OUT8_ID);
	static const struct flow_want w[] = {
		HEAD("Shared.out8", "Shared.call8"),
		{ "Shared$Q.run8", 0, CE, 1 },   { "Shared$Q.run8", 1, CE, 1 },
		{ "Shared$H.dfast", 0, DEC, 1 }, { "Shared$H.dfast", 1, DEC, 1 },
		{ "Shared$H.dfast", 3, CE, 1 },  { "Shared$H.dfast", 4, CE, 1 },
		{ "Shared$H.dfast", 5, CE, 1 },  { "Shared$H.dfast", 6, CE, 1 },
		{ "Shared$Q.run8", 4, CE, 1 },   { "Shared$Q.run8", 5, CE, 1 },
		{ "Shared$Q.run8", 6, CE, 1 },
		TAIL("Shared.out8", "Shared.call8"),
	};
	check(x, 256, w, NW(w));
}

/* The thread up to H.work's iconst_5, entered from P.run1 or Q.run1:
 * what follows tells them apart or not. */
static void script_inside_work(struct script_fx *x)
{
	begin(x, OUT1_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x08, -1);
}

/* 5e. Compiled out1 goes on (its event at 5) while H.work is on top: a
 * return into the compiled caller further down, past H.work, the run and
 * call1.  Both callers' stacks become the same, so nothing tells them
 * apart: the run is a choice among 2, P.run1 (first in hierarchy order),
 * never certain; H.work, one position, certain. */
static void test_compiled_return_past_shared(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	script_inside_work(x);
	script_ops(&x->s, 0x68, 0xac, -1);
	script_compiled(&x->s, OUT1_ID, 5);
	static const struct flow_want w[] = {
		HEAD("Shared.out1", "Shared.call1"),
		{ "Shared$P.run1", 0, CH, 2 }, { "Shared$P.run1", 1, CH, 2 },
		{ "Shared$H.work", 0, CE, 1 }, { "Shared$H.work", 1, CE, 1 },
		{ "Shared$H.work", 2, CE, 1 }, { "Shared$H.work", 3, CE, 1 },
		{ "Shared.out1", 5, DEC, 1 },
	};
	check(x, 256, w, NW(w));
}

/* 5f. The thread ends, or a gap comes, while H.work is on top: the path
 * ends at a choice among the states left (one per caller), so the run is
 * chosen among 2, P.run1, never certain; H.work certain.  After the gap a
 * compiled event of out1 starts afresh. */
static void test_end_inside_shared(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	static const struct flow_want w[] = {
		HEAD("Shared.out1", "Shared.call1"),
		{ "Shared$P.run1", 0, CH, 2 }, { "Shared$P.run1", 1, CH, 2 },
		{ "Shared$H.work", 0, CE, 1 }, { "Shared$H.work", 1, CE, 1 },
		{ "Shared.out1", 5, DEC, 1 },
	};
	script_inside_work(x);
	check(x, 256, w, NW(w) - 1);
	script_inside_work(x);
	script_add(&x->s, JPB_DEV_GAP)->what = JPB_GAP_OVERFLOW;
	script_compiled(&x->s, OUT1_ID, 5);
	check(x, 256, w, NW(w));
}

/* 4. The cap must not drop callers that a merged callee keeps (before
 * joins, max_states 3 and 4 lost the right caller here).
 *
 * TP.run, TQ.run and TR.run (candidate order) call H.split, whose ifle
 * has two successors starting with iload_0; the trace takes the branch
 * (bci 11, a <= 0) and follows TR.run (iconst_3 after the return).  With
 * room for all, every event is certain.  The cap must be at least 3 for
 * TR.run to survive the run's own entry (three callees from one state):
 * with max_states 2 it is dropped there, before any merge could help, so
 * 2 proves nothing.  With 3 or 4, the entries fit, but after the ifle one
 * state per caller and branch direction is 6: before joins each caller kept its
 * first successor (the fall-through, 4) first, and the right states go
 * (at 3 all of them, and the flow resynchronises; at 4 TP.run's alone
 * survives, so TP.run is chosen for the run's first events and the
 * return, into TP.run, dies at iconst_3).  Merged inside H.split, the
 * states there are one per branch direction, 2, and nothing is dropped:
 * the flow must then be the uncapped one. */
static void test_cap_keeps_merged_callers(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	begin(x, OUTT_ID);
	script_ops(&x->s, 0x1b, 0xb8, -1);
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	/* H.split(a <= 0): iload_0, ifle taken, iload_0 iconst_4 imul
	 * istore_1, iload_1 ireturn */
	script_ops(&x->s, 0x1a, 0x9e, 0x1a, 0x07, 0x68, 0x3c, 0x1b, 0xac, -1);
	script_ops(&x->s, 0x06, 0x60, 0xac, -1); /* TR.run's tail */
	end(x, OUTT_ID);
	static const struct flow_want w[] = {
		HEAD("Shared.outT", "Shared.callT"),
		{ "Shared$TR.run", 0, CE, 1 },   { "Shared$TR.run", 1, CE, 1 },
		{ "Shared$H.split", 0, CE, 1 },  { "Shared$H.split", 1, CE, 1 },
		{ "Shared$H.split", 11, CE, 1 }, { "Shared$H.split", 12, CE, 1 },
		{ "Shared$H.split", 13, CE, 1 }, { "Shared$H.split", 14, CE, 1 },
		{ "Shared$H.split", 15, CE, 1 }, { "Shared$H.split", 16, CE, 1 },
		{ "Shared$TR.run", 4, CE, 1 },   { "Shared$TR.run", 5, CE, 1 },
		{ "Shared$TR.run", 6, CE, 1 },
		TAIL("Shared.outT", "Shared.callT"),
	};
	check(x, 256, w, NW(w));
	check(x, 3, w, NW(w)); /* before joins: TP.run, H.split bci 4, resyncs */
	check(x, 4, w, NW(w)); /* before joins: TP.run chosen, then a resync */
}

/* 6. An unknown callee of the shared callee: P.run9 and Q.run9 call
 * H.lw (a join of the two), which calls U.u, a class the program does not
 * hold: the invoke has no candidate, and the automaton adds a lost state
 * (LOST_AT_ENTRY) whose known caller frames are H.lw's, on the join.  U.u
 * has H.xa's code, so the resynchronisation at its entry places it there,
 * one position, certain; it returns into H.lw.  H.lw then calls s.run1,
 * whose candidates P.run1 and Q.run1 both call H.work: a second join, made
 * after the lost callee.  ITAIL (after H.work's return) decides the inner
 * run1, TAIL (after H.lw's) the outer run9, each the other class.  Before
 * the fix (7fe1a0f) the lost state was taken as the one resolved state:
 * the window was emitted and the joins emptied while its frames still
 * named H.lw's join, H.work's join took the same index, and H.lw's return
 * went through it: a cycle of joins, and rebuild overflowed the stack.
 * Now the run9 is the trace's throughout, before the call as after it,
 * run1 the other, all certain. */
static void check_lost_callee(struct script_fx *x, int tail, int itail, const char *run,
			      const char *run1)
{
	begin(x, OUT9_ID);
	script_ops(&x->s, 0x2a, 0x1b, 0xb8, -1); /* run9 up to its call of H.lw */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1b, 0xb8, -1); /* H.lw up to its call of U.u */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x04, 0x64, 0xac, -1); /* U.u */
	script_ops(&x->s, 0x2a, 0x1b, 0xb6, -1);       /* H.lw up to s.run1 */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1b, 0xb8, -1); /* run1 up to its call of H.work */
	script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
	script_ops(&x->s, 0x1a, 0x08, 0x68, 0xac, -1); /* H.work */
	script_ops(&x->s, itail, 0x60, 0xac, -1);      /* run1's tail */
	script_ops(&x->s, 0x60, 0xac, -1);             /* H.lw's */
	script_ops(&x->s, tail, 0x60, 0xac, -1);       /* run9's */
	end(x, OUT9_ID);
	const struct flow_want w[] = {
		HEAD("Shared.out9", "Shared.call9"),
		{ run, 0, CE, 1 },             { run, 1, CE, 1 },
		{ run, 2, CE, 1 },             { "Shared$H.lw", 0, CE, 1 },
		{ "Shared$H.lw", 1, CE, 1 },   { "Shared$H.xa", 0, CE, 1 },
		{ "Shared$H.xa", 1, CE, 1 },   { "Shared$H.xa", 2, CE, 1 },
		{ "Shared$H.xa", 3, CE, 1 },   { "Shared$H.lw", 4, CE, 1 },
		{ "Shared$H.lw", 5, CE, 1 },   { "Shared$H.lw", 6, CE, 1 },
		{ run1, 0, CE, 1 },            { run1, 1, CE, 1 },
		{ "Shared$H.work", 0, CE, 1 }, { "Shared$H.work", 1, CE, 1 },
		{ "Shared$H.work", 2, CE, 1 }, { "Shared$H.work", 3, CE, 1 },
		{ run1, 4, CE, 1 },            { run1, 5, CE, 1 },
		{ run1, 6, CE, 1 },            { "Shared$H.lw", 9, CE, 1 },
		{ "Shared$H.lw", 10, CE, 1 },  { run, 5, CE, 1 },
		{ run, 6, CE, 1 },             { run, 7, CE, 1 },
		TAIL("Shared.out9", "Shared.call9"),
	};
	check(x, 256, w, NW(w));
}

/* 6, the trace follows Q.run9 (P.run1 inside) */
static void test_lost_callee_in_shared_callee(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	check_lost_callee(x, 0x05, 0x04, "Shared$Q.run9", "Shared$P.run1");
}

/* 6, the mirror: P.run9 (Q.run1 inside) */
static void test_lost_callee_in_shared_callee_mirror(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	check_lost_callee(x, 0x04, 0x05, "Shared$P.run9", "Shared$Q.run1");
}

/* 7. Nested joins as deep as a recursion: callR's virtual call enters
 * P.rec or Q.rec (D levels, 1 the outermost), both call H.down (a join of
 * the two), whose virtual call enters P.rec or Q.rec again on that join,
 * which call H.down (a join whose callers' stacks hold the previous one),
 * and so on; H.down at level D takes its base case (a <= 0).  Level K is
 * Q.rec when K % 3 == 1, P.rec otherwise: its tail (iconst_2 or iconst_1
 * after H.down's return) tells which.
 *
 * Collapsing a join's callers (the window ends inside the shared callee)
 * and opening the joins for the candidate marks walk every frame and
 * nested join of the stack: they recursed once per frame and per join
 * before 8f96854, iterative since. */
static int rec_is_q(size_t k)
{
	return k % 3 == 1;
}

/* The thread down to level D (callR's call is level 1's): with UNWIND,
 * the recursion returns all the way and callR returns into compiled outR;
 * without, the thread stops after iload_1 of level D's H.down, inside D
 * nested joins. */
static void script_deep(struct script_fx *x, size_t d, int unwind)
{
	begin(x, OUTR_ID);
	for (size_t k = 1; k <= d; k++) {
		script_ops(&x->s, 0x2a, 0x1b, 0xb8, -1);
		script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
		if (!unwind && k == d) {
			script_ops(&x->s, 0x1b, -1);
			return;
		}
		script_ops(&x->s, 0x1b, 0x9d, -1);
		if (k < d) {
			script_ops(&x->s, 0x2a, 0x1b, 0x04, 0x64, 0xb6, -1);
			script_transition(&x->s, JPB_TR_METHOD_ENTRY, CL_ENTRY);
		} else {
			script_ops(&x->s, 0x03, 0xac, -1);
		}
	}
	for (size_t k = d; k >= 1; k--) {
		script_ops(&x->s, rec_is_q(k) ? 0x05 : 0x04, 0x60, 0xac, -1);
		if (k > 1)
			script_ops(&x->s, 0xac, -1);
	}
	end(x, OUTR_ID);
}

/* The flow wanted for script_deep(D, UNWIND): into W (room for 14 * D +
 * 8), the count.  Unwound, every level is the trace's rec, certain, before
 * its call as after the return (test_return_to_right_caller, per level);
 * ending inside, the joins are collapsed to the path's callers, the first
 * entry links, so every level is P.rec chosen among 2 and H.down certain
 * (test_end_inside_shared, per level). */
static size_t want_deep(struct flow_want *w, size_t d, int unwind)
{
	static const char *const rec[] = { "Shared$P.rec", "Shared$Q.rec" };
	static const int32_t down[] = { 0, 1, 6, 7, 8, 9, 10 }, base[] = { 0, 1, 4, 5 };
	const struct flow_want head[] = { HEAD("Shared.outR", "Shared.callR") },
			       tail[] = { TAIL("Shared.outR", "Shared.callR") };
	size_t n = 0;
	for (size_t k = 0; k < NW(head); k++)
		w[n++] = head[k];
	for (size_t k = 1; k <= d; k++) {
		for (int32_t b = 0; b < 3; b++)
			w[n++] = unwind ? (struct flow_want){ rec[rec_is_q(k)], b, CE, 1 } :
					  (struct flow_want){ rec[0], b, CH, 2 };
		if (!unwind && k == d) {
			w[n++] = (struct flow_want){ "Shared$H.down", 0, CE, 1 };
			return n;
		}
		for (size_t b = 0; k < d && b < NW(down); b++)
			w[n++] = (struct flow_want){ "Shared$H.down", down[b], CE, 1 };
		for (size_t b = 0; k == d && b < NW(base); b++)
			w[n++] = (struct flow_want){ "Shared$H.down", base[b], CE, 1 };
	}
	for (size_t k = d; k >= 1; k--) {
		for (int32_t b = 5; b < 8; b++)
			w[n++] = (struct flow_want){ rec[rec_is_q(k)], b, CE, 1 };
		if (k > 1)
			w[n++] = (struct flow_want){ "Shared$H.down", 13, CE, 1 };
	}
	for (size_t k = 0; k < NW(tail); k++)
		w[n++] = tail[k];
	return n;
}

/* Case (a) at DEEP_END levels: 12 steps a level, a window of 48000
 * steps, under MAX_PENDING_STEPS (65536, ~5460 levels; deeper, the window
 * would end inside the callee on its own, doubtful from there).  Case (b)
 * at DEEP_UNWIND levels: resolution's stack of pending returns
 * (path_edge) held 256 callers before 9c659a9, and every level deeper
 * than the 256th entered H.down through its first entry link, P.rec,
 * whatever the return said (a Q.rec level there got P.rec's events before
 * its call, certain/1); it grows as deep as the returns nest now. */
enum { DEEP_END = 4000, DEEP_UNWIND = 600 };

/* Case (a) runs with the stack limited to DEEP_STACK (when it can be
 * lowered).  At 8 MB no window is deep enough for the old recursion to
 * overflow (MAX_PENDING_STEPS bounds a window's nesting to ~4000 levels,
 * ~8000 frames); at 256 KB these 4000 levels crashed 0cfe924 (the
 * collapse's rebuild, one call a frame: it needs ~400 KB, ~600 KB under
 * ASan), and the iterative walks pass down to ~96 KB. */
#define DEEP_STACK (256u << 10)

/* The thread ends, or a gap comes, DEEP_END levels deep (flow_join_collapse
 * over 4000 joins, flow_join_open over their nesting); then a recursion
 * of DEEP_UNWIND levels unwinds and each level's tail decides its rec. */
static void test_deep_shared_recursion(void **state)
{
	struct script_fx *x = *state;
	SKIP_IF_NO_JAVAC(x);
	struct flow_want *w = malloc((14 * DEEP_END + 8) * sizeof(*w));
	assert_non_null(w);
	size_t n = want_deep(w, DEEP_END, 0);
	assert_int_equal(n, 10 * DEEP_END - 1);
	struct rlimit old, low;
	int lowered = !getrlimit(RLIMIT_STACK, &old) && old.rlim_cur > DEEP_STACK;
	if (lowered) {
		low = old;
		low.rlim_cur = DEEP_STACK;
		lowered = !setrlimit(RLIMIT_STACK, &low);
	}
	script_deep(x, DEEP_END, 0);
	check(x, 256, w, n);
	script_deep(x, DEEP_END, 0);
	script_add(&x->s, JPB_DEV_GAP)->what = JPB_GAP_OVERFLOW;
	script_compiled(&x->s, OUTR_ID, 5); /* after the gap, afresh */
	w[n++] = (struct flow_want){ "Shared.outR", 5, DEC, 1 };
	check(x, 256, w, n);
	if (lowered)
		assert_int_equal(setrlimit(RLIMIT_STACK, &old), 0);
	n = want_deep(w, DEEP_UNWIND, 1);
	assert_int_equal(n, 14 * DEEP_UNWIND + 3);
	script_deep(x, DEEP_UNWIND, 1);
	check(x, 256, w, n);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_return_to_right_caller),
		cmocka_unit_test(test_exception_to_right_handler),
		cmocka_unit_test(test_nested_shared_callees),
		cmocka_unit_test(test_compiled_callee_of_shared),
		cmocka_unit_test(test_shared_compiled_callee),
		cmocka_unit_test(test_compiled_call_decides),
		cmocka_unit_test(test_deopt_in_shared_callee),
		cmocka_unit_test(test_compiled_return_past_shared),
		cmocka_unit_test(test_end_inside_shared),
		cmocka_unit_test(test_cap_keeps_merged_callers),
		cmocka_unit_test(test_lost_callee_in_shared_callee),
		cmocka_unit_test(test_lost_callee_in_shared_callee_mirror),
		cmocka_unit_test(test_deep_shared_recursion),
	};
	return cmocka_run_group_tests_name("callers sharing a callee", tests, setup,
					   script_fx_teardown);
}
