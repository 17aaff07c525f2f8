// SPDX-License-Identifier: MIT
/*
 * HotSpot's zerolocals method entry (generate_normal_entry) pushes a zero
 * for each local that is not a parameter, in a loop of its own:
 *
 *	test edx, edx; jle exit; loop: push 0; dec edx; jg loop; exit:
 *
 * so the times its jg runs during one entry tell the entered method's
 * count of such locals (DECODER.md, "Entry locals").  This finds that jg
 * in a codelet's bytes, with Capstone: the first backward conditional
 * jump must be a short loop with a push in it, or the codelet's layout is
 * not the one we know and nothing is found.
 */
#include <capstone/capstone.h>

#include "decode_int.h"

/* A loop of at most this many instructions, its jcc included. */
#define LOOP_MAX_INSNS 4

static int is_jcc(csh h, const cs_insn *in)
{
	return cs_insn_group(h, in, CS_GRP_JUMP) && in->id != X86_INS_JMP &&
	       in->id != X86_INS_LJMP && in->detail->x86.op_count == 1 &&
	       in->detail->x86.operands[0].type == X86_OP_IMM;
}

/* Whether [TARGET, JCC] holds few instructions, one a push, starting at an
 * instruction boundary: INS[0..N) is the codelet up to the jcc. */
static int short_loop(const cs_insn *ins, size_t n, uint64_t target)
{
	size_t first = n;
	while (first > 0 && ins[first - 1].address >= target)
		first--;
	if (first == n || ins[first].address != target || n - first > LOOP_MAX_INSNS)
		return 0;
	for (size_t i = first; i < n; i++)
		if (ins[i].id == X86_INS_PUSH)
			return 1;
	return 0;
}

int jpd_entry_loop(const uint8_t *code, size_t len, uint64_t addr, uint64_t *jcc)
{
	csh h;
	*jcc = 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return jpb_err_internal;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *ins = NULL;
	/* stops at the first byte that is no instruction: the loop comes
	 * early in the codelet, before any data */
	size_t n = cs_disasm(h, code, len, addr, 0, &ins);
	for (size_t i = 0; i < n; i++) {
		if (!is_jcc(h, &ins[i]))
			continue;
		uint64_t t = (uint64_t)ins[i].detail->x86.operands[0].imm;
		if (t >= ins[i].address || t < addr)
			continue;
		if (short_loop(ins, i + 1, t))
			*jcc = ins[i].address;
		break;
	}
	if (n)
		cs_free(ins, n);
	cs_close(&h);
	return 0;
}
