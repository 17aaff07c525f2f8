/* SPDX-License-Identifier: MIT */
/*
 * What the call-structure exports read: a bundle's reconstructed flows
 * with their method names, threads and clock, and each selected thread's
 * flow events streamed through the walker (walk.h) in tid order.
 */
#ifndef JPBPF_EXPORT_CALLS_SOURCE_H
#define JPBPF_EXPORT_CALLS_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "export/calls/walk.h"

struct jpb_bundle;
struct xmethods;
struct xthreads;
struct xclock;

struct calls_src {
	struct jpb_bundle *b;   /* not owned */
	struct xmethods *m;
	struct xthreads *t;
	struct xclock *clk;
	int clock_exact;        /* real TSC pairs (else TSC ticks as ns) */
	uint32_t tid;           /* the selected thread; 0: all */
	size_t threads;         /* threads with a flow among the selected */
	void (*warn)(const char *msg); /* damaged streams; may be NULL */
};

/* Load names, threads and clock of B and check that TID (0: all) has a
 * flow.  On failure a jpb_error and a one-line reason in ERRMSG. */
int calls_src_open(struct calls_src *s, struct jpb_bundle *b, uint32_t tid,
		   char *errmsg, size_t size);
void calls_src_close(struct calls_src *s);

/* A method's printable name ("pkg.Cls.name(sig)"), or "method#N" /
 * "(unknown)" for index 0, written to BUF when not named. */
const char *calls_src_name(const struct calls_src *s, uint32_t method,
			   char *buf, size_t size);

/* The same as a quoted JSON string. */
const char *calls_src_json_name(const struct calls_src *s, uint32_t method,
				char *buf, size_t size);

/* Nanoseconds from the start of the recording for TSC. */
uint64_t calls_src_ns(const struct calls_src *s, uint64_t tsc);

/* Per selected thread: BEGIN(arg, tid), then every walker event, then
 * END(arg, tid, stats) after the open frames were dropped.  A damaged
 * stream ends its thread early with a warning (s->warn).  Returns 0, a
 * jpb_error (reason in ERRMSG) or the first nonzero callback result. */
struct calls_walk_ops {
	int (*begin)(void *arg, uint32_t tid);
	walk_fn event;
	int (*end)(void *arg, uint32_t tid, const struct walk_stats *st);
};
int calls_src_walk(const struct calls_src *s, const struct calls_walk_ops *ops,
		   void *arg, char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_CALLS_SOURCE_H */
