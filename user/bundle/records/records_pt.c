// SPDX-License-Identifier: MIT
/* Schemas of the "pt" record types; see records.h for how to add one. */
#include "records_pt.h"

#define F(st, m, k) JPB_FIELD(struct st, m, k)

static const struct jpb_field ring_fields[] = {
	F(jpb_rec_pt_ring, cpu, JPB_F_U32),
	F(jpb_rec_pt_ring, tid, JPB_F_U32),
	F(jpb_rec_pt_ring, snapshot, JPB_F_U32),
	F(jpb_rec_pt_ring, cap_user_time_zero, JPB_F_U32),
	F(jpb_rec_pt_ring, aux_size, JPB_F_U64),
	F(jpb_rec_pt_ring, data_size, JPB_F_U64),
	F(jpb_rec_pt_ring, time_zero, JPB_F_U64),
	F(jpb_rec_pt_ring, time_mult, JPB_F_U32),
	F(jpb_rec_pt_ring, time_shift, JPB_F_U32),
	F(jpb_rec_pt_ring, config, JPB_F_U64),
};

static const struct jpb_field aux_data_fields[] = {
	F(jpb_rec_pt_aux_data, cpu, JPB_F_U32),
	F(jpb_rec_pt_aux_data, tid, JPB_F_U32),
	F(jpb_rec_pt_aux_data, offset, JPB_F_U64),
	F(jpb_rec_pt_aux_data, flags, JPB_F_U32),
	F(jpb_rec_pt_aux_data, snapshot, JPB_F_U32),
	F(jpb_rec_pt_aux_data, data, JPB_F_BYTES),
};

static const struct jpb_field aux_event_fields[] = {
	F(jpb_rec_pt_aux_event, cpu, JPB_F_U32),
	F(jpb_rec_pt_aux_event, pid, JPB_F_U32),
	F(jpb_rec_pt_aux_event, tid, JPB_F_U32),
	F(jpb_rec_pt_aux_event, reserved, JPB_F_U32),
	F(jpb_rec_pt_aux_event, aux_offset, JPB_F_U64),
	F(jpb_rec_pt_aux_event, aux_size, JPB_F_U64),
	F(jpb_rec_pt_aux_event, flags, JPB_F_U64),
};

static const struct jpb_field itrace_fields[] = {
	F(jpb_rec_pt_itrace_start, cpu, JPB_F_U32),
	F(jpb_rec_pt_itrace_start, pid, JPB_F_U32),
	F(jpb_rec_pt_itrace_start, tid, JPB_F_U32),
};

static const struct jpb_field lost_fields[] = {
	F(jpb_rec_pt_lost, cpu, JPB_F_U32),
	F(jpb_rec_pt_lost, kind, JPB_F_U32),
	F(jpb_rec_pt_lost, id, JPB_F_U64),
	F(jpb_rec_pt_lost, lost, JPB_F_U64),
};

static const struct jpb_field switch_fields[] = {
	F(jpb_rec_pt_switch, cpu, JPB_F_U32),
	F(jpb_rec_pt_switch, pid, JPB_F_U32),
	F(jpb_rec_pt_switch, tid, JPB_F_U32),
	F(jpb_rec_pt_switch, out, JPB_F_U32),
	F(jpb_rec_pt_switch, preempt, JPB_F_U32),
	F(jpb_rec_pt_switch, np_pid, JPB_F_U32),
	F(jpb_rec_pt_switch, np_tid, JPB_F_U32),
};

#define TYPE(num, nm, st, f) \
	{ num, nm, "pt/*", sizeof(struct st), f, JPB_NFIELDS(f) }

static const struct jpb_rectype pt_types[] = {
	TYPE(JPB_REC_PT_RING, "pt_ring", jpb_rec_pt_ring, ring_fields),
	TYPE(JPB_REC_PT_AUX_DATA, "pt_aux_data", jpb_rec_pt_aux_data,
	     aux_data_fields),
	TYPE(JPB_REC_PT_AUX_EVENT, "pt_aux_event", jpb_rec_pt_aux_event,
	     aux_event_fields),
	TYPE(JPB_REC_PT_ITRACE_START, "pt_itrace_start", jpb_rec_pt_itrace_start,
	     itrace_fields),
	TYPE(JPB_REC_PT_LOST, "pt_lost", jpb_rec_pt_lost, lost_fields),
	TYPE(JPB_REC_PT_SWITCH, "pt_switch", jpb_rec_pt_switch, switch_fields),
};

void jpb_rectypes_pt(const struct jpb_rectype **types, size_t *count)
{
	*types = pt_types;
	*count = JPB_NFIELDS(pt_types);
}
