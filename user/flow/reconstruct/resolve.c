// SPDX-License-Identifier: MIT
/*
 * States and their resolution (docs/RECONSTRUCTION.md).  Each event that
 * can change the position is a *step*: the set of states (call stacks)
 * consistent with everything so far, each with edges to the states of the
 * previous step it came from.  When a step has one state, every path to
 * it is known: the steps since the last such point are resolved backwards
 * (the chosen path follows first edges; the states still on some path to
 * the single one give each event's candidate count) and emitted.
 */
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"
#include "java/bytecodes.h"

/* ---- frames ---------------------------------------------------------------- */

struct frame *flow_frame_slot_slow(struct flow *f)
{
	struct chunk *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	c->next = f->arena;
	c->used = 1;
	f->arena = c;
	return &c->f[0];
}

static int frame_eq(const struct frame *a, const struct frame *b)
{
	return a->meth == b->meth && a->pos == b->pos && a->done == b->done &&
	       a->comp == b->comp && a->act == b->act;
}

/* stack_eq for top frames A and B that are equal (frame_eq) and not
 * the same: equal stacks have equal hashes (flow_frame_h), unequal ones
 * differ in most, before any walk. */
static int stack_eq_below(struct frame *a, struct frame *b)
{
	if (a->up == b->up)
		return 1;
	if (flow_frame_h(a) != flow_frame_h(b))
		return 0;
	while (a != b) {
		if (!a || !b || !frame_eq(a, b))
			return 0;
		a = a->up;
		b = b->up;
	}
	return 1;
}

/* The top frames are compared first, inline, which needs no hash: most
 * states a step compares differ there, and the call cost more than the
 * test. */
static inline int stack_eq(struct frame *a, struct frame *b)
{
	if (a == b)
		return 1;
	if (!a || !b || !frame_eq(a, b))
		return 0;
	return stack_eq_below(a, b);
}

/* Copy the stack under TOP into a fresh arena and drop the old one, so
 * memory stays bounded by the states alive, not by the thread's length. */
static struct frame *arena_compact(struct flow *f, struct frame *top)
{
	if (top->joined) /* its callers live in the arena: not alone */
		return top;
	size_t depth = 0;
	for (struct frame *g = top; g; g = g->up)
		depth++;
	struct frame **v = malloc((depth ? depth : 1) * sizeof(*v));
	if (!v)
		return top;
	depth = 0;
	for (struct frame *g = top; g; g = g->up)
		v[depth++] = g;
	struct chunk *old = f->arena;
	f->ctop = NULL; /* freed below; its address may come back */
	f->arena = NULL;
	f->arena_frames = 0;
	struct frame *up = NULL;
	for (size_t i = depth; i-- > 0;) {
		struct frame *n = flow_frame_make(f, up, v[i]->meth, v[i]->pos, v[i]->done,
						  v[i]->comp, v[i]->act);
		if (!n) { /* keep the old arena: nothing is lost */
			flow_arena_free(f->arena);
			f->arena = old;
			free(v);
			return top;
		}
		n->doubt = v[i]->doubt;
		up = n;
	}
	flow_arena_free(old);
	free(v);
	return up;
}

/* ---- steps and nodes ------------------------------------------------------------ */

/* The current step's states changed otherwise than by an addition
 * (flow_add_node_below): the state index (hidx_update) forgets them.
 * Every such change goes through here: a new step, a step's states
 * added again (flow_stage_end), lost states dropped (flow_drop_lost), a
 * restart from one state (restart), the one state moved
 * (flow_settle_interp). */
static void states_rewritten(struct flow *f)
{
	f->nepoch++;
}

int flow_step_begin(struct flow *f, uint32_t ev, int emit, uint8_t op)
{
	states_rewritten(f);
	if (JPB_GROW(f->steps, f->nsteps, f->caps))
		return jpb_err_nomem;
	f->steps[f->nsteps++] = (struct step){ (uint32_t)f->nnodes, 0, ev,
					       (uint8_t)emit, op };
	f->nemit += emit != 0;
	return 0;
}

/* The evidence for a state whose top frame is TOP: events placed for sure
 * in its method so far (the choice rule's, and the cap's rank). */
static uint32_t top_evidence(const struct flow *f, const struct frame *top)
{
	return top && top->meth < f->nproven ? f->proven[top->meth] : 0;
}

static int stage(struct flow *f, struct frame *top, int lost, uint32_t from,
		 struct frame *below)
{
	if (JPB_GROW(f->stage, f->nstage, f->capstage))
		return jpb_err_nomem;
	uint32_t ev = top_evidence(f, top);
	f->stage[f->nstage] = (struct staged){ top, below, from, (uint32_t)f->nstage, ev, 0,
					       f->cur_link, (uint8_t)lost };
	f->nstage++;
	return 0;
}

void flow_stage_begin(struct flow *f)
{
	f->staging = STAGE_HELD;
	f->nstage = 0;
	f->alone_last = UINT32_MAX;
	f->alone_off = 0;
}

/* Method M seen among the current caller's callees before; 1 also when
 * out of memory, which only costs searches. */
static int method_seen(struct flow *f, uint32_t m)
{
	if (m >= f->capmstamp) {
		size_t n = f->capmstamp ? f->capmstamp : 1024;
		while (n <= m)
			n *= 2;
		uint32_t *v = realloc(f->mstamp, n * sizeof(*v));
		if (!v)
			return 1;
		memset(v + f->capmstamp, 0, (n - f->capmstamp) * sizeof(*v));
		f->mstamp = v;
		f->capmstamp = n;
	}
	if (f->mstamp[m] == f->mgen)
		return 1;
	f->mstamp[m] = f->mgen;
	return 0;
}

