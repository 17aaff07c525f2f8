// SPDX-License-Identifier: MIT
/*
 * Callers that share a callee (docs/RECONSTRUCTION.md).  At a method
 * entry, every state whose invoke may call M gets a state with M's frame
 * on top: a call of a widely used method from many candidate callers
 * (the overriders of a virtual call, the lambda forms of a linkage) made
 * as many states, which ran M's code step for step alike, differing only
 * below.  They are one state instead: M's frame on a join frame that
 * stands for the callers.  A return through the join gives one state per
 * caller, each edge naming its caller (its link), so that a resolution's
 * path enters the callee from the caller it returned to.
 */
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"

void flow_joins_reset(struct flow *f)
{
	f->njoins = 0;
	f->njalts = 0;
}

/* Staged entry G pushes its callee on its caller: a candidate to merge. */
static int is_entry(const struct staged *g)
{
	const struct frame *t = g->top;
	return !g->lost && !g->below && t && t->up && !t->comp && !t->done && t->pos == 0 &&
	       !flow_is_join(t->up);
}

/* One state can stand for both: the same callee, the same doubt (frame
 * and state: a doubtful caller must not make the others' callee doubtful). */
static int same_entry(const struct flow *f, const struct staged *a, const struct staged *b)
{
	return a->top->meth == b->top->meth && a->top->doubt == b->top->doubt &&
	       f->nodes[a->from].doubt == f->nodes[b->from].doubt;
}

/* A join of the callers of the staged entries IDX[0..N) (N >= 2) and
 * the callee frame on it; each entry's top becomes that frame and its
 * edge the entry link of its caller. */
static int make_join(struct flow *f, const uint32_t *idx, size_t n)
{
	if (JPB_GROW(f->joins, f->njoins, f->capjoins) ||
	    jpb_grow((void **)&f->jalts, &f->capjalts, f->njalts + n, sizeof(*f->jalts)))
		return jpb_err_nomem;
	uint32_t id = (uint32_t)f->njoins++;
	struct fjoin *j = &f->joins[id];
	*j = (struct fjoin){ (uint32_t)f->njalts, (uint32_t)n, 0, UINT32_MAX, 0, 0 };
	for (size_t k = 0; k < n; k++) {
		struct staged *g = &f->stage[idx[k]];
		uint64_t sc = f->nodes[g->from].score;
		f->jalts[f->njalts] = (struct jalt){ g->top->up, sc, id, 0, 0 };
		g->link = LINK_ENTRY | (uint32_t)(f->njalts + 1);
		f->njalts++;
		if (sc > j->best)
			j->best = sc;
	}
	struct frame *jf = flow_frame_make(f, NULL, FLOW_JOIN, id, 0, 0, 0);
	if (!jf)
		return jpb_err_nomem;
	jf->joined = 1;
	struct frame *top = f->stage[idx[0]].top;
	struct frame *callee = flow_frame_new(f, jf, top->meth, 0, 0);
	if (!callee)
		return jpb_err_nomem;
	callee->doubt = top->doubt;
	for (size_t k = 0; k < n; k++)
		f->stage[idx[k]].top = callee;
	return 0;
}

/* The entries of chain I (NEXT) that can merge with its first: into
 * IDX, their count; 0 when they are one caller (equal stacks merge
 * anyway). */
static size_t join_members(const struct flow *f, uint32_t i, const uint32_t *next,
			   uint32_t *idx)
{
	size_t m = 0;
	int callers = 0;
	for (; i != UINT32_MAX; i = next[i]) {
		if (m && !same_entry(f, &f->stage[idx[0]], &f->stage[i]))
			continue;
		callers |= m && f->stage[i].top->up != f->stage[idx[0]].top->up;
		idx[m++] = i;
	}
	return callers ? m : 0;
}

/* Staged entries chained by callee (an open-addressing table of chain
 * heads, NEXT and TAIL in staging order), then each chain's mergeable
 * ones joined. */
