// SPDX-License-Identifier: MIT
/* Flows against truth (eval.h; definitions in docs/RECONSTRUCTION.md). */
#include "eval/eval.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"
#include "records_flow.h"
#include "records_truth.h"

#define RUN 4       /* elements that must agree to accept a resync */
#define RUN_FAR 16  /* ... when it skips more than NEAR elements */
#define FAR 1024    /* skips of one side tried against any of the other */
#define TRIES 1024  /* occurrences tried per resync */
#define NEAR 64     /* local resync window (sum of both skips) */
#define LONG_RUN 32 /* an agreement this long ends a local resync search */
#define LOOK_ON 16  /* further skips tried for a longer agreement */
#define ANCHOR 32   /* elements of a K-gram unique on both sides (anchors) */

const char *eval_definitions(void)
{
	return
	"Per thread, T is the truth's bytecode events and F the flow events, each\n"
	"as (method class+name+signature, bci).  Alignment: walk T and F in order;\n"
	"equal heads are aligned pairs; an unknown F event is skipped, and so is\n"
	"a compiled-code F event right after the first instruction of a pair\n"
	"the truth's interpreter fused (the second's truth events under half\n"
	"the first's), at the second; otherwise\n"
	"resync at the nearest (i+a, j+b), a+b <= 64, where 4 elements agree\n"
	"(fewest skipped, then fewest T skipped), unless a point at most 16\n"
	"further agrees for more elements (up to 32) than it skips more (the\n"
	"most agreeing less skipped is taken); failing\n"
	"that, the point (i+a, j+b), a < 1024 or b < 1024 or a = b, with the\n"
	"fewest skipped where 16 elements agree; if none exists, both advance\n"
	"unaligned.  Every pair is equal, in order, and used once, so no\n"
	"output can score better than its real agreement.\n"
	"  PMD = lost / |T| where the simulator lists the truth events whose\n"
	"        trace was lost (sim/lost): observed events then align with the\n"
	"        captured truth and recovered ones with the lost truth; without\n"
	"        sim/lost, PMD = 1 - min(1, observed / |T|) and both align with\n"
	"        all of T (observed = F events not recovered)\n"
	"  PDC = 1 - PMD\n"
	"  PD  = (known + unjudged) / observed (observed events placed at a\n"
	"        method and bci)\n"
	"  DA  = aligned observed events / known\n"
	"  unjudged = placed events left unaligned at the second instruction of\n"
	"        a pair HotSpot runs as one dispatch (aload_0+getfield,\n"
	"        iload+iload, iload+caload): JVMTI steps, hence the truth, never\n"
	"        report them; and placed events left unaligned that repeat the\n"
	"        location of the aligned flow event before them (directly or\n"
	"        through a run of such repeats): JVMTI never reports a step at\n"
	"        the location of the previous one, so a method returning twice\n"
	"        through one bytecode location holds one truth event for two.\n"
	"        Unjudged events count in neither DA's numerator nor its\n"
	"        denominator (--json: unjudged, of them unjudged_repeats)\n"
	"  PR  = min(1, recovered / missing), 0 when nothing is missing\n"
	"  RA  = aligned recovered events / recovered; with sim/lost, gap by\n"
	"        gap: each run of recovered events aligns with the lost truth\n"
	"        between the truth events its aligned observed neighbours (or\n"
	"        the previous run's last pair) matched; when none lies there,\n"
	"        with the lost run that starts within 64 events after the\n"
	"        successor's partner (the neighbours' alignment is a few events\n"
	"        off where the decoder's gap began before the simulator's loss)\n"
	"  hot10 = |top-10 methods by truth events  ∩  top-10 by F events|,\n"
	"        unjudged F events not counted (recovered ones are)\n"
	"  DA_compiled, DA_interpreted (--json): DA over the compiled-code events\n"
	"        (decoded) and over the interpreted ones (placed by reconstruction)\n"
	"  attribution = known F events whose (method, bci) this thread's truth\n"
	"        holds (each truth event usable once) / known\n"
	"Overall: the counts summed over threads (hot10 over all events).\n";
}

/* ---- alignment ----------------------------------------------------------- */

struct occ {
	uint64_t v;
	size_t pos;
};

static int occ_cmp(const void *a, const void *b)
{
	const struct occ *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static struct occ *occ_build(const uint64_t *s, size_t n)
{
	struct occ *o = malloc((n ? n : 1) * sizeof(*o));
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++)
		o[i] = (struct occ){ s[i], i };
	qsort(o, n, sizeof(*o), occ_cmp);
	return o;
}

static int runs_agree_n(const uint64_t *a, size_t na, size_t i,
			const uint64_t *b, size_t nb, size_t j, size_t run)
{
	for (size_t k = 1; k < run && i + k < na && j + k < nb; k++)
		if (a[i + k] != b[j + k])
			return 0;
	return 1;
}

static int runs_agree(const uint64_t *a, size_t na, size_t i, const uint64_t *b,
		      size_t nb, size_t j)
{
	return runs_agree_n(a, na, i, b, nb, j, RUN);
}

/* The first index >= FROM in A (index O) holding B[J] where a run of
 * RUN_FAR agrees, or SIZE_MAX: a far skip on a short agreement derails
 * the rest of the alignment. */
