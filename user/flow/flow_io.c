// SPDX-License-Identifier: MIT
/* Reconstruction of a whole bundle: decoded/tidN in, the flow streams out
 * (docs/FORMAT.md, "Stream: flow"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/flow_int.h"
#include "records_decoded.h"
#include "records_jvm.h"

#define BATCH 4096u
/* Decoded events parsed per call (jpb_decoded_events_slim). */
#define FEED_BATCH 64u

/* A hidden class's method code, kept until the program is whole: whether
 * the program knows the method (flow_add_method_code) depends on classes
 * that may come later in the stream. */
struct pending_code {
	uint64_t id;
	uint32_t name; /* index + 1 in names */
	uint32_t len;
	uint8_t *code;
};

struct names {
	struct u64map ids; /* method id -> index + 1 */
	char **v;          /* 3 strings per method, in one block: v[3i] frees it */
	size_t n, cap;     /* methods; room in v for cap */
	struct pending_code *code;
	size_t ncode, capcode;
};

/* Class signature, name and signature of M, one block of three strings. */
static char *dup_three(const struct jpb_rec_jvm_method *m, char *s[3])
{
	const struct jpb_str *f[3] = { &m->class_sig, &m->name, &m->signature };
	char *d = malloc((size_t)f[0]->len + f[1]->len + f[2]->len + 3);
	size_t at = 0;
	for (int i = 0; d && i < 3; i++) {
		s[i] = d + at;
		memcpy(s[i], f[i]->ptr, f[i]->len);
		s[i][f[i]->len] = 0;
		at += (size_t)f[i]->len + 1;
	}
	return d;
}

static int names_add(struct names *nm, const struct jpb_rec_jvm_method *m)
{
	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? 2 * nm->cap : 256;
		char **v = realloc(nm->v, cap * 3 * sizeof(*v));
		if (!v)
			return jpb_err_nomem;
		nm->v = v;
		nm->cap = cap;
	}
	char **v = nm->v + nm->n * 3;
	if (!dup_three(m, v))
		return jpb_err_nomem;
	nm->n++;
	return u64map_put(&nm->ids, m->method_id, (uint32_t)nm->n) ? jpb_err_nomem : 0;
}

static void names_free(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->v[i * 3]);
	free(nm->v);
	for (size_t i = 0; i < nm->ncode; i++)
		free(nm->code[i].code);
	free(nm->code);
	u64map_fini(&nm->ids);
}

static int pending_add(struct names *nm, uint64_t id, uint32_t name,
		       const struct jpb_bytes *code)
{
	if (JPB_GROW(nm->code, nm->ncode, nm->capcode))
		return jpb_err_nomem;
	struct pending_code *v = nm->code;
	uint8_t *c = malloc(code->len ? code->len : 1);
	if (!c)
		return jpb_err_nomem;
	memcpy(c, code->ptr, code->len);
	v[nm->ncode++] = (struct pending_code){ id, name, (uint32_t)code->len, c };
	return 0;
}

/* The hidden classes' methods, in the stream's order, once the program
 * has all its classes. */
static int add_pending_code(struct flow *f, const struct names *nm)
{
	for (size_t i = 0; i < nm->ncode; i++) {
		const struct pending_code *c = &nm->code[i];
		char **s = nm->v + (size_t)(c->name - 1) * 3;
		if (flow_add_method_code(f, c->id, s[0], s[1], s[2], c->code,
					 c->len) == jpb_err_nomem)
			return jpb_err_nomem;
	}
	return 0;
}

