// SPDX-License-Identifier: MIT
/* Who an invoke may call: the class hierarchy's candidates, methods of
 * hidden classes, and method-handle linkage frames. */
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"
#include "java/bytecodes.h"

/* ---- the automaton's transitions ---------------------------------------- */

int flow_is_invoke_at(struct flow *f, const struct frame *t)
{
	return t && t->done && flow_meth_cfg(f, t->meth) &&
	       jbc_is_invoke(flow_insn(f, t->meth, t->pos)->kind);
}

/* Does the invoke at frame T have CALLEE among its candidates?  Adds the
 * candidates' CFG frames to the current step when PUSH. */
int flow_call_targets(struct flow *f, const struct frame *t,
			const struct jhier_method **out)
{
	const struct fmeth *fm = &f->meths[t->meth];
	if (!fm->hm.cls)
		return 0;
	int n = jprog_call_targets(f->p, fm->hm.cls, fm->hm.loader, fm->hm.m,
				   t->pos, out);
	return n < 0 ? 0 : n;
}

/* Would flow_meth_cfg(F, M) give a CFG?  Asked of every candidate of a
 * call site, most of which never run: their CFGs are built when a step
 * first needs them, not here. */
static int has_cfg(struct flow *f, uint32_t m)
{
	const struct fmeth *fm = &f->meths[m];
	if (fm->cfg_tried || !fm->hm.m->code)
		return fm->cfg_tried && fm->cfg;
	int yes = jprog_has_cfg(f->p, fm->hm.m);
	return yes < 0 ? flow_meth_cfg(f, m) != NULL : yes;
}

/* What flow_cand_fits asks of meths[M]: fixed, as the method is. */
static struct fcallee callee_key(struct flow *f, uint32_t m)
{
	struct ekey k = flow_entry_key(f, m);
	const struct jcf_method *jm = f->meths[m].hm.m;
	int code = jm && jm->code_length;
	return (struct fcallee){ m, k.zeroed1, (int8_t)k.sync, (uint8_t)code,
				 code ? jm->code[0] : 0, 0, { 0, 0 } };
}

/* The callees of the invoke at T, appended to f->callees (*START1, *N):
 * meths indices are made in the hierarchy's order, as asking for them
 * one by one did. */
static int site_fill(struct flow *f, const struct frame *t, uint32_t *start1,
		     uint32_t *n)
{
	const struct jhier_method *c;
	int nc = flow_call_targets(f, t, &c);
	size_t start = f->ncallees;
	for (int j = 0; j < nc; j++) {
		uint32_t m;
		int err = flow_meth_index(f, &c[j], &m);
		if (err)
			return err;
		if (!has_cfg(f, m))
			continue;
		if (JPB_GROW(f->callees, f->ncallees, f->capcallees))
			return jpb_err_nomem;
		f->callees[f->ncallees++] = callee_key(f, m);
	}
	*start1 = (uint32_t)start + 1;
	*n = (uint32_t)(f->ncallees - start);
	return 0;
}

/* Kept per call site: every state at an invoke asks at every method
 * entry, and the candidates (jprog_call_targets) and their meths indices
 * (a u64map lookup each) do not change. */
/* The site record of the invoke at T (its method's table made at the
 * first asked), NULL when out of memory. */
static struct fsite *site_at(struct flow *f, const struct frame *t)
{
	struct fmeth *fm = &f->meths[t->meth];
	if (!fm->sites) {
		uint32_t ni = jcfg_insn_count(flow_meth_cfg(f, t->meth));
		if (!(fm->sites = calloc(ni, sizeof(*fm->sites))))
			return NULL;
	}
	return &fm->sites[t->pos];
}

/* The candidate callees with a CFG of the invoke at T
 * (flow_is_invoke_at), in flow_call_targets' order; *OUT valid until
 * f->callees grows.  Their count, or a negative error. */
