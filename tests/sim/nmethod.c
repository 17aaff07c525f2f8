// SPDX-License-Identifier: MIT
/* Compiled methods: one block of x86 code per bytecode, callees inlined
 * where the profile is monomorphic and the callee small, uncommon traps
 * for branch directions and receivers the profile never saw. */
#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"
#include "model.h"
#include "util.h"

enum { V_MOV = 0, V_CMP = 6, V_SUBSP = 8, V_ADDSP = 9, V_PUSHBP = 10,
       V_POPBP = 11, V_LDR12 = 13, V_POLL = 14, V_LEA = 15 };

#define MAX_SCOPES 64
#define TRAP_SCOPE UINT32_MAX

struct fixup {
	size_t insn;
	uint32_t scope; /* TRAP_SCOPE: to a fresh uncommon-trap stub */
	uint16_t bci;
};

struct cctx {
	struct nmethod *nm;
	const struct truth *t;
	const struct jit_profile_view *pv;
	struct fixup *fx;
	size_t nfx, cfx;
};

static void fixup(struct cctx *c, size_t insn, uint32_t scope, uint16_t bci)
{
	GROW(c->fx, c->nfx, c->cfx);
	c->fx[c->nfx++] = (struct fixup){ insn, scope, bci };
}

static uint32_t new_scope(struct nmethod *nm, const struct sim_method *m,
			  int32_t parent, uint16_t caller_bci)
{
	GROW(nm->scopes, nm->nscopes, nm->cscopes);
	struct scope *s = &nm->scopes[nm->nscopes];
	s->method_id = m->id;
	s->parent = parent;
	s->caller_bci = caller_bci;
	s->code_len = m->code_len;
	size_t n = m->code_len ? m->code_len : 1;
	s->block = xrealloc(NULL, n * sizeof(int32_t));
	s->child = xrealloc(NULL, n * sizeof(int32_t));
	for (size_t i = 0; i < n; i++)
		s->block[i] = s->child[i] = -1;
	return (uint32_t)nm->nscopes++;
}

static int in_chain(const struct nmethod *nm, int32_t scope, uint32_t mid)
{
	for (; scope >= 0; scope = nm->scopes[scope].parent)
		if (nm->scopes[scope].method_id == mid)
			return 1;
	return 0;
}

static unsigned scope_depth(const struct nmethod *nm, int32_t scope)
{
	unsigned d = 0;
	for (; scope >= 0; scope = nm->scopes[scope].parent)
		d++;
	return d;
}

/* Whether the call at (scope, bci) is inlined, and into which callee. */
static const struct sim_method *inline_target(struct cctx *c, uint32_t scope,
					      uint16_t bci)
{
	struct nmethod *nm = c->nm;
	uint32_t mid = nm->scopes[scope].method_id;
	uint32_t callee = c->pv->mono_callee(c->pv->ctx, mid, bci);
	const struct sim_method *cm = truth_method(c->t, callee);
	if (!cm || !cm->code_len || (cm->access & (ACC_NATIVE | ACC_SYNCHRONIZED)))
		return NULL;
	if (cm->code_len > c->pv->max_inline_size ||
	    scope_depth(nm, (int32_t)scope) > c->pv->max_inline_depth ||
	    in_chain(nm, (int32_t)scope, callee) || nm->nscopes >= MAX_SCOPES)
		return NULL;
	return cm;
}

static void emit_scope(struct cctx *c, uint32_t scope);

/* The bytecode being emitted calls out or polls: HotSpot records a pc
 * there even without DebugNonSafepoints. */
static void mark_safepoint(struct nmethod *nm)
{
	nm->blocks[nm->nblocks - 1].safepoint = 1;
}

static void emit_branch(struct cctx *c, uint32_t scope, uint32_t mid,
			const struct sim_method *m, uint16_t bci)
{
	struct cg_region *r = &c->nm->r;
	long target = jbc_branch_target(m->code, m->code_len, bci);
	uint64_t tk = 0, nt = 0;
	c->pv->branch(c->pv->ctx, mid, bci, &tk, &nt);
	cg_plain(r, V_CMP);
	size_t j = cg_jcc(r, CR_BRANCH);
	/* A direction never seen while profiling traps (C2's uncommon trap). */
	if (target < 0 || (tk == 0 && nt > 0))
		fixup(c, j, TRAP_SCOPE, bci);
	else
		fixup(c, j, scope, (uint16_t)target);
	if (nt == 0 && tk > 0)
		fixup(c, cg_jmp(r, 0), TRAP_SCOPE, bci);
}

static void emit_invoke(struct cctx *c, uint32_t scope, uint16_t bci,
			unsigned kind, unsigned len)
{
	struct nmethod *nm = c->nm;
	struct cg_region *r = &nm->r;
	const struct sim_method *cm = inline_target(c, scope, bci);
	if (!cm) {
		mark_safepoint(nm);
		cg_plain(r, V_MOV); /* load the inline cache */
		cg_call_ind(r, CR_INVOKE);
		cg_plain(r, V_LEA); /* use the result */
		return;
	}
	if (kind == JBC_INVOKE_VIRTUAL || kind == JBC_INVOKE_INTERFACE) {
		cg_plain(r, V_CMP); /* receiver class check */
		fixup(c, cg_jcc(r, CR_CHECK), TRAP_SCOPE, bci);
	} else {
		cg_plain(r, V_MOV);
	}
	uint32_t child = new_scope(nm, cm, (int32_t)scope, bci);
	nm->scopes[scope].child[bci] = (int32_t)child;
	nm->blocks[nm->scopes[scope].block[bci]].end = cg_here(r);
	emit_scope(c, child);
	(void)len;
}

