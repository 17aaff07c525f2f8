/* SPDX-License-Identifier: MIT */
/*
 * Coverage from reconstructed flows, for `report --format summary`: per
 * method the bytecodes (distinct bcis) that ran, of the method's code
 * length, and its conditional branches seen going both ways, one way or
 * not at all (a direction is known from the event after the branch, as
 * in the flow export); per class the same over all its methods with
 * code, run or not.  Every event with a known position counts, recovered
 * ones included.
 */
#ifndef JPBPF_EXPORT_COVERAGE_H
#define JPBPF_EXPORT_COVERAGE_H

#include <stdint.h>

#include <jansson.h>

#include "records_flow.h"

struct xmethods;
struct xcov;

int xcov_alloc(struct xcov **out, const struct xmethods *m);
void xcov_free(struct xcov *c);

/* E ran and NEXT (NULL at the end of a thread's flow) followed it. */
int xcov_event(struct xcov *c, const struct jpb_flow_event *e,
	       const struct jpb_flow_event *next);

struct xcov_figures {
	int64_t code_length; /* -1: unknown (no class file) */
	uint64_t covered;
	int64_t branches;    /* -1: unknown */
	uint64_t both, one, none;
};

/* Figures of flow method IDX; 0, or -1 if it never ran. */
int xcov_method(const struct xcov *c, uint32_t idx, struct xcov_figures *out);

/* {"classes": [{class, file, methods, methods_run, code_length, covered,
 * branches, branches_both, branches_one, branches_none}], "methods":
 * [{method, code_length, covered, branches, ...}]}, both sorted by
 * name; code_length and branches null where unknown. */
json_t *xcov_json(const struct xcov *c);

#endif /* JPBPF_EXPORT_COVERAGE_H */
