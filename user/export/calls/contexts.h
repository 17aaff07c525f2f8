/* SPDX-License-Identifier: MIT */
/*
 * `report --format contexts`: each thread's bytecodes as a stream of
 * calling-context ids (CCT node ids of the kept-recursion tree, exact
 * offline), run-length coded, followed by the context table that expands
 * an id to its stack (docs/EXPORTS.md, "contexts" gives the encoding).
 * `--expand ID` prints one id's stack instead.
 */
#ifndef JPBPF_EXPORT_CALLS_CONTEXTS_H
#define JPBPF_EXPORT_CALLS_CONTEXTS_H

#include <stddef.h>
#include <stdio.h>

struct calls_src;
struct calls_opts;

int contexts_export(const struct calls_src *s, const struct calls_opts *o,
		    FILE *f, char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_CALLS_CONTEXTS_H */
