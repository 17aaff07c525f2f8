/* SPDX-License-Identifier: MIT */
/*
 * Threads on N simulated CPUs: time slices with jitter, preemption,
 * blocking and migration, as a discrete-event simulation that always
 * advances the CPU whose clock is earliest.  Also applies the --loss plan
 * at bytecode boundaries and records which truth events fell into lost
 * trace.
 */
#ifndef SIM_SCHED_H
#define SIM_SCHED_H

#include "sim.h"

/* Per CPU, the [first, first + count) bytecode-event windows to drop. */
struct loss_plan {
	uint64_t (*win)[2];
	size_t n, next;
};

int sim_init(struct sim *s, const struct sim_opts *o, const struct truth *t);
/* Run every thread's events to the end. */
void sim_run(struct sim *s);
void sim_fini(struct sim *s);

/* Plan loss windows hitting PCT percent of each CPU's EVENTS[cpu]
 * bytecode events. */
void loss_plan_make(struct sim *s, const uint64_t *events, double pct);

#endif
