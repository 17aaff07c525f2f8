// SPDX-License-Identifier: MIT
/*
 * The reconstruction automaton (docs/RECONSTRUCTION.md).
 *
 * Per thread, events are consumed in order.  Each event that can change
 * the position (an interpreted opcode, a compiled event, a method entry,
 * an exception or deopt continuation) is a *step*: the set of states
 * (call stacks) consistent with everything so far, each with edges to the
 * states of the previous step it came from.  When a step has one state,
 * every path to it is known: the steps since the last such point are
 * resolved backwards (the chosen path follows first edges; the states
 * still on some path to the single one give each event's candidate
 * count) and written out.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/flow_int.h"
#include "java/bytecodes.h"

#define MAX_UNWIND 64
#define MAX_PENDING_STEPS (1u << 16)
#define ARENA_COMPACT (1u << 20)

/* ---- u64 map ----------------------------------------------------------- */

static size_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

static int u64map_grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *k = calloc(ncap, sizeof(*k));
	uint32_t *v = calloc(ncap, sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = hash64(m->keys[i]) & (ncap - 1);
		while (k[j])
			j = (j + 1) & (ncap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = ncap;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap && u64map_grow(m))
		return -1;
	size_t j = hash64(key) & (m->cap - 1);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		m->n++;
	m->keys[j] = key;
	m->vals[j] = val;
	return 0;
}

