/* SPDX-License-Identifier: MIT */
/*
 * A tiered-compilation-like policy: invocation and back-edge counters,
 * branch and call-site profiles gathered while interpreting, compilation
 * with profile-driven inlining, deoptimization (made not entrant, counters
 * reset, recompiled later).  Code is placed in the code cache by a bump
 * allocator; freed code is never reused (see docs/SIMULATOR.md).
 */
#ifndef SIM_JIT_POLICY_H
#define SIM_JIT_POLICY_H

#include "model.h"

struct jit_opts {
	int enabled;
	uint32_t invoke_threshold;
	uint32_t backedge_threshold;
	uint32_t max_inline_size;
	uint32_t max_inline_depth;
	uint32_t max_recompiles;
	int osr;               /* on-stack replacement at back edges */
	uint64_t code_cache;   /* bytes; when full, cold code is flushed */
};

/* What the policy asks of the running system. */
struct jit_env {
	void *ctx;
	/* some thread still runs code of NM (a frame refers to it) */
	int (*active)(void *ctx, const struct nmethod *nm);
	/* code freed at FREED_NS may be overwritten now: every CPU that is
	 * tracing has written a TSC since, so a decoder that picks code by
	 * time cannot mistake the old code for the new */
	int (*reusable)(void *ctx, uint64_t freed_ns);
};

struct jit;

struct jit *jit_new(const struct jit_opts *o, const struct truth *t,
		    const struct jit_env *env);
void jit_free(struct jit *j);

/* An invocation of MID at time NOW; returns 1 if this invocation's counter
 * overflow requests a compile (the method is compiled now and used from
 * the next invocation on). */
int jit_on_invoke(struct jit *j, uint32_t mid, uint64_t now);
/* A branch at (MID, BCI).  With OSR, a taken back edge whose counter
 * overflow compiled MID now returns that code: the interpreted frame
 * continues in it at the branch target.  Else NULL. */
struct nmethod *jit_on_branch(struct jit *j, uint32_t mid, uint16_t bci,
			      int taken, int backward, uint64_t now);
void jit_on_call(struct jit *j, uint32_t mid, uint16_t bci, uint32_t callee);

/* The entrant compiled code of MID, or NULL. */
struct nmethod *jit_code(struct jit *j, uint32_t mid);
/* NM hit an uncommon trap: make it not entrant. */
void jit_deopt(struct jit *j, struct nmethod *nm, uint64_t now);

/* Free not-entrant code that no thread runs any more. */
void jit_sweep(struct jit *j, uint64_t now);

/* The live nmethod containing IP, or NULL. */
struct nmethod *jit_find(struct jit *j, uint64_t ip);

/* Compilations placed in freed code (address reuse). */
uint64_t jit_reuses(const struct jit *j);

/* Every nmethod ever compiled, in compile order. */
struct nmethod *const *jit_nmethods(const struct jit *j, size_t *n);

#endif