/* Whether the N callees M of caller FROM's top T are each alone in their
 * step: equal to no other state of it, so that they are added without a
 * search (add_staged).  The states of a step have pairwise unequal
 * stacks (add_node; a known state has no BELOW), so the stacks pushed on
 * two callers' tops differ, and those pushed on one differ when M lists
 * each method once; the step's other states are lost ones and joined
 * callees, whose frame below is a join, not a caller's top
 * (flow_stage_end_entries).  Callers are staged once each, in order
 * (stage_callees); otherwise no state is alone. */
static int callees_alone(struct flow *f, const struct frame *t, const uint32_t *m,
			 uint32_t n, uint32_t from)
{
	if (f->alone_last != UINT32_MAX && from <= f->alone_last)
		f->alone_off = 1;
	f->alone_last = from;
	if (f->alone_off || t != f->nodes[from].top)
		return 0;
	if (n < 2)
		return 1;
	if (++f->mgen == 0) { /* wrapped: old stamps could match again */
		memset(f->mstamp, 0, f->capmstamp * sizeof(*f->mstamp));
		f->mgen = 1;
	}
	for (uint32_t k = 0; k < n; k++)
		if (method_seen(f, m[k]))
			return 0;
	return 1;
}

/* stage's work for each callee, its room made once: flow_add_node for
 * each went through two calls to it (jython: 132 k entries). */
int flow_stage_entries(struct flow *f, struct frame *t, const uint32_t *m, uint32_t n,
		       uint32_t from)
{
	if (f->staging != STAGE_HELD)
		return jpb_err_internal;
	if (jpb_grow((void **)&f->stage, &f->capstage, f->nstage + n, sizeof(*f->stage)))
		return jpb_err_nomem;
	uint8_t alone = (uint8_t)callees_alone(f, t, m, n, from);
	for (uint32_t k = 0; k < n; k++) {
		struct frame *c = flow_frame_new(f, t, m[k], 0, 0);
		if (!c)
			return jpb_err_nomem;
		c->doubt = t->doubt;
		f->stage[f->nstage] = (struct staged){ c, NULL, from, (uint32_t)f->nstage,
						       top_evidence(f, c), 0, f->cur_link,
						       LOST_NONE, alone };
		f->nstage++;
	}
	return 0;
}

/* Staged entries that a join took (their callee's frame now on the
 * join) or, callers out of order, all: not alone. */
static void alone_joined(struct flow *f)
{
	for (size_t i = 0; i < f->nstage; i++)
		if (f->stage[i].alone && (f->alone_off || flow_is_join(f->stage[i].top->up)))
			f->stage[i].alone = 0;
}

/* States that fit the cap are added as staged (flow_stage_end): until
 * more come than the cap, they are added at once, not held back and
 * added again (a call and a copy each, ~400 k states on jython), and
 * steps rarely pass the cap (jython: 130 of the ~96 k staged steps,
 * method entries included). */
void flow_stage_begin_added(struct flow *f)
{
	f->staging = STAGE_ADDED;
	f->nstage = 0;
	f->nadded = 0;
	f->added_edge0 = f->nedges;
	f->ntwins = 0;
}

/* An addition while STAGE_ADDED found the state of another top TOP (its
 * twin: an equal stack): noted, so that its staged copy gets TOP back. */
static int note_twin(struct flow *f, struct frame *top)
{
	if (JPB_GROW(f->twins, f->ntwins, f->captwins))
		return jpb_err_nomem;
	f->twins[f->ntwins++] = (struct added_twin){ f->nedges, top };
	return 0;
}

/* More states came than the cap: those added so far (one edge each, in
 * order, as none was dropped) become staged ones, as stage would have
 * made them, and leave the step. */
static int stage_added(struct flow *f)
{
	struct step *s = flow_cur_step(f);
	size_t n = f->nedges - f->added_edge0;
	if (jpb_grow((void **)&f->stage, &f->capstage, n, sizeof(*f->stage)))
		return jpb_err_nomem;
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		const struct node *nd = &f->nodes[i];
		for (uint32_t e = nd->edge; e; e = f->edges[e - 1].next) {
			const struct edge *g = &f->edges[e - 1];
			uint32_t seq = (uint32_t)(e - 1 - f->added_edge0);
			f->stage[seq] = (struct staged){ nd->top, nd->below, g->from, seq,
							 top_evidence(f, nd->top), 0, g->link,
							 nd->lost };
		}
	}
	for (size_t i = 0; i < f->ntwins; i++)
		f->stage[f->twins[i].edge - f->added_edge0].top = f->twins[i].top;
	f->nstage = n;
	states_rewritten(f);
	f->nnodes = s->first;
	s->n = 0;
	s->kinds = 0;
	f->nedges = f->added_edge0;
	f->staging = STAGE_HELD;
	return 0;
}

/* More evidence first, then as staged. */
static int staged_before(const struct staged *a, const struct staged *b)
{
	return a->ev != b->ev ? a->ev > b->ev : a->seq < b->seq;
}

static int staged_cmp(const void *x, const void *y)
{
	const struct staged *a = x, *b = y;
	return staged_before(a, b) ? -1 : staged_before(b, a);
}

