// SPDX-License-Identifier: MIT
/*
 * Checks the call-structure exports (`jpbpf report --format cct|calls|
 * contexts`) of a simulated bundle against its ground truth (stream
 * truth: per thread ENTRY/EXIT/EXIT_EXC/BYTECODE events give the exact
 * call structure).
 *
 *   export_check mkflow DIR
 *       write flow/methods and flow/tidN straight from the truth's
 *       bytecodes: a flow decoded completely, by construction
 *   export_check equal DIR TID CCT.json CALLS.jsonl CONTEXTS.jsonl
 *       the exports of thread TID (--thread TID) equal the truth's:
 *       every context's invocations and bytecodes, the call trace event
 *       by event, each bytecode's context id expanded to the truth's stack
 *   export_check consistent DIR CCT.json CALLS.jsonl CONTEXTS.jsonl
 *       exports of all threads agree with each other and with the flow
 *       (any loss); threads whose flow equals the truth also equal it
 *   export_check stack CONTEXTS.jsonl ID
 *       the stack of context ID from the table, as --expand prints it
 *   EXPORT_CHECK_VERBOSE=1: `consistent` lists the truth's contexts (over
 *       200 bytecodes) the export counts short, to find where they went
 *
 * The truth is read the way the walker sees a thread (docs/EXPORTS.md):
 * native frames run no bytecode and are transparent; frames already on
 * the stack at the thread's first bytecode have no known caller and each
 * becomes a root when its first bytecode runs; a frame is called when its
 * first bytecode runs, at the caller's latest bci.  Prints one line per
 * finding; exit 0 if all hold, 1 if not, 2 on usage or unreadable input.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bundle.h"
#include "codec.h"
#include "records.h"
#include "records_flow.h"
#include "records_truth.h"
#include "export/model/methods.h"

#define ACC_NATIVE 0x0100

static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	failures++;
}

static void die(const char *what) __attribute__((noreturn));

static void die(const char *what)
{
	fprintf(stderr, "export_check: %s\n", what);
	exit(2);
}

/* ---- the truth ------------------------------------------------------ */

struct tthread {
	uint32_t tid, nstid;
	struct jpb_truth_event *ev;
	size_t n, cap;
};

struct truth {
	struct xmethods *names;
	uint8_t *native; /* by method id */
	size_t nnative;
	struct tthread *th;
	size_t nth, cap;
	/* what the flows name, for mkflow */
	struct jpb_rec_truth_method *meth;
	size_t nmeth, capmeth;
};

static uint32_t host_tid(struct jpb_bundle *b, uint32_t nstid)
{
	static const char *const streams[] = { "jvm", "sched" };
	for (int s = 0; s < 2; s++) {
		struct jpb_reader *r;
		struct jpb_record rec;
		if (jpb_reader_open(b, streams[s], &r))
			continue;
		while (jpb_reader_next(r, &rec) == 0) {
			struct jpb_rec_thread t;
			if (rec.type == JPB_REC_THREAD &&
			    !jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					    rec.size, &t) &&
			    t.nstid == nstid && t.tid) {
				jpb_reader_free(r);
				return t.tid;
			}
		}
		jpb_reader_free(r);
	}
	return 0;
}

static struct tthread *thread_of(struct truth *t, struct jpb_bundle *b,
				 const struct jpb_rec_truth_events *e)
{
	for (size_t i = 0; i < t->nth; i++)
		if (t->th[i].nstid == e->nstid && (e->nstid || t->th[i].tid == e->tid))
			return &t->th[i];
	if (JPB_GROW(t->th, t->nth, t->cap))
		die("out of memory");
	struct tthread *x = &t->th[t->nth++];
	memset(x, 0, sizeof(*x));
	x->nstid = e->nstid;
	x->tid = e->tid ? e->tid : host_tid(b, e->nstid);
	if (!x->tid)
		x->tid = e->nstid;
	return x;
}

static char *dup_str(struct jpb_str s)
{
	char *d = malloc(s.len + 1);
	if (!d)
		die("out of memory");
	memcpy(d, s.ptr, s.len);
	d[s.len] = 0;
	return d;
}

static void add_method(struct truth *t, const struct jpb_rec_truth_method *m)
{
	char *c = dup_str(m->class_sig), *n = dup_str(m->name), *s = dup_str(m->signature);
	if (xmethods_add(t->names, m->method_id, c, n, s, NULL, NULL))
		die("out of memory");
	if (m->method_id >= t->nnative) {
		size_t nn = m->method_id + 1024;
		t->native = realloc(t->native, nn);
		if (!t->native)
			die("out of memory");
		memset(t->native + t->nnative, 0, nn - t->nnative);
		t->nnative = nn;
	}
	t->native[m->method_id] = (m->access_flags & ACC_NATIVE) || !m->bytecode.len;
	if (JPB_GROW(t->meth, t->nmeth, t->capmeth))
		die("out of memory");
	struct jpb_rec_truth_method *k = &t->meth[t->nmeth++];
	*k = *m;
	k->class_sig.ptr = c;
	k->name.ptr = n;
	k->signature.ptr = s;
}

