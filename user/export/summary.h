/* SPDX-License-Identifier: MIT */
/*
 * `jpbpf report --format summary`: hot methods by executed bytecodes and
 * by time, coverage and data loss, from a bundle's reconstructed flows
 * (flow/methods, flow/tidN) and decoded gaps.  Each
 * method's count is split by how its events are known: observed (decoded
 * from compiled code, or placed in interpreted code with certainty or by
 * choice), recovered (filled into lost trace), so no figure hides what
 * was inferred.
 */
#ifndef JPBPF_EXPORT_SUMMARY_H
#define JPBPF_EXPORT_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct jpb_bundle;

struct summary_opts {
	uint32_t tid;  /* 0: all threads */
	unsigned top;  /* methods listed (0: 20) */
};

/* The summary as a JSON object (docs/EXPORTS.md, "summary"): {threads,
 * events, observed, recovered, unknown, time_ns, methods: [{method,
 * events, observed, recovered, share, time_ns, time_share, covered,
 * code_length}] sorted by events then index, methods_by_time (the same
 * entries by time), coverage (coverage.h), loss: {gaps, lost_ns,
 * recovered, unknown, resyncs, writer_losses}, damaged}.  On failure
 * returns a jpb_error and writes a one-line reason to ERRMSG. */
int summary_build(struct jpb_bundle *b, const struct summary_opts *o,
		  json_t **out, char *errmsg, size_t size);

/* The same as text: totals, then hot methods by bytecodes and by time,
 * coverage by class and loss, one section each (summary_text.c). */
void summary_print(FILE *f, json_t *summary);

#endif /* JPBPF_EXPORT_SUMMARY_H */