static int on_jvm_record(struct flow *f, struct names *nm,
			 const struct jpb_record *rec)
{
	const struct jpb_rectype *t = jpb_rectype_find(rec->type);
	if (rec->type == JPB_REC_JVM_METHOD) {
		struct jpb_rec_jvm_method m;
		return jpb_rec_decode(t, rec->payload, rec->size, &m) ? 0 : names_add(nm, &m);
	}
	if (rec->type == JPB_REC_JVM_METHOD_CODE) {
		struct jpb_rec_jvm_method_code mc;
		uint32_t k;
		if (jpb_rec_decode(t, rec->payload, rec->size, &mc) ||
		    !u64map_get(&nm->ids, mc.method_id, &k))
			return 0;
		return pending_add(nm, mc.method_id, k, &mc.bytecode);
	}
	struct jpb_rec_jvm_codelet c;
	if (rec->type != JPB_REC_JVM_CODELET ||
	    jpb_rec_decode(t, rec->payload, rec->size, &c))
		return 0;
	char desc[256];
	size_t n = c.description.len < sizeof(desc) - 1 ? c.description.len :
							     sizeof(desc) - 1;
	memcpy(desc, c.description.ptr, n);
	desc[n] = 0;
	return flow_set_codelet(f, c.index, desc);
}

/* Codelet descriptions and hidden-class methods, from the jvm stream's
 * pass that loads the program (jprog_load_bundle_visit), so the stream is
 * read once. */
struct jvm_visit {
	struct flow *f;
	struct names nm;
};

static int visit_jvm(void *arg, const struct jpb_record *rec)
{
	struct jvm_visit *v = arg;
	return on_jvm_record(v->f, &v->nm, rec);
}

/* A thread's flow events, in records of BATCH events (the record
 * boundaries do not depend on the reconstruction's windows), packed into
 * scratch as they come: the open record's n events so far, its last. */
struct tsink {
	struct jpb_writer *w;
	uint32_t tid;
	uint64_t at; /* events in records written */
	size_t n;
	struct jpb_flow_event last;
	struct jpb_buf *scratch;
};

static int tsink_flush(struct tsink *t)
{
	if (!t->n)
		return 0;
	int err = jpb_flow_events_end(t->w, t->scratch, (uint32_t)t->n);
	t->at += t->n;
	t->n = 0;
	return err;
}

static int tsink_put(void *arg, const struct jpb_flow_event *v, size_t n)
{
	struct tsink *t = arg;
	int err = 0;
	while (n && !err) {
		if (!t->n && (err = jpb_flow_events_begin(t->scratch, t->tid, t->at)))
			break;
		size_t k = BATCH - t->n < n ? BATCH - t->n : n;
		err = jpb_flow_events_add(t->scratch, t->n ? &t->last : NULL, v, k);
		t->last = v[k - 1];
		t->n += k;
		v += k;
		n -= k;
		if (!err && t->n == BATCH)
			err = tsink_flush(t);
	}
	return err;
}

/* Every event of decoded stream NAME into the flow, as it is read. */
static int feed_thread(struct jpb_bundle *b, struct flow *f, const char *name,
		       char *errmsg, size_t size)
{
	struct jpb_reader *r;
	int err = jpb_reader_open(b, name, &r);
	if (err) {
		snprintf(errmsg, size, "flow: %s: %s", name, jpb_errstr(err));
		return err;
	}
	const struct jpb_rectype *te = jpb_rectype_find(JPB_REC_DECODED_EVENTS);
	struct jpb_record rec;
	int nomem = 0;
	while (!nomem && (err = jpb_reader_next(r, &rec)) == 0) {
		/* decoded_gap records repeat the gap events in the batches. */
		struct jpb_rec_decoded_events d;
		if (rec.type != JPB_REC_DECODED_EVENTS ||
		    jpb_rec_decode(te, rec.payload, rec.size, &d))
			continue;
		struct jpb_cur c = jpb_cur_init(d.events.ptr, d.events.len);
		uint64_t prev = d.first_tsc;
		for (uint32_t k = 0; k < d.count && !err;) {
			/* the frames go straight to the flow's array, as many
			 * events' as it has room for; the ip is not used */
			struct jpb_decoded_frame *fr = flow_push_slot(f);
			if (!fr) {
				nomem = 1;
				break;
			}
			size_t want = d.count - k < FEED_BATCH ? d.count - k : FEED_BATCH;
			if (want > f->capev - f->nev)
				want = f->capev - f->nev;
			int perr;
			size_t n = jpb_decoded_events_slim(&c, f->ev + f->nev, want, fr,
							   (uint32_t)f->nfr, f->capfr - f->nfr,
							   &prev, &perr);
			err = flow_pushed(f, n);
			k += (uint32_t)n;
			if (perr)
				break; /* a damaged batch ends here; the rest is kept */
		}
		if (err)
			break;
	}
	if (err == jpb_err_truncated || err == jpb_err_corrupt)
		fprintf(stderr, "jpbpf: warning: %s\n", jpb_reader_errmsg(r));
	jpb_reader_free(r);
	if (nomem || err == jpb_err_nomem) {
		snprintf(errmsg, size, "flow: %s: out of memory", name);
		return jpb_err_nomem;
	}
	if (err && err != jpb_err_eos && err != jpb_err_truncated && err != jpb_err_corrupt) {
		snprintf(errmsg, size, "flow: %s: %s", name, jpb_errstr(err));
		return err;
	}
	return 0;
}