static void load_truth(struct jpb_bundle *b, struct truth *t)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	memset(t, 0, sizeof(*t));
	if (xmethods_alloc(&t->names))
		die("out of memory");
	if (jpb_reader_open(b, "truth", &r))
		die("the bundle has no truth stream");
	while (jpb_reader_next(r, &rec) == 0) {
		if (rec.type == JPB_REC_TRUTH_METHOD) {
			struct jpb_rec_truth_method m;
			if (!jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					    rec.size, &m))
				add_method(t, &m);
			continue;
		}
		struct jpb_rec_truth_events e;
		if (rec.type != JPB_REC_TRUTH_EVENTS ||
		    jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &e))
			continue;
		struct tthread *x = thread_of(t, b, &e);
		for (uint32_t o = 0; o + JPB_TRUTH_EVENT_SIZE <= e.events.len;
		     o += JPB_TRUTH_EVENT_SIZE) {
			if (JPB_GROW(x->ev, x->n, x->cap))
				die("out of memory");
			jpb_truth_event_get(e.events.ptr + o, &x->ev[x->n++]);
		}
	}
	jpb_reader_free(r);
}

static void truth_free(struct truth *t)
{
	for (size_t i = 0; i < t->nmeth; i++) {
		free((char *)t->meth[i].class_sig.ptr);
		free((char *)t->meth[i].name.ptr);
		free((char *)t->meth[i].signature.ptr);
	}
	for (size_t i = 0; i < t->nth; i++)
		free(t->th[i].ev);
	free(t->meth);
	free(t->th);
	free(t->native);
	xmethods_free(t->names);
}

static const char *name_of(const struct truth *t, uint32_t m)
{
	const struct xm_method *x = xmethods_get(t->names, m);
	return x && x->name ? x->name : "?";
}

static int is_native(const struct truth *t, uint32_t m)
{
	return m < t->nnative && t->native[m];
}

/* ---- mkflow ----------------------------------------------------------- */

static void put_events(struct jpb_writer *w, struct jpb_buf *sc, uint32_t tid,
		       uint64_t seq, struct jpb_buf *ev)
{
	struct jpb_rec_flow_events r = { tid, 0, seq, { ev->data, (uint32_t)ev->len } };
	if (jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_FLOW_EVENTS), 0, &r, sc))
		die("write flow events");
	jpb_buf_reset(ev);
}

static void mkflow(struct jpb_bundle *b, struct truth *t)
{
	struct jpb_writer *w;
	struct jpb_buf sc = { 0 }, ev = { 0 };
	char name[32];
	if (jpb_writer_open(b, "flow/methods", &w))
		die("cannot write flow/methods");
	for (size_t i = 0; i < t->nmeth; i++) {
		const struct jpb_rec_truth_method *m = &t->meth[i];
		struct jpb_rec_flow_method fm = { m->method_id, 0, 0, m->class_sig,
						  m->name, m->signature };
		if (jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_FLOW_METHOD), 0,
				       &fm, &sc))
			die("write flow/methods");
	}
	if (jpb_writer_close(w))
		die("close flow/methods");
	for (size_t i = 0; i < t->nth; i++) {
		const struct tthread *x = &t->th[i];
		uint64_t seq = 0, n = 0;
		snprintf(name, sizeof(name), "flow/tid%u", x->tid);
		if (jpb_writer_open(b, name, &w))
			die("cannot write a flow stream");
		for (size_t k = 0; k < x->n; k++) {
			if (x->ev[k].kind != JPB_TRUTH_BYTECODE)
				continue;
			uint8_t p[JPB_FLOW_EVENT_SIZE];
			struct jpb_flow_event fe = { x->ev[k].method_id, x->ev[k].bci,
						     x->ev[k].opcode, JPB_FLOW_CERTAIN,
						     1, 0, 1000 + 10 * k };
			jpb_flow_event_put(p, &fe);
			if (jpb_buf_put(&ev, p, sizeof(p)))
				die("out of memory");
			if (++n % 4096 == 0) {
				put_events(w, &sc, x->tid, seq, &ev);
				seq = n;
			}
		}
		if (ev.len)
			put_events(w, &sc, x->tid, seq, &ev);
		if (jpb_writer_close(w))
			die("close a flow stream");
		printf("mkflow: thread %u: %" PRIu64 " bytecodes\n", x->tid, n);
	}
	jpb_buf_fini(&sc);
	jpb_buf_fini(&ev);
}

