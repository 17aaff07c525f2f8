// SPDX-License-Identifier: MIT
/* The methods reconstruction names (by class-file method or jmethodID),
 * HotSpot's rewritten bytecodes, codelets, and the life cycle of a flow. */
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"
#include "java/bytecodes.h"

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

/* The slots of CLS's methods in f->midx by their index in the class
 * (meths index + 1, 0: none yet), made when first asked for; NULL when
 * out of memory.  A map by class and 4 bytes a method, where a map by
 * method took 16 bytes a slot at twice the methods (jython: 2 MB). */
static uint32_t *class_slots(struct flow *f, const struct jcf *cls)
{
	uint32_t at;
	if (u64map_get(&f->by_cls, (uint64_t)(uintptr_t)cls, &at))
		return f->midx + at;
	size_t n = jcf_method_count(cls);
	if (f->nmidx + n > f->capmidx &&
	    jpb_grow((void **)&f->midx, &f->capmidx, f->nmidx + n, sizeof(*f->midx)))
		return NULL;
	if (u64map_put(&f->by_cls, (uint64_t)(uintptr_t)cls, (uint32_t)f->nmidx))
		return NULL;
	memset(f->midx + f->nmidx, 0, n * sizeof(*f->midx));
	f->nmidx += n;
	return f->midx + f->nmidx - n;
}

int flow_meth_lookup_reserve(struct flow *f, size_t nclasses, size_t nmethods)
{
	if (nmethods > f->capmidx &&
	    jpb_grow((void **)&f->midx, &f->capmidx, nmethods, sizeof(*f->midx)))
		return jpb_err_nomem;
	return u64map_reserve(&f->by_cls, nclasses) ? jpb_err_nomem : 0;
}

int flow_meth_index(struct flow *f, const struct jhier_method *hm,
		    uint32_t *out)
{
	const struct jcf_method *m = hm->m;
	if (!hm->cls || jcf_method(hm->cls, m->index) != m)
		return jpb_err_invalid; /* not a method of that class file */
	uint32_t *slot = class_slots(f, hm->cls);
	if (!slot)
		return jpb_err_nomem;
	slot += m->index;
	if (*slot) {
		*out = *slot - 1;
		return 0;
	}
	if (JPB_GROW(f->meths, f->nmeths, f->capm))
		return jpb_err_nomem;
	struct fmeth *fm = &f->meths[f->nmeths];
	memset(fm, 0, sizeof(*fm));
	fm->hm = *hm;
	*slot = (uint32_t)f->nmeths + 1;
	*out = (uint32_t)f->nmeths++;
	return 0;
}

int flow_meth_index_class(struct flow *f, const struct jcf *cls, uint64_t loader)
{
	uint32_t *slot = class_slots(f, cls);
	unsigned n = jcf_method_count(cls);
	if (!slot || jpb_grow((void **)&f->meths, &f->capm, f->nmeths + n, sizeof(*f->meths)))
		return jpb_err_nomem;
	/* method k of the class file is at index k (jcf_parse): its slot */
	for (unsigned k = 0; k < n; k++) {
		struct jhier_method hm = { cls, jcf_method(cls, k), loader, 0 };
		if (!hm.m->code || slot[k])
			continue;
		struct fmeth *fm = &f->meths[f->nmeths];
		memset(fm, 0, sizeof(*fm));
		fm->hm = hm;
		slot[k] = (uint32_t)++f->nmeths;
	}
	return 0;
}

/* The meths index of jmethodID ID; -1 when the program lacks it. */
int64_t flow_meth_of_id(struct flow *f, uint64_t id)
{
	uint32_t v;
	if (u64map_get(&f->by_id, id, &v))
		return (int64_t)v - 1;
	struct jhier_method hm;
	uint32_t idx = 0;
	int ok = jprog_method_by_id(f->p, id, &hm) == 0 &&
		 flow_meth_index(f, &hm, &idx) == 0;
	if (ok)
		f->meths[idx].method_id = id;
	if (u64map_put(&f->by_id, id, ok ? idx + 1 : 0))
		return -1;
	return ok ? (int64_t)idx : -1;
}