int flow_join_staged(struct flow *f)
{
	size_t n = f->nstage, cap = 16;
	if (n < 2)
		return 0;
	while (cap < 2 * n)
		cap *= 2;
	if (jpb_grow((void **)&f->jscratch, &f->capjscratch, cap + 3 * n, sizeof(*f->jscratch)))
		return jpb_err_nomem;
	uint32_t *head = f->jscratch;
	memset(head, 0, cap * sizeof(*head));
	uint32_t *next = head + cap, *tail = next + n, *idx = tail + n;
	for (size_t i = 0; i < n; i++) {
		next[i] = UINT32_MAX;
		if (!is_entry(&f->stage[i]))
			continue;
		uint32_t meth = f->stage[i].top->meth;
		size_t k = (size_t)((meth * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);
		while (head[k] && f->stage[head[k] - 1].top->meth != meth)
			k = (k + 1) & (cap - 1);
		if (!head[k]) {
			head[k] = (uint32_t)i + 1;
			tail[i] = (uint32_t)i;
			continue;
		}
		uint32_t h = head[k] - 1;
		next[tail[h]] = (uint32_t)i;
		tail[h] = (uint32_t)i;
	}
	int err = 0;
	for (size_t k = 0; k < cap && !err; k++) {
		size_t m = head[k] ? join_members(f, head[k] - 1, next, idx) : 0;
		if (m >= 2)
			err = make_join(f, idx, m);
	}
	return err;
}

/* The picked caller of join frame G (the first when none was picked). */
static struct frame *picked(const struct flow *f, const struct frame *g)
{
	const struct fjoin *j = flow_join_of(f, g);
	return f->jalts[j->pick != UINT32_MAX ? j->pick : j->first].up;
}

/* Iterative, as stacks and nested joins may be as deep as the thread's
 * recursion. */
struct frame *flow_join_collapse(struct flow *f, struct frame *top)
{
	struct frame **v = NULL, *g = top;
	size_t n = 0, cap = 0;
	while (g && g->joined) {
		if (flow_is_join(g)) {
			g = picked(f, g);
			continue;
		}
		if (jpb_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			return NULL;
		}
		v[n++] = g;
		g = g->up;
	}
	struct frame *up = g; /* the first frame with no join below, or none */
	int err = 0;
	for (size_t k = n; k-- > 0 && !err;) {
		struct frame *c = flow_frame_make(f, up, v[k]->meth, v[k]->pos, v[k]->done,
						  v[k]->comp, v[k]->act);
		err = !c;
		if (c) {
			c->doubt = v[k]->doubt;
			up = c;
		}
	}
	free(v);
	return err ? NULL : up;
}

/* Join J opened by MARK: 1 when it was not yet (its callers are to be
 * searched). */
static int open_join(struct flow *f, struct fjoin *j, uint8_t mark)
{
	if (j->gen != f->jgen) {
		j->gen = f->jgen;
		j->open = 0;
	}
	if ((j->open & mark) == mark)
		return 0;
	j->open |= mark;
	return 1;
}

/* Out of memory: every join of the window open, more candidates than
 * the trace leaves (never fewer). */
static void open_all(struct flow *f, uint8_t mark)
{
	for (size_t k = 0; k < f->njoins; k++)
		open_join(f, &f->joins[k], mark);
}

void flow_join_open(struct flow *f, const struct frame *top, uint8_t mark)
{
	const struct frame **w = NULL; /* stacks to search for their join */
	size_t n = 0, cap = 0;
	if (jpb_grow((void **)&w, &cap, 1, sizeof(*w))) {
		open_all(f, mark);
		return;
	}
	w[n++] = top;
	while (n) {
		const struct frame *g = w[--n];
		while (g && g->joined && !flow_is_join(g))
			g = g->up;
		if (!g || !g->joined || !open_join(f, &f->joins[g->pos], mark))
			continue;
		const struct fjoin *j = &f->joins[g->pos];
		if (jpb_grow((void **)&w, &cap, n + j->n, sizeof(*w))) {
			open_all(f, mark);
			break;
		}
		for (uint32_t k = 0; k < j->n; k++)
			w[n++] = f->jalts[j->first + k].up;
	}
	free(w);
}
