/* SPDX-License-Identifier: MIT */
/* The simulator's input: methods and per-thread event sequences, read from
 * a bundle's "truth" stream (written by the agent in truth mode, or by
 * `jpbpf-sim scenario`). */
#ifndef SIM_TRUTH_READ_H
#define SIM_TRUTH_READ_H

#include <stddef.h>
#include <stdint.h>

#include "bundle.h"
#include "records_truth.h"

struct sim_method {
	uint32_t id;
	uint32_t access;
	char *cls, *name, *sig;
	uint8_t *code;
	uint32_t code_len;
	/* locals beyond the parameters (max_locals - parameter slots), which
	 * the interpreted entry zeroes; -1 unknown (locals.h) */
	int32_t zero_locals;
};

struct sim_tthread {
	uint32_t tid, nstid;
	struct jpb_truth_event *ev;
	size_t n, cap;
	/* Its truth_window records, if any: the frames under its first
	 * event's (innermost first; `depth` may exceed `ncallers` when the
	 * agent listed only the innermost ones) and why the sequence ends
	 * (0: no stop record). */
	struct jpb_truth_frame *callers;
	size_t ncallers;
	uint32_t depth, start_why, stop_why;
};

struct truth {
	struct sim_method *methods; /* indexed by id; [0] unused */
	size_t nmethods;            /* highest id + 1 */
	struct sim_tthread *threads;
	size_t nthreads, cthreads;
	uint64_t nbytecodes;
	size_t mid_stack; /* threads whose window starts with callers */
	size_t unknown_locals; /* methods with code but no zero_locals */
};

#define ACC_STATIC 0x0008
#define ACC_SYNCHRONIZED 0x0020
#define ACC_NATIVE 0x0100
#define ACC_ABSTRACT 0x0400

/* Load the truth stream of B.  On error returns a jpb_error and writes a
 * message with context into ERR. */
int truth_load(struct jpb_bundle *b, struct truth *t, char *err, size_t n);
void truth_fini(struct truth *t);

/* The method with ID, or NULL. */
const struct sim_method *truth_method(const struct truth *t, uint32_t id);

#endif
