/* SPDX-License-Identifier: MIT */
/*
 * Record types of the "sched" domain (0x02xx), written by the BPF recorder
 * (user/record/) into stream "sched" (docs/FORMAT.md, "Stream: sched").
 * Every record's header time_ns is the event's CLOCK_MONOTONIC time as
 * bpf_ktime_get_ns() read it in the kernel (clock pairs: as user space
 * read it).
 */
#ifndef JPBPF_RECORDS_SCHED_H
#define JPBPF_RECORDS_SCHED_H

#include "records.h"

enum {
	JPB_REC_SCHED_SWITCH = 0x0201,
	JPB_REC_SCHED_FORK = 0x0202,
	JPB_REC_SCHED_EXIT = 0x0203,
	JPB_REC_SCHED_EXEC = 0x0204,
	JPB_REC_USDT_METHOD_LOAD = 0x0205,
	JPB_REC_USDT_METHOD_UNLOAD = 0x0206,
	JPB_REC_CLOCK_PAIR = 0x0207,
};

/* A context switch on `cpu` where prev or next belongs to a traced
 * process.  Tids and tgids are host-namespace; 0 is the idle task. */
struct jpb_rec_sched_switch {
	uint32_t cpu;
	uint32_t preempt;    /* the tracepoint's preempt flag */
	uint32_t prev_tid;
	uint32_t prev_tgid;
	uint32_t next_tid;
	uint32_t next_tgid;
	uint64_t prev_state; /* TASK_* bits; 0: prev stays runnable */
	uint32_t traced;     /* 1: prev is traced, 2: next is traced (both: 3) */
};

/* fork/clone by a traced process: child_tid is new.  A child with the
 * parent's tgid is a thread and is traced; another tgid is a child process
 * and is not. */
struct jpb_rec_sched_fork {
	uint32_t cpu;
	uint32_t parent_tid;
	uint32_t parent_tgid;
	uint32_t child_tid;
	uint32_t child_tgid;
	uint32_t child_nstid; /* child's tid in its own pid namespace */
	struct jpb_str comm;
};

struct jpb_rec_sched_exit {
	uint32_t cpu;
	uint32_t tid;
	uint32_t tgid;
	uint32_t nstid;
	int32_t exit_code; /* task->exit_code */
	struct jpb_str comm; /* the thread's last name */
};

struct jpb_rec_sched_exec {
	uint32_t cpu;
	uint32_t tid;
	uint32_t tgid;
	uint32_t old_tid; /* the execing thread's tid before exec */
	struct jpb_str comm;
	struct jpb_str filename; /* cut at 127 bytes */
};

enum jpb_usdt_flags {
	JPB_USDT_CLASS_CUT = 1,  /* class_name shorter than the JVM's */
	JPB_USDT_METHOD_CUT = 2,
	JPB_USDT_SIG_CUT = 4,
};

/* hotspot:compiled__method__load / __unload.  Unload carries no code
 * address in HotSpot's probe; code_addr and code_size are then 0. */
struct jpb_rec_usdt_method {
	uint32_t cpu;
	uint32_t tid;
	uint32_t tgid;
	uint32_t flags;      /* enum jpb_usdt_flags */
	uint64_t code_addr;  /* nmethod insts_begin() */
	uint32_t code_size;  /* insts_size() */
	struct jpb_str class_name; /* "java/lang/String" */
	struct jpb_str method_name;
	struct jpb_str signature;
};

/* One (TSC, CLOCK_MONOTONIC) pair read back to back in user space: the
 * best of several tries, with the time the read took (docs/CLOCK.md).
 * The header time_ns equals mono_ns. */
struct jpb_rec_clock_pair {
	uint64_t tsc;
	uint64_t mono_ns;   /* midpoint of the two clock_gettime() around rdtsc */
	uint32_t window_ns; /* their distance: the pair's uncertainty is half */
	uint32_t cpu;       /* the CPU the pair was read on */
};

#endif /* JPBPF_RECORDS_SCHED_H */
