// SPDX-License-Identifier: MIT
/*
 * IP continuity: a thread resumes exactly where it stopped, on whatever
 * CPU.  jpd_sched_place puts each switch in the tracing gap nearest its
 * BPF time; when that clock is off by more than the spacing of gaps
 * (runtime calls and faults make one every few microseconds), the nearest
 * gap is the wrong one.  Going through all CPUs' switches in time order,
 * each thread's stop IP is the disable IP of the gap its departure is
 * placed in; a later arrival of that thread placed in a gap that resumes
 * elsewhere moves to the nearest gap (on its CPU, after the switches
 * before it, within a bound) that resumes at its stop IP, and the
 * departures just before it on that CPU move with it.
 */
#include <stdlib.h>

#include "decode.h"
#include "decode_int.h"

struct swref {
	uint64_t tsc;
	uint32_t stream;
	uint32_t i;
};

static int cmp_swref(const void *a, const void *b)
{
	const struct swref *x = a, *y = b;
	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static size_t gap_of(const struct jpd_stream *st, const struct jpd_switch *w)
{
	size_t g = jpd_gap_lower(st, w->apply_tsc) + w->apply_k;
	return g < st->ngaps ? g : st->ngaps - 1;
}

static void put_in(const struct jpd_stream *st, struct jpd_switch *w, size_t g)
{
	if (g != gap_of(st, w))
		w->late = 0; /* out of the overflow it was marked in */
	w->apply_tsc = st->en[g];
	w->apply_k = jpd_gap_rank(st->en, g);
}

static uint64_t dist(uint64_t t, uint64_t a, uint64_t b)
{
	return t < a ? a - t : t > b ? t - b : 0;
}

/* The nearest gap to T resuming at IP, not before gap FROM, within FAR. */
static size_t nearest_resume(const struct jpd_stream *st, uint64_t t, uint64_t ip,
			     size_t from, uint64_t far)
{
	size_t mid = jpd_gap_lower(st, t), best = SIZE_MAX;
	uint64_t bd = far + 1;
	if (mid < from)
		mid = from;
	for (size_t g = mid; g < st->ngaps && !(st->dis[g] > t && st->dis[g] - t > bd);
	     g++)
		if (st->en_ip[g] == ip && dist(t, st->dis[g], st->en[g]) < bd) {
			bd = dist(t, st->dis[g], st->en[g]);
			best = g;
		}
	for (size_t g = mid; g > from && !(st->en[g - 1] < t && t - st->en[g - 1] > bd);
	     g--)
		if (st->en_ip[g - 1] == ip && dist(t, st->dis[g - 1], st->en[g - 1]) < bd) {
			bd = dist(t, st->dis[g - 1], st->en[g - 1]);
			best = g - 1;
		}
	return best;
}

/* Each thread's stop IP (0: unknown), by its index in the sched list. */
struct stops {
	const struct jpd_sched *s;
	uint64_t *ip;
};

static uint64_t *stop_of(struct stops *sp, uint32_t tid)
{
	for (size_t i = 0; i < sp->s->ntids; i++) /* threads: a few hundred */
		if (sp->s->tids[i] == tid)
			return &sp->ip[i];
	return NULL;
}

static void keep_order(struct jpd_stream *st)
{
	for (size_t i = 1; i < st->nsw; i++)
		if (st->sw[i].apply_tsc < st->sw[i - 1].apply_tsc ||
		    (st->sw[i].apply_tsc == st->sw[i - 1].apply_tsc &&
		     st->sw[i].apply_k < st->sw[i - 1].apply_k)) {
			st->sw[i].apply_tsc = st->sw[i - 1].apply_tsc;
			st->sw[i].apply_k = st->sw[i - 1].apply_k;
		}
}

struct cpu_state {
	uint32_t cur; /* the thread the trace shows */
	size_t floor; /* switches keep their order */
};

/* The nearest gap to T at least LEN long (an idle CPU), from FROM on. */
static size_t nearest_long(const struct jpd_stream *st, uint64_t t, uint64_t len,
			   size_t from, uint64_t far)
{
	size_t best = SIZE_MAX;
	uint64_t bd = far + 1;
	for (size_t g = from; g < st->ngaps && !(st->dis[g] > t && st->dis[g] - t > bd); g++)
		if (st->en[g] - st->dis[g] >= len && dist(t, st->dis[g], st->en[g]) < bd) {
			bd = dist(t, st->dis[g], st->en[g]);
			best = g;
		}
	return best;
}

/* Where the trace stops for good or for an idle stretch, the IPs say
 * nothing; the gap's length does: the last departure on a CPU is at the
 * run's end, one followed by an arrival only later leaves in a gap about
 * that long, and an arrival on an idle CPU ends the gap its departure
 * is in. */
static size_t idle_gap(const struct jpd_ctx *ctx, const struct jpd_stream *st,
		       const struct cpu_state *cs, uint32_t i, size_t g)
{
	const struct jpd_switch *w = &st->sw[i];
	uint64_t far = 50 * ctx->window;
	if (!w->next_tid && i + 1 == st->nsw)
		return st->ngaps - 1;
	if (!w->next_tid && st->sw[i + 1].next_tid &&
	    st->sw[i + 1].tsc - w->tsc > 4 * far) {
		size_t c = nearest_long(st, w->tsc, (st->sw[i + 1].tsc - w->tsc) / 2,
					cs->floor, far);
		return c != SIZE_MAX ? c : g;
	}
	if (w->next_tid && !w->prev_tid && i > 0 && !st->sw[i - 1].next_tid) {
		size_t d = gap_of(st, &st->sw[i - 1]);
		return dist(w->tsc, st->dis[d], st->en[d]) <= far ? d : g;
	}
	if (w->next_tid && !w->prev_tid && i == 0 && dist(w->tsc, st->dis[0], st->en[0]) <= far)
		return 0;
	return g;
}

static void one_switch(const struct jpd_ctx *ctx, struct jpd_stream *st,
		       struct cpu_state *cs, struct stops *sp, uint32_t i)
{
	struct jpd_switch *w = &st->sw[i];
	size_t g = idle_gap(ctx, st, cs, i, gap_of(st, w));
	put_in(st, w, g);
	uint32_t next = w->next_tid;
	uint64_t *want = next ? stop_of(sp, next) : NULL;
	if (want && *want && next != cs->cur && st->en_ip[g] != *want) {
		size_t c = nearest_resume(st, w->tsc, *want, cs->floor, 50 * ctx->window);
		if (c != SIZE_MAX) {
			put_in(st, w, c);
			g = c;
			/* the departure before it left in that gap too */
			for (uint32_t j = i; j > 0 && !st->sw[j - 1].next_tid &&
					     gap_of(st, &st->sw[j - 1]) < c; j--) {
				put_in(st, &st->sw[j - 1], c);
				uint64_t *s = stop_of(sp, st->sw[j - 1].prev_tid);
				if (s)
					*s = st->dis_ip[c];
			}
		}
	}
	uint64_t *s = w->prev_tid ? stop_of(sp, w->prev_tid) : NULL;
	if (s)
		*s = st->dis_ip[g];
	if (next)
		cs->cur = next;
	cs->floor = g;
}

/* A switch runs while user-space tracing is off: with a right clock its
 * stamp lies in the gap it was placed in.  Then the nearest gap is the
 * place, and nothing moves (DECODER.md). */
static int clock_right(const struct jpd_stream *sts, size_t n)
{
	size_t in = 0, all = 0;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; sts[k].ngaps && i < sts[k].nsw; i++) {
			const struct jpd_switch *w = &sts[k].sw[i];
			size_t g = gap_of(&sts[k], w);
			in += w->hole || dist(w->tsc, sts[k].dis[g], sts[k].en[g]) == 0;
			all++;
		}
	return in >= all - all / 20;
}