int u64map_get(const struct u64map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return 0;
	size_t j = hash64(key) & (m->cap - 1);
	while (m->keys[j]) {
		if (m->keys[j] == key) {
			*val = m->vals[j];
			return 1;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return 0;
}

void u64map_fini(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- HotSpot bytecodes ------------------------------------------------- */

/* HotSpot's rewritten bytecodes (bytecodes.hpp, JDK 17..25 numbering),
 * from _fast_agetfield (203) on: the JVMS opcode each stands for and, for
 * the fused ones, the second instruction the same dispatch executes. */
static const struct { uint8_t java, fused; } fast_ops[] = {
	{ 0xb4, 0 }, { 0xb4, 0 }, { 0xb4, 0 }, { 0xb4, 0 }, /* 203 a b c d */
	{ 0xb4, 0 }, { 0xb4, 0 }, { 0xb4, 0 }, { 0xb4, 0 }, /* f i l s getfield */
	{ 0xb5, 0 }, { 0xb5, 0 }, { 0xb5, 0 }, { 0xb5, 0 }, /* 211 a b z c */
	{ 0xb5, 0 }, { 0xb5, 0 }, { 0xb5, 0 }, { 0xb5, 0 }, /* d f i l */
	{ 0xb5, 0 },                                        /* s putfield */
	{ 0x2a, 0 },                                        /* 220 fast_aload_0 */
	{ 0x2a, 0xb4 }, { 0x2a, 0xb4 }, { 0x2a, 0xb4 },     /* i a f access_0 */
	{ 0x15, 0 }, { 0x15, 0x15 }, { 0x15, 0x34 },        /* iload iload2 icaload */
	{ 0xb6, 0 },                                        /* 227 invokevfinal */
	{ 0xab, 0 }, { 0xab, 0 },                           /* linear/binaryswitch */
	{ 0x12, 0 }, { 0x13, 0 },                           /* aldc aldc_w */
	{ 0xb1, 0 },                                        /* return_register_finalizer */
	{ 0xb6, 0 },                                        /* 233 invokehandle */
	{ 0xb4, 0 }, { 0xb5, 0 }, { 0x2a, 0 }, { 0x15, 0 }, /* nofast_* */
};

int flow_java_opcode(unsigned op, int *fused)
{
	*fused = -1;
	if (op < 203)
		return jbc_info((uint8_t)op)->kind == JBC_INVALID ? -1 : (int)op;
	op -= 203;
	if (op >= sizeof(fast_ops) / sizeof(fast_ops[0]))
		return -1;
	if (fast_ops[op].fused)
		*fused = fast_ops[op].fused;
	return fast_ops[op].java;
}

/* ---- methods ------------------------------------------------------------ */

int flow_meth_index(struct flow *f, const struct jhier_method *hm,
		    uint32_t *out)
{
	if (u64map_get(&f->by_m, (uint64_t)(uintptr_t)hm->m, out))
		return 0;
	if (JPB_GROW(f->meths, f->nmeths, f->capm))
		return jpb_err_nomem;
	struct fmeth *fm = &f->meths[f->nmeths];
	memset(fm, 0, sizeof(*fm));
	fm->hm = *hm;
	fm->info.class_name = jcf_this_class(hm->cls);
	fm->info.name = hm->m->name;
	fm->info.descriptor = hm->m->descriptor;
	if (u64map_put(&f->by_m, (uint64_t)(uintptr_t)hm->m, (uint32_t)f->nmeths))
		return jpb_err_nomem;
	*out = (uint32_t)f->nmeths++;
	return 0;
}

/* The meths index of jmethodID ID; -1 when the program lacks it. */
static int64_t meth_of_id(struct flow *f, uint64_t id)
{
	uint32_t v;
	if (u64map_get(&f->by_id, id, &v))
		return (int64_t)v - 1;
	struct jhier_method hm;
	uint32_t idx = 0;
	int ok = jprog_method_by_id(f->p, id, &hm) == 0 &&
		 flow_meth_index(f, &hm, &idx) == 0;
	if (ok)
		f->meths[idx].info.method_id = id;
	if (u64map_put(&f->by_id, id, ok ? idx + 1 : 0))
		return -1;
	return ok ? (int64_t)idx : -1;
}

int flow_add_method_code(struct flow *f, uint64_t id, const char *class_sig,
			 const char *name, const char *sig, const uint8_t *code,
			 size_t len)
{
	uint32_t v;
	struct jhier_method hm;
	if (u64map_get(&f->by_id, id, &v) || !jprog_method_by_id(f->p, id, &hm))
		return 1;
	if (!len || len > 65535)
		return jpb_err_invalid;
	size_t lc = strlen(class_sig), ln = strlen(name), ls = strlen(sig);
	struct jcf_method *m = calloc(1, sizeof(*m));
	char *strs = malloc(lc + ln + ls + len + 3);
	uint32_t *sy = realloc(f->synth, (f->nsynth + 1) * sizeof(*sy));
	if (sy)
		f->synth = sy;
	if (!m || !strs || !sy || JPB_GROW(f->meths, f->nmeths, f->capm)) {
		free(m);
		free(strs);
		return jpb_err_nomem;
	}
	/* "LFoo;" -> "Foo" */
	size_t cl = lc >= 2 && class_sig[0] == 'L' ? lc - 2 : lc;
	memcpy(strs, class_sig + (cl != lc), cl);
	strs[cl] = 0;
	char *nm = strs + cl + 1, *sg = nm + ln + 1;
	memcpy(nm, name, ln + 1);
	memcpy(sg, sig, ls + 1);
	uint8_t *c = (uint8_t *)sg + ls + 1;
	memcpy(c, code, len);
	m->name = nm;
	m->descriptor = sg;
	m->code = c;
	m->code_length = (uint32_t)len;
	struct fmeth *fm = &f->meths[f->nmeths];
	memset(fm, 0, sizeof(*fm));
	fm->own = m;
	fm->strs = strs;
	fm->hm.m = m;
	if (jcfg_build(&fm->owncfg, m, NULL))
		fm->owncfg = NULL;
	fm->cfg = fm->owncfg;
	fm->cfg_tried = 1;
	fm->info = (struct flow_method_info){ id, strs, nm, sg };
	f->synth[f->nsynth++] = (uint32_t)f->nmeths;
	if (u64map_put(&f->by_m, (uint64_t)(uintptr_t)m, (uint32_t)f->nmeths) ||
	    u64map_put(&f->by_id, id, (uint32_t)f->nmeths + 1))
		return jpb_err_nomem;
	f->nmeths++;
	return 0;
}

const struct flow_method_info *flow_method(const struct flow *f, uint32_t idx)
{
	return idx >= 1 && idx <= f->nmeths ? &f->meths[idx - 1].info : NULL;
}

uint32_t flow_method_count(const struct flow *f)
{
	return (uint32_t)f->nmeths;
}

const struct jcfg *flow_meth_cfg(struct flow *f, uint32_t m)
{
	struct fmeth *fm = &f->meths[m];
	if (!fm->cfg_tried) {
		fm->cfg_tried = 1;
		if (fm->hm.m->code && jprog_cfg(f->p, fm->hm.m, &fm->cfg, NULL))
			fm->cfg = NULL;
	}
	return fm->cfg;
}

static const struct jcfg_insn *insn_of(struct flow *f, uint32_t meth,
				       uint32_t pos)
{
	return jcfg_insn(flow_meth_cfg(f, meth), pos);
}

/* ---- life cycle ---------------------------------------------------------- */

int flow_alloc(struct flow **out, struct jprog *p, const struct flow_opts *o)
{
	*out = NULL;
	if (!p)
		return jpb_err_invalid;
	struct flow *f = calloc(1, sizeof(*f));
	if (!f)
		return jpb_err_nomem;
	f->p = p;
	if (o)
		f->o = *o;
	if (!f->o.max_states)
		f->o.max_states = 256;
	if (!f->o.max_resync)
		f->o.max_resync = 64;
	if (!f->o.lookahead)
		f->o.lookahead = 8;
	f->no_recover = f->o.no_recover != 0;
	*out = f;
	return 0;
}

static void arena_free(struct chunk *c)
{
	while (c) {
		struct chunk *n = c->next;
		free(c);
		c = n;
	}
}

void flow_free(struct flow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nmeths; i++) {
		free(f->meths[i].own);
		free(f->meths[i].strs);
		jcfg_free(f->meths[i].owncfg);
	}
	free(f->meths);
	free(f->synth);
	free(f->link[0]);
	free(f->link[1]);
	u64map_fini(&f->by_m);
	u64map_fini(&f->by_id);
	for (size_t i = 0; i < f->ncodelets; i++)
		free(f->codelets[i]);
	free(f->codelets);
	free(f->opidx);
	free(f->pairstart);
	free(f->pairidx);
	free(f->rc);
	free(f->rpool);
	free(f->gaps);
	free(f->proven);
	free(f->nodes);
	free(f->edges);
	free(f->steps);
	arena_free(f->arena);
	free(f->out);
	free(f);
}

int flow_set_codelet(struct flow *f, uint32_t index, const char *description)
{
	if (index > (1u << 20))
		return jpb_err_invalid;
	if (index >= f->ncodelets) {
		char **v = realloc(f->codelets, (index + 1) * sizeof(*v));
		if (!v)
			return jpb_err_nomem;
		memset(v + f->ncodelets, 0, (index + 1 - f->ncodelets) * sizeof(*v));
		f->codelets = v;
		f->ncodelets = index + 1;
	}
	free(f->codelets[index]);
	f->codelets[index] = strdup(description ? description : "");
	return f->codelets[index] ? 0 : jpb_err_nomem;
}

static const char *codelet(const struct flow *f, uint64_t index)
{
	return index < f->ncodelets && f->codelets[index] ? f->codelets[index] : "";
}

/* ---- frames ---------------------------------------------------------------- */

static struct frame *frame_new(struct flow *f, struct frame *up, uint32_t meth,
			       uint32_t pos, int done)
{
	if (!f->arena || f->arena->used == 4096) {
		struct chunk *c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->next = f->arena;
		c->used = 0;
		f->arena = c;
	}
	struct frame *fr = &f->arena->f[f->arena->used++];
	f->arena_frames++;
	*fr = (struct frame){ up, meth, pos, (uint8_t)done, 0, 0 };
	return fr;
}

static int stack_eq(const struct frame *a, const struct frame *b)
{
	while (a != b) {
		if (!a || !b || a->meth != b->meth || a->pos != b->pos ||
		    a->done != b->done || a->comp != b->comp || a->act != b->act)
			return 0;
		a = a->up;
		b = b->up;
	}
	return 1;
}

/* Copy the stack under TOP into a fresh arena and drop the old one, so
 * memory stays bounded by the states alive, not by the thread's length. */
static struct frame *arena_compact(struct flow *f, struct frame *top)
{
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
	f->arena = NULL;
	f->arena_frames = 0;
	struct frame *up = NULL;
	for (size_t i = depth; i-- > 0;) {
		struct frame *n = frame_new(f, up, v[i]->meth, v[i]->pos, v[i]->done);
		if (!n) { /* keep the old arena: nothing is lost */
			arena_free(f->arena);
			f->arena = old;
			free(v);
			return top;
		}
		n->comp = v[i]->comp;
		n->act = v[i]->act;
		n->doubt = v[i]->doubt;
		up = n;
	}
	arena_free(old);
	free(v);
	return up;
}

/* ---- steps and nodes ------------------------------------------------------------ */

static struct step *cur_step(struct flow *f)
{
	return &f->steps[f->nsteps - 1];
}

static int step_begin(struct flow *f, uint32_t ev, int emit, uint8_t op)
{
	if (JPB_GROW(f->steps, f->nsteps, f->caps))
		return jpb_err_nomem;
	f->steps[f->nsteps++] = (struct step){ (uint32_t)f->nnodes, 0, ev,
					       (uint8_t)emit, op };
	return 0;
}

/* Add state (TOP, LOST) reached from node FROM to the current step. */
static int add_node_below(struct flow *f, struct frame *top, int lost,
			  uint32_t from, struct frame *below)
{
	struct step *s = cur_step(f);
	uint32_t at = UINT32_MAX;
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct node *n = &f->nodes[i];
		if (n->lost == lost && stack_eq(n->top, top) && n->below == below) {
			at = i;
			break;
		}
	}
	if (at == UINT32_MAX) {
		if (s->n >= f->o.max_states) {
			/* documented cap: later states are dropped, and with
			 * them the right to call what survives certain */
			s->trunc = 1;
			f->win_trunc = 1;
			return 0;
		}
		if (JPB_GROW(f->nodes, f->nnodes, f->capn))
			return jpb_err_nomem;
		at = (uint32_t)f->nnodes++;
		f->nodes[at] = (struct node){ 0, top, below, (uint8_t)lost, 0,
					      f->nodes[from].doubt, 0 };
		s->n++;
	}
	if (JPB_GROW(f->edges, f->nedges, f->cape))
		return jpb_err_nomem;
	struct node *n = &f->nodes[at];
	n->doubt |= f->nodes[from].doubt;
	/* The first edge is the chosen predecessor: the one with the most
	 * evidence, the earliest on ties. */
	uint64_t sc = f->nodes[from].score +
		      (top && top->meth < f->nproven ? f->proven[top->meth] : 0);
	struct edge e = { from, 0 };
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

static int add_node(struct flow *f, struct frame *top, int lost, uint32_t from)
{
	return add_node_below(f, top, lost, from, NULL);
}

/* Explained states beat unexplained ones: drop lost nodes when the step
 * has any other. */
static void drop_lost(struct flow *f)
{
	struct step *s = cur_step(f);
	uint32_t w = s->first, known = 0;
	for (uint32_t i = s->first; i < s->first + s->n; i++)
		known += !f->nodes[i].lost;
	if (!known || known == s->n)
		return;
	for (uint32_t i = s->first; i < s->first + s->n; i++)
		if (!f->nodes[i].lost)
			f->nodes[w++] = f->nodes[i];
	s->n = known;
	f->nnodes = s->first + s->n;
}

/* Evidence: method M was placed for sure once more. */
static void prove(struct flow *f, uint32_t m)
{
	if (m >= f->nproven) {
		size_t n = f->nmeths > m ? f->nmeths : m + 1;
		uint32_t *v = realloc(f->proven, n * sizeof(*v));
		if (!v)
			return; /* evidence is optional */
		memset(v + f->nproven, 0, (n - f->nproven) * sizeof(*v));
		f->proven = v;
		f->nproven = n;
	}
	if (f->proven[m] < (1u << 20))
		f->proven[m]++;
}

/* Node marks while a window is resolved: on a path to the chosen end
 * state, on a path to any end state. */
enum { MARK_CHOSEN = 1, MARK_ANY = 2 };

/* Candidates: distinct positions of the states of step S with a mark in
 * BIT, i.e. still on a path to the resolved end. */
static uint32_t count_cands(const struct flow *f, const struct step *s,
			    unsigned bit)
{
	uint32_t nc = 0;
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

static int emit(struct flow *f, const struct step *s, const struct node *chosen,
		int doubt)
{
	const struct flow_ev *e = &f->ev[s->ev];
	struct jpb_flow_event o = { 0, -1, s->op, JPB_FLOW_UNKNOWN, 0, 0, e->tsc };
	if (e->kind == JPB_DEV_COMPILED) {
		int64_t m = e->nframes ? meth_of_id(f, e->frames[0].method_id) : -1;
		o.opcode = 0;
		if (m >= 0) {
			const struct jcfg *g = flow_meth_cfg(f, m);
			int32_t i = g ? jcfg_index_of(g, (uint32_t)e->frames[0].bci) : -1;
			o.method = (uint32_t)m + 1;
			o.bci = e->frames[0].bci;
			o.opcode = i >= 0 ? jcfg_insn(g, (uint32_t)i)->op : 0;
			o.status = JPB_FLOW_DECODED;
			o.ncand = 1;
			f->meths[m].used = 1;
			prove(f, (uint32_t)m);
		}
	} else if (!chosen->lost) {
		uint32_t nc = count_cands(f, s, MARK_ANY);
		const struct frame *t = chosen->top;
		/* Evidence for the choice rule: one position on a path to the
		 * chosen end (the doubt below changes labels, not choices). */
		if (count_cands(f, s, MARK_CHOSEN) <= 1)
			prove(f, t->meth);
		/* A guessed or truncated state set leaves at least one
		 * untracked alternative: never certain (RECONSTRUCTION.md). */
		if ((doubt || chosen->doubt || t->doubt) && nc < 2)
			nc = 2;
		o.method = t->meth + 1;
		o.bci = (int32_t)insn_of(f, t->meth, t->pos)->bci;
		o.ncand = (uint16_t)(nc > 65535 ? 65535 : nc);
		o.status = nc <= 1 ? JPB_FLOW_CERTAIN : JPB_FLOW_CHOSEN;
		f->meths[t->meth].used = 1;
	}
	if (JPB_GROW(f->out, f->nout, f->capo))
		return jpb_err_nomem;
	f->out[f->nout++] = o;
	f->sum.by_status[o.status]++;
	f->sum.events++;
	return 0;
}

/* Resolve every pending step up to the last one, whose node CHOSEN (an
 * index into the last step) ends the path, and restart from it.  The
 * candidates are the states on a path to CHOSEN, or with ALL to any
 * state of the last step (all of them are consistent with the trace). */
static int flush_some(struct flow *f, uint32_t chosen, int all)
{
	size_t last = f->nsteps - 1;
	const struct step *ls = &f->steps[last];
	for (size_t i = 0; i < f->nnodes; i++)
		f->nodes[i].mark = 0;
	for (uint32_t i = ls->first; all && i < ls->first + ls->n; i++)
		f->nodes[i].mark = MARK_ANY;
	f->nodes[chosen].mark = MARK_CHOSEN | MARK_ANY;
	for (size_t s = last; s >= 1; s--) {
		const struct step *st = &f->steps[s];
		for (uint32_t i = st->first; i < st->first + st->n; i++) {
			if (!f->nodes[i].mark)
				continue;
			for (uint32_t e = f->nodes[i].edge; e; e = f->edges[e - 1].next)
				f->nodes[f->edges[e - 1].from].mark |= f->nodes[i].mark;
		}
	}
	uint32_t *path = malloc((last + 1) * sizeof(*path));
	if (!path)
		return jpb_err_nomem;
	uint32_t cur = chosen;
	for (size_t s = last; s >= 1; s--) {
		path[s] = cur;
		cur = f->edges[f->nodes[cur].edge - 1].from;
	}
	int err = 0;
	for (size_t s = 1; s <= last && !err; s++)
		if (f->steps[s].emit)
			err = emit(f, &f->steps[s], &f->nodes[path[s]], f->win_trunc);
	free(path);
	struct node base = f->nodes[chosen];
	/* what follows a choice among several end states depends on it */
	base.doubt |= all && ls->n > 1;
	f->win_trunc = 0;
	base.edge = 0;
	base.mark = 0;
	base.score = 0;
	if (base.top && f->arena_frames > ARENA_COMPACT)
		base.top = arena_compact(f, base.top);
	f->nodes[0] = base;
	f->nnodes = 1;
	f->nedges = 0;
	f->steps[0] = (struct step){ 0, 1, 0, 0, 0 };
	f->nsteps = 1;
	return err;
}

/* The documented choice when no single state remains: the state of the
 * last step with the most evidence, the first in successor order on
 * ties. */
static int flush_first(struct flow *f)
{
	if (f->nsteps <= 1)
		return 0;
	const struct step *s = cur_step(f);
	uint32_t best = s->first;
	for (uint32_t i = s->first + 1; i < s->first + s->n; i++)
		if (f->nodes[i].score > f->nodes[best].score)
			best = i;
	return flush_some(f, best, 1);
}


static int reset_lost(struct flow *f, int lost)
{
	int err = flush_first(f);
	f->nodes[0] = (struct node){ 0, NULL, NULL, (uint8_t)lost, 0, 0 };
	return err;
}

/* ---- the automaton's transitions ---------------------------------------- */

static int is_invoke_at(struct flow *f, const struct frame *t)
{
	return t && t->done && flow_meth_cfg(f, t->meth) &&
	       jbc_is_invoke(insn_of(f, t->meth, t->pos)->kind);
}

/* Does the invoke at frame T have CALLEE among its candidates?  Adds the
 * candidates' CFG frames to the current step when PUSH. */
static int call_targets(struct flow *f, const struct frame *t,
			const struct jhier_method **out)
{
	const struct fmeth *fm = &f->meths[t->meth];
	if (!fm->hm.cls)
		return 0;
	int n = jprog_call_targets(f->p, fm->hm.cls, fm->hm.loader, fm->hm.m,
				   t->pos, out);
	return n < 0 ? 0 : n;
}

/* Methods of missing (hidden) classes that a virtual or interface call
 * at T may reach: same name and descriptor.  Adds them as callees. */
static int hidden_targets(struct flow *f, const struct frame *t, uint32_t from)
{
	const struct fmeth *fm = &f->meths[t->meth];
	const struct jcfg_insn *in = insn_of(f, t->meth, t->pos);
	struct jcf_ref ref;
	if (!f->nsynth || !fm->hm.cls ||
	    (in->kind != JBC_INVOKE_VIRTUAL && in->kind != JBC_INVOKE_INTERFACE) ||
	    jcf_cp_ref(fm->hm.cls, in->cp_index, &ref))
		return 0;
	int err = 0;
	for (size_t k = 0; k < f->nsynth && !err; k++) {
		const struct fmeth *c = &f->meths[f->synth[k]];
		if (!flow_meth_cfg(f, f->synth[k]) || strcmp(c->info.name, ref.name) ||
		    strcmp(c->info.descriptor, ref.descriptor))
			continue;
		struct frame *n = frame_new(f, (struct frame *)t, f->synth[k], 0, 0);
		if (n)
			n->doubt = t->doubt;
		err = n ? add_node(f, n, LOST_NONE, from) : jpb_err_nomem;
	}
	return err;
}

static int link_add(struct flow *f, int which, uint32_t m)
{
	uint32_t *v = realloc(f->link[which], (f->nlink[which] + 1) * sizeof(*v));
	if (!v)
		return jpb_err_nomem;
	f->link[which] = v;
	v[f->nlink[which]++] = m;
	return 0;
}

/* The JDK-generated frames method-handle linkage runs first: for an
 * invokedynamic call site, Invokers$Holder's linkTo* adapters; for
 * MethodHandle.invoke*, LambdaForm code (the java/lang/invoke *$Holder
 * classes and hidden LambdaForm$ classes). */
static int build_link(struct flow *f)
{
	static const char *const holders[] = {
		"java/lang/invoke/Invokers$Holder",
		"java/lang/invoke/DirectMethodHandle$Holder",
		"java/lang/invoke/DelegatingMethodHandle$Holder",
		"java/lang/invoke/LambdaForm$Holder",
	};
	struct jhier *h = jprog_hier(f->p);
	int err = 0;
	f->link_built = 1;
	/* hidden LambdaForms first: the states cap keeps the earliest */
	for (size_t k = 0; k < f->nsynth && !err; k++)
		if (strstr(f->meths[f->synth[k]].info.class_name, "LambdaForm$") &&
		    f->meths[f->synth[k]].cfg)
			err = link_add(f, 1, f->synth[k]);
	for (size_t c = 0; c < 4 && !err; c++) {
		struct jhier_method hm = { 0 };
		if (!(hm.cls = jhier_class(h, holders[c], 0)))
			continue;
		for (unsigned k = 0; k < jcf_method_count(hm.cls) && !err; k++) {
			uint32_t m;
			hm.m = jcf_method(hm.cls, k);
			if (!hm.m->code || (err = flow_meth_index(f, &hm, &m)) ||
			    !flow_meth_cfg(f, m))
				continue;
			if (c == 0 && !strncmp(hm.m->name, "linkTo", 6))
				err = link_add(f, 0, m);
			if (!err)
				err = link_add(f, 1, m);
		}
	}
	return err;
}

static int linkage_targets(struct flow *f, const struct frame *t, uint32_t from)
{
	const struct fmeth *fm = &f->meths[t->meth];
	const struct jcfg_insn *in = insn_of(f, t->meth, t->pos);
	struct jcf_ref ref;
	int which = -1;
	if (!fm->hm.cls || jcf_cp_ref(fm->hm.cls, in->cp_index, &ref))
		return 0;
	if (in->kind == JBC_INVOKE_DYNAMIC)
		which = 0;
	else if (in->kind == JBC_INVOKE_VIRTUAL && ref.class_name &&
		 !strcmp(ref.class_name, "java/lang/invoke/MethodHandle") &&
		 !strncmp(ref.name, "invoke", 6))
		which = 1;
	if (which < 0)
		return 0;
	int err = f->link_built ? 0 : build_link(f);
	for (size_t k = 0; k < f->nlink[which] && !err; k++) {
		struct frame *n = frame_new(f, (struct frame *)t, f->link[which][k], 0, 0);
		if (n)
			n->doubt = t->doubt;
		err = n ? add_node(f, n, LOST_NONE, from) : jpb_err_nomem;
	}
	return err;
}

static int can_call(struct flow *f, const struct frame *t, uint32_t callee)
{
	if (!f->meths[t->meth].hm.cls) /* hidden-class code: callee unknown */
		return 1;
	const struct jhier_method *c;
	int n = call_targets(f, t, &c);
	for (int i = 0; i < n; i++) {
		uint32_t idx;
		if (!flow_meth_index(f, &c[i], &idx) && idx == callee)
			return 1;
	}
	return 0;
}

/* The opcodes the automaton will see from event I on (fused dispatches
 * expanded), up to MAX, stopping at any other event. */
static size_t lookahead_ops(const struct flow *f, uint32_t i, uint8_t *ops,
			    size_t max)
{
	size_t k = 0;
	for (size_t j = i; j < f->nev && k < max; j++) {
		const struct flow_ev *e = &f->ev[j];
		if (e->kind != JPB_DEV_INTERP)
			break;
		int fused, op = flow_java_opcode(e->opcode, &fused);
		if (op < 0)
			break;
		ops[k++] = (uint8_t)op;
		if (fused >= 0 && k < max)
			ops[k++] = (uint8_t)fused;
	}
	return k;
}

/* Does HotSpot run the instruction at POS (opcode OP) and the next one as
 * one dispatch?  Its rewriter fuses aload_0 + getfield (fast_Xaccess_0),
 * iload + iload (fast_iload2) and iload + caload (fast_icaload); the
 * dispatch then shows the first opcode (or the fused one, mapped back),
 * and JVMTI steps report the first instruction only. */
static int fuses(uint8_t op, const struct jcfg *g, uint32_t pos)
{
	if (op != 0x2a && op != 0x15)
		return 0;
	uint32_t n;
	const uint32_t *s = jcfg_succs(g, pos, &n);
	if (n != 1)
		return 0;
	uint8_t next = jcfg_insn(g, s[0])->op;
	return op == 0x2a ? next == 0xb4 : next == 0x15 || next == 0x34;
}

/* Can the code from instruction POS (which ran OPS[0]) go on to run
 * OPS[1..N-1] within the method?  Calls, returns and throws end the check
 * successfully: what follows is another method's business. */
static int explains(struct flow *f, uint32_t meth, uint32_t pos,
		    const uint8_t *ops, size_t n, unsigned *budget)
{
	if (n <= 1 || !*budget)
		return 1;
	--*budget;
	const struct jcfg *g = flow_meth_cfg(f, meth);
	unsigned kind = jcfg_insn(g, pos)->kind;
	if (jbc_is_invoke(kind) || kind == JBC_RETURN || kind == JBC_ATHROW)
		return 1;
	uint32_t ns;
	const uint32_t *s = jcfg_succs(g, pos, &ns);
	for (uint32_t k = 0; k < ns; k++)
		if (jcfg_insn(g, s[k])->op == ops[1] &&
		    explains(f, meth, s[k], ops + 1, n - 1, budget))
			return 1;
	if (ns == 1 && fuses(jcfg_insn(g, pos)->op, g, pos)) {
		s = jcfg_succs(g, s[0], &ns);
		for (uint32_t k = 0; k < ns; k++)
			if (jcfg_insn(g, s[k])->op == ops[1] &&
			    explains(f, meth, s[k], ops + 1, n - 1, budget))
				return 1;
	}
	return 0;
}

/* Call FN(f, key, value) for every instruction of method M: VALUE is
 * (M, bci), KEY (opcode, next opcode) once per distinct next opcode the
 * lookahead can see (the successors', and after a fused pair the
 * second's successors'); invokes, returns and throws end a lookahead and
 * get (opcode, 0xff).  Read from the raw bytecode, so that no CFG is
 * built for a method no resynchronisation reaches; a switch, jsr or ret
 * asks the method's CFG (rare). */
static void method_pairs(struct flow *f, uint32_t m,
			 void (*fn)(struct flow *, uint32_t, uint64_t))
{
	const struct jcf_method *jm = f->meths[m].hm.m;
	const uint8_t *code = jm->code;
	size_t len = jm->code ? jm->code_length : 0;
	for (size_t bci = 0; bci < len;) {
		int l = jbc_length(code, len, bci);
		if (l <= 0)
			return; /* undefined code: its CFG fails too */
		uint8_t op = code[bci], seen[32] = { 0 }, nx[3];
		unsigned kind = jbc_info(op)->kind, n = 0;
		uint64_t v = (uint64_t)m << 32 | bci;
		long t = jbc_branch_target(code, len, bci);
		size_t next = bci + (size_t)l;
		if (op == JBC_WIDE && bci + 1 < len && code[bci + 1] == 0xa9)
			kind = JBC_RET;
		if (jbc_is_invoke(kind) || kind == JBC_RETURN || kind == JBC_ATHROW) {
			fn(f, (uint32_t)op << 8 | 0xff, v);
		} else if (kind == JBC_SWITCH || kind == JBC_JSR || kind == JBC_RET) {
			const struct jcfg *g = flow_meth_cfg(f, m);
			int32_t i = g ? jcfg_index_of(g, (uint32_t)bci) : -1;
			uint32_t ns = 0;
			const uint32_t *sc = i >= 0 ? jcfg_succs(g, (uint32_t)i, &ns) : NULL;
			for (uint32_t k = 0; k < ns; k++) {
				uint8_t o = jcfg_insn(g, sc[k])->op;
				if (!(seen[o >> 3] & (1u << (o & 7))))
					fn(f, (uint32_t)op << 8 | o, v);
				seen[o >> 3] |= (uint8_t)(1u << (o & 7));
			}
		} else {
			if (kind != JBC_GOTO && next < len)
				nx[n++] = code[next];
			if (kind != JBC_OTHER && t >= 0 && (size_t)t < len)
				nx[n++] = code[t];
			/* a fused pair: what follows its second instruction */
			if (kind == JBC_OTHER && n == 1 &&
			    ((op == 0x2a && nx[0] == 0xb4) ||
			     (op == 0x15 && (nx[0] == 0x15 || nx[0] == 0x34)))) {
				int l2 = jbc_length(code, len, next);
				if (l2 > 0 && next + (size_t)l2 < len)
					nx[n++] = code[next + (size_t)l2];
			}
			for (unsigned k = 0; k < n; k++) {
				uint8_t o = nx[k];
				if (!(seen[o >> 3] & (1u << (o & 7))))
					fn(f, (uint32_t)op << 8 | o, v);
				seen[o >> 3] |= (uint8_t)(1u << (o & 7));
			}
		}
		bci = next;
	}
}

static void pair_count(struct flow *f, uint32_t key, uint64_t v)
{
	(void)v;
	f->pairstart[key + 1]++;
}

static void pair_fill(struct flow *f, uint32_t key, uint64_t v)
{
	f->pairidx[f->pairstart[key]++] = v;
}

/* Every instruction of method M by opcode: counted into COUNT, or stored
 * at FILL's positions in the opcode index. */
static void method_ops(struct flow *f, uint32_t m, uint32_t *count,
		       uint32_t *fill)
{
	const struct jcf_method *jm = f->meths[m].hm.m;
	size_t len = jm->code ? jm->code_length : 0;
	for (size_t bci = 0; bci < len;) {
		int l = jbc_length(jm->code, len, bci);
		if (l <= 0)
			return;
		uint8_t op = jm->code[bci];
		if (fill)
			f->opidx[fill[op]++] = (uint64_t)m << 32 | bci;
		else
			count[op]++;
		bci += (size_t)l;
	}
}

/* The resync index over every loaded method: per opcode and per (opcode,
 * next opcode), the (method, bci) pairs in program order. */
static int build_opidx(struct flow *f)
{
	struct jhier *h = jprog_hier(f->p);
	size_t nc = jhier_class_count(h);
	for (size_t i = 0; i < nc; i++) {
		struct jhier_method hm = { 0 };
		hm.cls = jhier_class_at(h, i, &hm.loader);
		for (unsigned k = 0; k < jcf_method_count(hm.cls); k++) {
			hm.m = jcf_method(hm.cls, k);
			uint32_t idx;
			if (hm.m->code && flow_meth_index(f, &hm, &idx))
				return jpb_err_nomem;
		}
	}
	uint32_t count[256] = { 0 }, fill[256];
	for (size_t m = 0; m < f->nmeths; m++)
		method_ops(f, (uint32_t)m, count, NULL);
	f->opstart[0] = 0;
	for (int op = 0; op < 256; op++)
		f->opstart[op + 1] = f->opstart[op] + count[op];
	f->opidx = malloc(((size_t)f->opstart[256] + 1) * sizeof(*f->opidx));
	f->pairstart = calloc(65537, sizeof(*f->pairstart));
	if (!f->opidx || !f->pairstart)
		return jpb_err_nomem;
	memcpy(fill, f->opstart, sizeof(fill));
	for (size_t m = 0; m < f->nmeths; m++) {
		method_ops(f, (uint32_t)m, NULL, fill);
		method_pairs(f, (uint32_t)m, pair_count);
	}
	for (uint32_t k = 0; k < 65536; k++)
		f->pairstart[k + 1] += f->pairstart[k];
	f->pairidx = malloc(((size_t)f->pairstart[65536] + 1) * sizeof(*f->pairidx));
	if (!f->pairidx)
		return jpb_err_nomem;
	for (size_t m = 0; m < f->nmeths; m++)
		method_pairs(f, (uint32_t)m, pair_fill);
	/* pair_fill left pairstart[k] at the end of list k */
	for (uint32_t k = 65536; k > 0; k--)
		f->pairstart[k] = f->pairstart[k - 1];
	f->pairstart[0] = 0;
	f->opidx_built = 1;
	return 0;
}

static int is_handler(const struct fmeth *fm, uint32_t bci)
{
	for (unsigned k = 0; k < fm->hm.m->nexc; k++)
		if (fm->hm.m->exc[k].handler_pc == bci)
			return 1;
	return 0;
}

static uint64_t ops_hash(int lost, const uint8_t *ops, size_t n)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)lost;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ops[i]) * 1099511628211ull;
	return (h ^ n) * 1099511628211ull;
}

