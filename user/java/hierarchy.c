// SPDX-License-Identifier: MIT
/* Class table and call-site resolution.  Links between classes (super,
 * interfaces, direct subtypes) are resolved by name in one pass whenever
 * a query follows an add, so adds stay cheap. */
#include "java/hierarchy.h"

#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"

#define NONE UINT32_MAX

/* What select_chain reads of each class up a chain (a virtual call's
 * site asks it of every concrete subtype: jython 86 k) comes first,
 * within 56 bytes, the class file's name set included: most classes of
 * a chain lack the name, and their class files stay untouched. */
struct jclass {
	struct jcf *cf;
	uint64_t name_bits; /* jcf_name_bits(cf) */
	uint32_t super;     /* linked class index or NONE */
	uint32_t mark[5];   /* visit generations, one per traversal kind */
	/* Under mark[MARK_SELECT]: what selection up the superclass chain
	 * found from here (select_chain). */
	uint32_t sel_decl;
	const struct jcf_method *sel_m;
	uint64_t loader;
	const char *name;
	uint32_t same_name; /* next class with this name, NONE at the end */
	uint32_t nifaces;
	uint32_t *ifaces;   /* linked; NONE for unloaded ones */
	uint32_t nsubs, subs_cap;
	uint32_t *subs;     /* direct subclasses and implementors */
	/* Its concrete subtypes (concrete_of), once asked; while linked. */
	uint32_t *conc;
	uint32_t nconc;
	int conc_done;
};

enum { MARK_IFACE, MARK_UP, MARK_DOWN, MARK_SELECT, MARK_TARGET };

struct jhier {
	struct jclass *cls;
	uint32_t n, cap;
	uint32_t *table; /* open addressing: class index + 1, 0 = empty */
	uint32_t table_cap;
	int linked;
	uint32_t gen[5];
	/* Virtual targets by (static receiver class, resolved method): many
	 * call sites name the same method (Object.equals, an interface's
	 * method), and each answer walks every subtype.  Valid while linked. */
	struct vtargets *vt;
	uint32_t vt_n, vt_cap;
};

struct vtargets {
	uint32_t sym;
	const struct jcf_method *m; /* NULL: empty slot */
	int n;
	struct jhier_method *v;
};

/* A growable list of class or method results. */
struct list {
	uint32_t *v;
	uint32_t n, cap;
	int err;
};

static void list_push(struct list *l, uint32_t x)
{
	if (l->err)
		return;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 16;
		uint32_t *p = realloc(l->v, cap * sizeof(*p));
		if (!p) {
			l->err = java_err_nomem;
			return;
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = x;
}

/* Class names hash as method names do (jcf_name_hash). */
static uint32_t hash(const char *s)
{
	return jcf_name_hash(s);
}

int jhier_alloc(struct jhier **out)
{
	if (!out)
		return java_err_invalid;
	*out = calloc(1, sizeof(**out));
	return *out ? java_ok : java_err_nomem;
}

static void vt_clear(struct jhier *h)
{
	for (uint32_t i = 0; i < h->vt_cap; i++)
		free(h->vt[i].v);
	free(h->vt);
	h->vt = NULL;
	h->vt_n = h->vt_cap = 0;
}

static void unlink_all(struct jhier *h)
{
	vt_clear(h);
	if (!h->linked)
		return;
	for (uint32_t i = 0; i < h->n; i++) {
		free(h->cls[i].ifaces);
		free(h->cls[i].subs);
		free(h->cls[i].conc);
		h->cls[i].ifaces = h->cls[i].subs = h->cls[i].conc = NULL;
		h->cls[i].nconc = 0;
		h->cls[i].conc_done = 0;
		h->cls[i].nsubs = h->cls[i].subs_cap = h->cls[i].nifaces = 0;
	}
	h->linked = 0;
}

void jhier_free(struct jhier *h)
{
	if (!h)
		return;
	unlink_all(h);
	for (uint32_t i = 0; i < h->n; i++)
		jcf_free(h->cls[i].cf);
	free(h->cls);
	free(h->table);
	free(h);
}

/* The table slot holding NAME's first class, or the empty slot where it
 * would go. */
static uint32_t *slot(const struct jhier *h, const char *name)
{
	uint32_t mask = h->table_cap - 1;
	for (uint32_t i = hash(name) & mask;; i = (i + 1) & mask) {
		uint32_t *s = &h->table[i];
		if (!*s || !strcmp(h->cls[*s - 1].name, name))
			return s;
	}
}

static int grow_table(struct jhier *h)
{
	uint32_t old_cap = h->table_cap, *old = h->table;
	h->table_cap = old_cap ? 2 * old_cap : 256;
	h->table = calloc(h->table_cap, sizeof(*h->table));
	if (!h->table) {
		h->table = old;
		h->table_cap = old_cap;
		return java_err_nomem;
	}
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i])
			*slot(h, h->cls[old[i] - 1].name) = old[i];
	free(old);
	return java_ok;
}

