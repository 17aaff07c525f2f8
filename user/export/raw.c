// SPDX-License-Identifier: MIT
/* The decoder's events as text (see raw.h). */
#include "export/raw.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "java/bytecodes.h"
#include "records.h"
#include "records_decoded.h"
#include "records_jvm.h"

struct mname {
	uint64_t id;
	char *name; /* "Lpkg/Cls;.name(sig)" */
};

struct raw {
	struct jpb_bundle *b;
	FILE *f;
	const struct xraw_opts *o;
	struct mname *names;
	size_t n, cap;
	uint64_t done, total;
	struct jpb_decoded_event ev;
};

static int add_name(struct raw *r, const struct jpb_rec_jvm_method *m)
{
	size_t len = (size_t)m->class_sig.len + m->name.len + m->signature.len + 2;
	char *s = malloc(len);
	if (!s || JPB_GROW(r->names, r->n, r->cap)) {
		free(s);
		return jpb_err_nomem;
	}
	snprintf(s, len, "%.*s.%.*s%.*s", (int)m->class_sig.len, m->class_sig.ptr,
		 (int)m->name.len, m->name.ptr, (int)m->signature.len,
		 m->signature.ptr);
	r->names[r->n++] = (struct mname){ m->method_id, s };
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct mname *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int load_names(struct raw *r)
{
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_JVM_METHOD);
	struct jpb_reader *rd;
	struct jpb_record rec;
	int err = 0;
	if (jpb_reader_open(r->b, "jvm", &rd))
		return 0; /* frames keep their ids */
	while (!err && jpb_reader_next(rd, &rec) == 0) {
		struct jpb_rec_jvm_method m;
		if (rec.type == JPB_REC_JVM_METHOD &&
		    !jpb_rec_decode(t, rec.payload, rec.size, &m))
			err = add_name(r, &m);
	}
	jpb_reader_free(rd);
	if (r->n)
		qsort(r->names, r->n, sizeof(*r->names), by_id);
	return err;
}

static const char *name_of(const struct raw *r, uint64_t id)
{
	struct mname key = { id, NULL };
	const struct mname *m = r->n ? bsearch(&key, r->names, r->n, sizeof(key),
					       by_id) : NULL;
	return m ? m->name : NULL;
}

static void print_frames(struct raw *r, const struct jpb_decoded_event *e)
{
	uint32_t n = e->nframes < JPB_DECODED_MAX_FRAMES ? e->nframes :
							  JPB_DECODED_MAX_FRAMES;
	for (uint32_t i = 0; i < n; i++) {
		const char *nm = name_of(r, e->frames[i].method_id);
		if (nm)
			fprintf(r->f, "%s%s@%d", i ? " < " : " ", nm, e->frames[i].bci);
		else
			fprintf(r->f, "%smethod#0x%" PRIx64 "@%d", i ? " < " : " ",
				e->frames[i].method_id, e->frames[i].bci);
	}
}

static void print_event(struct raw *r, uint64_t seq,
			const struct jpb_decoded_event *e)
{
	FILE *f = r->f;
	fprintf(f, "%10" PRIu64 " %20" PRIu64 " ", seq, e->tsc);
	switch (e->kind) {
	case JPB_DEV_INTERP:
		fprintf(f, "interp     %s tos=%u\n", jbc_name(e->opcode), e->tos);
		return;
	case JPB_DEV_COMPILED:
		fprintf(f, "compiled   pc=0x%" PRIx64, e->ip);
		print_frames(r, e);
		fputc('\n', f);
		return;
	case JPB_DEV_TRANSITION:
		fprintf(f, "transition %s ip=0x%" PRIx64 " arg=%" PRIu64 "\n",
			jpb_decoded_transition_name(e->what), e->ip, e->arg);
		return;
	case JPB_DEV_GAP:
		fprintf(f, "gap        %s until %" PRIu64 " (%" PRIu64
			" ticks) pt_offset=%" PRIu64 "\n",
			jpb_decoded_gap_name(e->what), e->end_tsc,
			e->end_tsc > e->tsc ? e->end_tsc - e->tsc : 0, e->ip);
		return;
	default:
		fprintf(f, "kind%u\n", e->kind);
	}
}