static void emit_bytecode(struct cctx *c, uint32_t scope, uint16_t bci,
			  unsigned len)
{
	struct nmethod *nm = c->nm;
	struct cg_region *r = &nm->r;
	uint32_t mid = nm->scopes[scope].method_id;
	const struct sim_method *m = truth_method(c->t, mid);
	uint8_t op = m->code[bci];
	unsigned kind = jbc_info(op)->kind;
	switch (kind) {
	case JBC_COND_BRANCH:
		emit_branch(c, scope, mid, m, bci);
		break;
	case JBC_GOTO:
	case JBC_JSR: {
		long target = jbc_branch_target(m->code, m->code_len, bci);
		if (target <= bci) {
			mark_safepoint(nm);
			cg_plain(r, V_POLL); /* safepoint poll on back edges */
		}
		if (target < 0)
			fixup(c, cg_jmp(r, 0), TRAP_SCOPE, bci);
		else
			fixup(c, cg_jmp(r, 0), scope, (uint16_t)target);
		break;
	}
	case JBC_SWITCH:
	case JBC_RET:
		cg_plain(r, V_LEA);
		cg_jmp_ind(r, CR_SWITCH, 0);
		break;
	case JBC_RETURN:
		if (nm->scopes[scope].parent < 0) {
			mark_safepoint(nm);
			cg_plain(r, V_ADDSP);
			cg_plain(r, V_POPBP);
			cg_plain(r, V_POLL);
			cg_ret(r, CR_RETURN);
		} else {
			const struct scope *s = &nm->scopes[scope];
			const struct sim_method *pm =
				truth_method(c->t, nm->scopes[s->parent].method_id);
			int plen = jbc_length(pm->code, pm->code_len, s->caller_bci);
			cg_plain(r, V_MOV);
			fixup(c, cg_jmp(r, 0), (uint32_t)s->parent,
			      (uint16_t)(s->caller_bci + plen));
		}
		break;
	case JBC_ATHROW:
		mark_safepoint(nm);
		cg_plain(r, V_MOV);
		cg_call(r, RT_THROW, CR_RT);
		break;
	default:
		if (jbc_is_invoke(kind)) {
			emit_invoke(c, scope, bci, kind, len);
			return;
		}
		cg_plain(r, (op * 3u) % 16u == 4 || (op * 3u) % 16u == 5 ? V_LEA
									   : (op * 3u) % 16u);
		break;
	}
}

static void emit_scope(struct cctx *c, uint32_t scope)
{
	struct nmethod *nm = c->nm;
	const struct sim_method *m = truth_method(c->t, nm->scopes[scope].method_id);
	for (uint32_t bci = 0; bci < m->code_len;) {
		int len = jbc_length(m->code, m->code_len, bci);
		if (len <= 0)
			break; /* unparsable tail: never executed by valid code */
		GROW(nm->blocks, nm->nblocks, nm->cblocks);
		nm->scopes[scope].block[bci] = (int32_t)nm->nblocks;
		nm->blocks[nm->nblocks++] =
			(struct nblock){ scope, (uint16_t)bci, 0, cg_here(&nm->r), 0 };
		size_t bi = nm->nblocks - 1;
		emit_bytecode(c, scope, (uint16_t)bci, (unsigned)len);
		if (!nm->blocks[bi].end)
			nm->blocks[bi].end = cg_here(&nm->r);
		bci += (uint32_t)len;
	}
}

static void resolve(struct cctx *c)
{
	struct nmethod *nm = c->nm;
	for (size_t i = 0; i < c->nfx; i++) {
		struct fixup *f = &c->fx[i];
		const struct nblock *b =
			f->scope == TRAP_SCOPE ? NULL : nmethod_block(nm, f->scope, f->bci);
		if (b) {
			cg_patch(&nm->r, f->insn, b->start);
			continue;
		}
		/* Uncommon trap stub: into the runtime, which deoptimizes. */
		cg_patch(&nm->r, f->insn, cg_here(&nm->r));
		cg_plain(&nm->r, V_LDR12);
		cg_call(&nm->r, RT_TRAP, CR_RT);
	}
}

void nmethod_compile(struct nmethod *nm, const struct truth *t,
		     const struct sim_method *m, uint64_t base,
		     const struct jit_profile_view *pv)
{
	struct cctx c = { nm, t, pv, NULL, 0, 0 };
	nm->method_id = m->id;
	nm->r.base = base;
	nm->r.live = 1;
	nm->entrant = 1;
	nm->entry = base;
	cg_plain(&nm->r, V_PUSHBP);
	cg_plain(&nm->r, V_SUBSP);
	cg_plain(&nm->r, V_LDR12); /* stack bang */
	new_scope(nm, m, -1, 0);
	emit_scope(&c, 0);
	resolve(&c);
	free(c.fx);
}

void nmethod_fini(struct nmethod *nm)
{
	for (size_t i = 0; i < nm->nscopes; i++) {
		free(nm->scopes[i].block);
		free(nm->scopes[i].child);
	}
	free(nm->scopes);
	free(nm->blocks);
	cg_region_fini(&nm->r);
	memset(nm, 0, sizeof(*nm));
}

const struct nblock *nmethod_block(const struct nmethod *nm, uint32_t scope,
				   uint16_t bci)
{
	if (scope >= nm->nscopes)
		return NULL;
	const struct scope *s = &nm->scopes[scope];
	if (bci >= s->code_len)
		return NULL;
	int32_t i = s->block[bci];
	return i < 0 ? NULL : &nm->blocks[i];
}
