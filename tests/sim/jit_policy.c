// SPDX-License-Identifier: MIT
#include "jit_policy.h"

#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"
#include "util.h"

struct mstate {
	uint64_t inv, be;
	struct nmethod *nm;
	uint32_t compiles;
	int never; /* unparsable or too many recompiles */
};

/* Profile of one (method, bci): an open-addressing table entry. */
struct prof {
	uint64_t key; /* (mid << 16 | bci) + 1; 0 = empty */
	uint64_t taken, not_taken;
	uint32_t callee;
	int poly;
};

struct jit {
	struct jit_opts o;
	const struct truth *t;
	struct mstate *ms;
	struct prof *pt;
	size_t pcap, pn;
	struct nmethod **nms;
	size_t nnms, cnms;
	uint64_t cache_top;
	uint64_t seq; /* loads and frees, in the order they happen */
	uint64_t reuses;
	struct jit_env env;
	struct nmethod *last; /* jit_find's cache */
	/* freed ranges: start, size, freed_ns */
	uint64_t (*fr)[3];
	size_t nfr, cfr;
};

struct jit *jit_new(const struct jit_opts *o, const struct truth *t,
		    const struct jit_env *env)
{
	struct jit *j = xcalloc(1, sizeof(*j));
	j->o = *o;
	j->env = *env;
	if (!j->o.code_cache || j->o.code_cache > CG_CACHE_SIZE)
		j->o.code_cache = CG_CACHE_SIZE;
	j->t = t;
	j->ms = xcalloc(t->nmethods, sizeof(*j->ms));
	j->pcap = 1024;
	j->pt = xcalloc(j->pcap, sizeof(*j->pt));
	j->cache_top = CG_CACHE_BASE;
	return j;
}

void jit_free(struct jit *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nnms; i++) {
		nmethod_fini(j->nms[i]);
		free(j->nms[i]);
	}
	free(j->nms);
	free(j->fr);
	free(j->ms);
	free(j->pt);
	free(j);
}

static uint64_t hkey(uint32_t mid, uint16_t bci)
{
	return (((uint64_t)mid << 16) | bci) + 1;
}

static struct prof *prof_find(struct jit *j, uint64_t key, int create)
{
	size_t mask = j->pcap - 1;
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & mask;
	while (j->pt[i].key && j->pt[i].key != key)
		i = (i + 1) & mask;
	if (j->pt[i].key || !create)
		return j->pt[i].key ? &j->pt[i] : NULL;
	if (2 * (j->pn + 1) > j->pcap) {
		struct prof *old = j->pt;
		size_t ocap = j->pcap;
		j->pcap *= 2;
		j->pt = xcalloc(j->pcap, sizeof(*j->pt));
		j->pn = 0;
		for (size_t k = 0; k < ocap; k++)
			if (old[k].key)
				*prof_find(j, old[k].key, 1) = old[k];
		free(old);
		return prof_find(j, key, 1);
	}
	j->pt[i].key = key;
	j->pn++;
	return &j->pt[i];
}

static void view_branch(void *ctx, uint32_t m, uint16_t bci, uint64_t *tk,
			uint64_t *nt)
{
	struct prof *p = prof_find(ctx, hkey(m, bci), 0);
	*tk = p ? p->taken : 0;
	*nt = p ? p->not_taken : 0;
}

static uint32_t view_callee(void *ctx, uint32_t m, uint16_t bci)
{
	struct prof *p = prof_find(ctx, hkey(m, bci), 0);
	return p && !p->poly ? p->callee : 0;
}

static int parsable(const struct sim_method *m)
{
	for (uint32_t bci = 0; bci < m->code_len;) {
		int n = jbc_length(m->code, m->code_len, bci);
		if (n <= 0)
			return 0;
		bci += (uint32_t)n;
	}
	return m->code_len > 0;
}

static void add_free(struct jit *j, uint64_t start, uint64_t size, uint64_t now)
{
	GROW(j->fr, j->nfr, j->cfr);
	j->fr[j->nfr][0] = start;
	j->fr[j->nfr][1] = size;
	j->fr[j->nfr][2] = now;
	j->nfr++;
}

static uint64_t nm_size(const struct nmethod *nm)
{
	return (nm->r.bytes.len + 63) & ~63ull; /* 64-byte aligned */
}

void jit_sweep(struct jit *j, uint64_t now)
{
	for (size_t i = 0; i < j->nnms; i++) {
		struct nmethod *nm = j->nms[i];
		if (nm->entrant || nm->freed || j->env.active(j->env.ctx, nm))
			continue;
		nm->freed = 1;
		nm->r.live = 0;
		nm->unload_ns = now;
		nm->unload_seq = ++j->seq;
		if (j->last == nm)
			j->last = NULL;
		add_free(j, nm->r.base, nm_size(nm), now);
	}
}

/* First fit among freed ranges the decoder can tell apart by time, else
 * the top of the cache; 0 if neither has room. */
