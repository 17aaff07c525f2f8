// SPDX-License-Identifier: MIT
/* The calling-context tree written as text or JSON. */
#include "export/calls/cct_out.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "export/calls/cct.h"
#include "export/calls/export.h"
#include "export/calls/source.h"

static void totals_json(FILE *f, const struct cct *c, const struct calls_src *s)
{
	const struct cct_totals *t = cct_totals(c);
	fprintf(f, "{\"format\":\"jpbpf-cct\",\"version\":1,\"fold_recursion\":%s,"
		"\"clock\":\"%s\",\"thread\":%" PRIu32 ",\"threads\":%" PRIu64
		",\"bytecodes\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"breaks\":%" PRIu64
		",\"time_ns\":%" PRIu64 ",\"untimed_ns\":%" PRIu64 ",\"contexts\":%zu,\n",
		cct_folded(c) ? "true" : "false",
		s->clock_exact ? "tsc_pairs" : "tsc_ticks", s->tid, t->threads,
		t->bytecodes, t->lost, t->breaks, t->time_ns, t->untimed_ns,
		cct_count(c) - 1);
}

void cct_write_json(FILE *f, const struct cct *c, const struct calls_src *s)
{
	char buf[64];
	totals_json(f, c, s);
	fputs("\"nodes\":[", f);
	for (uint32_t id = 1; id < cct_count(c); id++) {
		const struct cct_node *n = cct_node(c, id);
		fprintf(f, "%s\n{\"id\":%" PRIu32 ",\"parent\":%" PRIu32
			",\"depth\":%" PRIu32 ",\"method\":%s,\"callsite\":%" PRId32
			",\"invocations\":%" PRIu64 ",\"bytecodes\":%" PRIu64
			",\"bytecodes_incl\":%" PRIu64 ",\"recovered\":%" PRIu64
			",\"time_ns\":%" PRIu64 ",\"time_incl_ns\":%" PRIu64 "}",
			id > 1 ? "," : "", id, n->parent, n->depth,
			calls_src_json_name(s, n->method, buf, sizeof(buf)),
			n->callsite, n->invocations, n->bytecodes,
			n->bytecodes_incl, n->recovered, n->time_ns,
			n->time_incl_ns);
	}
	fputs("\n]}\n", f);
}

/* Text: a depth-first walk, hottest child first, with an explicit stack
 * (recursion can be deep).  An entry with HIDDEN > 0 is the summary line
 * of siblings below the thresholds. */
struct item {
	uint32_t id;
	uint32_t depth;
	uint64_t hidden;
	uint64_t hidden_bc;
};

struct kid {
	uint64_t incl;
	uint32_t id;
};

struct text {
	FILE *f;
	const struct cct *c;
	const struct calls_src *s;
	const struct calls_opts *o;
	struct item *st;
	size_t n, cap;
	struct kid *kids;
	size_t nkids, capkids;
	uint64_t total;
};

static int by_incl(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	if (x->incl != y->incl)
		return x->incl < y->incl ? 1 : -1;
	return x->id < y->id ? -1 : 1;
}

static int push(struct text *t, struct item it)
{
	if (JPB_GROW(t->st, t->n, t->cap))
		return jpb_err_nomem;
	t->st[t->n++] = it;
	return 0;
}

static int visible(const struct text *t, const struct cct_node *n, size_t rank)
{
	if (t->o->top && rank >= t->o->top)
		return 0;
	return !t->total ||
	       100.0 * (double)n->bytecodes_incl / (double)t->total >= t->o->min_share;
}

