/* SPDX-License-Identifier: MIT */
/* Writing a simulated run into the bundle, one function per stream, with
 * the record types the agent, the BPF recorder and the PT recorder use. */
#ifndef SIM_OUT_H
#define SIM_OUT_H

#include "sim.h"

int out_jvm(struct jpb_bundle *b, const struct sim *s, char *err, size_t n);
int out_pt(struct jpb_bundle *b, const struct sim *s, char *err, size_t n);
int out_sched(struct jpb_bundle *b, const struct sim *s, char *err, size_t n);
int out_sim(struct jpb_bundle *b, const struct sim *s, char *err, size_t n);
int out_meta(struct jpb_bundle *b, const struct sim *s, char *err, size_t n);

#endif
