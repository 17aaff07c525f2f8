/* SPDX-License-Identifier: MIT */
/*
 * Record types of the "decoded" domain (0x05xx), written by `jpbpf decode`
 * (docs/FORMAT.md, "Stream: decoded"; docs/DECODER.md).
 *
 * Stream decoded/tidN holds thread N's events in execution order as
 * decoded_events batches, with decoded_gap records between them where
 * trace was lost.  decoded/tid0 holds what could not be attributed to a
 * thread.  decoded/summary holds one decoded_stream record per PT stream
 * and one decoded_thread record per thread.
 *
 * Times are TSC ticks (as PT reports them); record headers carry the
 * CLOCK_MONOTONIC equivalent.
 */
#ifndef JPBPF_RECORDS_DECODED_H
#define JPBPF_RECORDS_DECODED_H

#include <string.h>

#include "records.h"

enum {
	JPB_REC_DECODED_EVENTS = 0x0501,
	JPB_REC_DECODED_GAP = 0x0502,
	JPB_REC_DECODED_STREAM = 0x0503,
	JPB_REC_DECODED_THREAD = 0x0504,
};

/* A batch of consecutive events of one thread, packed (see
 * jpb_decoded_event_get).  The first event's time is relative to
 * first_tsc, each other's to its predecessor's. */
struct jpb_rec_decoded_events {
	uint32_t tid;
	uint32_t cpu;        /* CPU the first event ran on */
	uint64_t seq;        /* index of the first event in the thread */
	uint64_t first_tsc;
	uint32_t count;      /* events in the batch */
	uint32_t reserved;
	struct jpb_bytes events;
};

enum jpb_decoded_gap_cause {
	JPB_GAP_OVERFLOW = 1,     /* OVF: the CPU dropped packets */
	JPB_GAP_DECODE_ERROR = 2, /* libipt error; resynced at the next PSB */
	JPB_GAP_AUX_HOLE = 3,     /* AUX data missing or truncated */
	JPB_GAP_NO_SYNC = 4,      /* stream data before the first PSB */
	JPB_GAP_STREAM_END = 5,   /* stream ended inside an error */
};

/* Trace of `tid` lost between first_tsc and last_tsc (bounds as close as
 * the surrounding timing packets allow). */
struct jpb_rec_decoded_gap {
	uint32_t tid;
	uint32_t cpu;
	uint64_t first_tsc;
	uint64_t last_tsc;
	uint32_t cause;     /* enum jpb_decoded_gap_cause */
	int32_t error;      /* -pte_* for DECODE_ERROR, else 0 */
	uint64_t pt_offset; /* offset in the stream's PT bytes where seen */
	uint64_t first_ns;  /* the bounds in CLOCK_MONOTONIC */
	uint64_t last_ns;
};

/* Per PT stream (decoded/summary). */
struct jpb_rec_decoded_stream {
	struct jpb_str stream; /* "pt/cpu0" */
	uint32_t cpu;
	uint32_t reserved;
	uint64_t pt_bytes;
	uint64_t events;
	uint64_t gaps;
	uint64_t errors;       /* decoder errors (each also a gap) */
	uint64_t unattributed; /* events written to decoded/tid0 */
	uint64_t pieces;       /* runs between thread switches */
	uint64_t switches;     /* sched_switch records applied */
};

/* Per thread (decoded/summary). */
struct jpb_rec_decoded_thread {
	uint32_t tid;
	uint32_t pieces;
	uint64_t events;
	uint64_t gaps;
	uint64_t interp;   /* events by kind */
	uint64_t compiled;
	uint64_t transitions;
	struct jpb_str name;
};

/* ---- packed events ------------------------------------------------ */

enum jpb_decoded_kind {
	JPB_DEV_INTERP = 1,     /* an interpreted bytecode: opcode, tos */
	JPB_DEV_COMPILED = 2,   /* a bytecode in compiled code: pc, frames */
	JPB_DEV_TRANSITION = 3, /* entered labelled code: what, ip, arg */
	JPB_DEV_GAP = 4,        /* lost trace: cause, end_tsc, ip = offset */
};

enum jpb_decoded_transition {
	JPB_TR_METHOD_ENTRY = 1, /* interpreter method entry; arg = codelet index,
				  * entry_locals as below */
	JPB_TR_INTERP_STUB = 2,  /* other interpreter code (return entry,
				  * exception/deopt continuation); arg = codelet */
	JPB_TR_STUB = 3,         /* generated stub or adapter; arg = blob index */
	JPB_TR_NMETHOD_ENTRY = 4, /* a compiled method's first instruction */
	JPB_TR_UNKNOWN = 5,      /* code no metadata describes (native) */
	JPB_TR_DISABLED = 6,     /* tracing stopped: branch to untraced code */
	JPB_TR_ASYNC_DISABLED = 7, /* tracing stopped: interrupt, switch */
	JPB_TR_ENABLED = 8,      /* tracing resumed at ip */
};

#define JPB_DECODED_MAX_FRAMES 64

struct jpb_decoded_frame {
	uint64_t method_id; /* the jvm stream's jmethodID */
	int32_t bci;
};

