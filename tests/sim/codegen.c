// SPDX-License-Identifier: MIT
/* A tiny x86-64 assembler: just the encodings the code model uses. */
#include "codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static size_t add_insn(struct cg_region *r, const uint8_t *b, size_t n,
		       uint8_t kind, uint8_t role, uint64_t target)
{
	if (r->ninsns == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->insns = xrealloc(r->insns, r->cap * sizeof(*r->insns));
	}
	struct cg_insn *in = &r->insns[r->ninsns];
	in->ip = cg_here(r);
	in->target = target;
	in->size = (uint8_t)n;
	in->kind = kind;
	in->role = role;
	if (jpb_buf_put(&r->bytes, b, n))
		die_nomem();
	return r->ninsns++;
}

uint64_t cg_here(const struct cg_region *r)
{
	return r->base + r->bytes.len;
}

/* A handful of ordinary instructions of different lengths, so codelets
 * have realistic sizes and the decoder must really walk them. */
size_t cg_plain(struct cg_region *r, unsigned variant)
{
	static const struct {
		uint8_t n, b[8];
	} v[] = {
		{ 3, { 0x48, 0x89, 0xc1 } },             /* mov %rax,%rcx */
		{ 4, { 0x49, 0x83, 0xc5, 0x01 } },       /* add $1,%r13 */
		{ 5, { 0x41, 0x0f, 0xb6, 0x5d, 0x00 } }, /* movzbl 0(%r13),%ebx */
		{ 4, { 0x48, 0x8b, 0x45, 0xf8 } },       /* mov -8(%rbp),%rax */
		{ 1, { 0x50 } },                         /* push %rax */
		{ 1, { 0x58 } },                         /* pop %rax */
		{ 3, { 0x48, 0x39, 0xc8 } },             /* cmp %rcx,%rax */
		{ 2, { 0x85, 0xc0 } },                   /* test %eax,%eax */
		{ 4, { 0x48, 0x83, 0xec, 0x30 } },       /* sub $0x30,%rsp */
		{ 4, { 0x48, 0x83, 0xc4, 0x30 } },       /* add $0x30,%rsp */
		{ 1, { 0x55 } },                         /* push %rbp */
		{ 1, { 0x5d } },                         /* pop %rbp */
		{ 3, { 0x48, 0x89, 0xe5 } },             /* mov %rsp,%rbp */
		{ 4, { 0x41, 0x8b, 0x04, 0x24 } },       /* mov (%r12),%eax */
		{ 3, { 0x41, 0x85, 0x02 } },             /* test %eax,(%r10) poll */
		{ 4, { 0x48, 0x8d, 0x04, 0x08 } },       /* lea (%rax,%rcx),%rax */
	};
	unsigned i = variant % (sizeof(v) / sizeof(v[0]));
	return add_insn(r, v[i].b, v[i].n, CK_PLAIN, CR_NONE, 0);
}

size_t cg_jcc(struct cg_region *r, uint8_t role)
{
	return cg_jcc_cc(r, 0x5, role); /* jne rel32 */
}

size_t cg_jcc_cc(struct cg_region *r, uint8_t cc, uint8_t role)
{
	uint8_t b[6] = { 0x0f, (uint8_t)(0x80 | (cc & 0xf)), 0, 0, 0, 0 };
	return add_insn(r, b, 6, CK_JCC, role, 0);
}

size_t cg_jcc8(struct cg_region *r, uint8_t cc, uint8_t role, uint64_t target)
{
	int64_t rel = (int64_t)(target - (cg_here(r) + 2));
	if (rel != (int8_t)rel)
		die("codegen: short branch at %#llx cannot reach %#llx",
		    (unsigned long long)cg_here(r), (unsigned long long)target);
	uint8_t b[2] = { (uint8_t)(0x70 | (cc & 0xf)), (uint8_t)(int8_t)rel };
	return add_insn(r, b, 2, CK_JCC, role, target);
}

