// SPDX-License-Identifier: MIT
/* Hot methods, coverage and loss figures from the reconstructed flows. */
#include "export/summary.h"

#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "export/coverage.h"
#include "export/model/clock.h"
#include "export/model/methods.h"
#include "records.h"
#include "records_decoded.h"
#include "records_flow.h"

struct mcount {
	uint64_t events, observed, recovered, time_ns;
};

struct tally {
	struct xmethods *xm;
	struct xclock *clk;
	struct xcov *cov;
	struct mcount *c; /* by flow method index */
	size_t capc;
	uint64_t events, observed, recovered, unknown, time_ns, unknown_ns;
	uint64_t gaps, lost_ns, resyncs;
	unsigned threads;
	json_t *damaged; /* reader messages of damaged streams */
	json_t *losses;  /* the writers' loss records */
};

static void note_damage(struct tally *t, struct jpb_reader *r, int err)
{
	if (err != jpb_err_eos)
		json_array_append_new(t->damaged, json_string(jpb_reader_errmsg(r)));
}

static void note_record_damage(struct tally *t, const char *stream, const char *msg)
{
	char line[320];
	snprintf(line, sizeof(line), "%s: %s", stream, msg);
	json_array_append_new(t->damaged, json_string(line));
}

static struct mcount *method_count(struct tally *t, uint32_t m)
{
	if (m >= t->capc) {
		size_t old = t->capc;
		if (jpb_grow((void **)&t->c, &t->capc, m, sizeof(*t->c)))
			return NULL;
		memset(t->c + old, 0, (t->capc - old) * sizeof(*t->c));
	}
	return &t->c[m];
}

/* E, with NEXT the thread's following event (NULL at its end): E's time
 * is until NEXT's, exclusive to E's method. */
static int count_event(struct tally *t, const struct jpb_flow_event *e,
		       const struct jpb_flow_event *next)
{
	uint64_t dt = 0;
	if (next && next->tsc > e->tsc)
		dt = xclock_mono(t->clk, next->tsc) - xclock_mono(t->clk, e->tsc);
	t->events++;
	t->time_ns += dt;
	if (e->method == 0 || e->status == JPB_FLOW_UNKNOWN) {
		t->unknown++;
		t->unknown_ns += dt;
		return 0;
	}
	struct mcount *m = method_count(t, e->method);
	if (!m || xcov_event(t->cov, e, next))
		return jpb_err_nomem;
	m->events++;
	m->time_ns += dt;
	if (e->status == JPB_FLOW_RECOVERED) {
		m->recovered++;
		t->recovered++;
	} else {
		m->observed++;
		t->observed++;
	}
	return 0;
}

/* Each event is counted with the one after it (its time runs until then). */
struct pairing {
	struct tally *t;
	struct jpb_flow_event prev;
	int have;
};

static int count_next(void *arg, const struct jpb_flow_event *e)
{
	struct pairing *p = arg;
	if (p->have && count_event(p->t, &p->prev, e))
		return jpb_err_nomem;
	p->prev = *e;
	p->have = 1;
	return 0;
}

static int count_stream(struct jpb_bundle *b, const char *name, struct tally *t)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	struct pairing p = { .t = t };
	int err = jpb_reader_open(b, name, &r);
	if (err)
		return err;
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		char msg[256];
		int rc = jpb_flow_events_each_msg(&rec, count_next, &p, msg, sizeof(msg));
		if (rc == jpb_err_nomem) {
			jpb_reader_free(r);
			return rc;
		}
		/* A damaged record's events before the damage are counted;
		 * the damage is listed like the stream's own. */
		if (rc)
			note_record_damage(t, name, msg);
	}
	note_damage(t, r, err);
	jpb_reader_free(r);
	if (p.have && count_event(t, &p.prev, NULL))
		return jpb_err_nomem;
	t->threads += p.have;
	return 0;
}

