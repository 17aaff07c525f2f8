// SPDX-License-Identifier: MIT
/*
 * Test helper for agent_attach: do the class files a late attach read from
 * the loaders' resources (jvm_class flag bit 2) give the same methods as
 * the ones RetransformClasses gives (flag bit 0, the agent's noresource
 * option) for the same classes?  Both bundles come from attaching to the
 * same workload on the same JDK.  Per method (matched by name and
 * descriptor): the code, the exception table (catch types by name) and the
 * line numbers must be equal.
 *
 *   class_code_check RESOURCE_DIR RETRANSFORM_DIR
 *   class_code_check --rebuilt REBUILT_DIR REFERENCE_DIR
 *                                    the same for the class files rebuilt
 *                                    from JVMTI and HotSpot's metadata
 *                                    (flag bit 3) against the real files
 *                                    of REFERENCE_DIR (retransformed or
 *                                    read from resources, flag bit 0 or
 *                                    2); also the header (super class,
 *                                    interfaces, version), max_locals,
 *                                    max_stack (stack_differ; 65535, the
 *                                    agent's "unknown", in stack_unknown)
 *                                    and BootstrapMethods (bsm_differ;
 *                                    bsm_lambda, bsm_concat: rebuilt
 *                                    classes whose bootstraps include
 *                                    LambdaMetafactory's or
 *                                    StringConcatFactory's);
 *                                    exc_absent: methods whose rebuilt
 *                                    table is empty and the real one not
 *                                    (also in exc_differ)
 *   class_code_check --model DIR     the decoder's program model of DIR:
 *                                    classes, bad ones, CFGs built
 *
 * Prints one JSON object; exit 0 if it could read the bundles.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "java/classfile.h"
#include "java/program.h"
#include "records.h"
#include "records_jvm.h"

struct cls {
	char *name;
	struct jcf *cf;
};

struct side {
	uint32_t flag;
	struct cls *v;
	size_t n, cap;
	uint64_t unparsable;
};

static void add_class(struct side *s, const struct jpb_rec_jvm_class *c)
{
	struct jcf *cf = NULL;
	if (!(c->flags & s->flag))
		return;
	if (jcf_parse(&cf, c->bytes.ptr, c->bytes.len, NULL) != java_ok) {
		s->unparsable++;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n].name = strndup(c->name.ptr, c->name.len);
	s->v[s->n++].cf = cf;
}

static int read_side(const char *dir, struct side *s)
{
	struct jpb_bundle *b = NULL;
	struct jpb_reader *r = NULL;
	struct jpb_record rec;
	int err = jpb_bundle_open(&b, dir);
	if (!err)
		err = jpb_reader_open(b, "jvm", &r);
	if (err) {
		fprintf(stderr, "class_code_check: %s: %s\n", dir, jpb_errstr(err));
		jpb_bundle_free(b);
		return -1;
	}
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		struct jpb_rec_jvm_class c;
		if (rec.type == JPB_REC_JVM_CLASS &&
		    !jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
				    rec.size, &c))
			add_class(s, &c);
	}
	if (err != jpb_err_eos)
		fprintf(stderr, "class_code_check: %s\n", jpb_reader_errmsg(r));
	jpb_reader_free(r);
	jpb_bundle_free(b);
	return err == jpb_err_eos ? 0 : -1;
}

static void free_side(struct side *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		jcf_free(s->v[i].cf);
	}
	free(s->v);
}

static const struct jcf *find(const struct side *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return s->v[i].cf;
	return NULL;
}

static int same_exc(const struct jcf_method *a, const struct jcf_method *b)
{
	if (a->nexc != b->nexc)
		return 0;
	for (unsigned i = 0; i < a->nexc; i++) {
		const struct jcf_exc *x = &a->exc[i], *y = &b->exc[i];
		if (x->start_pc != y->start_pc || x->end_pc != y->end_pc ||
		    x->handler_pc != y->handler_pc ||
		    !x->catch_class != !y->catch_class ||
		    (x->catch_class && strcmp(x->catch_class, y->catch_class)))
			return 0;
	}
	return 1;
}

static int same_lines(const struct jcf_method *a, const struct jcf_method *b)
{
	return a->nlines == b->nlines &&
	       (!a->nlines ||
		!memcmp(a->lines, b->lines, a->nlines * sizeof(*a->lines)));
}

/* Load DIR's classes into a program model and build every CFG. */
static int model(const char *dir)
{
	struct jpb_bundle *b = NULL;
	struct jprog *p = NULL;
	struct java_diag d = { 0 };
	int err = jpb_bundle_open(&b, dir);
	if (err || jprog_alloc(&p)) {
		fprintf(stderr, "class_code_check: %s: %s\n", dir, jpb_errstr(err));
		jpb_bundle_free(b);
		return 1;
	}
	int n = jprog_load_bundle(p, b, &d);
	uint64_t cfgs = 0, bad_cfgs = 0;
	struct jhier *h = jprog_hier(p);
	for (size_t i = 0; n >= 0 && i < jhier_class_count(h); i++) {
		const struct jcf *cf = jhier_class_at(h, i, NULL);
		for (unsigned k = 0; k < jcf_method_count(cf); k++) {
			const struct jcf_method *m = jcf_method(cf, k);
			const struct jcfg *g;
			if (!m->code)
				continue;
			if (jprog_cfg(p, m, &g, &d) == 0)
				cfgs++;
			else
				bad_cfgs++;
		}
	}
	printf("{\"classes\":%d,\"bad_classes\":%zu,\"cfgs\":%" PRIu64
	       ",\"bad_cfgs\":%" PRIu64 "}\n", n, jprog_bad_classes(p), cfgs,
	       bad_cfgs);
	jprog_free(p);
	jpb_bundle_free(b);
	return n < 0;
}

