// SPDX-License-Identifier: MIT
/* Each method's count of non-parameter locals (see locals.h). */
#include "locals.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"
#include "java/classfile.h"
#include "records_jvm.h"
#include "util.h"

/* The slot a local-variable opcode names implicitly (xload_N, xstore_N),
 * with its width; -1 for others. */
static int implicit_slot(uint8_t op, int *width)
{
	static const uint8_t base[] = { 0x1a, 0x3b };
	for (int k = 0; k < 2; k++) {
		if (op < base[k] || op >= base[k] + 20)
			continue;
		int type = (op - base[k]) / 4; /* i l f d a */
		*width = type == 1 || type == 3 ? 2 : 1;
		return (op - base[k]) % 4;
	}
	return -1;
}

/* The width of the local an explicit-index opcode (xload, xstore, iinc,
 * ret) uses, 0 if OP takes no local index. */
static int explicit_width(uint8_t op)
{
	if (op == 0x16 || op == 0x18 || op == 0x37 || op == 0x39)
		return 2;
	if ((op >= 0x15 && op <= 0x19) || (op >= 0x36 && op <= 0x3a) ||
	    op == 0x84 || op == 0xa9)
		return 1;
	return 0;
}

int locals_from_code(const uint8_t *code, uint32_t len, int params)
{
	int top = params;
	for (uint32_t bci = 0; bci < len;) {
		int l = jbc_length(code, len, bci);
		if (l <= 0)
			break;
		uint8_t op = code[bci];
		int w = 0, slot = implicit_slot(op, &w);
		if (slot < 0 && op == 0xc4 && bci + 3 < len) { /* wide */
			w = explicit_width(code[bci + 1]);
			slot = code[bci + 2] << 8 | code[bci + 3];
		} else if (slot < 0 && bci + 1 < len) {
			w = explicit_width(op);
			slot = code[bci + 1];
		}
		if (w && slot + w > top)
			top = slot + w;
		bci += (uint32_t)l;
	}
	return top;
}

/* Truth methods sorted by (class, name, descriptor), to look class-file
 * methods up. */
static const struct truth *sort_t;

static int cmp_key(const struct sim_method *m, const char *cls, const char *name,
		   const char *sig)
{
	int c = strcmp(m->cls, cls);
	if (!c)
		c = strcmp(m->name, name);
	return c ? c : strcmp(m->sig, sig);
}

static int by_key(const void *a, const void *b)
{
	const struct sim_method *y = &sort_t->methods[*(const uint32_t *)b];
	return cmp_key(&sort_t->methods[*(const uint32_t *)a], y->cls, y->name, y->sig);
}

struct index {
	const struct truth *t;
	uint32_t *ix;
	size_t n;
};

/* The first position whose method is not below (CLS, NAME, SIG). */
static size_t lower(const struct index *x, const char *cls, const char *name,
		    const char *sig)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sim_method *m = &x->t->methods[x->ix[mid]];
		int c = name ? cmp_key(m, cls, name, sig) : strcmp(m->cls, cls);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Give the truth methods matching class file CF's methods their count. */
static void match_class(const struct index *x, struct truth *t,
			const struct jcf *cf, const char *cls)
{
	for (unsigned i = 0; i < jcf_method_count(cf); i++) {
		const struct jcf_method *jm = jcf_method(cf, i);
		if (!jm->code)
			continue;
		int params = jcf_param_slots(jm->descriptor,
						jm->access_flags & JCF_ACC_STATIC);
		if (params < 0 || jm->max_locals < params)
			continue;
		for (size_t k = lower(x, cls, jm->name, jm->descriptor); k < x->n; k++) {
			struct sim_method *m = &t->methods[x->ix[k]];
			if (cmp_key(m, cls, jm->name, jm->descriptor))
				break;
			/* the same name may be loaded twice: the code decides */
			if (m->zero_locals < 0 && m->code_len == jm->code_length &&
			    !memcmp(m->code, jm->code, m->code_len))
				m->zero_locals = jm->max_locals - params;
		}
	}
}

