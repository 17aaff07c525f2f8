// SPDX-License-Identifier: MIT
/* TSC <-> CLOCK_MONOTONIC calibration pairs and their linear fit. */
#include "record/clock.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

static uint64_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
/* rdtscp waits for earlier instructions, so the read is not hoisted out of
 * the clock_gettime() window; TSC_AUX holds the CPU number on Linux. */
static uint64_t read_tsc(uint32_t *cpu)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	*cpu = aux & 0xfff;
	return ((uint64_t)hi << 32) | lo;
}

int jpb_clock_tsc_available(char *why, size_t size)
{
	unsigned a, b, c, d;
	__asm__ __volatile__("cpuid"
			     : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			     : "a"(0x80000001u), "c"(0));
	if (!(d & (1u << 27))) {
		snprintf(why, size, "the CPU has no rdtscp");
		return -1;
	}
	return 0;
}
#else
static uint64_t read_tsc(uint32_t *cpu)
{
	*cpu = 0;
	return 0;
}

int jpb_clock_tsc_available(char *why, size_t size)
{
	snprintf(why, size, "no TSC on this architecture");
	return -1;
}
#endif

int jpb_clock_sample(struct jpb_clock_pair_s *out, int tries)
{
#if !defined(__x86_64__) && !defined(__i386__)
	return -1;
#endif
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < (tries > 0 ? tries : 1); i++) {
		uint32_t cpu;
		uint64_t t1 = mono_now();
		uint64_t tsc = read_tsc(&cpu);
		uint64_t t2 = mono_now();
		if (t2 - t1 >= best)
			continue;
		best = t2 - t1;
		out->tsc = tsc;
		out->mono_ns = t1 + (t2 - t1) / 2;
		out->window_ns = best > UINT32_MAX ? UINT32_MAX : (uint32_t)best;
		out->cpu = cpu;
	}
	return 0;
}

/* Ordinary least squares on offsets from the first pair, so the doubles
 * hold small numbers (a minute of TSC ticks is ~2^37, far below 2^53). */
int jpb_clock_fit(const struct jpb_clock_pair_s *p, size_t n,
		  struct jpb_clock_fit *out)
{
	if (n < 2 || p[n - 1].tsc <= p[0].tsc)
		return -1;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	out->tsc0 = p[0].tsc;
	out->mono0 = p[0].mono_ns;
	out->monotonic = 1;
	out->max_window_ns = 0;
	for (size_t i = 0; i < n; i++) {
		double x = (double)(int64_t)(p[i].tsc - out->tsc0);
		double y = (double)(int64_t)(p[i].mono_ns - out->mono0);
		sx += x, sy += y, sxx += x * x, sxy += x * y;
		if (i && (p[i].tsc <= p[i - 1].tsc ||
			  p[i].mono_ns <= p[i - 1].mono_ns))
			out->monotonic = 0;
		if (p[i].window_ns > out->max_window_ns)
			out->max_window_ns = p[i].window_ns;
	}
	double dn = (double)n, den = dn * sxx - sx * sx;
	if (den <= 0)
		return -1;
	out->ns_per_tick = (dn * sxy - sx * sy) / den;
	out->offset_ns = (sy - out->ns_per_tick * sx) / dn;
	double maxr = 0, ss = 0;
	for (size_t i = 0; i < n; i++) {
		double r = (double)p[i].mono_ns - jpb_clock_tsc_to_mono(out, p[i].tsc);
		maxr = fmax(maxr, fabs(r));
		ss += r * r;
	}
	out->max_residual_ns = maxr;
	out->rms_residual_ns = sqrt(ss / dn);
	out->npairs = n;
	if (out->ns_per_tick <= 0)
		out->monotonic = 0;
	return 0;
}

double jpb_clock_tsc_to_mono(const struct jpb_clock_fit *f, uint64_t tsc)
{
	double x = (double)(int64_t)(tsc - f->tsc0);
	return (double)f->mono0 + f->offset_ns + f->ns_per_tick * x;
}
