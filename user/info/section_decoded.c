// SPDX-License-Identifier: MIT
/* The `decoded` section of `jpbpf info`: what `jpbpf decode` wrote, from
 * decoded/summary (per stream and per thread) and the gap records. */
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records_decoded.h"

struct dec_state {
	int seen;
	uint64_t threads, events, interp, compiled, transitions, gaps, errors,
		unattributed, pt_bytes, streams;
	uint64_t by_cause[8];
};

static void *dec_alloc(void)
{
	return calloc(1, sizeof(struct dec_state));
}

static void dec_free(void *p)
{
	free(p);
}

static void on_summary(struct dec_state *s, const struct jpb_record *rec,
		       const struct jpb_rectype *t)
{
	if (rec->type == JPB_REC_DECODED_STREAM) {
		struct jpb_rec_decoded_stream r;
		if (jpb_rec_decode(t, rec->payload, rec->size, &r))
			return;
		s->streams++;
		s->pt_bytes += r.pt_bytes;
		s->errors += r.errors;
		s->unattributed += r.unattributed;
	} else if (rec->type == JPB_REC_DECODED_THREAD) {
		struct jpb_rec_decoded_thread r;
		if (jpb_rec_decode(t, rec->payload, rec->size, &r))
			return;
		s->threads += r.tid != 0;
		s->events += r.events;
		s->interp += r.interp;
		s->compiled += r.compiled;
		s->transitions += r.transitions;
	}
}

static void dec_record(void *p, const char *stream, const struct jpb_record *rec)
{
	struct dec_state *s = p;
	if (strncmp(stream, "decoded/", 8) != 0)
		return;
	const struct jpb_rectype *t = jpb_rectype_find(rec->type);
	if (!t)
		return;
	s->seen = 1;
	if (!strcmp(stream, "decoded/summary")) {
		on_summary(s, rec, t);
	} else if (rec->type == JPB_REC_DECODED_GAP) {
		struct jpb_rec_decoded_gap g;
		if (jpb_rec_decode(t, rec->payload, rec->size, &g))
			return;
		s->gaps++;
		if (g.cause < 8)
			s->by_cause[g.cause]++;
	}
}

#define SETI(o, k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))

static json_t *dec_finish(void *p, json_t *meta)
{
	(void)meta;
	struct dec_state *s = p;
	if (!s->seen)
		return NULL;
	json_t *o = json_object(), *c = json_object();
	SETI(o, "threads", s->threads);
	SETI(o, "events", s->events);
	SETI(o, "interp", s->interp);
	SETI(o, "compiled", s->compiled);
	SETI(o, "transitions", s->transitions);
	SETI(o, "gaps", s->gaps);
	for (unsigned k = 1; k < 8; k++)
		if (s->by_cause[k])
			SETI(c, jpb_decoded_gap_name(k), s->by_cause[k]);
	json_object_set_new(o, "gaps_by_cause", c);
	SETI(o, "errors", s->errors);
	SETI(o, "unattributed", s->unattributed);
	SETI(o, "pt_bytes", s->pt_bytes);
	SETI(o, "streams", s->streams);
	return o;
}

const struct info_section info_section_decoded = {
	"decoded", dec_alloc, dec_record, dec_finish, dec_free,
};
