// SPDX-License-Identifier: MIT
/* Schemas of the "flow" record types; see records.h for how to add one. */
#include "records_flow.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const struct jpb_field packed_fields[] = {
	JPB_FIELD(struct jpb_rec_flow_events_packed, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_events_packed, reserved, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_events_packed, seq, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_flow_events_packed, count, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_flow_events_packed, events, JPB_F_BYTES),
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
	{ JPB_REC_FLOW_EVENTS_PACKED, "flow_events_packed", "flow/tid",
	  sizeof(struct jpb_rec_flow_events_packed), packed_fields,
	  JPB_NFIELDS(packed_fields) },
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

/* The in-memory event is its packed form on a little-endian host. */
_Static_assert(sizeof(struct jpb_flow_event) == JPB_FLOW_EVENT_SIZE &&
		       offsetof(struct jpb_flow_event, bci) == 4 &&
		       offsetof(struct jpb_flow_event, opcode) == 8 &&
		       offsetof(struct jpb_flow_event, status) == 9 &&
		       offsetof(struct jpb_flow_event, ncand) == 10 &&
		       offsetof(struct jpb_flow_event, reserved) == 12 &&
		       offsetof(struct jpb_flow_event, tsc) == 16,
	       "struct jpb_flow_event is not its packed layout");

/* ---- flow_events_packed: see docs/FORMAT.md, 0x0604 ---------------- */

enum {
	PK_STATUS = 0x07, /* status, or PK_STATUS_ESC: a status byte follows */
	PK_METHOD = 0x08, /* method differs from the previous event's */
	PK_NCAND = 0x10,  /* ncand is not 1 */
	PK_TSC = 0x20,    /* tsc differs from the previous event's */
	PK_RESERVED = 0x40,
	PK_UNUSED = 0x80, /* never set: a reader rejects it */
	PK_STATUS_ESC = 7,
	/* flags, status, opcode, bci, method, ncand, tsc, reserved */
	PK_MAX_EVENT = 1 + 1 + 1 + 5 + 5 + 3 + 10 + 5,
};

static inline uint32_t zigzag32(int32_t d)
{
	return ((uint32_t)d << 1) ^ (uint32_t)(d >> 31);
}

/* Any event: the flags, then what they say follows. */
static size_t pack_any(uint8_t *p, const struct jpb_flow_event *e,
		       const struct jpb_flow_event *prev, int32_t db)
{
	uint8_t flags = e->status < PK_STATUS_ESC ? e->status : PK_STATUS_ESC;
	flags |= e->method != prev->method ? PK_METHOD : 0;
	flags |= e->ncand != 1 ? PK_NCAND : 0;
	flags |= e->tsc != prev->tsc ? PK_TSC : 0;
	flags |= e->reserved ? PK_RESERVED : 0;
	size_t n = 0;
	p[n++] = flags;
	if ((flags & PK_STATUS) == PK_STATUS_ESC)
		p[n++] = e->status;
	p[n++] = e->opcode;
	n += jpb_put_uleb(p + n, zigzag32(db));
	if (flags & PK_METHOD)
		n += jpb_put_uleb(p + n, e->method);
	if (flags & PK_NCAND)
		n += jpb_put_uleb(p + n, e->ncand);
	if (flags & PK_TSC) {
		int64_t dt = (int64_t)(e->tsc - prev->tsc);
		n += jpb_put_uleb(p + n, ((uint64_t)dt << 1) ^ (uint64_t)(dt >> 63));
	}
	if (flags & PK_RESERVED)
		n += jpb_put_uleb(p + n, e->reserved);
	return n;
}

/* Inline for most events (~80% on SimLoop, 85% on jython): a small
 * step at the same tsc, ncand 1 and reserved 0 (one load of bytes 8-15:
 * opcode, status, ncand, reserved, little-endian), 3 bytes in the same
 * method, 4 or 5 into another (a call or a return: 11% on jython, which
 * took pack_any's ~70 instructions). */
