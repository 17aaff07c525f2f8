/* SPDX-License-Identifier: MIT */
/*
 * `report --format flow`: one thread's reconstructed flow as text or JSON
 * Lines (docs/EXPORTS.md, "flow").  Events are fed one at a time and
 * written as soon as the next event is known (which gives a conditional
 * branch its direction and ends a range), so memory stays constant
 * whatever the flow's length.
 *
 * By default consecutive events of one method with the same status that
 * run straight through (each falls through to the next instruction) are
 * collapsed into one range; a range ends after a branch, switch, invoke,
 * return or throw.  With `full`, every event is its own line.
 */
#ifndef JPBPF_EXPORT_FLOW_FORMAT_H
#define JPBPF_EXPORT_FLOW_FORMAT_H

#include <stdint.h>
#include <stdio.h>

#include "records_flow.h"

struct xmethods;
struct xclock;
struct xflow;

struct xflow_opts {
	int json; /* JSON Lines instead of text */
	int full; /* every bytecode, no ranges */
};

enum xflow_branch {
	XF_BRANCH_NONE = 0,    /* not a conditional branch */
	XF_BRANCH_TAKEN,
	XF_BRANCH_NOT_TAKEN,
	XF_BRANCH_UNKNOWN,     /* the next event does not tell */
};

/* M and C (C may be NULL: times are TSC values) must outlive X. */
int xflow_alloc(struct xflow **out, FILE *f, const struct xflow_opts *o,
		const struct xmethods *m, const struct xclock *c);
void xflow_free(struct xflow *x);

/* Start thread TID (NAME may be NULL); ends the previous one. */
int xflow_begin(struct xflow *x, uint32_t tid, const char *name);
int xflow_event(struct xflow *x, const struct jpb_flow_event *e);
/* Flush the thread's last line.  Returns a write error as jpb_err_io. */
int xflow_end(struct xflow *x);

/* Lines written so far (all threads). */
uint64_t xflow_lines(const struct xflow *x);

/* Direction of the conditional branch E as shown by NEXT (may be NULL),
 * using M's code for the target when it has it. */
enum xflow_branch xflow_direction(const struct jpb_flow_event *e,
				  const struct jpb_flow_event *next,
				  const struct xmethods *m);
const char *xflow_branch_name(enum xflow_branch b);

#endif /* JPBPF_EXPORT_FLOW_FORMAT_H */