/* The instructions where OPS (OPS[0] == OP) can run given LOST, from the
 * cache or a scan of the opcode index: *CAND (into f->rpool) and *NC, or
 * *NC = RCACHE_TOO_MANY when more than max_resync fit. */
static int resync_candidates(struct flow *f, uint8_t op, int lost,
			     const uint8_t *ops, size_t n, const uint64_t **cand,
			     uint32_t *nc)
{
	if (!f->rc && !(f->rc = calloc(RCACHE_SIZE, sizeof(*f->rc))))
		return jpb_err_nomem;
	uint64_t h = ops_hash(lost, ops, n);
	struct rcache *e = &f->rc[h & (RCACHE_SIZE - 1)];
	if (e->used && e->h == h && e->lost == lost && e->n == n &&
	    !memcmp(e->ops, ops, n)) {
		*cand = f->rpool + e->off;
		*nc = e->cnt;
		return 0;
	}
	if (f->nrpool > (1u << 22)) { /* the pool only grows: start over */
		f->nrpool = 0;
		memset(f->rc, 0, RCACHE_SIZE * sizeof(*f->rc));
	}
	/* room for max_resync + 1 entries from nrpool on */
	if (jpb_grow((void **)&f->rpool, &f->caprpool, f->nrpool + f->o.max_resync,
		     sizeof(*f->rpool)))
		return jpb_err_nomem;
	uint64_t *out = f->rpool + f->nrpool;
	uint32_t cnt = 0;
	/* Candidates in program order: the opcode's list, or with a next
	 * opcode the merge of its (op, next) and (op, end) lists. */
	const uint64_t *la = f->opidx + f->opstart[op], *lb = NULL;
	size_t na = f->opstart[op + 1] - f->opstart[op], nb = 0, ia = 0, ib = 0;
	if (n >= 2) {
		uint32_t ka = (uint32_t)op << 8 | ops[1], kb = (uint32_t)op << 8 | 0xff;
		la = f->pairidx + f->pairstart[ka];
		na = f->pairstart[ka + 1] - f->pairstart[ka];
		lb = f->pairidx + f->pairstart[kb];
		nb = f->pairstart[kb + 1] - f->pairstart[kb];
	}
	while (ia < na || ib < nb) {
		uint64_t v = ib >= nb || (ia < na && la[ia] < lb[ib]) ? la[ia++] : lb[ib++];
		uint32_t m = (uint32_t)(v >> 32);
		/* the index holds bcis: the CFG is built for candidates only */
		const struct jcfg *g = flow_meth_cfg(f, m);
		int32_t at = g ? jcfg_index_of(g, (uint32_t)v) : -1;
		if (at < 0)
			continue;
		uint32_t pos = (uint32_t)at;
		v = (uint64_t)m << 32 | pos;
		if (lost == LOST_AT_ENTRY && pos != 0)
			continue;
		if (lost == LOST_AFTER_RET &&
		    (pos == 0 || !jbc_is_invoke(jcfg_insn(g, pos - 1)->kind)))
			continue;
		if (lost == LOST_AT_HANDLER &&
		    !is_handler(&f->meths[m], jcfg_insn(g, pos)->bci))
			continue;
		unsigned budget = 4096;
		if (!explains(f, m, pos, ops, n, &budget))
			continue;
		if (cnt == f->o.max_resync) {
			cnt = RCACHE_TOO_MANY;
			break;
		}
		out[cnt++] = v;
	}
	*e = (struct rcache){ h, 1, (uint8_t)lost, (uint8_t)n, { 0 },
			      (uint32_t)f->nrpool, cnt };
	memcpy(e->ops, ops, n);
	if (cnt != RCACHE_TOO_MANY)
		f->nrpool += cnt;
	*cand = f->rpool + e->off;
	*nc = cnt;
	return 0;
}

