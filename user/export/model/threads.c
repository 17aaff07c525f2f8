// SPDX-License-Identifier: MIT
/* Thread names and tids for report selection (see threads.h). */
#include "export/model/threads.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "records.h"

struct xthreads {
	struct xthread *v; /* names: "" (none) or owned copies */
	size_t n, cap;
};

static const char none[] = "";

static void drop(const char *s)
{
	if (s != none)
		free((char *)s);
}

void xthreads_free(struct xthreads *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		drop(t->v[i].name);
		drop(t->v[i].comm);
		drop(t->v[i].former);
	}
	free(t->v);
	free(t);
}

static struct xthread *entry(struct xthreads *t, uint32_t tid, uint32_t nstid)
{
	for (size_t i = 0; i < t->n; i++) /* threads: hundreds at most */
		if ((tid && t->v[i].tid == tid) ||
		    (!tid && nstid && t->v[i].nstid == nstid))
			return &t->v[i];
	if (JPB_GROW(t->v, t->n, t->cap))
		return NULL;
	t->v[t->n] = (struct xthread){ tid, nstid, none, none, none, 0, 0 };
	return &t->v[t->n++];
}

static int set_name(const char **dst, struct jpb_str s)
{
	char *d = malloc(s.len + 1);
	if (!d)
		return jpb_err_nomem;
	memcpy(d, s.ptr, s.len);
	d[s.len] = 0;
	drop(*dst);
	*dst = d;
	return 0;
}

/* Keep E's current Java name among its former ones before a rename. */
static int remember(struct xthread *e, struct jpb_str next)
{
	size_t n = strlen(e->name), f = strlen(e->former);
	if (!n || (next.len == n && !memcmp(next.ptr, e->name, n)))
		return 0;
	char *d = malloc(f + n + 2);
	if (!d)
		return jpb_err_nomem;
	memcpy(d, e->former, f);
	memcpy(d + f, e->name, n);
	d[f + n] = '\n';
	d[f + n + 1] = 0;
	drop(e->former);
	e->former = d;
	return 0;
}

/* Is SEL one of X's names? */
static int named(const struct xthread *x, const char *sel)
{
	size_t n = strlen(sel);
	if (!strcmp(x->name, sel) || !strcmp(x->comm, sel))
		return 1;
	for (const char *p = x->former; *p; p = strchr(p, '\n') + 1)
		if (!strncmp(p, sel, n) && p[n] == '\n')
			return 1;
	return 0;
}

static int read_stream(struct jpb_bundle *b, const char *name, struct xthreads *t)
{
	const struct jpb_rectype *ty = jpb_rectype_find(JPB_REC_THREAD);
	struct jpb_reader *r;
	struct jpb_record rec;
	int err = 0;
	if (jpb_reader_open(b, name, &r))
		return 0;
	while (!err && jpb_reader_next(r, &rec) == 0) {
		struct jpb_rec_thread th;
		if (rec.type != JPB_REC_THREAD ||
		    jpb_rec_decode(ty, rec.payload, rec.size, &th) ||
		    (!th.tid && !th.nstid))
			continue;
		struct xthread *e = entry(t, th.tid, th.nstid);
		if (!e) {
			err = jpb_err_nomem;
			break;
		}
		if (th.tid)
			e->tid = th.tid;
		if (th.nstid)
			e->nstid = th.nstid;
		int jvm = !strcmp(name, "jvm");
		if (th.name.len && jvm)
			err = remember(e, th.name);
		if (th.name.len && !err)
			err = set_name(jvm ? &e->name : &e->comm, th.name);
	}
	jpb_reader_free(r);
	return err;
}