static int flow_callees(struct flow *f, const struct frame *t, struct fcallee **out)
{
	struct fmeth *fm = &f->meths[t->meth];
	*out = NULL;
	if (!fm->hm.cls)
		return 0;
	if (!site_at(f, t))
		return jpb_err_nomem;
	struct fsite s = fm->sites[t->pos];
	if (!s.start1) {
		int err = site_fill(f, t, &s.start1, &s.n);
		if (err)
			return err;
		f->meths[t->meth].sites[t->pos] = s; /* meths may have moved */
	}
	*out = f->callees + s.start1 - 1;
	return (int)s.n;
}

/* flow_raw_explains of meths[M]'s code from its first instruction and
 * the next opcodes (stage_ops), by (M, stage_oph): a callee is entered
 * with the same next opcodes from many sites. */
static int runs_memo(struct flow *f, uint32_t m)
{
	struct runs_memo *r = &f->runs[(f->stage_oph ^ m * 0x9e3779b97f4a7c15ull) >> 52];
	if (r->meth1 != m + 1 || r->oph != f->stage_oph) {
		const struct jcf_method *jm = f->meths[m].hm.m;
		unsigned budget = 4096;
		*r = (struct runs_memo){ f->stage_oph, m + 1,
					 (uint32_t)flow_raw_explains(jm->code, jm->code_length, 0,
								     f->stage_ops, f->stage_nops,
								     &budget) };
	}
	return (int)r->yes;
}

int flow_callee_runs(struct flow *f, struct fcallee *c)
{
	uint64_t oph;
	memcpy(&oph, c->oph, sizeof(oph));
	if (!c->runs1 || oph != f->stage_oph) {
		memcpy(c->oph, &f->stage_oph, sizeof(c->oph));
		c->runs1 = (uint8_t)(1 + runs_memo(f, c->m));
	}
	return c->runs1 - 1;
}

/* Candidate C, if it passes step_entry's filters, appended to f->epool
 * (flow_cand_fits counts it otherwise). */
static int pass(struct flow *f, struct fcallee *c)
{
	if (!flow_cand_fits(f, c))
		return 0;
	if (JPB_GROW(f->epool, f->nepool, f->capepool))
		return jpb_err_nomem;
	f->epool[f->nepool++] = c->m;
	return 0;
}

/* Methods of missing (hidden) classes that a virtual or interface call
 * at T may reach, same name and descriptor: passed as callees. */
static int hidden_pass(struct flow *f, const struct frame *t)
{
	const struct fmeth *fm = &f->meths[t->meth];
	const struct jcfg_insn *in = flow_insn(f, t->meth, t->pos);
	struct jcf_ref ref;
	if (!f->nsynth || !fm->hm.cls ||
	    (in->kind != JBC_INVOKE_VIRTUAL && in->kind != JBC_INVOKE_INTERFACE) ||
	    jcf_cp_ref(fm->hm.cls, in->cp_index, &ref))
		return 0;
	int err = 0;
	for (size_t k = 0; k < f->nsynth && !err; k++) {
		const struct fmeth *c = &f->meths[f->synth[k]];
		if (!flow_meth_cfg(f, f->synth[k]) || strcmp(c->hm.m->name, ref.name) ||
		    strcmp(c->hm.m->descriptor, ref.descriptor))
			continue;
		struct fcallee key = callee_key(f, f->synth[k]);
		err = pass(f, &key);
	}
	return err;
}

/* One type of a descriptor at *D as the JVM's linkage code sees it
 * (LambdaForm basic types: any reference or array L; boolean, byte,
 * short, char and int I; J, F, D; V), *D moved past it; 0 when it does
 * not parse. */
static char basic_type(const char **d)
{
	const char *p = *d;
	int array = 0;
	for (; *p == '['; p++)
		array = 1;
	char c = *p;
	if (c == 'L' && !(p = strchr(p, ';')))
		return 0;
	if (!c || !strchr("ZBSCIJFDVL", c))
		return 0;
	*d = p + 1;
	if (array || c == 'L')
		return 'L';
	return strchr("ZBSCI", c) ? 'I' : c;
}

static int put(char *out, size_t *n, size_t cap, const char *s)
{
	for (; *s; s++) {
		if (*n >= cap)
			return 0;
		out[(*n)++] = *s;
	}
	return 1;
}

