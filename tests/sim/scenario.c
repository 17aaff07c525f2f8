// SPDX-License-Identifier: MIT
/*
 * The scenario program (javap-style):
 *
 *   static void main(int n)          id 1
 *     0 iconst_0; 1 istore_0; 2 iload_0; 3 sipush N; 6 if_icmpge 33
 *     9 iload_0; 10 invokestatic loop; 13 pop
 *     14 iload_0; 15 iload_0; 16 iconst_3; 17 irem; 18 invokestatic safe; 21 pop
 *     22 aconst_null; 23 invokevirtual get (A.get / B.get / C.get); 26 pop
 *     27 iinc 0,1; 30 goto 2; 33 return
 *   static int loop(int n)           id 2: sum of sq(i) for even i < n
 *     0 iconst_0; 1 istore_1; 2 iconst_0; 3 istore_2; 4 iload_2; 5 iload_0
 *     6 if_icmpge 28; 9 iload_2; 10 iconst_2; 11 irem; 12 ifne 22
 *     15 iload_1; 16 iload_2; 17 invokestatic sq; 20 iadd; 21 istore_1
 *     22 iinc 2,1; 25 goto 4; 28 iload_1; 29 ireturn
 *   static int sq(int x)             id 3: iload_0 iload_0 imul ireturn
 *   static int safe(int a, int b)    id 4: try { return div(a, b); }
 *     catch (ArithmeticException e) { return -1; }
 *     0 iload_0; 1 iload_1; 2 invokestatic div; 5 ireturn
 *     6 astore_2; 7 iconst_m1; 8 ireturn
 *   static int div(int a, int b)     id 5: iload_0 iload_1 idiv ireturn
 *   int A.get() / B.get() / C.get()  ids 6-8: aload_0 getfield ireturn
 *   static native long nanoTime()    id 9, called every 16th iteration
 *     through the tableswitch in main... (kept simple: from loop's exit)
 */
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records_truth.h"
#include "java/bytecodes.h"
#include "rng.h"
#include "util.h"

struct smeth {
	const char *cls, *name, *sig;
	uint32_t access;
	const uint8_t *code;
	uint32_t len;
};

static const uint8_t c_main[] = {
	0x03, 0x3b, 0x1a, 0x11, 0x00, 0x00, 0xa2, 0x00, 0x1b, 0x1a, 0xb8, 0x00,
	0x02, 0x57, 0x1a, 0x1a, 0x06, 0x70, 0xb8, 0x00, 0x04, 0x57, 0x01, 0xb6,
	0x00, 0x06, 0x57, 0x84, 0x00, 0x01, 0xa7, 0xff, 0xe4, 0xb1,
};
static const uint8_t c_loop[] = {
	0x03, 0x3c, 0x03, 0x3d, 0x1c, 0x1a, 0xa2, 0x00, 0x16, 0x1c,
	0x05, 0x70, 0x9a, 0x00, 0x0a, 0x1b, 0x1c, 0xb8, 0x00, 0x03,
	0x60, 0x3c, 0x84, 0x02, 0x01, 0xa7, 0xff, 0xeb, 0x1b, 0xb8,
	0x00, 0x09, 0x88, 0x57, 0xac,
};
static const uint8_t c_sq[] = { 0x1a, 0x1a, 0x68, 0xac };
static const uint8_t c_safe[] = { 0x1a, 0x1b, 0xb8, 0x00, 0x05,
				  0xac, 0x4d, 0x02, 0xac };
static const uint8_t c_div[] = { 0x1a, 0x1b, 0x6c, 0xac };
static const uint8_t c_get[] = { 0x2a, 0xb4, 0x00, 0x07, 0xac };

/* loop: 28 iload_1; 29 invokestatic nanoTime; 32 l2i; 33 pop; 34 ireturn */
static const struct smeth methods[] = {
	{ "LSim;", "main", "(I)V", 0x0009, c_main, sizeof(c_main) },
	{ "LSim;", "loop", "(I)I", 0x000a, c_loop, sizeof(c_loop) },
	{ "LSim;", "sq", "(I)I", 0x000a, c_sq, sizeof(c_sq) },
	{ "LSim;", "safe", "(II)I", 0x000a, c_safe, sizeof(c_safe) },
	{ "LSim;", "div", "(II)I", 0x000a, c_div, sizeof(c_div) },
	{ "LA;", "get", "()I", 0x0001, c_get, sizeof(c_get) },
	{ "LB;", "get", "()I", 0x0001, c_get, sizeof(c_get) },
	{ "LC;", "get", "()I", 0x0001, c_get, sizeof(c_get) },
	{ "Ljava/lang/System;", "nanoTime", "()J", 0x0109, NULL, 0 },
};
enum { M_MAIN = 1, M_LOOP, M_SQ, M_SAFE, M_DIV, M_A, M_B, M_C, M_NANO };

