// SPDX-License-Identifier: MIT
/* Hot methods by executed bytecodes, from the reconstructed flows. */
#include "export/summary.h"

#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "records.h"
#include "records_flow.h"

struct mcount {
	uint64_t events, observed, recovered;
};

struct tally {
	char **names;  /* by flow method index; NULL if not named */
	size_t nnames, capnames;
	struct mcount *c; /* by flow method index */
	size_t capc;
	uint64_t events, observed, recovered, unknown;
	unsigned threads;
	json_t *damaged; /* reader messages of damaged streams */
};

/* "Ljava/lang/String;" + "valueOf" + "(I)..." -> "java.lang.String.valueOf(I)..." */
static char *method_name(const struct jpb_rec_flow_method *m)
{
	const char *cls = m->class_sig.ptr;
	uint32_t n = m->class_sig.len;
	if (n >= 2 && cls[0] == 'L' && cls[n - 1] == ';') {
		cls++;
		n -= 2;
	}
	size_t len = (size_t)n + 1 + m->name.len + m->signature.len + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	snprintf(s, len, "%.*s.%.*s%.*s", (int)n, cls, (int)m->name.len,
		 m->name.ptr, (int)m->signature.len, m->signature.ptr);
	for (char *p = s; *p && p < s + n; p++)
		if (*p == '/')
			*p = '.';
	return s;
}

static void note_damage(struct tally *t, struct jpb_reader *r, int err)
{
	if (err != jpb_err_eos)
		json_array_append_new(t->damaged, json_string(jpb_reader_errmsg(r)));
}

static int load_methods(struct jpb_bundle *b, struct tally *t)
{
	const struct jpb_rectype *type = jpb_rectype_find(JPB_REC_FLOW_METHOD);
	struct jpb_reader *r;
	struct jpb_record rec;
	int err = jpb_reader_open(b, "flow/methods", &r);
	if (err)
		return err;
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		struct jpb_rec_flow_method m;
		if (rec.type != JPB_REC_FLOW_METHOD ||
		    jpb_rec_decode(type, rec.payload, rec.size, &m) != 0 ||
		    m.index == 0 || m.index > (1u << 26))
			continue;
		if (jpb_grow((void **)&t->names, &t->capnames, m.index,
			     sizeof(*t->names)))
			break;
		while (t->nnames <= m.index)
			t->names[t->nnames++] = NULL;
		free(t->names[m.index]);
		t->names[m.index] = method_name(&m);
	}
	note_damage(t, r, err);
	jpb_reader_free(r);
	return 0;
}

static int count_event(struct tally *t, const struct jpb_flow_event *e)
{
	t->events++;
	if (e->method == 0 || e->status == JPB_FLOW_UNKNOWN) {
		t->unknown++;
		return 0;
	}
	if (e->method >= t->capc) {
		size_t old = t->capc;
		if (jpb_grow((void **)&t->c, &t->capc, e->method, sizeof(*t->c)))
			return jpb_err_nomem;
		memset(t->c + old, 0, (t->capc - old) * sizeof(*t->c));
	}
	struct mcount *m = &t->c[e->method];
	m->events++;
	if (e->status == JPB_FLOW_RECOVERED) {
		m->recovered++;
		t->recovered++;
	} else {
		m->observed++;
		t->observed++;
	}
	return 0;
}

static int count_stream(struct jpb_bundle *b, const char *name, struct tally *t)
{
	const struct jpb_rectype *type = jpb_rectype_find(JPB_REC_FLOW_EVENTS);
	struct jpb_reader *r;
	struct jpb_record rec;
	uint64_t before = t->events;
	int err = jpb_reader_open(b, name, &r);
	if (err)
		return err;
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		struct jpb_rec_flow_events ev;
		if (rec.type != JPB_REC_FLOW_EVENTS ||
		    jpb_rec_decode(type, rec.payload, rec.size, &ev) != 0)
			continue;
		for (uint32_t i = 0; i + JPB_FLOW_EVENT_SIZE <= ev.events.len;
		     i += JPB_FLOW_EVENT_SIZE) {
			struct jpb_flow_event e;
			jpb_flow_event_get(ev.events.ptr + i, &e);
			if (count_event(t, &e)) {
				jpb_reader_free(r);
				return jpb_err_nomem;
			}
		}
	}
	note_damage(t, r, err);
	jpb_reader_free(r);
	t->threads += t->events > before;
	return 0;
}

