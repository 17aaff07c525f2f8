// SPDX-License-Identifier: MIT
/* Flow method names joined with their class files (see methods.h). */
#include "export/model/methods.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bundle.h"
#include "codec.h"
#include "java/program.h"
#include "records.h"
#include "records_flow.h"

struct entry {
	struct xm_method m;
	char *buf[3]; /* owned: name, json_name, class_name */
};

struct xmethods {
	struct entry *v; /* by index; v[i].m.name NULL if unnamed */
	size_t n, cap;
	struct jprog *prog; /* owns the class files CODE points into */
};

int xmethods_alloc(struct xmethods **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : jpb_err_nomem;
}

void xmethods_free(struct xmethods *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		for (int k = 0; k < 3; k++)
			free(m->v[i].buf[k]);
	free(m->v);
	if (m->prog)
		jprog_free(m->prog);
	free(m);
}

/* "Lpkg/Cls;" -> "pkg.Cls" (a descriptor-less name is taken as is). */
static char *class_name(const char *sig)
{
	size_t n = strlen(sig);
	if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
		sig++;
		n -= 2;
	}
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = sig[i] == '/' ? '.' : sig[i];
	s[n] = 0;
	return s;
}

int xmethods_add(struct xmethods *m, uint32_t idx, const char *class_sig,
		 const char *name, const char *sig, const struct jcf *cls_file,
		 const struct jcf_method *code)
{
	if (idx == 0 || idx > (1u << 26))
		return jpb_err_invalid;
	if (idx >= m->cap) {
		size_t old = m->cap;
		if (jpb_grow((void **)&m->v, &m->cap, idx, sizeof(*m->v)))
			return jpb_err_nomem;
		memset(m->v + old, 0, (m->cap - old) * sizeof(*m->v));
	}
	if (idx >= m->n)
		m->n = idx + 1;
	struct entry *e = &m->v[idx];
	for (int k = 0; k < 3; k++)
		free(e->buf[k]);
	memset(e, 0, sizeof(*e));
	char *cls = class_name(class_sig);
	size_t len = (cls ? strlen(cls) : 0) + strlen(name) + strlen(sig) + 2;
	char *full = malloc(len);
	json_t *js = NULL;
	if (cls && full) {
		snprintf(full, len, "%s.%s%s", cls, name, sig);
		js = json_string(full);
	}
	char *jn = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
	json_decref(js);
	if (!jn) {
		free(cls);
		free(full);
		return jpb_err_nomem;
	}
	e->buf[0] = full;
	e->buf[1] = jn;
	e->buf[2] = cls;
	e->m = (struct xm_method){ full, jn, cls,
				   cls_file ? jcf_source_file(cls_file) : NULL,
				   code, cls_file };
	return 0;
}

const struct xm_method *xmethods_get(const struct xmethods *m, uint32_t idx)
{
	return idx < m->n && m->v[idx].m.name ? &m->v[idx].m : NULL;
}

uint32_t xmethods_limit(const struct xmethods *m)
{
	return (uint32_t)m->n;
}

int xm_line(const struct xm_method *m, int32_t bci)
{
	if (!m || !m->code || bci < 0)
		return -1;
	return jcf_line_at(m->code, (uint32_t)bci);
}

static char *dup_str(struct jpb_str s)
{
	char *d = malloc(s.len + 1);
	if (d) {
		memcpy(d, s.ptr, s.len);
		d[s.len] = 0;
	}
	return d;
}

/* The class file behind a flow method: by its descriptor, bootstrap
 * loader first (jhier_class's order; flows do not say the loader). */
static int add_one(struct xmethods *m, const struct jpb_rec_flow_method *r)
{
	char *cs = dup_str(r->class_sig), *n = dup_str(r->name),
	     *s = dup_str(r->signature), *internal = cs ? strdup(cs) : NULL;
	int err = jpb_err_nomem;
	if (cs && n && s && internal) {
		size_t len = strlen(internal);
		if (len >= 2 && internal[0] == 'L' && internal[len - 1] == ';') {
			memmove(internal, internal + 1, len - 2);
			internal[len - 2] = 0;
		}
		const struct jcf *cf = jhier_class(jprog_hier(m->prog), internal, 0);
		const struct jcf_method *jm = cf ? jcf_method_find(cf, n, s) : NULL;
		err = xmethods_add(m, r->index, cs, n, s, cf,
				   jm && jm->code ? jm : NULL);
	}
	free(cs);
	free(n);
	free(s);
	free(internal);
	return err;
}

static int read_methods(struct jpb_bundle *b, struct xmethods *m, char *errmsg,
			size_t size)
{
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_FLOW_METHOD);
	struct jpb_reader *r;
	struct jpb_record rec;
	int err = jpb_reader_open(b, "flow/methods", &r);
	if (err) {
		snprintf(errmsg, size, "%s: no reconstructed flow (run 'jpbpf "
			 "decode' first): %s", jpb_bundle_dir(b), jpb_errstr(err));
		return err;
	}
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		struct jpb_rec_flow_method fm;
		if (rec.type != JPB_REC_FLOW_METHOD ||
		    jpb_rec_decode(t, rec.payload, rec.size, &fm) != 0)
			continue;
		err = add_one(m, &fm);
		if (err == jpb_err_nomem)
			break;
	}
	if (err == jpb_err_nomem) {
		snprintf(errmsg, size, "flow/methods: out of memory");
	} else if (err != jpb_err_eos) {
		/* a damaged tail: the methods before it still name events */
		fprintf(stderr, "jpbpf: warning: %s\n", jpb_reader_errmsg(r));
		err = 0;
	} else {
		err = 0;
	}
	jpb_reader_free(r);
	return err;
}

int xmethods_load(struct jpb_bundle *b, struct xmethods **out, char *errmsg,
		  size_t size)
{
	struct xmethods *m;
	struct java_diag diag = { 0 };
	int err = xmethods_alloc(&m);
	if (!err && (err = jprog_alloc(&m->prog)))
		m->prog = NULL;
	if (err) {
		xmethods_free(m);
		snprintf(errmsg, size, "out of memory");
		return jpb_err_nomem;
	}
	/* Without class files (no jvm stream) names remain, lines do not. */
	jprog_load_bundle(m->prog, b, &diag);
	err = read_methods(b, m, errmsg, size);
	if (err) {
		xmethods_free(m);
		return err;
	}
	*out = m;
	return 0;
}