/* Method descriptor DESC in basic types with PRE before the parameters
 * and POST after them, "<pre><params><post>)R", into OUT: its length, or
 * 0 when DESC does not parse or OUT is too small. */
static size_t basic_sig(const char *desc, const char *pre, const char *post,
			char *out, size_t cap)
{
	size_t n = 0;
	if (!desc || *desc++ != '(' || !put(out, &n, cap, pre))
		return 0;
	while (*desc != ')') {
		char b[2] = { basic_type(&desc), 0 };
		if (!b[0] || b[0] == 'V' || !put(out, &n, cap, b))
			return 0;
	}
	desc++;
	char r[2] = { basic_type(&desc), 0 };
	if (!put(out, &n, cap, post) || !put(out, &n, cap, ")") || !r[0] ||
	    !put(out, &n, cap, r))
		return 0;
	return n;
}

static uint64_t sig_hash(const char *s, size_t n)
{
	return flow_fnv1a(FLOW_FNV_BASIS, (const uint8_t *)s, n) | 1; /* 0 is "unknown" */
}

/* The basic-type hash of linkage frame M's descriptor, 0 unknown. */
static uint64_t link_sig(const struct flow *f, uint32_t m)
{
	char b[256];
	size_t n = basic_sig(f->meths[m].hm.m->descriptor, "", "", b, sizeof(b));
	return n ? sig_hash(b, n) : 0;
}

static int link_add(struct flow *f, int which, uint32_t m)
{
	size_t n = f->nlink[which] + 1;
	uint32_t *v = realloc(f->link[which], n * sizeof(*v));
	if (v)
		f->link[which] = v;
	uint64_t *g = v ? realloc(f->lsig[which], n * sizeof(*g)) : NULL;
	if (!g)
		return jpb_err_nomem;
	f->lsig[which] = g;
	v[n - 1] = m;
	g[n - 1] = link_sig(f, m);
	f->nlink[which] = n;
	return 0;
}

/* Add every method of class HM.cls with code to linkage list WHICH, and
 * its linkTo* adapters to list 0 as well when LINKTO. */
static int link_methods(struct flow *f, struct jhier_method hm, int which, int linkto)
{
	int err = 0;
	for (unsigned k = 0; k < jcf_method_count(hm.cls) && !err; k++) {
		uint32_t m;
		hm.m = jcf_method(hm.cls, k);
		if (!hm.m->code || (err = flow_meth_index(f, &hm, &m)) ||
		    !has_cfg(f, m))
			continue;
		if (linkto && !strncmp(hm.m->name, "linkTo", 6))
			err = link_add(f, 0, m);
		if (!err)
			err = link_add(f, which, m);
	}
	return err;
}

/* link_methods of class NAME, if the program has it. */
static int link_class(struct flow *f, const char *name, int which, int linkto)
{
	struct jhier_method hm = { 0 };
	if (!(hm.cls = jhier_class(jprog_hier(f->p), name, 0)))
		return 0;
	return link_methods(f, hm, which, linkto);
}

/* Hidden LambdaForm classes whose class files the program has (the
 * agent rebuilt them): their methods, and their linkTo* adapters (spun
 * for an invokedynamic call site the Holder has none for) as call-site
 * linkage too. */
static int link_hidden_classes(struct flow *f)
{
	struct jhier *h = jprog_hier(f->p);
	int err = 0;
	for (size_t i = 0; i < jhier_class_count(h) && !err; i++) {
		struct jhier_method hm = { 0 };
		hm.cls = jhier_class_at(h, i, &hm.loader);
		const char *name = jcf_this_class(hm.cls);
		if (name && strstr(name, "LambdaForm$") &&
		    strcmp(name, "java/lang/invoke/LambdaForm$Holder"))
			err = link_methods(f, hm, 1, 1);
	}
	return err;
}

/* The JDK-generated frames method-handle linkage runs first: for an
 * invokedynamic call site, Invokers$Holder's linkTo* adapters; for
 * MethodHandle.invoke*, LambdaForm code (the java/lang/invoke *$Holder
 * classes and hidden LambdaForm$ classes); for a VarHandle access mode
 * (VarHandle.get, getVolatile, compareAndSet, ...: signature-polymorphic,
 * linked by MethodHandleNatives.linkMethod), a VarHandleGuards.guard_*
 * method, or an invoker LambdaForm where no guard has the signature. */
