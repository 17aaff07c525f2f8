// SPDX-License-Identifier: MIT
/*
 * Who ran where: the sched stream's context switches, converted to TSC
 * through the clock_pair calibration (docs/CLOCK.md), and placed into the
 * tracing gaps of each CPU's trace.  A switch happens while tracing is off
 * (the kernel runs it), so the BPF time only has to pick the right gap:
 * the cut itself is the PT disable/enable, exact to the instruction.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode_int.h"
#include "records.h"
#include "records_sched.h"

static uint64_t lerp(uint64_t x, uint64_t x0, uint64_t x1, uint64_t y0,
		     uint64_t y1)
{
	if (x1 == x0)
		return y0 + (x - x0);
	long double r = ((long double)x - (long double)x0) /
			((long double)x1 - (long double)x0);
	long double y = (long double)y0 + r * ((long double)y1 - (long double)y0);
	return y <= 0 ? 0 : (uint64_t)y;
}

/* Through one pair with SLOPE (0: not known, then 1). */
static uint64_t through(uint64_t x0, uint64_t y0, double slope, uint64_t x)
{
	if (slope <= 0)
		return y0 + (x - x0);
	long double y = (long double)y0 + ((long double)x - (long double)x0) * slope;
	return y <= 0 ? 0 : (uint64_t)y;
}

/* Piecewise linear between the pairs around x; extrapolated from the
 * outer two.  With one pair, SLOPE (dy/dx); with none the identity. */
