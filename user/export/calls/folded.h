/* SPDX-License-Identifier: MIT */
/* `report --format folded`: collapsed stacks, "root;caller;callee N" a
 * line, for flamegraph.pl and speedscope; N is the context's exclusive
 * bytecodes, or its exclusive ns with --weight time (docs/EXPORTS.md,
 * "folded").  Frames are "pkg.Class.method" (no descriptor: it holds ';'). */
#ifndef JPBPF_EXPORT_CALLS_FOLDED_H
#define JPBPF_EXPORT_CALLS_FOLDED_H

#include <stddef.h>
#include <stdio.h>

struct calls_src;
struct calls_opts;

int folded_export(const struct calls_src *s, const struct calls_opts *o,
		  FILE *f, char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_CALLS_FOLDED_H */
