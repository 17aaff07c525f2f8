/* SPDX-License-Identifier: MIT */
/* `report --format cct`: the calling-context tree as an indented text
 * tree (thresholds: --top, --min-share) or as JSON, one node a line
 * (docs/EXPORTS.md, "cct"). */
#ifndef JPBPF_EXPORT_CALLS_CCT_OUT_H
#define JPBPF_EXPORT_CALLS_CCT_OUT_H

#include <stddef.h>
#include <stdio.h>

struct cct;
struct calls_src;
struct calls_opts;

void cct_write_json(FILE *f, const struct cct *c, const struct calls_src *s);
int cct_write_text(FILE *f, const struct cct *c, const struct calls_src *s,
		   const struct calls_opts *o);

/* Build and write; 0 or a jpb_error with a reason in ERRMSG. */
int cct_export(const struct calls_src *s, const struct calls_opts *o, FILE *f,
	       char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_CALLS_CCT_OUT_H */
