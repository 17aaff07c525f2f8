// SPDX-License-Identifier: MIT
/* The simulated HotSpot's code layout (see docs/SIMULATOR.md). */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"
#include "util.h"

/* Plain-instruction variants of codegen.c, by what they stand for. */
enum {
	V_MOV = 0, V_ADD13 = 1, V_MOVZBL = 2, V_LOAD = 3, V_PUSH = 4,
	V_POP = 5, V_CMP = 6, V_TEST = 7, V_SUBSP = 8, V_ADDSP = 9,
	V_PUSHBP = 10, V_POPBP = 11, V_MOVBP = 12, V_LDR12 = 13, V_POLL = 14,
	V_LEA = 15,
};

static void add_piece(struct interp *in, uint8_t kind, uint8_t tos,
		      uint16_t arg, uint64_t start, uint64_t end,
		      const char *name)
{
	GROW(in->pieces, in->npieces, in->cpieces);
	in->pieces[in->npieces++] =
		(struct piece){ kind, tos, arg, start, end, name };
}

/* HotSpot caches the top of stack in a register; a codelet's entry depends
 * on whether its predecessor left a value there.  Two states suffice for
 * the decoder's purpose: codelets have two entry points. */
static int pushes(int op)
{
	return (op >= 0x01 && op <= 0x35) || (op >= 0x59 && op <= 0x98 && op != 0x84) ||
	       op == 0xb2 || op == 0xb4 || op == 0xbb || op == 0xbc ||
	       op == 0xbd || op == 0xbe || op == 0xc0 || op == 0xc1 || op == 0xc5;
}

static int consumes(int op)
{
	return (op >= 0x2e && op <= 0x58) || (op >= 0x60 && op <= 0xb0 && op != 0x84 &&
					      op != 0xa7 && op != 0xa8 && op != 0xa9) ||
	       op == 0xb3 || op == 0xb4 || op == 0xb5 || op == 0xbe || op == 0xbf ||
	       op == 0xc0 || op == 0xc1 || op == 0xc2 || op == 0xc3 || op == 0xc6 ||
	       op == 0xc7;
}

uint64_t interp_codelet(const struct interp *in, int prev_op, uint8_t op)
{
	int cached = prev_op >= 0 && pushes(prev_op);
	return cached == consumes(op) ? in->tep[op] : in->vep[op];
}

uint64_t interp_ret_entry(const struct interp *in, unsigned invoke_len)
{
	return invoke_len == 5 ? in->ret_entry5 : in->ret_entry3;
}

int interp_method_kind(const struct sim_method *m)
{
	if (m->access & ACC_NATIVE)
		return MK_NATIVE;
	return (m->access & ACC_SYNCHRONIZED) ? MK_SYNC : MK_NORMAL;
}

static void dispatch_tail(struct cg_region *r)
{
	cg_plain(r, V_MOVZBL);
	cg_jmp_ind(r, CR_DISPATCH, 0);
}

/* HotSpot's generate_normal_entry zeroes the locals beyond the
 * parameters (edx = max_locals - size_of_parameters) before it builds the
 * frame and checks the invocation counter; the bytes are JDK 17's
 * (-XX:+PrintInterpreter), whose jle has a rel32 (JDK 25: 7e 09). */
static void locals_loop(struct cg_region *r)
{
	static const uint8_t lea[] = { 0x4c, 0x8d, 0x74, 0xcc, 0xf8 }; /* lea -8(%rsp,%rcx,8),%r14 */
	static const uint8_t test[] = { 0x85, 0xd2 };                   /* test %edx,%edx */
	static const uint8_t push0[] = { 0x68, 0, 0, 0, 0 };            /* push $0 */
	static const uint8_t dec[] = { 0xff, 0xca };                    /* dec %edx */
	cg_raw(r, lea, sizeof(lea));
	cg_raw(r, test, sizeof(test));
	size_t skip = cg_jcc_cc(r, 0xe, CR_LOCALS_SKIP); /* jle exit */
	uint64_t loop = cg_here(r);
	cg_raw(r, push0, sizeof(push0));
	cg_raw(r, dec, sizeof(dec));
	cg_jcc8(r, 0xf, CR_LOCALS_LOOP, loop); /* jg loop */
	cg_patch(r, skip, cg_here(r));
}