static int build_link(struct flow *f)
{
	static const char *const holders[] = {
		"java/lang/invoke/Invokers$Holder",
		"java/lang/invoke/DirectMethodHandle$Holder",
		"java/lang/invoke/DelegatingMethodHandle$Holder",
		"java/lang/invoke/LambdaForm$Holder",
	};
	int err = 0;
	f->link_built = 1;
	/* hidden LambdaForms first: the states cap keeps the earliest; a
	 * spun linkTo* one (an invokedynamic adapter the Holder lacks, e.g.
	 * LambdaForm$MH.linkToTargetMethod) serves call sites too */
	for (size_t k = 0; k < f->nsynth && !err; k++) {
		const struct fmeth *m = &f->meths[f->synth[k]];
		if (!strstr(flow_meth_name(f, f->synth[k]).class_name, "LambdaForm$") || !m->cfg)
			continue;
		if (!strncmp(m->hm.m->name, "linkTo", 6))
			err = link_add(f, 0, f->synth[k]);
		if (!err)
			err = link_add(f, 1, f->synth[k]);
	}
	if (!err)
		err = link_hidden_classes(f);
	for (size_t c = 0; c < 4 && !err; c++)
		err = link_class(f, holders[c], 1, c == 0);
	return err ? err : link_class(f, "java/lang/invoke/VarHandleGuards", 2, 0);
}

#define LINK_ANY 3 /* a linker intrinsic: the callee is an argument */

/* Which linkage frames the invoke at T runs first (build_link's lists),
 * LINK_ANY for MethodHandle.linkTo* (the JDK's own linkage code, calling
 * whatever method its MemberName argument names), or -1 for an ordinary
 * call. */
static int link_kind(struct flow *f, const struct frame *t)
{
	const struct fmeth *fm = &f->meths[t->meth];
	const struct jcfg_insn *in = flow_insn(f, t->meth, t->pos);
	struct jcf_ref ref;
	if (!fm->hm.cls || jcf_cp_ref(fm->hm.cls, in->cp_index, &ref))
		return -1;
	if (in->kind == JBC_INVOKE_DYNAMIC)
		return 0;
	if ((in->kind != JBC_INVOKE_VIRTUAL && in->kind != JBC_INVOKE_STATIC) ||
	    !ref.class_name)
		return -1;
	int mh = !strcmp(ref.class_name, "java/lang/invoke/MethodHandle");
	if (mh && !strncmp(ref.name, "linkTo", 6)) /* static ones */
		return LINK_ANY;
	if (in->kind != JBC_INVOKE_VIRTUAL)
		return -1;
	if (mh && !strncmp(ref.name, "invoke", 6))
		return 1;
	return strcmp(ref.class_name, "java/lang/invoke/VarHandle") ? -1 : 2;
}

/* The list searched after list W, or -1: a VarHandle access mode takes
 * the invoker LambdaForms too. */
static int link_next(int w)
{
	return w == 2 ? 1 : -1;
}

/* Is linkage frame M among those linkage list WHICH allows? */
static int link_has(const struct flow *f, int which, uint32_t m)
{
	for (int w = which; w >= 0; w = link_next(w))
		for (size_t k = 0; k < f->nlink[w]; k++)
			if (f->link[w][k] == m)
				return 1;
	return 0;
}

/* The linkage frame a call runs first takes the call's arguments in
 * basic types, and maybe the method handle before them (an invoker, a
 * lambda form's invokeBasic target) and an appendix after them (an
 * invokedynamic adapter's call site, an invoker's method type, a
 * VarHandle guard's access descriptor), and returns the call's basic
 * type: the four shapes' hashes of the call at T into SIG; 0 when its
 * descriptor does not parse. */
