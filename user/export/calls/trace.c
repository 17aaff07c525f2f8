// SPDX-License-Identifier: MIT
/* The call trace, written as the walker finds calls and returns. */
#include "export/calls/trace.h"

#include <inttypes.h>

#include "bundle.h"

#include "export/calls/export.h"
#include "export/calls/source.h"
#include "export/calls/walk.h"

struct trace {
	FILE *f;
	const struct calls_src *s;
	int json;
	uint32_t tid;
};

static int begin(void *arg, uint32_t tid)
{
	struct trace *t = arg;
	t->tid = tid;
	if (!t->json)
		fprintf(t->f, "thread %" PRIu32 "\n", tid);
	return 0;
}

/* The time of a walker event: the causing event's, else (a frame open
 * at the end) the frame's last one. */
static uint64_t when(const struct walk_event *we)
{
	if (we->ev)
		return we->ev->tsc;
	return we->frame ? we->frame->tsc_last : 0;
}

/* Inferred from an event recovery filled in, not from an observed one. */
static int recovered(const struct walk_event *we)
{
	return we->ev && we->ev->status == JPB_FLOW_RECOVERED;
}

static void text(struct trace *t, const struct walk_event *we, uint64_t ns,
		 size_t depth)
{
	char b1[64], b2[64];
	fprintf(t->f, "%14.3f %-6s %4zu %*s", (double)ns / 1e3,
		walk_kind_name(we->kind), depth, 2 * (int)(depth ? depth - 1 : 0), "");
	if (we->kind == WALK_BREAK) {
		fprintf(t->f, "-- %s --\n", walk_reason_name(we->reason));
		return;
	}
	const char *m = calls_src_name(t->s, we->frame->method, b1, sizeof(b1));
	if (we->kind == WALK_CALL)
		fprintf(t->f, "> %s  from %s @%" PRId32, m,
			calls_src_name(t->s, we->caller->method, b2, sizeof(b2)),
			we->frame->callsite);
	else if (we->kind == WALK_ROOT)
		fprintf(t->f, "> %s", m);
	else if (we->kind == WALK_DROP)
		fprintf(t->f, "< %s  (%s)", m, walk_reason_name(we->reason));
	else
		fprintf(t->f, "< %s", m);
	fputs(recovered(we) ? "  [recovered]\n" : "\n", t->f);
}

static void json(struct trace *t, const struct walk_event *we, uint64_t ns,
		 size_t depth)
{
	char b1[64], b2[64];
	fprintf(t->f, "{\"tid\":%" PRIu32 ",\"ev\":\"%s\",\"t_ns\":%" PRIu64
		",\"tsc\":%" PRIu64 ",\"depth\":%zu", t->tid,
		walk_kind_name(we->kind), ns, when(we), depth);
	if (we->kind == WALK_BREAK || we->kind == WALK_DROP)
		fprintf(t->f, ",\"reason\":\"%s\"", walk_reason_name(we->reason));
	if (we->frame)
		fprintf(t->f, ",\"method\":%s",
			calls_src_json_name(t->s, we->frame->method, b1, sizeof(b1)));
	if (we->kind == WALK_CALL)
		fprintf(t->f, ",\"caller\":%s,\"callsite\":%" PRId32,
			calls_src_json_name(t->s, we->caller->method, b2, sizeof(b2)),
			we->frame->callsite);
	if (recovered(we))
		fputs(",\"recovered\":true", t->f);
	fputs("}\n", t->f);
}

static int event(void *arg, const struct walk_event *we)
{
	struct trace *t = arg;
	if (we->kind == WALK_BYTECODE || we->kind == WALK_LOST)
		return 0;
	/* depth of the frame concerned: pushed frames are at depth, popped
	 * ones were at depth + 1 */
	size_t depth = we->depth;
	if (we->kind == WALK_RETURN || we->kind == WALK_UNWIND ||
	    we->kind == WALK_DROP)
		depth++;
	uint64_t ns = calls_src_ns(t->s, when(we));
	if (t->json)
		json(t, we, ns, depth);
	else
		text(t, we, ns, depth);
	return ferror(t->f) ? jpb_err_io : 0;
}

static int end(void *arg, uint32_t tid, const struct walk_stats *st)
{
	struct trace *t = arg;
	if (t->json)
		fprintf(t->f, "{\"tid\":%" PRIu32 ",\"ev\":\"end\",\"events\":%" PRIu64
			",\"lost\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"roots\":%" PRIu64
			",\"returns\":%" PRIu64 ",\"unwinds\":%" PRIu64
			",\"drops\":%" PRIu64 ",\"breaks\":%" PRIu64
			",\"native_invokes\":%" PRIu64 ",\"max_depth\":%zu}\n",
			tid, st->events, st->lost, st->calls, st->roots,
			st->returns, st->unwinds, st->drops, st->breaks,
			st->native, st->max_depth);
	else
		fprintf(t->f, "end of thread %" PRIu32 ": %" PRIu64 " events (%" PRIu64
			" unknown), %" PRIu64 " calls, %" PRIu64 " roots, %" PRIu64
			" returns, %" PRIu64 " unwinds, %" PRIu64 " stack breaks\n",
			tid, st->events, st->lost, st->calls, st->roots,
			st->returns, st->unwinds, st->breaks);
	return 0;
}

int trace_export(const struct calls_src *s, const struct calls_opts *o,
		 FILE *f, char *errmsg, size_t size)
{
	static const struct calls_walk_ops ops = { begin, event, end };
	struct trace t = { f, s, o->json, 0 };
	int rc = calls_src_walk(s, &ops, &t, errmsg, size);
	if (rc == jpb_err_io)
		snprintf(errmsg, size, "calls: write failed");
	return rc;
}
