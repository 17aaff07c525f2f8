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

/* The last instructions before a jcc, as a ring: enough to tell whether
 * the loop it closes is short and pushes. */
struct recent {
	uint64_t addr[LOOP_MAX_INSNS];
	uint8_t push[LOOP_MAX_INSNS];
	unsigned n; /* instructions seen */
};

/* Whether the jcc just added to R closes a loop from TARGET of at most
 * LOOP_MAX_INSNS instructions (an instruction starts at TARGET) with a
 * push in it. */
static int short_loop(const struct recent *r, uint64_t target)
{
	int push = 0;
	for (unsigned k = 1; k <= LOOP_MAX_INSNS && k <= r->n; k++) {
		unsigned i = (r->n - k) % LOOP_MAX_INSNS;
		push |= r->push[i];
		if (r->addr[i] == target)
			return push;
		if (r->addr[i] < target)
			return 0;
	}
	return 0;
}

int jpd_entry_loop(const uint8_t *code, size_t len, uint64_t addr, uint64_t *jcc)
{
	csh h;
	*jcc = 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return jpb_err_internal;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *in = cs_malloc(h);
	struct recent r = { .n = 0 };
	uint64_t at = addr;
	/* stops at the first byte that is no instruction: the loop comes
	 * early in the codelet, before any data */
	while (in && cs_disasm_iter(h, &code, &len, &at, in)) {
		unsigned i = r.n++ % LOOP_MAX_INSNS;
		r.addr[i] = in->address;
		r.push[i] = in->id == X86_INS_PUSH;
		if (!is_jcc(h, in))
			continue;
		uint64_t t = (uint64_t)in->detail->x86.operands[0].imm;
		if (t >= in->address || t < addr)
			continue;
		if (short_loop(&r, t))
			*jcc = in->address;
		break;
	}
	int rc = in ? 0 : jpb_err_nomem;
	if (in)
		cs_free(in, 1);
	cs_close(&h);
	return rc;
}