static int reserve(struct jhier *h)
{
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? 2 * h->cap : 64;
		struct jclass *p = realloc(h->cls, cap * sizeof(*p));
		if (!p)
			return java_err_nomem;
		h->cls = p;
		h->cap = cap;
	}
	/* Keep the table at most half full. */
	if (2 * (h->n + 1) > h->table_cap)
		return grow_table(h);
	return java_ok;
}

int jhier_add(struct jhier *h, struct jcf *cf, uint64_t loader)
{
	if (!h || !cf) {
		jcf_free(cf);
		return java_err_invalid;
	}
	const char *name = jcf_this_class(cf);
	int err = reserve(h);
	if (err) {
		jcf_free(cf);
		return err;
	}
	uint32_t *s = slot(h, name);
	for (uint32_t i = *s ? *s - 1 : NONE; i != NONE;
	     i = h->cls[i].same_name) {
		if (h->cls[i].loader == loader) {
			jcf_free(cf);
			return 1;
		}
	}
	unlink_all(h);
	struct jclass *c = &h->cls[h->n];
	memset(c, 0, sizeof(*c));
	c->cf = cf;
	c->name_bits = jcf_name_bits(cf);
	c->loader = loader;
	c->name = name;
	c->same_name = *s ? *s - 1 : NONE;
	*s = ++h->n; /* the newest class heads its name's chain */
	return 0;
}

size_t jhier_class_count(const struct jhier *h) { return h->n; }

const struct jcf *jhier_class_at(const struct jhier *h, size_t i,
				 uint64_t *loader)
{
	if (i >= h->n)
		return NULL;
	if (loader)
		*loader = h->cls[i].loader;
	return h->cls[i].cf;
}

static uint32_t find(const struct jhier *h, const char *name, uint64_t loader)
{
	if (!name || !h->table_cap)
		return NONE;
	uint32_t *s = slot(h, name);
	uint32_t boot = NONE, any = NONE;
	for (uint32_t i = *s ? *s - 1 : NONE; i != NONE;
	     i = h->cls[i].same_name) {
		if (h->cls[i].loader == loader)
			return i;
		if (h->cls[i].loader == 0)
			boot = i;
		any = i;
	}
	return boot != NONE ? boot : any;
}

const struct jcf *jhier_class(const struct jhier *h, const char *name,
			      uint64_t loader)
{
	uint32_t i = find(h, name, loader);
	return i == NONE ? NULL : h->cls[i].cf;
}

static int add_sub(struct jclass *parent, uint32_t child)
{
	if (parent->nsubs == parent->subs_cap) {
		uint32_t cap = parent->subs_cap ? 2 * parent->subs_cap : 4;
		uint32_t *p = realloc(parent->subs, cap * sizeof(*p));
		if (!p)
			return java_err_nomem;
		parent->subs = p;
		parent->subs_cap = cap;
	}
	parent->subs[parent->nsubs++] = child;
	return java_ok;
}