static size_t occ_from(const struct occ *o, const uint64_t *a, size_t na,
		       size_t from, const uint64_t *b, size_t nb, size_t j)
{
	struct occ key = { b[j], from };
	size_t lo = 0, hi = na;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (occ_cmp(&o[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int t = 0; lo < na && o[lo].v == b[j] && t < TRIES; lo++, t++)
		if (runs_agree_n(a, na, o[lo].pos, b, nb, j, RUN_FAR))
			return o[lo].pos;
	return SIZE_MAX;
}

/* The point (i + a, j + b) with the fewest skipped, a < FAR or b < FAR
 * or a = b, where RUN_FAR elements agree: extra stretches on either side
 * or both (a stretch the decoder kept that the simulator counts as lost,
 * and the truth's events around it). */
static int far_sync(const struct occ *ot, const uint64_t *t, size_t nt,
		    size_t i, const struct occ *of, const uint64_t *f, size_t nf,
		    size_t j, size_t *a, size_t *b)
{
	size_t best = SIZE_MAX;
	for (size_t x = 0; x < FAR && i + x < nt; x++) {
		size_t p = t[i + x] ? occ_from(of, f, nf, j, t, nt, i + x) : SIZE_MAX;
		if (p != SIZE_MAX && x + (p - j) < best) {
			best = x + (p - j);
			*a = x;
			*b = p - j;
		}
	}
	for (size_t y = 0; y < FAR && j + y < nf; y++) {
		size_t p = f[j + y] ? occ_from(ot, t, nt, i, f, nf, j + y) : SIZE_MAX;
		if (p != SIZE_MAX && (p - i) + y < best) {
			best = (p - i) + y;
			*a = p - i;
			*b = y;
		}
	}
	/* A stretch of one length wrong on both sides (a twin method's code
	 * placed for the real one), longer than FAR: both skip alike. */
	for (size_t d = FAR; 2 * d < best && i + d < nt && j + d < nf; d++)
		if (t[i + d] && t[i + d] == f[j + d] &&
		    runs_agree_n(t, nt, i + d, f, nf, j + d, RUN_FAR)) {
			best = 2 * d;
			*a = *b = d;
		}
	return best != SIZE_MAX && best > 0;
}

/* How many elements agree from (I, J) on, at most LONG_RUN. */
static size_t agree_len(const uint64_t *t, size_t nt, size_t i, const uint64_t *f,
			size_t nf, size_t j)
{
	size_t k = 0;
	while (k < LONG_RUN && i + k < nt && j + k < nf && f[j + k] && t[i + k] == f[j + k])
		k++;
	return k;
}

/* The nearest point (i + a, j + b), a + b <= NEAR, where both sides agree
 * for RUN elements: a short wrong stretch on either side or both.  When
 * the agreement there is short (< LONG_RUN), the points up to LOOK_ON
 * further are scored too, by agreeing elements (up to LONG_RUN) less
 * skipped ones, and the best taken (nearest first on ties): where
 * the decoder dropped a few captured events before a gap and the
 * simulator's lost ones follow, skipping the flow's first events after
 * the gap agrees only until the truth's loss, skipping the truth's
 * dropped events agrees on (nearest first took the former and misplaced
 * the whole gap). */
static int near_sync(const uint64_t *t, size_t nt, size_t i, const uint64_t *f,
		     size_t nf, size_t j, size_t *a, size_t *b)
{
	size_t last = NEAR;
	long best = LONG_MIN;
	for (size_t s = 1; s <= last; s++)
		for (size_t x = 0; x <= s; x++) {
			size_t y = s - x;
			if (i + x >= nt || j + y >= nf || !f[j + y] || t[i + x] != f[j + y] ||
			    !runs_agree(t, nt, i + x, f, nf, j + y))
				continue;
			size_t len = agree_len(t, nt, i + x, f, nf, j + y);
			long score = (long)len - (long)s;
			if (score <= best)
				continue;
			if (best == LONG_MIN && s + LOOK_ON < last)
				last = s + LOOK_ON;
			best = score;
			*a = x;
			*b = y;
			if (len >= LONG_RUN)
				return 1;
		}
	return best != LONG_MIN;
}

uint64_t eval_align(const uint64_t *t, size_t nt, const uint64_t *f, size_t nf,
		    uint8_t *matched_f)
{
	return eval_align_pairs(t, nt, f, nf, matched_f, NULL);
}

/* The greedy walk (near_sync, far_sync) over T and F; MATCHED_F and
 * T_OF_F as eval_align_pairs, already cleared. */
static uint64_t align_greedy(const uint64_t *t, size_t nt, const uint64_t *f,
			     size_t nf, uint8_t *matched_f, size_t *t_of_f)
{
	struct occ *ot = occ_build(t, nt), *of = occ_build(f, nf);
	uint64_t pairs = 0;
	size_t i = 0, j = 0;
	while (ot && of && i < nt && j < nf) {
		if (!f[j]) {
			j++;
			continue;
		}
		if (t[i] == f[j]) {
			if (matched_f)
				matched_f[j] = 1;
			if (t_of_f)
				t_of_f[j] = i;
			pairs++;
			i++;
			j++;
			continue;
		}
		size_t a = 0, bb = 0;
		if (near_sync(t, nt, i, f, nf, j, &a, &bb)) {
			i += a;
			j += bb;
			continue;
		}
		if (far_sync(ot, t, nt, i, of, f, nf, j, &a, &bb)) {
			i += a;
			j += bb;
		} else {
			i++;
			j++;
		}
	}
	free(ot);
	free(of);
	return pairs;
}

/* Anchors: K-grams that occur once in T and once in F.  A repeated
 * stretch (a loop over similar strings) lets the greedy walk
 * resynchronise on a short agreement at the wrong repetition, cheaper by
 * skips than the right one (after a gap where the decoder resumed 3 300
 * captured events after the simulator's loss, batik's walk then paired
 * 6 000 events behind for 100 000 flow events: DA 0.91 where the LCS
 * gives 0.997).  A K-gram unique on both sides is at its own
 * repetition, unless a gap cut the flow there (eval_align_pairs).
 *
 * S's K-grams without an unknown (0) element, by hash; *N gets their count. */
static struct occ *grams(const uint64_t *s, size_t ns, size_t *n)
{
	struct occ *g = malloc((ns + 1) * sizeof(*g));
	*n = 0;
	if (!g)
		return NULL;
	size_t zeros = 0; /* unknown elements in s[i, i + ANCHOR) */
	for (size_t i = 0; i < ns && i < ANCHOR; i++)
		zeros += !s[i];
	for (size_t i = 0; i + ANCHOR <= ns; i++) {
		if (i) {
			zeros -= !s[i - 1];
			zeros += !s[i + ANCHOR - 1];
		}
		if (zeros)
			continue;
		uint64_t h = 1469598103934665603ULL;
		for (size_t k = 0; k < ANCHOR; k++)
			h = (h ^ s[i + k]) * 1099511628211ULL;
		g[(*n)++] = (struct occ){ h, i };
	}
	qsort(g, *n, sizeof(*g), occ_cmp);
	return g;
}

/* Drop the grams whose hash is not unique in G (sorted). */
static size_t unique_grams(struct occ *g, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		size_t e = i + 1;
		while (e < n && g[e].v == g[i].v)
			e++;
		if (e == i + 1)
			g[k++] = g[i];
		i = e;
	}
	return k;
}

struct apair {
	size_t f, t;
};

static int apair_cmp(const void *a, const void *b)
{
	const struct apair *x = a, *y = b;
	return x->f < y->f ? -1 : x->f > y->f;
}

/* The grams unique on both sides (GT, GF: unique_grams) that are equal,
 * into P by F position; returns their count. */
static size_t gram_pairs(const uint64_t *t, const struct occ *gt, size_t ngt,
			 const uint64_t *f, const struct occ *gf, size_t ngf,
			 struct apair *p)
{
	size_t n = 0;
	for (size_t x = 0, y = 0; x < ngt && y < ngf;) {
		if (gt[x].v != gf[y].v) {
			if (gt[x].v < gf[y].v)
				x++;
			else
				y++;
			continue;
		}
		if (!memcmp(t + gt[x].pos, f + gf[y].pos, ANCHOR * sizeof(*t)))
			p[n++] = (struct apair){ gf[y].pos, gt[x].pos };
		x++;
		y++;
	}
	qsort(p, n, sizeof(*p), apair_cmp);
	return n;
}

/* The longest chain of P (by F) increasing in T, in place (patience
 * sorting); returns its length. */
static size_t longest_chain(struct apair *p, size_t n, size_t *tail, size_t *prev)
{
	size_t len = 0;
	for (size_t k = 0; k < n; k++) {
		size_t lo = 0, hi = len;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (p[tail[mid]].t < p[k].t)
				lo = mid + 1;
			else
				hi = mid;
		}
		prev[k] = lo ? tail[lo - 1] : SIZE_MAX;
		tail[lo] = k;
		len += lo == len;
	}
	/* the chain's indexes into TAIL, then front to back: its element x
	 * is at index x or after */
	for (size_t k = len ? tail[len - 1] : SIZE_MAX, x = len; k != SIZE_MAX; k = prev[k])
		tail[--x] = k;
	for (size_t x = 0; x < len; x++)
		p[x] = p[tail[x]];
	return len;
}