static inline size_t pack_one(uint8_t *p, const struct jpb_flow_event *e,
			      const struct jpb_flow_event *prev)
{
	int32_t db = (int32_t)((uint32_t)e->bci - (uint32_t)prev->bci);
	uint64_t w;
	memcpy(&w, &e->opcode, sizeof(w));
	if (JPB_LE_HOST && (w >> 16) == 1 && e->status < PK_STATUS_ESC &&
	    e->tsc == prev->tsc && zigzag32(db) < 0x80) {
		p[1] = e->opcode;
		p[2] = (uint8_t)zigzag32(db);
		if (e->method == prev->method) {
			p[0] = e->status;
			return 3;
		}
		/* a call or a return: the new method's index follows, in
		 * one or two bytes */
		if (e->method < 0x80) {
			p[0] = (uint8_t)(e->status | PK_METHOD);
			p[3] = (uint8_t)e->method;
			return 4;
		}
		if (e->method < 0x4000) {
			p[0] = (uint8_t)(e->status | PK_METHOD);
			p[3] = (uint8_t)(e->method | 0x80);
			p[4] = (uint8_t)(e->method >> 7);
			return 5;
		}
	}
	return pack_any(p, e, prev, db);
}

int jpb_flow_events_add(struct jpb_buf *buf, const struct jpb_flow_event *prev,
			const struct jpb_flow_event *v, size_t n)
{
	if (n > JPB_MAX_PAYLOAD / PK_MAX_EVENT)
		return jpb_err_invalid;
	int err = jpb_buf_reserve(buf, n * PK_MAX_EVENT);
	if (err)
		return err;
	static const struct jpb_flow_event zero;
	uint8_t *p = buf->data + buf->len;
	if (n)
		p += pack_one(p, v, prev ? prev : &zero);
	for (size_t i = 1; i < n; i++)
		p += pack_one(p, &v[i], &v[i - 1]);
	buf->len = (size_t)(p - buf->data);
	return 0;
}

int jpb_flow_events_pack(struct jpb_buf *buf, const struct jpb_flow_event *v,
			 size_t n)
{
	return jpb_flow_events_add(buf, NULL, v, n);
}

/* The fields before the events: tid, reserved, seq, count, the events'
 * length. */
#define PACKED_HEAD 24u

int jpb_flow_events_begin(struct jpb_buf *scratch, uint32_t tid, uint64_t seq)
{
	/* the fields with an empty events field (the last: a u32 length,
	 * then the bytes); jpb_flow_events_end sets count and length */
	struct jpb_rec_flow_events_packed r = { tid, 0, seq, 0,
						{ (const uint8_t *)"", 0 } };
	jpb_buf_reset(scratch);
	int err = jpb_rec_encode(jpb_rectype_find(JPB_REC_FLOW_EVENTS_PACKED), &r,
				 scratch);
	return err ? err : scratch->len == PACKED_HEAD ? 0 : jpb_err_internal;
}

int jpb_flow_events_end(struct jpb_writer *w, struct jpb_buf *scratch,
			uint32_t count)
{
	if (scratch->len < PACKED_HEAD || scratch->len > JPB_MAX_PAYLOAD)
		return jpb_err_invalid;
	jpb_st32(scratch->data + PACKED_HEAD - 8, count);
	jpb_st32(scratch->data + PACKED_HEAD - 4, (uint32_t)(scratch->len - PACKED_HEAD));
	return jpb_writer_put(w, JPB_REC_FLOW_EVENTS_PACKED, 0, scratch->data,
			      (uint32_t)scratch->len);
}

int jpb_flow_events_write(struct jpb_writer *w, uint32_t tid, uint64_t seq,
			  const struct jpb_flow_event *v, size_t n,
			  struct jpb_buf *scratch)
{
	if (n > UINT32_MAX)
		return jpb_err_invalid;
	int err = jpb_flow_events_begin(scratch, tid, seq);
	if (!err)
		err = jpb_flow_events_add(scratch, NULL, v, n);
	return err ? err : jpb_flow_events_end(w, scratch, (uint32_t)n);
}

/* Where a packed record went wrong: what, at which event. */
struct pk_err {
	const char *what;
	uint32_t at;
};

/* A varint of at most MAXBITS bits at *P (before END), or NULL. */
static inline const uint8_t *get_uvar(const uint8_t *p, const uint8_t *end,
				      unsigned maxbits, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; p < end && shift < maxbits; shift += 7) {
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			/* bits beyond MAXBITS, or an overlong last group */
			if (maxbits - shift < 7 && (b >> (maxbits - shift)))
				return NULL;
			*v = x;
			return p;
		}
	}
	return NULL;
}

/* The event at *P after PREV into E; the end of its bytes, or NULL with
 * *WHY set. */