static int link_class(struct jhier *h, uint32_t i)
{
	struct jclass *c = &h->cls[i];
	c->super = find(h, jcf_super_class(c->cf), c->loader);
	if (c->super == i)
		c->super = NONE; /* a corrupt self-loop would hang walks */
	c->nifaces = jcf_interface_count(c->cf);
	if (c->nifaces) {
		c->ifaces = malloc(c->nifaces * sizeof(*c->ifaces));
		if (!c->ifaces)
			return java_err_nomem;
	}
	int err = c->super != NONE ? add_sub(&h->cls[c->super], i) : 0;
	for (uint32_t k = 0; k < c->nifaces && !err; k++) {
		c->ifaces[k] = find(h, jcf_interface(c->cf, k), c->loader);
		if (c->ifaces[k] == i)
			c->ifaces[k] = NONE;
		if (c->ifaces[k] != NONE)
			err = add_sub(&h->cls[c->ifaces[k]], i);
	}
	return err;
}

static int link_all(struct jhier *h)
{
	if (h->linked)
		return java_ok;
	for (uint32_t i = 0; i < h->n; i++) {
		int err = link_class(h, i);
		if (err) {
			h->linked = 1; /* so that unlink_all frees the part */
			unlink_all(h);
			return err;
		}
	}
	h->linked = 1;
	return java_ok;
}

/* Start a traversal of kind K; returns the generation to mark with. */
static uint32_t new_gen(struct jhier *h, int k)
{
	if (++h->gen[k] == 0) {
		for (uint32_t i = 0; i < h->n; i++)
			h->cls[i].mark[k] = 0;
		h->gen[k] = 1;
	}
	return h->gen[k];
}

/* Walk up from A through super and interfaces looking for B.  Marks make
 * it linear even with diamond-shaped interface graphs and cycles. */
static int subtype_walk(struct jhier *h, uint32_t a, uint32_t b, uint32_t gen)
{
	if (a == NONE || h->cls[a].mark[MARK_UP] == gen)
		return 0;
	if (a == b)
		return 1;
	h->cls[a].mark[MARK_UP] = gen;
	struct jclass *c = &h->cls[a];
	if (subtype_walk(h, c->super, b, gen))
		return 1;
	for (uint32_t k = 0; k < c->nifaces; k++)
		if (subtype_walk(h, c->ifaces[k], b, gen))
			return 1;
	return 0;
}

static int is_subtype(struct jhier *h, uint32_t a, uint32_t b)
{
	return subtype_walk(h, a, b, new_gen(h, MARK_UP));
}

int jhier_is_subtype(struct jhier *h, const char *sub, const char *super,
		     uint64_t loader)
{
	if (link_all(h))
		return 0;
	uint32_t a = find(h, sub, loader), b = find(h, super, loader);
	return a != NONE && b != NONE && is_subtype(h, a, b);
}

/* ---- resolution --------------------------------------------------------- */

static void set_out(const struct jhier *h, struct jhier_method *out,
		    uint32_t ci, const struct jcf_method *m, unsigned flags)
{
	out->cls = h->cls[ci].cf;
	out->m = m;
	out->loader = h->cls[ci].loader;
	out->flags = flags;
}

/* JVMS §2.9.3: MethodHandle/VarHandle declare native varargs methods that
 * match any descriptor of the same name. */
static const struct jcf_method *sig_poly(const struct jclass *c,
					 const char *name)
{
	if (strcmp(c->name, "java/lang/invoke/MethodHandle") &&
	    strcmp(c->name, "java/lang/invoke/VarHandle"))
		return NULL;
	const struct jcf_method *m = jcf_method_find(c->cf, name, NULL);
	unsigned want = JCF_ACC_NATIVE | JCF_ACC_VARARGS;
	return m && (m->access_flags & want) == want ? m : NULL;
}

