// SPDX-License-Identifier: MIT
/* The program model facade: classes from a bundle, method ids, and a
 * CFG cache keyed by method (a pointer map: methods never move). */
#include "java/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"
#include "records.h"
#include "records_jvm.h"

struct method_id {
	uint64_t id;
	char *class_name; /* internal form */
	char *name;
	char *sig;
};

/* Call-site candidates of one invoke, computed on first use. */
struct call_entry {
	uint16_t insn; /* its instruction index (code is under 64 KiB) */
	uint16_t done;
	int n; /* candidates, or a negative java_error */
	struct jhier_method *v;
};

/* A CFG's invokes, by instruction index: an entry per instruction was
 * 16 bytes for each of them, and most are no invoke (jython: 1.6 MB). */
struct call_table {
	uint32_t n;
	struct call_entry e[];
};

/* Call-site candidates live in chunks dropped with them (drop_calls)
 * rather than in an allocation per site (jython: 5.5 k, ~2.5 M
 * instructions to allocate and free). */
struct calls_chunk {
	struct calls_chunk *next;
	size_t used, cap;
	struct jhier_method v[];
};
#define CALLS_CHUNK 1024

struct cfg_slot {
	const struct jcf_method *m;
	struct jcfg *g;
	int err; /* a failed build is remembered, not retried */
	struct call_table *calls; /* NULL until asked */
};

struct jprog {
	struct jhier *hier;
	struct jcf_arena *classes; /* every class file's parts */
	size_t bad;
	struct java_diag first_bad;
	struct method_id *ids;
	size_t nids, ids_cap;
	int ids_sorted;
	struct cfg_slot *cfgs;
	size_t ncfgs, cfgs_cap; /* cap is a power of two */
	size_t nmethods; /* in the classes added */
	struct calls_chunk *chunks; /* the newest first */
};

/* Room for N candidates, or NULL when out of memory. */
static struct jhier_method *calls_take(struct jprog *p, size_t n)
{
	struct calls_chunk *c = p->chunks;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > CALLS_CHUNK ? n : CALLS_CHUNK;
		if (!(c = malloc(sizeof(*c) + cap * sizeof(c->v[0]))))
			return NULL;
		*c = (struct calls_chunk){ .next = p->chunks, .cap = cap };
		p->chunks = c;
	}
	c->used += n;
	return c->v + c->used - n;
}

static void free_chunks(struct jprog *p)
{
	while (p->chunks) {
		struct calls_chunk *c = p->chunks;
		p->chunks = c->next;
		free(c);
	}
}

/* Candidates depend on the set of classes: a new class drops them. */
static void drop_calls(struct jprog *p)
{
	for (size_t i = 0; i < p->cfgs_cap; i++) {
		if (!p->cfgs[i].calls)
			continue;
		free(p->cfgs[i].calls);
		p->cfgs[i].calls = NULL;
	}
	free_chunks(p);
}

int jprog_alloc(struct jprog **out)
{
	if (!out)
		return java_err_invalid;
	struct jprog *p = calloc(1, sizeof(*p));
	if (!p)
		return java_err_nomem;
	int err = jhier_alloc(&p->hier);
	if (!err && (err = jcf_arena_alloc(&p->classes)))
		jhier_free(p->hier);
	if (err) {
		free(p);
		return err;
	}
	p->ids_sorted = 1;
	*out = p;
	return java_ok;
}

void jprog_free(struct jprog *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nids; i++) {
		free(p->ids[i].class_name);
		free(p->ids[i].name);
		free(p->ids[i].sig);
	}
	free(p->ids);
	/* one walk of the slots, most of them empty */
	for (size_t i = 0; i < p->cfgs_cap; i++) {
		struct cfg_slot *s = &p->cfgs[i];
		free(s->calls);
		if (s->g)
			jcfg_free(s->g);
	}
	free(p->cfgs);
	free_chunks(p);
	jhier_free(p->hier);
	jcf_arena_free(p->classes); /* after the classes' last use */
	free(p);
}

struct jhier *jprog_hier(struct jprog *p) { return p->hier; }
size_t jprog_bad_classes(const struct jprog *p) { return p->bad; }

const struct java_diag *jprog_first_bad(const struct jprog *p)
{
	return p->bad ? &p->first_bad : NULL;
}