static int by_tid(const void *a, const void *b)
{
	const struct xthread *x = a, *y = b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int xthreads_load(struct jpb_bundle *b, struct xthreads **out)
{
	struct xthreads *t = calloc(1, sizeof(*t));
	const char *const *names;
	size_t n;
	if (!t)
		return jpb_err_nomem;
	int err = read_stream(b, "sched", t);
	if (!err)
		err = read_stream(b, "jvm", t);
	if (!err)
		err = jpb_bundle_list_streams(b, &names, &n);
	for (size_t i = 0; !err && i < n; i++) {
		char *end;
		int flow = !strncmp(names[i], "flow/tid", 8);
		if (!flow && strncmp(names[i], "decoded/tid", 11))
			continue;
		unsigned long tid = strtoul(names[i] + (flow ? 8 : 11), &end, 10);
		if (*end || !tid || tid > UINT32_MAX)
			continue;
		struct xthread *e = entry(t, (uint32_t)tid, 0);
		if (!e)
			err = jpb_err_nomem;
		else
			*(flow ? &e->has_flow : &e->has_decoded) = 1;
	}
	if (err) {
		xthreads_free(t);
		return err;
	}
	qsort(t->v, t->n, sizeof(*t->v), by_tid);
	for (size_t i = 0; i < t->n; i++)
		if (!t->v[i].name[0] && t->v[i].comm[0] &&
		    set_name(&t->v[i].name, jpb_str_c(t->v[i].comm))) {
			xthreads_free(t);
			return jpb_err_nomem;
		}
	*out = t;
	return 0;
}

size_t xthreads_count(const struct xthreads *t)
{
	return t->n;
}

const struct xthread *xthreads_at(const struct xthreads *t, size_t i)
{
	return i < t->n ? &t->v[i] : NULL;
}

const struct xthread *xthreads_find(const struct xthreads *t, uint32_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].tid == tid)
			return &t->v[i];
	return NULL;
}

/* Append to BUF (SIZE bytes, *LEN used), truncating. */
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	if (*len + 1 >= size)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	*len += k < 0 ? 0 : (size_t)k < size - *len ? (size_t)k : size - *len - 1;
}

/* "1234 main, 1240 DestroyJavaVM (java-t0, was main), ..." over the
 * threads with events; only those named NAME if not NULL. */
static void list(const struct xthreads *t, const char *name, char *buf,
		 size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct xthread *x = &t->v[i];
		if (!(x->has_flow || x->has_decoded) || (name && !named(x, name)))
			continue;
		int other = x->comm[0] && strcmp(x->comm, x->name);
		int was = (int)strcspn(x->former, "\n"); /* the first former name */
		add(buf, size, &len, "%s%u%s%s", len ? ", " : "", x->tid,
		    x->name[0] ? " " : "", x->name);
		if (other || was)
			add(buf, size, &len, " (%s%s%s%.*s)", other ? x->comm : "",
			    other && was ? ", " : "", was ? "was " : "", was, x->former);
	}
	if (!buf[0])
		snprintf(buf, size, "none (run 'jpbpf decode' first)");
}

int xthreads_select(const struct xthreads *t, const char *sel, uint32_t *tid,
		    char *errmsg, size_t size)
{
	char *end, threads[768];
	unsigned long v = strtoul(sel, &end, 10);
	if (sel[0] >= '0' && sel[0] <= '9' && !*end && v <= UINT32_MAX) {
		const struct xthread *x = xthreads_find(t, (uint32_t)v);
		if (x && (x->has_flow || x->has_decoded)) {
			*tid = x->tid;
			return 0;
		}
	}
	size_t nhit = 0;
	for (size_t i = 0; i < t->n; i++)
		if ((t->v[i].has_flow || t->v[i].has_decoded) &&
		    named(&t->v[i], sel) &&
		    nhit++ == 0)
			*tid = t->v[i].tid;
	if (nhit == 1)
		return 0;
	list(t, nhit > 1 ? sel : NULL, threads, sizeof(threads));
	snprintf(errmsg, size, nhit > 1 ?
		 "thread name '%s' is ambiguous; use a tid: %s" :
		 "no thread '%s' with a flow; threads: %s", sel, threads);
	return nhit > 1 ? jpb_err_invalid : jpb_err_not_found;
}
