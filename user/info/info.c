// SPDX-License-Identifier: MIT
/* The core bundle summary: streams, threads, time span, damage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records.h"

struct thread_entry {
	uint32_t tid, nstid;
	json_t *name; /* owned JSON string or NULL */
};

struct summary {
	json_t *streams;
	struct thread_entry *threads;
	size_t nthreads, cap;
	uint64_t tmin, tmax;
	void **states; /* one per info_sections[] entry */
	size_t nsections;
};

static struct thread_entry *find_thread(struct summary *s, uint32_t tid,
					uint32_t nstid)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread_entry *t = &s->threads[i];
		if ((tid && t->tid == tid) || (!tid && nstid && t->nstid == nstid) ||
		    (tid && !t->tid && nstid && t->nstid == nstid))
			return t;
	}
	if (JPB_GROW(s->threads, s->nthreads, s->cap))
		return NULL;
	struct thread_entry *t = &s->threads[s->nthreads++];
	memset(t, 0, sizeof(*t));
	return t;
}

static void note_thread(struct summary *s, const struct jpb_record *rec)
{
	struct jpb_rec_thread th;
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_THREAD);
	if (jpb_rec_decode(t, rec->payload, rec->size, &th) != 0)
		return;
	if (!th.tid && !th.nstid)
		return;
	struct thread_entry *e = find_thread(s, th.tid, th.nstid);
	if (!e)
		return;
	if (th.tid)
		e->tid = th.tid;
	if (th.nstid)
		e->nstid = th.nstid;
	if (th.name.len) {
		json_decref(e->name);
		e->name = json_stringn(th.name.ptr, th.name.len);
	}
}

static void count_type(json_t *types, uint16_t type)
{
	const struct jpb_rectype *t = jpb_rectype_find(type);
	char unknown[32];
	const char *key = t ? t->name : unknown;
	if (!t)
		snprintf(unknown, sizeof(unknown), "type_0x%04x", type);
	json_t *n = json_object_get(types, key);
	json_object_set_new(types, key,
			    json_integer(n ? json_integer_value(n) + 1 : 1));
}

static void on_record(struct summary *s, const char *stream,
		      const struct jpb_record *rec, json_t *types)
{
	count_type(types, rec->type);
	if (rec->time_ns) {
		if (!s->tmin || rec->time_ns < s->tmin)
			s->tmin = rec->time_ns;
		if (rec->time_ns > s->tmax)
			s->tmax = rec->time_ns;
	}
	if (rec->type == JPB_REC_THREAD)
		note_thread(s, rec);
	for (size_t i = 0; i < s->nsections; i++)
		if (s->states[i])
			info_sections[i]->record(s->states[i], stream, rec);
}

static json_t *summarize_stream(struct summary *s, struct jpb_bundle *b,
				const char *name)
{
	json_t *o = json_object(), *types = json_object();
	struct jpb_reader *r;
	struct jpb_record rec;
	uint64_t records = 0;
	int err = jpb_reader_open(b, name, &r);
	if (err) {
		json_object_set_new(o, "error",
				    json_string(jpb_bundle_errmsg(b)));
		json_object_set_new(o, "records", json_integer(0));
		json_object_set_new(o, "bytes", json_integer(0));
		json_object_set_new(o, "truncated_at", json_null());
		json_object_set_new(o, "types", types);
		return o;
	}
	/* as decode reads it: a record whose checksum fails is stepped over */
	jpb_reader_skip_damaged(r);
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		records++;
		on_record(s, name, &rec, types);
	}
	json_object_set_new(o, "records", json_integer((json_int_t)records));
	json_object_set_new(o, "bytes",
			    json_integer((json_int_t)jpb_reader_file_size(r)));
	int64_t bad = jpb_reader_bad_offset(r);
	uint64_t damaged = jpb_reader_damaged(r);
	json_object_set_new(o, "truncated_at",
			    bad >= 0 ? json_integer(bad) : json_null());
	json_object_set_new(o, "damaged", json_integer((json_int_t)damaged));
	char text[640];
	if (err != jpb_err_eos || damaged)
		json_object_set_new(o, "error",
				    json_string(jpb_reader_damage(r, err, text, sizeof(text))));
	json_object_set_new(o, "types", types);
	jpb_reader_free(r);
	return o;
}

static json_t *threads_json(struct summary *s)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread_entry *t = &s->threads[i];
		json_t *o = json_object();
		json_object_set_new(o, "tid", json_integer(t->tid));
		json_object_set_new(o, "nstid", json_integer(t->nstid));
		json_object_set_new(o, "name", t->name ? json_incref(t->name)
						       : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

static void summary_fini(struct summary *s)
{
	for (size_t i = 0; i < s->nthreads; i++)
		json_decref(s->threads[i].name);
	free(s->threads);
	for (size_t i = 0; i < s->nsections; i++)
		if (s->states[i])
			info_sections[i]->free(s->states[i]);
	free(s->states);
	json_decref(s->streams);
}

static void sections_alloc(struct summary *s)
{
	while (info_sections[s->nsections])
		s->nsections++;
	s->states = calloc(s->nsections + 1, sizeof(*s->states));
	for (size_t i = 0; s->states && i < s->nsections; i++)
		s->states[i] = info_sections[i]->alloc();
}

static void add_sections(struct summary *s, json_t *out, json_t *meta)
{
	for (size_t i = 0; i < s->nsections; i++) {
		if (!s->states[i])
			continue;
		json_t *sec = info_sections[i]->finish(s->states[i], meta);
		if (sec)
			json_object_set_new(out, info_sections[i]->name, sec);
	}
}

static void add_meta(json_t *out, struct jpb_bundle *b, json_t **meta)
{
	void *m = NULL;
	int err = jpb_meta_load(b, &m);
	*meta = m;
	json_object_set_new(out, "format_version",
			    m ? json_incref(json_object_get(m, "format_version"))
			      : json_integer(JPB_FORMAT_MAJOR));
	json_object_set_new(out, "meta", m ? json_incref(m) : json_null());
	if (err)
		json_object_set_new(out, "meta_error",
				    json_string(jpb_bundle_errmsg(b)));
}

int info_summarize(const char *dir, json_t **out, char *errmsg, size_t size)
{
	struct jpb_bundle *b;
	struct summary s = { 0 };
	const char *const *names;
	size_t n;
	int err = jpb_bundle_open(&b, dir);
	if (err) {
		snprintf(errmsg, size, "%s: %s", dir,
			 err == jpb_err_bad_magic ? "not a jpbpf bundle (no meta.json, no streams)"
			 : err == jpb_err_not_found ? "no such directory"
						    : jpb_errstr(err));
		return err;
	}
	err = jpb_bundle_list_streams(b, &names, &n);
	if (err) {
		snprintf(errmsg, size, "%s", jpb_bundle_errmsg(b));
		jpb_bundle_free(b);
		return err;
	}
	json_t *o = json_object(), *meta;
	add_meta(o, b, &meta);
	sections_alloc(&s);
	s.streams = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(s.streams, names[i],
				    summarize_stream(&s, b, names[i]));
	json_object_set(o, "streams", s.streams);
	json_object_set_new(o, "threads", threads_json(&s));
	json_object_set_new(o, "time_span_ns",
			    json_integer((json_int_t)(s.tmax - s.tmin)));
	json_object_set_new(o, "start_ns", json_integer((json_int_t)s.tmin));
	json_object_set_new(o, "end_ns", json_integer((json_int_t)s.tmax));
	add_sections(&s, o, meta);
	summary_fini(&s);
	jpb_bundle_free(b);
	*out = o;
	return 0;
}
