// SPDX-License-Identifier: MIT
/* The `flow` section of `jpbpf info`: the reconstructed flows (flow/summary
 * per thread, flow/methods). */
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records_flow.h"

struct flow_state {
	int seen;
	uint64_t threads, methods, events, decoded, certain, chosen, recovered,
		unknown, gaps, resyncs;
};

static void *flow_info_alloc(void)
{
	return calloc(1, sizeof(struct flow_state));
}

static void flow_info_free(void *p)
{
	free(p);
}

static void flow_info_record(void *p, const char *stream,
			     const struct jpb_record *rec)
{
	struct flow_state *s = p;
	if (strncmp(stream, "flow/", 5) != 0)
		return;
	s->seen = 1;
	if (rec->type == JPB_REC_FLOW_METHOD) {
		s->methods++;
		return;
	}
	struct jpb_rec_flow_thread r;
	if (rec->type != JPB_REC_FLOW_THREAD ||
	    jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload, rec->size, &r))
		return;
	s->threads++;
	s->events += r.events;
	s->decoded += r.decoded;
	s->certain += r.certain;
	s->chosen += r.chosen;
	s->recovered += r.recovered;
	s->unknown += r.unknown;
	s->gaps += r.gaps;
	s->resyncs += r.resyncs;
}

#define SETI(o, k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))

static json_t *flow_info_finish(void *p, json_t *meta)
{
	(void)meta;
	struct flow_state *s = p;
	if (!s->seen)
		return NULL;
	json_t *o = json_object();
	SETI(o, "threads", s->threads);
	SETI(o, "methods", s->methods);
	SETI(o, "events", s->events);
	SETI(o, "decoded", s->decoded);
	SETI(o, "certain", s->certain);
	SETI(o, "chosen", s->chosen);
	SETI(o, "recovered", s->recovered);
	SETI(o, "unknown", s->unknown);
	SETI(o, "gaps", s->gaps);
	SETI(o, "resyncs", s->resyncs);
	return o;
}

const struct info_section info_section_flow = {
	"flow", flow_info_alloc, flow_info_record, flow_info_finish, flow_info_free,
};
