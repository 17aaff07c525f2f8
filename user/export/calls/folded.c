// SPDX-License-Identifier: MIT
/* Collapsed stacks from the calling-context tree. */
#include "export/calls/folded.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "export/calls/cct.h"
#include "export/calls/export.h"
#include "export/calls/source.h"

/* NAME up to its descriptor, with the separators of the format replaced. */
static void frame(FILE *f, const char *name)
{
	for (const char *p = name; *p && *p != '('; p++)
		fputc(*p == ';' || *p == ' ' ? '_' : *p, f);
}

static int write_path(FILE *f, const struct calls_src *s, const struct cct *c,
		      uint32_t id, uint32_t **path, size_t *cap)
{
	const struct cct_node *n = cct_node(c, id);
	char buf[64];
	if (n->depth > *cap) {
		uint32_t *p = realloc(*path, n->depth * sizeof(**path));
		if (!p)
			return jpb_err_nomem;
		*path = p;
		*cap = n->depth;
	}
	for (uint32_t i = n->depth; i > 0; i--, id = cct_node(c, id)->parent)
		(*path)[i - 1] = id;
	for (uint32_t i = 0; i < n->depth; i++) {
		if (i)
			fputc(';', f);
		frame(f, calls_src_name(s, cct_node(c, (*path)[i])->method, buf,
					sizeof(buf)));
	}
	return 0;
}

int folded_export(const struct calls_src *s, const struct calls_opts *o,
		  FILE *f, char *errmsg, size_t size)
{
	struct cct *c;
	uint32_t *path = NULL;
	size_t cap = 0;
	int rc = cct_build(s, o->fold_recursion, &c, errmsg, size);
	for (uint32_t id = 1; !rc && id < cct_count(c); id++) {
		const struct cct_node *n = cct_node(c, id);
		uint64_t w = o->weight_time ? n->time_ns : n->bytecodes;
		if (!w)
			continue;
		rc = write_path(f, s, c, id, &path, &cap);
		fprintf(f, " %" PRIu64 "\n", w);
	}
	if (!rc && !o->weight_time && cct_totals(c)->lost)
		fprintf(f, "[unknown] %" PRIu64 "\n", cct_totals(c)->lost);
	if (rc == jpb_err_nomem)
		snprintf(errmsg, size, "folded: out of memory");
	free(path);
	cct_free(c);
	return rc;
}