/* Into *A (freed by the caller), the anchors: the longest chain of grams
 * unique and equal on both sides, increasing in T and in F. */
static size_t anchors(const uint64_t *t, size_t nt, const uint64_t *f, size_t nf,
		      struct apair **a)
{
	size_t ngt, ngf, len = 0;
	struct occ *gt = grams(t, nt, &ngt), *gf = grams(f, nf, &ngf);
	struct apair *p = malloc((nf + 1) * sizeof(*p));
	size_t *tail = malloc((nf + 1) * sizeof(*tail)), *prev = malloc((nf + 1) * sizeof(*prev));
	if (gt && gf && p && tail && prev) {
		ngt = unique_grams(gt, ngt);
		ngf = unique_grams(gf, ngf);
		len = longest_chain(p, gram_pairs(t, gt, ngt, f, gf, ngf, p), tail, prev);
	}
	free(gt);
	free(gf);
	free(tail);
	free(prev);
	*a = p;
	return len;
}

/* The greedy walk between consecutive anchors (and before the first,
 * after the last): it cannot pair across one.  M and TOF as
 * eval_align_pairs, cleared. */
static uint64_t align_anchored(const uint64_t *t, size_t nt, const uint64_t *f,
			       size_t nf, uint8_t *m, size_t *tof)
{
	struct apair *a;
	size_t na = anchors(t, nt, f, nf, &a);
	uint64_t pairs = 0;
	for (size_t k = 0; k <= na; k++) {
		size_t t0 = k ? a[k - 1].t : 0, f0 = k ? a[k - 1].f : 0;
		size_t t1 = k < na ? a[k].t : nt, f1 = k < na ? a[k].f : nf;
		pairs += align_greedy(t + t0, t1 - t0, f + f0, f1 - f0, m + f0, tof + f0);
		for (size_t j = f0; j < f1; j++)
			if (tof[j] != SIZE_MAX)
				tof[j] += t0;
	}
	free(a);
	return pairs;
}

/* The walk over the whole and the anchored one: the one with more pairs.
 * An anchor can be wrong where a gap broke the real correspondence (the
 * flow's events before a fill, the loop's next iteration after it,
 * unique only together): math3 at 20% loss lost 1 000 pairs to one. */
uint64_t eval_align_pairs(const uint64_t *t, size_t nt, const uint64_t *f,
			  size_t nf, uint8_t *matched_f, size_t *t_of_f)
{
	uint8_t *m = calloc(nf + 1, 1), *m2 = calloc(nf + 1, 1);
	size_t *tof = malloc((nf + 1) * sizeof(*tof)), *tof2 = malloc((nf + 1) * sizeof(*tof2));
	uint64_t pairs = 0, p2 = 0;
	for (size_t j = 0; tof && tof2 && j < nf; j++)
		tof[j] = tof2[j] = SIZE_MAX;
	if (m && m2 && tof && tof2) {
		pairs = align_greedy(t, nt, f, nf, m, tof);
		p2 = align_anchored(t, nt, f, nf, m2, tof2);
	}
	if (p2 > pairs) {
		pairs = p2;
		memcpy(m, m2, nf);
		memcpy(tof, tof2, nf * sizeof(*tof));
	}
	for (size_t j = 0; j < nf; j++) {
		if (matched_f && m)
			matched_f[j] = m[j];
		if (t_of_f)
			t_of_f[j] = tof ? tof[j] : SIZE_MAX;
	}
	free(m);
	free(m2);
	free(tof);
	free(tof2);
	return pairs;
}

uint64_t eval_align_skip(const uint64_t *t, size_t nt, const uint64_t *f,
			 size_t nf, const uint8_t *skip, uint8_t *matched_f,
			 size_t *t_of_f)
{
	uint64_t *g = calloc(nf + 1, sizeof(*g));
	size_t *idx = malloc((nf + 1) * sizeof(*idx)), *t2 = malloc((nf + 1) * sizeof(*t2));
	uint8_t *m2 = calloc(nf + 1, 1);
	uint64_t pairs = 0;
	if (!g || !idx || !t2 || !m2)
		goto out;
	size_t k = 0;
	for (size_t j = 0; j < nf; j++) {
		if (t_of_f)
			t_of_f[j] = SIZE_MAX;
		if (!skip[j]) {
			g[k] = f[j];
			idx[k++] = j;
		}
	}
	pairs = eval_align_pairs(t, nt, g, k, m2, t2);
	for (size_t x = 0; x < k; x++) {
		if (matched_f)
			matched_f[idx[x]] = m2[x];
		if (t_of_f)
			t_of_f[idx[x]] = t2[x];
	}
out:
	free(g);
	free(idx);
	free(t2);
	free(m2);
	return pairs;
}

/* ---- loading ----------------------------------------------------------------- */

/* Method keys ("Lcls;name(sig)") interned to dense ids from 1. */
struct keys {
	char **v;
	size_t n, cap;
};

static uint32_t key_id(struct keys *k, const struct jpb_str *cls,
		       const struct jpb_str *name, const struct jpb_str *sig)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "%.*s%.*s%.*s", (int)cls->len, cls->ptr,
		 (int)name->len, name->ptr, (int)sig->len, sig->ptr);
	for (size_t i = 0; i < k->n; i++) /* few methods: linear is fine */
		if (!strcmp(k->v[i], buf))
			return (uint32_t)i + 1;
	if (k->n == k->cap) {
		size_t ncap = k->cap ? k->cap * 2 : 256;
		char **nv = realloc(k->v, ncap * sizeof(*nv));
		if (!nv)
			return 0;
		k->v = nv;
		k->cap = ncap;
	}
	if (!(k->v[k->n] = strdup(buf)))
		return 0;
	return (uint32_t)++k->n;
}