static uint64_t alloc_code(struct jit *j, uint64_t size)
{
	for (size_t i = 0; i < j->nfr; i++) {
		if (j->fr[i][1] < size || !j->env.reusable(j->env.ctx, j->fr[i][2]))
			continue;
		uint64_t at = j->fr[i][0];
		j->reuses++;
		j->fr[i][0] += size;
		j->fr[i][1] -= size;
		if (!j->fr[i][1])
			j->fr[i][0] = j->fr[i][1] = 0, j->fr[i][2] = UINT64_MAX;
		return at;
	}
	if (j->cache_top + size <= CG_CACHE_BASE + j->o.code_cache) {
		uint64_t at = j->cache_top;
		j->cache_top += size;
		return at;
	}
	return 0;
}

/* The cache is full: make the oldest half of the entrant code not
 * entrant (HotSpot's code cache flushing), then free what nobody runs. */
static void flush(struct jit *j, uint64_t now)
{
	size_t entrant = 0, done = 0;
	for (size_t i = 0; i < j->nnms; i++)
		entrant += j->nms[i]->entrant;
	for (size_t i = 0; i < j->nnms && done < (entrant + 1) / 2; i++) {
		struct nmethod *nm = j->nms[i];
		if (!nm->entrant)
			continue;
		nm->entrant = 0;
		struct mstate *s = &j->ms[nm->method_id];
		if (s->nm == nm)
			s->nm = NULL;
		s->inv = s->be = 0;
		done++;
	}
	jit_sweep(j, now);
}

static void compile(struct jit *j, uint32_t mid, uint64_t now)
{
	const struct sim_method *m = truth_method(j->t, mid);
	struct mstate *s = &j->ms[mid];
	if (!m || s->never || !parsable(m) || s->compiles > j->o.max_recompiles) {
		s->never = 1;
		return;
	}
	struct jit_profile_view pv = { j, view_branch, view_callee,
				       j->o.max_inline_size, j->o.max_inline_depth };
	struct nmethod *nm = xcalloc(1, sizeof(*nm));
	/* the size does not depend on the address: measure, place, emit */
	nmethod_compile(nm, j->t, m, CG_CACHE_BASE, &pv);
	uint64_t size = nm_size(nm);
	nmethod_fini(nm);
	jit_sweep(j, now);
	uint64_t at = alloc_code(j, size);
	if (!at) {
		flush(j, now);
		at = alloc_code(j, size);
	}
	if (!at) { /* no room yet: try again after more invocations */
		free(nm);
		s->inv = s->be = 0;
		return;
	}
	nmethod_compile(nm, j->t, m, at, &pv);
	nm->id = (uint32_t)j->nnms + 1;
	nm->load_ns = now;
	nm->load_seq = ++j->seq;
	nm->level = ++s->compiles;
	GROW(j->nms, j->nnms, j->cnms);
	j->nms[j->nnms++] = nm;
	s->nm = nm;
}

struct nmethod *jit_find(struct jit *j, uint64_t ip)
{
	struct nmethod *nm = j->last;
	if (nm && ip >= nm->r.base && ip < nm->r.base + nm->r.bytes.len)
		return nm;
	for (size_t i = j->nnms; i-- > 0;) {
		nm = j->nms[i];
		if (!nm->freed && ip >= nm->r.base &&
		    ip < nm->r.base + nm->r.bytes.len)
			return j->last = nm;
	}
	return NULL;
}

int jit_on_invoke(struct jit *j, uint32_t mid, uint64_t now)
{
	if (!j->o.enabled || mid >= j->t->nmethods)
		return 0;
	struct mstate *s = &j->ms[mid];
	s->inv++;
	if (s->nm || s->never || s->inv < j->o.invoke_threshold)
		return 0;
	compile(j, mid, now);
	return 1;
}

struct nmethod *jit_on_branch(struct jit *j, uint32_t mid, uint16_t bci,
			      int taken, int backward, uint64_t now)
{
	struct prof *p = prof_find(j, hkey(mid, bci), 1);
	if (taken)
		p->taken++;
	else
		p->not_taken++;
	if (!j->o.enabled || !taken || !backward || mid >= j->t->nmethods)
		return NULL;
	struct mstate *s = &j->ms[mid];
	if (++s->be < j->o.backedge_threshold || s->nm || s->never)
		return NULL;
	compile(j, mid, now); /* without OSR: used from the next call on */
	return j->o.osr && s->nm && s->nm->entrant ? s->nm : NULL;
}

void jit_on_call(struct jit *j, uint32_t mid, uint16_t bci, uint32_t callee)
{
	struct prof *p = prof_find(j, hkey(mid, bci), 1);
	if (!p->callee)
		p->callee = callee;
	else if (p->callee != callee)
		p->poly = 1;
}

struct nmethod *jit_code(struct jit *j, uint32_t mid)
{
	if (mid >= j->t->nmethods)
		return NULL;
	struct nmethod *nm = j->ms[mid].nm;
	return nm && nm->entrant ? nm : NULL;
}

void jit_deopt(struct jit *j, struct nmethod *nm, uint64_t now)
{
	if (!nm->entrant)
		return;
	nm->entrant = 0;
	(void)now;
	struct mstate *s = &j->ms[nm->method_id];
	if (s->nm == nm)
		s->nm = NULL;
	s->inv = 0;
	s->be = 0;
}

uint64_t jit_reuses(const struct jit *j)
{
	return j->reuses;
}

struct nmethod *const *jit_nmethods(const struct jit *j, size_t *n)
{
	*n = j->nnms;
	return j->nms;
}