static const uint8_t *unpack_one(const uint8_t *p, const uint8_t *end,
				 struct jpb_flow_event *e, const char **why)
{
	uint64_t v;
	if (end - p >= 3 && !(p[0] & ~PK_STATUS) && p[0] != PK_STATUS_ESC &&
	    p[2] < 0x80) {
		e->status = p[0];
		e->opcode = p[1];
		e->bci = (int32_t)((uint32_t)e->bci + ((uint32_t)(p[2] >> 1) ^ -(uint32_t)(p[2] & 1)));
		e->ncand = 1;
		e->reserved = 0;
		return p + 3;
	}
	if (end - p < 2 || (*p & PK_UNUSED))
		return *why = end - p < 2 ? "event runs past the end"
					  : "unknown flag bit", NULL;
	uint8_t flags = *p++;
	e->status = flags & PK_STATUS;
	if (e->status == PK_STATUS_ESC)
		e->status = *p++;
	if (p >= end)
		return *why = "opcode runs past the end", NULL;
	e->opcode = *p++;
	if (!(p = get_uvar(p, end, 32, &v)))
		return *why = "bci runs past the end or is too long", NULL;
	e->bci = (int32_t)((uint32_t)e->bci + ((uint32_t)(v >> 1) ^ -(uint32_t)(v & 1)));
	if ((flags & PK_METHOD) && (p = get_uvar(p, end, 32, &v)))
		e->method = (uint32_t)v;
	if (p && (flags & PK_NCAND) && (p = get_uvar(p, end, 16, &v)))
		e->ncand = (uint16_t)v;
	else if (p && !(flags & PK_NCAND))
		e->ncand = 1;
	if (p && (flags & PK_TSC) && (p = get_uvar(p, end, 64, &v)))
		e->tsc += (v >> 1) ^ -(v & 1);
	if (p && (flags & PK_RESERVED) && (p = get_uvar(p, end, 32, &v)))
		e->reserved = (uint32_t)v;
	else if (p && !(flags & PK_RESERVED))
		e->reserved = 0;
	if (!p)
		*why = "method, ncand, tsc or reserved runs past the end or is too long";
	return p;
}

static int each_packed(const struct jpb_record *rec,
		       int (*fn)(void *arg, const struct jpb_flow_event *e),
		       void *arg, struct pk_err *pe)
{
	struct jpb_rec_flow_events_packed r;
	if (jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload, rec->size,
			   &r) != 0)
		return pe->what = "fields run past the end", jpb_err_corrupt;
	const uint8_t *p = r.events.ptr, *end = p + r.events.len;
	struct jpb_flow_event e = { 0 };
	int rc = 0;
	for (pe->at = 0; !rc && pe->at < r.count; pe->at++) {
		if (!(p = unpack_one(p, end, &e, &pe->what)))
			return jpb_err_corrupt;
		rc = fn(arg, &e);
	}
	if (!rc && p != end)
		return pe->what = "bytes after the last event", jpb_err_corrupt;
	return rc;
}

static int each_fixed(const struct jpb_record *rec,
		      int (*fn)(void *arg, const struct jpb_flow_event *e),
		      void *arg, struct pk_err *pe)
{
	struct jpb_rec_flow_events ev;
	if (jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload, rec->size,
			   &ev) != 0)
		return pe->what = "fields run past the end", jpb_err_corrupt;
	if (ev.events.len % JPB_FLOW_EVENT_SIZE)
		return pe->what = "events not a multiple of 24 bytes", jpb_err_corrupt;
	int rc = 0;
	for (uint32_t i = 0; !rc && i < ev.events.len; i += JPB_FLOW_EVENT_SIZE) {
		struct jpb_flow_event e;
		jpb_flow_event_get(ev.events.ptr + i, &e);
		rc = fn(arg, &e);
	}
	return rc;
}

int jpb_flow_events_each_msg(const struct jpb_record *rec,
			     int (*fn)(void *arg, const struct jpb_flow_event *e),
			     void *arg, char *errmsg, size_t size)
{
	struct pk_err pe = { NULL, 0 };
	int rc = rec->type == JPB_REC_FLOW_EVENTS_PACKED ? each_packed(rec, fn, arg, &pe)
		 : rec->type == JPB_REC_FLOW_EVENTS	 ? each_fixed(rec, fn, arg, &pe)
							 : 0;
	if (pe.what && errmsg && size)
		snprintf(errmsg, size, "%s at offset %llu: event %u: %s",
			 jpb_rectype_find(rec->type)->name,
			 (unsigned long long)rec->offset, pe.at, pe.what);
	return rc;
}

int jpb_flow_events_each(const struct jpb_record *rec,
			 int (*fn)(void *arg, const struct jpb_flow_event *e),
			 void *arg)
{
	return jpb_flow_events_each_msg(rec, fn, arg, NULL, 0);
}