struct seq {
	uint32_t tid;
	uint32_t nstid;      /* truth only */
	uint64_t *v;
	uint8_t *recovered; /* flow: filled into a gap; truth: trace lost */
	uint64_t *ix;        /* truth: index in the thread's event sequence */
	uint8_t *unjudged;   /* flow: the event is unjudged (thread_counts) */
	size_t n, cap;
};

struct seqs {
	struct seq *v;
	size_t n;
};

static struct seq *seq_for(struct seqs *s, uint32_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].tid == tid)
			return &s->v[i];
	struct seq *nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	s->v = nv;
	memset(&nv[s->n], 0, sizeof(nv[0]));
	nv[s->n].tid = tid;
	return &nv[s->n++];
}

static int seq_add(struct seq *s, uint64_t v, int rec)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 4096;
		uint64_t *nv = realloc(s->v, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		s->v = nv;
		uint8_t *nr = realloc(s->recovered, ncap);
		if (!nr)
			return -1;
		s->recovered = nr;
		uint64_t *ni = realloc(s->ix, ncap * sizeof(*ni));
		if (!ni)
			return -1;
		s->ix = ni;
		s->cap = ncap;
	}
	s->ix[s->n] = 0;
	s->recovered[s->n] = (uint8_t)rec;
	s->v[s->n++] = v;
	return 0;
}

static void seqs_free(struct seqs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].v);
		free(s->v[i].recovered);
		free(s->v[i].ix);
		free(s->v[i].unjudged);
	}
	free(s->v);
}

struct idmap {
	uint32_t *v; /* stream id -> key id */
	size_t n;
};

static int idmap_set(struct idmap *m, uint32_t id, uint32_t key)
{
	if (id > (1u << 26))
		return -1;
	if (id >= m->n) {
		uint32_t *nv = realloc(m->v, (id + 1) * sizeof(*nv));
		if (!nv)
			return -1;
		memset(nv + m->n, 0, (id + 1 - m->n) * sizeof(*nv));
		m->v = nv;
		m->n = id + 1;
	}
	m->v[id] = key;
	return 0;
}

static uint64_t pack(const struct idmap *m, uint32_t id, int32_t bci)
{
	uint32_t key = id < m->n ? m->v[id] : 0;
	return key && bci >= 0 ? (uint64_t)key << 32 | (uint32_t)bci : 0;
}

/* Host tid of target tid NSTID from the thread records of the jvm and
 * sched streams (truth events may carry only the target's tid), or 0. */
static uint32_t host_tid(struct jpb_bundle *b, uint32_t nstid)
{
	static const char *const streams[] = { "jvm", "sched" };
	uint32_t tid = 0;
	for (int s = 0; s < 2 && !tid; s++) {
		struct jpb_reader *r;
		struct jpb_record rec;
		if (jpb_reader_open(b, streams[s], &r))
			continue;
		while (!tid && jpb_reader_next(r, &rec) == 0) {
			struct jpb_rec_thread t;
			if (rec.type == JPB_REC_THREAD &&
			    !jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &t) &&
			    t.nstid == nstid && t.tid)
				tid = t.tid;
		}
		jpb_reader_free(r);
	}
	return tid;
}

/* (key, bci) values of instructions JVMTI single-stepping cannot report:
 * the second of a pair HotSpot runs as one dispatch (jbc_fused_pair). */
struct vset {
	uint64_t *v;
	size_t n, cap;
};

static int vset_add(struct vset *s, uint64_t v)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		uint64_t *nv = realloc(s->v, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		s->v = nv;
		s->cap = ncap;
	}
	s->v[s->n++] = v;
	return 0;
}

static int u64cmp(const void *a, const void *b);

static int vset_has(const struct vset *s, uint64_t v)
{
	return s->n && bsearch(&v, s->v, s->n, sizeof(v), u64cmp) != NULL;
}

/* Add to S the keys of method KEY's second instructions of pairs HotSpot
 * may fuse, and to S1 those whose first is aload_0 (1 byte before; an
 * iload's is 2). */
static int add_fused(struct vset *s, struct vset *s1, uint32_t key,
		     const struct jpb_bytes *code)
{
	int prev_op = -1;
	for (size_t bci = 0; bci < code->len;) {
		int len = jbc_length(code->ptr, code->len, bci);
		if (len <= 0)
			break;
		uint8_t op = code->ptr[bci];
		int second = prev_op >= 0 && jbc_fused_pair((uint8_t)prev_op, op);
		if (second && vset_add(s, (uint64_t)key << 32 | bci))
			return -1;
		if (second && prev_op == 0x2a && vset_add(s1, (uint64_t)key << 32 | bci))
			return -1;
		prev_op = op;
		bci += (size_t)len;
	}
	return 0;
}

static int load_truth(struct jpb_bundle *b, struct keys *k, struct seqs *out,
		      struct vset *fused, struct vset *fused1, char *errmsg,
		      size_t size)
{
	struct jpb_reader *r;
	int err = jpb_reader_open(b, "truth", &r);
	if (err) {
		snprintf(errmsg, size, "eval: the bundle has no ground truth (stream truth): %s",
			 jpb_errstr(err));
		return err;
	}
	struct idmap ids = { 0 };
	struct jpb_record rec;
	uint32_t last_ns = 0, last_host = 0;
	while (!err && (err = jpb_reader_next(r, &rec)) == 0) {
		if (rec.type == JPB_REC_TRUTH_METHOD) {
			struct jpb_rec_truth_method m;
			if (jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					   rec.size, &m))
				continue;
			uint32_t key = key_id(k, &m.class_sig, &m.name, &m.signature);
			if (idmap_set(&ids, m.method_id, key) ||
			    add_fused(fused, fused1, key, &m.bytecode))
				err = jpb_err_nomem;
			continue;
		}
		struct jpb_rec_truth_events e;
		if (rec.type != JPB_REC_TRUTH_EVENTS ||
		    jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &e))
			continue;
		uint32_t tid = e.tid;
		if (e.nstid) {
			if (e.nstid != last_ns) {
				last_ns = e.nstid;
				last_host = host_tid(b, e.nstid);
			}
			tid = last_host ? last_host : tid ? tid : e.nstid;
		}
		struct seq *s = seq_for(out, tid);
		if (!s)
			err = jpb_err_nomem;
		else
			s->nstid = e.nstid;
		for (uint32_t o = 0; s && o + JPB_TRUTH_EVENT_SIZE <= e.events.len; o += JPB_TRUTH_EVENT_SIZE) {
			struct jpb_truth_event te;
			jpb_truth_event_get(e.events.ptr + o, &te);
			if (te.kind != JPB_TRUTH_BYTECODE)
				continue;
			if (seq_add(s, pack(&ids, te.method_id, te.bci), 0)) {
				err = jpb_err_nomem;
				break;
			}
			s->ix[s->n - 1] = e.seq + o / JPB_TRUTH_EVENT_SIZE;
		}
	}
	jpb_reader_free(r);
	free(ids.v);
	if (err == jpb_err_eos) {
		qsort(fused->v, fused->n, sizeof(*fused->v), u64cmp);
		qsort(fused1->v, fused1->n, sizeof(*fused1->v), u64cmp);
		return 0;
	}
	snprintf(errmsg, size, "eval: truth: %s", jpb_errstr(err));
	return err;
}

