// SPDX-License-Identifier: MIT
/*
 * Hidden classes in a bundle, as the program model sees them (driven by
 * tests/integration/agent_hidden.sh):
 *
 *   hidden_check DIR          one JSON line: jvm_method records of hidden
 *                             classes (JVMTI name "Foo$$Lambda.0x..."), how
 *                             many jprog_method_by_id resolves, their
 *                             invokes and how many have call targets, the
 *                             hidden classes written (rebuilt, flag bit 3)
 *                             and those left as jvm_class_missing
 *   hidden_check --calls DIR PREFIX NAME
 *                             for each method NAME of a hidden class whose
 *                             name starts with PREFIX, as the decoder finds
 *                             it (by jmethodID): "CLASS.NAME DESC" then one
 *                             "  -> TARGET_CLASS.TARGET DESC" per target of
 *                             each of its invokes
 *   hidden_check --dump DIR OUTDIR
 *                             writes every hidden class file to
 *                             OUTDIR/hiddenN.class (for javap)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "java/bytecodes.h"
#include "java/program.h"
#include "records.h"
#include "records_jvm.h"

struct mid {
	uint64_t id;
	char *cls, *name; /* cls: the class_sig without L and ; */
};

static struct mid *mids;
static size_t nmids;
static uint64_t rebuilt_hidden, written_hidden, missing_hidden, missing;
static const char *dump_dir;

static int is_hidden(const char *name, size_t len)
{
	for (size_t i = 0; i + 3 <= len; i++)
		if (!memcmp(name + i, ".0x", 3))
			return 1;
	return 0;
}

static void on_method(const struct jpb_rec_jvm_method *m)
{
	const char *cs = m->class_sig.ptr;
	size_t n = m->class_sig.len;
	if (n < 3 || cs[0] != 'L' || !is_hidden(cs, n))
		return;
	struct mid *v = realloc(mids, (nmids + 1) * sizeof(*v));
	if (!v)
		exit(1);
	mids = v;
	v[nmids].id = m->method_id;
	v[nmids].cls = strndup(cs + 1, n - 2);
	v[nmids].name = strndup(m->name.ptr, m->name.len);
	nmids++;
}

static void dump(const struct jpb_rec_jvm_class *c)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/hidden%" PRIu64 ".class", dump_dir,
		 written_hidden);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(c->bytes.ptr, 1, c->bytes.len, f) != c->bytes.len) {
		fprintf(stderr, "hidden_check: %s: cannot write\n", path);
		exit(1);
	}
	fclose(f);
}

static void on_record(const struct jpb_record *r)
{
	const struct jpb_rectype *t = jpb_rectype_find(r->type);
	union {
		struct jpb_rec_jvm_class c;
		struct jpb_rec_jvm_method m;
		struct jpb_rec_jvm_class_missing x;
	} u;
	/* decode writes the whole struct of the type: only these three */
	if (!t || (r->type != JPB_REC_JVM_METHOD &&
		   r->type != JPB_REC_JVM_CLASS &&
		   r->type != JPB_REC_JVM_CLASS_MISSING) ||
	    jpb_rec_decode(t, r->payload, r->size, &u))
		return;
	if (r->type == JPB_REC_JVM_METHOD) {
		on_method(&u.m);
	} else if (r->type == JPB_REC_JVM_CLASS &&
		   is_hidden(u.c.name.ptr, u.c.name.len)) {
		if (dump_dir)
			dump(&u.c);
		written_hidden++;
		rebuilt_hidden += (u.c.flags & JPB_CLASS_F_REBUILT) != 0;
	} else if (r->type == JPB_REC_JVM_CLASS_MISSING) {
		missing++;
		missing_hidden += is_hidden(u.x.class_sig.ptr, u.x.class_sig.len);
	}
}

static int scan(const char *dir, struct jprog *p)
{
	struct jpb_bundle *b;
	struct jpb_reader *r;
	struct jpb_record rec;
	int err = jpb_bundle_open(&b, dir);
	if (err) {
		fprintf(stderr, "hidden_check: %s: %s\n", dir, jpb_errstr(err));
		return 1;
	}
	struct java_diag d;
	if (jprog_load_bundle(p, b, &d) < 0 ||
	    jpb_reader_open(b, "jvm", &r)) {
		fprintf(stderr, "hidden_check: %s: jvm stream unreadable\n", dir);
		jpb_bundle_free(b);
		return 1;
	}
	while ((err = jpb_reader_next(r, &rec)) == 0)
		on_record(&rec);
	jpb_reader_free(r);
	jpb_bundle_free(b);
	return err == jpb_err_eos || err == jpb_err_truncated ? 0 : 1;
}

