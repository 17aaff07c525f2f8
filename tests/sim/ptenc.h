/* SPDX-License-Identifier: MIT */
/*
 * One CPU's Intel PT packet stream, written with libipt's encoder.
 *
 * The executor reports what the CPU does (instructions about to execute,
 * branch outcomes, enable/disable); this module decides the packets the
 * way the hardware would: TNT aggregation, IP compression against the last
 * IP, return compression against a model of the decoder's return stack,
 * PSB+ every psb_period bytes, and an AUX buffer model that drops data
 * when generation outruns the drain, resuming with OVF + FUP.
 */
#ifndef SIM_PTENC_H
#define SIM_PTENC_H

#include <stdint.h>

#include "codec.h"

struct ptenc_opts {
	uint32_t psb_period; /* bytes between PSB+ */
	int retcomp;         /* compress returns */
	int tsc;             /* TSC packets (PSB+ and before TIP.PGE) */
	uint8_t cbr;         /* core:bus ratio in CBR packets */
	int mtc;             /* MTC packets (and TMA after each TSC) */
	unsigned mtc_freq;   /* an MTC every 2^mtc_freq crystal ticks */
	int cyc;             /* CYC packets (threshold 0: before every
			      * CYC-eligible packet, when cycles passed) */
	/* Buffer model; buf_size 0 = unlimited. */
	uint64_t buf_size;     /* bytes */
	double drain_bpns;     /* bytes per ns the consumer drains */
	uint32_t aux_watermark;/* bytes per AUX record */
};

/* A finished AUX record: bytes [offset, offset+size) of the stream. */
struct ptenc_chunk {
	uint64_t offset;
	uint64_t size;
	uint64_t time_ns; /* when the consumer would have copied it */
	uint32_t flags;   /* PTENC_TRUNCATED */
};
#define PTENC_TRUNCATED 1u

struct ptenc;

/* TSC = 2 x ns; the crystal clock (CTC/ART) ticks every 40 ns (25 MHz),
 * so TSC = 80 x CTC: CPUID 0x15 eax 2, ebx 160.  The core clock runs at
 * CBR x 100 MHz: cbr / 10 cycles per ns. */
#define PTENC_NS_PER_CTC 40u
#define PTENC_TSC_PER_CTC 80u

struct ptenc *ptenc_new(const struct ptenc_opts *o, uint64_t tsc_per_ns_q16);
void ptenc_free(struct ptenc *e);

/* Time now (ns of simulated time); TSC = ns * tsc_per_ns. */
void ptenc_time(struct ptenc *e, uint64_t ns);

/* About to execute the instruction at IP with tracing enabled: emits a due
 * PSB+ or the OVF/FUP that ends a loss.  Returns 1 if this instruction's
 * packets will be dropped (loss in progress), else 0. */
int ptenc_insn(struct ptenc *e, uint64_t ip);

void ptenc_tnt(struct ptenc *e, int taken);
void ptenc_tip(struct ptenc *e, uint64_t target);
void ptenc_call(struct ptenc *e, uint64_t ret_addr);
void ptenc_ret(struct ptenc *e, uint64_t target);

/* Tracing resumes at IP (TSC, MODE.Exec, TIP.PGE). */
void ptenc_pge(struct ptenc *e, uint64_t ip);
/* A branch to TARGET leaves the traced region (TIP.PGD with target). */
void ptenc_pgd(struct ptenc *e, uint64_t target);
/* Interrupt/fault/context switch before the instruction at IP
 * (FUP + TIP.PGD with suppressed IP). */
void ptenc_async_pgd(struct ptenc *e, uint64_t ip);

/* 1 once after a loss ended (OVF written): the next instruction or PGE
 * is where the decoder resumes. */
int ptenc_take_resumed(struct ptenc *e);

/* Force data loss on/off (the --loss planner). */
void ptenc_force_drop(struct ptenc *e, int on);
int ptenc_dropping(const struct ptenc *e);
/* The CPU leaves the kernel's context switch, where nothing was traced:
 * an overflow the planner forced has drained there (OVF at the next
 * TIP.PGE, after the time the CPU ran no traced code), and a window not
 * yet over drops again from its next bytecode (ptenc_force_drop). */
void ptenc_switch_in(struct ptenc *e);
/* Tracing is on (between TIP.PGE and TIP.PGD). */
int ptenc_enabled(const struct ptenc *e);
/* Time of the last TSC packet in the stream (0 if none). */
uint64_t ptenc_last_tsc_ns(const struct ptenc *e);
/* Number of losses begun so far. */
uint64_t ptenc_losses(const struct ptenc *e);
uint64_t ptenc_dropped_bytes(const struct ptenc *e);
/* Returns written as a compressed TNT bit / as a TIP. */
void ptenc_ret_stats(const struct ptenc *e, uint64_t *compressed, uint64_t *tip);

/* Flush pending TNT and close the last AUX record. */
void ptenc_finish(struct ptenc *e);

const struct jpb_buf *ptenc_data(const struct ptenc *e);
const struct ptenc_chunk *ptenc_chunks(const struct ptenc *e, size_t *n);

#endif
