// SPDX-License-Identifier: MIT
/*
 * Test helper for tests/integration/agent_level.sh: the compile level of
 * every jvm_nmethod_load record of a bundle, one line per record:
 *
 *   level_check DIR    "LEVEL OSR BCI NATIVE REPLAY CLASS::NAME" (CLASS
 *                      dotted, as -XX:+PrintCompilation writes it; OSR,
 *                      NATIVE and REPLAY 0 or 1; BCI the entry bci of
 *                      the jvm_nmethod_osr record that follows an OSR
 *                      load, -1 for a normal compile, ? if missing)
 *
 * The suite compares these lines with the JVM's own PrintCompilation log.
 * A jvm_nmethod_osr record that follows no OSR load of its method and
 * address is an error (exit 1).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "records.h"
#include "records_jvm.h"

#define ACC_NATIVE 0x0100

struct meth {
	uint64_t id;
	uint32_t access;
	char *name; /* "java.lang.String::hashCode" */
};

struct nm {
	uint64_t method, addr;
	int32_t level;
	uint32_t flags;
	int has_bci;
	int32_t bci;
};

static struct meth *meths;
static size_t nmeths, cap_meths;
static struct nm *nms;
static size_t nnms, cap_nms;
static int stray_osr;

static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 1024;
	p = realloc(p, *cap * elem);
	if (!p) {
		fprintf(stderr, "level_check: out of memory\n");
		exit(1);
	}
	return p;
}

/* "Ljava/lang/String;" + "hashCode" -> "java.lang.String::hashCode". */
static char *dotted(struct jpb_str cls, struct jpb_str name)
{
	const char *c = cls.ptr ? cls.ptr : "";
	size_t n = cls.len;
	if (n >= 2 && c[0] == 'L' && c[n - 1] == ';') {
		c++;
		n -= 2;
	}
	char *s = malloc(n + name.len + 3);
	if (!s)
		exit(1);
	for (size_t i = 0; i < n; i++)
		s[i] = c[i] == '/' ? '.' : c[i];
	memcpy(s + n, "::", 2);
	memcpy(s + n + 2, name.ptr ? name.ptr : "", name.len);
	s[n + 2 + name.len] = 0;
	return s;
}

/* The entry bci of the load it follows: the latest OSR load of that
 * method at that address, which has none yet. */
static void on_osr(const struct jpb_rec_jvm_nmethod_osr *o)
{
	for (size_t i = nnms; i-- > 0;) {
		struct nm *n = &nms[i];
		if (n->addr != o->code_addr)
			continue;
		if (n->method != o->method_id || !(n->flags & JPB_NM_F_OSR) ||
		    n->has_bci)
			break;
		n->has_bci = 1;
		n->bci = o->entry_bci;
		return;
	}
	fprintf(stderr, "level_check: jvm_nmethod_osr of method %#" PRIx64
		" at %#" PRIx64 " (bci %d) follows no OSR load there\n",
		o->method_id, o->code_addr, o->entry_bci);
	stray_osr++;
}

static void on_rec(const struct jpb_record *rec)
{
	const struct jpb_rectype *t = jpb_rectype_find(rec->type);
	union {
		struct jpb_rec_jvm_method m;
		struct jpb_rec_jvm_nmethod_load nm;
		struct jpb_rec_jvm_nmethod_osr osr;
	} u;
	if (!t || (rec->type != JPB_REC_JVM_METHOD &&
		   rec->type != JPB_REC_JVM_NMETHOD_LOAD &&
		   rec->type != JPB_REC_JVM_NMETHOD_OSR) ||
	    jpb_rec_decode(t, rec->payload, rec->size, &u) != 0)
		return;
	if (rec->type == JPB_REC_JVM_NMETHOD_OSR) {
		on_osr(&u.osr);
		return;
	}
	if (rec->type == JPB_REC_JVM_METHOD) {
		meths = grow(meths, &cap_meths, nmeths, sizeof(*meths));
		meths[nmeths++] = (struct meth){ u.m.method_id,
						 u.m.access_flags,
						 dotted(u.m.class_sig, u.m.name) };
		return;
	}
	nms = grow(nms, &cap_nms, nnms, sizeof(*nms));
	nms[nnms++] = (struct nm){ u.nm.method_id, u.nm.code_addr,
				   u.nm.level, u.nm.flags, 0, -1 };
}

static const struct meth *find_meth(uint64_t id)
{
	for (size_t i = nmeths; i-- > 0;)
		if (meths[i].id == id)
			return &meths[i];
	return NULL;
}

static int read_jvm(const char *dir)
{
	struct jpb_bundle *b;
	struct jpb_reader *r;
	struct jpb_record rec;
	int err = jpb_bundle_open(&b, dir);
	if (err) {
		fprintf(stderr, "level_check: %s: %s\n", dir, jpb_errstr(err));
		return 1;
	}
	if ((err = jpb_reader_open(b, "jvm", &r)) != 0) {
		fprintf(stderr, "level_check: %s/jvm: %s\n", dir,
			jpb_errstr(err));
		jpb_bundle_free(b);
		return 1;
	}
	while ((err = jpb_reader_next(r, &rec)) == 0)
		on_rec(&rec);
	if (err != jpb_err_eos)
		fprintf(stderr, "level_check: %s\n", jpb_reader_errmsg(r));
	jpb_reader_free(r);
	jpb_bundle_free(b);
	return err == jpb_err_eos ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: level_check BUNDLE_DIR\n");
		return 2;
	}
	if (read_jvm(argv[1]))
		return 1;
	int rc = stray_osr ? 1 : 0;
	for (size_t i = 0; i < nnms; i++) {
		const struct meth *m = find_meth(nms[i].method);
		if (!m) {
			fprintf(stderr, "level_check: method %#" PRIx64
				" has no jvm_method record\n", nms[i].method);
			rc = 1;
			continue;
		}
		char bci[16] = "-1";
		if (nms[i].flags & JPB_NM_F_OSR) {
			if (nms[i].has_bci)
				snprintf(bci, sizeof(bci), "%d", nms[i].bci);
			else
				strcpy(bci, "?");
		}
		printf("%d %d %s %d %d %s\n", nms[i].level,
		       (nms[i].flags & JPB_NM_F_OSR) != 0, bci,
		       (m->access & ACC_NATIVE) != 0,
		       (nms[i].flags & JPB_NM_F_REPLAY) != 0, m->name);
	}
	return rc;
}
