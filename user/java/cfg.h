/* SPDX-License-Identifier: MIT */
/*
 * Control-flow graph of one method's bytecode, at two granularities:
 * instructions (the states of the reconstruction automaton, PLDI'21
 * Def. 4.1) and basic blocks (JP2's counting unit).
 *
 * Rules (docs/PROGRAM-MODEL.md has the rationale):
 *  - a block ends at a branch, goto, jsr, ret, switch, return or athrow, or
 *    before a branch/switch target or exception handler; calls do NOT end
 *    a block;
 *  - normal successors of an instruction, in this order: if*: fall-through
 *    then target; switch: default then the case targets in table order;
 *    jsr: its target; ret: every instruction that follows a jsr; return and
 *    athrow: none; invoke*: the next instruction (the callee is
 *    interprocedural and left to the caller);
 *  - exception successors: for an instruction that can throw, the handler
 *    of every exception table entry covering it, in table order, stopping
 *    after the first catch-all; duplicates removed.
 *  Successor lists never repeat an entry.
 *
 * Building checks the code: at most 65535 bytes (JVMS 4.7.3), every
 * instruction defined and complete, every branch, switch and handler
 * target an instruction boundary, no fall-through past the end.  Failures
 * give java_err_bad_code with the bci.
 */
#ifndef JPBPF_JAVA_CFG_H
#define JPBPF_JAVA_CFG_H

#include <stdint.h>

#include "java/classfile.h"

/* 24 bytes: code is under 64 KiB, so a bci, a block index and a count
 * of successors fit 16 bits. */
struct jcfg_insn {
	uint16_t bci;
	uint16_t len;
	uint8_t op;        /* the opcode byte (0xc4 for wide forms) */
	uint8_t kind;      /* enum jbc_kind; a wide ret is JBC_RET */
	uint8_t wide_op;   /* the modified opcode after wide, else 0 */
	uint8_t can_throw; /* may raise an exception (see cfg.c) */
	uint16_t cp_index; /* constant pool operand (invoke*, get/put*, new,
			    * checkcast, instanceof, ldc*, anewarray,
			    * multianewarray), else 0 */
	uint16_t block;    /* index of its basic block */
	/* How many normal successors and exception handlers it has (see
	 * jcfg_succs and jcfg_xsuccs). */
	uint16_t nsucc, nxsucc;
	int32_t line;      /* source line, -1 if unknown */
	uint32_t succ;     /* the first of its normal successors */
};

/* What reconstruction reads of an instruction for every state and for
 * each of its successors (jcfg_insn's op, kind, nsucc and succ), kept
 * apart as well: 8 of these share a cache line where 2 instructions do.
 * SUCC counts from the array's start, not from the successor lists':
 * the array alone gives them (jcfg_hot_succs). */
struct jcfg_hot {
	uint32_t succ;
	uint16_t nsucc;
	uint8_t op, kind;
};

struct jcfg_block {
	uint32_t first, last;       /* instruction indices, inclusive */
	uint32_t start_bci, end_bci; /* end exclusive */
	uint32_t succ, nsucc;       /* successor blocks */
	uint32_t xsucc, nxsucc;     /* handler blocks of any instruction */
};

struct jcfg;

/* Build the CFG of M (declared in CF, used for its exception table and
 * line numbers).  java_err_no_code if M has no code.  The CFG reads M's
 * code (jcfg_switch_*), which must outlive it. */
int jcfg_build(struct jcfg **out, const struct jcf_method *m,
	       struct java_diag *diag);
void jcfg_free(struct jcfg *g);
/* What jcfg_build of M would return, short of running out of memory,
 * without building: java_ok, java_err_no_code or java_err_bad_code.  For
 * callers that only ask whether a method has a CFG. */
int jcfg_check(const struct jcf_method *m);

/* The first member of every struct jcfg, for the lookups below: they are
 * asked at every step of reconstruction, and a call each cost more than
 * the lookup (2% of a decode).  Not for use outside this header. */
