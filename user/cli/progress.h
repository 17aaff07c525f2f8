/* SPDX-License-Identifier: MIT */
/*
 * A one-line progress bar with ETA for long steps (decode,
 * reconstruction, large exports), redrawn in place on a terminal at most
 * ten times a second.  Callers decide whether to show it (progress_wanted:
 * only when the stream is a terminal; never with -q); a NULL bar ignores
 * every call, so code that reports progress needs no conditionals.
 */
#ifndef JPBPF_CLI_PROGRESS_H
#define JPBPF_CLI_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

struct progress;

/* Is F a terminal? */
int progress_wanted(FILE *f);

/* A bar labelled LABEL on F, or NULL when !ENABLED (or out of memory). */
struct progress *progress_alloc(FILE *f, const char *label, int enabled);

/* DONE of TOTAL units (any unit; the bar shows the fraction).  Redraws
 * when 100 ms passed since the last drawing, or at completion. */
void progress_update(struct progress *p, uint64_t done, uint64_t total);

/* progress_update as a callback for option structs: ARG is the bar. */
void progress_cb(void *arg, uint64_t done, uint64_t total);

/* Redraws drawn so far (tests). */
unsigned progress_draws(const struct progress *p);

/* Erase the bar's line and free it. */
void progress_free(struct progress *p);

#endif /* JPBPF_CLI_PROGRESS_H */