int jprog_add_class(struct jprog *p, const uint8_t *data, size_t len,
		    uint64_t loader, struct java_diag *diag)
{
	struct java_diag local;
	struct jcf *cf;
	if (!diag)
		diag = &local;
	int err = jcf_parse_in(p->classes, &cf, data, len, diag);
	if (err) {
		if (!p->bad++)
			p->first_bad = *diag;
		return err;
	}
	unsigned nm = jcf_method_count(cf);
	err = jhier_add(p->hier, cf, loader);
	if (err == 0) {
		drop_calls(p);
		p->nmethods += nm;
	}
	return err;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

int jprog_add_method_id(struct jprog *p, uint64_t id, const char *class_sig,
			const char *name, const char *sig)
{
	if (!p || !class_sig || !name || !sig)
		return java_err_invalid;
	size_t n = strlen(class_sig);
	/* "Lpkg/Name;" -> "pkg/Name"; array classes keep their form. */
	if (n >= 2 && class_sig[0] == 'L' && class_sig[n - 1] == ';') {
		class_sig++;
		n -= 2;
	}
	if (p->nids == p->ids_cap) {
		size_t cap = p->ids_cap ? 2 * p->ids_cap : 256;
		struct method_id *v = realloc(p->ids, cap * sizeof(*v));
		if (!v)
			return java_err_nomem;
		p->ids = v;
		p->ids_cap = cap;
	}
	struct method_id *e = &p->ids[p->nids];
	e->id = id;
	e->class_name = dup_n(class_sig, n);
	e->name = strdup(name);
	e->sig = strdup(sig);
	if (!e->class_name || !e->name || !e->sig) {
		free(e->class_name);
		free(e->name);
		free(e->sig);
		return java_err_nomem;
	}
	if (p->nids && p->ids[p->nids - 1].id > id)
		p->ids_sorted = 0;
	p->nids++;
	return java_ok;
}

static int cmp_id(const void *a, const void *b)
{
	const struct method_id *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

int jprog_method_by_id(struct jprog *p, uint64_t id, struct jhier_method *out)
{
	if (!p->ids_sorted) {
		qsort(p->ids, p->nids, sizeof(*p->ids), cmp_id);
		p->ids_sorted = 1;
	}
	size_t lo = 0, hi = p->nids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->nids || p->ids[lo].id != id)
		return java_err_not_found;
	const struct method_id *e = &p->ids[lo];
	/* jmethodIDs do not say the loader; the bootstrap-then-any order of
	 * jhier_class picks the class. */
	const struct jcf *cls = jhier_class(p->hier, e->class_name, 0);
	const struct jcf_method *m =
		cls ? jcf_method_find(cls, e->name, e->sig) : NULL;
	if (!m)
		return java_err_not_found;
	out->cls = cls;
	out->m = m;
	out->loader = 0;
	out->flags = JHIER_T_EXACT;
	return java_ok;
}

/* ---- bundle loading ----------------------------------------------------- */

/* Say which record held the first bad class: the parser's offset is
 * within the class file, which alone cannot be found in the bundle. */
static void where_bad(struct jprog *p, uint64_t record_offset)
{
	struct java_diag *d = &p->first_bad;
	char prefix[64];
	int n = snprintf(prefix, sizeof(prefix), "jvm: class record at offset %llu: ",
			 (unsigned long long)record_offset);
	if (n <= 0 || (size_t)n >= sizeof(prefix))
		return;
	size_t len = strnlen(d->msg, sizeof(d->msg) - 1);
	size_t keep = sizeof(d->msg) - 1 - (size_t)n; /* the tail may go */
	if (len > keep)
		len = keep;
	memmove(d->msg + n, d->msg, len);
	memcpy(d->msg, prefix, (size_t)n);
	d->msg[(size_t)n + len] = 0;
}

static int load_record(struct jprog *p, const struct jpb_record *rec,
		       struct java_diag *diag)
{
	if (rec->type == JPB_REC_JVM_CLASS) {
		struct jpb_rec_jvm_class c;
		struct java_diag d;
		if (jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload,
				   rec->size, &c)) {
			/* its CRC held, so the writer made it so: a class
			 * lost all the same, counted like one that fails */
			d = (struct java_diag){ .err = java_err_corrupt };
			snprintf(d.msg, sizeof(d.msg), "jvm: class record at offset %llu malformed",
				 (unsigned long long)rec->offset);
			if (!p->bad++)
				p->first_bad = d;
			return 0;
		}
		size_t bad = p->bad;
		int err = jprog_add_class(p, c.bytes.ptr, c.bytes.len,
					  c.loader, &d);
		/* this class is the first bad one (not a later failure, such
		 * as memory, after another was) */
		if (!bad && p->bad == 1)
			where_bad(p, rec->offset);
		return err == 0;
	}
	if (rec->type == JPB_REC_JVM_METHOD) {
		struct jpb_rec_jvm_method m;
		if (jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload,
				   rec->size, &m))
			return 0;
		char *cs = dup_n(m.class_sig.ptr, m.class_sig.len);
		char *nm = dup_n(m.name.ptr, m.name.len);
		char *sg = dup_n(m.signature.ptr, m.signature.len);
		int err = cs && nm && sg ?
			jprog_add_method_id(p, m.method_id, cs, nm, sg) :
			java_err_nomem;
		free(cs);
		free(nm);
		free(sg);
		if (err && diag) {
			diag->err = err;
			snprintf(diag->msg, sizeof(diag->msg), "jvm: %s",
				 java_errstr(err));
		}
		return err;
	}
	return 0;
}

