/* SPDX-License-Identifier: MIT */
/*
 * A script of decoded events for the flow's unit tests: what the decoder
 * would hand reconstruction, written event by event.  Header-only: each
 * test is its own executable.
 */
#ifndef JPBPF_TESTS_FLOW_EVENT_SCRIPT_H
#define JPBPF_TESTS_FLOW_EVENT_SCRIPT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "records_decoded.h"

struct event_script {
	struct jpb_decoded_event *ev;
	size_t n, cap;
};

static inline void script_fini(struct event_script *s)
{
	free(s->ev);
	memset(s, 0, sizeof(*s));
}

/* A zeroed event of KIND, one TSC tick after the one before. */
static inline struct jpb_decoded_event *script_add(struct event_script *s,
						   uint8_t kind)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		if (!s->ev)
			abort();
	}
	struct jpb_decoded_event *e = &s->ev[s->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->tsc = 1000 + s->n;
	return e;
}

/* Interpreted opcodes, then -1. */
static inline void script_ops(struct event_script *s, ...)
{
	va_list ap;
	va_start(ap, s);
	for (int op; (op = va_arg(ap, int)) >= 0;)
		script_add(s, JPB_DEV_INTERP)->opcode = (uint8_t)op;
	va_end(ap);
}

static inline void script_transition(struct event_script *s, uint8_t what,
				     uint64_t arg)
{
	struct jpb_decoded_event *e = script_add(s, JPB_DEV_TRANSITION);
	e->what = what;
	e->arg = arg;
}

/* Compiled code at (ID, BCI), one frame. */
static inline void script_compiled(struct event_script *s, uint64_t id,
				   int32_t bci)
{
	struct jpb_decoded_event *e = script_add(s, JPB_DEV_COMPILED);
	e->nframes = 1;
	e->frames[0] = (struct jpb_decoded_frame){ id, bci };
}

#endif