/* Push ID's children (the visible ones, hottest on top). */
static int expand(struct text *t, uint32_t id)
{
	const struct cct_node *p = cct_node(t->c, id);
	t->nkids = 0;
	for (uint32_t k = p->first_child; k; k = cct_node(t->c, k)->next_sibling) {
		if (JPB_GROW(t->kids, t->nkids, t->capkids))
			return jpb_err_nomem;
		t->kids[t->nkids++] = (struct kid){ cct_node(t->c, k)->bytecodes_incl, k };
	}
	qsort(t->kids, t->nkids, sizeof(*t->kids), by_incl);
	size_t shown = 0;
	struct item hid = { 0, p->depth + 1, 0, 0 };
	while (shown < t->nkids &&
	       visible(t, cct_node(t->c, t->kids[shown].id), shown))
		shown++;
	for (size_t i = shown; i < t->nkids; i++) {
		hid.hidden++;
		hid.hidden_bc += t->kids[i].incl;
	}
	if (hid.hidden && push(t, hid))
		return jpb_err_nomem;
	for (size_t i = shown; i > 0; i--) {
		struct item it = { t->kids[i - 1].id, p->depth + 1, 0, 0 };
		if (push(t, it))
			return jpb_err_nomem;
	}
	return 0;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void line(struct text *t, const struct item *it)
{
	char buf[64];
	if (it->hidden) {
		fprintf(t->f, "%6.2f%% %11" PRIu64 " %*s... %" PRIu64
			" more contexts below the thresholds\n",
			pct(it->hidden_bc, t->total), it->hidden_bc,
			47 + 2 * (int)(it->depth - 1), "", it->hidden);
		return;
	}
	const struct cct_node *n = cct_node(t->c, it->id);
	fprintf(t->f, "%6.2f%% %11" PRIu64 " %11" PRIu64 " %9" PRIu64 " %11.3f %11.3f  %*s%s",
		pct(n->bytecodes_incl, t->total), n->bytecodes_incl, n->bytecodes,
		n->invocations, (double)n->time_incl_ns / 1e6,
		(double)n->time_ns / 1e6, 2 * (int)(n->depth - 1), "",
		calls_src_name(t->s, n->method, buf, sizeof(buf)));
	if (n->callsite >= 0)
		fprintf(t->f, " @%" PRId32, n->callsite);
	if (n->recovered)
		fprintf(t->f, "  [%" PRIu64 " recovered]", n->recovered);
	fputc('\n', t->f);
}

int cct_write_text(FILE *f, const struct cct *c, const struct calls_src *s,
		   const struct calls_opts *o)
{
	const struct cct_totals *tot = cct_totals(c);
	struct text t = { .f = f, .c = c, .s = s, .o = o, .total = tot->bytecodes };
	fprintf(f, "cct: %" PRIu64 " thread%s, %" PRIu64 " bytecodes (%" PRIu64
		" at unknown positions), %zu contexts, %" PRIu64
		" stack breaks; recursion %s; times from %s\n",
		tot->threads, tot->threads == 1 ? "" : "s", tot->bytecodes,
		tot->lost, cct_count(c) - 1,
		tot->breaks, cct_folded(c) ? "folded" : "kept",
		s->clock_exact ? "the TSC clock pairs" : "raw TSC ticks (no clock pairs)");
	fprintf(f, "%7s %11s %11s %9s %11s %11s  %s\n", "incl%", "bytecodes",
		"excl", "calls", "incl_ms", "excl_ms", "context (method @caller bci)");
	int rc = expand(&t, 0);
	while (!rc && t.n) {
		struct item it = t.st[--t.n];
		line(&t, &it);
		if (!it.hidden)
			rc = expand(&t, it.id);
	}
	free(t.st);
	free(t.kids);
	return rc;
}

int cct_export(const struct calls_src *s, const struct calls_opts *o, FILE *f,
	       char *errmsg, size_t size)
{
	struct cct *c;
	int rc = cct_build(s, o->fold_recursion, &c, errmsg, size);
	if (rc)
		return rc;
	if (o->json)
		cct_write_json(f, c, s);
	else
		rc = cct_write_text(f, c, s, o);
	if (rc)
		snprintf(errmsg, size, "cct: out of memory");
	cct_free(c);
	return rc;
}