/* V[0..N), staged in order, sorted by staged_before: an insertion sort,
 * as the successors' evidence is mostly in order already (jython: under
 * one move per state; qsort's merge sort through a comparison callback
 * was 1.6% of the decode), and qsort once the moves pass 8 per state
 * (the order is total: the same result). */
static void sort_successors(struct staged *v, size_t n)
{
	size_t moves = 0;
	for (size_t i = 1; i < n; i++) {
		struct staged x = v[i];
		size_t j = i;
		for (; j > 0 && staged_before(&x, &v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = x;
		moves += i - j;
		if (moves > 8 * n) {
			qsort(v, n, sizeof(*v), staged_cmp);
			return;
		}
	}
}

/* The order in which staged states are added when they are more than the
 * cap: by rank, a state's place among its predecessor's successors ranked
 * by evidence (every predecessor's best, then every second best, ...),
 * and by predecessor within a rank.  The cap then drops the least likely
 * successors of the predecessors with the most, not every successor of
 * the predecessors that come late: on jython, 109 states at a call had
 * 2586 candidate callees (calls of Object.hashCode have 276), and those
 * of the first states filled the step before PyString.hashCode's one
 * callee was pushed.  The staged states are left sorted by predecessor
 * and rank (seq keeps their staging order). */
static const uint32_t *stage_order(struct flow *f)
{
	size_t n = f->nstage;
	struct staged *v = f->stage;
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && v[b].from == v[a].from; b++)
			;
		sort_successors(v + a, b - a);
		for (size_t i = a; i < b; i++)
			v[i].rank = (uint32_t)(i - a);
	}
	/* a counting sort by rank: ranks are below n */
	if (jpb_grow((void **)&f->stage_ord, &f->capord, 2 * n + 2, sizeof(uint32_t)))
		return NULL;
	uint32_t *ord = f->stage_ord, *start = ord + n;
	memset(start, 0, (n + 1) * sizeof(*start));
	for (size_t i = 0; i < n; i++)
		start[v[i].rank + 1]++;
	for (size_t r = 0; r < n; r++)
		start[r + 1] += start[r];
	for (size_t i = 0; i < n; i++)
		ord[start[v[i].rank]++] = (uint32_t)i;
	return ord;
}

/* The staging order of the states stage_order sorted. */
static const uint32_t *staged_order(struct flow *f)
{
	uint32_t *ord = f->stage_ord;
	for (size_t i = 0; i < f->nstage; i++)
		ord[f->stage[i].seq] = (uint32_t)i;
	return ord;
}

static int add_node(struct flow *f, struct frame *top, int lost, uint32_t from,
		    struct frame *below, uint32_t link);

/* Where find_node's probe for a missing state ended: the new state goes
 * there, its hash not computed again. */
struct hslot {
	size_t k, h;
	int valid;
};

/* Inline in both callers: out of line, add_node's call of it cost
 * jython 18 M instructions. */
static inline __attribute__((always_inline)) int
new_node(struct flow *f, struct step *s, const struct hslot *slot, struct frame *top, int lost,
	 uint32_t from, struct frame *below, uint32_t link);

/* Add the staged states to the current step, in ORD's order (NULL: as
 * staged, up to the first the cap drops).  A state alone
 * (flow_stage_entries) is made, or dropped by the cap, without a search
 * (jython: 178 k searches -> 82 k, most past the cap of wide entries). */
static int add_staged(struct flow *f, const uint32_t *ord)
{
	int err = 0;
	struct step *s = flow_cur_step(f);
	const struct hslot none = { 0, 0, 0 };
	for (size_t i = 0; i < f->nstage && !err && (ord || !s->trunc); i++) {
		const struct staged *g = &f->stage[ord ? ord[i] : i];
		err = g->alone ? new_node(f, s, &none, g->top, LOST_NONE, g->from, NULL, g->link) :
				 add_node(f, g->top, g->lost, g->from, g->below, g->link);
	}
	return err;
}

/* The staged states are added as staged when they fit the cap, by rank
 * (stage_order) when the cap drops one.  Whether it does depends on how
 * many merge, not on the order: more staged states than the cap are
 * added by rank first (on jython, h2 and fop the cap dropped some at
 * every such step; adding them as staged first, until the cap dropped
 * one, was 2% of a jython decode), and again as staged if they fit. */
int flow_stage_end(struct flow *f)
{
	int added = f->staging == STAGE_ADDED;
	f->staging = STAGE_NONE;
	if (added) /* all fit the cap: added as staged */
		return 0;
	struct step *s = flow_cur_step(f);
	/* staging begins with its step (flow_step_begin): S is empty */
	size_t nedges0 = f->nedges;
	int wtrunc0 = f->win_trunc;
	int by_rank = f->nstage > f->o.max_states;
	const uint32_t *ord = by_rank ? stage_order(f) : NULL;
	int err = s->n ? jpb_err_internal : by_rank && !ord ? jpb_err_nomem : add_staged(f, ord);
	if (!err && by_rank && !s->trunc) {
		/* They fit: the step's states and edges are all new, so they
		 * go back whole. */
		states_rewritten(f);
		f->nnodes = s->first;
		s->n = 0;
		s->kinds = 0;
		f->nedges = nedges0;
		f->win_trunc = wtrunc0;
		err = add_staged(f, staged_order(f));
	}
	f->nstage = 0;
	return err;
}

