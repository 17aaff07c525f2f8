// SPDX-License-Identifier: MIT
/* Schemas of the "truth" record types; see records.h for how to add one. */
#include "records_truth.h"

static const struct jpb_field method_fields[] = {
	JPB_FIELD(struct jpb_rec_truth_method, method_id, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_method, access_flags, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_method, class_sig, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_truth_method, name, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_truth_method, signature, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_truth_method, bytecode, JPB_F_BYTES),
};

static const struct jpb_field events_fields[] = {
	JPB_FIELD(struct jpb_rec_truth_events, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_events, nstid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_events, seq, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_truth_events, events, JPB_F_BYTES),
};

static const struct jpb_rectype truth_types[] = {
	{ JPB_REC_TRUTH_METHOD, "truth_method", "truth",
	  sizeof(struct jpb_rec_truth_method), method_fields,
	  JPB_NFIELDS(method_fields) },
	{ JPB_REC_TRUTH_EVENTS, "truth_events", "truth",
	  sizeof(struct jpb_rec_truth_events), events_fields,
	  JPB_NFIELDS(events_fields) },
};

void jpb_rectypes_truth(const struct jpb_rectype **types, size_t *count)
{
	*types = truth_types;
	*count = JPB_NFIELDS(truth_types);
}
