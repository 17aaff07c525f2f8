/* SPDX-License-Identifier: MIT */
/*
 * A calling-context tree (CCT) with the platform-independent metrics of
 * JP/JP2: per context, invocations and executed bytecodes, exclusive and
 * inclusive, and wall time from the flow's TSC.  A context is a path of
 * (method, call site) from a root; children are told apart by the
 * caller's bci.  Built from the walker's events (cct_on_event is a
 * walk_fn), one thread after another, all into one tree.
 *
 * Node ids are dense, in creation order, so a parent's id is below its
 * children's; id 0 is the virtual node above the roots and stands for "no
 * context" (unknown events).  For the same flows and options the ids are
 * the same on every run: the contexts export relies on that.
 */
#ifndef JPBPF_EXPORT_CALLS_CCT_H
#define JPBPF_EXPORT_CALLS_CCT_H

#include <stddef.h>
#include <stdint.h>

#include "export/calls/walk.h"

struct calls_src;

struct cct_node {
	uint32_t parent;       /* 0 for a root */
	uint32_t method;       /* flow method index */
	int32_t callsite;      /* the caller's bci; -1 for a root */
	uint32_t depth;        /* 1 for a root */
	uint32_t first_child;  /* 0: none; siblings in creation order */
	uint32_t next_sibling;
	uint64_t invocations;  /* calls into this context (roots: starts) */
	uint64_t bytecodes;    /* executed here (exclusive) */
	uint64_t recovered;    /* of which recovered, not observed */
	uint64_t time_ns;      /* exclusive */
	uint64_t bytecodes_incl; /* with the subtree, after cct_finish */
	uint64_t time_incl_ns;
};

/* Thread-level figures the tree does not hold. */
struct cct_totals {
	uint64_t threads;
	uint64_t bytecodes;  /* all flow events, unknown ones included */
	uint64_t lost;       /* unknown events: no context */
	uint64_t breaks;     /* walker breaks */
	uint64_t time_ns;    /* attributed to contexts */
	uint64_t untimed_ns; /* spans across breaks and unknown events */
};

struct cct;

/* FOLD: recursion folded (a call to a method already on the context's
 * path re-enters that ancestor's node).  S gives the clock and must
 * outlive C; NULL: TSC values are taken as ns. */
int cct_alloc(struct cct **out, int fold, const struct calls_src *s);
void cct_free(struct cct *c);

/* A walk_fn: feed it every walker event of a thread.  The frame's `user`
 * field is set to its node id. */
int cct_on_event(void *cct, const struct walk_event *we);
/* Between threads: account the thread's walk (breaks) and reset time. */
void cct_thread_done(struct cct *c, const struct walk_stats *st);

/* Compute the inclusive figures; call once after the last thread. */
void cct_finish(struct cct *c);

/* Nodes 0 .. cct_count() - 1; node 0 is the virtual root. */
size_t cct_count(const struct cct *c);
const struct cct_node *cct_node(const struct cct *c, uint32_t id);
const struct cct_totals *cct_totals(const struct cct *c);
int cct_folded(const struct cct *c);

/* Build the whole tree of S's selected threads. */
int cct_build(const struct calls_src *s, int fold, struct cct **out,
	      char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_CALLS_CCT_H */