int flow_stage_end_entries(struct flow *f)
{
	size_t njoins0 = f->njoins;
	int err = flow_join_staged(f);
	if (err) {
		f->staging = STAGE_NONE;
		f->nstage = 0;
		return err;
	}
	if (f->njoins != njoins0 || f->alone_off)
		alone_joined(f);
	return flow_stage_end(f);
}

/* States of a step looked up by a hash rather than one by one: the scan
 * with stack_eq was ~12% of the flow phase on jython and h2, whose steps
 * at calls of widely overridden methods hold up to max_states states.
 * From 8 states, not 16: with the top frames compared inline a scan costs
 * ~14 instructions a state, and a lookup ~60 (jython: add_node 113 ->
 * 105 M; 4 states saved 2 M more, for a table that leaves the cache
 * more often). */
#define HIDX_MIN 8u
/* count_cands' set of positions from this many states, pairs below */
#define CSET_MIN 16u

/* Equal states (stack_eq, same LOST and BELOW) hash alike: their top
 * frames' hashes are equal (flow_frame_h). */
static size_t node_hash(struct frame *top, int lost, const struct frame *below)
{
	uint64_t h = ((uint64_t)flow_frame_h(top) << 8 | (uint8_t)lost) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)(uintptr_t)below * 0xff51afd7ed558ccdull;
	h ^= h >> 31;
	h *= 0xc4ceb9fe1a85ec53ull;
	return (size_t)(h ^ h >> 29);
}

static int node_is(const struct node *n, struct frame *top, int lost,
		   struct frame *below)
{
	return n->lost == lost && n->below == below && stack_eq(n->top, top);
}

/* A power of two at least twice the states a step may hold: the open
 * addressing tables over a step's states stay at most half full. */
static size_t step_table_cap(const struct flow *f)
{
	size_t cap = 64;
	while (cap < 2 * (size_t)f->o.max_states)
		cap *= 2;
	return cap;
}

/* An index entry: the node's index + 1, and above it the high half of
 * its hash, compared before stack_eq walks the stacks of a collision. */
static uint64_t hidx_entry(uint32_t node, size_t h)
{
	return (uint64_t)h >> 32 << 32 | (node + 1);
}

static int hidx_holds(uint64_t e, size_t h)
{
	return e >> 32 == (uint64_t)h >> 32;
}

/* The slots of the index in use, hn of them, after its caphidx entries
 * (one allocation): emptying the index clears them alone.  A memset of
 * the 512 entries per step was 1.4% of a jython decode's instructions. */
static uint32_t *hidx_slots(const struct flow *f)
{
	return (uint32_t *)(f->hidx + f->caphidx);
}

/* Node AT, of hash H, indexed at free slot K. */
static void hidx_put(struct flow *f, size_t k, uint32_t at, size_t h)
{
	f->hidx[k] = hidx_entry(at, h);
	hidx_slots(f)[f->hn++] = (uint32_t)k;
}

/* The current step's states indexed up to the last: from scratch when
 * they changed otherwise than by additions since (nepoch). */
static int hidx_update(struct flow *f, const struct step *s)
{
	/* max_states does not change: the index, once made, is large enough
	 * (step_table_cap's loop was ~1% of add_node) */
	if (!f->caphidx) {
		size_t cap = step_table_cap(f);
		/* room for the slots: a step holds at most cap / 2 states */
		uint64_t *v = calloc(1, cap * sizeof(*v) + cap / 2 * sizeof(uint32_t));
		if (!v)
			return jpb_err_nomem;
		free(f->hidx);
		f->hidx = v;
		f->caphidx = cap;
		f->hn = 0;
	}
	size_t cap = f->caphidx;
	if (f->hepoch != f->nepoch || f->hn > s->n) {
		const uint32_t *slot = hidx_slots(f);
		for (size_t i = 0; i < f->hn; i++)
			f->hidx[slot[i]] = 0;
		f->hn = 0;
		f->hepoch = f->nepoch;
	}
	while (f->hn < s->n) {
		uint32_t at = s->first + (uint32_t)f->hn;
		const struct node *n = &f->nodes[at];
		size_t h = node_hash(n->top, n->lost, n->below), k = h & (cap - 1);
		while (f->hidx[k])
			k = (k + 1) & (cap - 1);
		hidx_put(f, k, at, h);
	}
	return 0;
}

/* The state of the current step equal to (TOP, LOST, BELOW) (at most
 * one: additions are deduplicated), UINT32_MAX none (*AT set when the
 * index was probed), or an error. */
static int64_t find_node(struct flow *f, const struct step *s, struct frame *top,
			 int lost, struct frame *below, struct hslot *at)
{
	at->valid = 0;
	if (s->n < HIDX_MIN) {
		for (uint32_t i = s->first; i < s->first + s->n; i++)
			if (node_is(&f->nodes[i], top, lost, below))
				return i;
		return UINT32_MAX;
	}
	if (hidx_update(f, s))
		return jpb_err_nomem;
	size_t h = node_hash(top, lost, below), k = h & (f->caphidx - 1);
	for (; f->hidx[k]; k = (k + 1) & (f->caphidx - 1)) {
		uint32_t i = (uint32_t)f->hidx[k] - 1;
		if (hidx_holds(f->hidx[k], h) && node_is(&f->nodes[i], top, lost, below))
			return i;
	}
	*at = (struct hslot){ k, h, 1 };
	return UINT32_MAX;
}

/* The evidence of a path that returned through a join's caller
 * (LINK): the state it came from counted the join's best caller's. */
