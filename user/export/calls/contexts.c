// SPDX-License-Identifier: MIT
/* Context-id streams: the CCT is built while the runs are written, so
 * every id is known before the table that ends the output defines it. */
#include "export/calls/contexts.h"

#include <inttypes.h>
#include <stdlib.h>

#include "bundle.h"
#include "codec.h"
#include "export/calls/cct.h"
#include "export/calls/export.h"
#include "export/calls/source.h"

struct ctxs {
	FILE *f;
	const struct calls_src *s;
	struct cct *c;
	int json;
	int quiet;      /* --expand: build the tree, write nothing */
	uint32_t tid;
	uint32_t run_id; /* the current run: context and length */
	uint64_t run_n;
};

static void flush_run(struct ctxs *x)
{
	if (!x->run_n || x->quiet)
		return;
	if (x->json)
		fprintf(x->f, "{\"tid\":%" PRIu32 ",\"ctx\":%" PRIu32 ",\"n\":%" PRIu64 "}\n",
			x->tid, x->run_id, x->run_n);
	else if (x->run_n == 1)
		fprintf(x->f, "%" PRIu32 "\n", x->run_id);
	else
		fprintf(x->f, "%" PRIu32 "*%" PRIu64 "\n", x->run_id, x->run_n);
	x->run_n = 0;
}

static int begin(void *arg, uint32_t tid)
{
	struct ctxs *x = arg;
	x->tid = tid;
	if (!x->json && !x->quiet)
		fprintf(x->f, "thread %" PRIu32 "\n", tid);
	return 0;
}

static int event(void *arg, const struct walk_event *we)
{
	struct ctxs *x = arg;
	int rc = cct_on_event(x->c, we);
	if (rc || (we->kind != WALK_BYTECODE && we->kind != WALK_LOST))
		return rc;
	uint32_t id = we->kind == WALK_BYTECODE ? (uint32_t)we->frame->user : 0;
	if (x->run_n && id != x->run_id)
		flush_run(x);
	x->run_id = id;
	x->run_n++;
	return ferror(x->f) ? jpb_err_io : 0;
}

static int end(void *arg, uint32_t tid, const struct walk_stats *st)
{
	struct ctxs *x = arg;
	(void)tid;
	flush_run(x);
	cct_thread_done(x->c, st);
	return 0;
}

static void table(struct ctxs *x)
{
	char buf[64];
	size_t n = cct_count(x->c);
	if (!x->json)
		fprintf(x->f, "contexts %zu\n", n - 1);
	for (uint32_t id = 1; id < n; id++) {
		const struct cct_node *c = cct_node(x->c, id);
		if (x->json)
			fprintf(x->f, "{\"context\":%" PRIu32 ",\"parent\":%" PRIu32
				",\"method\":%s,\"callsite\":%" PRId32 "}\n", id,
				c->parent,
				calls_src_json_name(x->s, c->method, buf, sizeof(buf)),
				c->callsite);
		else
			fprintf(x->f, "%" PRIu32 " %" PRIu32 " %" PRId32 " %s\n", id,
				c->parent, c->callsite,
				calls_src_name(x->s, c->method, buf, sizeof(buf)));
	}
}

/* The stack of ID, root first, one frame a line. */
static int expand(struct ctxs *x, uint32_t id, char *errmsg, size_t size)
{
	char buf[64];
	const struct cct_node *c = cct_node(x->c, id);
	if (!c || id == 0) {
		snprintf(errmsg, size, "contexts: no context %" PRIu32 " (ids are 1..%zu "
			 "for these threads)", id, cct_count(x->c) - 1);
		return jpb_err_not_found;
	}
	uint32_t *path = malloc(c->depth * sizeof(*path));
	if (!path)
		return jpb_err_nomem;
	for (uint32_t i = c->depth; i > 0; i--, id = cct_node(x->c, id)->parent)
		path[i - 1] = id;
	for (uint32_t i = 0; i < c->depth; i++) {
		const struct cct_node *p = cct_node(x->c, path[i]);
		fprintf(x->f, "%" PRIu32 " %s", path[i],
			calls_src_name(x->s, p->method, buf, sizeof(buf)));
		if (p->callsite >= 0)
			fprintf(x->f, " @%" PRId32, p->callsite);
		fputc('\n', x->f);
	}
	free(path);
	return 0;
}

int contexts_export(const struct calls_src *s, const struct calls_opts *o,
		    FILE *f, char *errmsg, size_t size)
{
	static const struct calls_walk_ops ops = { begin, event, end };
	struct ctxs x = { .f = f, .s = s, .json = o->json, .quiet = o->expand >= 0 };
	int rc = cct_alloc(&x.c, 0, s);
	if (rc) {
		snprintf(errmsg, size, "contexts: out of memory");
		return rc;
	}
	if (!x.json && !x.quiet)
		fputs("jpbpf-contexts 1\n", f);
	rc = calls_src_walk(s, &ops, &x, errmsg, size);
	if (!rc && x.quiet)
		rc = expand(&x, (uint32_t)o->expand, errmsg, size);
	else if (!rc)
		table(&x);
	if (rc == jpb_err_io)
		snprintf(errmsg, size, "contexts: write failed");
	cct_free(x.c);
	return rc;
}