struct jpb_decoded_event {
	uint8_t kind;   /* enum jpb_decoded_kind */
	uint8_t opcode; /* INTERP */
	uint8_t tos;    /* INTERP: the dispatch table's TosState */
	uint8_t what;   /* TRANSITION: enum jpb_decoded_transition; GAP: cause */
	uint32_t nframes; /* COMPILED, innermost first */
	uint64_t tsc;
	uint64_t end_tsc; /* GAP */
	uint64_t ip;      /* COMPILED pc, TRANSITION ip, GAP pt offset */
	uint64_t arg;     /* TRANSITION */
	/* TRANSITION METHOD_ENTRY: 1 + the locals the entry's loop zeroed
	 * (HotSpot's max_locals minus the parameters' slots), which tells
	 * methods apart where the opcodes cannot; 0 when not known (no such
	 * loop, or the decoder could not count it). */
	uint32_t entry_locals;
	struct jpb_decoded_frame frames[JPB_DECODED_MAX_FRAMES];
};

/* The locals an entry event says its method zeroed, or -1 if unknown. */
static inline int jpb_entry_zeroed_locals(uint32_t entry_locals)
{
	return entry_locals ? (int)(entry_locals - 1) : -1;
}

/* Append E to BUF; its time is coded relative to *prev_tsc, which is
 * updated. */
int jpb_decoded_event_put(struct jpb_buf *buf, const struct jpb_decoded_event *e,
			  uint64_t *prev_tsc);

/* Parse the next event at C into E; *prev_tsc as in put.  Returns 0,
 * jpb_err_eos at the end, jpb_err_corrupt on a malformed event. */
/* An event's encoding after its kind and time delta (for a compiled event
 * at one pc it never changes), appended to B; and an event put from its
 * kind, time and such a tail: a decoder encodes each pc's tail once. */
int jpb_decoded_event_tail(struct jpb_buf *b, const struct jpb_decoded_event *e);
static inline int jpb_decoded_event_put_tail(struct jpb_buf *b, uint8_t kind,
					     uint64_t tsc, uint64_t *prev_tsc,
					     const uint8_t *tail, size_t len)
{
	/* inline: a decoder's per-event path (kind, zigzag LEB128 delta) */
	if (b->cap - b->len < 11 + len) {
		int rc = jpb_buf_reserve(b, 11 + len);
		if (rc)
			return rc;
	}
	uint8_t *p = b->data + b->len;
	int64_t d = (int64_t)(tsc - *prev_tsc);
	uint64_t v = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
	size_t n = 0;
	p[n++] = kind;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	memcpy(p + n, tail, len);
	b->len += n + len;
	*prev_tsc = tsc;
	return 0;
}

int jpb_decoded_event_get(struct jpb_cur *c, struct jpb_decoded_event *e,
			  uint64_t *prev_tsc);

/* An event without its frames (jpb_decoded_event_next): what a reader
 * that keeps frames elsewhere needs, without struct jpb_decoded_event's
 * room for 64 of them. */
struct jpb_decoded_head {
	uint8_t kind, opcode, tos, what;
	uint32_t nframes;
	uint64_t tsc;
	uint64_t end_tsc; /* GAP */
	uint64_t ip;
	uint64_t arg;     /* TRANSITION */
	uint32_t entry_locals; /* METHOD_ENTRY, as in jpb_decoded_event */
};

/* As jpb_decoded_event_get, but a compiled event's frames are stored at
 * FRAMES, which has room for JPB_DECODED_MAX_FRAMES, and the rest at H. */
int jpb_decoded_event_next(struct jpb_cur *c, struct jpb_decoded_head *h,
			   struct jpb_decoded_frame *frames, uint64_t *prev_tsc);
/* As jpb_decoded_event_next, but H's ip is skipped, not decoded (left 0):
 * for readers that do not use it (the flow). */
int jpb_decoded_event_next_noip(struct jpb_cur *c, struct jpb_decoded_head *h,
				struct jpb_decoded_frame *frames, uint64_t *prev_tsc);

/* A decoded event as a reader without ips keeps it (the flow's struct
 * flow_ev): 32 bytes, its frames elsewhere from index FR. */
struct jpb_decoded_slim {
	uint8_t kind;
	uint8_t opcode;  /* INTERP, else 0 */
	uint8_t what;    /* TRANSITION, GAP, else 0 */
	uint8_t nframes; /* <= JPB_DECODED_MAX_FRAMES */
	uint32_t fr;
	uint32_t locals; /* TRANSITION: entry_locals, else 0 */
	uint64_t tsc;
	uint64_t arg; /* TRANSITION: arg; GAP: end_tsc; else 0 */
};

/* Up to N events as jpb_decoded_event_next_noip gives them, slim, into
 * E[0..) with their frames one after the other from FRAMES (event k's at
 * FRAMES[E[k].fr - FR0]), which has room for ROOM: it stops while ROOM
 * still holds JPB_DECODED_MAX_FRAMES, so the next event always fits.
 * Returns the events parsed; *ERR gets the error that stopped it (0 when
 * N or ROOM did).  One call for many events (the call's cost was a sixth
 * of a parse), in the flow's own form (its copy of each head was a
 * quarter of the parse). */
size_t jpb_decoded_events_slim(struct jpb_cur *c, struct jpb_decoded_slim *e,
			       size_t n, struct jpb_decoded_frame *frames,
			       uint32_t fr0, size_t room, uint64_t *prev_tsc,
			       int *err);

const char *jpb_decoded_gap_name(unsigned cause);
const char *jpb_decoded_transition_name(unsigned what);

#endif /* JPBPF_RECORDS_DECODED_H */
