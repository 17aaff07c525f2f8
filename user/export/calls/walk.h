/* SPDX-License-Identifier: MIT */
/*
 * The call-structure walker: one thread's flow events, in order, turned
 * into calls, returns, unwinds and bytecodes on a shadow stack.  Flow
 * events carry no call or return markers; the walker infers them from the
 * opcode before each method change (docs/EXPORTS.md, "Walker rules"):
 * after an invoke a new method is a call at the invoke's bci, after a
 * return the caller continues, after athrow (or an implicit exception)
 * frames unwind to the handler's method.  Where the flow cannot be
 * explained (an unknown event, lost trace) the stack breaks: the walker
 * resynchronises on a frame below or starts a new root, and counts it.
 *
 * Streaming: the walker holds the stack, never the flow.
 */
#ifndef JPBPF_EXPORT_CALLS_WALK_H
#define JPBPF_EXPORT_CALLS_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "records_flow.h"

enum walk_kind {
	WALK_BYTECODE = 1, /* an event executed in the top frame */
	WALK_LOST,         /* an unknown event: no frame (method 0) */
	WALK_CALL,         /* a frame pushed by an invoke (or an implicit call) */
	WALK_ROOT,         /* a frame pushed with no known caller (above
			    * stale frames after a break, or on none) */
	WALK_RETURN,       /* the top frame returned normally */
	WALK_UNWIND,       /* the top frame was popped by an exception */
	WALK_BREAK,        /* the stack broke here (reason set), drops follow */
	WALK_DROP,         /* a frame popped without an observed exit (at a
			    * break, at the end, or a stale frame) */
};

enum walk_reason {
	WALK_R_NONE = 0,
	WALK_R_UNKNOWN, /* unknown events: the position was lost */
	WALK_R_JUMP,    /* a method change no rule explains: lost trace */
	WALK_R_END,     /* the thread's flow ended with the frame open */
};

struct walk_frame {
	uint32_t method;   /* flow method index */
	int32_t callsite;  /* the caller's bci; -1 for a root */
	int32_t bci;       /* bci of the frame's latest event */
	uint8_t opcode;    /* opcode of the frame's latest event */
	uint8_t stale;     /* enum walk_reason of a break since its latest
			    * event: it may have returned in the lost trace */
	uint64_t tsc_in;   /* TSC of the frame's first event */
	uint64_t tsc_last; /* TSC of the frame's latest event */
	uint64_t user;     /* free for the consumer (e.g. a CCT node) */
};

/* What the consumer sees.  FRAME: the frame pushed or popped, the top
 * frame for BYTECODE, NULL for LOST and BREAK.  EV: the flow event that
 * caused it (for pops at a break or at the end: the frame's last event is
 * in FRAME; EV is the event after the break, or NULL at the end).  DEPTH:
 * the stack depth after the event (a pushed frame is at DEPTH - 1, a
 * popped one was at DEPTH). */
struct walk_event {
	enum walk_kind kind;
	enum walk_reason reason; /* BREAK and DROP */
	struct walk_frame *frame;
	const struct walk_frame *caller; /* CALL: the calling frame */
	const struct jpb_flow_event *ev;
	size_t depth;
};

/* A nonzero return stops the walk and is returned by walk_event/_end. */
typedef int (*walk_fn)(void *arg, const struct walk_event *we);

struct walk_stats {
	uint64_t events;   /* flow events fed */
	uint64_t lost;     /* unknown events */
	uint64_t calls, roots, returns, unwinds, drops;
	uint64_t breaks;   /* WALK_BREAK events */
	uint64_t native;   /* invokes that ran no bytecode (no frame) */
	size_t max_depth;
};

struct walk;

int walk_alloc(struct walk **out, walk_fn fn, void *arg);
void walk_free(struct walk *w);

/* Feed the next event of the thread.  0, a jpb_error, or FN's result. */
int walk_event(struct walk *w, const struct jpb_flow_event *e);

/* The flow ended: a top frame whose last event was a return returns
 * (EV NULL); the other open frames drop (reason END), top first.  The
 * walker is then empty and may walk another thread. */
int walk_end(struct walk *w);

const struct walk_stats *walk_stats(const struct walk *w);

/* The current stack, bottom (index 0) to top. */
size_t walk_depth(const struct walk *w);
struct walk_frame *walk_frame_at(const struct walk *w, size_t i);

const char *walk_kind_name(enum walk_kind k);
const char *walk_reason_name(enum walk_reason r);

#endif /* JPBPF_EXPORT_CALLS_WALK_H */