/* Search the whole program for where the opcode of event I (first of the
 * step's opcodes OP) can run, given what LOST says; add the candidates
 * that explain the next opcodes, or a lost node when there are none or
 * too many. */
static int resync(struct flow *f, uint32_t i, uint8_t op, int lost, uint32_t from,
		  struct frame *below)
{
	if (!f->opidx_built && build_opidx(f))
		return jpb_err_nomem;
	uint8_t ops[64];
	unsigned k = f->o.lookahead < 64 ? f->o.lookahead : 64;
	size_t n = lookahead_ops(f, i, ops, k);
	if (!n || ops[0] != op) { /* the second half of a fused dispatch */
		ops[0] = op;
		n = 1;
	}
	const uint64_t *cand;
	uint32_t nc;
	int err = resync_candidates(f, op, lost, ops, n, &cand, &nc);
	f->sum.resyncs++;
	if (err)
		return err;
	if (nc == RCACHE_TOO_MANY || !nc)
		return add_node_below(f, NULL, LOST_ANY, from, below);
	for (uint32_t c = 0; c < nc && !err; c++) {
		struct frame *t = frame_new(f, below, (uint32_t)(cand[c] >> 32),
					    (uint32_t)cand[c], 1);
		if (t)
			t->doubt = nc > 1; /* the trace left one position: certain */
		err = t ? add_node(f, t, LOST_NONE, from) : jpb_err_nomem;
	}
	return err;
}

