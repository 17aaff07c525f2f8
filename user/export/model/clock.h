/* SPDX-License-Identifier: MIT */
/*
 * Flow times for people: a TSC value as nanoseconds from the start of the
 * recording.  TSC to CLOCK_MONOTONIC goes through the sched stream's
 * clock_pair records, piecewise linear between the pairs around a time
 * and extrapolated from the outer two, as the decoder converts
 * (docs/CLOCK.md).  The start is meta.json record.start_ns, or else the
 * first clock pair's time (the recorder takes one as it starts).
 */
#ifndef JPBPF_EXPORT_MODEL_CLOCK_H
#define JPBPF_EXPORT_MODEL_CLOCK_H

#include <stddef.h>
#include <stdint.h>

struct jpb_bundle;
struct xclock;

/* A bundle without pairs gets the identity (TSC ticks as ns, from 0):
 * *EXACT says whether real pairs were found. */
int xclock_load(struct jpb_bundle *b, struct xclock **out, int *exact);

/* From explicit pairs (TSC[i], NS[i]), sorted by TSC; START_NS is time 0. */
int xclock_alloc(struct xclock **out, const uint64_t *tsc, const uint64_t *ns,
		 size_t n, uint64_t start_ns);
void xclock_free(struct xclock *c);

/* CLOCK_MONOTONIC ns of TSC. */
uint64_t xclock_mono(const struct xclock *c, uint64_t tsc);
/* ns from the start (0 for times before it).  C NULL: TSC itself. */
uint64_t xclock_ns(const struct xclock *c, uint64_t tsc);

#endif /* JPBPF_EXPORT_MODEL_CLOCK_H */
