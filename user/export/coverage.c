// SPDX-License-Identifier: MIT
/* Bytecode and branch coverage from flows (see coverage.h). */
#include "export/coverage.h"

#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "export/flow/format.h"
#include "export/model/methods.h"
#include "java/bytecodes.h"

enum { COV_RAN = 1, COV_TAKEN = 2, COV_NOT_TAKEN = 4 };

struct mcov {
	uint8_t *bits; /* per bci: COV_* */
	size_t len, cap;
	int ran;
};

struct xcov {
	const struct xmethods *m;
	struct mcov *v; /* by flow method index */
	size_t cap;
};

int xcov_alloc(struct xcov **out, const struct xmethods *m)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return jpb_err_nomem;
	(*out)->m = m;
	return 0;
}

void xcov_free(struct xcov *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		free(c->v[i].bits);
	free(c->v);
	free(c);
}

static struct mcov *slot(struct xcov *c, uint32_t idx, size_t bci)
{
	if (idx >= c->cap) {
		size_t old = c->cap;
		if (jpb_grow((void **)&c->v, &c->cap, idx, sizeof(*c->v)))
			return NULL;
		memset(c->v + old, 0, (c->cap - old) * sizeof(*c->v));
	}
	struct mcov *mc = &c->v[idx];
	/* bits cover the code length, or as far as events reach without it */
	if (bci >= mc->len) {
		const struct xm_method *xm = xmethods_get(c->m, idx);
		size_t want = xm && xm->code && bci < xm->code->code_length ?
			      xm->code->code_length : bci + 1;
		size_t old = mc->cap;
		if (jpb_grow((void **)&mc->bits, &mc->cap, want - 1, 1))
			return NULL;
		memset(mc->bits + old, 0, mc->cap - old);
		mc->len = want;
	}
	return mc;
}

int xcov_event(struct xcov *c, const struct jpb_flow_event *e,
	       const struct jpb_flow_event *next)
{
	if (e->method == 0 || e->bci < 0 || e->status == JPB_FLOW_UNKNOWN)
		return 0;
	struct mcov *mc = slot(c, e->method, (size_t)e->bci);
	if (!mc)
		return jpb_err_nomem;
	mc->ran = 1;
	mc->bits[e->bci] |= COV_RAN;
	enum xflow_branch b = xflow_direction(e, next, c->m);
	if (b == XF_BRANCH_TAKEN)
		mc->bits[e->bci] |= COV_TAKEN;
	else if (b == XF_BRANCH_NOT_TAKEN)
		mc->bits[e->bci] |= COV_NOT_TAKEN;
	return 0;
}

/* Figures of CODE with run bits BITS (NULL: never ran). */
static void figures(const struct jcf_method *code, const struct mcov *mc,
		    struct xcov_figures *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; mc && i < mc->len; i++)
		f->covered += mc->bits[i] & COV_RAN;
	if (!code) {
		f->code_length = f->branches = -1;
		return;
	}
	f->code_length = code->code_length;
	for (size_t bci = 0; bci < code->code_length;) {
		int len = jbc_length(code->code, code->code_length, bci);
		if (len <= 0)
			break;
		if (jbc_info(code->code[bci])->kind == JBC_COND_BRANCH) {
			uint8_t b = mc && bci < mc->len ? mc->bits[bci] : 0;
			int dirs = !!(b & COV_TAKEN) + !!(b & COV_NOT_TAKEN);
			f->branches++;
			*(dirs == 2 ? &f->both : dirs ? &f->one : &f->none) += 1;
		}
		bci += (size_t)len;
	}
}

int xcov_method(const struct xcov *c, uint32_t idx, struct xcov_figures *out)
{
	if (idx >= c->cap || !c->v[idx].ran)
		return -1;
	const struct xm_method *xm = xmethods_get(c->m, idx);
	figures(xm ? xm->code : NULL, &c->v[idx], out);
	return 0;
}

static json_t *num_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static void put_figures(json_t *o, const struct xcov_figures *f)
{
	json_object_set_new(o, "code_length", num_or_null(f->code_length));
	json_object_set_new(o, "covered", json_integer((json_int_t)f->covered));
	json_object_set_new(o, "branches", num_or_null(f->branches));
	json_object_set_new(o, "branches_both", json_integer((json_int_t)f->both));
	json_object_set_new(o, "branches_one", json_integer((json_int_t)f->one));
	json_object_set_new(o, "branches_none", json_integer((json_int_t)f->none));
}

static void add(struct xcov_figures *sum, const struct xcov_figures *f)
{
	if (f->code_length >= 0 && sum->code_length >= 0)
		sum->code_length += f->code_length;
	else
		sum->code_length = -1;
	if (f->branches >= 0 && sum->branches >= 0)
		sum->branches += f->branches;
	else
		sum->branches = -1;
	sum->covered += f->covered;
	sum->both += f->both;
	sum->one += f->one;
	sum->none += f->none;
}

struct ran {
	const char *cls, *name;
	uint32_t idx;
};

static int by_class(const void *a, const void *b)
{
	const struct ran *x = a, *y = b;
	int d = strcmp(x->cls, y->cls);
	return d ? d : strcmp(x->name, y->name);
}

/* One class: its ran methods R[0..N); with a class file, all its methods
 * with code count, run or not. */
static json_t *class_json(const struct xcov *c, const struct ran *r, size_t n)
{
	const struct xm_method *first = xmethods_get(c->m, r[0].idx);
	const struct jcf *cf = first->cls;
	struct xcov_figures sum = { 0 }, f;
	unsigned methods = 0;
	if (cf) {
		for (unsigned i = 0; i < jcf_method_count(cf); i++) {
			const struct jcf_method *jm = jcf_method(cf, i);
			const struct mcov *mc = NULL;
			if (!jm->code)
				continue;
			for (size_t k = 0; k < n && !mc; k++)
				if (xmethods_get(c->m, r[k].idx)->code == jm)
					mc = &c->v[r[k].idx];
			figures(jm, mc, &f);
			add(&sum, &f);
			methods++;
		}
	} else {
		for (size_t k = 0; k < n; k++) {
			xcov_method(c, r[k].idx, &f);
			add(&sum, &f);
		}
		methods = (unsigned)n;
	}
	json_t *o = json_pack("{s:s,s:s?,s:i,s:i}", "class", r[0].cls, "file",
			      cf ? jcf_source_file(cf) : NULL, "methods",
			      (int)methods, "methods_run", (int)n);
	put_figures(o, &sum);
	return o;
}

json_t *xcov_json(const struct xcov *c)
{
	struct ran *r = malloc((c->cap ? c->cap : 1) * sizeof(*r));
	json_t *classes = json_array(), *methods = json_array();
	size_t n = 0;
	for (uint32_t i = 0; r && i < c->cap; i++) {
		const struct xm_method *xm = xmethods_get(c->m, i);
		if (c->v[i].ran && xm)
			r[n++] = (struct ran){ xm->class_name, xm->name, i };
	}
	if (r)
		qsort(r, n, sizeof(*r), by_class);
	for (size_t i = 0; i < n; i++) {
		struct xcov_figures f;
		xcov_method(c, r[i].idx, &f);
		json_t *o = json_pack("{s:s}", "method", r[i].name);
		put_figures(o, &f);
		json_array_append_new(methods, o);
	}
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(r[j].cls, r[i].cls); j++)
			;
		json_array_append_new(classes, class_json(c, r + i, j - i));
	}
	free(r);
	return json_pack("{s:o,s:o}", "classes", classes, "methods", methods);
}