/* NAME DESC in class CI or its superclasses; *DECL gets the class. */
static const struct jcf_method *in_chain(struct jhier *h, uint32_t ci,
					 const char *name, const char *desc,
					 uint32_t *decl)
{
	for (uint32_t depth = 0; ci != NONE && depth < h->n; depth++) {
		const struct jclass *c = &h->cls[ci];
		const struct jcf_method *m = jcf_method_find(c->cf, name, desc);
		if (!m)
			m = sig_poly(c, name);
		if (m) {
			*decl = ci;
			return m;
		}
		ci = c->super;
	}
	return NULL;
}

/* Collect every superinterface of CI (transitively, also through its
 * superclasses) that declares NAME DESC as a non-private, non-static
 * method. */
static void iface_methods(struct jhier *h, uint32_t ci, const char *name,
			  const char *desc, uint32_t gen, struct list *l)
{
	if (ci == NONE || h->cls[ci].mark[MARK_IFACE] == gen)
		return;
	struct jclass *c = &h->cls[ci];
	c->mark[MARK_IFACE] = gen;
	if (jcf_access_flags(c->cf) & JCF_ACC_INTERFACE) {
		const struct jcf_method *m = jcf_method_find(c->cf, name, desc);
		if (m && !(m->access_flags & (JCF_ACC_PRIVATE | JCF_ACC_STATIC)))
			list_push(l, ci);
	}
	iface_methods(h, c->super, name, desc, gen, l);
	for (uint32_t k = 0; k < c->nifaces; k++)
		iface_methods(h, c->ifaces[k], name, desc, gen, l);
}

/* The maximally specific superinterface methods of CI (JVMS §5.4.3.3);
 * with NONABSTRACT only the non-abstract ones.  Returns the class of the
 * single match, or NONE when there is none or more than one (ambiguous);
 * *ANY gets some match in any case, NONE if there is none. */
static uint32_t max_specific(struct jhier *h, uint32_t ci, const char *name,
			     const char *desc, int nonabstract, uint32_t *any,
			     int *err)
{
	struct list l = { 0 };
	iface_methods(h, ci, name, desc, new_gen(h, MARK_IFACE), &l);
	uint32_t found = NONE, nfound = 0;
	*any = NONE;
	for (uint32_t i = 0; i < l.n; i++) {
		int dominated = 0;
		for (uint32_t j = 0; j < l.n && !dominated; j++)
			dominated = j != i && is_subtype(h, l.v[j], l.v[i]);
		const struct jcf_method *m =
			jcf_method_find(h->cls[l.v[i]].cf, name, desc);
		if (dominated || (nonabstract &&
				  (m->access_flags & JCF_ACC_ABSTRACT)))
			continue;
		if (*any == NONE || !(m->access_flags & JCF_ACC_ABSTRACT))
			*any = l.v[i];
		found = l.v[i];
		nfound++;
	}
	*err = l.err;
	free(l.v);
	return nfound == 1 ? found : NONE;
}

static int resolve_in(struct jhier *h, uint32_t ci, const char *name,
		      const char *desc, struct jhier_method *out)
{
	uint32_t decl, any;
	int err;
	const struct jcf_method *m = in_chain(h, ci, name, desc, &decl);
	if (m) {
		set_out(h, out, decl, m, 0);
		return java_ok;
	}
	max_specific(h, ci, name, desc, 0, &any, &err);
	if (err)
		return err;
	if (any == NONE)
		return java_err_not_found;
	set_out(h, out, any, jcf_method_find(h->cls[any].cf, name, desc), 0);
	return java_ok;
}

/* Array types inherit their methods from Object (JVMS §5.4.3.3). */
static const char *method_class(const char *cls)
{
	return cls && cls[0] == '[' ? "java/lang/Object" : cls;
}

