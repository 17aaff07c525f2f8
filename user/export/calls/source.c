// SPDX-License-Identifier: MIT
/* Flows of a bundle, streamed through the walker thread by thread. */
#include "export/calls/source.h"

#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "records.h"
#include "records_flow.h"
#include "export/model/clock.h"
#include "export/model/methods.h"
#include "export/model/threads.h"

int calls_src_open(struct calls_src *s, struct jpb_bundle *b, uint32_t tid,
		   char *errmsg, size_t size)
{
	memset(s, 0, sizeof(*s));
	s->b = b;
	s->tid = tid;
	int err = xmethods_load(b, &s->m, errmsg, size);
	if (err)
		return err;
	err = xthreads_load(b, &s->t);
	if (!err)
		err = xclock_load(b, &s->clk, &s->clock_exact);
	if (err) {
		snprintf(errmsg, size, "%s: %s", jpb_bundle_dir(b), jpb_errstr(err));
		calls_src_close(s);
		return err;
	}
	for (size_t i = 0; i < xthreads_count(s->t); i++) {
		const struct xthread *x = xthreads_at(s->t, i);
		s->threads += x->has_flow && (!tid || x->tid == tid);
	}
	if (tid && !s->threads) {
		snprintf(errmsg, size, "thread %u has no flow in %s", tid,
			 jpb_bundle_dir(b));
		calls_src_close(s);
		return jpb_err_not_found;
	}
	return 0;
}

void calls_src_close(struct calls_src *s)
{
	xmethods_free(s->m);
	xthreads_free(s->t);
	xclock_free(s->clk);
	s->m = NULL;
	s->t = NULL;
	s->clk = NULL;
}

/* NAME if known, else the placeholder for METHOD in BUF, between quotes Q
 * (the text and the JSON names agree on the placeholders). */
static const char *or_placeholder(const char *name, uint32_t method,
				  const char *q, char *buf, size_t size)
{
	if (name)
		return name;
	if (method)
		snprintf(buf, size, "%smethod#%u%s", q, method, q);
	else
		snprintf(buf, size, "%s(unknown)%s", q, q);
	return buf;
}

const char *calls_src_name(const struct calls_src *s, uint32_t method,
			   char *buf, size_t size)
{
	const struct xm_method *m = method ? xmethods_get(s->m, method) : NULL;
	return or_placeholder(m ? m->name : NULL, method, "", buf, size);
}

const char *calls_src_json_name(const struct calls_src *s, uint32_t method,
				char *buf, size_t size)
{
	const struct xm_method *m = method ? xmethods_get(s->m, method) : NULL;
	return or_placeholder(m ? m->json_name : NULL, method, "\"", buf, size);
}

uint64_t calls_src_ns(const struct calls_src *s, uint64_t tsc)
{
	return xclock_ns(s->clk, tsc);
}

static int walk_one(void *w, const struct jpb_flow_event *e)
{
	return walk_event(w, e);
}

static int walk_stream(const struct calls_src *s, struct walk *w, uint32_t tid,
		       char *errmsg, size_t size)
{
	char name[32];
	struct jpb_reader *r;
	struct jpb_record rec;
	snprintf(name, sizeof(name), "flow/tid%u", tid);
	int rc = jpb_reader_open(s->b, name, &r);
	if (rc) {
		snprintf(errmsg, size, "%s: %s: %s", jpb_bundle_dir(s->b), name,
			 jpb_errstr(rc));
		return rc;
	}
	while (!rc && (rc = jpb_reader_next(r, &rec)) == 0)
		rc = jpb_flow_events_each(&rec, walk_one, w);
	if (rc == jpb_err_truncated || rc == jpb_err_corrupt) {
		if (s->warn)
			s->warn(jpb_reader_errmsg(r));
		rc = 0;
	} else if (rc == jpb_err_eos) {
		rc = 0;
	}
	jpb_reader_free(r);
	return rc;
}

int calls_src_walk(const struct calls_src *s, const struct calls_walk_ops *ops,
		   void *arg, char *errmsg, size_t size)
{
	int rc = 0;
	errmsg[0] = '\0';
	for (size_t i = 0; !rc && i < xthreads_count(s->t); i++) {
		const struct xthread *x = xthreads_at(s->t, i);
		if (!x->has_flow || (s->tid && x->tid != s->tid))
			continue;
		struct walk *tw;
		rc = walk_alloc(&tw, ops->event, arg);
		if (!rc && ops->begin)
			rc = ops->begin(arg, x->tid);
		if (!rc)
			rc = walk_stream(s, tw, x->tid, errmsg, size);
		if (!rc)
			rc = walk_end(tw);
		if (!rc && ops->end)
			rc = ops->end(arg, x->tid, walk_stats(tw));
		walk_free(tw);
	}
	if (rc && !errmsg[0])
		snprintf(errmsg, size, "%s: %s", jpb_bundle_dir(s->b), jpb_errstr(rc));
	return rc;
}