static int call_shapes(struct flow *f, const struct frame *t, uint64_t sig[4])
{
	static const char *const pre[4] = { "", "", "L", "L" }, *const post[4] = { "", "L", "", "L" };
	const struct fmeth *fm = &f->meths[t->meth];
	struct jcf_ref ref;
	char b[256];
	if (!fm->hm.cls || jcf_cp_ref(fm->hm.cls, flow_insn(f, t->meth, t->pos)->cp_index, &ref))
		return 0;
	for (int k = 0; k < 4; k++) {
		size_t n = basic_sig(ref.descriptor, pre[k], post[k], b, sizeof(b));
		if (!n)
			return 0;
		sig[k] = sig_hash(b, n);
	}
	return 1;
}

static int shape_fits(uint64_t have, const uint64_t sig[4])
{
	return !have || have == sig[0] || have == sig[1] || have == sig[2] || have == sig[3];
}

/* Linkage frames of lists WHICH on whose shape the call fits (all when
 * SIG is NULL): appended to f->callees. */
static int list_linkage(struct flow *f, int which, const uint64_t *sig)
{
	for (int w = which; w >= 0; w = link_next(w))
		for (size_t k = 0; k < f->nlink[w]; k++) {
			if (sig && !shape_fits(f->lsig[w][k], sig))
				continue;
			if (JPB_GROW(f->callees, f->ncallees, f->capcallees))
				return jpb_err_nomem;
			f->callees[f->ncallees++] = callee_key(f, f->link[w][k]);
		}
	return 0;
}

/* The linkage frames the invoke at T may run first, appended to
 * f->callees (*START1, *N): those of its shape; all when none has it
 * (the program model may lack the frame that ran, a lambda form spun
 * for the call); none for an ordinary call or a linkTo* one
 * (resynchronisation finds its callee). */
static int link_fill(struct flow *f, const struct frame *t, uint32_t *start1, uint32_t *n)
{
	int which = link_kind(f, t), err = 0;
	size_t start = f->ncallees;
	uint64_t sig[4];
	if (which >= 0 && which != LINK_ANY) {
		int shaped = call_shapes(f, t, sig);
		err = f->link_built ? 0 : build_link(f);
		if (!err)
			err = list_linkage(f, which, shaped ? sig : NULL);
		if (!err && shaped && f->ncallees == start)
			err = list_linkage(f, which, NULL);
	}
	*start1 = (uint32_t)start + 1;
	*n = (uint32_t)(f->ncallees - start);
	return err;
}

/* The linkage frames the invoke at T may run first: *N at
 * f->callees[*START1 - 1].  Kept per call site, as flow_callees: the
 * shapes of ~200 linkage frames were compared for each state at each
 * entry. */
static int site_linkage(struct flow *f, const struct frame *t, uint32_t *start1, uint32_t *n)
{
	*start1 = 1;
	*n = 0;
	if (!f->meths[t->meth].hm.cls) /* hidden-class code: no linkage known */
		return 0;
	struct fsite *s = site_at(f, t);
	if (!s)
		return jpb_err_nomem;
	struct fsite v = *s;
	if (!v.lstart1) {
		int err = link_fill(f, t, &v.lstart1, &v.ln);
		if (err)
			return err;
		f->meths[t->meth].sites[t->pos] = v; /* meths may have moved */
	}
	*start1 = v.lstart1;
	*n = v.ln;
	return 0;
}

/* flow_entry_cands' answer for T, made: the passing callees appended
 * to f->epool, what did not pass counted in E. */
static int entry_fill(struct flow *f, const struct frame *t, struct entry_memo *e)
{
	size_t unfit0 = f->nunfit, opmiss0 = f->nopmiss;
	struct fcallee *c;
	uint32_t ls = 1, ln = 0;
	int nc = flow_callees(f, t, &c), err = nc < 0 ? nc : 0;
	e->off = (uint32_t)f->nepool;
	for (int j = 0; j < nc && !err; j++)
		err = pass(f, &c[j]);
	if (!err)
		err = site_linkage(f, t, &ls, &ln);
	for (uint32_t k = 0; k < ln && !err; k++)
		err = pass(f, &f->callees[ls - 1 + k]);
	if (!err)
		err = hidden_pass(f, t);
	e->n = (uint32_t)(f->nepool - e->off);
	e->nunfit = (uint32_t)(f->nunfit - unfit0);
	e->nopmiss = (uint32_t)(f->nopmiss - opmiss0);
	f->nunfit = unfit0;
	f->nopmiss = opmiss0;
	return err;
}