/* Each invoke of M: its targets, printed when PRINT. */
static void calls(struct jprog *p, const struct jhier_method *hm, int print,
		  uint64_t *invokes, uint64_t *resolved)
{
	const struct jcfg *g;
	if (!hm->m->code || jprog_cfg(p, hm->m, &g, NULL))
		return;
	for (uint32_t i = 0; i < jcfg_insn_count(g); i++) {
		const struct jcfg_insn *in = jcfg_insn(g, i);
		const struct jhier_method *t;
		if (!jbc_is_invoke(in->kind) || in->op == 0xba)
			continue;
		int n = jprog_call_targets(p, hm->cls, hm->loader, hm->m, i, &t);
		(*invokes)++;
		*resolved += n > 0;
		for (int k = 0; print && k < n; k++)
			printf("  -> %s.%s %s\n", jcf_this_class(t[k].cls),
			       t[k].m->name, t[k].m->descriptor);
		if (print && n <= 0)
			printf("  -> ? (bci %u: %d)\n", in->bci, n);
	}
}

static int summary(struct jprog *p)
{
	uint64_t resolved = 0, code = 0, invokes = 0, inv_ok = 0;
	for (size_t i = 0; i < nmids; i++) {
		struct jhier_method hm;
		if (jprog_method_by_id(p, mids[i].id, &hm))
			continue;
		resolved++;
		code += hm.m->code != NULL;
		calls(p, &hm, 0, &invokes, &inv_ok);
	}
	printf("{\"hidden_methods\":%zu,\"resolved\":%" PRIu64
	       ",\"with_code\":%" PRIu64 ",\"invokes\":%" PRIu64
	       ",\"invokes_resolved\":%" PRIu64 ",\"hidden_classes\":%" PRIu64
	       ",\"hidden_rebuilt\":%" PRIu64 ",\"missing\":%" PRIu64
	       ",\"missing_hidden\":%" PRIu64 ",\"bad_classes\":%zu}\n",
	       nmids, resolved, code, invokes, inv_ok, written_hidden,
	       rebuilt_hidden, missing, missing_hidden, jprog_bad_classes(p));
	return 0;
}

static int show_calls(struct jprog *p, const char *prefix, const char *name)
{
	int found = 0;
	for (size_t i = 0; i < nmids; i++) {
		struct jhier_method hm;
		uint64_t a = 0, b = 0;
		if (strncmp(mids[i].cls, prefix, strlen(prefix)) ||
		    strcmp(mids[i].name, name) ||
		    jprog_method_by_id(p, mids[i].id, &hm))
			continue;
		printf("%s.%s %s\n", jcf_this_class(hm.cls), hm.m->name,
		       hm.m->descriptor);
		calls(p, &hm, 1, &a, &b);
		found++;
	}
	return found ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct jprog *p;
	int rc = 2;
	const char *dir = argc == 2 ? argv[1] : argc >= 3 ? argv[2] : NULL;
	int calls_mode = argc == 5 && !strcmp(argv[1], "--calls");
	if (argc == 4 && !strcmp(argv[1], "--dump"))
		dump_dir = argv[3];
	else if (!calls_mode && argc != 2)
		dir = NULL;
	if (!dir) {
		fprintf(stderr, "usage: hidden_check [--calls DIR PREFIX NAME | "
			"--dump DIR OUTDIR | DIR]\n");
		return 2;
	}
	if (jprog_alloc(&p))
		return 1;
	rc = scan(dir, p);
	if (!rc && calls_mode)
		rc = show_calls(p, argv[3], argv[4]);
	else if (!rc && !dump_dir)
		rc = summary(p);
	for (size_t i = 0; i < nmids; i++) {
		free(mids[i].cls);
		free(mids[i].name);
	}
	free(mids);
	jprog_free(p);
	return rc;
}