static void build_entries(struct interp *in)
{
	static const char *names[MK_N] = { "zerolocals", "zerolocals_synchronized",
					   "native", "intrinsic" };
	struct cg_region *r = &in->r;
	for (int k = 0; k < MK_N; k++) {
		uint64_t start = cg_here(r);
		in->entry[k] = start;
		if (k == MK_NORMAL || k == MK_SYNC)
			locals_loop(r);
		cg_plain(r, V_PUSHBP);
		cg_plain(r, V_MOVBP);
		cg_plain(r, V_SUBSP);
		if (k == MK_INTRINSIC) {
			cg_plain(r, V_LEA);
			cg_plain(r, V_ADDSP);
			cg_plain(r, V_POPBP);
			cg_jmp_ind(r, CR_RETURN, 4);
		} else if (k == MK_NATIVE) {
			cg_call(r, RT_NATIVE, CR_RT);
			in->native_after = cg_here(r);
			cg_plain(r, V_ADDSP);
			cg_plain(r, V_POPBP);
			cg_jmp_ind(r, CR_RETURN, 4);
		} else {
			cg_plain(r, V_LOAD);
			cg_plain(r, V_ADD13); /* invocation counter */
			cg_plain(r, V_CMP);
			size_t ovf = cg_jcc(r, CR_CHECK);
			uint64_t cont = cg_here(r);
			if (k == MK_SYNC)
				cg_plain(r, V_LDR12); /* lock the receiver */
			dispatch_tail(r);
			cg_patch(r, ovf, cg_here(r));
			cg_call(r, RT_COMPILE, CR_RT); /* request a compile */
			cg_jmp(r, cont);
		}
		add_piece(in, CP_METHOD_ENTRY, 0, (uint16_t)k, start, cg_here(r),
			  names[k]);
	}
}

static uint64_t small_stub(struct interp *in, const char *name, unsigned v1,
			   unsigned v2, unsigned arg)
{
	uint64_t start = cg_here(&in->r);
	cg_plain(&in->r, v1);
	cg_plain(&in->r, v2);
	dispatch_tail(&in->r);
	add_piece(in, CP_INTERP_STUB, 0, (uint16_t)arg, start, cg_here(&in->r),
		  name);
	return start;
}

/* The end of a taken branch: with OSR, HotSpot's back-edge counter
 * check, whose overflow path asks the runtime for compiled code and
 * migrates the frame into it at the branch target. */
static void taken_tail(struct interp *in)
{
	struct cg_region *r = &in->r;
	if (!in->osr) {
		dispatch_tail(r);
		return;
	}
	cg_plain(r, V_CMP);
	size_t ovf = cg_jcc(r, CR_CHECK);
	dispatch_tail(r);
	cg_patch(r, ovf, cg_here(r));
	cg_call(r, RT_COMPILE, CR_RT);
	cg_jmp_ind(r, CR_ADAPT, 1);
}

