/* SPDX-License-Identifier: MIT */
/*
 * TSC <-> CLOCK_MONOTONIC calibration (docs/CLOCK.md).
 *
 * BPF events carry bpf_ktime_get_ns() (CLOCK_MONOTONIC); Intel PT carries
 * the TSC.  The recorder reads pairs of both clocks back to back in user
 * space, writes each pair as a JPB_REC_CLOCK_PAIR record and fits a linear
 * conversion whose residual goes to meta.json, so the decoder can convert
 * either way with a stated error bound.
 */
#ifndef JPBPF_CLOCK_H
#define JPBPF_CLOCK_H

#include <stddef.h>
#include <stdint.h>

struct jpb_clock_pair_s {
	uint64_t tsc;
	uint64_t mono_ns;   /* midpoint of the clock_gettime() pair around rdtscp */
	uint32_t window_ns; /* their distance; the midpoint is within half */
	uint32_t cpu;       /* from rdtscp's TSC_AUX */
};

/* Whether user space can read the TSC here (x86 with rdtscp); 0 if so,
 * else -1 with the reason in WHY. */
int jpb_clock_tsc_available(char *why, size_t size);

/* The best (narrowest window) of TRIES back-to-back reads.  Returns 0, or
 * -1 when the TSC cannot be read on this architecture.  The caller checks
 * jpb_clock_tsc_available() once beforehand: its CPUID traps to the
 * hypervisor in a VM (40 us on the test VM), too slow to repeat for every
 * pair. */
int jpb_clock_sample(struct jpb_clock_pair_s *out, int tries);

/* A least-squares fit mono = mono0 + ns_per_tick * (tsc - tsc0) + offset
 * over calibration pairs, with its residuals. */
struct jpb_clock_fit {
	uint64_t tsc0;
	uint64_t mono0;
	double ns_per_tick;
	double offset_ns;
	double max_residual_ns; /* max |pair - fit| */
	double rms_residual_ns;
	double max_window_ns;   /* widest read window among the pairs */
	size_t npairs;
	int monotonic;          /* tsc and mono strictly increase together */
};

/* Fit N >= 2 pairs (in time order).  Returns 0 or -1 (too few pairs, or
 * the TSC did not advance). */
int jpb_clock_fit(const struct jpb_clock_pair_s *p, size_t n,
		  struct jpb_clock_fit *out);

/* Monotonic ns for TSC under the fit. */
double jpb_clock_tsc_to_mono(const struct jpb_clock_fit *f, uint64_t tsc);

#endif /* JPBPF_CLOCK_H */