/* The simulator's record of which truth events fell into lost trace
 * (stream sim/lost: u32 tid, u32 nstid, u64 first, u64 count; indexes in
 * the thread's truth sequence).  Marks them; returns 1 if the stream
 * exists (the loss is then known exactly), 0 if not. */
static int load_sim_lost(struct jpb_bundle *b, struct seqs *t)
{
	struct jpb_reader *r;
	if (jpb_reader_open(b, "sim/lost", &r))
		return 0;
	struct jpb_record rec;
	while (jpb_reader_next(r, &rec) == 0) {
		if (rec.type != 0x04f1 || rec.size < 24)
			continue;
		uint32_t nstid = jpb_le32(rec.payload + 4);
		uint64_t first = jpb_le64(rec.payload + 8), count = jpb_le64(rec.payload + 16);
		for (size_t i = 0; i < t->n; i++) {
			struct seq *s = &t->v[i];
			if (s->nstid != nstid)
				continue;
			/* ix is increasing: binary search the range */
			size_t lo = 0, hi = s->n;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (s->ix[mid] < first)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < s->n && s->ix[lo] < first + count; lo++)
				s->recovered[lo] = 1;
		}
	}
	jpb_reader_free(r);
	return 1;
}

struct flow_into {
	struct seq *s;
	const struct idmap *ids;
};

static int add_flow_event(void *arg, const struct jpb_flow_event *fe)
{
	const struct flow_into *in = arg;
	int kind = fe->status == JPB_FLOW_RECOVERED ? 1 :
		   fe->status == JPB_FLOW_DECODED ? 2 : 0;
	return seq_add(in->s, pack(in->ids, fe->method, fe->bci), kind) ?
		       jpb_err_nomem : 0;
}

static int load_flow(struct jpb_bundle *b, struct keys *k, struct seqs *out,
		     char *errmsg, size_t size)
{
	const char *const *names;
	size_t count;
	struct idmap ids = { 0 };
	struct jpb_reader *r;
	int err = jpb_reader_open(b, "flow/methods", &r);
	if (err) {
		snprintf(errmsg, size, "eval: the bundle has no reconstructed flow "
			 "(flow/methods: %s); run jpbpf decode first", jpb_errstr(err));
		return err;
	}
	struct jpb_record rec;
	while (!err && (err = jpb_reader_next(r, &rec)) == 0) {
		struct jpb_rec_flow_method m;
		if (rec.type == JPB_REC_FLOW_METHOD &&
		    !jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &m) &&
		    idmap_set(&ids, m.index, key_id(k, &m.class_sig, &m.name, &m.signature)))
			err = jpb_err_nomem;
	}
	jpb_reader_free(r);
	err = err == jpb_err_eos ? 0 : err;
	if (!err)
		err = jpb_bundle_list_streams(b, &names, &count);
	char **tn = err ? NULL : calloc(count + 1, sizeof(*tn));
	size_t nt = 0;
	int msg_set = 0;
	for (size_t i = 0; tn && i < count; i++)
		if (!strncmp(names[i], "flow/tid", 8))
			tn[nt++] = strdup(names[i]);
	for (size_t i = 0; tn && i < nt && !err; i++) {
		struct seq *s = seq_for(out, (uint32_t)strtoul(tn[i] + 8, NULL, 10));
		if (!s || (err = jpb_reader_open(b, tn[i], &r)))
			break;
		struct flow_into in = { s, &ids };
		char msg[256] = "";
		while (!err && (err = jpb_reader_next(r, &rec)) == 0)
			err = jpb_flow_events_each_msg(&rec, add_flow_event, &in,
						       msg, sizeof(msg));
		jpb_reader_free(r);
		err = err == jpb_err_eos ? 0 : err;
		if (err && msg[0]) {
			snprintf(errmsg, size, "eval: %s: %s", tn[i], msg);
			msg_set = 1;
		}
	}
	for (size_t i = 0; tn && i < nt; i++)
		free(tn[i]);
	free(tn);
	free(ids.v);
	if (err && !msg_set)
		snprintf(errmsg, size, "eval: flow: %s", jpb_errstr(err));
	return err;
}

/* ---- metrics ---------------------------------------------------------------- */

static int u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Known F events whose value T holds, each T element used once. */
static uint64_t multiset_overlap(const struct seq *t, const struct seq *f)
{
	uint64_t *a = malloc((t->n + 1) * sizeof(*a)), *b = malloc((f->n + 1) * sizeof(*b));
	uint64_t n = 0;
	size_t nb = 0;
	if (a && b) {
		memcpy(a, t->v, t->n * sizeof(*a));
		for (size_t i = 0; i < f->n; i++)
			if (f->v[i] && f->recovered[i] != 1)
				b[nb++] = f->v[i];
		qsort(a, t->n, sizeof(*a), u64cmp);
		qsort(b, nb, sizeof(*b), u64cmp);
		for (size_t i = 0, j = 0; i < t->n && j < nb;) {
			if (a[i] == b[j]) {
				n++;
				i++;
				j++;
			} else if (a[i] < b[j]) {
				i++;
			} else {
				j++;
			}
		}
	}
	free(a);
	free(b);
	return n;
}

/* Method keys ranked by count, top 10 into TOP (0-padded). */
static void top10(const uint64_t *cnt, size_t n, uint32_t *top)
{
	for (int k = 0; k < 10; k++) {
		uint32_t best = 0;
		for (size_t i = 1; i < n; i++) {
			int taken = 0;
			for (int q = 0; q < k; q++)
				taken |= top[q] == i;
			if (!taken && cnt[i] && (!best || cnt[i] > cnt[best]))
				best = (uint32_t)i;
		}
		top[k] = best;
	}
}