const struct cpos *flow_cpos_fill(struct flow *f, uint64_t id, int32_t bci,
				  struct cpos *c)
{
	int64_t m = flow_meth_of_id(f, id);
	const struct jcfg *g = m >= 0 ? flow_meth_cfg(f, (uint32_t)m) : NULL;
	int32_t pos = g && bci >= 0 ? jcfg_index_of(g, (uint32_t)bci) : -1;
	*c = (struct cpos){ id, bci, pos, (int32_t)m, pos >= 0 ? jcfg_insn(g, (uint32_t)pos)->op : 0 };
	return c;
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
	/* one block: the method, then its class name (flow_meth_name finds
	 * it there), name, descriptor and code */
	struct jcf_method *m = malloc(sizeof(*m) + lc + ln + ls + len + 3);
	uint32_t *sy = realloc(f->synth, (f->nsynth + 1) * sizeof(*sy));
	if (sy)
		f->synth = sy;
	if (!m || !sy || JPB_GROW(f->meths, f->nmeths, f->capm)) {
		free(m);
		return jpb_err_nomem;
	}
	*m = (struct jcf_method){ 0 };
	char *strs = (char *)(m + 1);
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
	fm->hm.m = m;
	struct jcfg *g;
	fm->cfg = jcfg_build(&g, m, NULL) ? NULL : g;
	fm->cfg_tried = 1;
	fm->method_id = id;
	f->synth[f->nsynth++] = (uint32_t)f->nmeths;
	if (u64map_put(&f->by_id, id, (uint32_t)f->nmeths + 1))
		return jpb_err_nomem;
	f->nmeths++;
	return 0;
}

_Static_assert(sizeof(struct fmeth) == 64, "a method is one cache line");

struct flow_method_info flow_meth_name(const struct flow *f, uint32_t m)
{
	const struct fmeth *fm = &f->meths[m];
	const char *cls = fm->hm.cls ? jcf_this_class(fm->hm.cls) :
				       (const char *)(fm->hm.m + 1);
	return (struct flow_method_info){ fm->method_id, cls, fm->hm.m->name,
					  fm->hm.m->descriptor };
}

struct flow_method_info flow_method(const struct flow *f, uint32_t idx)
{
	if (idx < 1 || idx > f->nmeths)
		return (struct flow_method_info){ 0 };
	return flow_meth_name(f, idx - 1);
}

uint32_t flow_method_count(const struct flow *f)
{
	return (uint32_t)f->nmeths;
}

static int32_t zeroed_of(const struct fmeth *fm)
{
	const struct jcf_method *m = fm->hm.m;
	/* a hidden-class method known by its bytecode only: no max_locals */
	if (!fm->hm.cls || !m || !m->code)
		return -1;
	int slots = jcf_param_slots(m->descriptor, m->access_flags & JCF_ACC_STATIC);
	return slots >= 0 && m->max_locals >= slots ? m->max_locals - slots : -1;
}

static struct ekey ekey_of(const struct fmeth *fm)
{
	int32_t z = zeroed_of(fm);
	/* a method of a class the program lacks has no access flags */
	return (struct ekey){ z < 0 ? -1 : z + 1,
			      !fm->hm.cls ? -1 : !!(fm->hm.m->access_flags & JCF_ACC_SYNCHRONIZED) };
}

struct ekey flow_entry_key(struct flow *f, uint32_t m)
{
	size_t cap = f->capekey;
	if (m >= cap && JPB_GROW(f->ekey, m, f->capekey))
		return ekey_of(&f->meths[m]); /* no room to keep it */
	if (f->capekey != cap)
		memset(f->ekey + cap, 0, (f->capekey - cap) * sizeof(*f->ekey));
	if (!f->ekey[m].zeroed1)
		f->ekey[m] = ekey_of(&f->meths[m]);
	return f->ekey[m];
}

const struct jcfg *flow_meth_cfg_build(struct flow *f, uint32_t m)
{
	struct fmeth *fm = &f->meths[m];
	fm->cfg_tried = 1;
	if (fm->hm.m->code && jprog_cfg(f->p, fm->hm.m, &fm->cfg, NULL))
		fm->cfg = NULL;
	return fm->cfg;
}

/* A hash of the N instructions of HOT: of the array's words, not of the
 * successor lists, which hot_same compares (a byte hash of both, for
 * every method interp_from reached, cost 10 M instructions on jython). */