/* ---- the truth as the walker sees it ----------------------------------- */

/* Contexts are keyed by their full path "m@site/m@site/...". */
struct op {
	char kind[8];  /* root, call, return, unwind, drop */
	uint32_t method, caller;
	int32_t site;
	size_t depth;
};

struct ctx {
	char *key;
	uint64_t invocations, bytecodes;
};

struct model {
	struct op *ops;
	size_t nops, capops;
	struct ctx *ctx;
	size_t nctx, capctx;
	uint32_t *bc_ctx; /* per bytecode: index in ctx */
	size_t nbc, capbc;
	json_t *index;    /* key -> ctx index */
	size_t anomalies;
};

struct tframe {
	uint32_t method;
	int visible, seen, pre;
	int32_t bci;
	uint32_t ctx;
};

static uint32_t ctx_of(struct model *m, const struct truth *t, const char *parent,
		       uint32_t method, int32_t site)
{
	size_t len = strlen(parent) + strlen(name_of(t, method)) + 32;
	char *key = malloc(len);
	if (!key)
		die("out of memory");
	snprintf(key, len, "%s/%s@%d", parent, name_of(t, method), (int)site);
	json_t *v = json_object_get(m->index, key);
	if (v) {
		free(key);
		return (uint32_t)json_integer_value(v);
	}
	if (JPB_GROW(m->ctx, m->nctx, m->capctx))
		die("out of memory");
	m->ctx[m->nctx] = (struct ctx){ key, 0, 0 };
	json_object_set_new(m->index, key, json_integer((json_int_t)m->nctx));
	return (uint32_t)m->nctx++;
}

static void add_op(struct model *m, const char *kind, uint32_t method,
		   uint32_t caller, int32_t site, size_t depth)
{
	if (JPB_GROW(m->ops, m->nops, m->capops))
		die("out of memory");
	struct op *o = &m->ops[m->nops++];
	snprintf(o->kind, sizeof(o->kind), "%s", kind);
	o->method = method;
	o->caller = caller;
	o->site = site;
	o->depth = depth;
}

static size_t seen_depth(const struct tframe *st, size_t n)
{
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		d += st[i].visible && st[i].seen;
	return d;
}

/* The frame at the top runs its first bytecode: a call or a root. */
static void first_bytecode(struct model *m, const struct truth *t,
			   struct tframe *st, size_t n)
{
	struct tframe *f = &st[n - 1];
	long p = (long)n - 2;
	while (p >= 0 && !st[p].visible)
		p--;
	f->seen = 1;
	if (f->pre || p < 0 || !st[p].seen) {
		f->ctx = ctx_of(m, t, "", f->method, -1);
		add_op(m, "root", f->method, 0, -1, seen_depth(st, n));
	} else {
		f->ctx = ctx_of(m, t, m->ctx[st[p].ctx].key, f->method, st[p].bci);
		add_op(m, "call", f->method, st[p].method, st[p].bci, seen_depth(st, n));
	}
	m->ctx[f->ctx].invocations++;
}

static void replay(const struct truth *t, const struct tthread *x, struct model *m)
{
	struct tframe *st = NULL;
	size_t n = 0, cap = 0;
	int started = 0;
	memset(m, 0, sizeof(*m));
	m->index = json_object();
	for (size_t k = 0; k < x->n; k++) {
		const struct jpb_truth_event *e = &x->ev[k];
		if (e->kind == JPB_TRUTH_ENTRY) {
			if (JPB_GROW(st, n, cap))
				die("out of memory");
			st[n++] = (struct tframe){ e->method_id,
						   !is_native(t, e->method_id), 0, 0, -1, 0 };
		} else if (e->kind == JPB_TRUTH_EXIT || e->kind == JPB_TRUTH_EXIT_EXC) {
			if (!n) {
				m->anomalies++;
				continue;
			}
			struct tframe *f = &st[--n];
			if (f->visible && f->seen)
				add_op(m, e->kind == JPB_TRUTH_EXIT ? "return" : "unwind",
				       f->method, 0, -1, seen_depth(st, n) + 1);
		} else if (e->kind == JPB_TRUTH_BYTECODE) {
			if (!started) {
				started = 1;
				for (size_t i = 0; i < n; i++)
					st[i].pre = 1;
			}
			if (!n || st[n - 1].method != e->method_id) {
				/* a bytecode outside any entered frame */
				m->anomalies++;
				if (JPB_GROW(st, n, cap))
					die("out of memory");
				st[n++] = (struct tframe){ e->method_id, 1, 0, 1, -1, 0 };
			}
			if (!st[n - 1].seen)
				first_bytecode(m, t, st, n);
			st[n - 1].bci = e->bci;
			m->ctx[st[n - 1].ctx].bytecodes++;
			if (JPB_GROW(m->bc_ctx, m->nbc, m->capbc))
				die("out of memory");
			m->bc_ctx[m->nbc++] = st[n - 1].ctx;
		}
	}
	while (n--)
		if (st[n].visible && st[n].seen)
			add_op(m, "drop", st[n].method, 0, -1, seen_depth(st, n) + 1);
	free(st);
}