static int hot10(const struct seq *t, size_t nt, const struct seq *f, size_t nf,
		 size_t nkeys)
{
	uint64_t *ct = calloc(nkeys + 1, sizeof(*ct)), *cf = calloc(nkeys + 1, sizeof(*cf));
	int n = 0;
	if (ct && cf) {
		for (size_t s = 0; s < nt; s++)
			for (size_t i = 0; i < t[s].n; i++)
				ct[t[s].v[i] >> 32]++;
		/* unjudged events are ones the truth could not have reported:
		 * counting them would rank a method by what JVMTI hides */
		for (size_t s = 0; s < nf; s++)
			for (size_t i = 0; i < f[s].n; i++)
				cf[f[s].v[i] >> 32] += !(f[s].unjudged && f[s].unjudged[i]);
		ct[0] = cf[0] = 0;
		uint32_t a[10], b[10];
		top10(ct, nkeys + 1, a);
		top10(cf, nkeys + 1, b);
		for (int i = 0; i < 10; i++)
			for (int j = 0; j < 10 && a[i]; j++)
				n += a[i] == b[j];
	}
	free(ct);
	free(cf);
	return n;
}

static double frac(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static void fractions(struct eval_counts *c)
{
	if (c->lost_known) {
		c->PMD = frac(c->missing, c->truth);
		c->PDC = c->truth ? 1.0 - c->PMD : 0.0;
	} else {
		c->PDC = c->truth ? (c->trace >= c->truth ? 1.0 : frac(c->trace, c->truth)) : 0.0;
		c->PMD = c->truth ? 1.0 - c->PDC : 0.0;
		c->missing = c->truth > c->trace ? c->truth - c->trace : 0;
	}
	c->PD = frac(c->known + c->unjudged, c->trace);
	c->DA = frac(c->matched, c->known);
	uint64_t missing = c->missing;
	c->PR = missing ? (c->recovered >= missing ? 1.0 : frac(c->recovered, missing)) : 0.0;
	c->RA = frac(c->rec_matched, c->recovered);
	c->attribution = c->on_thread >= c->known ? (c->known ? 1.0 : 0.0) :
						     frac(c->on_thread, c->known);
}

/* JPBPF_EVAL_DUMP=FILE (debugging recovery): per run of recovered events,
 * a line with the thread, the run's flow index and length, its aligned
 * events and the lost truth it was judged against. */
static void dump_run(uint32_t tid, size_t at, size_t n, const uint8_t *m,
		     size_t ns, size_t t0)
{
	const char *path = getenv("JPBPF_EVAL_DUMP");
	FILE *o = path ? fopen(path, "a") : NULL;
	if (!o)
		return;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += m[i] != 0;
	fprintf(o, "run tid %u at %zu len %zu aligned %zu lost %zu tix %lld\n", tid, at, n,
		k, ns, t0 == SIZE_MAX ? -1LL : (long long)t0);
	fclose(o);
}

/* Recovered events gap by gap: each run of recovered F events aligns with
 * the lost truth after the truth event its last aligned observed (or
 * recovered) predecessor matched and before the one its next aligned
 * observed successor matched.  TIX maps captured-truth indexes to T's;
 * TOF gives each observed F event's captured-truth partner.  MR gets the
 * recovered events' matches, in order. */
static void align_gaps(const struct seq *t, const struct seq *f,
		       const size_t *tix, const size_t *tof, uint8_t *mr)
{
	size_t *next = malloc((f->n + 1) * sizeof(*next));
	uint64_t *seg = malloc((t->n + 1) * sizeof(*seg));
	size_t *segix = malloc((t->n + 1) * sizeof(*segix));
	size_t *tp = malloc((f->n + 1) * sizeof(*tp));
	if (!next || !seg || !segix || !tp)
		goto out;
	/* next[i]: T index of the first aligned observed event from i on */
	size_t nobs = 0;
	for (size_t i = 0; i < f->n; i++)
		nobs += f->recovered[i] != 1;
	next[f->n] = t->n;
	for (size_t i = f->n, jo = nobs; i-- > 0;) {
		next[i] = next[i + 1];
		if (f->recovered[i] != 1 && tof[--jo] != SIZE_MAX)
			next[i] = tix[tof[jo]];
	}
	size_t lo = 0, jo = 0, jr = 0;
	for (size_t i = 0; i < f->n;) {
		if (f->recovered[i] != 1) {
			if (tof[jo] != SIZE_MAX && tix[tof[jo]] + 1 > lo)
				lo = tix[tof[jo]] + 1;
			jo++;
			i++;
			continue;
		}
		size_t j = i, ns = 0;
		while (j < f->n && f->recovered[j] == 1)
			j++;
		for (size_t x = lo; x < next[j] && x < t->n; x++)
			if (t->recovered[x]) {
				seg[ns] = t->v[x];
				segix[ns++] = x;
			}
		/* None between: the neighbours' alignment is off by a few
		 * events (the decoder's gap began before the simulator's
		 * loss, and the flow after the gap repeats the truth there);
		 * the lost run starting within NEAR events of the successor */
		size_t x = lo;
		while (!ns && x < t->n && !t->recovered[x] && x < next[j] + NEAR)
			x++;
		for (int none = !ns; none && x < t->n && t->recovered[x]; x++) {
			seg[ns] = t->v[x];
			segix[ns++] = x;
		}
		eval_align_pairs(seg, ns, f->v + i, j - i, mr + jr, tp);
		dump_run(t->tid, i, j - i, mr + jr, ns, ns ? segix[0] : SIZE_MAX);
		for (size_t k = 0; k < j - i; k++)
			if (tp[k] != SIZE_MAX && segix[tp[k]] + 1 > lo)
				lo = segix[tp[k]] + 1;
		jr += j - i;
		i = j;
	}
out:
	free(next);
	free(seg);
	free(segix);
	free(tp);
}

/* JPBPF_EVAL_SEQ=DIR: the thread's truth (DIR/TID.t: key, lost) and flow
 * (DIR/TID.f: key, kind, aligned, unjudged, the index in TID.t of an
 * aligned observed event's partner or -1), for offline study of the fills
 * and of the misplaced events. */
static void dump_seqs(const struct seq *t, const struct seq *f, const uint8_t *m,
		      const uint8_t *unj, const size_t *partner)
{
	const char *dir = getenv("JPBPF_EVAL_SEQ");
	char path[4096];
	FILE *o;
	if (!dir || !t->n)
		return;
	snprintf(path, sizeof(path), "%s/%u.t", dir, t->tid);
	if ((o = fopen(path, "w"))) {
		for (size_t i = 0; i < t->n; i++)
			fprintf(o, "%llx %u\n", (unsigned long long)t->v[i], t->recovered[i]);
		fclose(o);
	}
	snprintf(path, sizeof(path), "%s/%u.f", dir, t->tid);
	if ((o = fopen(path, "w"))) {
		for (size_t i = 0; i < f->n; i++)
			fprintf(o, "%llx %u %u %u %lld\n", (unsigned long long)f->v[i],
				f->recovered[i], m ? m[i] : 0, unj ? unj[i] : 0,
				partner && partner[i] != SIZE_MAX ? (long long)partner[i] : -1LL);
		fclose(o);
	}
}

size_t eval_repeats(const uint64_t *f, const uint8_t *matched_f, size_t n,
		    uint8_t *repeat)
{
	size_t cnt = 0;
	int run_aligned = 0; /* the run of equal events so far began aligned */
	for (size_t i = 0; i < n; i++) {
		int same = i > 0 && f[i] && f[i] == f[i - 1];
		repeat[i] = same && run_aligned && !matched_f[i];
		cnt += repeat[i];
		if (!same)
			run_aligned = matched_f[i] != 0;
	}
	return cnt;
}

static size_t count_of(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t c = 0;
	while (lo + c < n && v[lo + c] == x)
		c++;
	return c;
}

/* Into ALWAYS, the pairs of FUSED (FUSED1: those after aload_0) that the
 * truth's interpreter fused: their second instruction's key holds under
 * half the first's events (it runs alone only before the rewrite or when
 * jumped to).  aload_0+getfield is fused only for int, reference and
 * float fields (String.coder's byte getfield is not), which the
 * bytecode alone does not tell. */
static int fused_in_truth(const struct seqs *t, const struct vset *fused,
			  const struct vset *fused1, struct vset *always)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += t->v[i].n;
	uint64_t *all = malloc((n + 1) * sizeof(*all));
	if (!all)
		return jpb_err_nomem;
	n = 0;
	for (size_t i = 0; i < t->n; i++)
		for (size_t j = 0; j < t->v[i].n; j++)
			all[n++] = t->v[i].v[j];
	qsort(all, n, sizeof(*all), u64cmp);
	int err = 0;
	for (size_t i = 0; !err && i < fused->n; i++) {
		uint64_t k = fused->v[i], first = k - (vset_has(fused1, k) ? 1 : 2);
		size_t c1 = count_of(all, n, first);
		if (c1 && 2 * count_of(all, n, k) < c1 && vset_add(always, k))
			err = jpb_err_nomem;
	}
	free(all);
	return err; /* ALWAYS stays sorted: FUSED is */
}