/* Super class, interfaces and version equal. */
static int same_header(const struct jcf *a, const struct jcf *b)
{
	unsigned ma, na, mb, nb;
	const char *sa = jcf_super_class(a), *sb = jcf_super_class(b);
	jcf_version(a, &ma, &na);
	jcf_version(b, &mb, &nb);
	if (ma != mb || na != nb || !sa != !sb || (sa && strcmp(sa, sb)) ||
	    jcf_interface_count(a) != jcf_interface_count(b))
		return 0;
	for (unsigned i = 0; i < jcf_interface_count(a); i++)
		if (strcmp(jcf_interface(a, i), jcf_interface(b, i)))
			return 0;
	return 1;
}

/* 1 if a bootstrap method of CF is a static method of class OWNER
 * (java/lang/invoke/LambdaMetafactory: lambdas; StringConcatFactory:
 * string concatenation). */
static int uses_bootstrap(const struct jcf *cf, const char *owner)
{
	for (unsigned i = 0; i < jcf_bootstrap_count(cf); i++) {
		const struct jcf_cpe *mh = jcf_cp(cf, jcf_bootstrap(cf, i)->method_handle);
		struct jcf_ref ref;
		if (mh && jcf_cp_ref(cf, mh->b, &ref) == java_ok &&
		    ref.class_name && !strcmp(ref.class_name, owner))
			return 1;
	}
	return 0;
}

/* The BootstrapMethods attributes equal, entry by entry (constant pool
 * indices: a rebuilt class keeps the loaded class's indices). */
static int same_bootstrap(const struct jcf *a, const struct jcf *b)
{
	if (jcf_bootstrap_count(a) != jcf_bootstrap_count(b))
		return 0;
	for (unsigned i = 0; i < jcf_bootstrap_count(a); i++) {
		const struct jcf_bootstrap *x = jcf_bootstrap(a, i);
		const struct jcf_bootstrap *y = jcf_bootstrap(b, i);
		if (x->method_handle != y->method_handle ||
		    x->nargs != y->nargs ||
		    (x->nargs &&
		     memcmp(x->args, y->args, x->nargs * sizeof(*x->args))))
			return 0;
	}
	return 1;
}

struct counts {
	uint64_t compared, methods, absent, code, exc, lines, exc_absent,
		extra, header, locals, stack, stack_unknown, exc_methods,
		bsm_classes, bsm, bsm_lambda, bsm_concat;
	const char *first;
};

static void compare_method(const struct jcf_method *m,
			   const struct jcf_method *n, int rebuilt,
			   struct counts *c)
{
	c->methods++;
	if (!n) {
		c->absent++;
		return;
	}
	if (m->code_length != n->code_length ||
	    (m->code && memcmp(m->code, n->code, m->code_length)))
		c->code++;
	else if (!same_exc(m, n))
		c->exc++;
	c->exc_absent += rebuilt && !m->nexc && n->nexc;
	c->exc_methods += n->nexc != 0;
	if (m->code && m->max_locals != n->max_locals)
		c->locals++;
	else if (!same_lines(m, n))
		c->lines++;
	if (rebuilt && m->code && m->max_stack == 65535)
		c->stack_unknown++;
	else if (rebuilt && m->code && m->max_stack != n->max_stack)
		c->stack++;
}