void jpd_continuity(const struct jpd_ctx *ctx, struct jpd_stream *sts, size_t n)
{
	if (clock_right(sts, n))
		return;
	size_t total = 0;
	for (size_t k = 0; k < n; k++)
		total += sts[k].ngaps ? sts[k].nsw : 0;
	struct swref *refs = calloc(total + 1, sizeof(*refs));
	struct cpu_state *cs = calloc(n + 1, sizeof(*cs));
	struct stops sp = { &ctx->sched, calloc(ctx->sched.ntids + 1, sizeof(uint64_t)) };
	if (refs && cs && sp.ip) { /* else: placed by time alone */
		size_t m = 0;
		for (uint32_t k = 0; k < n; k++)
			for (uint32_t i = 0; sts[k].ngaps && i < sts[k].nsw; i++)
				refs[m++] = (struct swref){ sts[k].sw[i].tsc, k, i };
		qsort(refs, m, sizeof(*refs), cmp_swref);
		for (size_t r = 0; r < m; r++)
			one_switch(ctx, &sts[refs[r].stream], &cs[refs[r].stream], &sp,
				   refs[r].i);
		for (size_t k = 0; k < n; k++)
			keep_order(&sts[k]);
	}
	free(refs);
	free(cs);
	free(sp.ip);
}