/* Thread streams are "flow/tidN"; TID 0 selects all. */
static int wanted(const char *name, uint32_t tid)
{
	if (strncmp(name, "flow/tid", 8) != 0)
		return 0;
	char *end;
	unsigned long n = strtoul(name + 8, &end, 10);
	return *end == '\0' && (tid == 0 || n == tid);
}

/* A method and its count, sorted without reaching back into the tally. */
struct ranked {
	uint64_t events;
	uint32_t method;
};

static int by_events(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->events != y->events)
		return x->events < y->events ? 1 : -1;
	return x->method < y->method ? -1 : x->method > y->method;
}

static const char *name_of(const struct tally *t, uint32_t m, char *buf,
			   size_t size)
{
	if (m < t->nnames && t->names[m])
		return t->names[m];
	snprintf(buf, size, "method#%u", m);
	return buf;
}

static json_t *methods_json(struct tally *t, unsigned top)
{
	struct ranked *rk = malloc((t->capc ? t->capc : 1) * sizeof(*rk));
	json_t *a = json_array();
	size_t n = 0;
	if (!rk)
		return a;
	for (uint32_t m = 1; m < t->capc; m++)
		if (t->c[m].events)
			rk[n++] = (struct ranked){ t->c[m].events, m };
	qsort(rk, n, sizeof(*rk), by_events);
	for (size_t i = 0; i < n && i < top; i++) {
		const struct mcount *c = &t->c[rk[i].method];
		char buf[32];
		json_array_append_new(a, json_pack("{s:s,s:I,s:I,s:I,s:f}",
			"method", name_of(t, rk[i].method, buf, sizeof(buf)),
			"events", (json_int_t)c->events,
			"observed", (json_int_t)c->observed,
			"recovered", (json_int_t)c->recovered,
			"share", t->events ? (double)c->events / (double)t->events : 0.0));
	}
	free(rk);
	return a;
}

static void tally_fini(struct tally *t)
{
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t->c);
	json_decref(t->damaged);
}

int summary_build(struct jpb_bundle *b, const struct summary_opts *o,
		  json_t **out, char *errmsg, size_t size)
{
	struct tally t = { .damaged = json_array() };
	const char *const *names;
	size_t n;
	int err = load_methods(b, &t);
	if (err) {
		snprintf(errmsg, size, "%s: no reconstructed flow (run 'jpbpf "
			 "decode' first): %s", jpb_bundle_dir(b), jpb_errstr(err));
		tally_fini(&t);
		return err;
	}
	err = jpb_bundle_list_streams(b, &names, &n);
	for (size_t i = 0; !err && i < n; i++)
		if (wanted(names[i], o->tid))
			err = count_stream(b, names[i], &t);
	if (!err && o->tid && !t.threads) {
		snprintf(errmsg, size, "thread %u has no flow in %s", o->tid,
			 jpb_bundle_dir(b));
		err = jpb_err_not_found;
	} else if (err) {
		snprintf(errmsg, size, "%s: %s", jpb_bundle_dir(b), jpb_errstr(err));
	}
	if (!err)
		*out = json_pack("{s:I,s:I,s:I,s:I,s:I,s:o,s:O}",
			"threads", (json_int_t)t.threads,
			"events", (json_int_t)t.events,
			"observed", (json_int_t)t.observed,
			"recovered", (json_int_t)t.recovered,
			"unknown", (json_int_t)t.unknown,
			"methods", methods_json(&t, o->top ? o->top : 20),
			"damaged", t.damaged);
	tally_fini(&t);
	return err;
}

static json_int_t geti(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

void summary_print(FILE *f, json_t *s)
{
	json_int_t ev = geti(s, "events");
	fprintf(f, "%" JSON_INTEGER_FORMAT " bytecodes in %" JSON_INTEGER_FORMAT
		" threads: %" JSON_INTEGER_FORMAT " observed, %" JSON_INTEGER_FORMAT
		" recovered, %" JSON_INTEGER_FORMAT " at unknown positions\n",
		ev, geti(s, "threads"), geti(s, "observed"), geti(s, "recovered"),
		geti(s, "unknown"));
	fprintf(f, "%12s %7s %12s  %s\n", "bytecodes", "share", "recovered",
		"method");
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(s, "methods"), i, m)
		fprintf(f, "%12" JSON_INTEGER_FORMAT " %6.2f%% %12" JSON_INTEGER_FORMAT
			"  %s\n", geti(m, "events"),
			100 * json_real_value(json_object_get(m, "share")),
			geti(m, "recovered"),
			json_string_value(json_object_get(m, "method")));
}