/* A frame like T but at POS (run when DONE). */
static int add_at(struct flow *f, const struct frame *t, uint32_t pos,
		  int done, uint32_t from)
{
	struct frame *n = frame_new(f, t->up, t->meth, pos, done);
	if (n)
		n->doubt = t->doubt;
	return n ? add_node(f, n, LOST_NONE, from) : jpb_err_nomem;
}

static int interp_from(struct flow *f, uint32_t i, struct frame *t, uint8_t op,
		       uint32_t from);


/* A compiled activation on top of the stack, whose bytecode the
 * interpreter now runs: after its return the caller goes on; otherwise it
 * was deoptimised and the interpreter re-executes or continues it. */
static int interp_over_compiled(struct flow *f, uint32_t i, struct frame *t,
				uint8_t op, uint32_t from)
{
	const struct frame *a = t;
	while (!a->act && a->up)
		a = a->up;
	if (insn_of(f, t->meth, t->pos)->kind == JBC_RETURN) {
		if (!a->up)
			return resync(f, i, op, LOST_AFTER_RET, from, NULL);
		return a->up->comp ? 0 : interp_from(f, i, a->up, op, from);
	}
	struct frame *up = a->up, *top = NULL;
	/* Rebuild the activation as interpreted frames, outermost first. */
	const struct frame *chain[JPB_DECODED_MAX_FRAMES];
	size_t nch = 0;
	for (const struct frame *g = t; nch < JPB_DECODED_MAX_FRAMES; g = g->up) {
		chain[nch++] = g;
		if (g == a)
			break;
	}
	for (size_t k = nch; k-- > 0;) {
		top = frame_new(f, up, chain[k]->meth, chain[k]->pos, 1);
		if (!top)
			return jpb_err_nomem;
		top->doubt = chain[k]->doubt;
		up = top;
	}
	return interp_from(f, i, top, op, from);
}

