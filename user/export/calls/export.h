/* SPDX-License-Identifier: MIT */
/*
 * The call-structure exports of `jpbpf report` (docs/EXPORTS.md): the
 * calling-context tree (cct), the call trace (calls), context-id streams
 * (contexts), collapsed stacks (folded) and a Chrome Trace Event timeline
 * (perfetto), all from the walker (walk.h) over the reconstructed flows.
 * Output is written as it is produced; only the CCT (one node per
 * distinct context) is kept in memory.
 */
#ifndef JPBPF_EXPORT_CALLS_EXPORT_H
#define JPBPF_EXPORT_CALLS_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct jpb_bundle;

enum calls_format {
	CALLS_CCT = 1,
	CALLS_CALLS,
	CALLS_CONTEXTS,
	CALLS_FOLDED,
	CALLS_PERFETTO,
};

struct calls_opts {
	uint32_t tid;        /* 0: all threads */
	int json;            /* cct: JSON; calls: JSON Lines; contexts: JSON Lines */
	int fold_recursion;  /* cct, folded */
	unsigned top;        /* cct text: children shown per context (0: all) */
	double min_share;    /* cct text: hide contexts below PCT of the total */
	int weight_time;     /* folded: weight by ns instead of bytecodes */
	int64_t expand;      /* contexts: print the stack of this id (-1: off) */
	void (*warn)(const char *msg); /* damaged input; may be NULL */
};

/* The format named NAME, or 0 if it is not one of these. */
enum calls_format calls_format_parse(const char *name);

/* Export bundle B's flows as FMT to OUT.  0, or a jpb_error with a
 * one-line reason in ERRMSG (jpb_err_not_found: no flow, unknown thread
 * or context id; jpb_err_io: write failed). */
int calls_export(struct jpb_bundle *b, enum calls_format fmt,
		 const struct calls_opts *o, FILE *out, char *errmsg,
		 size_t size);

#endif /* JPBPF_EXPORT_CALLS_EXPORT_H */