static void model_free(struct model *m)
{
	for (size_t i = 0; i < m->nctx; i++)
		free(m->ctx[i].key);
	free(m->ctx);
	free(m->ops);
	free(m->bc_ctx);
	json_decref(m->index);
}

static const struct tthread *truth_thread(const struct truth *t, uint32_t tid)
{
	for (size_t i = 0; i < t->nth; i++)
		if (t->th[i].tid == tid)
			return &t->th[i];
	return NULL;
}

/* ---- reading the exports ---------------------------------------------- */

/* Lines of a JSON Lines file, each parsed; NULL-terminated. */
static json_t **read_jsonl(const char *path, size_t *count)
{
	FILE *f = fopen(path, "r");
	json_t **v = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	char *line = NULL;
	size_t lcap = 0;
	if (!f)
		die("cannot open a JSON Lines file");
	while (getline(&line, &lcap, f) > 0) {
		json_error_t err;
		lineno++;
		if (JPB_GROW(v, n + 1, cap))
			die("out of memory");
		v[n] = json_loads(line, 0, &err);
		if (!v[n]) {
			fprintf(stderr, "export_check: %s:%zu: %s\n", path, lineno, err.text);
			exit(2);
		}
		n++;
	}
	free(line);
	fclose(f);
	if (JPB_GROW(v, n, cap))
		die("out of memory");
	v[n] = NULL;
	*count = n;
	return v;
}