int jhier_resolve(struct jhier *h, const char *cls, const char *name,
		  const char *desc, uint64_t loader, struct jhier_method *out)
{
	if (!h || !cls || !name || !desc || !out)
		return java_err_invalid;
	int err = link_all(h);
	if (err)
		return err;
	uint32_t ci = find(h, method_class(cls), loader);
	return ci == NONE ? java_err_not_found :
			    resolve_in(h, ci, name, desc, out);
}

/* ---- selection ---------------------------------------------------------- */

/* select_chain's answer when the first match up the chain is abstract. */
#define SEL_ABSTRACT (NONE - 1)

/* One selection's NAME DESC, NAME's hash (jcf_name_hash: computed once
 * for every class asked) and its generation (select_chain). */
struct selq {
	const char *name, *desc;
	uint32_t hash, gen;
};

static struct selq new_selq(struct jhier *h, const struct jcf_method *m)
{
	return (struct selq){ m->name, m->descriptor, jcf_name_hash(m->name),
			      new_gen(h, MARK_SELECT) };
}

/* select_chain's answer for S when S does not declare NAME (its hash
 * bit is clear) and its superclass was answered in Q's selection:
 * S's answer is the superclass's, kept in S as select_chain would; 0
 * when S is not such.  Most receivers of a selection over subtypes are
 * (jython: 66 k of 86 k), and the walks cost ~100 instructions a class. */
static inline int select_quick(struct jhier *h, uint32_t s,
			       const struct selq *q, uint32_t *decl,
			       const struct jcf_method **m)
{
	struct jclass *c = &h->cls[s];
	if (c->mark[MARK_SELECT] == q->gen ||
	    (c->name_bits >> (q->hash & 63) & 1) || c->super == NONE ||
	    h->n < 2 || h->cls[c->super].mark[MARK_SELECT] != q->gen)
		return 0;
	c->mark[MARK_SELECT] = q->gen;
	*decl = c->sel_decl = h->cls[c->super].sel_decl;
	*m = c->sel_m = h->cls[c->super].sel_m;
	return 1;
}

/* The first non-static, non-private NAME DESC of Q up the superclass
 * chain of S: *M and its class in *DECL; *M NULL with *DECL SEL_ABSTRACT
 * if it is abstract, NONE if there is none.  The subtypes a virtual call
 * can reach share their ancestors, so each class's answer is kept for
 * the selection generation (one NAME DESC).  (A memo across selections
 * by class and NAME DESC was tried: jython's 86 k selections found 4 k
 * answers in it, and it cost more than it saved.) */
static void select_chain(struct jhier *h, uint32_t s, const struct selq *q,
			 uint32_t *decl, const struct jcf_method **m)
{
	uint32_t gen = q->gen;
	if (select_quick(h, s, q, decl, m))
		return;
	uint32_t ci = s, depth = 0;
	*decl = NONE;
	*m = NULL;
	for (; ci != NONE && depth < h->n; ci = h->cls[ci].super, depth++) {
		const struct jclass *c = &h->cls[ci];
		if (c->mark[MARK_SELECT] == gen) {
			*decl = c->sel_decl;
			*m = c->sel_m;
			break;
		}
		if (!(c->name_bits >> (q->hash & 63) & 1))
			continue; /* jcf_method_find_hashed's first test */
		const struct jcf_method *x =
			jcf_method_find_hashed(c->cf, q->name, q->hash, q->desc);
		if (!x || (x->access_flags & (JCF_ACC_STATIC | JCF_ACC_PRIVATE)))
			continue;
		int abstract = x->access_flags & JCF_ACC_ABSTRACT;
		*decl = abstract ? SEL_ABSTRACT : ci;
		*m = abstract ? NULL : x;
		break;
	}
	for (uint32_t k = s, d = 0; k != NONE && d <= depth && d < h->n;
	     k = h->cls[k].super, d++) {
		h->cls[k].mark[MARK_SELECT] = gen;
		h->cls[k].sel_decl = *decl;
		h->cls[k].sel_m = *m;
	}
}

