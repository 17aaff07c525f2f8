/* SPDX-License-Identifier: MIT */
/*
 * The simulated HotSpot's code: the template interpreter, the stubs and
 * adapters, and compiled methods (nmethods) with their inline trees and
 * exact pc -> (method, bci)* maps.
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include "codegen.h"
#include "truth_read.h"

/* Untraced runtime entry points (libjvm.so). */
#define RT_THROW (CG_RUNTIME_BASE + 0x1000)
#define RT_NATIVE (CG_RUNTIME_BASE + 0x2000)
#define RT_TRAP (CG_RUNTIME_BASE + 0x3000)
#define RT_EXIT (CG_RUNTIME_BASE + 0x4000)
#define RT_COMPILE (CG_RUNTIME_BASE + 0x5000)

/* MK_INTRINSIC: a callee the truth shows no events for (HotSpot's
 * intrinsic method entries, e.g. java.lang.Math, CRC32): it computes and
 * returns without a frame. */
enum { MK_NORMAL, MK_SYNC, MK_NATIVE, MK_INTRINSIC, MK_N };

/* A named piece of generated code, for the jvm metadata stream. */
struct piece {
	uint8_t kind;  /* enum cg_piece_kind */
	uint8_t tos;   /* CP_CODELET: 0 = vtos entry, 1 = cached-TOS entry */
	uint16_t arg;  /* opcode, method kind or stub number */
	uint64_t start, end;
	const char *name;
};

struct interp {
	struct cg_region r;
	uint64_t vep[256], tep[256];
	uint64_t entry[MK_N];
	uint64_t native_after; /* instruction after the native call */
	uint64_t ret_entry3, ret_entry5, exc_cont, deopt_cont;
	struct cg_region s; /* stubs: call stub, i2c, c2i */
	int osr; /* back-edge checks in branch codelets (on-stack replacement) */
	uint64_t call_stub, call_stub_ret, i2c, c2i;
	struct piece *pieces;
	size_t npieces, cpieces;
};

/* OSR: taken branches check the back-edge counter; on overflow they call
 * the runtime and jump into the compiled method (an indirect jump). */
void interp_build(struct interp *in, int osr);
void interp_fini(struct interp *in);
/* The codelet entry for OP after an instruction that left PREV_OP's
 * result state (HotSpot's TOS caching, simplified to two states). */
uint64_t interp_codelet(const struct interp *in, int prev_op, uint8_t op);
int interp_method_kind(const struct sim_method *m);
uint64_t interp_ret_entry(const struct interp *in, unsigned invoke_len);

/* ---- compiled methods ---- */

struct scope {
	uint32_t method_id;
	int32_t parent;     /* -1 for the root */
	uint16_t caller_bci;
	uint32_t code_len;
	int32_t *block;     /* bci -> block index, -1 */
	int32_t *child;     /* bci -> inlined callee scope, -1 */
};

struct nblock {
	uint32_t scope;
	uint16_t bci;
	uint8_t safepoint; /* holds a call or a safepoint poll */
	uint64_t start, end;
};

struct nmethod {
	uint32_t id, method_id;
	struct cg_region r;
	uint64_t entry;
	struct scope *scopes;
	size_t nscopes, cscopes;
	struct nblock *blocks;
	size_t nblocks, cblocks;
	int entrant;
	int freed;                   /* unloaded: its range may be reused */
	uint64_t load_ns;
	uint64_t unload_ns;          /* when freed (valid if freed) */
	uint64_t load_seq, unload_seq; /* order of loads and frees */
	uint32_t level;              /* compile number for this method */
};

/* What the compiler knows about the profile. */
struct jit_profile_view {
	void *ctx;
	/* taken/not-taken counts of the branch at (method, bci) */
	void (*branch)(void *ctx, uint32_t m, uint16_t bci, uint64_t *taken,
		       uint64_t *not_taken);
	/* the single callee seen at (method, bci), 0 if none or several */
	uint32_t (*mono_callee)(void *ctx, uint32_t m, uint16_t bci);
	unsigned max_inline_size, max_inline_depth;
};

/* Compile M at BASE; the caller places it in the code cache. */
void nmethod_compile(struct nmethod *nm, const struct truth *t,
		     const struct sim_method *m, uint64_t base,
		     const struct jit_profile_view *pv);
void nmethod_fini(struct nmethod *nm);
/* Block of (scope, bci) or NULL. */
const struct nblock *nmethod_block(const struct nmethod *nm, uint32_t scope,
				   uint16_t bci);

#endif