static uint64_t convert(const uint64_t *xs, const uint64_t *ys, size_t n,
			uint64_t x, double slope)
{
	if (!n)
		return x;
	if (n == 1)
		return through(xs[0], ys[0], slope, x);
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (xs[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t i = lo == 0 ? 0 : lo >= n ? n - 2 : lo - 1;
	return lerp(x, xs[i], xs[i + 1], ys[i], ys[i + 1]);
}

uint64_t jpd_ns_to_tsc(const struct jpd_clock *c, uint64_t ns)
{
	return convert(c->ns, c->tsc, c->n, ns, c->tsc_per_ns);
}

uint64_t jpd_tsc_to_ns(const struct jpd_clock *c, uint64_t tsc)
{
	return convert(c->tsc, c->ns, c->n, tsc, c->tsc_per_ns > 0 ? 1 / c->tsc_per_ns : 0);
}

struct raw_switch {
	uint64_t ns;
	uint32_t cpu, prev, next;
	int preempt;
};

struct sched_loader {
	struct raw_switch *sw;
	size_t nsw, capsw, cappair, captid;
};

static int add_tid(struct jpd_sched *s, struct sched_loader *l, uint32_t tid,
		   struct jpb_str name)
{
	for (size_t i = 0; i < s->ntids; i++) /* threads: a few hundred */
		if (s->tids[i] == tid)
			return 0;
	size_t cap = l->captid;
	if (JPB_GROW(s->tids, s->ntids, l->captid))
		return jpb_err_nomem;
	if (cap != l->captid) {
		char **nn = realloc(s->names, l->captid * sizeof(*nn));
		if (!nn)
			return jpb_err_nomem;
		s->names = nn;
	}
	s->names[s->ntids] = strndup(name.ptr ? name.ptr : "", name.len);
	s->tids[s->ntids++] = tid;
	return 0;
}

static int on_sched(struct jpd_sched *s, struct sched_loader *l,
		    const struct jpb_record *rec)
{
	const struct jpb_rectype *t = jpb_rectype_find(rec->type);
	union {
		struct jpb_rec_sched_switch sw;
		struct jpb_rec_clock_pair cp;
		struct jpb_rec_thread th;
	} u;
	if (!t || (rec->type != JPB_REC_SCHED_SWITCH && rec->type != JPB_REC_CLOCK_PAIR &&
		   rec->type != JPB_REC_THREAD))
		return 0;
	if (jpb_rec_decode(t, rec->payload, rec->size, &u))
		return jpb_err_corrupt;
	if (rec->type == JPB_REC_THREAD)
		return u.th.tid ? add_tid(s, l, u.th.tid, u.th.name) : 0;
	if (rec->type == JPB_REC_CLOCK_PAIR) {
		size_t cap = l->cappair, n = s->clock.n;
		if (JPB_GROW(s->clock.ns, n, l->cappair))
			return jpb_err_nomem;
		if (cap != l->cappair) {
			uint64_t *p = realloc(s->clock.tsc, l->cappair * sizeof(*p));
			if (!p)
				return jpb_err_nomem;
			s->clock.tsc = p;
		}
		s->clock.ns[n] = u.cp.mono_ns;
		s->clock.tsc[n] = u.cp.tsc;
		s->clock.n++;
		return 0;
	}
	if (u.sw.cpu >= 4096)
		return jpb_err_corrupt;
	if (JPB_GROW(l->sw, l->nsw, l->capsw))
		return jpb_err_nomem;
	/* Only the traced side counts: the other may be any task. */
	uint32_t prev = (u.sw.traced & 1) ? u.sw.prev_tid : 0;
	uint32_t next = (u.sw.traced & 2) ? u.sw.next_tid : 0;
	if (!u.sw.traced) { /* older writers: no traced bits */
		prev = u.sw.prev_tid;
		next = u.sw.next_tid;
	}
	l->sw[l->nsw++] = (struct raw_switch){ rec->time_ns, u.sw.cpu, prev, next,
					       prev && u.sw.prev_state == 0 };
	return 0;
}

static void sort_pairs(struct jpd_clock *c)
{
	for (size_t i = 1; i < c->n; i++) /* a pair per 100 ms, in order */
		for (size_t j = i; j > 0 && c->ns[j - 1] > c->ns[j]; j--) {
			uint64_t t = c->ns[j];
			c->ns[j] = c->ns[j - 1];
			c->ns[j - 1] = t;
			t = c->tsc[j];
			c->tsc[j] = c->tsc[j - 1];
			c->tsc[j - 1] = t;
		}
}

static int split_by_cpu(struct jpd_sched *s, struct sched_loader *l)
{
	for (size_t i = 0; i < l->nsw; i++)
		if (l->sw[i].cpu + 1 > s->ncpus)
			s->ncpus = l->sw[i].cpu + 1;
	s->sw = calloc(s->ncpus + 1, sizeof(*s->sw));
	s->nsw = calloc(s->ncpus + 1, sizeof(*s->nsw));
	if (!s->sw || !s->nsw)
		return jpb_err_nomem;
	for (size_t i = 0; i < l->nsw; i++)
		s->nsw[l->sw[i].cpu]++;
	for (uint32_t c = 0; c < s->ncpus; c++) {
		s->sw[c] = calloc(s->nsw[c] + 1, sizeof(**s->sw));
		if (!s->sw[c])
			return jpb_err_nomem;
		s->nsw[c] = 0;
	}
	for (size_t i = 0; i < l->nsw; i++) {
		const struct raw_switch *r = &l->sw[i];
		uint64_t tsc = jpd_ns_to_tsc(&s->clock, r->ns);
		s->sw[r->cpu][s->nsw[r->cpu]++] =
			(struct jpd_switch){ .tsc = tsc, .prev_tid = r->prev,
					     .next_tid = r->next, .apply_tsc = tsc,
					     .preempt = r->preempt };
	}
	/* A CPU's switches in stream order: the order they happened there.
	 * Their times may be off by the BPF clock's error, so they are not
	 * sorted by time (that could put an arrival before the departure it
	 * follows), only kept from going back. */
	for (uint32_t c = 0; c < s->ncpus; c++)
		for (size_t i = 1; i < s->nsw[c]; i++)
			if (s->sw[c][i].tsc < s->sw[c][i - 1].tsc)
				s->sw[c][i].tsc = s->sw[c][i].apply_tsc = s->sw[c][i - 1].tsc;
	return 0;
}

/* The warning (ERR with a 0 return) for a damaged sched stream: threads
 * may be misattributed where its switches are missing. */
static void say_sched_damage(const struct jpb_reader *r, int rc, char *err, size_t errsize)
{
	char what[600];
	snprintf(err, errsize, "decode: %s; threads may be misattributed where "
		 "switches are missing", jpb_reader_damage(r, rc, what, sizeof(what)));
}

int jpd_sched_load(struct jpd_sched *s, struct jpb_bundle *b, char *err,
		   size_t errsize)
{
	struct sched_loader l = { 0 };
	struct jpb_reader *r;
	int rc = jpb_reader_open(b, "sched", &r);
	if (rc == jpb_err_not_found)
		return 0; /* no scheduling data: everything unattributed */
	if (rc) {
		snprintf(err, errsize, "decode: sched: %s", jpb_errstr(rc));
		return rc;
	}
	struct jpb_record rec;
	/* one damaged switch record loses that switch, not all after it */
	jpb_reader_skip_damaged(r);
	while ((rc = jpb_reader_next(r, &rec)) == 0)
		if ((rc = on_sched(s, &l, &rec))) {
			snprintf(err, errsize, "decode: sched: record at offset %llu: %s",
				 (unsigned long long)rec.offset, jpb_errstr(rc));
			break;
		}
	if (rc == jpb_err_truncated || rc == jpb_err_corrupt || jpb_reader_damaged(r))
		say_sched_damage(r, rc, err, errsize);
	if (rc == jpb_err_truncated || rc == jpb_err_corrupt)
		rc = jpb_err_eos; /* keep what came before the damage */
	jpb_reader_free(r);
	if (rc == jpb_err_eos) {
		sort_pairs(&s->clock);
		rc = split_by_cpu(s, &l);
	}
	free(l.sw);
	return rc;
}

void jpd_sched_fini(struct jpd_sched *s)
{
	for (uint32_t c = 0; c < s->ncpus; c++)
		free(s->sw[c]);
	for (size_t i = 0; i < s->ntids; i++)
		free(s->names[i]);
	free(s->names);
	free(s->tids);
	free(s->sw);
	free(s->nsw);
	free(s->clock.tsc);
	free(s->clock.ns);
	memset(s, 0, sizeof(*s));
}

/* Distance from t to the gap [a, b]. */
static uint64_t dist(uint64_t t, uint64_t a, uint64_t b)
{
	return t < a ? a - t : t > b ? t - b : 0;
}

size_t jpd_gaps_ending_at(const uint64_t *en, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (en[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Nearest gap to t among those a switch may use, searching out from the
 * first gap that ends at or after t. */
static size_t nearest(uint64_t t, int leaving, int need_async, const uint64_t *dis,
		      const uint64_t *en, const uint8_t *async, size_t ngaps)
{
	size_t r = jpd_gaps_ending_at(en, ngaps, t), l = r; /* r going up, l - 1 down */
	while (r < ngaps && need_async && !async[r])
		r++;
	while (l > 0 && need_async && !async[l - 1])
		l--;
	if (r >= ngaps)
		return l > 0 ? l - 1 : ngaps - 1;
	if (l == 0)
		return r;
	/* Disable times are only as fresh as the last timing packet, so
	 * distances tie: an asynchronous gap wins, else a task leaving the
	 * CPU goes to the later gap, one arriving to the earlier. */
	uint64_t a = dist(t, dis[l - 1], en[l - 1]), b = dist(t, dis[r], en[r]);
	if (a != b)
		return a < b ? l - 1 : r;
	/* The kernel runs the switch: an interrupt-like gap first. */
	if (!async[l - 1] != !async[r]) /* 2: an overflow */
		return async[l - 1] ? l - 1 : r;
	return leaving ? r : l - 1;
}

size_t jpd_switch_at(const struct jpd_switch *sw, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sw[mid].tsc < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int jpd_sched_ran_elsewhere(const struct jpd_sched *sc, uint32_t cpu, uint32_t tid,
			    uint64_t from, uint64_t to)
{
	for (uint32_t c = 0; c < sc->ncpus; c++) {
		if (c == cpu)
			continue;
		const struct jpd_switch *w = sc->sw[c];
		/* the first switch after FROM */
		size_t lo = from == UINT64_MAX ? sc->nsw[c] : jpd_switch_at(w, sc->nsw[c], from + 1);
		for (size_t k = lo; k < sc->nsw[c] && w[k].tsc < to; k++)
			if (w[k].next_tid == tid)
				return 1;
	}
	return 0;
}

void jpd_sched_overflow(const struct jpd_sched *sc, uint32_t cpu, const uint64_t *dis,
			const uint64_t *en, const uint8_t *async, size_t ngaps)
{
	struct jpd_switch *sw = sc->sw[cpu];
	for (size_t i = 1; i < sc->nsw[cpu]; i++) {
		const struct jpd_switch *d = &sw[i - 1];
		struct jpd_switch *a = &sw[i];
		if (a->prev_tid || a->next_tid != d->prev_tid || d->next_tid)
			continue;
		size_t g = jpd_gaps_ending_at(en, ngaps, d->apply_tsc) + d->apply_k;
		/* trace followed the overflow by the next disable at the latest */
		if (g >= ngaps || async[g] != JPD_GAP_OVERFLOW ||
		    (g + 1 < ngaps && a->tsc > dis[g + 1]))
			continue;
		a->apply_tsc = d->apply_tsc;
		a->apply_k = d->apply_k;
		a->late = jpd_sched_ran_elsewhere(sc, cpu, a->next_tid, d->tsc, a->tsc);
	}
}

/* Keep the order of the switches on the CPU. */
static void keep_order(struct jpd_switch *sw, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (sw[i].apply_tsc < sw[i - 1].apply_tsc ||
		    (sw[i].apply_tsc == sw[i - 1].apply_tsc &&
		     sw[i].apply_k < sw[i - 1].apply_k)) {
			sw[i].apply_tsc = sw[i - 1].apply_tsc;
			sw[i].apply_k = sw[i - 1].apply_k;
		}
}

void jpd_sched_place(struct jpd_switch *sw, size_t n, const uint64_t *dis,
		     const uint64_t *en, const uint8_t *async, size_t ngaps,
		     uint64_t window)
{
	size_t prev_g = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		if (!ngaps) {
			sw[i].apply_tsc = sw[i].tsc;
			continue;
		}
		uint64_t t = sw[i].tsc;
		int leaving = sw[i].prev_tid && !sw[i].next_tid;
		/* A preempted task leaves, and a task arrives on an idle CPU,
		 * where the kernel ran: an interrupt-like gap, or the gap the
		 * previous task left in by blocking in untraced code. */
		int need_async = sw[i].preempt || !sw[i].prev_tid;
		size_t g = nearest(t, leaving, need_async, dis, en, async, ngaps);
		/* ... as a strong preference, not a law: a task preempted in a
		 * system call (a synchronous disable) has no asynchronous gap
		 * near it. */
		if (need_async) {
			size_t ga = nearest(t, leaving, 0, dis, en, async, ngaps);
			if (dist(t, dis[g], en[g]) > dist(t, dis[ga], en[ga]) + window)
				g = ga;
		}
		if (!sw[i].prev_tid && prev_g != SIZE_MAX && !async[prev_g] &&
		    !sw[i - 1].next_tid &&
		    dist(t, dis[prev_g], en[prev_g]) <= dist(t, dis[g], en[g]))
			g = prev_g;
		prev_g = g;
		sw[i].apply_tsc = en[g];
		/* Coarse timing makes several gaps end at one TSC: name the
		 * gap by its rank among them, as the decoder counts them. */
		sw[i].apply_k = jpd_gap_rank(en, g);
	}
	keep_order(sw, n);
}

void jpd_sched_hole(struct jpd_switch *sw, size_t n, const uint64_t *dis,
		    const uint64_t *en, size_t ngaps, size_t g)
{
	uint64_t end = g + 1 < ngaps ? dis[g + 1] : UINT64_MAX;
	uint32_t k = jpd_gap_rank(en, g);
	for (size_t i = 0; i < n; i++)
		if (sw[i].tsc > en[g] && sw[i].tsc < end) {
			sw[i].apply_tsc = en[g];
			sw[i].apply_k = k;
			sw[i].hole = 1;
		}
	keep_order(sw, n);
}