/* Whether flow event I is a compiled-code event at the second instruction
 * of a pair the truth's interpreter fused (ALWAYS: fused_in_truth), right
 * after its first (same method, the bci 1 or 2 bytes before: aload_0,
 * iload): compiled code runs it as a bytecode of its own, the rewritten
 * interpreter in the first's dispatch, posting no step for it.
 * (Interpreted flow events there are kept: the reconstruction emits them
 * only where the interpreter dispatched them alone.) */
static int fused_after_first(const struct seq *f, const struct vset *always, size_t i)
{
	const uint64_t *v = f->v;
	return i > 0 && f->recovered[i] == 2 && v[i] && vset_has(always, v[i]) &&
	       (v[i - 1] == v[i] - 1 || v[i - 1] == v[i] - 2);
}

/* The counts of thread T (truth) and F (flow; either may be NULL).  UNJ
 * (F's length, may be NULL) gets 1 for each unjudged F event. */
static void thread_counts(const struct seq *t, const struct seq *f,
			  const struct vset *fused, const struct vset *always,
			  int lost_known,
			  struct eval_counts *c, uint8_t *unj)
{
	static const struct seq none = { 0 };
	if (!t)
		t = &none;
	if (!f)
		f = &none;
	c->truth = t->n;
	/* With the loss known, observed events align with the captured truth
	 * and recovered ones with the lost truth; else both with all of it. */
	uint64_t *tc = malloc((t->n + 1) * sizeof(*tc)), *tl = malloc((t->n + 1) * sizeof(*tl));
	uint64_t *fo = malloc((f->n + 1) * sizeof(*fo)), *fr = malloc((f->n + 1) * sizeof(*fr));
	uint8_t *m = calloc(f->n + 1, 1), *mo = calloc(f->n + 1, 1), *mr = calloc(f->n + 1, 1);
	uint8_t *skip = malloc(f->n + 1);
	size_t ntc = 0, ntl = 0, nfo = 0, nfr = 0;
	for (size_t i = 0; tc && tl && i < t->n; i++) {
		if (t->recovered[i] && lost_known)
			tl[ntl++] = t->v[i];
		else
			tc[ntc++] = t->v[i];
		c->missing += t->recovered[i] && lost_known;
	}
	for (size_t i = 0; fo && fr && i < f->n; i++) {
		if (f->recovered[i] == 1)
			fr[nfr++] = f->v[i];
		else
			fo[nfo++] = f->v[i];
	}
	size_t *tix = malloc((t->n + 1) * sizeof(*tix)), *tof = malloc((f->n + 1) * sizeof(*tof));
	/* debugging only: each flow event's truth partner for dump_seqs */
	size_t *partner = getenv("JPBPF_EVAL_SEQ") ? malloc((f->n + 1) * sizeof(*partner)) : NULL;
	if (tc && tl && fo && fr && m && mo && mr && skip && tix && tof) {
		for (size_t i = 0, k = 0; i < t->n; i++)
			if (!(t->recovered[i] && lost_known))
				tix[k++] = i;
		/* compiled fused second instructions: never in the truth,
		 * and inside the alignment they broke the agreement runs in
		 * dense compiled code (fused_after_first) */
		for (size_t i = 0, jo = 0; i < f->n; i++)
			if (f->recovered[i] != 1)
				skip[jo++] = fused_after_first(f, always, i);
		eval_align_skip(tc, ntc, fo, nfo, skip, mo, tof);
		for (size_t i = 0, jo = 0; partner && i < f->n; i++) {
			int obs = f->recovered[i] != 1;
			partner[i] = obs && mo[jo] ? tix[tof[jo]] : SIZE_MAX;
			jo += obs;
		}
		if (lost_known)
			align_gaps(t, f, tix, tof, mr);
		else
			eval_align(t->v, t->n, fr, nfr, mr);
		for (size_t i = 0, jo = 0, jr = 0; i < f->n; i++)
			m[i] = f->recovered[i] == 1 ? mr[jr++] : mo[jo++];
	}
	free(skip);
	free(tix);
	free(tof);
	free(tc);
	free(tl);
	free(fo);
	free(fr);
	free(mo);
	free(mr);
	uint8_t *rep = m ? calloc(f->n + 1, 1) : NULL;
	if (rep)
		eval_repeats(f->v, m, f->n, rep);
	for (size_t i = 0; i < f->n; i++) {
		if (f->recovered[i] == 1) {
			c->recovered++;
			c->rec_matched += m && m[i];
			continue;
		}
		c->trace++;
		if (rep && rep[i]) {
			c->unjudged++;
			c->unjudged_repeats++;
			if (unj)
				unj[i] = 1;
			continue;
		}
		if (!(m && m[i]) && f->v[i] && vset_has(fused, f->v[i])) {
			c->unjudged++;
			if (unj)
				unj[i] = 1;
			continue;
		}
		c->known += f->v[i] != 0;
		c->matched += m && m[i];
		if (f->recovered[i] == 2) {
			c->compiled_known += f->v[i] != 0;
			c->compiled_matched += m && m[i];
		}
	}
	dump_seqs(t, f, m, unj, partner);
	free(partner);
	free(m);
	free(rep);
	c->on_thread = multiset_overlap(t, f);
}