static void batch(struct raw *r, const struct jpb_rec_decoded_events *d)
{
	struct jpb_cur c = jpb_cur_init(d->events.ptr, d->events.len);
	uint64_t prev = d->first_tsc;
	for (uint32_t k = 0; k < d->count; k++) {
		if (jpb_decoded_event_get(&c, &r->ev, &prev)) {
			fprintf(r->f, "# damaged batch: %u of %u events\n", k,
				d->count);
			return;
		}
		print_event(r, d->seq + k, &r->ev);
	}
}

static int one_stream(struct raw *r, const char *name, uint32_t tid)
{
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_DECODED_EVENTS);
	struct jpb_reader *rd;
	struct jpb_record rec;
	int err = jpb_reader_open(r->b, name, &rd);
	if (err)
		return err;
	fprintf(r->f, tid ? "thread %u\n" : "unattributed (decoded/tid0)\n", tid);
	fprintf(r->f, "%10s %20s kind\n", "seq", "tsc");
	while (jpb_reader_next(rd, &rec) == 0) {
		struct jpb_rec_decoded_events d;
		if (rec.type == JPB_REC_DECODED_EVENTS &&
		    !jpb_rec_decode(t, rec.payload, rec.size, &d))
			batch(r, &d);
		if (r->o->progress)
			r->o->progress(r->o->progress_arg, r->done + rec.offset,
				       r->total);
	}
	if (jpb_reader_bad_offset(rd) >= 0)
		fprintf(stderr, "jpbpf: warning: %s\n", jpb_reader_errmsg(rd));
	r->done += jpb_reader_file_size(rd);
	jpb_reader_free(rd);
	return 0;
}

/* decoded/tidN streams wanted by O, with their tids; *N of them. */
static int pick(struct raw *r, char ***out, uint32_t **tids, size_t *n)
{
	const char *const *names;
	size_t count;
	int err = jpb_bundle_list_streams(r->b, &names, &count);
	if (err)
		return err;
	*out = calloc(count + 1, sizeof(**out));
	*tids = calloc(count + 1, sizeof(**tids));
	*n = 0;
	if (!*out || !*tids)
		return jpb_err_nomem;
	for (size_t i = 0; i < count; i++) {
		char *end;
		if (strncmp(names[i], "decoded/tid", 11))
			continue;
		unsigned long tid = strtoul(names[i] + 11, &end, 10);
		if (*end || (r->o->tid && tid != r->o->tid))
			continue;
		struct jpb_reader *rd;
		if (!jpb_reader_open(r->b, names[i], &rd)) {
			r->total += jpb_reader_file_size(rd);
			jpb_reader_free(rd);
		}
		(*tids)[*n] = (uint32_t)tid;
		if (!((*out)[(*n)++] = strdup(names[i])))
			return jpb_err_nomem;
	}
	return 0;
}

int xraw_export(struct jpb_bundle *b, FILE *out, const struct xraw_opts *o,
		char *errmsg, size_t size)
{
	struct raw r = { .b = b, .f = out, .o = o };
	char **names = NULL;
	uint32_t *tids = NULL;
	size_t n = 0;
	int err = load_names(&r);
	if (!err)
		err = pick(&r, &names, &tids, &n);
	if (!err && n == 0) {
		snprintf(errmsg, size, "%s: no decoded events (run 'jpbpf decode' "
			 "first)", jpb_bundle_dir(b));
		err = jpb_err_not_found;
	} else if (err) {
		snprintf(errmsg, size, "%s: %s", jpb_bundle_dir(b), jpb_errstr(err));
	}
	for (size_t i = 0; !err && i < n; i++)
		if ((err = one_stream(&r, names[i], tids[i])))
			snprintf(errmsg, size, "%s", jpb_bundle_errmsg(b));
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(tids);
	for (size_t i = 0; i < r.n; i++)
		free(r.names[i].name);
	free(r.names);
	return err;
}
