/* SPDX-License-Identifier: MIT */
/*
 * Ground truth (stream "truth"): what each thread really executed, written
 * by the agent in truth mode (JVMTI SingleStep + method entry/exit +
 * exceptions) and read by the simulator and `jpbpf eval`.  Never read by
 * the decoder.
 */
#ifndef JPBPF_RECORDS_TRUTH_H
#define JPBPF_RECORDS_TRUTH_H

#include "records.h"

enum {
	JPB_REC_TRUTH_METHOD = 0x0401,
	JPB_REC_TRUTH_EVENTS = 0x0402,
	JPB_REC_TRUTH_WINDOW = 0x0403,
	/* Simulator-only streams under sim/ (docs/SIMULATOR.md). */
	JPB_REC_SIM_ITRUTH = 0x04f0, /* raw payload: packed u64 addresses */
	JPB_REC_SIM_LOST = 0x04f1,
};

/* Truth events whose trace the simulator dropped (stream sim/lost). */
struct jpb_rec_sim_lost {
	uint32_t tid;
	uint32_t nstid;
	uint64_t first; /* index in the thread's truth sequence */
	uint64_t count;
};

/* A method that appears in truth events.  IDs are dense from 1, unique
 * within the bundle. */
struct jpb_rec_truth_method {
	uint32_t method_id;
	uint32_t access_flags;   /* JVM ACC_* */
	struct jpb_str class_sig; /* "Ljava/lang/String;" */
	struct jpb_str name;
	struct jpb_str signature; /* "(I)V" */
	struct jpb_bytes bytecode; /* the method's code (GetBytecodes), may be empty (native/abstract) */
};

/* A batch of consecutive events of one thread.  `events` is a packed
 * array of struct jpb_truth_event (8 bytes each, little-endian). */
struct jpb_rec_truth_events {
	uint32_t tid;   /* host tid, 0 if unknown */
	uint32_t nstid; /* gettid() in the target */
	uint64_t seq;   /* index of the first event in this thread's sequence */
	struct jpb_bytes events;
};

/* Where a thread's recorded sequence starts and stops (docs/FORMAT.md).
 * A start says which Java frames were already on the thread's stack under
 * the method of its first event: a bounded window (agent options
 * truthfrom=, truthmax=) or a thread running before VMInit starts
 * mid-stack.  A stop says whether the sequence reaches the thread's end. */
struct jpb_rec_truth_window {
	uint32_t tid;
	uint32_t nstid;
	uint32_t kind;   /* enum jpb_truth_window_kind */
	uint32_t reason; /* enum jpb_truth_window_reason */
	uint64_t seq;    /* start: index of the first event; stop: one past the last */
	uint32_t depth;  /* start: caller frames on the stack (may exceed those listed) */
	struct jpb_bytes frames; /* start: packed jpb_truth_frame, innermost caller first */
};

enum jpb_truth_window_kind {
	JPB_TRUTH_WINDOW_START = 1,
	JPB_TRUTH_WINDOW_STOP = 2,
};

enum jpb_truth_window_reason {
	JPB_TRUTH_WHY_VMINIT = 1,     /* start: events on from VMInit */
	JPB_TRUTH_WHY_TRIGGER = 2,    /* start: truthfrom= method entered */
	JPB_TRUTH_WHY_THREAD_END = 3, /* stop: the thread ended */
	JPB_TRUTH_WHY_LIMIT = 4,      /* stop: truthmax= bytecodes reached */
	JPB_TRUTH_WHY_SESSION = 5,    /* stop: VM death or recording stopped */
};

/* A caller frame: the method and the bci of its pending invoke
 * (JPB_TRUTH_NO_BCI for a native method). */
struct jpb_truth_frame {
	uint32_t method_id;
	uint32_t bci;
};
#define JPB_TRUTH_FRAME_SIZE 8u
#define JPB_TRUTH_NO_BCI 0xffffffffu

static inline void jpb_truth_frame_get(const uint8_t *p,
				       struct jpb_truth_frame *f)
{
	f->method_id = jpb_le32(p);
	f->bci = jpb_le32(p + 4);
}

static inline void jpb_truth_frame_put(uint8_t *p,
				       const struct jpb_truth_frame *f)
{
	jpb_st32(p, f->method_id);
	jpb_st32(p + 4, f->bci);
}

enum jpb_truth_kind {
	JPB_TRUTH_BYTECODE = 0,  /* about to execute (method, bci, opcode) */
	JPB_TRUTH_ENTRY = 1,     /* method entered (bci 0); native methods too */
	JPB_TRUTH_EXIT = 2,      /* method returned normally */
	JPB_TRUTH_EXIT_EXC = 3,  /* method popped by an exception */
	JPB_TRUTH_THROW = 4,     /* exception thrown at (method, bci) */
	JPB_TRUTH_CATCH = 5,     /* caught; (method, bci) is the handler */
};

struct jpb_truth_event {
	uint32_t method_id;
	uint16_t bci;
	uint8_t opcode; /* for BYTECODE; 0 otherwise */
	uint8_t kind;   /* enum jpb_truth_kind */
};
#define JPB_TRUTH_EVENT_SIZE 8u

static inline void jpb_truth_event_get(const uint8_t *p,
				       struct jpb_truth_event *e)
{
	e->method_id = jpb_le32(p);
	e->bci = jpb_le16(p + 4);
	e->opcode = p[6];
	e->kind = p[7];
}

static inline void jpb_truth_event_put(uint8_t *p,
				       const struct jpb_truth_event *e)
{
	jpb_st32(p, e->method_id);
	jpb_st16(p + 4, e->bci);
	p[6] = e->opcode;
	p[7] = e->kind;
}

#endif /* JPBPF_RECORDS_TRUTH_H */