/* Add every state in which the interpreter, with T on top of the stack,
 * runs OP next. */
static int interp_from(struct flow *f, uint32_t i, struct frame *t, uint8_t op,
		       uint32_t from)
{
	if (t->comp)
		return interp_over_compiled(f, i, t, op, from);
	const struct jcfg *g = flow_meth_cfg(f, t->meth);
	if (!t->done)
		return jcfg_insn(g, t->pos)->op == op ? add_at(f, t, t->pos, 1, from) : 0;
	unsigned kind = jcfg_insn(g, t->pos)->kind;
	if (kind == JBC_RETURN) {
		if (!t->up)
			return resync(f, i, op, LOST_AFTER_RET, from, NULL);
		return t->up->comp ? 0 : interp_from(f, i, t->up, op, from);
	}
	uint32_t ns;
	const uint32_t *s = jcfg_succs(g, t->pos, &ns);
	int err = 0;
	for (uint32_t k = 0; k < ns && !err; k++)
		if (jcfg_insn(g, s[k])->op == op)
			err = add_at(f, t, s[k], 1, from);
	if (!err && ns == 1 && fuses(jcfg_insn(g, t->pos)->op, g, t->pos)) {
		/* t->pos and its successor were one dispatch */
		s = jcfg_succs(g, s[0], &ns);
		for (uint32_t k = 0; k < ns && !err; k++)
			if (jcfg_insn(g, s[k])->op == op)
				err = add_at(f, t, s[k], 1, from);
	}
	return err;
}

