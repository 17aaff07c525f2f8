/* SPDX-License-Identifier: MIT */
/*
 * The JVM instruction set (JVMS §6.5): mnemonic, length and control-flow
 * kind of each opcode.  Shared by the decoder's program model and the
 * simulator.
 */
#ifndef JPBPF_BYTECODES_H
#define JPBPF_BYTECODES_H

#include <stddef.h>
#include <stdint.h>

enum jbc_kind {
	JBC_OTHER = 0,      /* falls through to the next instruction */
	JBC_COND_BRANCH,    /* if*: falls through or jumps to a target */
	JBC_GOTO,           /* goto, goto_w */
	JBC_JSR,            /* jsr, jsr_w (class files < 51 only) */
	JBC_RET,            /* ret (returns from a jsr) */
	JBC_SWITCH,         /* tableswitch, lookupswitch */
	JBC_INVOKE_VIRTUAL,
	JBC_INVOKE_SPECIAL,
	JBC_INVOKE_STATIC,
	JBC_INVOKE_INTERFACE,
	JBC_INVOKE_DYNAMIC,
	JBC_RETURN,         /* ireturn .. return */
	JBC_ATHROW,
	JBC_INVALID,        /* not a defined opcode */
};

/* Length 0 in the table means variable: use jbc_length(). */
struct jbc_info {
	const char *name;
	uint8_t length;
	uint8_t kind; /* enum jbc_kind */
};

/* The opcode table (read-only): undefined opcodes have name NULL and
 * length 0.  Public so that the lookups below inline: resynchronisation
 * and CFG building ask them per instruction of whole programs. */
extern const struct jbc_info jbc_table[256];
extern const struct jbc_info jbc_invalid;

/* The entry for OP; undefined opcodes give name NULL, kind JBC_INVALID. */
static inline const struct jbc_info *jbc_info(uint8_t op)
{
	return jbc_table[op].name ? &jbc_table[op] : &jbc_invalid;
}

/* Mnemonic of OP, or "invalid". */
const char *jbc_name(uint8_t op);

static inline int jbc_is_invoke(unsigned kind)
{
	return kind >= JBC_INVOKE_VIRTUAL && kind <= JBC_INVOKE_DYNAMIC;
}

/* jbc_length for every case: switches, wide, undefined opcodes and
 * instructions that run past LEN. */
int jbc_length_any(const uint8_t *code, size_t len, size_t bci);

/* Length in bytes of the instruction at CODE[BCI] (tableswitch,
 * lookupswitch and wide included), or a negative jpb_error when it is
 * undefined or runs past LEN.  A fixed length from the table inline. */
static inline int jbc_length(const uint8_t *code, size_t len, size_t bci)
{
	unsigned l = bci < len ? jbc_table[code[bci]].length : 0;
	return l && l <= len - bci ? (int)l : jbc_length_any(code, len, bci);
}

/* Branch target of the goto/if/jsr at CODE[BCI], or -1 if OP has none or
 * the operand runs past LEN. */
long jbc_branch_target(const uint8_t *code, size_t len, size_t bci);

/* Does HotSpot's rewriter fuse opcode OP with the NEXT one into one
 * interpreter dispatch: aload_0 + getfield (fast_Xaccess_0), iload +
 * iload (fast_iload2), iload + caload (fast_icaload)?  JVMTI single
 * stepping then posts the first alone. */
static inline int jbc_fused_pair(uint8_t op, uint8_t next)
{
	return op == 0x2a ? next == 0xb4 : op == 0x15 && (next == 0x15 || next == 0x34);
}

#define JBC_WIDE 0xc4
#define JBC_TABLESWITCH 0xaa
#define JBC_LOOKUPSWITCH 0xab

/* The signed big-endian 32-bit word at P (class files and operands are
 * big-endian); unsigned fields cast it.  No bounds: P[0..3] must be
 * there. */
static inline int32_t jbc_be32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
			 (uint32_t)p[2] << 8 | p[3]);
}

/* Where the operands of the tableswitch or lookupswitch at BCI start:
 * after the opcode and 0-3 pad bytes, at the next multiple of 4 of the
 * code (the default's offset, then low and high or npairs). */
static inline size_t jbc_switch_operands(size_t bci)
{
	return (bci + 4) & ~(size_t)3;
}

/* A view of the tableswitch or lookupswitch at BCI (JVMS §6.5): its
 * default target and NCASES cases (high - low + 1, or npairs), case K
 * (0 <= K < NCASES) with a key (a tableswitch's low + K, a lookupswitch's
 * pair K's) and a target.  Targets are bcis, BCI plus the signed offset,
 * possibly outside the code: the helpers do not check them.  Nor do they
 * check bounds: they assume that jbc_length accepted the instruction at
 * BCI (it fits in the code, high >= low, npairs >= 0), which bounds every
 * read below; jbc_length's callers (jcfg_check, the CFG's and the
 * resynchronisation's walks) do that check first. */
struct jbc_switch {
	const uint8_t *ops; /* the operands, at jbc_switch_operands(bci) */
	size_t bci;
	uint32_t ncases;
	uint8_t step;       /* bytes a case: 4 (offsets), 8 (key, offset) */
};

/* The switch at CODE[BCI], under the assumption above. */
static inline struct jbc_switch jbc_switch_at(const uint8_t *code, size_t bci)
{
	const uint8_t *ops = code + jbc_switch_operands(bci);
	int table = code[bci] == JBC_TABLESWITCH;
	uint32_t n = table ? (uint32_t)jbc_be32(ops + 8) -
				     (uint32_t)jbc_be32(ops + 4) + 1 :
			     (uint32_t)jbc_be32(ops + 4);
	return (struct jbc_switch){ ops, bci, n, (uint8_t)(table ? 4 : 8) };
}

static inline int64_t jbc_switch_default(const struct jbc_switch *s)
{
	return (int64_t)s->bci + jbc_be32(s->ops);
}

/* Case K's key (K < NCASES). */
static inline int32_t jbc_switch_key(const struct jbc_switch *s, uint32_t k)
{
	return s->step == 4 ? (int32_t)((uint32_t)jbc_be32(s->ops + 4) + k) :
			      jbc_be32(s->ops + 8 + 8 * (size_t)k);
}

/* Case K's target (K < NCASES). */
static inline int64_t jbc_switch_target(const struct jbc_switch *s, uint32_t k)
{
	return (int64_t)s->bci + jbc_be32(s->ops + 12 + s->step * (size_t)k);
}

/* Target J of the NCASES + 1 in the order a CFG lists a switch's
 * successors: the default for J = 0, then case J - 1's. */
static inline int64_t jbc_switch_succ(const struct jbc_switch *s, uint32_t j)
{
	return j ? jbc_switch_target(s, j - 1) : jbc_switch_default(s);
}

#endif /* JPBPF_BYTECODES_H */