int eval_bundle(struct jpb_bundle *b, struct eval_result **out, char *errmsg,
		size_t size)
{
	struct keys k = { 0 };
	struct seqs t = { 0 }, f = { 0 };
	struct vset fused = { 0 }, fused1 = { 0 }, always = { 0 };
	*out = NULL;
	int err = load_truth(b, &k, &t, &fused, &fused1, errmsg, size);
	if (!err && (err = fused_in_truth(&t, &fused, &fused1, &always)))
		snprintf(errmsg, size, "eval: %s", jpb_errstr(err));
	int lost_known = !err && load_sim_lost(b, &t);
	if (!err)
		err = load_flow(b, &k, &f, errmsg, size);
	struct eval_result *r = err ? NULL : calloc(1, sizeof(*r));
	if (!err && !r)
		err = jpb_err_nomem;
	/* Threads: every truth thread, then flow-only threads. */
	size_t cap = t.n + f.n;
	if (r && !(r->threads = calloc(cap + 1, sizeof(*r->threads))))
		err = jpb_err_nomem;
	for (size_t i = 0; !err && i < t.n + f.n; i++) {
		const struct seq *ts = i < t.n ? &t.v[i] : NULL;
		struct seq *fs = NULL;
		uint32_t tid = i < t.n ? t.v[i].tid : f.v[i - t.n].tid;
		for (size_t j = 0; j < f.n; j++)
			if (f.v[j].tid == tid)
				fs = &f.v[j];
		if (!ts) { /* a flow thread the truth lacks, unless already done */
			int seen = 0;
			for (size_t j = 0; j < t.n; j++)
				seen |= t.v[j].tid == tid;
			if (seen)
				continue;
		}
		struct eval_counts *c = &r->threads[r->nthreads++];
		c->tid = tid;
		if (fs && !fs->unjudged && !(fs->unjudged = calloc(fs->n + 1, 1))) {
			err = jpb_err_nomem;
			break;
		}
		thread_counts(ts, fs, &fused, &always, lost_known, c,
			      fs ? fs->unjudged : NULL);
		c->hot10 = hot10(ts, ts ? 1 : 0, fs, fs ? 1 : 0, k.n);
		fractions(c);
		struct eval_counts *o = &r->overall;
		o->truth += c->truth;
		o->trace += c->trace;
		o->known += c->known;
		o->matched += c->matched;
		o->recovered += c->recovered;
		o->rec_matched += c->rec_matched;
		o->on_thread += c->on_thread;
		o->unjudged += c->unjudged;
		o->unjudged_repeats += c->unjudged_repeats;
		o->missing += c->missing;
		o->compiled_known += c->compiled_known;
		o->compiled_matched += c->compiled_matched;
		o->lost_known = c->lost_known = lost_known;
	}
	const char *dir = getenv("JPBPF_EVAL_SEQ");
	char path[4096];
	snprintf(path, sizeof(path), "%s/keys", dir ? dir : ".");
	FILE *o = dir ? fopen(path, "w") : NULL;
	for (size_t i = 0; o && i < k.n; i++)
		fprintf(o, "%zx %s\n", i + 1, k.v[i]);
	if (o)
		fclose(o);
	if (r && !err) {
		r->overall.lost_known = lost_known;
		r->overall.hot10 = hot10(t.v, t.n, f.v, f.n, k.n);
		fractions(&r->overall);
		*out = r;
	} else {
		eval_result_free(r);
	}
	seqs_free(&t);
	seqs_free(&f);
	free(fused.v);
	free(fused1.v);
	free(always.v);
	for (size_t i = 0; i < k.n; i++)
		free(k.v[i]);
	free(k.v);
	return err;
}

void eval_result_free(struct eval_result *r)
{
	if (!r)
		return;
	free(r->threads);
	free(r);
}

static json_t *counts_json(const struct eval_counts *c, int with_tid)
{
	json_t *o = json_object();
	if (with_tid)
		json_object_set_new(o, "tid", json_integer(c->tid));
	json_object_set_new(o, "PMD", json_real(c->PMD));
	json_object_set_new(o, "PR", json_real(c->PR));
	json_object_set_new(o, "RA", json_real(c->RA));
	json_object_set_new(o, "PDC", json_real(c->PDC));
	json_object_set_new(o, "PD", json_real(c->PD));
	json_object_set_new(o, "DA", json_real(c->DA));
	json_object_set_new(o, "hot10", json_integer(c->hot10));
	json_object_set_new(o, "attribution", json_real(c->attribution));
	json_object_set_new(o, "truth_events", json_integer((json_int_t)c->truth));
	json_object_set_new(o, "observed", json_integer((json_int_t)c->trace));
	json_object_set_new(o, "known", json_integer((json_int_t)c->known));
	json_object_set_new(o, "aligned", json_integer((json_int_t)c->matched));
	json_object_set_new(o, "recovered", json_integer((json_int_t)c->recovered));
	json_object_set_new(o, "recovered_aligned", json_integer((json_int_t)c->rec_matched));
	json_object_set_new(o, "unjudged", json_integer((json_int_t)c->unjudged));
	json_object_set_new(o, "unjudged_repeats",
			    json_integer((json_int_t)c->unjudged_repeats));
	/* DA split: compiled-code events (the decoder's pc maps) and
	 * interpreted ones (the reconstruction's placement) */
	json_object_set_new(o, "DA_compiled", json_real(frac(c->compiled_matched, c->compiled_known)));
	json_object_set_new(o, "DA_interpreted",
			    json_real(frac(c->matched - c->compiled_matched,
					   c->known - c->compiled_known)));
	return o;
}

json_t *eval_json(const struct eval_result *r)
{
	json_t *o = json_object(), *th = json_array();
	json_object_set_new(o, "overall", counts_json(&r->overall, 0));
	for (size_t i = 0; i < r->nthreads; i++)
		json_array_append_new(th, counts_json(&r->threads[i], 1));
	json_object_set_new(o, "threads", th);
	return o;
}
