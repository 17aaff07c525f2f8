// SPDX-License-Identifier: MIT
/* TSC to ns from the recording's start (see clock.h). */
#include "export/model/clock.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bundle.h"
#include "codec.h"
#include "records.h"
#include "records_sched.h"

struct xclock {
	uint64_t *tsc, *ns; /* sorted by tsc */
	size_t n;
	uint64_t start_ns;
};

int xclock_alloc(struct xclock **out, const uint64_t *tsc, const uint64_t *ns,
		 size_t n, uint64_t start_ns)
{
	struct xclock *c = calloc(1, sizeof(*c));
	if (!c)
		return jpb_err_nomem;
	c->tsc = malloc((n ? n : 1) * sizeof(*c->tsc));
	c->ns = malloc((n ? n : 1) * sizeof(*c->ns));
	if (!c->tsc || !c->ns) {
		xclock_free(c);
		return jpb_err_nomem;
	}
	if (n) {
		memcpy(c->tsc, tsc, n * sizeof(*tsc));
		memcpy(c->ns, ns, n * sizeof(*ns));
	}
	c->n = n;
	c->start_ns = start_ns;
	*out = c;
	return 0;
}

void xclock_free(struct xclock *c)
{
	if (!c)
		return;
	free(c->tsc);
	free(c->ns);
	free(c);
}

static uint64_t lerp(uint64_t x, uint64_t x0, uint64_t x1, uint64_t y0,
		     uint64_t y1)
{
	long double r = ((long double)x - (long double)x0) /
			((long double)x1 - (long double)x0);
	long double y = (long double)y0 + r * ((long double)y1 - (long double)y0);
	return y <= 0 ? 0 : (uint64_t)(y + 0.5L);
}

uint64_t xclock_mono(const struct xclock *c, uint64_t tsc)
{
	if (!c || c->n == 0)
		return tsc;
	if (c->n == 1)
		return c->ns[0] + (tsc - c->tsc[0]);
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->tsc[mid] <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t i = lo == 0 ? 0 : lo >= c->n ? c->n - 2 : lo - 1;
	if (c->tsc[i + 1] == c->tsc[i])
		return c->ns[i] + (tsc - c->tsc[i]);
	return lerp(tsc, c->tsc[i], c->tsc[i + 1], c->ns[i], c->ns[i + 1]);
}

uint64_t xclock_ns(const struct xclock *c, uint64_t tsc)
{
	if (!c)
		return tsc;
	uint64_t m = xclock_mono(c, tsc);
	return m > c->start_ns ? m - c->start_ns : 0;
}

struct pair {
	uint64_t tsc, ns;
};

static int by_tsc(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

static uint64_t meta_start(struct jpb_bundle *b)
{
	void *meta;
	if (jpb_meta_load(b, &meta))
		return 0;
	json_t *s = json_object_get(json_object_get(meta, "record"), "start_ns");
	return json_is_integer(s) ? (uint64_t)json_integer_value(s) : 0;
}

static int read_pairs(struct jpb_bundle *b, struct pair **out, size_t *n)
{
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_CLOCK_PAIR);
	struct jpb_reader *r;
	struct jpb_record rec;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	if (jpb_reader_open(b, "sched", &r))
		return 0; /* no sched stream: no pairs */
	int err;
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		struct jpb_rec_clock_pair cp;
		if (rec.type != JPB_REC_CLOCK_PAIR ||
		    jpb_rec_decode(t, rec.payload, rec.size, &cp))
			continue;
		if (JPB_GROW(*out, *n, cap)) {
			jpb_reader_free(r);
			return jpb_err_nomem;
		}
		(*out)[(*n)++] = (struct pair){ cp.tsc, cp.mono_ns };
	}
	jpb_reader_free(r);
	return 0;
}

int xclock_load(struct jpb_bundle *b, struct xclock **out, int *exact)
{
	struct pair *p;
	size_t n;
	int err = read_pairs(b, &p, &n);
	if (err)
		return err;
	if (n)
		qsort(p, n, sizeof(*p), by_tsc);
	uint64_t *tsc = malloc((n ? n : 1) * sizeof(*tsc));
	uint64_t *ns = malloc((n ? n : 1) * sizeof(*ns));
	uint64_t start = meta_start(b), first = UINT64_MAX;
	for (size_t i = 0; tsc && ns && i < n; i++) {
		tsc[i] = p[i].tsc;
		ns[i] = p[i].ns;
		first = p[i].ns < first ? p[i].ns : first;
	}
	if (!start)
		start = n ? first : 0;
	err = tsc && ns ? xclock_alloc(out, tsc, ns, n, start) : jpb_err_nomem;
	free(tsc);
	free(ns);
	free(p);
	if (exact)
		*exact = n > 0;
	return err;
}
