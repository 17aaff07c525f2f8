/* SPDX-License-Identifier: MIT */
/* Hand-made truth: small methods with real bytecode and event sequences
 * that follow it, for testing the simulator without a JVM. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stdint.h>

#include "bundle.h"

struct scenario_opts {
	unsigned threads;
	unsigned iters;
	uint64_t chaos; /* nonzero: random events (seeded) instead of the
			 * program, for robustness tests */
};

/* Write methods and per-thread events into stream "truth" of B. */
int scenario_write(struct jpb_bundle *b, const struct scenario_opts *o,
		   char *err, size_t n);

#endif