size_t cg_raw(struct cg_region *r, const uint8_t *b, size_t n)
{
	return add_insn(r, b, n, CK_PLAIN, CR_NONE, 0);
}

static void put_rel32(struct cg_region *r, size_t i, uint64_t target)
{
	struct cg_insn *in = &r->insns[i];
	int64_t rel = (int64_t)(target - (in->ip + in->size));
	if (rel != (int32_t)rel)
		die("codegen: branch at %#llx cannot reach %#llx",
		    (unsigned long long)in->ip, (unsigned long long)target);
	uint8_t *p = r->bytes.data + (in->ip - r->base) + in->size - 4;
	jpb_st32(p, (uint32_t)(int32_t)rel);
	in->target = target;
}

void cg_patch(struct cg_region *r, size_t i, uint64_t target)
{
	put_rel32(r, i, target);
}

size_t cg_jmp(struct cg_region *r, uint64_t target)
{
	uint8_t b[5] = { 0xe9 };
	size_t i = add_insn(r, b, 5, CK_JMP, CR_NONE, 0);
	if (target)
		put_rel32(r, i, target);
	return i;
}

/* jmp *(%r10,%rbx,8) for dispatch, jmp *%r11 / *%rbx for adapters,
 * jmp *%r13 for the interpreter's returns (HotSpot pops the return address
 * into r13 and jumps: interpreted returns are never compressed). */
size_t cg_jmp_ind(struct cg_region *r, uint8_t role, unsigned reg)
{
	static const uint8_t disp[] = { 0x41, 0xff, 0x24, 0xda };
	static const uint8_t r11[] = { 0x41, 0xff, 0xe3 };
	static const uint8_t rbx[] = { 0xff, 0xe3 };
	static const uint8_t rcx[] = { 0xff, 0xe1 };
	static const uint8_t r13[] = { 0x41, 0xff, 0xe5 };
	switch (reg) {
	case 4:
		return add_insn(r, r13, sizeof(r13), CK_JMP_IND, role, 0);
	case 0:
		return add_insn(r, disp, sizeof(disp), CK_JMP_IND, role, 0);
	case 1:
		return add_insn(r, r11, sizeof(r11), CK_JMP_IND, role, 0);
	case 2:
		return add_insn(r, rbx, sizeof(rbx), CK_JMP_IND, role, 0);
	default:
		return add_insn(r, rcx, sizeof(rcx), CK_JMP_IND, role, 0);
	}
}

size_t cg_call(struct cg_region *r, uint64_t target, uint8_t role)
{
	uint8_t b[5] = { 0xe8 };
	size_t i = add_insn(r, b, 5, CK_CALL, role, 0);
	put_rel32(r, i, target);
	return i;
}

size_t cg_call_ind(struct cg_region *r, uint8_t role)
{
	uint8_t b[3] = { 0x41, 0xff, 0xd3 }; /* call *%r11 */
	return add_insn(r, b, 3, CK_CALL_IND, role, 0);
}

size_t cg_ret(struct cg_region *r, uint8_t role)
{
	uint8_t b[1] = { 0xc3 };
	return add_insn(r, b, 1, CK_RET, role, 0);
}

/* movabs $addr,%rax; push %rax */
size_t cg_push_addr(struct cg_region *r, uint64_t addr)
{
	uint8_t b[10] = { 0x48, 0xb8 };
	jpb_st64(b + 2, addr);
	add_insn(r, b, 10, CK_PLAIN, CR_NONE, 0);
	uint8_t p[1] = { 0x50 };
	return add_insn(r, p, 1, CK_PLAIN, CR_PUSH_RET, addr);
}

long cg_find(const struct cg_region *r, uint64_t ip)
{
	size_t lo = 0, hi = r->ninsns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->insns[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->ninsns && r->insns[lo].ip == ip ? (long)lo : -1;
}

void cg_region_fini(struct cg_region *r)
{
	jpb_buf_fini(&r->bytes);
	free(r->insns);
	memset(r, 0, sizeof(*r));
}
