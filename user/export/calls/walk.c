// SPDX-License-Identifier: MIT
/* The call-structure walker; the rules are in docs/EXPORTS.md. */
#include "export/calls/walk.h"

#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "codec.h"
#include "java/bytecodes.h"

struct walk {
	walk_fn fn;
	void *arg;
	struct walk_frame *st;
	size_t depth, cap;
	int lost;            /* unknown events since the last known one */
	uint8_t prev_status; /* status of the top frame's latest event */
	struct walk_stats stats;
};

int walk_alloc(struct walk **out, walk_fn fn, void *arg)
{
	struct walk *w = calloc(1, sizeof(*w));
	*out = w;
	if (!w)
		return jpb_err_nomem;
	w->fn = fn;
	w->arg = arg;
	return 0;
}

void walk_free(struct walk *w)
{
	if (!w)
		return;
	free(w->st);
	free(w);
}

static int emit(struct walk *w, enum walk_kind k, enum walk_reason r,
		struct walk_frame *f, const struct walk_frame *caller,
		const struct jpb_flow_event *e)
{
	struct walk_event we = { k, r, f, caller, e, w->depth };
	return w->fn(w->arg, &we);
}

static int push(struct walk *w, enum walk_kind k, const struct jpb_flow_event *e)
{
	if (JPB_GROW(w->st, w->depth, w->cap))
		return jpb_err_nomem;
	struct walk_frame *caller =
		k == WALK_CALL && w->depth ? &w->st[w->depth - 1] : NULL;
	struct walk_frame *f = &w->st[w->depth++];
	*f = (struct walk_frame){ e->method, caller ? caller->bci : -1, e->bci,
				  e->opcode, 0, e->tsc, e->tsc, 0 };
	if (k == WALK_CALL)
		w->stats.calls++;
	else
		w->stats.roots++;
	if (w->depth > w->stats.max_depth)
		w->stats.max_depth = w->depth;
	return emit(w, k, WALK_R_NONE, f, caller, e);
}

static int pop(struct walk *w, enum walk_kind k, enum walk_reason r,
	       const struct jpb_flow_event *e)
{
	if (w->st[w->depth - 1].stale && k != WALK_DROP) {
		k = WALK_DROP; /* its exit was not seen: it is only gone */
		r = w->st[w->depth - 1].stale;
	}
	uint64_t *n = k == WALK_RETURN ? &w->stats.returns :
		      k == WALK_UNWIND ? &w->stats.unwinds : &w->stats.drops;
	(*n)++;
	w->depth--;
	return emit(w, k, r, &w->st[w->depth], NULL, e);
}

/* Pop frames of kind K until LEVEL frames are left. */
static int pop_to(struct walk *w, size_t level, enum walk_kind k,
		  enum walk_reason r, const struct jpb_flow_event *e)
{
	int rc = 0;
	while (!rc && w->depth > level)
		rc = pop(w, k, r, e);
	return rc;
}

/* Index of the topmost frame of METHOD at or below index FROM, or -1. */
static long find(const struct walk *w, uint32_t method, long from)
{
	for (long i = from; i >= 0; i--)
		if (w->st[i].method == method)
			return i;
	return -1;
}

/* Frames kept stale under a new root; more drop all at a break. */
#define WALK_MAX_STALE 256

/* After a break: keep the frames up to the topmost one of E's method.
 * Else E starts a new root, above the old frames, now stale: the lost
 * trace may have returned from some, so a later event in one of them
 * resumes it with its context (the frames above drop). */
static int resync(struct walk *w, enum walk_reason r,
		  const struct jpb_flow_event *e)
{
	long i = find(w, e->method, (long)w->depth - 1);
	if (i >= 0)
		return pop_to(w, (size_t)i + 1, WALK_DROP, r, e);
	int rc = 0;
	if (w->depth >= WALK_MAX_STALE)
		rc = pop_to(w, 0, WALK_DROP, r, e);
	for (size_t k = 0; k < w->depth; k++)
		w->st[k].stale = (uint8_t)r;
	return rc ? rc : push(w, WALK_ROOT, e);
}

static int brk(struct walk *w, enum walk_reason r, const struct jpb_flow_event *e)
{
	w->stats.breaks++;
	int rc = emit(w, WALK_BREAK, r, NULL, NULL, e);
	return rc ? rc : resync(w, r, e);
}

/* Unwind by an exception to the topmost frame of E's method below the
 * top; OR_ROOT: when none has it, unwind everything and start a root
 * (the handler is below the first frame seen), else it is a break. */
static int unwind(struct walk *w, const struct jpb_flow_event *e, int or_root)
{
	long i = find(w, e->method, (long)w->depth - 2);
	if (i < 0 && !or_root)
		return brk(w, WALK_R_JUMP, e);
	int rc = pop_to(w, i < 0 ? 0 : (size_t)i + 1, WALK_UNWIND, WALK_R_NONE, e);
	if (!rc && i < 0)
		rc = push(w, WALK_ROOT, e);
	return rc;
}

