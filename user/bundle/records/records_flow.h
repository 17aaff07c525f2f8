/* SPDX-License-Identifier: MIT */
/* Record types of the "flow" domain (0x06xx): the reconstructed per-thread
 * bytecode-level flow, written by reconstruction and recovery
 * (docs/FORMAT.md, "Stream: flow"; docs/RECONSTRUCTION.md).
 *
 * flow/methods holds one flow_method record per method the flows name;
 * flow/tidN holds thread N's flow_events batches in execution order;
 * flow/summary holds one flow_thread record per thread. */
#ifndef JPBPF_RECORDS_FLOW_H
#define JPBPF_RECORDS_FLOW_H

#include "records.h"

enum {
	JPB_REC_FLOW_METHOD = 0x0601,
	JPB_REC_FLOW_EVENTS = 0x0602,
	JPB_REC_FLOW_THREAD = 0x0603,
	JPB_REC_FLOW_EVENTS_PACKED = 0x0604,
};

/* Whether records of TYPE hold flow events (jpb_flow_events_each reads
 * both forms: 0x0602 from older bundles, 0x0604 written now). */
static inline int jpb_rec_is_flow_events(unsigned type)
{
	return type == JPB_REC_FLOW_EVENTS || type == JPB_REC_FLOW_EVENTS_PACKED;
}

/* A method named by flow events: `index` is dense from 1 within the
 * bundle (0 means "method unknown"). */
struct jpb_rec_flow_method {
	uint32_t index;
	uint32_t reserved;
	uint64_t method_id;       /* the jvm stream's jmethodID, 0 if none */
	struct jpb_str class_sig; /* "Ljava/lang/String;" */
	struct jpb_str name;
	struct jpb_str signature;
};

/* Consecutive flow events of one thread: `events` is a packed array of
 * JPB_FLOW_EVENT_SIZE-byte entries (jpb_flow_event_get).  Read-only now:
 * older bundles hold these. */
struct jpb_rec_flow_events {
	uint32_t tid;
	uint32_t reserved;
	uint64_t seq; /* index of the first event in the thread's flow */
	struct jpb_bytes events;
};

/* The same, delta-coded: `count` events in `events`, each coded
 * relative to the one before it in the record (the first to zeros), so
 * a record decodes on its own (docs/FORMAT.md, 0x0604). */
struct jpb_rec_flow_events_packed {
	uint32_t tid;
	uint32_t reserved;
	uint64_t seq;
	uint32_t count;
	struct jpb_bytes events;
};

enum jpb_flow_status {
	JPB_FLOW_DECODED = 1,   /* a compiled-code event: exact from the pc map */
	JPB_FLOW_CERTAIN = 2,   /* interpreted; the only consistent position */
	JPB_FLOW_CHOSEN = 3,    /* interpreted; one of ncand positions */
	JPB_FLOW_RECOVERED = 4, /* filled into a gap, not observed */
	JPB_FLOW_UNKNOWN = 5,   /* observed opcode, position not found */
};

struct jpb_flow_event {
	uint32_t method; /* flow_method index, 0 when unknown */
	int32_t bci;     /* -1 when unknown */
	uint8_t opcode;  /* the JVMS opcode (fast bytecodes mapped back) */
	uint8_t status;  /* enum jpb_flow_status */
	uint16_t ncand;  /* positions consistent with the trace (1 = certain) */
	uint32_t reserved;
	uint64_t tsc;
};
#define JPB_FLOW_EVENT_SIZE 24u

static inline void jpb_flow_event_get(const uint8_t *p, struct jpb_flow_event *e)
{
	e->method = jpb_le32(p);
	e->bci = (int32_t)jpb_le32(p + 4);
	e->opcode = p[8];
	e->status = p[9];
	e->ncand = jpb_le16(p + 10);
	e->reserved = jpb_le32(p + 12);
	e->tsc = jpb_le64(p + 16);
}

static inline void jpb_flow_event_put(uint8_t *p, const struct jpb_flow_event *e)
{
	jpb_st32(p, e->method);
	jpb_st32(p + 4, (uint32_t)e->bci);
	p[8] = e->opcode;
	p[9] = e->status;
	jpb_st16(p + 10, e->ncand);
	jpb_st32(p + 12, e->reserved);
	jpb_st64(p + 16, e->tsc);
}

/* The N events V delta-coded as a flow_events_packed record's `events`
 * field, appended to BUF. */
struct jpb_buf;
int jpb_flow_events_pack(struct jpb_buf *buf, const struct jpb_flow_event *v,
			 size_t n);

/* A flow_events_packed record built in pieces, as its events come:
 * jpb_flow_events_begin puts the fields before the events in SCRATCH,
 * jpb_flow_events_add appends the N events V (PREV: the record's event
 * before V[0], NULL when V[0] is its first), jpb_flow_events_end writes
 * the record of its COUNT events to W.  The same bytes as
 * jpb_flow_events_write of all the events at once. */
int jpb_flow_events_begin(struct jpb_buf *scratch, uint32_t tid, uint64_t seq);
int jpb_flow_events_add(struct jpb_buf *scratch, const struct jpb_flow_event *prev,
			const struct jpb_flow_event *v, size_t n);
struct jpb_writer;
int jpb_flow_events_end(struct jpb_writer *w, struct jpb_buf *scratch,
			uint32_t count);

/* A flow_events_packed record of the N events V (thread TID, first event
 * SEQ) written to W, as jpb_writer_put_rec would write it with
 * jpb_flow_events_pack's bytes (SCRATCH is reused). */
struct jpb_writer;
int jpb_flow_events_write(struct jpb_writer *w, uint32_t tid, uint64_t seq,
			  const struct jpb_flow_event *v, size_t n,
			  struct jpb_buf *scratch);

/* Per thread (flow/summary): events by status. */
struct jpb_rec_flow_thread {
	uint32_t tid;
	uint32_t reserved;
	uint64_t events;
	uint64_t decoded;
	uint64_t certain;
	uint64_t chosen;
	uint64_t recovered;
	uint64_t unknown;
	uint64_t gaps;    /* gaps in the decoded input */
	uint64_t resyncs; /* times the position was searched afresh */
};

const char *jpb_flow_status_name(unsigned status);

/* Each flow event of record REC (a jpb_record from a flow/tidN reader,
 * either form) to FN, in order, stopping at FN's first nonzero result,
 * which is returned.  A record of another type holds no events: 0.  A
 * damaged one (fields or an event running past its end, a count that
 * disagrees with its bytes) gives jpb_err_corrupt after FN has seen the
 * events before the damage. */
struct jpb_record;
int jpb_flow_events_each(const struct jpb_record *rec,
			 int (*fn)(void *arg, const struct jpb_flow_event *e),
			 void *arg);

/* As jpb_flow_events_each, and on jpb_err_corrupt ERRMSG (SIZE bytes)
 * says where, e.g. "flow_events_packed at offset 4096: event 17 of 4096:
 * tsc runs past the end". */
int jpb_flow_events_each_msg(const struct jpb_record *rec,
			     int (*fn)(void *arg, const struct jpb_flow_event *e),
			     void *arg, char *errmsg, size_t size);

#endif /* JPBPF_RECORDS_FLOW_H */