/* Threads by tid. */
struct tid_set {
	uint32_t *v;
	size_t n;
};

/* The threads whose decoded stream holds no gap, by decoded/summary
 * (decode.c counts a thread's gap events there), into *S (S->v
 * malloc'd).  A summary that cannot be read names none: every thread
 * then gets the usual window. */
static void gapless_tids(struct jpb_bundle *b, struct tid_set *s)
{
	struct jpb_reader *r;
	size_t cap = 0;
	*s = (struct tid_set){ 0 };
	if (jpb_reader_open(b, "decoded/summary", &r))
		return;
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_DECODED_THREAD);
	struct jpb_record rec;
	int err = 0;
	while (!err && jpb_reader_next(r, &rec) == 0) {
		struct jpb_rec_decoded_thread th;
		if (rec.type != JPB_REC_DECODED_THREAD ||
		    jpb_rec_decode(t, rec.payload, rec.size, &th) || th.gaps)
			continue;
		err = JPB_GROW(s->v, s->n, cap);
		if (!err)
			s->v[s->n++] = th.tid;
	}
	jpb_reader_free(r);
	if (err) { /* out of memory: none named, as without a summary */
		free(s->v);
		*s = (struct tid_set){ 0 };
	}
}

static int tid_in(const struct tid_set *s, uint32_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == tid)
			return 1;
	return 0;
}

/* Thread TID: decoded/tidTID in, flow/tidTID and its summary out;
 * GAPLESS: the threads decoded/summary says hold no gap. */
static int do_thread(struct jpb_bundle *b, struct flow *f, const char *dname,
		     const struct tid_set *gapless, struct flow_summary *s,
		     struct jpb_writer *sum, struct jpb_buf *scratch, char *errmsg,
		     size_t size)
{
	uint32_t tid = (uint32_t)strtoul(dname + 11, NULL, 10);
	char name[64];
	snprintf(name, sizeof(name), "flow/tid%u", tid);
	struct tsink *t = calloc(1, sizeof(*t));
	if (!t)
		return jpb_err_nomem;
	int err = jpb_writer_open(b, name, &t->w);
	if (err) {
		snprintf(errmsg, size, "flow: %s: %s", name, jpb_bundle_errmsg(b));
		free(t);
		return err;
	}
	/* derived data, as decoded/ (DECODER.md): a crash costs a rerun,
	 * and the fsync of a GB of flow events cost ~3% of the phase's CPU */
	jpb_writer_set_nosync(t->w);
	t->tid = tid;
	t->scratch = scratch;
	struct flow_sink sk = { tsink_put, t };
	err = flow_begin(f, &sk, tid_in(gapless, tid));
	if (!err)
		err = feed_thread(b, f, dname, errmsg, size);
	int ferr = flow_finish(f, s);
	err = err ? err : ferr;
	if (!err)
		err = tsink_flush(t);
	int cerr = jpb_writer_close(t->w);
	err = err ? err : cerr;
	free(t);
	struct jpb_rec_flow_thread th = {
		tid, 0, s->events, s->by_status[JPB_FLOW_DECODED],
		s->by_status[JPB_FLOW_CERTAIN], s->by_status[JPB_FLOW_CHOSEN],
		s->by_status[JPB_FLOW_RECOVERED], s->by_status[JPB_FLOW_UNKNOWN],
		s->gaps, s->resyncs
	};
	if (!err)
		err = jpb_writer_put_rec(sum, jpb_rectype_find(JPB_REC_FLOW_THREAD),
					 0, &th, scratch);
	if (err && !errmsg[0])
		snprintf(errmsg, size, "flow: writing %s: %s", name, jpb_errstr(err));
	return err;
}

