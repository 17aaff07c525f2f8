// SPDX-License-Identifier: MIT
/*
 * Recovery (docs/RECONSTRUCTION.md, "Recovery"; PLDI'21 §5, Algorithm 4).
 *
 * The thread's output is cut by gaps into complete segments.  For a gap,
 * the *incomplete segment* (IS) is the output before it; candidates are
 * the places elsewhere in the thread's output that follow the same event
 * as the last one before the gap (the anchor), found in an index of the
 * events by (method, bci), nearest first, not by a scan.  Each
 * candidate's prefix is compared with the IS backwards at
 * three tiers: call structure (invokes, returns, throws), control
 * structure (those and branches, gotos, switches) and concrete events; a
 * higher tier's common suffix bounds the lower ones' (Thm 5.5), so a
 * candidate that cannot enter the top N is dropped before the concrete
 * comparison.  The best TRUSTED ranked candidates are tried in order: the
 * first whose continuation reaches the events that follow the gap, at a
 * cost (of its events as the gap's methods ran then) within the gap's
 * time budget, fills it.  Failing that, the start of the best one's
 * continuation, as far as other candidates repeat it; failing that, the
 * shortest feasible ICFG path between the events around the gap
 * (recover_path.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"
#include "java/bytecodes.h"

#define Y 3             /* events after the gap a fill must reconnect to */
/* ... and, where both segments hold them, the events a reconnection must
 * repeat, more after a long copy: 3 recur by chance inside a loop, and
 * copies that had left the gap's code were taken as reconnected
 * (docs/RECONSTRUCTION.md, issue 8 third round) */
#define MIN_AHEAD 8
#define MIN_AHEAD_LONG 16
#define LONG_COPY 1024
#define TOP_N 8         /* candidates ranked */
#define TRUSTED 1       /* ... of which the best may fill a gap */
/* The concrete common suffix a copied stretch needs: MIN_MATCH, where
 * fills start to align the 0.75 asked of a marked fill (over 11 truths
 * at 20% and 40% loss, fills on a suffix of 16-63 events aligned 0.66,
 * those on 64-127 0.80), or MIN_SHORT for a copy no longer than its
 * suffix (0.90): the evidence at least as long as what it copies
 * (docs/RECONSTRUCTION.md, issue 8 fifth round). */
#define MIN_MATCH 64
#define MIN_SHORT 16
#define MAX_OCC 1024    /* anchor occurrences examined per gap */
/* Events compared backwards at most.  512 left most fills on real
 * programs tied at the cap and went to the nearest candidate; 2048 ranks
 * by the longer history (fop at 20% loss: RA 0.83-0.88 -> 0.89-0.94, and
 * PR up); 4096 and 16384 gained nothing more and cost more CPU where long
 * loops match far back (docs/RECONSTRUCTION.md, issue 8 sixth round). */
#define MAX_SUFFIX 2048
#define MAX_ENDS 64     /* reconnection points tried per candidate */
#define MAX_FILL 20000u
/* Where no candidate reconnects: the other ranked candidates (suffix of
 * MIN_SHORT or more) that must repeat the start of the best one's
 * continuation for that start to fill the gap (one: marginal RA 0.90
 * over 66 runs, with copies of 20000 events aligning 0.05-0.5; two, and
 * no longer than the best one's suffix: 0.97, docs/RECONSTRUCTION.md,
 * issue 8 seventh round). */
#define PARTIAL_AGREE 2
/* A fill may cost this much more than the budget, for timing noise. */
#define SLACK_FACTOR 1.5
#define SLACK_EVENTS 32

struct rank {
	size_t p;         /* the candidate: index after its anchor */
	size_t m[3];      /* common suffix with the IS: tier 1, 2, concrete */
	size_t abs[2];    /* tier-1 and tier-2 events within m[2] */
};

/* One thread's output prepared for search. */
struct rctx {
	struct flow *f;
	const struct jpb_flow_event *v;
	size_t n;
	/* the tier-1 / tier-2 events, in order, as their keys' 32-bit codes
	 * (tier_code): suffix reads them as a run, not the 24-byte events
	 * apart in the window (a cache line each) they stand for; but in a
	 * WIDE window, one with a key that has no code, the events */
	uint32_t *tkey[2];
	int wide;
	struct tblock *tb;  /* where each index lies among them (before) */
	/* the keys (method, bci) recovery looks up, those of the events on
	 * either side of the gaps to fill, by dense id (1-based), and per id
	 * its events in order: occ[ostart[id]..ostart[id + 1]) */
	struct u64map ids;
	size_t *ostart;
	uint32_t *occ;
	struct fcost cost;
	/* per method: its first compiled (decoded) and its last interpreted
	 * event in the window, NONE if none */
	uint32_t *first_dec, *last_int;
};