/* The method invokevirtual/invokeinterface runs for receiver class S
 * (JVMS §5.4.6), or NULL (AbstractMethodError or ambiguity). */
static const struct jcf_method *select_in(struct jhier *h, uint32_t s,
					  const struct selq *q,
					  uint32_t *decl, int *err)
{
	const struct jcf_method *m;
	select_chain(h, s, q, decl, &m);
	if (m || *decl == SEL_ABSTRACT)
		return m;
	uint32_t any;
	*decl = max_specific(h, s, q->name, q->desc, 1, &any, err);
	return *decl == NONE ? NULL :
			       jcf_method_find(h->cls[*decl].cf, q->name,
					       q->desc);
}

static void concrete_subtypes(struct jhier *h, uint32_t ci, uint32_t gen,
			      struct list *l)
{
	struct jclass *c = &h->cls[ci];
	if (c->mark[MARK_DOWN] == gen)
		return;
	c->mark[MARK_DOWN] = gen;
	if (!(jcf_access_flags(c->cf) & (JCF_ACC_INTERFACE | JCF_ACC_ABSTRACT)))
		list_push(l, ci);
	for (uint32_t k = 0; k < c->nsubs; k++)
		concrete_subtypes(h, c->subs[k], gen, l);
}

/* The concrete subtypes of SYM, in concrete_subtypes' order, kept in its
 * class: virtual calls on one static type ask again for each method (the
 * methods of Object in jython: 40 times 1,684 classes).  java_err_nomem
 * or the count. */
static int concrete_of(struct jhier *h, uint32_t sym, const uint32_t **v)
{
	struct jclass *c = &h->cls[sym];
	if (!c->conc_done) {
		struct list l = { 0 };
		concrete_subtypes(h, sym, new_gen(h, MARK_DOWN), &l);
		if (l.err) {
			free(l.v);
			return java_err_nomem;
		}
		c->conc = l.v;
		c->nconc = l.n;
		c->conc_done = 1;
	}
	*v = c->conc;
	return (int)c->nconc;
}

static uint32_t vt_slot(const struct jhier *h, uint32_t sym,
			const struct jcf_method *m)
{
	uint64_t k = ((uint64_t)(uintptr_t)m >> 3) * 0x9e3779b97f4a7c15ull ^ sym;
	uint32_t i = (uint32_t)(k ^ k >> 29) & (h->vt_cap - 1);
	while (h->vt[i].m && (h->vt[i].m != m || h->vt[i].sym != sym))
		i = (i + 1) & (h->vt_cap - 1);
	return i;
}

static const struct vtargets *vt_find(const struct jhier *h, uint32_t sym,
				      const struct jcf_method *m)
{
	if (!h->vt_cap)
		return NULL;
	const struct vtargets *e = &h->vt[vt_slot(h, sym, m)];
	return e->m ? e : NULL;
}

static int vt_grow(struct jhier *h)
{
	uint32_t cap = h->vt_cap ? 2 * h->vt_cap : 256;
	struct vtargets *old = h->vt;
	uint32_t ocap = h->vt_cap;
	h->vt = calloc(cap, sizeof(*h->vt));
	if (!h->vt) {
		h->vt = old;
		return java_err_nomem;
	}
	h->vt_cap = cap;
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i].m)
			h->vt[vt_slot(h, old[i].sym, old[i].m)] = old[i];
	free(old);
	return java_ok;
}

/* Keep V (N targets, owned from here on) as the answer for SYM, M: its
 * entry, or NULL when out of memory (V freed). */