static uint64_t link_score(const struct flow *f, uint64_t sc, uint32_t link)
{
	if (!link || flow_link_is_entry(link))
		return sc;
	const struct jalt *a = &f->jalts[flow_link_alt(link)];
	uint64_t best = f->joins[a->join].best;
	return sc + a->score >= best ? sc + a->score - best : 0;
}

/* A new state (TOP, LOST, BELOW) for the current step S, where find_node
 * left SLOT, reached from node FROM by an edge with LINK: made whole at
 * once, its edge the first (a node stored empty and then filled in cost
 * ~10 instructions more for each of the 670 k on jython). */
static inline __attribute__((always_inline)) int
new_node(struct flow *f, struct step *s, const struct hslot *slot, struct frame *top, int lost,
	 uint32_t from, struct frame *below, uint32_t link)
{
	if (s->n >= f->o.max_states) {
		/* documented cap: later states are dropped, and with them the
		 * right to call what survives certain */
		s->trunc = 1;
		f->win_trunc = 1;
		return 0;
	}
	if (JPB_GROW(f->nodes, f->nnodes, f->capn) || JPB_GROW(f->edges, f->nedges, f->cape))
		return jpb_err_nomem;
	const struct node *p = &f->nodes[from];
	uint64_t sc = link_score(f, p->score + top_evidence(f, top), link);
	uint32_t at = (uint32_t)f->nnodes++;
	f->nodes[at] = (struct node){ sc, top, below, (uint8_t)lost, 0, p->doubt,
				      (uint32_t)f->nedges + 1 };
	if (slot->valid && f->hn == s->n)
		hidx_put(f, slot->k, at, slot->h);
	s->n++;
	s->kinds |= lost ? STEP_LOST : STEP_KNOWN;
	f->edges[f->nedges++] = (struct edge){ from, 0, link };
	return 0;
}

/* Add state (TOP, LOST) reached from node FROM (by an edge with LINK) to
 * the current step, now (flow_add_node_below stages it while a step is
 * staged). */
static int add_node(struct flow *f, struct frame *top, int lost, uint32_t from,
		    struct frame *below, uint32_t link)
{
	struct step *s = flow_cur_step(f);
	struct hslot slot;
	int64_t found = find_node(f, s, top, lost, below, &slot);
	if (found < 0)
		return (int)found;
	if (found == UINT32_MAX)
		return new_node(f, s, &slot, top, lost, from, below, link);
	if (f->staging == STAGE_ADDED && f->nodes[found].top != top) {
		int err = note_twin(f, top);
		if (err)
			return err;
	}
	if (JPB_GROW(f->edges, f->nedges, f->cape))
		return jpb_err_nomem;
	struct node *n = &f->nodes[found];
	const struct node *p = &f->nodes[from];
	n->doubt |= p->doubt;
	/* The first edge is the chosen predecessor: the one with the most
	 * evidence, the earliest on ties. */
	uint64_t sc = link_score(f, p->score + top_evidence(f, top), link);
	struct edge e = { from, 0, link };
	if (n->edge && sc > n->score) {
		e.next = n->edge;
		n->edge = (uint32_t)f->nedges + 1;
		n->score = sc;
	} else if (n->edge) {
		e.next = f->edges[n->edge - 1].next;
		f->edges[n->edge - 1].next = (uint32_t)f->nedges + 1;
	} else {
		n->edge = (uint32_t)f->nedges + 1;
		n->score = sc;
	}
	f->edges[f->nedges++] = e;
	return 0;
}

int flow_add_now(struct flow *f, struct frame *top, int lost, uint32_t from,
		 struct frame *below)
{
	return add_node(f, top, lost, from, below, f->cur_link);
}

/* Out of line from add_node: staged states (a third of the calls on
 * jython) paid its register saves for nothing. */
int flow_add_staging(struct flow *f, struct frame *top, int lost, uint32_t from,
		     struct frame *below)
{
	if (f->staging == STAGE_ADDED) { /* the first past the cap */
		int err = stage_added(f);
		if (err)
			return err;
	}
	return stage(f, top, lost, from, below);
}

/* Explained states beat unexplained ones: drop lost nodes when the step
 * has any other. */
void flow_drop_lost(struct flow *f)
{
	struct step *s = flow_cur_step(f);
	if (s->kinds != (STEP_LOST | STEP_KNOWN))
		return;
	states_rewritten(f);
	uint32_t w = s->first;
	for (uint32_t i = s->first; i < s->first + s->n; i++)
		if (!f->nodes[i].lost)
			f->nodes[w++] = f->nodes[i];
	s->n = w - s->first;
	s->kinds = STEP_KNOWN;
	f->nnodes = s->first + s->n;
}

/* Evidence: method M was placed for sure once more, M past the table:
 * the table grows (out of line: asked once per method). */
static void prove_grow(struct flow *f, uint32_t m)
{
	size_t n = f->nmeths > m ? f->nmeths : m + 1;
	uint32_t *v = realloc(f->proven, n * sizeof(*v));
	if (!v)
		return; /* evidence is optional */
	memset(v + f->nproven, 0, (n - f->nproven) * sizeof(*v));
	f->proven = v;
	f->nproven = n;
	f->proven[m]++;
}

/* Evidence: method M was placed for sure once more (asked per event). */
static inline void prove(struct flow *f, uint32_t m)
{
	if (m >= f->nproven)
		prove_grow(f, m);
	else if (f->proven[m] < (1u << 20))
		f->proven[m]++;
}

