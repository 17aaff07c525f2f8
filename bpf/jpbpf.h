/* SPDX-License-Identifier: MIT */
/*
 * Events the jpbpf BPF program (jpbpf.bpf.c) sends to user space through
 * its ring buffer.  Shared by the BPF side and the loader
 * (user/record/bpf_loader.c): fixed sizes, explicit widths, no pointers.
 * The loader turns them into bundle records (user/bundle/records_sched.h);
 * this layout is not an on-disk format.
 */
#ifndef JPBPF_BPF_H
#define JPBPF_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define JPBPF_COMM_LEN 16
#define JPBPF_PATH_LEN 128
/* USDT name buffers (powers of two, for the verifier); longer names are
 * cut, and the *_len fields keep the JVM's full lengths. */
#define JPBPF_CLASS_LEN 256
#define JPBPF_METHOD_LEN 128
#define JPBPF_SIG_LEN 256

enum jpbpf_ev_kind {
	JPBPF_EV_SWITCHES = 1, /* a batch of context switches of one CPU */
	JPBPF_EV_FORK = 2,
	JPBPF_EV_EXIT = 3,
	JPBPF_EV_EXEC = 4,
	JPBPF_EV_METHOD_LOAD = 5,
	JPBPF_EV_METHOD_UNLOAD = 6,
};

struct jpbpf_ev_hdr {
	__u32 kind;    /* enum jpbpf_ev_kind */
	__u32 cpu;
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

/* Context switches travel in per-CPU batches: a switch costs a store into
 * the CPU's pending batch, and a batch costs one ring buffer copy when it
 * is full or JPBPF_FLUSH_NS old (bpf/jpbpf.bpf.c). */
#define JPBPF_BATCH 32

enum {
	JPBPF_SW_PREV_TRACED = 1,
	JPBPF_SW_NEXT_TRACED = 2,
	JPBPF_SW_PREEMPT = 4,   /* the tracepoint's preempt flag */
};

struct jpbpf_sw {
	__u64 time_ns;
	__u32 prev_tid;
	__u32 prev_tgid;
	__u32 next_tid;
	__u32 next_tgid;
	__u32 prev_state; /* TASK_* bits of prev; 0 = runnable (preempted) */
	__u32 flags;      /* JPBPF_SW_* */
};

struct jpbpf_ev_switches {
	struct jpbpf_ev_hdr hdr; /* cpu of all; time_ns of the first */
	__u32 n;                 /* entries used in sw[] */
	__u32 untraced;          /* BPF's own: untraced switches seen (age checks) */
	struct jpbpf_sw sw[JPBPF_BATCH];
};

/* Bytes of a batch of N switches as the ring buffer carries it. */
#define JPBPF_SWITCHES_SIZE(n) \
	(sizeof(struct jpbpf_ev_hdr) + 8 + (n) * sizeof(struct jpbpf_sw))

/* fork, exit and exec share one layout. */
struct jpbpf_ev_task {
	struct jpbpf_ev_hdr hdr;
	__u32 tid;        /* the task the event is about (fork: the child) */
	__u32 tgid;
	__u32 nstid;      /* tid in the task's own pid namespace */
	__u32 parent_tid; /* fork: the parent; exec: the old tid */
	__u32 parent_tgid;
	__s32 exit_code;  /* exit: task->exit_code */
	char comm[JPBPF_COMM_LEN];
	char path[JPBPF_PATH_LEN]; /* exec: the file name */
};

struct jpbpf_ev_method {
	struct jpbpf_ev_hdr hdr;
	__u32 tid;
	__u32 tgid;
	__u64 code_addr; /* load only */
	__u32 code_size; /* load only */
	__u32 class_len; /* full lengths as the JVM passed them */
	__u32 method_len;
	__u32 sig_len;
	char class_name[JPBPF_CLASS_LEN];
	char method_name[JPBPF_METHOD_LEN];
	char signature[JPBPF_SIG_LEN];
};

#endif /* JPBPF_BPF_H */
