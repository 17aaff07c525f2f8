// SPDX-License-Identifier: MIT
/* `jpbpf info` section "pt": what the PT recorder wrote (pt/ streams). */
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records.h"
#include "records_pt.h"

struct pt_state {
	uint64_t streams, bytes, data_records, aux_records, truncated, partial,
		collision, lost, lost_records, itrace_starts, switches,
		snapshot_chunks, losses, aux_holes;
	uint32_t snapshots; /* highest snapshot number seen */
	int seen;
	char last_stream[64];
	int have_next;
	uint64_t next_offset; /* full trace: where the next chunk must start */
};

static void *pt_alloc(void)
{
	return calloc(1, sizeof(struct pt_state));
}

static int decode(const struct jpb_record *rec, void *out)
{
	return jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload,
			      rec->size, out);
}

static void on_data(struct pt_state *s, const struct jpb_record *rec)
{
	struct jpb_rec_pt_aux_data d;
	if (decode(rec, &d))
		return;
	s->data_records++;
	s->bytes += d.data.len;
	if (d.flags & JPB_PT_DATA_SNAPSHOT) {
		s->snapshot_chunks++;
		if (d.snapshot > s->snapshots)
			s->snapshots = d.snapshot;
		return;
	}
	/* Full trace chunks of one ring are contiguous; a jump is a hole
	 * the recorder could not fill (it also wrote a loss record). */
	if (s->have_next && d.offset != s->next_offset)
		s->aux_holes++;
	s->have_next = 1;
	s->next_offset = d.offset + d.data.len;
}

static void on_aux(struct pt_state *s, const struct jpb_record *rec)
{
	struct jpb_rec_pt_aux_event e;
	if (decode(rec, &e))
		return;
	s->aux_records++;
	s->truncated += !!(e.flags & 0x1);
	s->partial += !!(e.flags & 0x4);
	s->collision += !!(e.flags & 0x8);
}

static void on_lost(struct pt_state *s, const struct jpb_record *rec)
{
	struct jpb_rec_pt_lost l;
	if (decode(rec, &l))
		return;
	s->lost_records++;
	s->lost += l.lost;
}

static void pt_record(void *state, const char *stream,
		      const struct jpb_record *rec)
{
	struct pt_state *s = state;
	if (strncmp(stream, "pt/", 3))
		return;
	s->seen = 1;
	if (strncmp(s->last_stream, stream, sizeof(s->last_stream) - 1)) {
		/* streams arrive one after another: a new one starts here */
		strncpy(s->last_stream, stream, sizeof(s->last_stream) - 1);
		s->streams++;
		s->have_next = 0;
	}
	switch (rec->type) {
	case JPB_REC_PT_AUX_DATA: on_data(s, rec); break;
	case JPB_REC_PT_AUX_EVENT: on_aux(s, rec); break;
	case JPB_REC_PT_LOST: on_lost(s, rec); break;
	case JPB_REC_PT_ITRACE_START: s->itrace_starts++; break;
	case JPB_REC_PT_SWITCH: s->switches++; break;
	case JPB_REC_LOSS: s->losses++; break;
	}
}

static json_t *pt_finish(void *state, json_t *meta)
{
	struct pt_state *s = state;
	json_t *cfg = json_object_get(json_object_get(meta, "pt"), "config");
	if (!s->seen && !cfg)
		return NULL;
	json_t *o = json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
		"s:I, s:I}",
		"streams", (json_int_t)s->streams, "bytes", (json_int_t)s->bytes,
		"data_records", (json_int_t)s->data_records,
		"aux_records", (json_int_t)s->aux_records,
		"truncated", (json_int_t)s->truncated,
		"partial", (json_int_t)s->partial,
		"collision", (json_int_t)s->collision,
		"lost", (json_int_t)s->lost,
		"lost_records", (json_int_t)s->lost_records,
		"aux_holes", (json_int_t)s->aux_holes,
		"loss_records", (json_int_t)s->losses,
		"itrace_starts", (json_int_t)s->itrace_starts,
		"switches", (json_int_t)s->switches,
		"snapshots", (json_int_t)s->snapshots);
	if (o && cfg) {
		json_t *mode = json_object_get(cfg, "mode");
		if (json_is_string(mode))
			json_object_set(o, "mode", mode);
	}
	return o;
}

static void pt_free(void *state)
{
	free(state);
}

const struct info_section info_section_pt = {
	.name = "pt",
	.alloc = pt_alloc,
	.record = pt_record,
	.finish = pt_finish,
	.free = pt_free,
};
