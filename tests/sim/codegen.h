/* SPDX-License-Identifier: MIT */
/*
 * The simulated JVM's machine code: real x86-64 bytes laid out like
 * HotSpot's (template interpreter, adapters, stubs, compiled methods), and
 * beside every instruction what the executor needs to walk it: size, kind,
 * direct target and a role that says which Java-level decision drives it.
 */
#ifndef SIM_CODEGEN_H
#define SIM_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"

/* Address space (all within +-2 GiB so rel32 calls reach the runtime). */
#define CG_INTERP_BASE 0x00007f3a10000000ull
#define CG_STUBS_BASE 0x00007f3a10100000ull
#define CG_CACHE_BASE 0x00007f3a10400000ull
#define CG_CACHE_SIZE (48ull << 20)
#define CG_RUNTIME_BASE 0x00007f3a40000000ull /* libjvm.so: never traced */

enum cg_kind {
	CK_PLAIN,
	CK_JCC,      /* conditional: TNT bit */
	CK_JMP,      /* direct jump: no packet */
	CK_JMP_IND,  /* indirect jump: TIP */
	CK_CALL,     /* direct call: no packet, pushes */
	CK_CALL_IND, /* indirect call: TIP, pushes */
	CK_RET,      /* return: TIP or compressed TNT */
};

enum cg_role {
	CR_NONE,
	CR_DISPATCH,  /* interpreter dispatch: target = next bytecode's codelet */
	CR_BRANCH,    /* jcc taken iff the bytecode branch is taken */
	CR_CHECK,     /* jcc taken iff a guard fails (deopt) */
	CR_INVOKE,    /* transfer to a callee's entry */
	CR_RETURN,    /* out of a Java frame: ret, or jmp *%r13 to the popped
		       * return address */
	CR_RT,        /* direct call into the untraced runtime */
	CR_ADAPT,     /* adapter jump (i2c/c2i): target given by the callee */
	CR_SWITCH,    /* compiled tableswitch: target = next block */
	CR_PUSH_RET,  /* interpreter pushes its return entry (data) */
	CR_FAULT,     /* first memory access: implicit exceptions fault here */
	CR_LOCALS_SKIP, /* method entry's jle: taken iff the method has no
			 * locals beyond its parameters */
	CR_LOCALS_LOOP, /* method entry's jg: taken while locals remain to
			 * be zeroed */
};

struct cg_insn {
	uint64_t ip;
	uint64_t target; /* direct branches; CR_PUSH_RET: the pushed address */
	uint8_t size;
	uint8_t kind;
	uint8_t role;
};

/* What a piece of code is, for the jvm metadata. */
enum cg_piece_kind {
	CP_CODELET,     /* interpreter template for (opcode, tos) */
	CP_METHOD_ENTRY,/* interpreter method entry of a kind */
	CP_INTERP_STUB, /* other interpreter code: return/exception/deopt entries */
	CP_STUB,        /* adapters, call stub */
	CP_NMETHOD,     /* a compiled method */
};

struct cg_region;

/* A contiguous range of code with its instructions sorted by address. */
struct cg_region {
	uint64_t base;
	struct jpb_buf bytes;
	struct cg_insn *insns;
	size_t ninsns, cap;
	int live; /* 0 once an nmethod is unloaded */
};

/* Append to R; each returns the new instruction's index. */
size_t cg_plain(struct cg_region *r, unsigned variant);
size_t cg_jcc(struct cg_region *r, uint8_t role);        /* target later */
/* jCC rel32 (0f 80+CC) with its target later; jCC rel8 (70+CC) to TARGET,
 * which must be within reach. */
size_t cg_jcc_cc(struct cg_region *r, uint8_t cc, uint8_t role);
size_t cg_jcc8(struct cg_region *r, uint8_t cc, uint8_t role, uint64_t target);
/* An ordinary instruction given by its bytes (no transfer). */
size_t cg_raw(struct cg_region *r, const uint8_t *b, size_t n);
size_t cg_jmp(struct cg_region *r, uint64_t target);
/* reg: 0 (%r10,%rbx,8), 1 %r11, 2 %rbx, 3 %rcx, 4 %r13 */
size_t cg_jmp_ind(struct cg_region *r, uint8_t role, unsigned reg);
size_t cg_call(struct cg_region *r, uint64_t target, uint8_t role);
size_t cg_call_ind(struct cg_region *r, uint8_t role);
size_t cg_ret(struct cg_region *r, uint8_t role);
size_t cg_push_addr(struct cg_region *r, uint64_t addr);
/* Patch the rel32 of a jcc/jmp at index I to TARGET. */
void cg_patch(struct cg_region *r, size_t i, uint64_t target);
uint64_t cg_here(const struct cg_region *r);
void cg_region_fini(struct cg_region *r);

/* Index of the instruction at IP in R, or -1. */
long cg_find(const struct cg_region *r, uint64_t ip);

#endif