static const struct vtargets *vt_store(struct jhier *h, uint32_t sym,
				       const struct jcf_method *m,
				       struct jhier_method *v, int n)
{
	if (2 * (h->vt_n + 1) > h->vt_cap && vt_grow(h)) {
		free(v);
		return NULL;
	}
	struct vtargets *e = &h->vt[vt_slot(h, sym, m)];
	*e = (struct vtargets){ .sym = sym, .m = m, .n = n, .v = v };
	h->vt_n++;
	return e;
}

/* Every method a virtual call on SYM resolved to RES can run: into *ALL
 * (allocated), the count returned. */
static int select_all(struct jhier *h, uint32_t sym,
		      const struct jhier_method *res, struct jhier_method **all)
{
	const uint32_t *conc;
	int n = 0, err = 0, nc = concrete_of(h, sym, &conc);
	if (nc < 0)
		return nc;
	/* Dedup needs all candidates, so collect into a private array. */
	*all = malloc((size_t)(nc ? nc : 1) * sizeof(**all));
	if (!*all)
		return java_err_nomem;
	struct selq q = new_selq(h, res->m);
	uint32_t tgen = new_gen(h, MARK_TARGET);
	for (int i = 0; i < nc && !err; i++) {
		uint32_t decl;
		const struct jcf_method *m = NULL;
		/* select_in's own answer where the quick one is a method
		 * or abstract; else select_in looks further (the call cost
		 * more than the quick answer) */
		if (!select_quick(h, conc[i], &q, &decl, &m) ||
		    (!m && decl != SEL_ABSTRACT))
			m = select_in(h, conc[i], &q, &decl, &err);
		/* A selected method is its class's one NAME DESC (each class
		 * has its own class file), so a mark on the class dedups. */
		if (m && h->cls[decl].mark[MARK_TARGET] != tgen) {
			h->cls[decl].mark[MARK_TARGET] = tgen;
			set_out(h, &(*all)[n++], decl, m, 0);
		}
	}
	if (!err && n == 0 && !(res->m->access_flags & JCF_ACC_ABSTRACT)) {
		(*all)[0] = *res; /* no loaded receiver class: the declared one */
		n = 1;
	}
	if (err) {
		free(*all);
		*all = NULL;
	} else if (n && n < nc) {
		/* kept (vt_store): the room of the NC receivers goes back */
		struct jhier_method *v = realloc(*all, (size_t)n * sizeof(**all));
		*all = v ? v : *all;
	}
	return err ? err : n;
}

static int virtual_targets(struct jhier *h, uint32_t sym,
			   const struct jhier_method *res,
			   struct jhier_method *out, size_t max)
{
	const struct vtargets *e = vt_find(h, sym, res->m);
	if (!e) {
		struct jhier_method *all;
		int n = select_all(h, sym, res, &all);
		if (n < 0)
			return n;
		if (!(e = vt_store(h, sym, res->m, all, n)))
			return java_err_nomem;
	}
	for (int i = 0; i < e->n && (size_t)i < max; i++)
		out[i] = e->v[i];
	return e->n;
}

/* invokespecial (JVMS §6.5): a super call starts at the caller's direct
 * superclass; everything else is the resolved method. */
static int special_target(struct jhier *h, uint32_t caller, uint32_t sym,
			  const struct jcf_ref *ref, struct jhier_method *out)
{
	uint32_t sup = h->cls[caller].super;
	int super_call = strcmp(ref->name, "<init>") && sym != caller &&
		!(jcf_access_flags(h->cls[sym].cf) & JCF_ACC_INTERFACE) &&
		is_subtype(h, caller, sym);
	int err = resolve_in(h, super_call && sup != NONE ? sup : sym,
			     ref->name, ref->descriptor, out);
	out->flags = JHIER_T_EXACT;
	return err;
}