/* What the jvm stream's damage lost: records stepped over, and a tail
 * cut off when ERR is not the stream's clean end. */
static void say_damage(const struct jpb_reader *r, int err, struct java_diag *diag)
{
	diag->err = err == jpb_err_eos ? jpb_err_corrupt : err;
	diag->offset = (size_t)jpb_reader_bad_offset(r);
	jpb_reader_damage(r, err, diag->msg, sizeof(diag->msg));
}

int jprog_load_bundle(struct jprog *p, struct jpb_bundle *b,
		      struct java_diag *diag)
{
	return jprog_load_bundle_visit(p, b, diag, NULL, NULL);
}

int jprog_load_bundle_visit(struct jprog *p, struct jpb_bundle *b,
			    struct java_diag *diag, jprog_visit_fn visit, void *arg)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	int added = 0, err = jpb_reader_open(b, "jvm", &r);
	if (err) {
		if (diag) {
			diag->err = err;
			diag->offset = 0;
			snprintf(diag->msg, sizeof(diag->msg), "jvm: %s",
				 jpb_bundle_errmsg(b));
		}
		return err;
	}
	/* a record that fails its checksum is one class or method lost;
	 * the records after it are read on */
	jpb_reader_skip_damaged(r);
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		int n = load_record(p, &rec, diag);
		int v = n < 0 || !visit ? 0 : visit(arg, &rec);
		if (v < 0 && diag) {
			diag->err = v;
			diag->offset = (size_t)rec.offset;
			snprintf(diag->msg, sizeof(diag->msg), "jvm: record at offset %llu: %s",
				 (unsigned long long)rec.offset, jpb_errstr(v));
		}
		if (n < 0 || v < 0) {
			jpb_reader_free(r);
			return n < 0 ? n : v;
		}
		added += n;
	}
	if ((err != jpb_err_eos || jpb_reader_damaged(r)) && diag)
		say_damage(r, err, diag);
	jpb_reader_free(r);
	return added;
}

/* ---- CFG cache ---------------------------------------------------------- */

static size_t ptr_hash(const void *ptr)
{
	uint64_t x = (uint64_t)(uintptr_t)ptr;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static struct cfg_slot *cfg_slot(struct jprog *p, const struct jcf_method *m)
{
	size_t mask = p->cfgs_cap - 1;
	for (size_t i = ptr_hash(m) & mask;; i = (i + 1) & mask)
		if (!p->cfgs[i].m || p->cfgs[i].m == m)
			return &p->cfgs[i];
}

static int cfg_grow(struct jprog *p)
{
	size_t old_cap = p->cfgs_cap;
	struct cfg_slot *old = p->cfgs;
	/* A trace reaches a fifth of the methods or so (jython: 10.5 k
	 * of 48.5 k): the first table has a slot for half of them, where
	 * doubling from 64 rehashed nine times (2.7 M instructions). */
	size_t cap = 64;
	while (!old_cap && cap < p->nmethods / 2)
		cap *= 2;
	p->cfgs_cap = old_cap ? 2 * old_cap : cap;
	p->cfgs = calloc(p->cfgs_cap, sizeof(*p->cfgs));
	if (!p->cfgs) {
		p->cfgs = old;
		p->cfgs_cap = old_cap;
		return java_err_nomem;
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].m)
			*cfg_slot(p, old[i].m) = old[i];
	free(old);
	return java_ok;
}

/* Build M's CFG into S (new, or checked by jprog_has_cfg and not yet
 * built); a failed build is remembered, running out of memory is not. */
static int build_slot(struct jprog *p, struct cfg_slot *s,
		      const struct jcf_method *m, struct java_diag *diag)
{
	int fresh = !s->m;
	s->m = m;
	s->err = jcfg_build(&s->g, m, diag);
	if (s->err != java_err_nomem) {
		p->ncfgs += fresh;
		return s->err;
	}
	s->err = 0;
	if (fresh)
		s->m = NULL; /* linear probing: a new slot was the end */
	return java_err_nomem;
}