static int step_interp(struct flow *f, uint32_t i, uint8_t op, int emit)
{
	uint32_t p0 = cur_step(f)->first, pn = cur_step(f)->n;
	int err = step_begin(f, i, emit, op);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		struct node *n = &f->nodes[k];
		if (n->lost)
			err = resync(f, i, op, n->lost, k, n->below);
		else
			err = interp_from(f, i, n->top, op, k);
	}
	return err;
}

static int step_entry(struct flow *f, uint32_t i, const char *desc)
{
	/* Native and intrinsic entries run no bytecode of the callee. */
	if (strstr(desc, "native") || strstr(desc, "intrinsic"))
		return 0;
	uint32_t p0 = cur_step(f)->first, pn = cur_step(f)->n;
	int err = step_begin(f, i, 0, 0);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		struct frame *t = f->nodes[k].top;
		if (!t) {
			err = add_node(f, NULL, LOST_AT_ENTRY, k);
			continue;
		}
		if (!is_invoke_at(f, t))
			continue;
		const struct jhier_method *c;
		int nc = call_targets(f, t, &c);
		uint32_t before = cur_step(f)->n;
		for (int j = 0; j < nc && !err; j++) {
			uint32_t m;
			err = flow_meth_index(f, &c[j], &m);
			if (err || !flow_meth_cfg(f, m))
				continue;
			struct frame *n = frame_new(f, t, m, 0, 0);
			if (n)
				n->doubt = t->doubt;
			err = n ? add_node(f, n, LOST_NONE, k) : jpb_err_nomem;
		}
		if (!err)
			err = linkage_targets(f, t, k);
		if (!err)
			err = hidden_targets(f, t, k);
		if (!err && cur_step(f)->n == before)
			/* an unknown callee: found by resynchronisation, on top
			 * of its caller's known frames */
			err = add_node_below(f, NULL, LOST_AT_ENTRY, k, t);
	}
	return err;
}

/* An exception continues at a handler of the top frame or of a caller. */
static int step_exception(struct flow *f, uint32_t i)
{
	uint32_t p0 = cur_step(f)->first, pn = cur_step(f)->n;
	int err = step_begin(f, i, 0, 0);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		struct frame *t = f->nodes[k].top;
		int depth = 0;
		for (; t && depth < MAX_UNWIND && !err; t = t->up, depth++) {
			if (t->comp)
				continue; /* a compiled handler shows as compiled events */
			uint32_t nx;
			const uint32_t *x = jcfg_xsuccs(flow_meth_cfg(f, t->meth), t->pos, &nx);
			for (uint32_t h = 0; h < nx && !err; h++)
				err = add_at(f, t, x[h], 0, k);
		}
		if (!t && !err)
			err = add_node(f, NULL, LOST_AT_HANDLER, k);
	}
	return err;
}

/* Deoptimisation: the top compiled activation becomes interpreted frames
 * and its bytecode is re-executed (or, if it completed, continued). */
static int step_deopt(struct flow *f, uint32_t i)
{
	uint32_t p0 = cur_step(f)->first, pn = cur_step(f)->n;
	int err = step_begin(f, i, 0, 0);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		struct frame *t = f->nodes[k].top;
		if (!t || !t->comp) {
			err = add_node(f, t, f->nodes[k].lost, k);
			continue;
		}
		const struct frame *chain[JPB_DECODED_MAX_FRAMES];
		size_t nch = 0;
		const struct frame *g = t;
		for (; nch < JPB_DECODED_MAX_FRAMES; g = g->up) {
			chain[nch++] = g;
			if (g->act || !g->up)
				break;
		}
		for (int redo = 1; redo >= 0 && !err; redo--) {
			struct frame *up = chain[nch - 1]->up, *top = NULL;
			for (size_t j = nch; j-- > 0;) {
				top = frame_new(f, up, chain[j]->meth, chain[j]->pos,
						j ? 1 : !redo);
				if (!top)
					return jpb_err_nomem;
				top->doubt = chain[j]->doubt;
				up = top;
			}
			err = add_node(f, top, LOST_NONE, k);
		}
	}
	return err;
}

/* Frames of compiled event E on BASE: outermost first, all compiled. */
static struct frame *push_compiled(struct flow *f, struct frame *base,
				   const uint32_t *meth, const uint32_t *pos,
				   uint32_t nf)
{
	struct frame *up = base;
	for (uint32_t k = nf; k-- > 0;) {
		struct frame *n = frame_new(f, up, meth[k], pos[k], 1);
		if (!n)
			return NULL;
		n->comp = 1;
		n->act = k == nf - 1;
		up = n;
	}
	return up;
}

/* Where the stack of state T puts compiled event frames whose outermost
 * method is OUTER at instruction OPOS: a call from the top, the same
 * activation, or a return into an activation further down.  Returns the
 * base to push on, or sets *ok = 0. */
static struct frame *compiled_base(struct flow *f, struct frame *t,
				   uint32_t outer, uint32_t opos, int *ok)
{
	*ok = 1;
	if (opos == 0 && is_invoke_at(f, t) && can_call(f, t, outer))
		return t;
	struct frame *g = t;
	for (int depth = 0; g && depth < MAX_UNWIND; depth++) {
		if (!g->comp) {
			g = g->up;
			continue;
		}
		struct frame *a = g;
		while (!a->act && a->up)
			a = a->up;
		if (a->meth == outer)
			return a->up;
		g = a->up;
	}
	*ok = 0;
	return NULL;
}

