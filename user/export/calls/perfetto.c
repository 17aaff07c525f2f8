// SPDX-License-Identifier: MIT
/* The Chrome Trace Event timeline, written as the walker runs. */
#include "export/calls/perfetto.h"

#include <inttypes.h>
#include <stdlib.h>

#include "bundle.h"
#include "codec.h"
#include "export/calls/export.h"
#include "export/calls/source.h"
#include "export/calls/walk.h"
#include "export/model/threads.h"

struct tl {
	FILE *f;
	const struct calls_src *s;
	uint32_t tid;
	uint32_t *st;     /* methods of the walker's stack, bottom first */
	size_t depth, cap;
	size_t open;      /* frames from the bottom with a B written */
	uint64_t last_ns; /* latest time written on this thread */
	int any;          /* an event written: the next needs a comma */
};

static void sep(struct tl *t)
{
	fputs(t->any ? ",\n" : "\n", t->f);
	t->any = 1;
}

/* Times never go back on a track (viewers require it). */
static uint64_t at(struct tl *t, uint64_t tsc)
{
	uint64_t ns = calls_src_ns(t->s, tsc);
	if (ns > t->last_ns)
		t->last_ns = ns;
	return t->last_ns;
}

static void slice(struct tl *t, char ph, size_t level, uint64_t ns)
{
	char buf[64];
	sep(t);
	fprintf(t->f, "{\"ph\":\"%c\",\"pid\":1,\"tid\":%" PRIu32 ",\"ts\":%" PRIu64
		".%03u,\"name\":%s}", ph, t->tid, ns / 1000, (unsigned)(ns % 1000),
		calls_src_json_name(t->s, t->st[level], buf, sizeof(buf)));
}

static int begin(void *arg, uint32_t tid)
{
	struct tl *t = arg;
	const struct xthread *x = xthreads_find(t->s->t, tid);
	t->tid = tid;
	t->depth = t->open = 0;
	t->last_ns = 0;
	sep(t);
	fprintf(t->f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%" PRIu32
		",\"name\":\"thread_name\",\"args\":{\"name\":\"", tid);
	for (const char *p = x && x->name ? x->name : ""; *p; p++)
		if ((unsigned char)*p >= 0x20 && *p != '"' && *p != '\\')
			fputc(*p, t->f);
	fprintf(t->f, " (tid %" PRIu32 ")\"}}", tid);
	return 0;
}

static void close_to(struct tl *t, size_t level, uint64_t ns)
{
	while (t->open > level)
		slice(t, 'E', --t->open, ns);
}

static int event(void *arg, const struct walk_event *we)
{
	struct tl *t = arg;
	switch (we->kind) {
	case WALK_CALL:
	case WALK_ROOT:
		if (JPB_GROW(t->st, t->depth, t->cap))
			return jpb_err_nomem;
		t->st[t->depth++] = we->frame->method;
		return 0;
	case WALK_BYTECODE: {
		uint64_t ns = at(t, we->ev->tsc);
		while (t->open < t->depth)
			slice(t, 'B', t->open++, ns);
		break;
	}
	case WALK_LOST:
		at(t, we->ev->tsc);
		break;
	case WALK_RETURN:
	case WALK_UNWIND:
		close_to(t, we->depth, we->ev ? at(t, we->ev->tsc) : t->last_ns);
		t->depth = we->depth;
		break;
	case WALK_DROP:
		close_to(t, we->depth, t->last_ns);
		t->depth = we->depth;
		break;
	case WALK_BREAK:
		close_to(t, 0, t->last_ns);
		sep(t);
		fprintf(t->f, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%" PRIu32
			",\"ts\":%" PRIu64 ".%03u,\"name\":\"gap (%s)\"}", t->tid,
			t->last_ns / 1000, (unsigned)(t->last_ns % 1000),
			walk_reason_name(we->reason));
		break;
	}
	return ferror(t->f) ? jpb_err_io : 0;
}

int perfetto_export(const struct calls_src *s, const struct calls_opts *o,
		    FILE *f, char *errmsg, size_t size)
{
	static const struct calls_walk_ops ops = { begin, event, NULL };
	struct tl t = { .f = f, .s = s };
	(void)o;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":\"jpbpf\","
		"\"clock\":\"%s\"},\"traceEvents\":[",
		s->clock_exact ? "ns from the recording start (TSC clock pairs)" :
				 "raw TSC ticks (no clock pairs)");
	int rc = calls_src_walk(s, &ops, &t, errmsg, size);
	fputs("\n]}\n", f);
	free(t.st);
	if (rc == jpb_err_io)
		snprintf(errmsg, size, "perfetto: write failed");
	else if (rc == jpb_err_nomem)
		snprintf(errmsg, size, "perfetto: out of memory");
	return rc;
}
