// SPDX-License-Identifier: MIT
/* Schemas of the "flow" record types; see records.h for how to add one. */
#include "records_flow.h"

#include <stddef.h>
#include <stdlib.h>

#include "bundle.h"
#include "bundle_int.h"
#include "codec.h"

static const struct jpb_field method_fields[] = {
	JPB_FIELD(struct jpb_rec_flow_method, index, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_method, reserved, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_method, method_id, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_method, class_sig, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_flow_method, name, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_flow_method, signature, JPB_F_STR),
};

static const struct jpb_field events_fields[] = {
	JPB_FIELD(struct jpb_rec_flow_events, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_events, reserved, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_events, seq, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_events, events, JPB_F_BYTES),
};

static const struct jpb_field thread_fields[] = {
	JPB_FIELD(struct jpb_rec_flow_thread, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_thread, reserved, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_thread, events, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_thread, decoded, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_thread, certain, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_thread, chosen, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_thread, recovered, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_thread, unknown, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_thread, gaps, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_thread, resyncs, JPB_F_U64),
};

static const struct jpb_rectype flow_types[] = {
	{ JPB_REC_FLOW_METHOD, "flow_method", "flow/methods",
	  sizeof(struct jpb_rec_flow_method), method_fields,
	  JPB_NFIELDS(method_fields) },
	{ JPB_REC_FLOW_EVENTS, "flow_events", "flow/tid",
	  sizeof(struct jpb_rec_flow_events), events_fields,
	  JPB_NFIELDS(events_fields) },
	{ JPB_REC_FLOW_THREAD, "flow_thread", "flow/summary",
	  sizeof(struct jpb_rec_flow_thread), thread_fields,
	  JPB_NFIELDS(thread_fields) },
};

void jpb_rectypes_flow(const struct jpb_rectype **types, size_t *count)
{
	*types = flow_types;
	*count = JPB_NFIELDS(flow_types);
}

const char *jpb_flow_status_name(unsigned status)
{
	static const char *const names[] = { "none", "decoded", "certain",
					     "chosen", "recovered", "unknown" };
	return status < sizeof(names) / sizeof(names[0]) ? names[status] : "bad";
}

int jpb_flow_events_each(const struct jpb_record *rec,
			 int (*fn)(void *arg, const struct jpb_flow_event *e),
			 void *arg)
{
	struct jpb_rec_flow_events ev;
	if (rec->type != JPB_REC_FLOW_EVENTS ||
	    jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload, rec->size,
			   &ev) != 0)
		return 0;
	int rc = 0;
	for (uint32_t i = 0; !rc && i + JPB_FLOW_EVENT_SIZE <= ev.events.len;
	     i += JPB_FLOW_EVENT_SIZE) {
		struct jpb_flow_event e;
		jpb_flow_event_get(ev.events.ptr + i, &e);
		rc = fn(arg, &e);
	}
	return rc;
}

/* The in-memory event is its packed form on a little-endian host. */
_Static_assert(sizeof(struct jpb_flow_event) == JPB_FLOW_EVENT_SIZE &&
		       offsetof(struct jpb_flow_event, bci) == 4 &&
		       offsetof(struct jpb_flow_event, opcode) == 8 &&
		       offsetof(struct jpb_flow_event, status) == 9 &&
		       offsetof(struct jpb_flow_event, ncand) == 10 &&
		       offsetof(struct jpb_flow_event, reserved) == 12 &&
		       offsetof(struct jpb_flow_event, tsc) == 16,
	       "struct jpb_flow_event is not its packed layout");

int jpb_flow_events_write(struct jpb_writer *w, uint32_t tid, uint64_t seq,
			  const struct jpb_flow_event *v, size_t n,
			  struct jpb_buf *scratch)
{
	if (n > JPB_MAX_PAYLOAD / JPB_FLOW_EVENT_SIZE)
		return jpb_err_invalid;
	uint8_t *packed = NULL;
	if (!JPB_LE_HOST && n) {
		if (!(packed = malloc(n * JPB_FLOW_EVENT_SIZE)))
			return jpb_err_nomem;
		for (size_t i = 0; i < n; i++)
			jpb_flow_event_put(packed + i * JPB_FLOW_EVENT_SIZE, &v[i]);
	}
	/* The fields but the events, encoded with an empty events field
	 * (the last, a u32 length then the bytes) whose length is then set:
	 * the events go to the writer from V, not copied in behind them. */
	struct jpb_rec_flow_events r = { tid, 0, seq, { (const uint8_t *)"", 0 } };
	uint32_t len = (uint32_t)(n * JPB_FLOW_EVENT_SIZE);
	jpb_buf_reset(scratch);
	int err = jpb_rec_encode(jpb_rectype_find(JPB_REC_FLOW_EVENTS), &r, scratch);
	if (!err) {
		jpb_st32(scratch->data + scratch->len - 4, len);
		err = jpb_writer_put2(w, JPB_REC_FLOW_EVENTS, 0, scratch->data,
				      (uint32_t)scratch->len,
				      packed ? packed : (const uint8_t *)v, len);
	}
	free(packed);
	return err;
}