static int step_compiled(struct flow *f, uint32_t i)
{
	const struct flow_ev *e = &f->ev[i];
	uint32_t meth[JPB_DECODED_MAX_FRAMES], pos[JPB_DECODED_MAX_FRAMES];
	uint32_t nf = e->nframes < JPB_DECODED_MAX_FRAMES ? e->nframes :
							    JPB_DECODED_MAX_FRAMES;
	int known = nf > 0;
	for (uint32_t k = 0; k < nf && known; k++) {
		int64_t m = meth_of_id(f, e->frames[k].method_id);
		const struct jcfg *g = m >= 0 ? flow_meth_cfg(f, m) : NULL;
		int32_t p = g ? jcfg_index_of(g, (uint32_t)e->frames[k].bci) : -1;
		known = p >= 0;
		meth[k] = (uint32_t)m;
		pos[k] = (uint32_t)p;
	}
	uint32_t p0 = cur_step(f)->first, pn = cur_step(f)->n;
	int err = step_begin(f, i, 1, 0);
	if (!known)
		return err ? err : add_node(f, NULL, LOST_ANY, p0);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		int ok;
		struct frame *t = f->nodes[k].top;
		struct frame *base = t ? compiled_base(f, t, meth[nf - 1], pos[nf - 1], &ok) : NULL;
		if (!t || !ok)
			continue;
		struct frame *n = push_compiled(f, base, meth, pos, nf);
		err = n ? add_node(f, n, LOST_NONE, k) : jpb_err_nomem;
	}
	if (!err && !cur_step(f)->n) { /* a pin: the stack below is unknown */
		struct frame *n = push_compiled(f, NULL, meth, pos, nf);
		err = n ? add_node(f, n, LOST_NONE, p0) : jpb_err_nomem;
	}
	/* a pin: the position is exact again (resynchronised frames below
	 * keep their own doubt) */
	for (uint32_t k = cur_step(f)->first; k < cur_step(f)->first + cur_step(f)->n; k++)
		f->nodes[k].doubt = 0;
	return err;
}

/* After a step: nothing consistent left means the event is unexplained:
 * the previous step is resolved and *DIED tells the caller to retry the
 * event from a lost state.  One state left resolves everything before it. */
static int settle(struct flow *f, int *died)
{
	*died = 0;
	drop_lost(f);
	for (uint32_t k = 0; cur_step(f)->trunc && k < cur_step(f)->n; k++)
		f->nodes[cur_step(f)->first + k].doubt = 1;
	if (!cur_step(f)->n) {
		f->nsteps--;
		*died = 1;
		return reset_lost(f, LOST_ANY);
	}
	if (cur_step(f)->n == 1)
		return flush_some(f, cur_step(f)->first, 0);
	return f->nsteps > MAX_PENDING_STEPS ? flush_first(f) : 0;
}

enum step_kind { S_INTERP, S_FUSED, S_COMPILED, S_ENTRY, S_EXCEPTION, S_DEOPT };

static int run_step(struct flow *f, uint32_t i, enum step_kind k, uint8_t op)
{
	switch (k) {
	case S_INTERP:
		return step_interp(f, i, op, 1);
	case S_FUSED: /* the second half of a dispatch: no event of its own */
		return step_interp(f, i, op, 0);
	case S_COMPILED:
		return step_compiled(f, i);
	case S_ENTRY:
		return step_entry(f, i, codelet(f, f->ev[i].arg));
	case S_EXCEPTION:
		return step_exception(f, i);
	case S_DEOPT:
		return step_deopt(f, i);
	}
	return jpb_err_internal;
}

/* One step, retried from a lost state if no state explains it (a lost
 * state always goes on, so the retry cannot die). */
static int step(struct flow *f, uint32_t i, enum step_kind k, uint8_t op)
{
	int died, err = run_step(f, i, k, op);
	if (!err)
		err = settle(f, &died);
	if (!err && died) {
		err = run_step(f, i, k, op);
		if (!err)
			err = settle(f, &died);
		if (!err && died)
			err = jpb_err_internal;
	}
	return err;
}

static int flow_event(struct flow *f, uint32_t i)
{
	const struct flow_ev *e = &f->ev[i];
	int fused, op, err;
	/* A gap's end: its own bound when the decoder knew it, else the time
	 * of the first event after it. */
	if (f->ngaps && f->gaps[f->ngaps - 1].at == f->nout && e->kind != JPB_DEV_GAP &&
	    f->gaps[f->ngaps - 1].t1 == f->gaps[f->ngaps - 1].t0 && e->tsc > f->gaps[f->ngaps - 1].t0)
		f->gaps[f->ngaps - 1].t1 = e->tsc;
	switch (e->kind) {
	case JPB_DEV_INTERP:
		op = flow_java_opcode(e->opcode, &fused);
		if (op < 0) { /* not a bytecode we know: position lost */
			err = reset_lost(f, LOST_ANY);
			if (!err)
				err = step_begin(f, i, 1, e->opcode);
			return err ? err : add_node(f, NULL, LOST_ANY, 0);
		}
		err = step(f, i, S_INTERP, (uint8_t)op);
		if (!err && fused >= 0) {
			err = step(f, i, S_FUSED, (uint8_t)fused);
		}
		return err;
	case JPB_DEV_COMPILED:
		return step(f, i, S_COMPILED, 0);
	case JPB_DEV_GAP:
		f->sum.gaps++;
		err = reset_lost(f, LOST_ANY);
		if (!err)
			err = JPB_GROW(f->gaps, f->ngaps, f->capg);
		if (!err)
			f->gaps[f->ngaps++] = (struct gapmark){ f->nout, e->tsc,
								e->arg > e->tsc ? e->arg : e->tsc };
		return err;
	case JPB_DEV_TRANSITION:
		break;
	default:
		return 0;
	}
	const char *desc = codelet(f, e->arg);
	if (e->what == JPB_TR_METHOD_ENTRY)
		return step(f, i, S_ENTRY, 0);
	if (e->what == JPB_TR_INTERP_STUB && strstr(desc, "exception"))
		return step(f, i, S_EXCEPTION, 0);
	if (e->what == JPB_TR_INTERP_STUB && strstr(desc, "deopt"))
		return step(f, i, S_DEOPT, 0);
	return 0;
}

int flow_thread_ev(struct flow *f, const struct flow_ev *ev, size_t n,
		const struct jpb_flow_event **out, size_t *nout,
		struct flow_summary *sum)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&f->sum, 0, sizeof(f->sum));
	f->ev = ev;
	f->nev = n;
	f->nout = 0;
	f->ngaps = 0;
	f->win_trunc = 0;
	f->nedges = 0;
	f->nsteps = 0;
	f->nnodes = 0;
	int err = step_begin(f, 0, 0, 0);
	if (!err)
		err = jpb_grow((void **)&f->nodes, &f->capn, 0, sizeof(*f->nodes));
	if (!err) {
		f->nodes[0] = (struct node){ 0, NULL, NULL, LOST_ANY, 0, 0 };
		f->nnodes = 1;
		f->steps[0].n = 1;
	}
	for (size_t i = 0; i < n && !err; i++)
		err = flow_event(f, (uint32_t)i);
	if (!err)
		err = flush_first(f);
	if (!err && !f->no_recover)
		err = flow_recover(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f->sum.threads = 1;
	f->sum.time_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
			 (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	arena_free(f->arena);
	f->arena = NULL;
	f->arena_frames = 0;
	*out = f->out;
	*nout = f->nout;
	if (sum)
		*sum = f->sum;
	return err;
}

int flow_thread(struct flow *f, const struct jpb_decoded_event *ev, size_t n,
		const struct jpb_flow_event **out, size_t *nout,
		struct flow_summary *sum)
{
	struct flow_ev *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return jpb_err_nomem;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct flow_ev){ ev[i].kind, ev[i].opcode, ev[i].what,
					 ev[i].nframes, ev[i].tsc,
					 ev[i].kind == JPB_DEV_GAP ? ev[i].end_tsc : ev[i].arg,
					 ev[i].frames };
	int err = flow_thread_ev(f, v, n, out, nout, sum);
	free(v);
	return err;
}