struct seq {
	struct jpb_truth_event *ev;
	size_t n, cap;
};

static void ev(struct seq *s, uint32_t m, uint16_t bci, uint8_t kind)
{
	GROW(s->ev, s->n, s->cap);
	uint8_t op = 0;
	if (kind == JPB_TRUTH_BYTECODE)
		op = methods[m - 1].code[bci];
	s->ev[s->n++] = (struct jpb_truth_event){ m, bci, op, kind };
}

static void bcs(struct seq *s, uint32_t m, const uint16_t *bci, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ev(s, m, bci[i], JPB_TRUTH_BYTECODE);
}
#define BCS(s, m, ...)                                                   \
	do {                                                             \
		static const uint16_t b_[] = { __VA_ARGS__ };            \
		bcs(s, m, b_, sizeof(b_) / sizeof(b_[0]));               \
	} while (0)

static void call_sq(struct seq *s)
{
	ev(s, M_SQ, 0, JPB_TRUTH_ENTRY);
	BCS(s, M_SQ, 0, 1, 2, 3);
	ev(s, M_SQ, 3, JPB_TRUTH_EXIT);
}

static void call_loop(struct seq *s, unsigned n)
{
	ev(s, M_LOOP, 0, JPB_TRUTH_ENTRY);
	BCS(s, M_LOOP, 0, 1, 2, 3);
	for (unsigned i = 0;; i++) {
		BCS(s, M_LOOP, 4, 5, 6);
		if (i >= n)
			break;
		BCS(s, M_LOOP, 9, 10, 11, 12);
		if (i % 2 == 0) {
			BCS(s, M_LOOP, 15, 16, 17);
			call_sq(s);
			BCS(s, M_LOOP, 20, 21);
		}
		BCS(s, M_LOOP, 22, 25);
	}
	BCS(s, M_LOOP, 28, 29);
	ev(s, M_NANO, 0, JPB_TRUTH_ENTRY);
	ev(s, M_NANO, 0, JPB_TRUTH_EXIT);
	BCS(s, M_LOOP, 32, 33, 34);
	ev(s, M_LOOP, 34, JPB_TRUTH_EXIT);
}

static void call_safe(struct seq *s, int b)
{
	ev(s, M_SAFE, 0, JPB_TRUTH_ENTRY);
	BCS(s, M_SAFE, 0, 1, 2);
	ev(s, M_DIV, 0, JPB_TRUTH_ENTRY);
	BCS(s, M_DIV, 0, 1, 2);
	if (b == 0) { /* ArithmeticException from idiv, caught in safe */
		ev(s, M_DIV, 2, JPB_TRUTH_THROW);
		ev(s, M_DIV, 2, JPB_TRUTH_EXIT_EXC);
		ev(s, M_SAFE, 6, JPB_TRUTH_CATCH);
		BCS(s, M_SAFE, 6, 7, 8);
	} else {
		BCS(s, M_DIV, 3);
		ev(s, M_DIV, 3, JPB_TRUTH_EXIT);
		BCS(s, M_SAFE, 5);
	}
	ev(s, M_SAFE, 8, JPB_TRUTH_EXIT);
}

static void call_get(struct seq *s, uint32_t m)
{
	ev(s, m, 0, JPB_TRUTH_ENTRY);
	BCS(s, m, 0, 1, 4);
	ev(s, m, 4, JPB_TRUTH_EXIT);
}

/* Thread T runs main(iters); receivers vary with the iteration and, for
 * the later threads, more kinds appear late (so inlined code deopts). */
