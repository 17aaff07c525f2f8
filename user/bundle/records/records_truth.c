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

static const struct jpb_field window_fields[] = {
	JPB_FIELD(struct jpb_rec_truth_window, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_window, nstid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_window, kind, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_window, reason, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_window, seq, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_truth_window, depth, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_truth_window, frames, JPB_F_BYTES),
};

static const struct jpb_field sim_lost_fields[] = {
	JPB_FIELD(struct jpb_rec_sim_lost, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sim_lost, nstid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sim_lost, first, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_sim_lost, count, JPB_F_U64),
};

static const struct jpb_rectype truth_types[] = {
	{ JPB_REC_TRUTH_METHOD, "truth_method", "truth",
	  sizeof(struct jpb_rec_truth_method), method_fields,
	  JPB_NFIELDS(method_fields) },
	{ JPB_REC_TRUTH_EVENTS, "truth_events", "truth",
	  sizeof(struct jpb_rec_truth_events), events_fields,
	  JPB_NFIELDS(events_fields) },
	{ JPB_REC_TRUTH_WINDOW, "truth_window", "truth",
	  sizeof(struct jpb_rec_truth_window), window_fields,
	  JPB_NFIELDS(window_fields) },
	/* The payload is a raw array, so the schema has no fields. */
	{ JPB_REC_SIM_ITRUTH, "sim_itruth", "sim/itruth", 0, NULL, 0 },
	{ JPB_REC_SIM_LOST, "sim_lost", "sim/lost",
	  sizeof(struct jpb_rec_sim_lost), sim_lost_fields,
	  JPB_NFIELDS(sim_lost_fields) },
};

void jpb_rectypes_truth(const struct jpb_rectype **types, size_t *count)
{
	*types = truth_types;
	*count = JPB_NFIELDS(truth_types);
}
