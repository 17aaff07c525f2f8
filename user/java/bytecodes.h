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

#define JBC_WIDE 0xc4
#define JBC_TABLESWITCH 0xaa
#define JBC_LOOKUPSWITCH 0xab

#endif /* JPBPF_BYTECODES_H */
