/* SPDX-License-Identifier: MIT */
/*
 * The oracle's self-check: decode each pt/cpuN stream of a simulated
 * bundle with libipt's instruction-flow and block decoders, over an image
 * built only from the bundle's jvm stream (code blobs and compiled
 * methods), and compare with the instruction truth in sim/itruth/cpuN.
 */
#ifndef SIM_VERIFY_H
#define SIM_VERIFY_H

#include <stdint.h>
#include <stdio.h>

#include "bundle.h"

struct verify_stats {
	uint64_t insns, blocks, overflows, enables, disables, truth;
	/* packets, by libipt's packet decoder */
	uint64_t psb, tnt, tip, pge, pgd, fup, ovf, tsc, mode, cbr, mtc, tma, cyc;
	uint64_t ip16, ip32, ip48; /* IP compression of TIP/FUP/PGE/PGD */
	/* sched stream */
	uint64_t switches, migrating_threads, cpus;
};

/* 0 if every CPU's decoded flow equals its truth; 1 on a mismatch (the
 * first is described on OUT); a negative jpb_error if the bundle cannot
 * be read. */
int verify_bundle(struct jpb_bundle *b, FILE *out, struct verify_stats *st);

#endif