/* Gaps and their length from decoded/tidN, resyncs from flow/summary. */
static void count_gaps(struct jpb_bundle *b, const char *name, struct tally *t)
{
	const struct jpb_rectype *type = jpb_rectype_find(JPB_REC_DECODED_GAP);
	struct jpb_reader *r;
	struct jpb_record rec;
	if (jpb_reader_open(b, name, &r))
		return;
	int err;
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		struct jpb_rec_decoded_gap g;
		if (rec.type != JPB_REC_DECODED_GAP ||
		    jpb_rec_decode(type, rec.payload, rec.size, &g))
			continue;
		t->gaps++;
		if (g.last_ns > g.first_ns)
			t->lost_ns += g.last_ns - g.first_ns;
	}
	note_damage(t, r, err);
	jpb_reader_free(r);
}

static void count_resyncs(struct jpb_bundle *b, uint32_t tid, struct tally *t)
{
	const struct jpb_rectype *type = jpb_rectype_find(JPB_REC_FLOW_THREAD);
	struct jpb_reader *r;
	struct jpb_record rec;
	if (jpb_reader_open(b, "flow/summary", &r))
		return;
	while (jpb_reader_next(r, &rec) == 0) {
		struct jpb_rec_flow_thread th;
		if (rec.type == JPB_REC_FLOW_THREAD &&
		    !jpb_rec_decode(type, rec.payload, rec.size, &th) &&
		    (!tid || th.tid == tid))
			t->resyncs += th.resyncs;
	}
	jpb_reader_free(r);
}

/* Loss records of the metadata writers (agent, BPF, recorder); PT's own
 * losses show as the decoder's gaps. */
static void count_losses(struct jpb_bundle *b, const char *name, struct tally *t)
{
	const struct jpb_rectype *type = jpb_rectype_find(JPB_REC_LOSS);
	struct jpb_reader *r;
	struct jpb_record rec;
	if (jpb_reader_open(b, name, &r))
		return;
	while (jpb_reader_next(r, &rec) == 0) {
		struct jpb_rec_loss l;
		if (rec.type != JPB_REC_LOSS ||
		    jpb_rec_decode(type, rec.payload, rec.size, &l))
			continue;
		json_array_append_new(t->losses, json_pack("{s:s,s:s%,s:I}",
			"stream", name, "what", l.what.ptr, (size_t)l.what.len,
			"count", (json_int_t)l.count));
	}
	jpb_reader_free(r);
}

/* Thread streams are "PREFIXtidN"; TID 0 selects all. */
static int wanted(const char *name, const char *prefix, uint32_t tid)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0)
		return 0;
	char *end;
	unsigned long v = strtoul(name + n, &end, 10);
	return *end == '\0' && v && (tid == 0 || v == tid);
}

/* A method and its weight, sorted without reaching back into the tally. */
struct ranked {
	uint64_t weight;
	uint32_t method;
};

static int by_weight(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->method < y->method ? -1 : x->method > y->method;
}

static const char *name_of(const struct tally *t, uint32_t m, char *buf,
			   size_t size)
{
	const struct xm_method *xm = xmethods_get(t->xm, m);
	if (xm)
		return xm->name;
	snprintf(buf, size, "method#%u", m);
	return buf;
}

static json_t *method_json(const struct tally *t, uint32_t idx)
{
	const struct mcount *c = &t->c[idx];
	struct xcov_figures f;
	char buf[32];
	json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:f,s:I,s:f}",
		"method", name_of(t, idx, buf, sizeof(buf)),
		"events", (json_int_t)c->events,
		"observed", (json_int_t)c->observed,
		"recovered", (json_int_t)c->recovered,
		"share", t->events ? (double)c->events / (double)t->events : 0.0,
		"time_ns", (json_int_t)c->time_ns,
		"time_share", t->time_ns ? (double)c->time_ns / (double)t->time_ns : 0.0);
	if (xcov_method(t->cov, idx, &f) == 0) {
		json_object_set_new(o, "covered", json_integer((json_int_t)f.covered));
		json_object_set_new(o, "code_length", f.code_length < 0 ? json_null() :
				    json_integer(f.code_length));
	}
	return o;
}