struct jcfg_lookup {
	uint32_t ninsn, code_length;
	struct jcfg_insn *insn;
	uint32_t *succ; /* normal successor lists */
	uint16_t *at;   /* bci -> instruction index, JCFG_NO_INSN inside one */
	struct jcfg_hot *hot; /* per instruction, followed by succ */
};
#define JCFG_NO_INSN 0xffffu

static inline const struct jcfg_lookup *jcfg_lookup_(const struct jcfg *g)
{
	return (const struct jcfg_lookup *)(const void *)g;
}

static inline uint32_t jcfg_insn_count(const struct jcfg *g)
{
	return jcfg_lookup_(g)->ninsn;
}

static inline const struct jcfg_insn *jcfg_insn(const struct jcfg *g,
						uint32_t i)
{
	const struct jcfg_lookup *l = jcfg_lookup_(g);
	return i < l->ninsn ? &l->insn[i] : NULL;
}

/* G's instructions as reconstruction reads them (jcfg_insn_count). */
static inline const struct jcfg_hot *jcfg_hots(const struct jcfg *g)
{
	return jcfg_lookup_(g)->hot;
}
/* The bytes of HOT, jcfg_hots' array of N instructions, and of their
 * successor lists, which follow it in instruction order: two CFGs whose
 * instructions say the same have the same bytes there. */
static inline size_t jcfg_hot_size(const struct jcfg_hot *hot, uint32_t n)
{
	return n ? (hot[n - 1].succ + (size_t)hot[n - 1].nsucc) * sizeof(uint32_t) : 0;
}
/* jcfg_succs of instruction I from HOT, jcfg_hots' array. */
static inline const uint32_t *jcfg_hot_succs(const struct jcfg_hot *hot, uint32_t i,
					     uint32_t *n)
{
	*n = hot[i].nsucc;
	return (const uint32_t *)(const void *)hot + hot[i].succ;
}

/* Index of the instruction starting at BCI, or -1 if none starts there. */
static inline int32_t jcfg_index_of(const struct jcfg *g, uint32_t bci)
{
	const struct jcfg_lookup *l = jcfg_lookup_(g);
	return bci < l->code_length && l->at[bci] != JCFG_NO_INSN ?
		       (int32_t)l->at[bci] : -1;
}
/* Index of the instruction covering BCI (starting at or before it), or -1
 * when BCI is past the code. */
int32_t jcfg_index_covering(const struct jcfg *g, uint32_t bci);
/* Successor lists of instruction I; *N gets the length. */
static inline const uint32_t *jcfg_succs(const struct jcfg *g, uint32_t i,
					 uint32_t *n)
{
	const struct jcfg_lookup *l = jcfg_lookup_(g);
	*n = i < l->ninsn ? l->insn[i].nsucc : 0;
	return *n ? l->succ + l->insn[i].succ : NULL;
}
const uint32_t *jcfg_xsuccs(const struct jcfg *g, uint32_t i, uint32_t *n);

uint32_t jcfg_block_count(const struct jcfg *g);
const struct jcfg_block *jcfg_block(const struct jcfg *g, uint32_t b);
const uint32_t *jcfg_block_succs(const struct jcfg *g, uint32_t b,
				 uint32_t *n);
const uint32_t *jcfg_block_xsuccs(const struct jcfg *g, uint32_t b,
				  uint32_t *n);

/* Switch operands of the tableswitch/lookupswitch at instruction I: the
 * default target bci, and for case k (0 <= k < *npairs) its key and target
 * bci via jcfg_switch_case.  java_err_invalid if I is not a switch. */
int jcfg_switch_default(const struct jcfg *g, uint32_t i, uint32_t *target,
			uint32_t *npairs);
int jcfg_switch_case(const struct jcfg *g, uint32_t i, uint32_t k,
		     int32_t *key, uint32_t *target);

#endif /* JPBPF_JAVA_CFG_H */
