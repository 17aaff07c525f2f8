// SPDX-License-Identifier: MIT
/* Schemas of the "decoded" record types and the packed event codec; see
 * records.h for how to add a type. */
#include "records_decoded.h"

#include "bundle.h"

static const struct jpb_field events_fields[] = {
	JPB_FIELD(struct jpb_rec_decoded_events, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_events, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_events, seq, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_events, first_tsc, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_events, count, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_events, reserved, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_events, events, JPB_F_BYTES),
};

static const struct jpb_field gap_fields[] = {
	JPB_FIELD(struct jpb_rec_decoded_gap, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_gap, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_gap, first_tsc, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_gap, last_tsc, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_gap, cause, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_gap, error, JPB_F_I32),
	JPB_FIELD(struct jpb_rec_decoded_gap, pt_offset, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_gap, first_ns, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_gap, last_ns, JPB_F_U64),
};

static const struct jpb_field stream_fields[] = {
	JPB_FIELD(struct jpb_rec_decoded_stream, stream, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_decoded_stream, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_stream, reserved, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_stream, pt_bytes, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_stream, events, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_stream, gaps, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_stream, errors, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_stream, unattributed, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_stream, pieces, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_stream, switches, JPB_F_U64),
};

static const struct jpb_field thread_fields[] = {
	JPB_FIELD(struct jpb_rec_decoded_thread, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_thread, pieces, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_decoded_thread, events, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_thread, gaps, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_thread, interp, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_thread, compiled, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_thread, transitions, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_decoded_thread, name, JPB_F_STR),
};

static const struct jpb_rectype decoded_types[] = {
	{ JPB_REC_DECODED_EVENTS, "decoded_events", "decoded/tid",
	  sizeof(struct jpb_rec_decoded_events), events_fields,
	  JPB_NFIELDS(events_fields) },
	{ JPB_REC_DECODED_GAP, "decoded_gap", "decoded/tid",
	  sizeof(struct jpb_rec_decoded_gap), gap_fields,
	  JPB_NFIELDS(gap_fields) },
	{ JPB_REC_DECODED_STREAM, "decoded_stream", "decoded/summary",
	  sizeof(struct jpb_rec_decoded_stream), stream_fields,
	  JPB_NFIELDS(stream_fields) },
	{ JPB_REC_DECODED_THREAD, "decoded_thread", "decoded/summary",
	  sizeof(struct jpb_rec_decoded_thread), thread_fields,
	  JPB_NFIELDS(thread_fields) },
};

void jpb_rectypes_decoded(const struct jpb_rectype **types, size_t *count)
{
	*types = decoded_types;
	*count = JPB_NFIELDS(decoded_types);
}

/* ---- packed events: kind u8, zigzag LEB128 time delta, then per kind -- */

static int put_uleb(struct jpb_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		tmp[n++] = byte | (v ? 0x80 : 0);
	} while (v);
	return jpb_buf_put(b, tmp, n);
}

static int get_uleb(struct jpb_cur *c, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t byte;
		if (jpb_cur_u8(c, &byte))
			return jpb_err_corrupt;
		r |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return jpb_err_corrupt;
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

int jpb_decoded_event_put(struct jpb_buf *b, const struct jpb_decoded_event *e,
			  uint64_t *prev_tsc)
{
	int rc = jpb_buf_u8(b, e->kind);
	rc = rc ? rc : put_uleb(b, zigzag((int64_t)(e->tsc - *prev_tsc)));
	*prev_tsc = e->tsc;
	switch (e->kind) {
	case JPB_DEV_INTERP:
		rc = rc ? rc : jpb_buf_u8(b, e->opcode);
		return rc ? rc : jpb_buf_u8(b, e->tos);
	case JPB_DEV_COMPILED:
		rc = rc ? rc : put_uleb(b, e->ip);
		rc = rc ? rc : put_uleb(b, e->nframes);
		for (uint32_t i = 0; !rc && i < e->nframes; i++) {
			rc = put_uleb(b, e->frames[i].method_id);
			rc = rc ? rc : put_uleb(b, zigzag(e->frames[i].bci));
		}
		return rc;
	case JPB_DEV_TRANSITION:
		rc = rc ? rc : jpb_buf_u8(b, e->what);
		rc = rc ? rc : put_uleb(b, e->ip);
		return rc ? rc : put_uleb(b, e->arg);
	case JPB_DEV_GAP:
		rc = rc ? rc : jpb_buf_u8(b, e->what);
		rc = rc ? rc : put_uleb(b, e->end_tsc - e->tsc);
		rc = rc ? rc : put_uleb(b, e->ip);
		return rc ? rc : put_uleb(b, e->arg);
	}
	return jpb_err_invalid;
}

int jpb_decoded_event_get(struct jpb_cur *c, struct jpb_decoded_event *e,
			  uint64_t *prev_tsc)
{
	uint64_t v, n;
	if (!jpb_cur_left(c))
		return jpb_err_eos;
	if (jpb_cur_u8(c, &e->kind) || get_uleb(c, &v))
		return jpb_err_corrupt;
	e->tsc = *prev_tsc + (uint64_t)unzigzag(v);
	*prev_tsc = e->tsc;
	e->nframes = 0;
	switch (e->kind) {
	case JPB_DEV_INTERP:
		if (jpb_cur_u8(c, &e->opcode) || jpb_cur_u8(c, &e->tos))
			return jpb_err_corrupt;
		return 0;
	case JPB_DEV_COMPILED:
		if (get_uleb(c, &e->ip) || get_uleb(c, &n) ||
		    n > JPB_DECODED_MAX_FRAMES)
			return jpb_err_corrupt;
		e->nframes = (uint32_t)n;
		for (uint32_t i = 0; i < e->nframes; i++) {
			if (get_uleb(c, &e->frames[i].method_id) || get_uleb(c, &v))
				return jpb_err_corrupt;
			e->frames[i].bci = (int32_t)unzigzag(v);
		}
		return 0;
	case JPB_DEV_TRANSITION:
		if (jpb_cur_u8(c, &e->what) || get_uleb(c, &e->ip) ||
		    get_uleb(c, &e->arg))
			return jpb_err_corrupt;
		return 0;
	case JPB_DEV_GAP:
		if (jpb_cur_u8(c, &e->what) || get_uleb(c, &v) ||
		    get_uleb(c, &e->ip) || get_uleb(c, &e->arg))
			return jpb_err_corrupt;
		e->end_tsc = e->tsc + v;
		return 0;
	}
	return jpb_err_corrupt;
}

const char *jpb_decoded_gap_name(unsigned cause)
{
	static const char *const names[] = { "?", "overflow", "decode_error",
					     "aux_hole", "no_sync", "stream_end" };
	return cause < sizeof(names) / sizeof(names[0]) ? names[cause] : "?";
}

const char *jpb_decoded_transition_name(unsigned what)
{
	static const char *const names[] = {
		"?", "method_entry", "interp_stub", "stub", "nmethod_entry",
		"unknown", "disabled", "async_disabled", "enabled" };
	return what < sizeof(names) / sizeof(names[0]) ? names[what] : "?";
}