static int indy_target(struct jhier *h, const struct jcf *caller,
		       uint64_t loader, unsigned cp_index,
		       struct jhier_method *out, size_t max)
{
	struct jcf_ref impl;
	struct jhier_method m;
	int err = jcf_lambda_impl(caller, cp_index, &impl, NULL);
	if (err == java_err_not_found)
		return 0;
	if (!err)
		err = jhier_resolve(h, impl.class_name, impl.name,
				    impl.descriptor, loader, &m);
	if (err)
		return err == java_err_not_found ? 0 : err;
	m.flags = JHIER_T_INDIRECT;
	if (max)
		out[0] = m;
	return 1;
}

static int ref_matches(unsigned kind, int tag)
{
	switch (kind) {
	case JBC_INVOKE_STATIC:
	case JBC_INVOKE_SPECIAL:
		return tag == JCF_CONSTANT_Methodref ||
		       tag == JCF_CONSTANT_InterfaceMethodref;
	case JBC_INVOKE_VIRTUAL:
		return tag == JCF_CONSTANT_Methodref;
	case JBC_INVOKE_INTERFACE:
		return tag == JCF_CONSTANT_InterfaceMethodref;
	case JBC_INVOKE_DYNAMIC:
		return tag == JCF_CONSTANT_InvokeDynamic;
	default:
		return 0;
	}
}

/* A receiver whose static type is a final class has exactly that class:
 * selection from it is the one target. */
static int final_receiver(struct jhier *h, uint32_t sym,
			  struct jhier_method *res)
{
	uint16_t acc = jcf_access_flags(h->cls[sym].cf);
	if (!(acc & JCF_ACC_FINAL) || (acc & JCF_ACC_INTERFACE))
		return java_ok;
	uint32_t decl;
	int err = 0;
	struct selq q = new_selq(h, res->m);
	const struct jcf_method *m = select_in(h, sym, &q, &decl, &err);
	if (m) {
		set_out(h, res, decl, m, JHIER_T_EXACT);
		return java_ok;
	}
	return err;
}

int jhier_call_targets(struct jhier *h, const struct jcf *caller,
		       uint64_t loader, unsigned kind, unsigned cp_index,
		       struct jhier_method *out, size_t max)
{
	struct jcf_ref ref;
	struct jhier_method res;
	if (!h || !caller || (max && !out))
		return java_err_invalid;
	int err = link_all(h);
	if (!err)
		err = jcf_cp_ref(caller, cp_index, &ref);
	if (err)
		return err;
	if (!ref_matches(kind, ref.tag))
		return java_err_bad_cpool;
	if (kind == JBC_INVOKE_DYNAMIC)
		return indy_target(h, caller, loader, cp_index, out, max);
	uint32_t sym = find(h, method_class(ref.class_name), loader);
	if (sym == NONE)
		return 0; /* class not in the bundle: nothing known */
	if (kind == JBC_INVOKE_SPECIAL) {
		uint32_t self = find(h, jcf_this_class(caller), loader);
		err = special_target(h, self == NONE ? sym : self, sym, &ref,
				     &res);
	} else {
		err = resolve_in(h, sym, ref.name, ref.descriptor, &res);
	}
	if (err)
		return err == java_err_not_found ? 0 : err;
	if (kind != JBC_INVOKE_SPECIAL && kind != JBC_INVOKE_STATIC &&
	    !(res.m->access_flags & (JCF_ACC_PRIVATE | JCF_ACC_FINAL)))
		err = final_receiver(h, sym, &res);
	if (err)
		return err;
	if (kind == JBC_INVOKE_SPECIAL || kind == JBC_INVOKE_STATIC ||
	    (res.m->access_flags & (JCF_ACC_PRIVATE | JCF_ACC_FINAL)) ||
	    res.flags == JHIER_T_EXACT ||
	    strcmp(res.m->descriptor, ref.descriptor)) {
		/* Exact, or signature-polymorphic (descriptors differ). */
		res.flags = JHIER_T_EXACT;
		if (max)
			out[0] = res;
		return 1;
	}
	return virtual_targets(h, sym, &res, out, max);
}
