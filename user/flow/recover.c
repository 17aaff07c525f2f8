// SPDX-License-Identifier: MIT
/*
 * Recovery (docs/RECONSTRUCTION.md, "Recovery"; PLDI'21 §5 simplified):
 * a gap is filled with a stretch the same thread ran elsewhere that starts
 * after the same K events as those before the gap and ends before the
 * same K events as those after it, of the length closest to what the
 * gap's duration allows at the thread's observed event rate.
 *
 * Search is indexed: the thread's K-grams of (method, bci) are sorted by
 * hash, so a context is found by binary search, not by a scan.
 */
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"

#define K 4           /* context length, each side */
#define MAX_OCC 64    /* occurrences of the leading context tried */
#define MAX_ENDS 8    /* trailing-context occurrences tried per start */
#define MAX_FILL 20000u

struct gram {
	uint64_t h;
	size_t end; /* index after the gram's last event */
};

static uint64_t key(const struct jpb_flow_event *e)
{
	return e->method && e->status != JPB_FLOW_UNKNOWN ?
		(uint64_t)e->method << 32 | (uint32_t)e->bci : 0;
}

/* Hash of the K events ending before END, or 0 if one is unknown. */
static uint64_t gram_at(const struct jpb_flow_event *v, size_t end)
{
	if (end < K)
		return 0;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = end - K; i < end; i++) {
		uint64_t k = key(&v[i]);
		if (!k)
			return 0;
		h = (h ^ k) * 1099511628211ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static int gram_cmp(const void *a, const void *b)
{
	const struct gram *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* First index in G (sorted) with hash H and end >= FROM. */
static size_t gram_find(const struct gram *g, size_t n, uint64_t h, size_t from)
{
	struct gram k = { h, from };
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (gram_cmp(&g[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int same_events(const struct jpb_flow_event *v, size_t a, size_t b)
{
	for (size_t i = 0; i < K; i++)
		if (key(&v[a + i]) != key(&v[b + i]))
			return 0;
	return 1;
}

/* Does a gap lie inside the stretch [P, Q)? */
static int crosses_gap(const struct gapmark *gm, size_t ng, size_t p, size_t q)
{
	for (size_t i = 0; i < ng; i++)
		if (gm[i].at > p && gm[i].at < q)
			return 1;
	return 0;
}

struct fill {
	size_t gap;       /* index into gaps */
	size_t from, len; /* the source stretch in the output */
	uint16_t ncand;
};

/* Events per TSC tick while the thread was traced.  TSC may advance only
 * at timing packets, so events come in windows of equal TSC: the rate is
 * events over ticks across consecutive windows with no gap inside. */
static double event_rate(const struct flow *f)
{
	uint64_t events = 0, ticks = 0;
	size_t g = 0;
	for (size_t i = 0, j; i < f->nout; i = j) {
		for (j = i; j < f->nout && f->out[j].tsc == f->out[i].tsc; j++)
			;
		while (g < f->ngaps && f->gaps[g].at <= i)
			g++;
		int gap_inside = g < f->ngaps && f->gaps[g].at <= j;
		if (j < f->nout && !gap_inside) {
			events += j - i;
			ticks += f->out[j].tsc - f->out[i].tsc;
		}
	}
	return ticks ? (double)events / (double)ticks : 0;
}

/* Events lost in the gap at A: the time from the window's timing packet
 * before the gap to the next one after it, less the traced events inside
 * that span, at RATE.  -1 when unknown. */
static double lost_events(const struct flow *f, size_t gi, double rate)
{
	const struct gapmark *gm = &f->gaps[gi];
	size_t a = gm->at;
	if (rate <= 0 || !a || a >= f->nout)
		return -1;
	if (gm->t1 > gm->t0)
		return rate * (double)(gm->t1 - gm->t0);
	uint64_t tb = f->out[a - 1].tsc;
	size_t i0 = a, j = a;
	while (i0 > 0 && f->out[i0 - 1].tsc == tb)
		i0--;
	while (j < f->nout && f->out[j].tsc == tb)
		j++;
	if (j == f->nout || (gi + 1 < f->ngaps && f->gaps[gi + 1].at <= j))
		return -1;
	double d = rate * (double)(f->out[j].tsc - tb) - (double)(j - i0);
	return d > 0 ? d : -1;
}

/* The best source stretch for gap G, or 0. */
static int find_fill(const struct flow *f, const struct gram *g, size_t ng,
		     size_t gi, double rate, struct fill *out)
{
	const struct gapmark *gm = &f->gaps[gi];
	size_t a = gm->at;
	if (a < K || a + K > f->nout)
		return 0;
	uint64_t pre = gram_at(f->out, a), post = gram_at(f->out, a + K);
	if (!pre || !post)
		return 0;
	/* With the gap's duration known, the length nearest what the thread
	 * runs in that time wins; without it (TSC too coarse), the shortest. */
	double want = lost_events(f, gi, rate);
	int timed = want >= 0;
	size_t lmax = timed ? (size_t)(want * 2 + 64) : MAX_FILL;
	if (lmax > MAX_FILL)
		lmax = MAX_FILL;
	int found = 0;
	double best = 0;
	unsigned ncand = 0;
	size_t i = gram_find(g, ng, pre, 0);
	for (int tries = 0; i < ng && g[i].h == pre && tries < MAX_OCC; i++) {
		size_t p = g[i].end;
		if (p == a || !same_events(f->out, p - K, a - K))
			continue;
		tries++;
		size_t j = gram_find(g, ng, post, p + K);
		for (int e = 0; j < ng && g[j].h == post && e < MAX_ENDS; j++, e++) {
			size_t q = g[j].end - K; /* the trailing context starts at q */
			if (q - p > lmax || crosses_gap(f->gaps, f->ngaps, p, q))
				break;
			if (q == p || !same_events(f->out, q, a))
				continue;
			double d = (double)(q - p) - want;
			d = d < 0 ? -d : d;
			ncand++;
			if (!found || d < best) {
				found = 1;
				best = d;
				*out = (struct fill){ gi, p, q - p, 0 };
			}
		}
	}
	out->ncand = (uint16_t)(ncand > 65535 ? 65535 : ncand);
	return found && out->len > 0;
}

static int apply_fills(struct flow *f, const struct fill *fl, size_t nfl)
{
	size_t extra = 0;
	for (size_t i = 0; i < nfl; i++)
		extra += fl[i].len;
	if (!extra)
		return 0;
	struct jpb_flow_event *v = malloc((f->nout + extra) * sizeof(*v));
	if (!v)
		return jpb_err_nomem;
	size_t w = 0, r = 0;
	for (size_t i = 0; i < nfl; i++) {
		const struct gapmark *gm = &f->gaps[fl[i].gap];
		memcpy(v + w, f->out + r, (gm->at - r) * sizeof(*v));
		w += gm->at - r;
		r = gm->at;
		for (size_t k = 0; k < fl[i].len; k++) {
			struct jpb_flow_event e = f->out[fl[i].from + k];
			if (e.status == JPB_FLOW_UNKNOWN)
				continue;
			e.status = JPB_FLOW_RECOVERED;
			e.ncand = fl[i].ncand;
			e.tsc = gm->t0 + (gm->t1 - gm->t0) * (k + 1) / (fl[i].len + 1);
			v[w++] = e;
			f->sum.by_status[JPB_FLOW_RECOVERED]++;
			f->sum.events++;
		}
	}
	memcpy(v + w, f->out + r, (f->nout - r) * sizeof(*v));
	w += f->nout - r;
	free(f->out);
	f->out = v;
	f->capo = f->nout + extra; /* what was allocated, before nout grows */
	f->nout = w;
	return 0;
}

int flow_recover(struct flow *f)
{
	if (!f->ngaps || f->nout < 2 * K)
		return 0;
	struct gram *g = malloc(f->nout * sizeof(*g));
	struct fill *fl = malloc(f->ngaps * sizeof(*fl));
	if (!g || !fl) {
		free(g);
		free(fl);
		return jpb_err_nomem;
	}
	size_t ng = 0, nfl = 0;
	for (size_t end = K; end <= f->nout; end++) {
		uint64_t h = gram_at(f->out, end);
		if (h)
			g[ng++] = (struct gram){ h, end };
	}
	qsort(g, ng, sizeof(*g), gram_cmp);
	double rate = event_rate(f);
	for (size_t i = 0; i < f->ngaps; i++)
		if (find_fill(f, g, ng, i, rate, &fl[nfl]))
			nfl++;
	int err = apply_fills(f, fl, nfl);
	free(g);
	free(fl);
	return err;
}