static void codelet_body(struct interp *in, uint8_t op)
{
	struct cg_region *r = &in->r;
	const struct jbc_info *ji = jbc_info(op);
	unsigned nbody = 1 + op % 3;
	for (unsigned k = 0; k < nbody; k++)
		cg_plain(r, (op * 7u + k * 5u) % 16u);
	switch (ji->kind) {
	case JBC_COND_BRANCH: {
		cg_plain(r, V_CMP);
		size_t j = cg_jcc(r, CR_BRANCH);
		cg_plain(r, V_ADD13);
		dispatch_tail(r);
		cg_patch(r, j, cg_here(r));
		cg_plain(r, V_LOAD); /* profile: taken count */
		cg_plain(r, V_ADD13);
		taken_tail(in);
		break;
	}
	case JBC_GOTO:
	case JBC_JSR:
		cg_plain(r, V_LOAD); /* backedge counter */
		cg_plain(r, V_ADD13);
		taken_tail(in);
		break;
	case JBC_SWITCH:
	case JBC_RET:
		cg_plain(r, V_CMP);
		cg_plain(r, V_LEA);
		dispatch_tail(r);
		break;
	case JBC_INVOKE_VIRTUAL:
	case JBC_INVOKE_SPECIAL:
	case JBC_INVOKE_STATIC:
	case JBC_INVOKE_INTERFACE:
	case JBC_INVOKE_DYNAMIC:
		cg_plain(r, V_LDR12); /* resolved cache entry */
		cg_push_addr(r, interp_ret_entry(in, ji->length));
		cg_jmp_ind(r, CR_INVOKE, 3);
		break;
	case JBC_RETURN: /* remove_activation; jmp *%r13 */
		cg_plain(r, V_MOV);
		cg_plain(r, V_POPBP);
		cg_jmp_ind(r, CR_RETURN, 4);
		break;
	case JBC_ATHROW:
		cg_plain(r, V_MOV);
		cg_call(r, RT_THROW, CR_RT);
		break;
	default:
		dispatch_tail(r);
		break;
	}
}

static void build_stubs(struct interp *in)
{
	struct cg_region *s = &in->s;
	s->base = CG_STUBS_BASE;
	s->live = 1;
	in->call_stub = cg_here(s);
	cg_plain(s, V_PUSHBP);
	cg_plain(s, V_MOVBP);
	cg_plain(s, V_LOAD);
	cg_call_ind(s, CR_INVOKE);
	in->call_stub_ret = cg_here(s);
	cg_plain(s, V_MOV);
	cg_plain(s, V_POPBP);
	cg_call(s, RT_EXIT, CR_RT);
	add_piece(in, CP_STUB, 0, 0, in->call_stub, cg_here(s), "call_stub");
	in->i2c = cg_here(s);
	cg_plain(s, V_MOV);
	cg_plain(s, V_LEA);
	cg_jmp_ind(s, CR_ADAPT, 1);
	add_piece(in, CP_STUB, 0, 1, in->i2c, cg_here(s), "i2c_adapter");
	in->c2i = cg_here(s);
	cg_plain(s, V_PUSH);
	cg_plain(s, V_MOV);
	cg_plain(s, V_MOVZBL);
	cg_jmp_ind(s, CR_ADAPT, 2);
	add_piece(in, CP_STUB, 0, 2, in->c2i, cg_here(s), "c2i_adapter");
}

void interp_build(struct interp *in, int osr)
{
	memset(in, 0, sizeof(*in));
	in->osr = osr;
	in->r.base = CG_INTERP_BASE;
	in->r.live = 1;
	build_entries(in);
	in->ret_entry3 = small_stub(in, "return_entry_3", V_MOV, V_ADD13, 3);
	in->ret_entry5 = small_stub(in, "return_entry_5", V_LOAD, V_ADD13, 5);
	in->exc_cont = small_stub(in, "exception_continuation", V_LDR12, V_MOV, 0);
	in->deopt_cont = small_stub(in, "deopt_continuation", V_LEA, V_LOAD, 1);
	for (int op = 0; op < 256; op++) {
		if (jbc_info((uint8_t)op)->kind == JBC_INVALID)
			continue;
		in->vep[op] = cg_here(&in->r);
		cg_plain(&in->r, consumes(op) ? V_POP : V_PUSH);
		in->tep[op] = cg_here(&in->r);
		codelet_body(in, (uint8_t)op);
		const char *nm = jbc_name((uint8_t)op);
		add_piece(in, CP_CODELET, 0, (uint16_t)op, in->vep[op], in->tep[op], nm);
		add_piece(in, CP_CODELET, 1, (uint16_t)op, in->tep[op],
			  cg_here(&in->r), nm);
	}
	build_stubs(in);
}

void interp_fini(struct interp *in)
{
	cg_region_fini(&in->r);
	cg_region_fini(&in->s);
	free(in->pieces);
	memset(in, 0, sizeof(*in));
}
