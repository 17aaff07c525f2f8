/* SPDX-License-Identifier: MIT */
/*
 * The simulated machine's Intel PT description: a Skylake-like intel_pt
 * PMU (formats and caps as its sysfs shows them, CPUID leaves 0x15/0x16)
 * and the recording configuration that matches the simulated packets,
 * built with the PT recorder's own code, so meta.json "pt" and the
 * pt_ring config read exactly as for a hardware recording.
 */
#ifndef SIM_PTMETA_H
#define SIM_PTMETA_H

#include <jansson.h>
#include <stdint.h>

#include "sim.h"

/* meta.json "pt" for the run (new reference), and its attr.config. */
json_t *ptmeta_json(const struct sim_opts *o, uint64_t *config);

#endif