/* The TOP methods by events (BY_TIME 0) or by time. */
static json_t *methods_json(struct tally *t, unsigned top, int by_time)
{
	struct ranked *rk = malloc((t->capc ? t->capc : 1) * sizeof(*rk));
	json_t *a = json_array();
	size_t n = 0;
	if (!rk)
		return a;
	for (uint32_t m = 1; m < t->capc; m++)
		if (t->c[m].events)
			rk[n++] = (struct ranked){ by_time ? t->c[m].time_ns :
							     t->c[m].events, m };
	qsort(rk, n, sizeof(*rk), by_weight);
	for (size_t i = 0; i < n && i < top; i++)
		json_array_append_new(a, method_json(t, rk[i].method));
	free(rk);
	return a;
}

static json_t *loss_json(struct tally *t)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:O}",
		"gaps", (json_int_t)t->gaps,
		"lost_ns", (json_int_t)t->lost_ns,
		"recovered", (json_int_t)t->recovered,
		"unknown", (json_int_t)t->unknown,
		"resyncs", (json_int_t)t->resyncs,
		"writer_losses", t->losses);
}

static void tally_fini(struct tally *t)
{
	xcov_free(t->cov);
	xclock_free(t->clk);
	xmethods_free(t->xm);
	free(t->c);
	json_decref(t->damaged);
	json_decref(t->losses);
}

static int scan(struct jpb_bundle *b, const struct summary_opts *o,
		struct tally *t)
{
	const char *const *names;
	size_t n;
	int err = jpb_bundle_list_streams(b, &names, &n);
	for (size_t i = 0; !err && i < n; i++) {
		if (wanted(names[i], "flow/tid", o->tid))
			err = count_stream(b, names[i], t);
		else if (wanted(names[i], "decoded/tid", o->tid))
			count_gaps(b, names[i], t);
		else if (!strcmp(names[i], "jvm") || !strcmp(names[i], "sched") ||
			 !strcmp(names[i], "maps"))
			count_losses(b, names[i], t);
	}
	if (!err)
		count_resyncs(b, o->tid, t);
	return err;
}

int summary_build(struct jpb_bundle *b, const struct summary_opts *o,
		  json_t **out, char *errmsg, size_t size)
{
	struct tally t = { .damaged = json_array(), .losses = json_array() };
	int err = xmethods_load(b, &t.xm, errmsg, size);
	if (err) {
		tally_fini(&t);
		return err;
	}
	err = xclock_load(b, &t.clk, NULL);
	if (!err)
		err = xcov_alloc(&t.cov, t.xm);
	if (!err)
		err = scan(b, o, &t);
	if (!err && o->tid && !t.threads) {
		snprintf(errmsg, size, "thread %u has no flow in %s", o->tid,
			 jpb_bundle_dir(b));
		err = jpb_err_not_found;
	} else if (err) {
		snprintf(errmsg, size, "%s: %s", jpb_bundle_dir(b), jpb_errstr(err));
	}
	unsigned top = o->top ? o->top : 20;
	if (!err)
		*out = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o,s:O}",
			"threads", (json_int_t)t.threads,
			"events", (json_int_t)t.events,
			"observed", (json_int_t)t.observed,
			"recovered", (json_int_t)t.recovered,
			"unknown", (json_int_t)t.unknown,
			"time_ns", (json_int_t)t.time_ns,
			"methods", methods_json(&t, top, 0),
			"methods_by_time", methods_json(&t, top, 1),
			"coverage", xcov_json(t.cov),
			"loss", loss_json(&t),
			"damaged", t.damaged);
	tally_fini(&t);
	return err;
}
