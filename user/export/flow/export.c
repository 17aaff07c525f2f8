// SPDX-License-Identifier: MIT
/* The flow export's driver: streams in, formatter out (see export.h). */
#include "export/flow/export.h"

#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "export/flow/format.h"
#include "export/model/clock.h"
#include "export/model/methods.h"
#include "export/model/threads.h"
#include "records.h"
#include "records_flow.h"

struct run {
	struct jpb_bundle *b;
	const struct xflow_export_opts *o;
	struct xflow *fmt;
	uint64_t done, total;
};

static uint64_t stream_size(struct jpb_bundle *b, uint32_t tid)
{
	char name[64];
	snprintf(name, sizeof(name), "flow/tid%u", tid);
	return jpb_bundle_stream_size(b, name);
}

static void tick(struct run *r, uint64_t done)
{
	if (r->o->progress)
		r->o->progress(r->o->progress_arg, done, r->total);
}

static int format_one(void *fmt, const struct jpb_flow_event *e)
{
	xflow_event(fmt, e);
	return 0;
}

static int one_thread(struct run *r, const struct xthread *th, char *errmsg,
		      size_t size)
{
	char name[64];
	struct jpb_reader *rd;
	struct jpb_record rec;
	snprintf(name, sizeof(name), "flow/tid%u", th->tid);
	int err = jpb_reader_open(r->b, name, &rd);
	if (err) {
		snprintf(errmsg, size, "%s", jpb_bundle_errmsg(r->b));
		return err;
	}
	err = xflow_begin(r->fmt, th->tid, th->name);
	while (!err && jpb_reader_next(rd, &rec) == 0) {
		char bad[160];
		if (!jpb_rec_is_flow_events(rec.type))
			continue;
		if (jpb_flow_events_each_msg(&rec, format_one, r->fmt, bad,
					     sizeof(bad)) == jpb_err_corrupt)
			fprintf(stderr, "jpbpf: warning: %s: %s\n", name, bad);
		tick(r, r->done + rec.offset);
	}
	if (jpb_reader_bad_offset(rd) >= 0)
		fprintf(stderr, "jpbpf: warning: %s\n", jpb_reader_errmsg(rd));
	r->done += jpb_reader_file_size(rd);
	jpb_reader_free(rd);
	if (!err)
		err = xflow_end(r->fmt);
	if (err)
		snprintf(errmsg, size, "flow: write failed");
	return err;
}

int xflow_export(struct jpb_bundle *b, FILE *out,
		 const struct xflow_export_opts *o, char *errmsg, size_t size)
{
	struct run r = { b, o, NULL, 0, 0 };
	struct xmethods *m = NULL;
	struct xclock *c = NULL;
	struct xthreads *th = NULL;
	struct xflow_opts fo = { o->json, o->full };
	int err = xmethods_load(b, &m, errmsg, size);
	if (!err && (err = xclock_load(b, &c, NULL)))
		snprintf(errmsg, size, "clock: %s", jpb_errstr(err));
	if (!err && (err = xthreads_load(b, &th)))
		snprintf(errmsg, size, "threads: %s", jpb_errstr(err));
	if (!err && (err = xflow_alloc(&r.fmt, out, &fo, m, c)))
		snprintf(errmsg, size, "out of memory");
	for (size_t i = 0; !err && i < xthreads_count(th); i++) {
		const struct xthread *x = xthreads_at(th, i);
		if (x->has_flow && (!o->tid || o->tid == x->tid))
			r.total += stream_size(b, x->tid);
	}
	for (size_t i = 0; !err && i < xthreads_count(th); i++) {
		const struct xthread *x = xthreads_at(th, i);
		if (x->has_flow && (!o->tid || o->tid == x->tid))
			err = one_thread(&r, x, errmsg, size);
	}
	if (!err)
		tick(&r, r.total);
	xflow_free(r.fmt);
	xthreads_free(th);
	xclock_free(c);
	xmethods_free(m);
	return err;
}