#define NONE UINT32_MAX

/* The tier events among the 64 indexes from 64 * B: how many of each
 * tier lie before them, and which of them belong to it.  24 bytes where a
 * count per index and tier took 512, all written by the pass over the
 * window (170 k D1 write misses on jython at 20% loss) and read at a few
 * indexes per candidate. */
struct tblock {
	uint32_t cnt[2];
	uint64_t bits[2];
};

static uint64_t key(const struct jpb_flow_event *e)
{
	return e->method && e->status != JPB_FLOW_UNKNOWN ?
		(uint64_t)e->method << 32 | (uint32_t)e->bci : 0;
}

/* The id of event I's key: 0 when the key is unknown; asked only of the
 * events around the gaps to fill, whose keys index_keys took. */
static uint32_t kid(const struct rctx *r, size_t i)
{
	uint32_t id = 0;
	uint64_t k = key(&r->v[i]);
	return k && u64map_get(&r->ids, k, &id) ? id : 0;
}

/* Event E's key as a 32-bit code, equal for equal keys only: 0 for
 * none, else method << 16 | (bci + 1), which needs both below 2^16
 * (jython's 23 k methods and the JVM's bcis are); *ODD gets a bit at 2^16
 * or above where they are not. */
static inline uint32_t tier_code(const struct jpb_flow_event *e, uint32_t *odd)
{
	uint32_t m = e->method, b = (uint32_t)e->bci + 1;
	*odd |= m | b;
	return m && e->status != JPB_FLOW_UNKNOWN ? m << 16 | b : 0;
}

/* How many tier-L events lie before index I (0 <= I <= n). */
static size_t before(const struct rctx *r, int l, size_t i)
{
	const struct tblock *b = &r->tb[i / 64];
	uint64_t below = b->bits[l] & ((UINT64_C(1) << (i % 64)) - 1);
	return b->cnt[l] + (size_t)__builtin_popcountll(below);
}

/* The last tier-L index before X (one must exist). */
static size_t tier_prev(const struct rctx *r, int l, size_t x)
{
	size_t b = x / 64;
	uint64_t bits = r->tb[b].bits[l] & ((UINT64_C(1) << (x % 64)) - 1);
	while (!bits)
		bits = r->tb[--b].bits[l];
	return b * 64 + 63 - (size_t)__builtin_clzll(bits);
}

