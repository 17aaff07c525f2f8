// SPDX-License-Identifier: MIT
/* The `truth` section of `jpbpf info`: the agent's ground-truth stream. */
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records_truth.h"

struct truth_state {
	int seen;
	uint64_t methods, bytecodes, events, records, lost;
	/* truth_window records: starts with callers, stops by reason */
	uint64_t starts, mid_stack, max_depth, from_trigger;
	uint64_t stops[JPB_TRUTH_WHY_SESSION + 1];
	uint32_t *threads; /* distinct nstids */
	size_t nthreads, cap;
};

static void *truth_alloc(void)
{
	return calloc(1, sizeof(struct truth_state));
}

static void truth_free(void *p)
{
	struct truth_state *s = p;
	if (s)
		free(s->threads);
	free(s);
}

static void add_thread(struct truth_state *s, uint32_t nstid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i] == nstid)
			return;
	if (s->nthreads == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		uint32_t *p = realloc(s->threads, cap * sizeof(*p));
		if (!p)
			return;
		s->threads = p;
		s->cap = cap;
	}
	s->threads[s->nthreads++] = nstid;
}

static void truth_record(void *p, const char *stream,
			 const struct jpb_record *rec)
{
	struct truth_state *s = p;
	if (strcmp(stream, "truth") != 0)
		return;
	s->seen = 1;
	const struct jpb_rectype *t = jpb_rectype_find(rec->type);
	if (rec->type == JPB_REC_TRUTH_METHOD) {
		s->methods++;
	} else if (rec->type == JPB_REC_TRUTH_EVENTS) {
		struct jpb_rec_truth_events e;
		if (!t || jpb_rec_decode(t, rec->payload, rec->size, &e) != 0)
			return;
		s->records++;
		add_thread(s, e.nstid);
		for (uint32_t off = 0; off + JPB_TRUTH_EVENT_SIZE <= e.events.len;
		     off += JPB_TRUTH_EVENT_SIZE) {
			s->events++;
			if (e.events.ptr[off + 7] == JPB_TRUTH_BYTECODE)
				s->bytecodes++;
		}
	} else if (rec->type == JPB_REC_TRUTH_WINDOW) {
		struct jpb_rec_truth_window w;
		if (!t || jpb_rec_decode(t, rec->payload, rec->size, &w) != 0)
			return;
		if (w.kind == JPB_TRUTH_WINDOW_START) {
			s->starts++;
			s->mid_stack += w.depth > 0;
			s->from_trigger += w.reason == JPB_TRUTH_WHY_TRIGGER;
			if (w.depth > s->max_depth)
				s->max_depth = w.depth;
		} else if (w.kind == JPB_TRUTH_WINDOW_STOP &&
			   w.reason <= JPB_TRUTH_WHY_SESSION) {
			s->stops[w.reason]++;
		}
	} else if (rec->type == JPB_REC_LOSS) {
		struct jpb_rec_loss l;
		if (t && jpb_rec_decode(t, rec->payload, rec->size, &l) == 0)
			s->lost += l.count;
	}
}

#define SETI(o, k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))

static json_t *truth_finish(void *p, json_t *meta)
{
	(void)meta;
	struct truth_state *s = p;
	if (!s->seen)
		return NULL;
	json_t *o = json_object();
	SETI(o, "threads", s->nthreads);
	SETI(o, "bytecodes", s->bytecodes);
	SETI(o, "events", s->events);
	SETI(o, "methods", s->methods);
	SETI(o, "records", s->records);
	SETI(o, "lost", s->lost);
	if (s->starts) {
		/* Where the threads' sequences start and stop (truth_window). */
		json_t *w = json_object();
		json_object_set_new(w, "start", json_string(s->from_trigger ? "trigger"
									     : "vminit"));
		SETI(w, "threads_mid_stack", s->mid_stack);
		SETI(w, "max_depth", s->max_depth);
		SETI(w, "stopped_by_limit", s->stops[JPB_TRUTH_WHY_LIMIT]);
		SETI(w, "thread_ends", s->stops[JPB_TRUTH_WHY_THREAD_END]);
		SETI(w, "session_ends", s->stops[JPB_TRUTH_WHY_SESSION]);
		json_object_set_new(o, "window", w);
	}
	return o;
}

const struct info_section info_section_truth = {
	"truth", truth_alloc, truth_record, truth_finish, truth_free,
};