void flow_prove_n(struct flow *f, uint32_t m, size_t n)
{
	if (m >= f->nproven) {
		prove_grow(f, m);
		if (m >= f->nproven)
			return;
		n--;
	}
	uint32_t v = f->proven[m];
	if (v < (1u << 20))
		f->proven[m] = (1u << 20) - v < n ? 1u << 20 : v + (uint32_t)n;
}

/* Node marks while a window is resolved: on a path to the chosen end
 * state, on a path to any end state. */
enum { MARK_CHOSEN = 1, MARK_ANY = 2 };

/* A set of positions (method << 32 | instruction) for N states, empty
 * (count_cands), sized to them: a step of 16 clears 32 entries, not the
 * 512 of max_states; 0 when out of memory (then the caller compares
 * pairs). */
static int cset_clear(struct flow *f, size_t n)
{
	size_t size = 32;
	while (size < 2 * n)
		size *= 2;
	if (f->capcset < size) {
		uint64_t *v = realloc(f->cset, size * sizeof(*v));
		if (!v)
			return 0;
		f->cset = v;
		f->capcset = size;
	}
	memset(f->cset, 0, size * sizeof(*f->cset));
	f->csize = size;
	return 1;
}

/* Add KEY (an instruction index is below 65536, so ~KEY is never 0):
 * 1 when it was not in the set. */
static int cset_add(struct flow *f, uint64_t key)
{
	size_t k = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (f->csize - 1);
	for (; f->cset[k]; k = (k + 1) & (f->csize - 1))
		if (f->cset[k] == ~key)
			return 0;
	f->cset[k] = ~key;
	return 1;
}

/* Candidates: distinct positions of the states of step S with a mark in
 * BIT, i.e. still on a path to the resolved end. */
static uint32_t count_cands(struct flow *f, const struct step *s, unsigned bit)
{
	uint32_t nc = 0;
	if (s->n >= CSET_MIN && cset_clear(f, s->n)) {
		/* many states: a set of (method, instruction), not pairs */
		for (uint32_t i = s->first; i < s->first + s->n; i++) {
			const struct node *a = &f->nodes[i];
			if ((a->mark & bit) && !a->lost)
				nc += cset_add(f, (uint64_t)a->top->meth << 32 | a->top->pos);
		}
		return nc;
	}
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		const struct node *a = &f->nodes[i];
		if (!(a->mark & bit) || a->lost)
			continue;
		int seen = 0;
		for (uint32_t j = s->first; j < i && !seen; j++) {
			const struct node *b = &f->nodes[j];
			seen = (b->mark & bit) && !b->lost && b->top->meth == a->top->meth &&
			       b->top->pos == a->top->pos;
		}
		nc += !seen;
	}
	return nc;
}

/* At most one position among the states of step S with a mark in BIT:
 * count_cands' answer <= 1, without its set (emit asks both, for each
 * event). */
static int one_position(const struct flow *f, const struct step *s, unsigned bit)
{
	const struct frame *first = NULL;
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		const struct node *a = &f->nodes[i];
		if (!(a->mark & bit) || a->lost)
			continue;
		if (!first)
			first = a->top;
		else if (a->top->meth != first->meth || a->top->pos != first->pos)
			return 0;
	}
	return 1;
}

/* Inline, and stored in place (flow_out_set). */
static inline int put_out(struct flow *f, uint32_t method, int32_t bci,
			  uint8_t op, uint8_t status, uint16_t ncand, uint64_t tsc)
{
	if (flow_out_room(f, 1))
		return jpb_err_nomem;
	flow_out_set(&f->out[flow_out_at(f)], method, bci, op, status, ncand, tsc);
	f->nout++;
	f->sum.by_status[status]++;
	f->sum.events++;
	return 0;
}

/* Event O, made earlier (flow_flush_some), appended to the window. */
static int put_ev(struct flow *f, const struct jpb_flow_event *o)
{
	if (flow_out_room(f, 1))
		return jpb_err_nomem;
	f->out[flow_out_at(f)] = *o;
	f->nout++;
	f->sum.by_status[o->status]++;
	f->sum.events++;
	return 0;
}

/* *O for compiled event E, whose innermost frame is method M (-1:
 * unknown) at an instruction with opcode OP (0: not one). */
static void compiled_out(struct flow *f, const struct jpb_decoded_slim *e, int64_t m,
			 uint8_t op, struct jpb_flow_event *o)
{
	if (m < 0) {
		flow_out_set(o, 0, -1, 0, JPB_FLOW_UNKNOWN, 0, e->tsc);
		return;
	}
	f->meths[m].used = 1;
	prove(f, (uint32_t)m);
	flow_out_set(o, (uint32_t)m + 1, flow_ev_frames(f, e)->bci, op, JPB_FLOW_DECODED, 1,
		     e->tsc);
}

static int emit_compiled(struct flow *f, const struct jpb_decoded_slim *e, int64_t m,
			 uint8_t op)
{
	struct jpb_flow_event o;
	compiled_out(f, e, m, op, &o);
	return put_ev(f, &o);
}

/* *O for step S, whose state on the chosen path is CHOSEN, once the
 * marks of S's states are final.  Evidence (prove) is counted here, in
 * the backward walk: its counts add up the same in any order. */