static int after_invoke(struct walk *w, const struct jpb_flow_event *e)
{
	const struct walk_frame *top = &w->st[w->depth - 1];
	if (e->method == top->method && e->bci != 0) {
		w->stats.native++; /* the callee ran no bytecode */
		return 0;
	}
	if (e->bci == 0)
		return push(w, WALK_CALL, e);
	if (find(w, e->method, (long)w->depth - 2) >= 0)
		return unwind(w, e, 0); /* the callee threw before any bytecode */
	if (e->status == JPB_FLOW_DECODED)
		return push(w, WALK_CALL, e); /* compiled: entry not at bci 0 */
	return brk(w, WALK_R_JUMP, e);
}

static int after_return(struct walk *w, const struct jpb_flow_event *e)
{
	int rc = pop(w, WALK_RETURN, WALK_R_NONE, e);
	if (rc)
		return rc;
	if (w->depth == 0)
		return push(w, WALK_ROOT, e); /* returned below the first frame */
	if (w->st[w->depth - 1].method == e->method)
		return 0;
	/* The caller threw right after the call (an exception the callee
	 * built, e.g. an implicit exception's constructor). */
	if (e->bci != 0 && find(w, e->method, (long)w->depth - 2) >= 0)
		return unwind(w, e, 0);
	/* The caller is inside a native method that calls Java again (the
	 * VM loading and registering a class during defineClass). */
	if (e->bci == 0 && !w->st[w->depth - 1].stale)
		return push(w, WALK_CALL, e);
	return brk(w, WALK_R_JUMP, e);
}

static int after_other(struct walk *w, const struct jpb_flow_event *e,
		       unsigned kind)
{
	int compiled = w->prev_status == JPB_FLOW_DECODED;
	if (e->bci == 0)
		return push(w, WALK_CALL, e); /* class init, exception <init> */
	long i = find(w, e->method, (long)w->depth - 2);
	if (i >= 0 && compiled && w->st[w->depth - 1].opcode == 0 &&
	    kind == JBC_OTHER)
		return pop_to(w, (size_t)i + 1, WALK_RETURN, WALK_R_NONE, e);
	if (i >= 0)
		return unwind(w, e, 0); /* an implicit exception */
	if (e->status == JPB_FLOW_DECODED)
		return push(w, WALK_CALL, e);
	return brk(w, WALK_R_JUMP, e);
}

static int transition(struct walk *w, const struct jpb_flow_event *e)
{
	const struct walk_frame *top = &w->st[w->depth - 1];
	unsigned kind = jbc_info(top->opcode)->kind;
	if (jbc_is_invoke(kind))
		return after_invoke(w, e);
	if (kind == JBC_RETURN)
		return after_return(w, e);
	if (e->method == top->method)
		return 0;
	if (kind == JBC_ATHROW)
		return unwind(w, e, 1);
	return after_other(w, e, kind);
}

int walk_event(struct walk *w, const struct jpb_flow_event *e)
{
	int rc;
	w->stats.events++;
	if (e->method == 0 || e->status == JPB_FLOW_UNKNOWN) {
		w->stats.lost++;
		if (!w->lost && w->depth) {
			w->stats.breaks++;
			rc = emit(w, WALK_BREAK, WALK_R_UNKNOWN, NULL, NULL, e);
			if (rc)
				return rc;
		}
		w->lost = 1;
		return emit(w, WALK_LOST, WALK_R_NONE, NULL, NULL, e);
	}
	if (w->depth == 0)
		rc = push(w, WALK_ROOT, e);
	else if (w->lost)
		rc = resync(w, WALK_R_UNKNOWN, e);
	else
		rc = transition(w, e);
	w->lost = 0;
	if (rc)
		return rc;
	struct walk_frame *top = &w->st[w->depth - 1];
	top->bci = e->bci;
	top->opcode = e->opcode;
	top->tsc_last = e->tsc;
	top->stale = 0;
	w->prev_status = e->status;
	return emit(w, WALK_BYTECODE, WALK_R_NONE, top, NULL, e);
}

int walk_end(struct walk *w)
{
	int rc = 0;
	/* a final return ran: that frame is known to be gone */
	if (!w->lost && w->depth &&
	    jbc_info(w->st[w->depth - 1].opcode)->kind == JBC_RETURN)
		rc = pop(w, WALK_RETURN, WALK_R_NONE, NULL);
	w->lost = 0;
	return rc ? rc : pop_to(w, 0, WALK_DROP, WALK_R_END, NULL);
}

const struct walk_stats *walk_stats(const struct walk *w)
{
	return &w->stats;
}

size_t walk_depth(const struct walk *w)
{
	return w->depth;
}

struct walk_frame *walk_frame_at(const struct walk *w, size_t i)
{
	return i < w->depth ? &w->st[i] : NULL;
}

const char *walk_kind_name(enum walk_kind k)
{
	static const char *const n[] = { "none", "bytecode", "lost", "call", "root",
					 "return", "unwind", "break", "drop" };
	return (unsigned)k < sizeof(n) / sizeof(n[0]) ? n[k] : "bad";
}

const char *walk_reason_name(enum walk_reason r)
{
	static const char *const n[] = { "", "unknown", "jump", "end" };
	return (unsigned)r < sizeof(n) / sizeof(n[0]) ? n[r] : "bad";
}