/* "Lname;" in a new string. */
static char *class_sig(const char *name, size_t len)
{
	char *s = xrealloc(NULL, len + 3);
	s[0] = 'L';
	memcpy(s + 1, name, len);
	memcpy(s + 1 + len, ";", 2);
	return s;
}

static int has_class(const struct index *x, const char *cls)
{
	size_t k = lower(x, cls, NULL, NULL);
	return k < x->n && !strcmp(x->t->methods[x->ix[k]].cls, cls);
}

static void one_class(const struct index *x, struct truth *t,
		      const struct jpb_rec_jvm_class *jc)
{
	char *cls = class_sig(jc->name.ptr, jc->name.len);
	int ran = !jc->name.len || has_class(x, cls);
	free(cls);
	struct jcf *cf;
	if (!ran || jcf_parse(&cf, jc->bytes.ptr, jc->bytes.len, NULL))
		return; /* none of it ran, or unreadable: its methods stay unknown */
	const char *name = jcf_this_class(cf);
	cls = class_sig(name, strlen(name));
	match_class(x, t, cf, cls);
	free(cls);
	jcf_free(cf);
}

static int from_class_files(struct jpb_reader *r, struct truth *t, char *err,
			    size_t n)
{
	struct index x = { t, xcalloc(t->nmethods, sizeof(uint32_t)), 0 };
	for (uint32_t i = 1; i < t->nmethods; i++)
		if (t->methods[i].id)
			x.ix[x.n++] = i;
	sort_t = t; /* qsort has no context argument in C11 */
	qsort(x.ix, x.n, sizeof(*x.ix), by_key);
	sort_t = NULL;
	struct jpb_record rec;
	int rc;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		if (rec.type != JPB_REC_JVM_CLASS)
			continue;
		struct jpb_rec_jvm_class jc;
		rc = jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &jc);
		if (rc) {
			snprintf(err, n, "jvm: class record at offset %llu: %s",
				 (unsigned long long)rec.offset, jpb_errstr(rc));
			break;
		}
		one_class(&x, t, &jc);
	}
	if (rc == jpb_err_eos)
		rc = 0;
	else if (!err[0])
		snprintf(err, n, "jvm: %s", jpb_reader_errmsg(r));
	free(x.ix);
	return rc;
}

/* `jpbpf-sim scenario` marks its hand-made truths in meta.json. */
static int hand_made(struct jpb_bundle *b)
{
	void *meta = NULL; /* owned by the bundle */
	if (jpb_meta_load(b, &meta) || !meta)
		return 0;
	const char *src = json_string_value(json_object_get(meta, "truth_source"));
	return src && !strcmp(src, "scenario");
}

/* A hand-made truth's bytecodes are the whole program. */
static void from_code(struct truth *t)
{
	for (size_t i = 0; i < t->nmethods; i++) {
		struct sim_method *m = &t->methods[i];
		int params = jcf_param_slots(m->sig, !!(m->access & ACC_STATIC));
		if (m->id && m->code_len && params >= 0)
			m->zero_locals = locals_from_code(m->code, m->code_len, params) - params;
	}
}

long locals_load(struct jpb_bundle *b, struct truth *t, char *err, size_t n)
{
	if (n)
		err[0] = 0;
	for (size_t i = 0; i < t->nmethods; i++)
		t->methods[i].zero_locals = -1;
	struct jpb_reader *r;
	if (hand_made(b)) {
		from_code(t);
	} else if (!jpb_reader_open(b, "jvm", &r)) {
		int rc = from_class_files(r, t, err, n);
		jpb_reader_free(r);
		if (rc)
			return rc;
	}
	long unknown = 0;
	for (size_t i = 0; i < t->nmethods; i++)
		unknown += t->methods[i].id && t->methods[i].code_len &&
			   t->methods[i].zero_locals < 0;
	return unknown;
}