/* How many gaps lie at or before index I (gaps are in order). */
static size_t gaps_upto(const struct rctx *r, size_t i)
{
	const struct gapmark *g = r->f->gaps;
	size_t lo = 0, hi = r->f->ngaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g[mid].at <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The index of the first event of event I's segment: the last gap at or
 * before I, else 0. */
static size_t seg(const struct rctx *r, size_t i)
{
	size_t k = gaps_upto(r, i);
	return k ? r->f->gaps[k - 1].at : 0;
}

/* The first index after I where I's segment ends: the next gap's
 * position, or the window's end. */
static size_t seg_end(const struct rctx *r, size_t i)
{
	size_t k = gaps_upto(r, i);
	return k < r->f->ngaps ? r->f->gaps[k].at : r->n;
}

/* Opcode OP's tier: 0 concrete only, 1 control structure, 2 call
 * structure. */
static int tier_of(uint8_t op)
{
	unsigned k = jbc_info(op)->kind;
	if (jbc_is_invoke(k) || k == JBC_RETURN || k == JBC_ATHROW)
		return 2;
	return k == JBC_COND_BRANCH || k == JBC_GOTO || k == JBC_SWITCH ||
	       k == JBC_JSR || k == JBC_RET;
}

/* The first position in key ID's occurrences holding an event index
 * >= FROM. */
static size_t occ_find(const struct rctx *r, uint32_t id, size_t from)
{
	size_t lo = r->ostart[id], hi = r->ostart[id + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->occ[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int same_events(const struct jpb_flow_event *v, size_t a, size_t b,
		       size_t k)
{
	for (size_t i = 0; i < k; i++)
		if (key(&v[a + i]) != key(&v[b + i]) || !key(&v[a + i]))
			return 0;
	return 1;
}

static void rctx_free(struct rctx *r)
{
	free(r->tkey[0]);
	free(r->tkey[1]);
	free(r->tb);
	free(r->ostart);
	free(r->occ);
	free(r->first_dec);
	free(r->last_int);
	u64map_fini(&r->ids);
}

/* The keys of the events on either side of gaps G0.. get ids; *WANT (per
 * method, calloc'd) says which methods hold one, a filter cheaper than
 * the map for the events of the others. */
static int want_keys(struct rctx *r, size_t g0, uint8_t **want)
{
	const struct flow *f = r->f;
	uint32_t nk = 0;
	if (!(*want = calloc(f->nmeths + 2, 1)))
		return jpb_err_nomem;
	for (size_t gi = g0; gi < f->ngaps; gi++) {
		size_t a = f->gaps[gi].at;
		for (size_t i = a ? a - 1 : a; i <= a && i < r->n; i++) {
			uint64_t k = key(&r->v[i]);
			uint32_t id;
			if (!k || r->v[i].method > f->nmeths + 1 || u64map_get(&r->ids, k, &id))
				continue;
			if (u64map_put(&r->ids, k, ++nk))
				return jpb_err_nomem;
			(*want)[r->v[i].method] = 1;
		}
	}
	r->ostart = calloc((size_t)nk + 2, sizeof(*r->ostart));
	return r->ostart ? 0 : jpb_err_nomem;
}

/* An event whose key is wanted. */
struct match {
	uint32_t at, id;
};

/* Each wanted id's events in order, by a counting sort of the N matches. */
static int index_matches(struct rctx *r, const struct match *m, size_t n)
{
	size_t nk = r->ids.n;
	if (!(r->occ = malloc((n ? n : 1) * sizeof(*r->occ))))
		return jpb_err_nomem;
	for (size_t k = 0; k < n; k++)
		r->ostart[m[k].id + 1]++;
	for (size_t k = 1; k <= nk; k++)
		r->ostart[k + 1] += r->ostart[k];
	for (size_t k = 0; k < n; k++)
		r->occ[r->ostart[m[k].id]++] = m[k].at;
	/* the fill left ostart[id] at the end of id's list */
	for (size_t k = nk + 1; k > 1; k--)
		r->ostart[k] = r->ostart[k - 1];
	r->ostart[1] = 0;
	return 0;
}

/* The pass over the window: the tier table, the wanted methods, the
 * matches found and the tier events counted so far. */
struct scan {
	uint8_t tier[256];
	uint8_t *want;
	struct match *mat;
	size_t nm, capm;
	uint32_t n[2];
	struct fcost_fit fit; /* the time model, fitted in the same pass */
	size_t nc;            /* ... the current timing window's compiled events */
};

/* Event E at I, of a wanted method: a match if its key is wanted. */
static int scan_match(struct rctx *r, struct scan *s, size_t i,
		      const struct jpb_flow_event *e)
{
	uint32_t id;
	if (!u64map_get(&r->ids, key(e), &id))
		return 0;
	if (JPB_GROW(s->mat, s->nm, s->capm))
		return jpb_err_nomem;
	s->mat[s->nm++] = (struct match){ (uint32_t)i, id };
	return 0;
}

/* The 64 indexes from I0 (fewer at the window's end): their tier events'
 * keys and block, their methods' first compiled and last interpreted
 * index, the time model's windows and the matches.  What the loop uses
 * is held in locals: the keys' stores (uint64_t) may alias any size_t
 * field, which the compiler then read again for every event (~10 M
 * instructions on jython at 20% loss). */
static int scan_block(struct rctx *r, struct scan *s, size_t i0)
{
	const struct jpb_flow_event *v = r->v;
	size_t i1 = r->n - i0 < 64 ? r->n : i0 + 64, lim = r->f->nmeths + 1;
	uint32_t *t0 = r->tkey[0] + s->n[0], *t1 = r->tkey[1] + s->n[1];
	uint32_t *first_dec = r->first_dec, *last_int = r->last_int;
	const uint8_t *tier = s->tier, *want = s->want;
	uint64_t bits[2] = { 0, 0 }, tsc = s->fit.tsc;
	size_t nc = s->nc;
	uint32_t odd = 0;
	int err = 0;
	for (size_t i = i0; !err && i < i1; i++) {
		const struct jpb_flow_event *e = &v[i];
		int t = tier[e->opcode];
		if (t) { /* tier 2 (call structure) is in tier 1 too */
			uint64_t bit = UINT64_C(1) << (i - i0);
			uint32_t k = tier_code(e, &odd);
			*t1++ = k;
			bits[1] |= bit;
			if (t == 2) {
				*t0++ = k;
				bits[0] |= bit;
			}
		}
		if (e->tsc != tsc) {
			flow_cost_window(r->f, &s->fit, i, nc);
			tsc = e->tsc;
			nc = 0;
		}
		nc += e->status == JPB_FLOW_DECODED;
		uint32_t m = e->method;
		if (m > lim)
			continue;
		if (e->status == JPB_FLOW_DECODED) {
			if (first_dec[m] == NONE)
				first_dec[m] = (uint32_t)i;
		} else if (e->status != JPB_FLOW_UNKNOWN) {
			last_int[m] = (uint32_t)i;
		}
		if (want[m])
			err = scan_match(r, s, i, e);
	}
	r->tb[i0 / 64] = (struct tblock){ { s->n[0], s->n[1] }, { bits[0], bits[1] } };
	s->n[0] = (uint32_t)(t0 - r->tkey[0]);
	s->n[1] = (uint32_t)(t1 - r->tkey[1]);
	s->nc = nc;
	r->wide |= odd >> 16 != 0;
	return err;
}

static int rctx_alloc(struct rctx *r, struct flow *f)
{
	memset(r, 0, sizeof(*r));
	r->f = f;
	r->v = f->out;
	r->n = f->nout;
	for (int l = 0; l < 2; l++)
		r->tkey[l] = malloc((r->n ? r->n : 1) * sizeof(*r->tkey[l]));
	r->tb = malloc((r->n / 64 + 1) * sizeof(*r->tb));
	r->first_dec = malloc((f->nmeths + 2) * sizeof(*r->first_dec));
	r->last_int = malloc((f->nmeths + 2) * sizeof(*r->last_int));
	if (!r->tkey[0] || !r->tkey[1] || !r->tb || !r->first_dec || !r->last_int)
		return jpb_err_nomem;
	memset(r->first_dec, 0xff, (f->nmeths + 2) * sizeof(*r->first_dec));
	memset(r->last_int, 0xff, (f->nmeths + 2) * sizeof(*r->last_int));
	return 0;
}

/* One pass over the window: the tier indexes, the events whose key is
 * wanted (for gaps G0.., the ones to fill) and the time model (a second
 * pass over the window's events, ~0.5 M D1 misses on jython at 20% loss,
 * before). */
static int rctx_init(struct rctx *r, struct flow *f, size_t g0)
{
	struct scan s = { .want = NULL };
	for (unsigned op = 0; op < 256; op++)
		s.tier[op] = (uint8_t)tier_of((uint8_t)op);
	int err = rctx_alloc(r, f);
	if (!err)
		err = want_keys(r, g0, &s.want);
	if (!err)
		err = flow_cost_fit_start(f, &s.fit);
	for (size_t i0 = 0; !err && i0 < r->n; i0 += 64)
		err = scan_block(r, &s, i0);
	if (!err && r->n % 64 == 0) /* index n opens a block */
		r->tb[r->n / 64] = (struct tblock){ { s.n[0], s.n[1] }, { 0, 0 } };
	if (!err)
		err = index_matches(r, s.mat, s.nm);
	free(s.want);
	free(s.mat);
	flow_cost_fit_end(&s.fit, &r->cost);
	return err;
}

void flow_cost_fit(struct flow *f, struct fcost *c)
{
	struct rctx r;
	*c = (struct fcost){ 0, 0 };
	if (!rctx_init(&r, f, f->ngaps)) /* no gap's keys wanted */
		*c = r.cost;
	rctx_free(&r);
}

/* Common suffix of the events before A and before P, each within its
 * segment: at tier L (0: call, 1: control structure) over the tier's
 * events, or concrete (L = 2). */
static size_t suffix(const struct rctx *r, int l, size_t a, size_t p)
{
	size_t sa = seg(r, a - 1), sp = seg(r, p - 1), k = 0;
	if (l == 2) {
		while (k < MAX_SUFFIX && a - k > sa && p - k > sp &&
		       key(&r->v[a - 1 - k]) == key(&r->v[p - 1 - k]) &&
		       key(&r->v[a - 1 - k]))
			k++;
		return k;
	}
	/* the tier's events before A and P, and how many of them lie in
	 * their segments */
	const uint32_t *t = r->tkey[l];
	size_t ia = before(r, l, a), ip = before(r, l, p);
	size_t na = ia - before(r, l, sa), np = ip - before(r, l, sp);
	size_t kmax = na < np ? na : np;
	if (kmax > MAX_SUFFIX)
		kmax = MAX_SUFFIX;
	if (r->wide) {
		for (size_t xa = a, xp = p; k < kmax; k++) {
			xa = tier_prev(r, l, xa);
			xp = tier_prev(r, l, xp);
			if (key(&r->v[xa]) != key(&r->v[xp]) || !key(&r->v[xa]))
				break;
		}
		return k;
	}
	while (k < kmax && t[ia - 1 - k] == t[ip - 1 - k] && t[ia - 1 - k])
		k++;
	return k;
}

/* Is candidate X ranked above Y?  Longer concrete, control, call
 * suffixes, in that order; then the nearer to the gap. */
static int better(const struct rank *x, const struct rank *y, size_t a)
{
	for (int l = 2; l >= 0; l--)
		if (x->m[l] != y->m[l])
			return x->m[l] > y->m[l];
	size_t dx = x->p > a ? x->p - a : a - x->p, dy = y->p > a ? y->p - a : a - y->p;
	return dx < dy;
}

/* Algorithm 4 over the anchor's occurrences, keeping the top N: a
 * candidate whose tier-1 or tier-2 suffix is shorter than the tier-l
 * events in the N-th best's concrete suffix cannot beat it (Thm 5.5). */
static void rank_one(const struct rctx *r, size_t a, size_t p,
		     struct rank *top, size_t *nt)
{
	struct rank c = { p, { 0 }, { 0 } };
	const struct rank *w = *nt == TOP_N ? &top[TOP_N - 1] : NULL;
	c.m[0] = suffix(r, 0, a, p);
	if (w && c.m[0] < w->abs[0])
		return;
	c.m[1] = suffix(r, 1, a, p);
	if (w && c.m[1] < w->abs[1])
		return;
	c.m[2] = suffix(r, 2, a, p);
	for (int l = 0; l < 2; l++)
		c.abs[l] = before(r, l, a) - before(r, l, a - c.m[2]);
	if (w && !better(&c, w, a))
		return;
	size_t at = *nt < TOP_N ? (*nt)++ : TOP_N - 1;
	while (at > 0 && better(&c, &top[at - 1], a)) {
		top[at] = top[at - 1];
		at--;
	}
	top[at] = c;
}

/* Algorithm 4 over the anchor's occurrences, nearest to the gap first,
 * keeping the top N: a candidate whose tier-1 or tier-2 suffix is shorter
 * than the tier-l events in the N-th best's concrete suffix cannot beat
 * it (Thm 5.5), so its lower tiers are not compared. */
static size_t rank_candidates(const struct rctx *r, size_t a, struct rank *top)
{
	uint32_t id = kid(r, a - 1);
	size_t nt = 0;
	if (!id)
		return 0;
	/* the anchor's occurrences [lo, hi); from mid on they lie after it */
	size_t lo = r->ostart[id], hi = r->ostart[id + 1], mid = occ_find(r, id, a);
	size_t down = mid, up = mid;
	for (size_t tries = 0; tries < MAX_OCC && (down > lo || up < hi); tries++) {
		size_t p;
		if (up < hi && (down == lo || r->occ[up] + 1 - a < a - 1 - r->occ[down - 1]))
			p = r->occ[up++] + 1;
		else
			p = r->occ[--down] + 1;
		if (p != a && p < r->n)
			rank_one(r, a, p, top, &nt);
	}
	return nt;
}

struct fill {
	size_t gap;       /* index into gaps */
	size_t from, len; /* the source stretch, or len events in path */
	uint16_t ncand;
	struct jpb_flow_event *path; /* a shortest ICFG path (owned) */
	/* for the debug dump: the rank filled from (-1 path, -2 the start of
	 * a candidate that does not reconnect), its concrete
	 * suffix, the gap's budget and the fill's cost */
	int rank;
	size_t match;
	double want, cost;
	uint64_t t_end; /* the fill's events are spread over [gap t0, t_end] */
};

/* Would event E, copied into the gap at A, run compiled there?  Its
 * method's state at the gap, not at the copied place: compiled once its
 * first compiled event lies before the gap, unless it still runs
 * interpreted after the gap (an OSR loop, a deoptimisation), where the
 * copied event's own state stands. */
static int compiled_at(const struct rctx *r, const struct jpb_flow_event *e, size_t a)
{
	uint32_t m = e->method;
	if (m > r->f->nmeths + 1)
		return e->status == JPB_FLOW_DECODED;
	if (r->first_dec[m] == NONE || r->first_dec[m] >= a)
		return 0;
	if (r->last_int[m] != NONE && r->last_int[m] >= a)
		return e->status == JPB_FLOW_DECODED;
	return 1;
}

/* The cost of the N events at V copied into the gap at A. */
static double cost_at(const struct rctx *r, const struct jpb_flow_event *v, size_t n,
		      size_t a)
{
	double t = 0;
	for (size_t i = 0; i < n; i++)
		t += compiled_at(r, &v[i], a) ? r->cost.compiled : r->cost.interp;
	return t;
}

/* Does the continuation at Q repeat the CAP events after the gap at A, or
 * as many as both their segments hold? */
static int agrees_ahead(const struct rctx *r, size_t q, size_t a, size_t cap)
{
	size_t sq = seg(r, q), sa = seg(r, a);
	for (size_t k = 0; k < cap; k++) {
		if (q + k >= r->n || a + k >= r->n || seg(r, q + k) != sq ||
		    seg(r, a + k) != sa)
			return 1;
		if (key(&r->v[q + k]) != key(&r->v[a + k]) || !key(&r->v[q + k]))
			return 0;
	}
	return 1;
}

/* Where the continuation of the candidate at P reconnects to the events
 * after the gap at A (MIN_AHEAD of them, MIN_AHEAD_LONG after a copy of
 * LONG_COPY events or more, or as many as both segments hold), at a cost within MAXCOST: the index where the
 * reconnection starts, or 0.  With the gap's budget WANT known, the
 * reconnection whose cost is nearest it (reading stops once past it);
 * else the first, as PLDI'21 reads a candidate until it reconnects. */
static size_t reconnect(const struct rctx *r, size_t p, size_t a, double want,
			double maxcost)
{
	uint32_t id = kid(r, a);
	size_t j = occ_find(r, id, p + 1), end = r->ostart[id + 1], at = p, best = 0;
	double cost = 0, bestd = 0;
	for (int e = 0; j < end && e < MAX_ENDS; j++, e++) {
		size_t q = r->occ[j]; /* the reconnection starts at q */
		if (q - p > MAX_FILL || q + Y > r->n || seg(r, q + Y - 1) != seg(r, p))
			break;
		cost += cost_at(r, r->v + at, q - at, a);
		at = q;
		if (cost > maxcost)
			break;
		if (!same_events(r->v, q, a, Y) ||
		    !agrees_ahead(r, q, a, q - p >= LONG_COPY ? MIN_AHEAD_LONG : MIN_AHEAD))
			continue;
		double d = cost > want ? cost - want : want - cost;
		if (!best || d < bestd) {
			best = q;
			bestd = d;
		}
		if (want < 0 || cost >= want)
			break;
	}
	return best;
}

/* The events the continuations at P and Q share from their start, each
 * within its segment, at most CAP. */
static size_t agreed_prefix(const struct rctx *r, size_t p, size_t q, size_t cap)
{
	size_t ep = seg_end(r, p), eq = seg_end(r, q), k = 0;
	while (k < cap && p + k < ep && q + k < eq &&
	       key(&r->v[p + k]) == key(&r->v[q + k]) && key(&r->v[p + k]))
		k++;
	return k;
}

/* A gap no candidate reconnects across, with a known budget WANT: how
 * much of the start of the best candidate's continuation PARTIAL_AGREE
 * other ranked candidates repeat, no longer than its own common suffix
 * (the evidence at least as long as the copy) and within the budget;
 * 0 when that is under MIN_SHORT events. */
static size_t partial_len(const struct rctx *r, const struct rank *top, size_t nt,
			  size_t a, double want)
{
	if (want <= 0 || !nt || top[0].m[2] < MIN_MATCH)
		return 0;
	size_t agree[TOP_N], na = 0;
	for (size_t j = 1; j < nt; j++) {
		if (top[j].m[2] < MIN_SHORT)
			continue;
		size_t k = agreed_prefix(r, top[0].p, top[j].p, top[0].m[2]);
		size_t at = na++;
		for (; at > 0 && agree[at - 1] < k; at--)
			agree[at] = agree[at - 1];
		agree[at] = k;
	}
	size_t len = na >= PARTIAL_AGREE ? agree[PARTIAL_AGREE - 1] : 0, n = 0;
	for (double cost = 0; n < len; n++) {
		cost += cost_at(r, r->v + top[0].p + n, 1, a);
		if (cost > want)
			break;
	}
	return n >= MIN_SHORT ? n : 0;
}

/* The gap at A takes the first LEN events of the candidate at rank 0. */
static void partial_fill(const struct rctx *r, const struct rank *top, size_t nt,
			 size_t a, size_t len, double want, struct fill *out)
{
	const struct gapmark *gm = &r->f->gaps[out->gap];
	out->from = top[0].p;
	out->len = len;
	out->ncand = (uint16_t)nt;
	out->rank = -2;
	out->match = top[0].m[2];
	out->want = want;
	out->cost = cost_at(r, r->v + out->from, len, a);
	/* it ran for its cost, from the gap's start */
	double share = out->cost < want ? out->cost / want : 1;
	out->t_end = gm->t0 + (uint64_t)((double)(gm->t1 - gm->t0) * share);
}

static int find_fill(struct rctx *r, size_t gi, struct fill *out)
{
	struct flow *f = r->f;
	size_t a = f->gaps[gi].at;
	*out = (struct fill){ gi, 0, 0, 0, NULL, .t_end = f->gaps[gi].t1 };
	if (!a || a + Y > r->n || !kid(r, a - 1) || seg(r, a + Y - 1) != a ||
	    !same_events(r->v, a, a, Y))
		return 0;
	double want = flow_gap_budget(f, &r->cost, gi);
	double maxcost = want < 0 ? 1e300 :
		want * SLACK_FACTOR + SLACK_EVENTS * r->cost.interp;
	struct rank top[TOP_N];
	size_t nt = rank_candidates(r, a, top);
	/* Below the TRUSTED best, a candidate that reconnects where the
	 * better-matching one did not is a guess: ranks 2 and 3 aligned 0.66
	 * and 0.53 of their events against 0.81 for the first, ranks 4-8
	 * 0.34-0.77 (docs/RECONSTRUCTION.md, "Recovery"). */
	for (size_t i = 0, tried = 0; i < nt && tried < TRUSTED && top[i].m[2] >= MIN_SHORT;
	     i++) {
		/* A candidate within the IS's own matched stretch (a period
		 * of a loop before the gap) continues into the gap itself:
		 * failing to reconnect says nothing against the next period.
		 * One from elsewhere, ranked below those periods, matched
		 * no more of the gap's history than the loop's own run: a guess
		 * like any rank 2 (11 such fills over 240 runs aligned 0.56,
		 * docs/RECONSTRUCTION.md, "Recovery"). */
		int own = top[i].p < a && a - top[i].p <= top[i].m[2];
		if (i > tried && !own)
			break;
		size_t q = reconnect(r, top[i].p, a, want, maxcost);
		tried += q || !own;
		if (!q || (top[i].m[2] < MIN_MATCH && q - top[i].p > top[i].m[2]))
			continue;
		out->from = top[i].p;
		out->len = q - top[i].p;
		out->ncand = (uint16_t)nt;
		out->rank = (int)i;
		out->match = top[i].m[2];
		out->want = want;
		out->cost = cost_at(r, r->v + out->from, out->len, a);
		return 1;
	}
	size_t np = partial_len(r, top, nt, a, want);
	if (np) {
		partial_fill(r, top, nt, a, np, want, out);
		return 1;
	}
	/* No complete segment connects: the shortest feasible path. */
	struct jpb_flow_event *path;
	int err = flow_path(f, &r->v[a - 1], &r->v[a], &path, &np);
	double cost = err > 0 && np ? flow_cost_of(&r->cost, path, np) : 0;
	if (err <= 0 || !np || cost > maxcost) {
		free(path);
		return err < 0 ? err : 0;
	}
	out->path = path;
	out->len = np;
	out->rank = -1;
	out->want = want;
	out->cost = cost;
	return 1;
}

/* JPBPF_RECOVER_DUMP=FILE appends a line per fill (debugging recovery's
 * choices against eval's per-gap dump; docs/RECONSTRUCTION.md). */
static void dump_fill(FILE *o, const struct fill *fl, const struct jpb_flow_event *e,
		      size_t emitted)
{
	fprintf(o, "fill rank %d match %zu ncand %u want %.0f cost %.0f len %zu first %u:%d\n",
		fl->rank, fl->match, fl->ncand, fl->want, fl->cost, emitted,
		e ? e->method : 0, e ? e->bci : -1);
}

/* The fills' events, in order, into INS; each fill's count in CNT (a
 * copied stretch leaves its unknown events out). */
static size_t fill_events(const struct flow *f, const struct fill *fl, size_t nfl,
			  struct jpb_flow_event *ins, size_t *cnt)
{
	size_t w = 0;
	for (size_t i = 0; i < nfl; i++) {
		const struct gapmark *gm = &f->gaps[fl[i].gap];
		size_t w0 = w;
		for (size_t k = 0; k < fl[i].len; k++) {
			struct jpb_flow_event e = fl[i].path ? fl[i].path[k] :
							       f->out[fl[i].from + k];
			if (e.status == JPB_FLOW_UNKNOWN)
				continue;
			e.status = JPB_FLOW_RECOVERED;
			e.ncand = fl[i].ncand;
			e.tsc = gm->t0 + (fl[i].t_end - gm->t0) * (k + 1) / (fl[i].len + 1);
			ins[w++] = e;
		}
		cnt[i] = w - w0;
	}
	return w;
}

static void dump_fills(const struct fill *fl, size_t nfl,
		       const struct jpb_flow_event *ins, const size_t *cnt)
{
	const char *dump = getenv("JPBPF_RECOVER_DUMP");
	FILE *o = dump ? fopen(dump, "a") : NULL;
	for (size_t i = 0, k = 0; o && i < nfl; k += cnt[i++])
		dump_fill(o, &fl[i], cnt[i] ? &ins[k] : NULL, cnt[i]);
	if (o)
		fclose(o);
}

/* The fills of the window's new gaps: *FL (NULL, or malloc'd with
 * their paths) and *NFL. */
static int find_fills(struct flow *f, struct fill **flp, size_t *nflp)
{
	*flp = NULL;
	*nflp = 0;
	if (!f->ngaps || f->nout < 1 + Y)
		return 0;
	/* The gaps of the context (before plen) were filled with the window
	 * before; they only cut segments now. */
	size_t g0 = 0;
	while (g0 < f->ngaps && f->gaps[g0].at < f->plen)
		g0++;
	if (g0 == f->ngaps)
		return 0;
	struct rctx r;
	struct fill *fl = calloc(f->ngaps, sizeof(*fl));
	int err = fl ? rctx_init(&r, f, g0) : jpb_err_nomem;
	size_t nfl = 0;
	for (size_t i = g0; !err && i < f->ngaps; i++) {
		int found = find_fill(&r, i, &fl[nfl]);
		if (found < 0)
			err = found;
		nfl += found > 0;
	}
	if (fl)
		rctx_free(&r);
	*flp = fl;
	*nflp = nfl;
	return err;
}

static void free_fills(struct fill *fl, size_t nfl)
{
	for (size_t i = 0; fl && i < nfl; i++)
		free(fl[i].path);
	free(fl);
}

static int put_some(struct flow *f, const struct jpb_flow_event *v, size_t n)
{
	return n ? f->sink.put(f->sink.arg, v, n) : 0;
}

/* The fills' events, written between the window's events rather than
 * moved in (and out again after the write: the two passes read and
 * wrote the window's new part, ~0.5 M D1 misses on jython at 20%
 * loss). */
static int write_fills(struct flow *f, struct fill *fl, size_t nfl)
{
	size_t extra = 0;
	for (size_t i = 0; i < nfl; i++)
		extra += fl[i].len;
	struct jpb_flow_event *ins = extra ? malloc(extra * sizeof(*ins)) : NULL;
	size_t *cnt = extra ? malloc(nfl * sizeof(*cnt)) : NULL;
	int err = extra && (!ins || !cnt) ? jpb_err_nomem : 0;
	size_t total = extra && !err ? fill_events(f, fl, nfl, ins, cnt) : 0;
	if (extra && !err)
		dump_fills(fl, nfl, ins, cnt);
	size_t r = f->plen, k = 0;
	for (size_t i = 0; extra && !err && i < nfl; i++) {
		size_t at = f->gaps[fl[i].gap].at;
		err = put_some(f, f->out + r, at - r);
		if (!err)
			err = put_some(f, ins + k, cnt[i]);
		r = at;
		k += cnt[i];
	}
	if (!err)
		err = put_some(f, f->out + r, f->nout - r);
	f->sum.by_status[JPB_FLOW_RECOVERED] += total;
	f->sum.events += total;
	free(ins);
	free(cnt);
	return err;
}

int flow_recover_write(struct flow *f)
{
	struct fill *fl;
	size_t nfl;
	int err = find_fills(f, &fl, &nfl);
	if (!err)
		err = write_fills(f, fl, nfl);
	free_fills(fl, nfl);
	return err;
}

/* flow_recover's sink: the events written, gathered. */
struct gathered {
	struct jpb_flow_event *v;
	size_t n, cap;
};

static int gather(void *arg, const struct jpb_flow_event *v, size_t n)
{
	struct gathered *g = arg;
	if (jpb_grow((void **)&g->v, &g->cap, g->n + n, sizeof(*v)))
		return jpb_err_nomem;
	memcpy(g->v + g->n, v, n * sizeof(*v));
	g->n += n;
	return 0;
}

/* What flow_recover_write writes, put back in place of out[plen..nout):
 * in-place recovery for the tests is the path the windows take, not a
 * second way of placing the fills. */
int flow_recover(struct flow *f)
{
	struct gathered g = { 0 };
	struct flow_sink sink = f->sink;
	f->sink = (struct flow_sink){ gather, &g };
	int err = flow_recover_write(f);
	f->sink = sink;
	if (!err)
		err = jpb_grow((void **)&f->out, &f->capo, f->plen + g.n, sizeof(*f->out));
	if (!err) {
		if (g.n)
			memcpy(f->out + f->plen, g.v, g.n * sizeof(*g.v));
		f->nout = f->plen + g.n;
	}
	free(g.v);
	return err;
}
