// SPDX-License-Identifier: MIT
/* Schemas of the "decoded" record types and the packed event codec; see
 * records.h for how to add a type. */
#include "records_decoded.h"

#include <string.h>

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

/* Bounds-checked: never reads past the cursor's end. */
static int get_uleb_long(struct jpb_cur *c, uint64_t *v)
{
	uint64_t r = 0;
	const uint8_t *p = c->p + c->pos;
	size_t left = c->len - c->pos;
	if (left > 10)
		left = 10;
	for (size_t i = 0; i < left; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			c->pos += i + 1;
			*v = r;
			return 0;
		}
	}
	return jpb_err_corrupt;
}

/* The bytes of the LEB128 that starts the little-endian word X (the
 * first without its top bit ends it), or 0 when it goes on past X. */
static inline unsigned uleb_len8(uint64_t x)
{
	uint64_t stop = ~x & 0x8080808080808080ull;
	return stop ? ((unsigned)__builtin_ctzll(stop) >> 3) + 1 : 0;
}

/* Seven LEB128 groups of X's low bytes (up to and including byte N-1,
 * N <= 8) side by side: what the byte-wise loop computes. */
static inline uint64_t uleb_pack8(uint64_t x, unsigned n)
{
	if (n < 8)
		x &= (1ull << (8 * n)) - 1;
	x &= 0x7f7f7f7f7f7f7f7full;
	x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
	x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
	return (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
}

/* Most fields (time deltas, frame counts, bcis) fit in one or two bytes:
 * those cases are inlined; method ids (pointers: 6-7 bytes) take one
 * 8-byte load on a little-endian host; the rest takes the loop. */
static inline int get_uleb(struct jpb_cur *c, uint64_t *v)
{
	const uint8_t *p = c->p + c->pos;
	size_t left = c->len - c->pos;
	if (left && p[0] < 0x80) {
		*v = p[0];
		c->pos++;
		return 0;
	}
	if (left >= 2 && p[1] < 0x80) {
		*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		c->pos += 2;
		return 0;
	}
	if (JPB_LE_HOST && left >= 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		unsigned n = uleb_len8(x);
		if (n) {
			*v = uleb_pack8(x, n);
			c->pos += n;
			return 0;
		}
	}
	return get_uleb_long(c, v);
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Largest encoding: kind, time, 2 LEBs, nframes x (LEB, LEB). */
#define MAX_EVENT_BYTES (1 + 10 + 1 + 10 + 10 + 10 + JPB_DECODED_MAX_FRAMES * 20)

/* What follows the kind and the time delta. */
static size_t put_tail(uint8_t *tmp, const struct jpb_decoded_event *e)
{
	size_t n = 0;
	switch (e->kind) {
	case JPB_DEV_INTERP:
		tmp[n++] = e->opcode;
		tmp[n++] = e->tos;
		break;
	case JPB_DEV_COMPILED: {
		uint32_t nf = e->nframes < JPB_DECODED_MAX_FRAMES ? e->nframes
								  : JPB_DECODED_MAX_FRAMES;
		n += jpb_put_uleb(tmp + n, e->ip);
		n += jpb_put_uleb(tmp + n, nf);
		for (uint32_t i = 0; i < nf; i++) {
			n += jpb_put_uleb(tmp + n, e->frames[i].method_id);
			n += jpb_put_uleb(tmp + n, zigzag(e->frames[i].bci));
		}
		break;
	}
	case JPB_DEV_TRANSITION:
		tmp[n++] = e->what;
		n += jpb_put_uleb(tmp + n, e->ip);
		n += jpb_put_uleb(tmp + n, e->arg);
		if (e->what == JPB_TR_METHOD_ENTRY)
			n += jpb_put_uleb(tmp + n, e->entry_locals);
		break;
	case JPB_DEV_GAP:
		tmp[n++] = e->what;
		n += jpb_put_uleb(tmp + n, e->end_tsc - e->tsc);
		n += jpb_put_uleb(tmp + n, e->ip);
		n += jpb_put_uleb(tmp + n, e->arg);
		break;
	}
	return n;
}

int jpb_decoded_event_tail(struct jpb_buf *b, const struct jpb_decoded_event *e)
{
	uint8_t tmp[MAX_EVENT_BYTES];
	if (e->kind < JPB_DEV_INTERP || e->kind > JPB_DEV_GAP)
		return jpb_err_invalid;
	return jpb_buf_put(b, tmp, put_tail(tmp, e));
}

int jpb_decoded_event_put(struct jpb_buf *b, const struct jpb_decoded_event *e,
			  uint64_t *prev_tsc)
{
	uint8_t tmp[MAX_EVENT_BYTES];
	if (e->kind < JPB_DEV_INTERP || e->kind > JPB_DEV_GAP)
		return jpb_err_invalid;
	return jpb_decoded_event_put_tail(b, e->kind, e->tsc, prev_tsc, tmp,
					  put_tail(tmp, e));
}

/* Past a LEB128 whose value is not needed: what get_uleb accepts, without
 * assembling the value (the 7-bit groups of an ip take a dozen ops). */
static inline int skip_uleb(struct jpb_cur *c)
{
	const uint8_t *p = c->p + c->pos;
	if (JPB_LE_HOST && c->len - c->pos >= 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		unsigned n = uleb_len8(x);
		if (n) {
			c->pos += n;
			return 0;
		}
	}
	uint64_t v;
	return get_uleb(c, &v);
}

/* An ip: decoded when WANT, else skipped and left 0. */
static inline int get_ip(struct jpb_cur *c, uint64_t *ip, int want)
{
	*ip = 0;
	return want ? get_uleb(c, ip) : skip_uleb(c);
}

/* Always inline: two entry points share it, each called per event. */
static inline __attribute__((always_inline)) int
event_next(struct jpb_cur *c, struct jpb_decoded_head *h,
	   struct jpb_decoded_frame *frames, uint64_t *prev_tsc, int want_ip)
{
	uint64_t v, n;
	if (!jpb_cur_left(c))
		return jpb_err_eos;
	h->kind = c->p[c->pos++];
	if (get_uleb(c, &v))
		return jpb_err_corrupt;
	h->tsc = *prev_tsc + (uint64_t)unzigzag(v);
	*prev_tsc = h->tsc;
	h->nframes = 0;
	switch (h->kind) {
	case JPB_DEV_INTERP:
		if (jpb_cur_left(c) < 2)
			return jpb_err_corrupt;
		h->opcode = c->p[c->pos];
		h->tos = c->p[c->pos + 1];
		c->pos += 2;
		return 0;
	case JPB_DEV_COMPILED:
		if (get_ip(c, &h->ip, want_ip) || get_uleb(c, &n) ||
		    n > JPB_DECODED_MAX_FRAMES)
			return jpb_err_corrupt;
		h->nframes = (uint32_t)n;
		for (uint32_t i = 0; i < h->nframes; i++) {
			if (get_uleb(c, &frames[i].method_id) || get_uleb(c, &v))
				return jpb_err_corrupt;
			frames[i].bci = (int32_t)unzigzag(v);
		}
		return 0;
	case JPB_DEV_TRANSITION:
		if (jpb_cur_u8(c, &h->what) || get_ip(c, &h->ip, want_ip) ||
		    get_uleb(c, &h->arg))
			return jpb_err_corrupt;
		h->entry_locals = 0;
		if (h->what == JPB_TR_METHOD_ENTRY) {
			if (get_uleb(c, &v) || v > UINT32_MAX)
				return jpb_err_corrupt;
			h->entry_locals = (uint32_t)v;
		}
		return 0;
	case JPB_DEV_GAP:
		if (jpb_cur_u8(c, &h->what) || get_uleb(c, &v) ||
		    get_ip(c, &h->ip, want_ip) || get_uleb(c, &h->arg))
			return jpb_err_corrupt;
		h->end_tsc = h->tsc + v;
		return 0;
	}
	return jpb_err_corrupt;
}

int jpb_decoded_event_next(struct jpb_cur *c, struct jpb_decoded_head *h,
			   struct jpb_decoded_frame *frames, uint64_t *prev_tsc)
{
	/* a local cursor: a frame's uint64_t may alias the caller's size_t
	 * pos, which would then go to memory after every store */
	struct jpb_cur l = *c;
	int err = event_next(&l, h, frames, prev_tsc, 1);
	c->pos = l.pos;
	return err;
}

int jpb_decoded_event_next_noip(struct jpb_cur *c, struct jpb_decoded_head *h,
				struct jpb_decoded_frame *frames, uint64_t *prev_tsc)
{
	struct jpb_cur l = *c;
	int err = event_next(&l, h, frames, prev_tsc, 0);
	c->pos = l.pos;
	return err;
}

/* ---- the flow's reader: events far from their record's end --------- */

/* Bytes left before an event for which none of its fields (kind, time,
 * what, ip, arg, locals; a compiled event's frames are checked apart)
 * can run past the end: its LEB128s need no bounds checks. */
#define FAST_SLACK 48
/* A frame's two LEB128s at most. */
#define FAST_FRAME 20

/* get_uleb with 10 bytes or more left at P: the end of the LEB128, or
 * NULL where get_uleb fails. */
static inline const uint8_t *uleb_at(const uint8_t *p, uint64_t *v)
{
	if (p[0] < 0x80) {
		*v = p[0];
		return p + 1;
	}
	if (p[1] < 0x80) {
		*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	struct jpb_cur c = { p, 10, 0 };
	return get_uleb(&c, v) ? NULL : p + c.pos;
}

/* skip_uleb with 10 bytes or more left at P. */
static inline const uint8_t *skip_at(const uint8_t *p)
{
	uint64_t x, v;
	memcpy(&x, p, 8);
	unsigned n = JPB_LE_HOST ? uleb_len8(x) : 0;
	return n ? p + n : uleb_at(p, &v);
}

/* A compiled event's frames (ip skipped) from P, END - P >= FAST_SLACK;
 * their count to *NF.  Always inline: the call cost a third of it. */
static inline __attribute__((always_inline)) const uint8_t *
frames_fast(const uint8_t *p, const uint8_t *end, struct jpb_decoded_frame *frames,
	    uint32_t *nf)
{
	uint64_t n, v;
	if (!(p = skip_at(p)) || !(p = uleb_at(p, &n)) || n > JPB_DECODED_MAX_FRAMES ||
	    (size_t)(end - p) < n * FAST_FRAME)
		return NULL;
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		if (!(p = uleb_at(p, &frames[i].method_id)) || !(p = uleb_at(p, &v)))
			return NULL;
		frames[i].bci = (int32_t)unzigzag(v);
	}
	*nf = (uint32_t)n;
	return p;
}

/* event_next (no ip) of an event with FAST_SLACK bytes left at P, in
 * fewer instructions: pointers, not a cursor's position, no bounds check
 * per field, and the slim event written as it is parsed (fr set by the
 * caller).  The end of the event's bytes, or NULL for what event_next
 * would reject and for the rare gaps: the caller then runs event_next on
 * it, which does all again. */
static inline const uint8_t *slim_fast(const uint8_t *p, const uint8_t *end,
				       struct jpb_decoded_slim *e,
				       struct jpb_decoded_frame *frames, uint64_t prev)
{
	uint64_t v;
	uint32_t nf;
	uint8_t kind = p[0];
	if (!(p = uleb_at(p + 1, &v)))
		return NULL;
	e->kind = kind;
	e->opcode = e->what = e->nframes = 0;
	e->locals = 0;
	e->arg = 0;
	e->tsc = prev + (uint64_t)unzigzag(v);
	switch (kind) {
	case JPB_DEV_INTERP:
		e->opcode = p[0];
		return p + 2;
	case JPB_DEV_COMPILED:
		if (!(p = frames_fast(p, end, frames, &nf)))
			return NULL;
		e->nframes = (uint8_t)nf;
		return p;
	case JPB_DEV_TRANSITION:
		e->what = p[0];
		if (!(p = skip_at(p + 1)) || !(p = uleb_at(p, &e->arg)))
			return NULL;
		if (e->what == JPB_TR_METHOD_ENTRY) {
			if (!(p = uleb_at(p, &v)) || v > UINT32_MAX)
				return NULL;
			e->locals = (uint32_t)v;
		}
		return p;
	}
	return NULL;
}

/* A head as event_next left it, slim. */
static void slim_of(struct jpb_decoded_slim *e, const struct jpb_decoded_head *h)
{
	e->kind = h->kind;
	e->opcode = h->kind == JPB_DEV_INTERP ? h->opcode : 0;
	e->what = h->kind == JPB_DEV_TRANSITION || h->kind == JPB_DEV_GAP ? h->what : 0;
	e->nframes = (uint8_t)h->nframes;
	e->locals = h->kind == JPB_DEV_TRANSITION ? h->entry_locals : 0;
	e->tsc = h->tsc;
	e->arg = h->kind == JPB_DEV_GAP	       ? h->end_tsc :
		 h->kind == JPB_DEV_TRANSITION ? h->arg :
						 0;
}

size_t jpb_decoded_events_slim(struct jpb_cur *c, struct jpb_decoded_slim *e,
			       size_t n, struct jpb_decoded_frame *frames,
			       uint32_t fr0, size_t room, uint64_t *prev_tsc,
			       int *err)
{
	struct jpb_cur l = *c;
	const uint8_t *p = l.p + l.pos, *end = l.p + l.len;
	uint64_t prev = *prev_tsc;
	size_t k = 0, used = 0;
	*err = 0;
	while (k < n && room - used >= JPB_DECODED_MAX_FRAMES) {
		const uint8_t *q = end - p >= FAST_SLACK ?
					   slim_fast(p, end, &e[k], frames + used, prev) :
					   NULL;
		if (q) {
			p = q;
			prev = e[k].tsc;
		} else {
			struct jpb_decoded_head h;
			l.pos = (size_t)(p - l.p);
			*err = event_next(&l, &h, frames + used, &prev, 0);
			p = l.p + l.pos;
			if (*err)
				break;
			slim_of(&e[k], &h);
		}
		e[k].fr = fr0 + (uint32_t)used;
		used += e[k++].nframes;
	}
	c->pos = (size_t)(p - l.p);
	*prev_tsc = prev;
	return k;
}

int jpb_decoded_event_get(struct jpb_cur *c, struct jpb_decoded_event *e,
			  uint64_t *prev_tsc)
{
	struct jpb_decoded_head h;
	int err = jpb_decoded_event_next(c, &h, e->frames, prev_tsc);
	if (err)
		return err;
	e->kind = h.kind;
	e->tsc = h.tsc;
	e->nframes = h.nframes;
	if (h.kind == JPB_DEV_INTERP) {
		e->opcode = h.opcode;
		e->tos = h.tos;
	} else if (h.kind == JPB_DEV_COMPILED) {
		e->ip = h.ip;
	} else if (h.kind == JPB_DEV_TRANSITION) {
		e->what = h.what;
		e->ip = h.ip;
		e->arg = h.arg;
		e->entry_locals = h.entry_locals;
	} else if (h.kind == JPB_DEV_GAP) {
		e->what = h.what;
		e->ip = h.ip;
		e->arg = h.arg;
		e->end_tsc = h.end_tsc;
	}
	return err;
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
