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

int flow_cost_fit_start(const struct flow *f, struct fcost_fit *s)
{
	/* a value per window of >= MIN_WINDOW events at most */
	size_t cap = f->nout / MIN_WINDOW + 1;
	*s = (struct fcost_fit){ .tsc = f->nout ? f->out[0].tsc : 0 };
	s->v = malloc(cap * sizeof(*s->v));
	s->cw = malloc(cap * sizeof(*s->cw));
	return s->v && s->cw ? 0 : jpb_err_nomem;
}

/* The timing window out[s->i..j) ends (out[j] has another TSC), NC of its
 * events compiled: its value, if it has >= MIN_WINDOW events and no gap
 * at an index in (i, j]; then out[j] opens the next. */
void flow_cost_window(const struct flow *f, struct fcost_fit *s, size_t j, size_t nc)
{
	size_t i = s->i, len = j - i, g = s->g;
	while (g < f->ngaps && f->gaps[g].at <= i)
		g++;
	s->g = g;
	int gap = g < f->ngaps && f->gaps[g].at <= j;
	if (s->v && s->cw && !gap && len >= MIN_WINDOW) {
		double ticks = (double)(f->out[j].tsc - s->tsc);
		if (nc * 20 <= len)
			s->v[s->n++] = ticks / (double)len;
		else if (nc * 10 >= len * 9)
			s->cw[s->nw++] = (struct cwin){ ticks, len, nc };
	}
	s->i = j;
	s->tsc = f->out[j].tsc;
}

/* Ticks per event of each kind: interpreted events, the median over the
 * windows (runs of one TSC, no gap inside, followed by another) of >= 16
 * events, >= 95% interpreted; compiled ones, the median over such windows
 * >= 90% compiled of compiled_rate.  Medians, not a least-squares fit: a
 * window in which the thread was descheduled or blocked lasts
 * arbitrarily long.  The window of the last event, which no other TSC
 * follows, is never ended; frees S's room. */
void flow_cost_fit_end(struct fcost_fit *s, struct fcost *c)
{
	c->interp = s->v && s->cw ? median(s->v, s->n) : 0;
	c->compiled = s->v && s->cw ? compiled_rate(s->cw, s->nw, c->interp, s->v) : 0;
	free(s->v);
	free(s->cw);
	s->v = NULL;
	s->cw = NULL;
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
