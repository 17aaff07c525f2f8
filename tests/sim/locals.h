/* SPDX-License-Identifier: MIT */
/*
 * How many locals each method's interpreted entry zeroes: HotSpot's
 * zerolocals entries push one zero per local beyond the parameters
 * (max_locals - size_of_parameters), a loop whose TNT bits the trace
 * carries (docs/SIMULATOR.md, "The code model").
 */
#ifndef SIM_LOCALS_H
#define SIM_LOCALS_H

#include <stdint.h>

#include "bundle.h"
#include "truth_read.h"

/* The locals javac gives CODE: one past the highest slot it loads,
 * stores or increments (two slots for long and double), at least
 * PARAMS. */
int locals_from_code(const uint8_t *code, uint32_t len, int params);

/* Set every method's `zero_locals` from the class files in B's jvm stream
 * (the agent's jvm_class records): the Code attribute's max_locals of the
 * method with the same class, name, descriptor and bytecodes, minus its
 * parameter slots; -1 where no class file has it.  A hand-made truth
 * (meta.json "truth_source": "scenario") defines its methods by their
 * bytecodes alone, so theirs come from locals_from_code.  Returns the
 * number of methods with code left unknown, or a negative jpb_error with
 * a message in ERR. */
long locals_load(struct jpb_bundle *b, struct truth *t, char *err, size_t n);

#endif