static void step_out(struct flow *f, const struct step *s, const struct node *chosen,
		     int doubt, struct jpb_flow_event *o)
{
	const struct jpb_decoded_slim *e = &f->ev[s->ev];
	if (e->kind == JPB_DEV_COMPILED) {
		const struct jpb_decoded_frame *fr = flow_ev_frames(f, e);
		const struct cpos *c = e->nframes ? flow_cpos(f, fr->method_id, fr->bci) : NULL;
		compiled_out(f, e, c ? c->meth : -1, c ? c->op : 0, o);
		return;
	}
	if (chosen->lost) {
		flow_out_set(o, 0, -1, s->op, JPB_FLOW_UNKNOWN, 0, e->tsc);
		return;
	}
	uint32_t nc = count_cands(f, s, MARK_ANY);
	const struct frame *t = chosen->top;
	/* Evidence for the choice rule: one position on a path to the
	 * chosen end (the doubt below changes labels, not choices). */
	if (one_position(f, s, MARK_CHOSEN))
		prove(f, t->meth);
	/* A guessed or truncated state set leaves at least one untracked
	 * alternative: never certain (RECONSTRUCTION.md). */
	if ((doubt || chosen->doubt || t->doubt) && nc < 2)
		nc = 2;
	f->meths[t->meth].used = 1;
	flow_out_set(o, t->meth + 1, (int32_t)flow_insn(f, t->meth, t->pos)->bci, s->op,
		     nc <= 1 ? JPB_FLOW_CERTAIN : JPB_FLOW_CHOSEN,
		     (uint16_t)(nc > 65535 ? 65535 : nc), e->tsc);
}

/* The marks an edge with LINK passes on from a node marked MARK: a
 * return through a join's caller marks that caller used; a caller's
 * entry into the callee passes on the marks of the paths that returned
 * to it, or of end states still in the callee (flow_join_open).  A
 * caller no path returned to is no candidate. */
static uint8_t link_mark(struct flow *f, uint32_t link, uint8_t mark)
{
	if (!link)
		return mark;
	struct jalt *a = &f->jalts[flow_link_alt(link)];
	if (a->gen != f->jgen) {
		a->gen = f->jgen;
		a->used = 0;
	}
	if (!flow_link_is_entry(link)) {
		a->used |= mark;
		return mark;
	}
	const struct fjoin *j = &f->joins[a->join];
	return mark & (a->used | (j->gen == f->jgen ? j->open : 0));
}

/* The marks of the last step's states, where the paths of a resolution
 * start: CHOSEN (an index into the last step) ends the chosen path; the
 * candidates are the states on a path to CHOSEN, or with ALL to any
 * state of the last step (all of them are consistent with the trace). */
static void mark_ends(struct flow *f, uint32_t chosen, int all)
{
	const struct step *ls = flow_cur_step(f);
	/* every node is unmarked: made so, and the resolution that marked
	 * them ends in restart (flow_flush_some) */
	for (uint32_t i = ls->first; all && i < ls->first + ls->n; i++)
		f->nodes[i].mark = MARK_ANY;
	f->nodes[chosen].mark = MARK_CHOSEN | MARK_ANY;
	if (f->njoins) {
		if (!++f->jgen)
			f->jgen = 1; /* a wrap: stale marks may open joins, no harm */
		for (uint32_t i = ls->first; i < ls->first + ls->n; i++)
			if (f->nodes[i].mark && flow_node_joined(&f->nodes[i]))
				flow_join_open(f, flow_node_stack(&f->nodes[i]), f->nodes[i].mark);
	}
}

/* The marks of step ST's states passed on to their predecessors. */
static void mark_preds(struct flow *f, const struct step *st)
{
	struct node *nd = f->nodes;
	const struct edge *ed = f->edges;
	for (uint32_t i = st->first; i < st->first + st->n; i++) {
		/* in a local: the stores below, to an earlier step's nodes,
		 * would make the compiler load it again */
		uint8_t m = nd[i].mark;
		if (!m)
			continue;
		for (uint32_t e = nd[i].edge; e; e = ed[e - 1].next)
			nd[ed[e - 1].from].mark |= ed[e - 1].link ?
							   link_mark(f, ed[e - 1].link, m) : m;
	}
}

/* Nothing pending: BASE is the one state (step 0), the stack under it
 * copied to a fresh arena when the old one has grown large. */
static void restart(struct flow *f, struct node base)
{
	if (base.top && f->arena_frames > ARENA_COMPACT)
		base.top = arena_compact(f, base.top);
	f->nodes[0] = base;
	f->nnodes = 1;
	f->nedges = 0;
	flow_joins_reset(f);
	f->steps[0] = (struct step){ 0, 1, 0, 0, 0, 0, base.lost ? STEP_LOST : STEP_KNOWN };
	f->nsteps = 1;
	f->nemit = 0;
	states_rewritten(f);
}

/* The edge node CUR's path goes back on: its first, but where a later
 * step returned through a caller of a join (the last of f->jreq), that
 * caller's entry; a return pushes its caller (as deep as the returns
 * nest; out of memory, a deeper one takes the first edge), an entry pops
 * it and is the join's pick. */
static uint32_t path_edge(struct flow *f, uint32_t cur)
{
	uint32_t e = f->nodes[cur].edge;
	if (f->njreq) {
		uint32_t want = LINK_ENTRY | (f->jreq[f->njreq - 1] + 1);
		for (uint32_t x = e; x; x = f->edges[x - 1].next)
			if (f->edges[x - 1].link == want) {
				e = x;
				f->njreq--;
				break;
			}
	}
	uint32_t link = f->edges[e - 1].link;
	if (link && flow_link_is_entry(link))
		f->joins[f->jalts[flow_link_alt(link)].join].pick = flow_link_alt(link);
	else if (link && !JPB_GROW(f->jreq, f->njreq, f->capjreq))
		f->jreq[f->njreq++] = flow_link_alt(link);
	return e;
}

