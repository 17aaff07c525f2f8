/* SPDX-License-Identifier: MIT */
/*
 * `jpbpf eval`: the reconstructed flows (the flow streams) of a bundle compared with
 * its ground truth (stream truth), JPortal's Table 3/4 metrics per thread
 * and overall.  The definitions are in docs/RECONSTRUCTION.md and
 * eval_definitions(); this is the only code besides tests that reads the
 * truth next to the flows.
 */
#ifndef JPBPF_EVAL_EVAL_H
#define JPBPF_EVAL_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bundle.h"

struct eval_counts {
	uint32_t tid;
	uint64_t truth;       /* truth bytecode events */
	uint64_t trace;       /* flow events observed in the trace (not recovered) */
	uint64_t known;       /* ... of them placed at a (method, bci), unjudged
			       * ones excepted */
	uint64_t unjudged;    /* placed, unaligned, at an instruction the truth
			       * cannot report (eval_definitions) */
	uint64_t unjudged_repeats; /* ... of them repeating the location of
				    * the aligned event before them */
	uint64_t matched;     /* ... of them aligned with an equal truth event */
	uint64_t recovered;   /* flow events filled into gaps */
	uint64_t rec_matched; /* ... aligned with an equal truth event */
	uint64_t on_thread;   /* known events whose (method, bci) the thread's
			       * truth holds (multiset, count-bounded) */
	uint64_t missing;     /* truth events in lost trace */
	uint64_t compiled_known, compiled_matched; /* the decoded-status part */
	int lost_known;       /* missing is exact (sim/lost), not estimated */
	int hot10;            /* top-10 method overlap */
	double PMD, PR, RA, PDC, PD, DA, attribution;
};

struct eval_result {
	struct eval_counts overall;
	struct eval_counts *threads;
	size_t nthreads;
};

/* Evaluate bundle B.  Fails (with ERRMSG) when B has no truth or no flow. */
int eval_bundle(struct jpb_bundle *b, struct eval_result **out, char *errmsg,
		size_t size);
void eval_result_free(struct eval_result *r);

/* {"overall": {...}, "threads": [{...}]} with the metric keys. */
json_t *eval_json(const struct eval_result *r);

/* The metric definitions, one paragraph of plain text. */
const char *eval_definitions(void);

/* The alignment used by every accuracy figure, exposed for tests: T and F
 * are sequences of (method key, bci) packed as u64 (0 never matches);
 * MATCHED_F (may be NULL) gets 1 for every F element aligned with an
 * equal T element.  Returns the number of aligned pairs. */
uint64_t eval_align(const uint64_t *t, size_t nt, const uint64_t *f, size_t nf,
		    uint8_t *matched_f);
/* The same, and T_OF_F (may be NULL) gets the index in T each F element is
 * aligned with, SIZE_MAX for unaligned ones. */
uint64_t eval_align_pairs(const uint64_t *t, size_t nt, const uint64_t *f,
			  size_t nf, uint8_t *matched_f, size_t *t_of_f);

/* eval_align_pairs leaving out the F elements whose SKIP is set (they
 * stay unaligned): events the truth cannot hold, whose presence would
 * break the alignment's agreement runs.  MATCHED_F and T_OF_F (either
 * may be NULL) are over all NF elements.  Returns the aligned pairs (0
 * when out of memory). */
uint64_t eval_align_skip(const uint64_t *t, size_t nt, const uint64_t *f,
			 size_t nf, const uint8_t *skip, uint8_t *matched_f,
			 size_t *t_of_f);

/* JVMTI never posts a single step at the location of the previous one,
 * so a run of flow events at one location holds one truth event.  Sets
 * REPEAT[i] (N entries) for every F[i] left unaligned (MATCHED_F[i] 0)
 * whose run of equal events before it starts with an aligned one;
 * returns their number. */
size_t eval_repeats(const uint64_t *f, const uint8_t *matched_f, size_t n,
		    uint8_t *repeat);

#endif /* JPBPF_EVAL_EVAL_H */