static struct jpb_str str_of(const char *s)
{
	return (struct jpb_str){ s ? s : "", s ? (uint32_t)strlen(s) : 0 };
}

static int write_methods(struct jpb_bundle *b, struct flow *f,
			 struct jpb_buf *scratch, char *errmsg, size_t size)
{
	struct jpb_writer *w;
	int err = jpb_writer_open(b, "flow/methods", &w);
	if (err) {
		snprintf(errmsg, size, "flow: flow/methods: %s", jpb_bundle_errmsg(b));
		return err;
	}
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_FLOW_METHOD);
	for (size_t i = 0; i < f->nmeths && !err; i++) {
		if (!f->meths[i].used)
			continue;
		struct flow_method_info m = flow_meth_name(f, (uint32_t)i);
		char sig[1024];
		snprintf(sig, sizeof(sig), "L%s;", m.class_name);
		struct jpb_rec_flow_method r = { (uint32_t)i + 1, 0, m.method_id,
						 str_of(sig), str_of(m.name),
						 str_of(m.descriptor) };
		err = jpb_writer_put_rec(w, t, 0, &r, scratch);
	}
	int cerr = jpb_writer_close(w);
	err = err ? err : cerr;
	if (err)
		snprintf(errmsg, size, "flow: writing flow/methods: %s", jpb_errstr(err));
	return err;
}

static int run_threads(struct jpb_bundle *b, struct flow *f,
		       struct flow_summary *total, char *errmsg, size_t size)
{
	const char *const *names;
	size_t count;
	int err = jpb_bundle_list_streams(b, &names, &count);
	if (err) {
		snprintf(errmsg, size, "flow: listing streams: %s", jpb_errstr(err));
		return err;
	}
	/* The list is the bundle's and changes as streams are written. */
	char **tids = calloc(count + 1, sizeof(*tids));
	size_t ntid = 0;
	for (size_t i = 0; tids && i < count; i++)
		if (!strncmp(names[i], "decoded/tid", 11) && strcmp(names[i], "decoded/tid0"))
			tids[ntid++] = strdup(names[i]);
	struct tid_set gapless;
	gapless_tids(b, &gapless);
	struct jpb_writer *sum = NULL;
	struct jpb_buf scratch = { 0 };
	err = tids ? jpb_writer_open(b, "flow/summary", &sum) : jpb_err_nomem;
	uint64_t done = 0, all = 0;
	for (size_t i = 0; f->o.progress && i < ntid; i++)
		all += jpb_bundle_stream_size(b, tids[i]);
	for (size_t i = 0; i < ntid && !err; i++) {
		struct flow_summary s = { 0 };
		err = do_thread(b, f, tids[i], &gapless, &s, sum, &scratch, errmsg, size);
		total->threads++;
		total->events += s.events;
		for (int k = 0; k < 6; k++)
			total->by_status[k] += s.by_status[k];
		total->gaps += s.gaps;
		total->resyncs += s.resyncs;
		total->entries_narrowed += s.entries_narrowed;
		total->entries_mismatched += s.entries_mismatched;
		if (f->o.progress) {
			done += jpb_bundle_stream_size(b, tids[i]);
			f->o.progress(f->o.progress_arg, done, all);
		}
	}
	if (sum) {
		int cerr = jpb_writer_close(sum);
		err = err ? err : cerr;
	}
	if (!err)
		err = write_methods(b, f, &scratch, errmsg, size);
	for (size_t i = 0; i < ntid; i++)
		free(tids[i]);
	free(tids);
	free(gapless.v);
	jpb_buf_fini(&scratch);
	return err;
}