/* Resolve every pending step up to the last one, whose node CHOSEN ends
 * the chosen path (with ALL, every state of the last step is a
 * candidate's end: mark_ends), and restart from it.  One walk back over
 * the steps passes the marks on, follows the chosen path and makes each
 * step's event once its marks are final: passes of their own (marks,
 * path, events) read a long window's nodes and edges three times, and
 * each time they had left the cache. */
int flow_flush_some(struct flow *f, uint32_t chosen, int all)
{
	size_t last = f->nsteps - 1;
	const struct step *ls = &f->steps[last];
	/* the common case, one pending step with one state, has no paths to
	 * trace: only its own mark counts */
	int alone = last == 1 && ls->n == 1;
	if (alone)
		f->nodes[chosen].mark = MARK_CHOSEN | MARK_ANY;
	else
		mark_ends(f, chosen, all);
	/* the events go straight to the window, made last first */
	size_t n = f->nemit;
	int err = flow_out_room(f, n);
	struct jpb_flow_event *o = err ? NULL : f->out + flow_out_at(f) + n;
	f->njreq = 0;
	for (size_t s = last, cur = chosen; s >= 1; s--) {
		const struct step *st = &f->steps[s];
		if (!alone)
			mark_preds(f, st);
		if (st->emit && o) {
			step_out(f, st, &f->nodes[cur], f->win_trunc, --o);
			f->sum.by_status[o->status]++;
		}
		uint32_t e = f->njoins ? path_edge(f, (uint32_t)cur) : f->nodes[cur].edge;
		cur = f->edges[e - 1].from;
	}
	if (o) {
		f->nout += n;
		f->sum.events += n;
	}
	struct node base = f->nodes[chosen];
	/* what follows a choice among several end states depends on it */
	base.doubt |= all && ls->n > 1;
	if (flow_node_joined(&base)) {
		/* still in a shared callee: its callers are the path's
		 * choice, the others untracked from here on */
		struct frame **fr = base.top ? &base.top : &base.below;
		*fr = flow_join_collapse(f, *fr);
		base.doubt = 1;
		if (!*fr && !err)
			err = jpb_err_nomem;
	}
	f->win_trunc = 0;
	base.edge = 0;
	base.mark = 0;
	base.score = 0;
	restart(f, base);
	return err;
}

int flow_settle_compiled(struct flow *f, uint32_t ev, struct frame *top,
			 uint8_t op)
{
	/* TOP is the event's innermost frame */
	int err = emit_compiled(f, &f->ev[ev], top->meth, op);
	flow_settle_state(f, top);
	return err;
}

void flow_settle_state(struct flow *f, struct frame *top)
{
	f->win_trunc = 0;
	restart(f, (struct node){ 0, top, NULL, LOST_NONE, 0, 0, 0 });
}

int flow_settle_interp(struct flow *f, uint32_t ev, uint8_t op, int emit_it,
		       struct frame *top)
{
	int err = 0;
	if (emit_it) {
		/* emit's rule for one state on one path */
		int doubt = f->win_trunc || f->nodes[0].doubt || top->doubt;
		prove(f, top->meth);
		f->meths[top->meth].used = 1;
		err = put_out(f, top->meth + 1,
			      (int32_t)flow_insn(f, top->meth, top->pos)->bci, op,
			      doubt ? JPB_FLOW_CHOSEN : JPB_FLOW_CERTAIN, doubt ? 2 : 1,
			      f->ev[ev].tsc);
	}
	f->win_trunc = 0;
	if (f->arena_frames > ARENA_COMPACT)
		top = arena_compact(f, top);
	/* nothing was pending (interp_fast): step 0 holds the one state,
	 * and only its top changes (restart's other stores cost ~2% of a
	 * SimLoop run, one per bytecode) */
	f->nodes[0].top = top;
	states_rewritten(f);
	return err;
}

/* The documented choice when no single state remains: the state of the
 * last step with the most evidence, the first in successor order on
 * ties. */
int flow_flush_first(struct flow *f)
{
	if (f->nsteps <= 1)
		return 0;
	const struct step *s = flow_cur_step(f);
	uint32_t best = s->first;
	for (uint32_t i = s->first + 1; i < s->first + s->n; i++)
		if (f->nodes[i].score > f->nodes[best].score)
			best = i;
	return flow_flush_some(f, best, 1);
}


int flow_reset_lost(struct flow *f, int lost)
{
	int err = flow_flush_first(f);
	restart(f, (struct node){ 0, NULL, NULL, (uint8_t)lost, 0, 0 });
	return err;
}

int flow_states_begin(struct flow *f)
{
	/* room for what jython's threads reach (64 k steps, 128 k nodes
	 * and edges) at once: doubling up to it copied ~6 MB through
	 * realloc, while room a thread leaves untouched costs no page */
	if (jpb_grow((void **)&f->steps, &f->caps, (1u << 16) - 1, sizeof(*f->steps)) ||
	    jpb_grow((void **)&f->nodes, &f->capn, (1u << 17) - 1, sizeof(*f->nodes)) ||
	    jpb_grow((void **)&f->edges, &f->cape, (1u << 17) - 1, sizeof(*f->edges)))
		return jpb_err_nomem;
	restart(f, (struct node){ 0, NULL, NULL, LOST_ANY, 0, 0 });
	return 0;
}