/* The memo's slot for the invoke at T under the current filters, and
 * whether it holds their answer. */
static struct entry_memo *memo_slot(struct flow *f, const struct frame *t, uint64_t oph,
				    int *hit)
{
	uint64_t h = (oph ^ ((uint64_t)t->meth << 32 | t->pos)) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)(uint32_t)f->stage_want * 0xc2b2ae3d27d4eb4full;
	struct entry_memo *e = &f->ememo[(h ^ h >> 29) >> 40 & (ENTRY_MEMO - 1)];
	*hit = e->meth1 == t->meth + 1 && e->pos == t->pos && e->oph == oph &&
	       e->want == f->stage_want && e->nops == f->stage_nops;
	return e;
}

/* The memo, made at the first entry and emptied with its pool when the
 * pool has grown large or new hidden-class methods may be callees. */
static int memo_ready(struct flow *f)
{
	if (!f->ememo && !(f->ememo = calloc(ENTRY_MEMO, sizeof(*f->ememo))))
		return jpb_err_nomem;
	if (f->nepool > (1u << 20) || f->ememo_synth != f->nsynth) {
		memset(f->ememo, 0, ENTRY_MEMO * sizeof(*f->ememo));
		f->nepool = 0;
		f->ememo_synth = f->nsynth;
	}
	return 0;
}

/* Kept by call site and filters: a site is entered over and over with
 * the same locals and next opcodes, and its hundreds of candidates were
 * filtered again for each of its states (jython: 466 k candidates of
 * 69 k states, to stage 132 k). */
int flow_entry_cands(struct flow *f, const struct frame *t, const uint32_t **out,
		     uint32_t *nunfit, uint32_t *nopmiss)
{
	int hit, err = memo_ready(f);
	*out = NULL;
	*nunfit = *nopmiss = 0;
	if (err)
		return err;
	uint64_t oph = f->stage_nops ? f->stage_oph : 0;
	struct entry_memo *e = memo_slot(f, t, oph, &hit);
	if (!hit) {
		e->meth1 = 0;
		if ((err = entry_fill(f, t, e)))
			return err;
		e->oph = oph;
		e->meth1 = t->meth + 1;
		e->pos = t->pos;
		e->want = f->stage_want;
		e->nops = (uint32_t)f->stage_nops;
	}
	*out = f->epool + e->off;
	*nunfit = e->nunfit;
	*nopmiss = e->nopmiss;
	return (int)e->n;
}

static int can_call(struct flow *f, const struct frame *t, uint32_t callee)
{
	if (!f->meths[t->meth].hm.cls) /* hidden-class code: callee unknown */
		return 1;
	const struct jhier_method *c;
	int n = flow_call_targets(f, t, &c);
	for (int i = 0; i < n; i++) {
		uint32_t idx;
		if (!flow_meth_index(f, &c[i], &idx) && idx == callee)
			return 1;
	}
	/* compiled code calls the linkage frames too (a VarHandle access
	 * from a compiled method: its guard, not inlined, is a compiled
	 * activation of its own) */
	int which = link_kind(f, t);
	if (which == LINK_ANY)
		return 1;
	if (which < 0 || (!f->link_built && build_link(f)))
		return 0;
	return link_has(f, which, callee);
}

/* Memoised: the program and its hierarchy do not change, and a repeated
 * question would index no method the first did not (the same candidates
 * up to the same one). */
int flow_can_call(struct flow *f, const struct frame *t, uint32_t callee)
{
	uint32_t h = (t->meth * 0x9e3779b1u) ^ (t->pos * 0x85ebca6bu) ^ (callee * 0xc2b2ae35u);
	struct call_memo *m = &f->cmemo[(h ^ h >> 16) & (CALL_MEMO - 1)];
	if (m->meth1 != t->meth + 1 || m->pos != t->pos || m->callee != callee)
		*m = (struct call_memo){ t->meth + 1, t->pos, callee,
					 (uint32_t)can_call(f, t, callee) };
	return (int)m->yes;
}