static void compare_class(const char *name, const struct jcf *a,
			  const struct jcf *b, int rebuilt, struct counts *c)
{
	uint64_t before = c->absent + c->code + c->exc + c->lines + c->stack +
			  c->bsm + c->header;
	c->compared++;
	c->header += !same_header(a, b);
	if (rebuilt && jcf_bootstrap_count(b)) {
		c->bsm_classes++;
		c->bsm += !same_bootstrap(a, b);
		c->bsm_lambda += uses_bootstrap(a,
				"java/lang/invoke/LambdaMetafactory");
		c->bsm_concat += uses_bootstrap(a,
				"java/lang/invoke/StringConcatFactory");
	}
	for (unsigned k = 0; k < jcf_method_count(b); k++) {
		const struct jcf_method *n = jcf_method(b, k);
		c->extra += !jcf_method_find(a, n->name, n->descriptor);
	}
	for (unsigned k = 0; k < jcf_method_count(a); k++) {
		const struct jcf_method *m = jcf_method(a, k);
		compare_method(m, jcf_method_find(b, m->name, m->descriptor),
			       rebuilt, c);
	}
	if (before != c->absent + c->code + c->exc + c->lines + c->stack +
			      c->bsm + c->header &&
	    !*c->first)
		c->first = name;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--model"))
		return model(argv[2]);
	int rebuilt = argc == 4 && !strcmp(argv[1], "--rebuilt");
	struct side res = { .flag = rebuilt ? JPB_CLASS_F_REBUILT
					    : JPB_CLASS_F_RESOURCE };
	struct side ret = { .flag = rebuilt ? JPB_CLASS_F_RETRANSFORM |
						      JPB_CLASS_F_RESOURCE
					    : JPB_CLASS_F_RETRANSFORM };
	argv += rebuilt;
	argc -= rebuilt;
	if (argc != 3) {
		fprintf(stderr, "usage: class_code_check [--rebuilt] "
				"RESOURCE_DIR RETRANSFORM_DIR | --model DIR\n");
		return 2;
	}
	if (read_side(argv[1], &res) || read_side(argv[2], &ret)) {
		free_side(&res);
		free_side(&ret);
		return 1;
	}
	struct counts c = { .first = "" };
	for (size_t i = 0; i < res.n; i++) {
		const struct jcf *b = find(&ret, res.v[i].name);
		if (b)
			compare_class(res.v[i].name, res.v[i].cf, b, rebuilt, &c);
	}
	printf("{\"resource_classes\":%zu,\"retransformed_classes\":%zu,"
	       "\"unparsable\":%" PRIu64 ",\"compared\":%" PRIu64
	       ",\"methods\":%" PRIu64 ",\"absent\":%" PRIu64
	       ",\"code_differ\":%" PRIu64 ",\"exc_differ\":%" PRIu64
	       ",\"lines_differ\":%" PRIu64 ",\"exc_absent\":%" PRIu64
	       ",\"exc_methods\":%" PRIu64 ",\"extra\":%" PRIu64
	       ",\"header_differ\":%" PRIu64 ",\"locals_differ\":%" PRIu64
	       ",\"stack_differ\":%" PRIu64 ",\"stack_unknown\":%" PRIu64
	       ",\"bsm_classes\":%" PRIu64 ",\"bsm_differ\":%" PRIu64
	       ",\"bsm_lambda\":%" PRIu64 ",\"bsm_concat\":%" PRIu64
	       ",\"first_differ\":\"%s\"}\n",
	       res.n, ret.n, res.unparsable + ret.unparsable, c.compared,
	       c.methods, c.absent, c.code, c.exc, c.lines, c.exc_absent,
	       c.exc_methods, c.extra, c.header, c.locals, c.stack,
	       c.stack_unknown, c.bsm_classes, c.bsm, c.bsm_lambda,
	       c.bsm_concat, c.first);
	free_side(&res);
	free_side(&ret);
	return 0;
}
