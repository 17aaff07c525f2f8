// SPDX-License-Identifier: MIT
/* The calling-context tree and its metrics, built from walker events. */
#include "export/calls/cct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "export/calls/source.h"

struct cct {
	struct cct_node *n;
	size_t count, cap;
	uint32_t *last_child; /* by node: to append siblings in order */
	size_t cap_last;
	uint32_t *hash;       /* open addressing: node ids, 0 = empty */
	size_t hcap;          /* a power of two */
	int fold;
	const struct calls_src *src;
	struct cct_totals tot;
	uint32_t pend_node;   /* the previous event's context, 0: none */
	uint64_t pend_ns;     /* and its time */
	int pend;
};

static uint64_t key_hash(uint32_t parent, uint32_t method, int32_t site)
{
	uint64_t h = parent * 0x9e3779b97f4a7c15ull;
	h ^= (method + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= ((uint32_t)site + 0x94d049bb133111ebull) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static int rehash(struct cct *c)
{
	size_t cap = c->hcap ? c->hcap * 2 : 1024;
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return jpb_err_nomem;
	for (size_t id = 1; id < c->count; id++) {
		const struct cct_node *x = &c->n[id];
		size_t i = key_hash(x->parent, x->method, x->callsite) & (cap - 1);
		while (h[i])
			i = (i + 1) & (cap - 1);
		h[i] = (uint32_t)id;
	}
	free(c->hash);
	c->hash = h;
	c->hcap = cap;
	return 0;
}

int cct_alloc(struct cct **out, int fold, const struct calls_src *s)
{
	struct cct *c = calloc(1, sizeof(*c));
	*out = NULL;
	if (!c || JPB_GROW(c->n, 0, c->cap) || rehash(c)) {
		cct_free(c);
		return jpb_err_nomem;
	}
	memset(&c->n[0], 0, sizeof(c->n[0]));
	c->n[0].callsite = -1;
	c->count = 1;
	c->fold = fold;
	c->src = s;
	*out = c;
	return 0;
}

void cct_free(struct cct *c)
{
	if (!c)
		return;
	free(c->n);
	free(c->last_child);
	free(c->hash);
	free(c);
}

static int add_node(struct cct *c, uint32_t parent, uint32_t method,
		    int32_t site, uint32_t *id)
{
	if (c->count >= UINT32_MAX || JPB_GROW(c->n, c->count, c->cap) ||
	    JPB_GROW(c->last_child, c->count, c->cap_last))
		return jpb_err_nomem;
	if ((c->count + 1) * 2 > c->hcap && rehash(c))
		return jpb_err_nomem;
	uint32_t x = (uint32_t)c->count++;
	c->n[x] = (struct cct_node){ .parent = parent, .method = method,
				     .callsite = site,
				     .depth = c->n[parent].depth + 1 };
	c->last_child[x] = 0;
	if (c->n[parent].first_child)
		c->n[c->last_child[parent]].next_sibling = x;
	else
		c->n[parent].first_child = x;
	c->last_child[parent] = x;
	size_t i = key_hash(parent, method, site) & (c->hcap - 1);
	while (c->hash[i])
		i = (i + 1) & (c->hcap - 1);
	c->hash[i] = x;
	*id = x;
	return 0;
}

/* The child of PARENT for (METHOD, SITE), made if new; with folding, an
 * ancestor (or PARENT itself) of METHOD instead. */
static int enter(struct cct *c, uint32_t parent, uint32_t method, int32_t site,
		 uint32_t *id)
{
	if (c->fold)
		for (uint32_t a = parent; a; a = c->n[a].parent)
			if (c->n[a].method == method) {
				*id = a;
				return 0;
			}
	size_t i = key_hash(parent, method, site) & (c->hcap - 1);
	for (; c->hash[i]; i = (i + 1) & (c->hcap - 1)) {
		const struct cct_node *x = &c->n[c->hash[i]];
		if (x->parent == parent && x->method == method && x->callsite == site) {
			*id = c->hash[i];
			return 0;
		}
	}
	return add_node(c, parent, method, site, id);
}

/* The previous event's time runs until this one's. */
static void account_time(struct cct *c, const struct jpb_flow_event *e,
			 uint32_t node)
{
	uint64_t ns = c->src ? calls_src_ns(c->src, e->tsc) : e->tsc;
	if (c->pend) {
		uint64_t dt = ns > c->pend_ns ? ns - c->pend_ns : 0;
		if (c->pend_node) {
			c->n[c->pend_node].time_ns += dt;
			c->tot.time_ns += dt;
		} else {
			c->tot.untimed_ns += dt;
		}
	}
	c->pend = 1;
	c->pend_node = node;
	c->pend_ns = ns;
}

int cct_on_event(void *arg, const struct walk_event *we)
{
	struct cct *c = arg;
	struct walk_frame *f = we->frame;
	uint32_t id;
	int rc;
	switch (we->kind) {
	case WALK_CALL:
	case WALK_ROOT:
		rc = enter(c, we->caller ? (uint32_t)we->caller->user : 0,
			   f->method, f->callsite, &id);
		if (rc)
			return rc;
		f->user = id;
		c->n[id].invocations++;
		return 0;
	case WALK_BYTECODE:
		id = (uint32_t)f->user;
		c->n[id].bytecodes++;
		c->n[id].recovered += we->ev->status == JPB_FLOW_RECOVERED;
		c->tot.bytecodes++;
		account_time(c, we->ev, id);
		return 0;
	case WALK_LOST:
		c->tot.bytecodes++;
		c->tot.lost++;
		account_time(c, we->ev, 0);
		return 0;
	case WALK_BREAK:
		/* the span up to the next event crosses lost trace */
		c->pend_node = 0;
		return 0;
	default:
		return 0;
	}
}

void cct_thread_done(struct cct *c, const struct walk_stats *st)
{
	c->tot.threads++;
	c->tot.breaks += st->breaks;
	c->pend = 0;
}

void cct_finish(struct cct *c)
{
	for (size_t i = 0; i < c->count; i++) {
		c->n[i].bytecodes_incl = c->n[i].bytecodes;
		c->n[i].time_incl_ns = c->n[i].time_ns;
	}
	/* children have higher ids than their parents */
	for (size_t i = c->count - 1; i > 0; i--) {
		struct cct_node *p = &c->n[c->n[i].parent];
		p->bytecodes_incl += c->n[i].bytecodes_incl;
		p->time_incl_ns += c->n[i].time_incl_ns;
	}
}

size_t cct_count(const struct cct *c)
{
	return c->count;
}

const struct cct_node *cct_node(const struct cct *c, uint32_t id)
{
	return id < c->count ? &c->n[id] : NULL;
}

const struct cct_totals *cct_totals(const struct cct *c)
{
	return &c->tot;
}

int cct_folded(const struct cct *c)
{
	return c->fold;
}

static int on_end(void *arg, uint32_t tid, const struct walk_stats *st)
{
	(void)tid;
	cct_thread_done(arg, st);
	return 0;
}

int cct_build(const struct calls_src *s, int fold, struct cct **out,
	      char *errmsg, size_t size)
{
	static const struct calls_walk_ops ops = { NULL, cct_on_event, on_end };
	int rc = cct_alloc(out, fold, s);
	if (!rc)
		rc = calls_src_walk(s, &ops, *out, errmsg, size);
	if (rc) {
		if (rc == jpb_err_nomem)
			snprintf(errmsg, size, "calling-context tree: out of memory");
		cct_free(*out);
		*out = NULL;
		return rc;
	}
	cct_finish(*out);
	return 0;
}
