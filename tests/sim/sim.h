/* SPDX-License-Identifier: MIT */
/* The simulation state shared by the executor, the scheduler and the
 * writers. */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <stdint.h>

#include "jit_policy.h"
#include "model.h"
#include "ptenc.h"
#include "rng.h"
#include "truth_read.h"

struct sim_opts {
	uint64_t seed;
	unsigned cpus;
	struct ptenc_opts pt;
	struct jit_opts jit;
	uint64_t cost_interp_ns, cost_jit_ns, cost_rt_ns, cost_native_ns;
	uint64_t quantum_ns;
	double block_prob;      /* per slice end: the thread blocks */
	uint64_t block_max_ns;
	int64_t jitter_ns;      /* max |BPF clock - PT clock| per record */
	double loss_pct;        /* <0: off; else the --loss target */
	int itruth;             /* keep instruction-level truth */
	int coarse_pcmaps;      /* pc maps of safepoint pcs only */
	uint64_t irq_every;     /* mean instructions between interrupts, 0 off */
	uint64_t start_ns;      /* CLOCK_MONOTONIC of simulated time 0 */
	uint32_t pid;
};

/* FM_BLIND: the truth shows the frame's entry and exit but none of its
 * bytecodes (JVMTI SingleStep off, e.g. before VMInit): the simulated
 * thread runs it outside traced code. */
enum frame_mode { FM_INTERP, FM_COMPILED, FM_INLINED, FM_NATIVE, FM_BLIND };

struct frame {
	uint32_t mid;
	uint8_t mode;
	struct nmethod *nm;
	uint32_t scope;
	size_t msp_base; /* machine stack depth with this frame's return address */
	uint16_t bci;
};

struct sim_cpu {
	unsigned id;
	struct ptenc *pe;
	uint64_t now;     /* simulated ns since start_ns */
	uint64_t base_ns; /* start_ns */
	struct jpb_buf itruth; /* u64 ip, bit 63: decoder resumes here */
	struct jpb_buf entries; /* u32 method id per interpreted entry */
	int mark_resume;
	uint64_t irq_left; /* instructions to the next interrupt */
	long cur; /* thread index or -1 */
	uint32_t out_tid, out_preempt; /* a switch-out not yet written */
	uint64_t out_ns, out_state;
};

struct sim_thr {
	size_t idx;
	const struct sim_tthread *tt;
	uint32_t tid;
	size_t pos;
	uint64_t ip;
	int traced; /* executing traced code: th->ip is the next instruction */
	uint64_t *ms;
	size_t msp, mcap;
	struct frame *fr;
	size_t nfr, cfr;
	int prev_op;
	uint32_t last_mid; /* the last bytecode event's location */
	uint16_t last_bci;
	/* scheduling */
	uint64_t ready_ns;
	uint64_t start_ns, end_ns; /* simulated times */
	int done, started;
	long last_cpu;
	/* lost events: ranges of event indexes */
	uint64_t (*lost)[2];
	size_t nlost, clost;
	uint64_t lost_bytecodes;
};

struct sim {
	struct sim_opts o;
	const struct truth *t;
	struct interp in;
	struct jit *jit;
	struct rng rng;
	struct sim_cpu *cpus;
	struct sim_thr *thr;
	size_t nthr;
	uint64_t resyncs, deopts, traps, blind, intrinsics, restored, irqs;
	uint64_t osr_entries; /* interpreted frames moved into compiled code */
	uint64_t window_frames; /* caller frames set up from window starts */
	uint64_t unknown_locals; /* entries whose locals loop ran untraced */
	/* scheduling records for the sched writer */
	struct sched_ev *sev;
	size_t nsev, csev;
	/* loss plan (--loss): per CPU, sorted event-index windows */
	struct loss_plan *plan;
	uint64_t *cpu_events; /* bytecode events executed per CPU */
};

struct sched_ev {
	uint64_t ns; /* PT clock */
	uint32_t cpu, prev_tid, next_tid, preempt;
	uint64_t prev_state;
};

/* Executor: run event POS of thread TH on CPU C. */
void exec_event(struct sim *s, struct sim_cpu *c, struct sim_thr *th);
/* Leave/enter the CPU (async PGD / PGE if the thread is in traced code). */
void exec_switch_out(struct sim *s, struct sim_cpu *c, struct sim_thr *th);
void exec_switch_in(struct sim *s, struct sim_cpu *c, struct sim_thr *th);
/* Before its first event: the frames its truth says it starts under. */
void exec_thread_begin(struct sim *s, struct sim_thr *th);
/* The thread's events are done. */
void exec_thread_end(struct sim *s, struct sim_cpu *c, struct sim_thr *th);

/* Find the instruction at IP in any code region, or NULL. */
const struct cg_insn *sim_insn(struct sim *s, uint64_t ip);

#endif
