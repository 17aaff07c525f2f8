/* SPDX-License-Identifier: MIT */
/*
 * Record types of the "pt" domain, written by the PT recorder
 * (docs/FORMAT.md, "Stream: pt").
 *
 * One stream per AUX ring: "pt/cpuN" when rings are per CPU (the default),
 * "pt/tidN" when they are per thread.  A stream is named after the ring
 * because the PT byte stream is only continuous within one ring: the
 * decoder reads each stream's pt_aux_data in order as one trace, and cuts
 * it by thread using pt_itrace_start/pt_switch here and the BPF sched
 * stream.  Sideband and data of a ring share its stream so their order is
 * the order the recorder saw them.  Losses are core JPB_REC_LOSS records
 * in the same stream (`what` = "pt-aux-truncated", "pt-sideband", ...).
 */
#ifndef JPBPF_RECORDS_PT_H
#define JPBPF_RECORDS_PT_H

#include "records.h"

enum {
	JPB_REC_PT_RING = 0x0301,
	JPB_REC_PT_AUX_DATA = 0x0302,
	JPB_REC_PT_AUX_EVENT = 0x0303,
	JPB_REC_PT_ITRACE_START = 0x0304,
	JPB_REC_PT_LOST = 0x0305,
	JPB_REC_PT_SWITCH = 0x0306,
};

#define JPB_PT_NO_CPU UINT32_MAX

/* First record of every pt stream: the ring and the perf clock of its
 * user page (TSC -> perf time: time_zero + (tsc * mult) >> shift, when
 * cap_user_time_zero). */
struct jpb_rec_pt_ring {
	uint32_t cpu;  /* JPB_PT_NO_CPU for a per-thread ring */
	uint32_t tid;  /* 0 for a per-CPU ring */
	uint32_t snapshot; /* 1: AUX in overwrite (snapshot) mode */
	uint32_t cap_user_time_zero;
	uint64_t aux_size;
	uint64_t data_size;
	uint64_t time_zero;
	uint32_t time_mult;
	uint32_t time_shift;
	uint64_t config; /* attr.config */
};

enum jpb_pt_data_flags {
	/* From an overwrite-mode ring: starts anywhere inside a packet; a
	 * decoder syncs forward to the first PSB. */
	JPB_PT_DATA_SNAPSHOT = 1u << 0,
	/* The snapshot ring had wrapped: older trace was overwritten. */
	JPB_PT_DATA_WRAPPED = 1u << 1,
	/* The snapshot kept only the newest --snapshot bytes of more. */
	JPB_PT_DATA_CLIPPED = 1u << 2,
};

/* Raw PT packets copied from the AUX ring. */
struct jpb_rec_pt_aux_data {
	uint32_t cpu;
	uint32_t tid;
	/* Full trace: the free-running AUX position (aux_tail) of data[0];
	 * consecutive records are contiguous, a jump is a hole.  Snapshot:
	 * offset of data[0] inside the ring. */
	uint64_t offset;
	uint32_t flags; /* enum jpb_pt_data_flags */
	uint32_t snapshot; /* snapshot number (1, 2, ...); 0 in full trace */
	struct jpb_bytes data;
};

/* PERF_RECORD_AUX: the kernel's account of AUX data and its flags. */
struct jpb_rec_pt_aux_event {
	uint32_t cpu;
	uint32_t pid;
	uint32_t tid;
	uint32_t reserved;
	uint64_t aux_offset;
	uint64_t aux_size;
	uint64_t flags; /* PERF_AUX_FLAG_*: 1 truncated, 2 overwrite,
			 * 4 partial, 8 collision */
};

/* PERF_RECORD_ITRACE_START: tracing began for pid/tid on cpu. */
struct jpb_rec_pt_itrace_start {
	uint32_t cpu;
	uint32_t pid;
	uint32_t tid;
};

enum jpb_pt_lost_kind { JPB_PT_LOST_RECORDS = 0, JPB_PT_LOST_SAMPLES = 1 };

/* PERF_RECORD_LOST(_SAMPLES): sideband records the kernel dropped. */
struct jpb_rec_pt_lost {
	uint32_t cpu;
	uint32_t kind; /* enum jpb_pt_lost_kind */
	uint64_t id;
	uint64_t lost;
};

/* PERF_RECORD_SWITCH(_CPU_WIDE), a cross-check of the BPF sched stream. */
struct jpb_rec_pt_switch {
	uint32_t cpu;
	uint32_t pid;
	uint32_t tid;
	uint32_t out;     /* 1: switched out, 0: in */
	uint32_t preempt; /* 1: out while runnable */
	uint32_t np_pid;  /* CPU-wide: the next (out) / previous (in) task */
	uint32_t np_tid;
};

#endif /* JPBPF_RECORDS_PT_H */