static void free_jsonl(json_t **v)
{
	for (size_t i = 0; v && v[i]; i++)
		json_decref(v[i]);
	free(v);
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static json_int_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Path keys of the CCT JSON's nodes, by id ("" for id 0). */
static char **cct_keys(json_t *nodes, size_t *count)
{
	size_t n = json_array_size(nodes) + 1;
	char **key = calloc(n, sizeof(*key));
	if (!key)
		die("out of memory");
	key[0] = strdup("");
	for (size_t i = 1; i < n; i++) {
		json_t *x = json_array_get(nodes, i - 1);
		json_int_t id = jint(x, "id"), parent = jint(x, "parent");
		if (id != (json_int_t)i || parent < 0 || parent >= id)
			die("cct: node ids are not dense with parents first");
		size_t len = strlen(key[parent]) + strlen(jstr(x, "method")) + 32;
		key[i] = malloc(len);
		if (!key[i])
			die("out of memory");
		snprintf(key[i], len, "%s/%s@%d", key[parent], jstr(x, "method"),
			 (int)jint(x, "callsite"));
	}
	*count = n;
	return key;
}

static void free_keys(char **k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(k[i]);
	free(k);
}

/* ---- equal: one thread against the truth -------------------------------- */

static void equal_cct(const struct model *m, const char *path)
{
	json_error_t err;
	json_t *j = json_load_file(path, 0, &err);
	if (!j)
		die("cct: not JSON");
	json_t *nodes = json_object_get(j, "nodes");
	size_t n, bad = 0;
	char **key = cct_keys(nodes, &n);
	if (n - 1 != m->nctx)
		fail("cct: %zu contexts, the truth has %zu", n - 1, m->nctx);
	for (size_t i = 1; i < n; i++) {
		json_t *x = json_array_get(nodes, i - 1);
		json_t *v = json_object_get(m->index, key[i]);
		if (!v) {
			if (bad++ < 5)
				fail("cct: context %s is not in the truth", key[i]);
			continue;
		}
		const struct ctx *c = &m->ctx[json_integer_value(v)];
		if ((uint64_t)jint(x, "invocations") != c->invocations ||
		    (uint64_t)jint(x, "bytecodes") != c->bytecodes) {
			if (bad++ < 5)
				fail("cct: %s: %lld invocations, %lld bytecodes; truth %"
				     PRIu64 ", %" PRIu64, key[i],
				     (long long)jint(x, "invocations"),
				     (long long)jint(x, "bytecodes"), c->invocations,
				     c->bytecodes);
		}
	}
	if (!bad)
		printf("cct: %zu contexts, invocations and bytecodes equal the truth's\n",
		       n - 1);
	free_keys(key, n);
	json_decref(j);
}

static void equal_calls(const struct truth *t, const struct model *m,
			json_t **v, size_t n, uint32_t tid)
{
	size_t k = 0, bad = 0;
	for (size_t i = 0; i < n && bad < 5; i++) {
		const char *ev = jstr(v[i], "ev");
		if (strcmp(ev, "end") == 0 || (uint32_t)jint(v[i], "tid") != tid)
			continue;
		if (k >= m->nops) {
			fail("calls: line %zu: %s %s past the truth's %zu events", i + 1,
			     ev, jstr(v[i], "method"), m->nops);
			bad++;
			continue;
		}
		const struct op *o = &m->ops[k++];
		int same = strcmp(ev, o->kind) == 0 &&
			   strcmp(jstr(v[i], "method"), name_of(t, o->method)) == 0 &&
			   (size_t)jint(v[i], "depth") == o->depth;
		if (same && strcmp(ev, "call") == 0)
			same = strcmp(jstr(v[i], "caller"), name_of(t, o->caller)) == 0 &&
			       jint(v[i], "callsite") == o->site;
		if (!same) {
			fail("calls: line %zu: %s %s depth %lld; truth: %s %s depth %zu "
			     "(from %s @%d)", i + 1, ev, jstr(v[i], "method"),
			     (long long)jint(v[i], "depth"), o->kind,
			     name_of(t, o->method), o->depth,
			     o->caller ? name_of(t, o->caller) : "-", (int)o->site);
			bad++;
		}
	}
	if (!bad && k != m->nops)
		fail("calls: %zu events, the truth has %zu", k, m->nops);
	else if (!bad)
		printf("calls: thread %u: %zu calls and returns equal the truth's\n",
		       tid, k);
}

/* Context table of a contexts export: keys by id. */
static char **context_keys(json_t **v, size_t nv, size_t *count)
{
	json_t *nodes = json_array();
	for (size_t i = 0; i < nv; i++)
		if (json_object_get(v[i], "context")) {
			json_t *x = json_pack("{s:I,s:I,s:s,s:I}", "id",
					      jint(v[i], "context"), "parent",
					      jint(v[i], "parent"), "method",
					      jstr(v[i], "method"), "callsite",
					      jint(v[i], "callsite"));
			json_array_append_new(nodes, x);
		}
	char **k = cct_keys(nodes, count);
	json_decref(nodes);
	return k;
}

static void equal_contexts(const struct model *m, json_t **v, size_t nv,
			   uint32_t tid)
{
	size_t nk, pos = 0, bad = 0;
	char **key = context_keys(v, nv, &nk);
	for (size_t i = 0; i < nv && bad < 5; i++) {
		if (!json_object_get(v[i], "ctx") || (uint32_t)jint(v[i], "tid") != tid)
			continue;
		json_int_t id = jint(v[i], "ctx"), cnt = jint(v[i], "n");
		if (id <= 0 || (size_t)id >= nk) {
			fail("contexts: line %zu: context %lld of thread %lld", i + 1,
			     (long long)id, (long long)jint(v[i], "tid"));
			bad++;
			continue;
		}
		for (json_int_t c = 0; c < cnt && bad < 5; c++, pos++)
			if (pos >= m->nbc ||
			    strcmp(key[id], m->ctx[m->bc_ctx[pos]].key) != 0) {
				fail("contexts: bytecode %zu: context %lld = %s; truth %s",
				     pos, (long long)id, key[id],
				     pos < m->nbc ? m->ctx[m->bc_ctx[pos]].key : "(none)");
				bad++;
			}
	}
	if (!bad && pos != m->nbc)
		fail("contexts: %zu bytecodes, the truth has %zu", pos, m->nbc);
	else if (!bad)
		printf("contexts: thread %u: every one of %zu bytecodes expands to "
		       "the truth's stack\n", tid, pos);
	free_keys(key, nk);
}

static int cmd_equal(struct jpb_bundle *b, uint32_t tid, char **files)
{
	struct truth t;
	struct model m;
	load_truth(b, &t);
	const struct tthread *x = truth_thread(&t, tid);
	if (!x)
		die("no truth for that thread");
	replay(&t, x, &m);
	if (m.anomalies)
		printf("note: %zu truth events outside the stack discipline\n",
		       m.anomalies);
	size_t nc, nx;
	json_t **calls = read_jsonl(files[1], &nc), **ctxs = read_jsonl(files[2], &nx);
	equal_cct(&m, files[0]);
	equal_calls(&t, &m, calls, nc, tid);
	equal_contexts(&m, ctxs, nx, tid);
	free_jsonl(calls);
	free_jsonl(ctxs);
	model_free(&m);
	truth_free(&t);
	return failures ? 1 : 0;
}

/* ---- consistent: all threads, any loss ---------------------------------- */

struct fthread {
	uint32_t tid;
	uint64_t events, unknown;
	int matches_truth;
};

/* One thread's flow against its truth, event by event. */
struct fwalk {
	struct fthread *f;
	const struct tthread *x;
	const struct truth *t;
	const struct xmethods *names;
	size_t k;
	int same;
};

static int fwalk_one(void *arg, const struct jpb_flow_event *e)
{
	struct fwalk *w = arg;
	const struct tthread *x = w->x;
	w->f->events++;
	w->f->unknown += e->method == 0 || e->status == JPB_FLOW_UNKNOWN;
	while (w->same && w->k < x->n && x->ev[w->k].kind != JPB_TRUTH_BYTECODE)
		w->k++;
	const struct xm_method *fm = xmethods_get(w->names, e->method);
	w->same = w->same && w->k < x->n && fm && x->ev[w->k].bci == e->bci &&
		  strcmp(fm->name, name_of(w->t, x->ev[w->k].method_id)) == 0;
	w->k++;
	return 0;
}

/* Flow events per thread, and whether the thread's (method, bci)
 * sequence is the truth's bytecode sequence. */
static struct fthread *read_flows(struct jpb_bundle *b, const struct truth *t,
				  size_t *count)
{
	struct xmethods *names;
	const char *const *streams;
	size_t ns, n = 0;
	char err[256];
	struct fthread *ft = NULL;
	if (xmethods_load(b, &names, err, sizeof(err)) ||
	    jpb_bundle_list_streams(b, &streams, &ns))
		die("cannot read the flows");
	ft = calloc(ns + 1, sizeof(*ft));
	for (size_t i = 0; ft && i < ns; i++) {
		unsigned tid;
		char tail;
		if (sscanf(streams[i], "flow/tid%u%c", &tid, &tail) != 1)
			continue;
		struct fthread *f = &ft[n++];
		f->tid = tid;
		struct fwalk fw = { f, truth_thread(t, tid), t, names, 0, 0 };
		fw.same = fw.x != NULL;
		struct jpb_reader *r;
		struct jpb_record rec;
		if (jpb_reader_open(b, streams[i], &r))
			die("cannot open a flow stream");
		while (jpb_reader_next(r, &rec) == 0)
			jpb_flow_events_each(&rec, fwalk_one, &fw);
		jpb_reader_free(r);
		const struct tthread *x = fw.x;
		size_t k = fw.k;
		while (fw.same && k < x->n && x->ev[k].kind != JPB_TRUTH_BYTECODE)
			k++;
		f->matches_truth = fw.same && k == x->n;
	}
	xmethods_free(names);
	*count = n;
	return ft;
}

static struct fthread *fthread_find(struct fthread *ft, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (ft[i].tid == tid)
			return &ft[i];
	return NULL;
}

static void consistent_cct(const char *path, uint64_t events, uint64_t unknown)
{
	json_error_t err;
	json_t *j = json_load_file(path, 0, &err);
	if (!j)
		die("cct: not JSON");
	json_t *nodes = json_object_get(j, "nodes");
	size_t n = json_array_size(nodes);
	uint64_t *incl = calloc(n + 1, sizeof(*incl)), sum = 0;
	size_t bad = 0;
	if (!incl)
		die("out of memory");
	for (size_t i = n; i > 0; i--) {
		json_t *x = json_array_get(nodes, i - 1);
		incl[i] += (uint64_t)jint(x, "bytecodes");
		sum += (uint64_t)jint(x, "bytecodes");
		if (incl[i] != (uint64_t)jint(x, "bytecodes_incl") && bad++ < 5)
			fail("cct: node %zu: inclusive %lld, exclusive plus children %" PRIu64,
			     i, (long long)jint(x, "bytecodes_incl"), incl[i]);
		if (jint(x, "invocations") < 1 && bad++ < 5)
			fail("cct: node %zu never entered", i);
		json_int_t p = jint(x, "parent");
		if (p < 0 || (size_t)p >= i) {
			fail("cct: node %zu: parent %lld", i, (long long)p);
			break;
		}
		incl[p] += incl[i];
	}
	if ((uint64_t)jint(j, "bytecodes") != events ||
	    (uint64_t)jint(j, "lost") != unknown || sum + unknown != events)
		fail("cct: %lld bytecodes (%lld lost), contexts hold %" PRIu64
		     "; the flows have %" PRIu64 " (%" PRIu64 " unknown)",
		     (long long)jint(j, "bytecodes"), (long long)jint(j, "lost"), sum,
		     events, unknown);
	else if (!bad)
		printf("cct: %zu contexts hold the %" PRIu64 " known bytecodes; "
		       "inclusive = exclusive + children everywhere\n", n, sum);
	free(incl);
	json_decref(j);
}

/* Calls: the depths follow the stack discipline and the per-thread counts
 * of the "end" lines agree with the lines. */
static void consistent_calls(json_t **v, size_t nv)
{
	size_t depth = 0, bad = 0, threads = 0;
	uint64_t c[5] = { 0 }; /* call root return unwind drop */
	static const char *const kinds[] = { "call", "root", "return", "unwind", "drop" };
	static const char *const keys[] = { "calls", "roots", "returns", "unwinds", "drops" };
	for (size_t i = 0; i < nv && bad < 5; i++) {
		const char *ev = jstr(v[i], "ev");
		size_t d = (size_t)jint(v[i], "depth");
		int k = 0;
		while (k < 5 && strcmp(ev, kinds[k]))
			k++;
		if (strcmp(ev, "end") == 0) {
			for (int j = 0; j < 5; j++)
				if ((uint64_t)jint(v[i], keys[j]) != c[j] && bad++ < 5)
					fail("calls: thread %lld: %" PRIu64 " %s lines, end says %lld",
					     (long long)jint(v[i], "tid"), c[j], kinds[j],
					     (long long)jint(v[i], keys[j]));
			if (depth && bad++ < 5)
				fail("calls: thread %lld ends at depth %zu",
				     (long long)jint(v[i], "tid"), depth);
			memset(c, 0, sizeof(c));
			depth = 0;
			threads++;
			continue;
		}
		if (k == 5)
			continue; /* break */
		c[k]++;
		int ok = k <= 1 ? d == depth + 1 : d == depth;
		if (!ok && bad++ < 5)
			fail("calls: line %zu: %s at depth %zu, the stack has %zu", i + 1,
			     ev, d, depth);
		depth = k <= 1 ? d : d - 1;
	}
	if (!bad)
		printf("calls: %zu threads, every call and return keeps the stack "
		       "discipline\n", threads);
}

static void consistent_contexts(json_t **v, size_t nv, struct fthread *ft, size_t nft)
{
	size_t nk, bad = 0;
	char **key = context_keys(v, nv, &nk);
	uint64_t *n = calloc(nft, sizeof(*n)), *z = calloc(nft, sizeof(*z));
	for (size_t i = 0; n && z && i < nv; i++) {
		if (!json_object_get(v[i], "ctx"))
			continue;
		struct fthread *f = fthread_find(ft, nft, (uint32_t)jint(v[i], "tid"));
		json_int_t id = jint(v[i], "ctx");
		if (!f || id < 0 || (size_t)id >= nk) {
			if (bad++ < 5)
				fail("contexts: line %zu: context %lld, thread %lld", i + 1,
				     (long long)id, (long long)jint(v[i], "tid"));
			continue;
		}
		n[f - ft] += (uint64_t)jint(v[i], "n");
		if (!id)
			z[f - ft] += (uint64_t)jint(v[i], "n");
	}
	for (size_t i = 0; n && z && i < nft; i++)
		if ((n[i] != ft[i].events || z[i] != ft[i].unknown) && bad++ < 5)
			fail("contexts: thread %u: %" PRIu64 " events (%" PRIu64
			     " without context); the flow has %" PRIu64 " (%" PRIu64
			     " unknown)", ft[i].tid, n[i], z[i], ft[i].events,
			     ft[i].unknown);
	if (!bad)
		printf("contexts: %zu contexts; every flow event has one, unknown "
		       "events context 0\n", nk - 1);
	free(n);
	free(z);
	free_keys(key, nk);
}

/* How much of the truth's call structure the export recovered: the
 * share of the truth's bytecodes (all threads) counted in a context of
 * the same path.  A figure, not a check: the flow itself may differ. */
static void agreement(const struct truth *t, const char *cct)
{
	json_error_t err;
	json_t *j = json_load_file(cct, 0, &err), *got = json_object();
	size_t n;
	uint64_t total = 0, same = 0;
	if (!j)
		die("cct: not JSON");
	json_t *nodes = json_object_get(j, "nodes");
	char **key = cct_keys(nodes, &n);
	for (size_t i = 1; i < n; i++)
		json_object_set_new(got, key[i], json_integer(jint(json_array_get(nodes, i - 1),
								     "bytecodes")));
	for (size_t i = 0; i < t->nth; i++) {
		struct model m;
		replay(t, &t->th[i], &m);
		for (size_t c = 0; c < m.nctx; c++) {
			json_t *g = json_object_get(got, m.ctx[c].key);
			uint64_t have = g ? (uint64_t)json_integer_value(g) : 0;
			uint64_t want = m.ctx[c].bytecodes;
			total += want;
			same += have < want ? have : want;
			if (getenv("EXPORT_CHECK_VERBOSE") && have < want && want > 200)
				printf("  short: %" PRIu64 " of %" PRIu64 " in %s\n", have,
				       want, m.ctx[c].key);
			if (g) /* what one thread matched is not there for another */
				json_integer_set(g, (json_int_t)(have - (have < want ? have : want)));
		}
		model_free(&m);
	}
	printf("agreement: %.4f of the truth's %" PRIu64 " bytecodes counted in "
	       "the truth's contexts\n", total ? (double)same / (double)total : 0.0,
	       total);
	free_keys(key, n);
	json_decref(got);
	json_decref(j);
}

static int cmd_consistent(struct jpb_bundle *b, char **files)
{
	struct truth t;
	size_t nft, nc, nx;
	load_truth(b, &t);
	struct fthread *ft = read_flows(b, &t, &nft);
	uint64_t ev = 0, unk = 0;
	for (size_t i = 0; i < nft; i++) {
		ev += ft[i].events;
		unk += ft[i].unknown;
	}
	json_t **calls = read_jsonl(files[1], &nc), **ctxs = read_jsonl(files[2], &nx);
	consistent_cct(files[0], ev, unk);
	consistent_calls(calls, nc);
	consistent_contexts(ctxs, nx, ft, nft);
	agreement(&t, files[0]);
	size_t exact = 0;
	for (size_t i = 0; i < nft; i++) {
		const struct tthread *x = truth_thread(&t, ft[i].tid);
		if (!ft[i].matches_truth || !x)
			continue;
		struct model m;
		exact++;
		replay(&t, x, &m);
		equal_calls(&t, &m, calls, nc, ft[i].tid);
		equal_contexts(&m, ctxs, nx, ft[i].tid);
		model_free(&m);
	}
	printf("threads: %zu, of which %zu with a flow equal to the truth "
	       "(their calls and contexts checked for equality)\n", nft, exact);
	free_jsonl(calls);
	free_jsonl(ctxs);
	free(ft);
	truth_free(&t);
	return failures ? 1 : 0;
}

/* ---- stack: what --expand should print ---------------------------------- */

static int cmd_stack(const char *path, long id)
{
	size_t nv;
	json_t **v = read_jsonl(path, &nv);
	json_t *row = NULL;
	long chain[4096];
	size_t n = 0;
	for (long cur = id; cur > 0 && n < 4096; n++) {
		row = NULL;
		for (size_t i = 0; i < nv && !row; i++)
			if (json_object_get(v[i], "context") && jint(v[i], "context") == cur)
				row = v[i];
		if (!row)
			die("no such context");
		chain[n] = cur;
		cur = (long)jint(row, "parent");
	}
	while (n--) {
		for (size_t i = 0; i < nv; i++)
			if (json_object_get(v[i], "context") &&
			    jint(v[i], "context") == chain[n])
				row = v[i];
		printf("%ld %s", chain[n], jstr(row, "method"));
		if (jint(row, "callsite") >= 0)
			printf(" @%lld", (long long)jint(row, "callsite"));
		putchar('\n');
	}
	free_jsonl(v);
	return 0;
}

int main(int argc, char **argv)
{
	struct jpb_bundle *b;
	if (argc == 4 && strcmp(argv[1], "stack") == 0)
		return cmd_stack(argv[2], strtol(argv[3], NULL, 10));
	if (argc < 3)
		die("usage: mkflow DIR | equal DIR TID CCT CALLS CONTEXTS | "
		    "consistent DIR CCT CALLS CONTEXTS | stack CONTEXTS ID");
	if (jpb_bundle_open(&b, argv[2]))
		die("cannot open the bundle");
	int rc = 2;
	if (strcmp(argv[1], "mkflow") == 0 && argc == 3) {
		struct truth t;
		load_truth(b, &t);
		mkflow(b, &t);
		truth_free(&t);
		rc = 0;
	} else if (strcmp(argv[1], "equal") == 0 && argc == 7) {
		rc = cmd_equal(b, (uint32_t)strtoul(argv[3], NULL, 10), argv + 4);
	} else if (strcmp(argv[1], "consistent") == 0 && argc == 6) {
		rc = cmd_consistent(b, argv + 3);
	} else {
		die("bad arguments");
	}
	jpb_bundle_free(b);
	return rc;
}
