/* SPDX-License-Identifier: MIT */
/*
 * Reconstruction: each thread's decoded events (docs/DECODER.md) turned
 * into its bytecode-level flow (docs/RECONSTRUCTION.md): for every
 * interpreted opcode and every compiled-code event, the method and bci it
 * ran at, with a status saying how sure that is.
 *
 * The interpreted opcodes are projected onto the interprocedural CFG as
 * an automaton with a call stack (PLDI'21 §4): a state is a call stack of
 * (method, instruction) frames; each event keeps the states it is
 * consistent with.  Compiled events pin the stack exactly.  Where several
 * paths stay consistent the first in successor order is chosen (see
 * RECONSTRUCTION.md) and the events are marked with the candidate count;
 * positions found by resynchronisation or kept from a truncated state
 * set are never certain until a compiled event pins the position.
 *
 * Never reads the truth or meta.json "simulated".  Not thread-safe.
 */
#ifndef JPBPF_FLOW_FLOW_H
#define JPBPF_FLOW_FLOW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bundle.h"
#include "records_decoded.h"
#include "records_flow.h"
#include "java/program.h"

struct flow;

struct flow_opts {
	unsigned max_states; /* live states kept per event (0: 256) */
	unsigned max_resync; /* candidates a resynchronisation may keep (0: 64) */
	unsigned lookahead;  /* opcodes a resync candidate must explain (0: 8) */
	unsigned no_recover; /* leave gaps unfilled */
	/* flow events per window (0: 1 << 19, and 1 << 15 on a thread that
	 * decoded/summary says has no gap, where nothing is recovered):
	 * recovery sees one window and the window bounds the memory
	 * (RECONSTRUCTION.md, "Windows") */
	unsigned window;
	/* the caller has already warned of the jvm stream's damaged records
	 * (decode does): the flow's warning then names only class files that
	 * fail to parse, so one loss is one warning */
	unsigned jvm_damage_said;
	/* flow_reconstruct_bundle calls it after each thread: DONE of TOTAL
	 * bytes of decoded streams reconstructed.  NULL: silent. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

/* Counts of one thread's or all threads' output. */
struct flow_summary {
	uint64_t threads;
	uint64_t events; /* flow events written */
	uint64_t by_status[6]; /* indexed by enum jpb_flow_status */
	uint64_t gaps;
	uint64_t resyncs;
	/* method entries whose locals count (entry_locals) left fewer
	 * candidate callees; and those where, for some state, it matched
	 * none, so all were kept (RECONSTRUCTION.md, "The locals of a
	 * method entry") */
	uint64_t entries_narrowed, entries_mismatched;
	/* class files the program model could not parse (jprog_bad_classes) */
	uint64_t bad_classes;
	uint64_t time_ns; /* reconstruction wall time */
};

/* Use program P (not owned; must outlive F).  O may be NULL. */
int flow_alloc(struct flow **out, struct jprog *p, const struct flow_opts *o);
void flow_free(struct flow *f);

/* What interpreter codelet INDEX is (its jvm_codelet description), so
 * method entries and interpreter stubs can be told apart: "native" and
 * "intrinsic" entries run no bytecode, "exception" stubs continue at a
 * handler, "deopt" stubs re-execute a compiled frame's bytecode. */
int flow_set_codelet(struct flow *f, uint32_t index, const char *description);

/* Add method ID (CLASS_SIG "LFoo;", NAME, SIG) whose class file the
 * program lacks (a hidden class: jvm_method_code), with its CODE: it can
 * then be matched, but has no exception table and no call resolution.
 * Ignored (returns 1) when the program already knows ID. */
int flow_add_method_code(struct flow *f, uint64_t id, const char *class_sig,
			 const char *name, const char *sig, const uint8_t *code,
			 size_t len);

/* Reconstruct one thread from its N events.  The result, valid until the
 * next call or flow_free, goes to *OUT / *NOUT; *SUM (may be NULL) gets
 * the counts. */
int flow_thread(struct flow *f, const struct jpb_decoded_event *ev, size_t n,
		const struct jpb_flow_event **out, size_t *nout,
		struct flow_summary *sum);

/* The method behind flow method index IDX (1-based), its names pointing
 * into the program (valid until flow_free); all 0 (NULL names) when IDX
 * names none. */
struct flow_method_info {
	uint64_t method_id;    /* jmethodID if known, else 0 */
	const char *class_name; /* internal form "java/lang/String" */
	const char *name;
	const char *descriptor;
};
struct flow_method_info flow_method(const struct flow *f, uint32_t idx);
uint32_t flow_method_count(const struct flow *f);

/* The JVMS opcode of HotSpot bytecode OP (fast bytecodes mapped back);
 * *FUSED gets the opcode of the second instruction a fused fast bytecode
 * executes in the same dispatch, or -1. */
int flow_java_opcode(unsigned op, int *fused);

/* Whole bundle: read jvm and decoded/tid*, write flow/methods, flow/tidN
 * and flow/summary.  ERRMSG gets a one-line reason on failure; on
 * success it is empty, or a warning of what the program model could not
 * read (class files that fail to parse, a damaged jvm stream). */
int flow_reconstruct_bundle(struct jpb_bundle *b, const struct flow_opts *o,
			    struct flow_summary *out, char *errmsg, size_t size);

/* The summary line `jpbpf decode` prints after reconstruction:
 * "flow: T threads, E events: decoded x%, certain y%, chosen z%,
 * recovered r%, unknown u%; G gaps, R resyncs; S s", with "N entries
 * narrowed by their locals, M mismatched; " before the time when either
 * is not 0. */
void flow_summary_print(FILE *out, const struct flow_summary *s);

#endif /* JPBPF_FLOW_FLOW_H */