/* What the program model could not read, as flow_reconstruct_bundle's
 * warning (ERRMSG with a 0 return): methods of a class that failed to
 * parse are unknown, and their events are resynchronised around, so the
 * loss must be said.  TAIL: the load's diagnostic, set when records of
 * the jvm stream were damaged. */
static void program_warning(const struct jprog *p, const struct java_diag *tail,
			    struct flow_summary *out, char *errmsg, size_t size)
{
	const struct java_diag *bad = jprog_first_bad(p);
	out->bad_classes = jprog_bad_classes(p);
	if (bad && tail && tail->msg[0])
		snprintf(errmsg, size, "program: %llu class files unreadable (first: %s); "
			 "%s", (unsigned long long)out->bad_classes,
			 bad->msg, tail->msg);
	else if (bad)
		snprintf(errmsg, size, "program: %llu class files unreadable, their "
			 "methods unknown to the reconstruction (first: %s)",
			 (unsigned long long)out->bad_classes, bad->msg);
	else if (tail && tail->msg[0])
		snprintf(errmsg, size, "program: %s; the classes and methods the damage "
			 "held are unknown to the reconstruction", tail->msg);
}

int flow_reconstruct_bundle(struct jpb_bundle *b, const struct flow_opts *o,
			    struct flow_summary *out, char *errmsg, size_t size)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(out, 0, sizeof(*out));
	errmsg[0] = 0;
	struct jprog *p;
	struct flow *f = NULL;
	struct java_diag diag = { 0 };
	int err = jprog_alloc(&p);
	if (err)
		return jpb_err_nomem;
	int n = 0;
	if ((err = flow_alloc(&f, p, o)))
		snprintf(errmsg, size, "flow: %s", jpb_errstr(err));
	struct jvm_visit jv = { .f = f };
	if (!err && (n = jprog_load_bundle_visit(p, b, &diag, visit_jvm, &jv)) < 0) {
		snprintf(errmsg, size, "flow: program: %s", diag.msg);
		err = n;
	}
	if (!err && (err = add_pending_code(f, &jv.nm)))
		snprintf(errmsg, size, "flow: %s", jpb_errstr(err));
	names_free(&jv.nm);
	if (!err)
		err = run_threads(b, f, out, errmsg, size);
	if (!err)
		program_warning(p, n >= 0 && !(o && o->jvm_damage_said) ? &diag : NULL,
				out, errmsg, size);
	flow_free(f);
	jprog_free(p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->time_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
		       (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	return err;
}

void flow_summary_print(FILE *out, const struct flow_summary *s)
{
	double n = s->events ? (double)s->events / 100.0 : 1.0;
	fprintf(out, "flow: %llu threads, %llu events: decoded %.1f%%, certain %.1f%%, "
		"chosen %.1f%%, recovered %.1f%%, unknown %.1f%%; %llu gaps, "
		"%llu resyncs; ",
		(unsigned long long)s->threads, (unsigned long long)s->events,
		(double)s->by_status[JPB_FLOW_DECODED] / n,
		(double)s->by_status[JPB_FLOW_CERTAIN] / n,
		(double)s->by_status[JPB_FLOW_CHOSEN] / n,
		(double)s->by_status[JPB_FLOW_RECOVERED] / n,
		(double)s->by_status[JPB_FLOW_UNKNOWN] / n,
		(unsigned long long)s->gaps, (unsigned long long)s->resyncs);
	/* only when the decoder counted entry loops: the line is unchanged
	 * for bundles without */
	if (s->entries_narrowed || s->entries_mismatched)
		fprintf(out, "%llu entries narrowed by their locals, %llu mismatched; ",
			(unsigned long long)s->entries_narrowed,
			(unsigned long long)s->entries_mismatched);
	fprintf(out, "%.3f s\n", (double)s->time_ns / 1e9);
}
