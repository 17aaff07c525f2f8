// SPDX-License-Identifier: MIT
/*
 * The time budget of a gap (docs/RECONSTRUCTION.md, "Recovery"): how many
 * TSC ticks the lost code ran, and what a fill would cost in ticks.
 *
 * Compiled code runs an order of magnitude more bytecodes per tick than
 * the interpreter, so one events-per-tick rate misjudges any mix: the
 * cost of an event depends on whether it was compiled (status decoded) or
 * interpreted, two rates fitted by least squares over the thread's
 * gap-free timing windows (runs of events with one TSC: the TSC advances
 * at timing packets only).
 */
#include <stdlib.h>

#include "flow/flow_int.h"

#define MIN_WINDOW 16 /* events in a window the rates are taken from */

static int compiled(const struct jpb_flow_event *e)
{
	return e->status == JPB_FLOW_DECODED;
}

/* A run of events with one TSC, out[i..j), nc of them compiled, and
 * whether a gap lies at an index in (i, j]. */
struct twin {
	size_t i, j, nc;
	int gap;
};

/* The timing window after W (start with W zeroed); *G is the first gap
 * not before W's start: windows come in order, so the gaps are walked
 * once instead of once per window.  0 at the end. */
static int next_window(const struct flow *f, struct twin *w, size_t *g)
{
	size_t i = w->j;
	if (i >= f->nout)
		return 0;
	const struct jpb_flow_event *o = f->out;
	size_t j = i + 1, nc = compiled(&o[i]);
	for (; j < f->nout && o[j].tsc == o[i].tsc; j++)
		nc += compiled(&o[j]);
	while (*g < f->ngaps && f->gaps[*g].at <= i)
		(*g)++;
	*w = (struct twin){ i, j, nc, *g < f->ngaps && f->gaps[*g].at <= j };
	return 1;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of V[0..N), 0 when empty (sorts V). */
static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), dcmp);
	return v[n / 2];
}

/* A timing window of mostly compiled events: its ticks and counts. */
struct cwin {
	double ticks;
	size_t len, nc;
};

/* Ticks per compiled event: the median over the windows CW of what their
 * time leaves after their interpreted events (at CI each) per compiled
 * event; 0 when none.  V is scratch room for N values. */
static double compiled_rate(const struct cwin *cw, size_t n, double ci, double *v)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		double d = cw[i].ticks - ci * (double)(cw[i].len - cw[i].nc);
		if (d > 0)
			v[k++] = d / (double)cw[i].nc;
	}
	return median(v, k);
}

/* Ticks per event of each kind: interpreted events, the median over the
 * windows (runs of one TSC, no gap inside, followed by another) of >= 16
 * events, >= 95% interpreted; compiled ones, the median over such windows
 * >= 90% compiled of compiled_rate.  Medians, not a least-squares fit: a
 * window in which the thread was descheduled or blocked lasts
 * arbitrarily long.  One pass over the output collects both kinds. */
void flow_cost_fit(const struct flow *f, struct fcost *c)
{
	/* a value per window of >= MIN_WINDOW events at most */
	size_t cap = f->nout / MIN_WINDOW + 1, n = 0, nw = 0, g = 0;
	double *v = malloc(cap * sizeof(*v));
	struct cwin *cw = malloc(cap * sizeof(*cw));
	struct twin w = { 0 };
	while (v && cw && next_window(f, &w, &g)) {
		size_t len = w.j - w.i;
		if (w.j == f->nout || w.gap || len < MIN_WINDOW)
			continue;
		double ticks = (double)(f->out[w.j].tsc - f->out[w.i].tsc);
		if (w.nc * 20 <= len)
			v[n++] = ticks / (double)len;
		else if (w.nc * 10 >= len * 9)
			cw[nw++] = (struct cwin){ ticks, len, w.nc };
	}
	c->interp = v && cw ? median(v, n) : 0;
	c->compiled = v && cw ? compiled_rate(cw, nw, c->interp, v) : 0;
	free(v);
	free(cw);
	/* One kind unseen: the same rate for both (an overestimate of
	 * compiled code's cost, the safe side for a budget). */
	if (!(c->interp > 0))
		c->interp = c->compiled;
	if (!(c->compiled > 0))
		c->compiled = c->interp;
}

double flow_cost_of(const struct fcost *c, const struct jpb_flow_event *v,
		    size_t n)
{
	double t = 0;
	for (size_t i = 0; i < n; i++)
		t += compiled(&v[i]) ? c->compiled : c->interp;
	return t;
}

/* Ticks lost in gap GI: its own bounds when the decoder knew them; else
 * the timing window around it (from the TSC of the events before the gap
 * to the next TSC after it) less the cost of the traced events inside.
 * -1 when unknown (no timing, or another gap in the window). */
double flow_gap_budget(const struct flow *f, const struct fcost *c, size_t gi)
{
	const struct gapmark *gm = &f->gaps[gi];
	size_t a = gm->at;
	if (!(c->interp > 0)) /* no cost model: ticks say nothing */
		return -1;
	if (gm->t1 > gm->t0)
		return (double)(gm->t1 - gm->t0);
	if (!a || a >= f->nout)
		return -1;
	uint64_t tb = f->out[a - 1].tsc;
	size_t i0 = a, j = a;
	while (i0 > 0 && f->out[i0 - 1].tsc == tb)
		i0--;
	while (j < f->nout && f->out[j].tsc == tb)
		j++;
	if (j == f->nout || f->out[j].tsc < tb ||
	    (gi > 0 && f->gaps[gi - 1].at > i0) ||
	    (gi + 1 < f->ngaps && f->gaps[gi + 1].at <= j))
		return -1;
	/* A gap costs time: a window that leaves none for it is too coarse
	 * (or the model too rough) to say anything. */
	double d = (double)(f->out[j].tsc - tb) - flow_cost_of(c, f->out + i0, j - i0);
	return d > c->interp ? d : -1;
}