_Static_assert(sizeof(struct jcfg_hot) == sizeof(uint64_t), "a hot instruction is a word");
static uint64_t hot_hash(const struct jcfg_hot *hot, uint32_t n)
{
	uint64_t h = n;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t w;
		memcpy(&w, &hot[i], sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h | 1; /* a u64map key is not 0 */
}

/* Do the N instructions of A and B say the same to interp_from? */
static int hot_same(const struct jcfg_hot *a, const struct jcfg_hot *b, uint32_t n)
{
	size_t len = jcfg_hot_size(a, n);
	return len == jcfg_hot_size(b, n) && !memcmp(a, b, len);
}

/* G's hot array, or an earlier one that holds the same: twins (methods of
 * the same code in different classes, such as jython's exposers) are
 * often the states of one step, and read one array instead of one each.
 * CFGs live as long as the flow (jprog's cache, or a method's own). */
static const struct jcfg_hot *hot_shared(struct flow *f, const struct jcfg *g)
{
	const struct jcfg_hot *hot = jcfg_hots(g);
	uint32_t n = jcfg_insn_count(g), k;
	uint64_t h = hot_hash(hot, n);
	if (u64map_get(&f->hot_by, h, &k))
		return f->hshare[k].n == n && hot_same(f->hshare[k].hot, hot, n) ?
			       f->hshare[k].hot : hot;
	if (!JPB_GROW(f->hshare, f->nhshare, f->caphshare) &&
	    !u64map_put(&f->hot_by, h, (uint32_t)f->nhshare))
		f->hshare[f->nhshare++] = (struct flow_hshare){ hot, n };
	return hot;
}

const struct jcfg_hot *flow_meth_hot_slow(struct flow *f, uint32_t m)
{
	const struct jcfg *g = flow_meth_cfg(f, m);
	if (!g)
		return NULL;
	size_t cap = f->capmhot;
	if (m >= cap && JPB_GROW(f->mhot, m, f->capmhot))
		return jcfg_hots(g); /* no room to keep it */
	if (f->capmhot != cap)
		memset(f->mhot + cap, 0, (f->capmhot - cap) * sizeof(*f->mhot));
	return f->mhot[m] = hot_shared(f, g);
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
	f->stage_want = -1;
	f->cpos = malloc(CPOS_SIZE * sizeof(*f->cpos));
	f->runs = calloc(RUNS_MEMO, sizeof(*f->runs));
	if (!f->cpos || !f->runs) {
		free(f->cpos);
		free(f->runs);
		free(f);
		return jpb_err_nomem;
	}
	for (size_t i = 0; i < CPOS_SIZE; i++)
		f->cpos[i].meth = -2;
	*out = f;
	return 0;
}

void flow_arena_free(struct chunk *c)
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
		if (!f->meths[i].hm.cls) { /* its own method and CFG */
			free((struct jcf_method *)f->meths[i].hm.m);
			jcfg_free((struct jcfg *)f->meths[i].cfg);
		}
		free(f->meths[i].sites);
	}
	free(f->meths);
	free(f->callees);
	free(f->ekey);
	free(f->mhot);
	free(f->hshare);
	u64map_fini(&f->hot_by);
	free(f->synth);
	for (int k = 0; k < 3; k++) {
		free(f->link[k]);
		free(f->lsig[k]);
	}
	u64map_fini(&f->by_cls);
	free(f->midx);
	u64map_fini(&f->by_id);
	for (size_t i = 0; i < f->ncodelets; i++)
		free(f->codelets[i]);
	free(f->codelets);
	free(f->clkind);
	free(f->opbits);
	free(f->pairstart);
	free(f->pairidx);
	free(f->thirds);
	u64map_fini(&f->third_at);
	free(f->mscan);
	free(f->rc);
	free(f->rpool);
	free(f->gaps);
	free(f->proven);
	free(f->nodes);
	free(f->edges);
	free(f->stage);
	free(f->stage_ord);
	free(f->twins);
	free(f->joins);
	free(f->jalts);
	free(f->jscratch);
	free(f->mstamp);
	free(f->jreq);
	free(f->steps);
	free(f->hidx);
	free(f->cset);
	flow_arena_free(f->arena);
	free(f->out);
	free(f->ev);
	free(f->fr);
	free(f->all);
	free(f->cpos);
	free(f->runs);
	free(f->ememo);
	free(f->epool);
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
		uint8_t *k = realloc(f->clkind, index + 1);
		if (!k)
			return jpb_err_nomem;
		memset(k + f->ncodelets, 0, index + 1 - f->ncodelets);
		f->clkind = k;
		f->ncodelets = index + 1;
	}
	free(f->codelets[index]);
	const char *d = description ? description : "";
	f->codelets[index] = strdup(d);
	int nobc = strstr(d, "native") || strstr(d, "intrinsic");
	f->clkind[index] = (nobc ? CODELET_NO_BYTECODE : 0) |
			   (strstr(d, "exception") ? CODELET_EXCEPTION : 0) |
			   (strstr(d, "deopt") ? CODELET_DEOPT : 0) |
			   (!nobc && strstr(d, "zerolocals") ? CODELET_ZEROLOCALS : 0) |
			   (!nobc && strstr(d, "zerolocals_synchronized") ? CODELET_SYNC : 0);
	return f->codelets[index] ? 0 : jpb_err_nomem;
}

const char *flow_codelet(const struct flow *f, uint64_t index)
{
	return index < f->ncodelets && f->codelets[index] ? f->codelets[index] : "";
}