static int reserve_slot(struct jprog *p)
{
	return 2 * (p->ncfgs + 1) > p->cfgs_cap ? cfg_grow(p) : java_ok;
}

static int get_slot(struct jprog *p, const struct jcf_method *m,
		    struct cfg_slot **out, struct java_diag *diag)
{
	int err = reserve_slot(p);
	if (err)
		return err;
	struct cfg_slot *s = cfg_slot(p, m);
	if (!s->m || (!s->g && !s->err)) {
		if ((err = build_slot(p, s, m, diag)) == java_err_nomem)
			return err;
	} else if (s->err && diag) {
		diag->err = s->err;
		diag->offset = 0;
		snprintf(diag->msg, sizeof(diag->msg), "method %s%s: %s "
			 "(cached)", m->name, m->descriptor,
			 java_errstr(s->err));
	}
	*out = s;
	return s->err;
}

int jprog_has_cfg(struct jprog *p, const struct jcf_method *m)
{
	if (!p || !m)
		return java_err_invalid;
	int err = reserve_slot(p);
	if (err)
		return err;
	struct cfg_slot *s = cfg_slot(p, m);
	if (s->m)
		return !s->err;
	if (jcfg_check(m) == java_ok) {
		s->m = m; /* checked: built when first asked for */
		p->ncfgs++;
		return 1;
	}
	/* Rare: bad code, left for jprog_cfg to build, so that the first to
	 * ask it gets the builder's own message, not the cached error's. */
	return 0;
}

int jprog_cfg(struct jprog *p, const struct jcf_method *m,
	      const struct jcfg **out, struct java_diag *diag)
{
	struct cfg_slot *s;
	if (!p || !m || !out)
		return java_err_invalid;
	*out = NULL;
	int err = get_slot(p, m, &s, diag);
	if (!err)
		*out = s->g;
	return err;
}

static int compute_calls(struct jprog *p, const struct jcf *cls,
			 uint64_t loader, const struct jcfg_insn *in,
			 struct call_entry *c)
{
	/* Most sites have few targets: one pass into a small buffer, and a
	 * second only for the sites that overflow it. */
	struct jhier_method few[16];
	int n = jhier_call_targets(p->hier, cls, loader, in->kind,
				   in->cp_index, few, 16);
	if (n > 0) {
		c->v = calls_take(p, (size_t)n);
		if (!c->v)
			return java_err_nomem;
		if (n <= 16)
			memcpy(c->v, few, (size_t)n * sizeof(*c->v));
		else
			n = jhier_call_targets(p->hier, cls, loader, in->kind,
					       in->cp_index, c->v, (size_t)n);
	}
	c->n = n;
	c->done = 1;
	return java_ok;
}

/* G's invokes, in instruction order, none computed. */
static struct call_table *call_table(const struct jcfg *g)
{
	const struct jcfg_hot *hot = jcfg_hots(g);
	uint32_t n = jcfg_insn_count(g), k = 0;
	for (uint32_t i = 0; i < n; i++)
		k += jbc_is_invoke(hot[i].kind);
	struct call_table *t = malloc(sizeof(*t) + k * sizeof(t->e[0]));
	if (!t)
		return NULL;
	t->n = k;
	k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (jbc_is_invoke(hot[i].kind))
			t->e[k++] = (struct call_entry){ .insn = (uint16_t)i };
	return t;
}

/* The entry of INSN, an invoke of T's CFG. */
static struct call_entry *call_entry(struct call_table *t, uint32_t insn)
{
	uint32_t lo = 0, hi = t->n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->e[mid].insn <= insn)
			lo = mid;
		else
			hi = mid;
	}
	return &t->e[lo];
}

int jprog_call_targets(struct jprog *p, const struct jcf *cls,
		       uint64_t loader, const struct jcf_method *m,
		       uint32_t insn, const struct jhier_method **out)
{
	struct cfg_slot *s;
	if (!p || !cls || !m || !out)
		return java_err_invalid;
	*out = NULL;
	int err = get_slot(p, m, &s, NULL);
	if (err)
		return err;
	const struct jcfg_insn *in = jcfg_insn(s->g, insn);
	if (!in || !jbc_is_invoke(in->kind))
		return java_err_invalid;
	if (!s->calls && !(s->calls = call_table(s->g)))
		return java_err_nomem;
	struct call_entry *c = call_entry(s->calls, insn);
	if (!c->done && (err = compute_calls(p, cls, loader, in, c)))
		return err;
	*out = c->v;
	return c->n;
}