static void thread_events(struct seq *s, unsigned t, unsigned iters)
{
	ev(s, M_MAIN, 0, JPB_TRUTH_ENTRY);
	BCS(s, M_MAIN, 0, 1);
	for (unsigned i = 0;; i++) {
		BCS(s, M_MAIN, 2, 3, 6);
		if (i >= iters)
			break;
		BCS(s, M_MAIN, 9, 10);
		call_loop(s, (i + t) % 9 + 2);
		BCS(s, M_MAIN, 13, 14, 15, 16, 17, 18);
		call_safe(s, (int)(i % 3));
		BCS(s, M_MAIN, 21, 22, 23);
		uint32_t recv = i < iters / 2 ? M_A : (i % 5 == 0 ? M_C : (i % 2 ? M_B : M_A));
		call_get(s, recv);
		BCS(s, M_MAIN, 26, 27, 30);
	}
	BCS(s, M_MAIN, 33);
	ev(s, M_MAIN, 33, JPB_TRUTH_EXIT);
}

/* Events that follow no program: any method, any instruction start, any
 * kind.  The simulator must take them without crashing. */
static void chaos_events(struct seq *s, struct rng *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t m = 1 + (uint32_t)rng_below(r, M_NANO);
		const struct smeth *sm = &methods[m - 1];
		unsigned k = (unsigned)rng_below(r, 20);
		uint8_t kind = k < 12 ? JPB_TRUTH_BYTECODE
			       : k < 14 ? JPB_TRUTH_ENTRY
			       : k < 16 ? JPB_TRUTH_EXIT
			       : (uint8_t)(JPB_TRUTH_EXIT_EXC + rng_below(r, 3));
		uint16_t bci = 0;
		if (kind == JPB_TRUTH_BYTECODE && sm->len) {
			uint32_t want = (uint32_t)rng_below(r, sm->len);
			for (uint32_t at = 0; at < sm->len;) {
				int len = jbc_length(sm->code, sm->len, at);
				if (at >= want || len <= 0) {
					bci = (uint16_t)at;
					break;
				}
				at += (uint32_t)len;
			}
		} else if (kind == JPB_TRUTH_BYTECODE) {
			kind = JPB_TRUTH_ENTRY;
		}
		ev(s, m, bci, kind);
	}
}

int scenario_write(struct jpb_bundle *b, const struct scenario_opts *o,
		   char *err, size_t n)
{
	struct jpb_writer *w;
	int rc = jpb_writer_open(b, "truth", &w);
	if (rc) {
		snprintf(err, n, "truth: %s", jpb_bundle_errmsg(b));
		return rc;
	}
	struct jpb_buf scratch = { 0 };
	uint8_t code_main[sizeof(c_main)];
	memcpy(code_main, c_main, sizeof(c_main));
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		const struct smeth *m = &methods[i];
		struct jpb_rec_truth_method tm = { (uint32_t)i + 1, m->access,
						   jpb_str_c(m->cls), jpb_str_c(m->name),
						   jpb_str_c(m->sig),
						   { m->code, m->len } };
		if (!rc)
			rc = jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_TRUTH_METHOD),
						0, &tm, &scratch);
	}
	for (unsigned t = 0; t < o->threads && !rc; t++) {
		struct seq s = { 0 };
		struct rng r = { o->chaos + t };
		if (o->chaos)
			chaos_events(&s, &r, o->iters * 50);
		else
			thread_events(&s, t, o->iters);
		uint8_t *p = xrealloc(NULL, s.n * JPB_TRUTH_EVENT_SIZE);
		/* batches of 4096 events, as the agent writes them */
		for (size_t k = 0; k < s.n && !rc; k += 4096) {
			size_t cnt = s.n - k < 4096 ? s.n - k : 4096;
			for (size_t j = 0; j < cnt; j++)
				jpb_truth_event_put(p + j * 8, &s.ev[k + j]);
			struct jpb_rec_truth_events te = {
				0, 1000 + t, k, { p, (uint32_t)(cnt * 8) }
			};
			rc = jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_TRUTH_EVENTS),
						0, &te, &scratch);
		}
		free(p);
		free(s.ev);
	}
	int rc2 = jpb_writer_close(w);
	jpb_buf_fini(&scratch);
	if (!rc)
		rc = rc2;
	if (rc)
		snprintf(err, n, "truth: %s", jpb_errstr(rc));
	(void)code_main;
	return rc;
}
