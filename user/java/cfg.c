// SPDX-License-Identifier: MIT
/* Per-method CFG over bytecode.  Built in two walks of the code: the
 * first finds the instruction boundaries (at[]) and checks each
 * instruction, the second fills the instructions with their normal
 * successors, checking the branch targets against at[]; then the
 * exception table, the exception successors and the blocks, all as
 * ranges into flat arrays. */
#include "java/cfg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"

struct vec {
	uint32_t *v;
	uint32_t n, cap;
};

/* Class files keep code under 64 KiB (JVMS 4.7.3), so an instruction
 * index fits 16 bits and NO_INSN is none. */
#define MAX_CODE 65535u
#define NO_INSN JCFG_NO_INSN

/* One allocation holds the struct and at[] (its size is the code's), a
 * second the instructions and their normal successors
 * (room for the most they can have, known after the first walk), a third
 * the blocks and their successors.  Only methods with exception handlers
 * grow the vectors. */
struct jcfg {
	struct jcfg_lookup l; /* first: the inline lookups read it */
	const uint8_t *code; /* the method's, for the switch operands */
	uint32_t nblock;
	struct jcfg_block *block;
	uint32_t *bsucc;
	uint32_t nsucc, nbsucc;
	struct vec xsucc, bxsucc;
	/* Where each instruction's exception handlers start in xsucc;
	 * only for a method with an exception table. */
	uint32_t *xfirst;
};

/* Per-build scratch state. */
struct builder {
	struct jcfg *g;
	const struct jcf_method *m;
	struct java_diag *diag;
	uint64_t *leader; /* a bit per instruction: it starts a block */
};

__attribute__((format(printf, 4, 5)))
static int bad(struct builder *b, int err, uint32_t bci, const char *fmt, ...)
{
	if (b->diag) {
		va_list ap;
		int n;
		b->diag->err = err;
		b->diag->offset = bci;
		n = snprintf(b->diag->msg, sizeof(b->diag->msg),
			     "method %s%s: bci %u: ", b->m->name,
			     b->m->descriptor, bci);
		va_start(ap, fmt);
		if (n > 0 && (size_t)n < sizeof(b->diag->msg))
			vsnprintf(b->diag->msg + n, sizeof(b->diag->msg) - n,
				  fmt, ap);
		va_end(ap);
	}
	return err;
}

static int vec_push(struct vec *v, uint32_t x)
{
	if (v->n == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 16;
		uint32_t *p = realloc(v->v, cap * sizeof(*p));
		if (!p)
			return java_err_nomem;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return java_ok;
}

/* Append X to the list that starts at FROM unless it is already there. */
static int vec_add_unique(struct vec *v, uint32_t from, uint32_t x)
{
	for (uint32_t i = from; i < v->n; i++)
		if (v->v[i] == x)
			return java_ok;
	return vec_push(v, x);
}

/* The same for a list given room beforehand (fill, make_blocks). */
static void add_unique(uint32_t *v, uint32_t *n, uint32_t from, uint32_t x)
{
	for (uint32_t i = from; i < *n; i++)
		if (v[i] == x)
			return;
	v[(*n)++] = x;
}

/* Exceptions an instruction may raise besides asynchronous ones (JVMS
 * §6.5 "Run-time Exceptions"/"Linking Exceptions"): loads of constants
 * and classes, array access, integer division, field access, invokes,
 * allocation, casts, monitors, athrow, and the returns (illegal monitor
 * state). */
static int can_throw(uint8_t op)
{
	return (op >= 0x12 && op <= 0x14) || (op >= 0x2e && op <= 0x35) ||
	       (op >= 0x4f && op <= 0x56) || op == 0x6c || op == 0x6d ||
	       op == 0x70 || op == 0x71 || (op >= 0xac && op <= 0xc3) ||
	       op == 0xc5;
}

/* The constant pool operand of OP, if it has one. */
static uint16_t cp_operand(const uint8_t *code, uint32_t bci, uint8_t op)
{
	if (op == 0x12)
		return code[bci + 1];
	if (op == 0x13 || op == 0x14 || (op >= 0xb2 && op <= 0xbb) ||
	    op == 0xbd || op == 0xc0 || op == 0xc1 || op == 0xc5)
		return (uint16_t)(code[bci + 1] << 8 | code[bci + 2]);
	return 0;
}

static int wide_ok(uint8_t op)
{
	return (op >= 0x15 && op <= 0x19) || (op >= 0x36 && op <= 0x3a) ||
	       op == 0xa9 || op == 0x84;
}

/* What each enum jbc_kind does to control flow, as bits: a table, for
 * the questions below are asked of every instruction. */
enum { ENDS = 1, FALLS = 2, BRANCHES = 4 };
static const uint8_t kind_flow[JBC_INVALID + 1] = {
	[JBC_OTHER] = FALLS,
	[JBC_COND_BRANCH] = ENDS | FALLS | BRANCHES,
	[JBC_GOTO] = ENDS | BRANCHES,
	[JBC_JSR] = ENDS | BRANCHES,
	[JBC_RET] = ENDS,
	[JBC_SWITCH] = ENDS,
	[JBC_INVOKE_VIRTUAL] = FALLS,
	[JBC_INVOKE_SPECIAL] = FALLS,
	[JBC_INVOKE_STATIC] = FALLS,
	[JBC_INVOKE_INTERFACE] = FALLS,
	[JBC_INVOKE_DYNAMIC] = FALLS,
	[JBC_RETURN] = ENDS,
	[JBC_ATHROW] = ENDS,
	[JBC_INVALID] = FALLS,
};

/* A branch, goto, jsr, ret, switch, return or athrow. */
static int ends_block(unsigned kind)
{
	return kind_flow[kind] & ENDS;
}

/* Not a block end, or a conditional branch. */
static int falls_through(unsigned kind)
{
	return (kind_flow[kind] & FALLS) != 0;
}

/* if*, goto, jsr and their _w forms: one target. */
static int branches(unsigned kind)
{
	return (kind_flow[kind] & BRANCHES) != 0;
}

/* The kind of the (well-formed) instruction at BCI: wide ret is a ret. */
static unsigned kind_at(const uint8_t *code, uint32_t bci)
{
	return code[bci] == JBC_WIDE && code[bci + 1] == 0xa9 ? JBC_RET :
								 jbc_info(code[bci])->kind;
}

/* The target of the branch (if*, goto, jsr and their _w forms) at BCI,
 * whose operand is in the code, as jbc_branch_target gives it. */
static long branch_target(const uint8_t *code, uint32_t bci, int len)
{
	long off = len == 5 ? jbc_be32(code + bci + 1) :
			      (int16_t)(code[bci + 1] << 8 | code[bci + 2]);
	return (long)bci + off;
}

/* What the build rejects in the instruction at BCI by itself (jcfg_build
 * and jcfg_check share the rule); its length in *N when defined. */
enum insn_fault { INSN_OK, INSN_UNDEFINED, INSN_LENGTH, INSN_WIDE };

static enum insn_fault insn_fault(const uint8_t *code, uint32_t len, uint32_t bci, int *n)
{
	uint8_t op = code[bci];
	*n = 0;
	if (op > 0xc9 || jbc_info(op)->kind == JBC_INVALID)
		return INSN_UNDEFINED;
	if ((*n = jbc_length(code, len, bci)) <= 0)
		return INSN_LENGTH;
	return op == JBC_WIDE && !wide_ok(code[bci + 1]) ? INSN_WIDE : INSN_OK;
}

/* The failure of the instruction at BCI, which insn_fault rejects. */
static int insn_bad(struct builder *b, uint32_t bci)
{
	const uint8_t *code = b->m->code;
	uint8_t op = code[bci];
	int len;
	switch (insn_fault(code, b->m->code_length, bci, &len)) {
	case INSN_UNDEFINED:
		return bad(b, java_err_bad_code, bci, "undefined opcode 0x%02x",
			   op);
	case INSN_LENGTH:
		return bad(b, java_err_bad_code, bci, "%s runs past the code "
			   "or has bad operands", jbc_name(op));
	case INSN_WIDE:
		return bad(b, java_err_bad_code, bci, "wide %s",
			   jbc_name(code[bci + 1]));
	case INSN_OK:
		break;
	}
	return bad(b, java_err_bad_code, bci, "bad instruction");
}

/* Does insn_fault reject the instruction at BCI, whose length is good?
 * An opcode past jsr_w, or a wide of an opcode it does not modify. */
static int late_fault(const uint8_t *code, uint32_t bci)
{
	uint8_t op = code[bci];
	return op > 0xc9 || (op == JBC_WIDE && !wide_ok(code[bci + 1]));
}

/* The length of the instruction at BCI when its opcode's length is
 * fixed, the code holds it and its opcode is no later than jsr_w, so
 * that nothing insn_fault tests rejects it (its kind is then the
 * table's); 0 for the careful path.  Most instructions are such, and
 * the careful tests cost ~20 instructions each in every walk. */
static inline uint32_t plain_len(const uint8_t *code, uint32_t len, uint32_t bci)
{
	uint8_t op = code[bci];
	uint32_t n = jbc_table[op].length; /* 0: variable or undefined */
	return n && n <= len - bci && op <= 0xc9 ? n : 0;
}

/* What the first walk finds: how many instructions there are, room
 * enough for their normal successors (a ret may return after every
 * jsr), and the first instruction that insn_fault rejects though its
 * length is good (an opcode past jsr_w, a wide of an opcode it does not
 * modify), reported only when every length is. */
struct shape {
	uint32_t ninsn;
	size_t nsucc;
	int64_t late; /* its bci, or -1 */
};

/* The first walk: instruction boundaries into at[], and their shape. */
static int scan(struct builder *b, struct shape *s)
{
	const uint8_t *code = b->m->code;
	uint32_t len = b->m->code_length;
	uint16_t *at = b->g->l.at;
	size_t njsr = 0, nret = 0;
	*s = (struct shape){ .late = -1 };
	for (uint32_t bci = 0; bci < len; s->ninsn++) {
		int n = (int)plain_len(code, len, bci);
		unsigned kind = jbc_table[code[bci]].kind;
		if (!n) {
			if ((n = jbc_length(code, len, bci)) <= 0)
				return insn_bad(b, bci);
			if (s->late < 0 && late_fault(code, bci))
				s->late = bci;
			kind = kind_at(code, bci);
		}
		njsr += kind == JBC_JSR;
		nret += kind == JBC_RET;
		s->nsucc += (size_t)falls_through(kind) + branches(kind);
		if (kind == JBC_SWITCH)
			s->nsucc += 1 + (size_t)jbc_switch_at(code, bci).ncases;
		at[bci] = (uint16_t)s->ninsn;
		bci += (uint32_t)n;
	}
	s->nsucc += nret * njsr;
	return s->late < 0 ? java_ok : insn_bad(b, (uint32_t)s->late);
}

static void lead(struct builder *b, uint32_t i)
{
	b->leader[i >> 6] |= 1ull << (i & 63);
}

/* Instruction index at TARGET (a bci), or an error if it is not a
 * boundary. */
static int target_index(struct builder *b, uint32_t from, int64_t target,
			uint32_t *idx)
{
	if (target < 0 || target >= b->g->l.code_length ||
	    b->g->l.at[target] == NO_INSN)
		return bad(b, java_err_bad_code, from,
			   "target %lld is not an instruction",
			   (long long)target);
	*idx = b->g->l.at[target];
	return java_ok;
}

/* Add TARGET, a bci, to the successors of instruction I, which it leads. */
static int add_target(struct builder *b, uint32_t i, uint32_t target)
{
	struct jcfg *g = b->g;
	uint32_t t = 0;
	int err = target_index(b, g->l.insn[i].bci, target, &t);
	if (!err) {
		lead(b, t);
		add_unique(g->l.succ, &g->nsucc, g->l.insn[i].succ, t);
	}
	return err;
}

/* A ret may return after every jsr: the instructions that follow one. */
static void ret_succs(struct builder *b)
{
	struct jcfg *g = b->g;
	for (uint32_t bci = 0; bci < g->l.code_length; bci++) {
		uint32_t j = g->l.at[bci];
		if (j != NO_INSN && j + 1 < g->l.ninsn &&
		    kind_at(g->code, bci) == JBC_JSR)
			g->l.succ[g->nsucc++] = j + 1;
	}
}

/* The normal successors of instruction I, in the order cfg.h gives,
 * checking its targets; whether the last instruction falls off the end
 * is finish's question, asked after the exception table's checks. */
static int normal_succs(struct builder *b, uint32_t i)
{
	struct jcfg *g = b->g;
	struct jcfg_insn *in = &g->l.insn[i];
	int err = java_ok;
	in->succ = g->nsucc;
	if (ends_block(in->kind) && i + 1 < g->l.ninsn)
		lead(b, i + 1);
	if (falls_through(in->kind) && i + 1 < g->l.ninsn)
		g->l.succ[g->nsucc++] = i + 1;
	if (in->kind == JBC_SWITCH) {
		struct jbc_switch s = jbc_switch_at(g->code, in->bci);
		for (uint32_t k = 0; k <= s.ncases && !err; k++)
			err = add_target(b, i, (uint32_t)jbc_switch_succ(&s, k));
	} else if (branches(in->kind)) {
		err = add_target(b, i, (uint32_t)branch_target(g->code,
							       in->bci,
							       in->len));
	} else if (in->kind == JBC_RET) {
		ret_succs(b);
	}
	in->nsucc = (uint16_t)(g->nsucc - in->succ);
	return err;
}

/* Source lines in bci order: the sorted line table walked once, giving
 * jcf_line_at's answer.  Kept in locals: the stores into the
 * instructions (16-bit fields like the table's) would otherwise reload
 * the table at every instruction. */
struct lines {
	const struct jcf_line *v;
	uint32_t n, next; /* entries, the next one to pass */
	uint32_t next_pc; /* its start_pc, or past any bci */
	int32_t line;     /* the line so far, -1 before the first entry */
};

static void lines_at(struct lines *l, uint32_t bci)
{
	while (bci >= l->next_pc) {
		l->line = l->v[l->next].line;
		l->next++;
		l->next_pc = l->next < l->n ? l->v[l->next].start_pc : UINT32_MAX;
	}
}

/* The second walk: every instruction and its normal successors; the
 * first bad branch target fails it. */
static int fill(struct builder *b)
{
	struct jcfg *g = b->g;
	const uint8_t *code = g->code;
	uint32_t bci = 0, len = g->l.code_length, n = g->l.ninsn;
	struct lines l = { b->m->lines, b->m->nlines, 0,
			   b->m->nlines ? b->m->lines[0].start_pc : UINT32_MAX,
			   -1 };
	int err = java_ok;
	/* where the successor lists start, counted from the hot copies' */
	uint32_t hsucc = (uint32_t)(g->l.succ - (uint32_t *)(void *)g->l.hot);
	lead(b, 0);
	for (uint32_t i = 0; i < n && !err; i++) {
		uint8_t op = code[bci];
		struct jcfg_insn *in = &g->l.insn[i];
		lines_at(&l, bci);
		/* field by field (a compound literal was built aside and
		 * copied); block is make_blocks' */
		in->bci = (uint16_t)bci;
		/* scan checked every instruction: a fixed length is the
		 * table's */
		uint32_t ilen = jbc_table[op].length;
		in->len = (uint16_t)(ilen ? ilen : (uint32_t)jbc_length(code, len, bci));
		in->op = op;
		in->kind = (uint8_t)(op == JBC_WIDE ? kind_at(code, bci) : jbc_table[op].kind);
		in->wide_op = op == JBC_WIDE ? code[bci + 1] : 0;
		in->can_throw = (uint8_t)can_throw(op);
		in->cp_index = cp_operand(code, bci, op);
		in->line = l.line;
		in->nxsucc = 0;
		err = normal_succs(b, i);
		g->l.hot[i] = (struct jcfg_hot){ hsucc + in->succ, in->nsucc, op, in->kind };
		bci += in->len;
	}
	return err;
}

/* The exception table's ranges and handlers start instructions; the
 * handlers start blocks. */
static int check_handlers(struct builder *b)
{
	struct jcfg *g = b->g;
	int err = java_ok;
	for (unsigned k = 0; k < b->m->nexc && !err; k++) {
		const struct jcf_exc *x = &b->m->exc[k];
		uint32_t t = 0;
		err = target_index(b, x->handler_pc, x->handler_pc, &t);
		if (!err)
			lead(b, t);
		if (!err)
			err = target_index(b, x->start_pc, x->start_pc, &t);
		if (!err && x->end_pc < g->l.code_length)
			err = target_index(b, x->end_pc, x->end_pc, &t);
	}
	return err;
}

/* The exception successors of instruction I, whose bci is within
 * [LO, HI), the union of the table's ranges. */
static int exc_succs(struct builder *b, uint32_t i, uint32_t lo, uint32_t hi)
{
	struct jcfg *g = b->g;
	struct jcfg_insn *in = &g->l.insn[i];
	const struct jcf_exc *exc = b->m->exc;
	unsigned nexc = b->m->nexc;
	int err = java_ok;
	uint32_t first = g->xfirst[i] = g->xsucc.n;
	if (!in->can_throw || in->bci < lo || in->bci >= hi)
		return java_ok; /* nxsucc stays 0 */
	for (unsigned k = 0; k < nexc && !err; k++) {
		const struct jcf_exc *x = &exc[k];
		if (in->bci < x->start_pc || in->bci >= x->end_pc)
			continue;
		err = vec_add_unique(&g->xsucc, first, g->l.at[x->handler_pc]);
		if (x->catch_type == 0)
			break; /* catches everything: later entries never match */
	}
	in->nxsucc = (uint16_t)(g->xsucc.n - first);
	return err;
}

/* Every instruction's exception successors: a table entry is looked at
 * only for instructions within some entry's range. */
static int all_exc_succs(struct builder *b)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	int err = java_ok;
	for (unsigned k = 0; k < b->m->nexc; k++) {
		if (b->m->exc[k].start_pc < lo)
			lo = b->m->exc[k].start_pc;
		if (b->m->exc[k].end_pc > hi)
			hi = b->m->exc[k].end_pc;
	}
	b->g->xfirst = malloc(b->g->l.ninsn * sizeof(*b->g->xfirst));
	if (!b->g->xfirst)
		return java_err_nomem;
	for (uint32_t i = 0; i < b->g->l.ninsn && !err; i++)
		err = exc_succs(b, i, lo, hi);
	return err;
}

/* The first leader from I on, or N: blocks are walked leader to leader,
 * a word of bits at a time, not tested per instruction. */
static uint32_t next_leader(const struct builder *b, uint32_t i, uint32_t n)
{
	while (i < n) {
		uint64_t w = b->leader[i >> 6] >> (i & 63);
		if (w) /* bits past N are never set */
			return i + (uint32_t)__builtin_ctzll(w);
		i = (i | 63) + 1;
	}
	return n;
}

/* The blocks, and room for their normal successors: those of each
 * block's last instruction. */
static int make_blocks(struct builder *b)
{
	struct jcfg *g = b->g;
	struct jcfg_insn *insn = g->l.insn;
	uint32_t n = g->l.ninsn, nb = 0, next;
	size_t nsucc = 0;
	for (uint32_t i = 0; i < n; i = next, nb++) {
		next = next_leader(b, i + 1, n);
		nsucc += insn[next - 1].nsucc;
	}
	g->block = malloc(nb * sizeof(*g->block) + nsucc * sizeof(*g->bsucc));
	if (!g->block)
		return java_err_nomem;
	g->bsucc = (uint32_t *)(g->block + nb);
	g->nblock = nb;
	for (uint32_t i = 0, k = 0; i < n; i = next, k++) {
		next = next_leader(b, i + 1, n);
		g->block[k] = (struct jcfg_block){ .first = i, .last = next - 1,
			.start_bci = insn[i].bci,
			.end_bci = insn[next - 1].bci + insn[next - 1].len };
		for (uint32_t j = i; j < next; j++)
			insn[j].block = (uint16_t)k;
	}
	return java_ok;
}

static int block_succs(struct jcfg *g, uint32_t k)
{
	struct jcfg_block *bl = &g->block[k];
	const struct jcfg_insn *last = &g->l.insn[bl->last];
	int err = java_ok;
	bl->succ = g->nbsucc;
	for (uint32_t s = 0; s < last->nsucc; s++)
		add_unique(g->bsucc, &g->nbsucc, bl->succ,
			   g->l.insn[g->l.succ[last->succ + s]].block);
	bl->nsucc = g->nbsucc - bl->succ;
	bl->xsucc = g->bxsucc.n;
	for (uint32_t i = bl->first; i <= bl->last && g->xsucc.n && !err; i++) {
		const struct jcfg_insn *in = &g->l.insn[i];
		for (uint32_t s = 0; s < in->nxsucc && !err; s++)
			err = vec_add_unique(&g->bxsucc, bl->xsucc,
				g->l.insn[g->xsucc.v[g->xfirst[i] + s]].block);
	}
	bl->nxsucc = g->bxsucc.n - bl->xsucc;
	return err;
}

/* After the walks: the exception table, then the last instruction's
 * fall-through (the errors in the order of the checks before), the
 * exception successors and the blocks. */
static int finish(struct builder *b)
{
	struct jcfg *g = b->g;
	const struct jcfg_insn *last = &g->l.insn[g->l.ninsn - 1];
	int err = check_handlers(b);
	if (!err && falls_through(last->kind))
		return bad(b, java_err_bad_code, last->bci,
			   "%s falls off the end of the code",
			   jbc_name(last->op));
	if (!err && b->m->nexc)
		err = all_exc_succs(b);
	if (!err)
		err = make_blocks(b);
	for (uint32_t k = 0; k < g->nblock && !err; k++)
		err = block_succs(g, k);
	return err;
}

/* The struct and at[] in one allocation.  The code is read where the
 * method keeps it (a copy was the code's size again for every CFG). */
static struct jcfg *jcfg_alloc(const struct jcf_method *m)
{
	size_t len = m->code_length;
	struct jcfg *g = malloc(sizeof(*g) + len * sizeof(*g->l.at));
	if (!g)
		return NULL;
	*g = (struct jcfg){ .l = { .code_length = m->code_length } };
	g->l.at = (uint16_t *)(g + 1);
	memset(g->l.at, 0xff, len * sizeof(*g->l.at));
	g->code = m->code;
	return g;
}

/* The instructions, the leader bits, their hot copies and room for the
 * successors, in one allocation in that order (alignments decreasing);
 * the bits are kept with the CFG, an eighth of a byte per instruction.
 * The successors follow the hot copies, which count from their start. */
static int insn_alloc(struct builder *b, const struct shape *s)
{
	struct jcfg *g = b->g;
	size_t nwords = (s->ninsn + 63) / 64;
	g->l.insn = malloc(s->ninsn * sizeof(*g->l.insn) +
			   nwords * sizeof(*b->leader) +
			   s->ninsn * sizeof(*g->l.hot) +
			   s->nsucc * sizeof(*g->l.succ));
	if (!g->l.insn)
		return java_err_nomem;
	b->leader = (uint64_t *)(g->l.insn + s->ninsn);
	memset(b->leader, 0, nwords * sizeof(*b->leader));
	g->l.hot = (struct jcfg_hot *)(b->leader + nwords);
	g->l.succ = (uint32_t *)(g->l.hot + s->ninsn);
	g->l.ninsn = s->ninsn;
	return java_ok;
}

static int build(struct builder *b)
{
	struct shape s;
	int err = scan(b, &s);
	if (!err)
		err = insn_alloc(b, &s);
	if (!err)
		err = fill(b);
	return err ? err : finish(b);
}

int jcfg_build(struct jcfg **out, const struct jcf_method *m,
	       struct java_diag *diag)
{
	if (!out || !m)
		return java_err_invalid;
	*out = NULL;
	if (!m->code || !m->code_length)
		return java_err_no_code;
	struct builder b = { .m = m, .diag = diag };
	if (m->code_length > MAX_CODE)
		return bad(&b, java_err_bad_code, 0, "code of %u bytes",
			   m->code_length);
	int err = (b.g = jcfg_alloc(m)) ? build(&b) : java_err_nomem;
	if (err) {
		if (err == java_err_nomem && diag)
			bad(&b, err, 0, "out of memory");
		jcfg_free(b.g);
		return err;
	}
	*out = b.g;
	return java_ok;
}

/* ---- checking without building ------------------------------------------ */

static int starts_at(const uint64_t *starts, uint32_t len, uint32_t bci)
{
	return bci < len && (starts[bci >> 6] >> (bci & 63) & 1);
}

/* What the build rejects in the instruction at BCI by itself (a bad
 * length, a late_fault) or as the last one (falling off the end); its
 * length in *N. */
static int insn_ok(const uint8_t *code, uint32_t len, uint32_t bci, int *n)
{
	if ((*n = jbc_length(code, len, bci)) <= 0 || late_fault(code, bci))
		return 0;
	return bci + (uint32_t)*n < len || !falls_through(kind_at(code, bci));
}

/* Do the targets of the switch at BCI all start instructions?  Out of
 * line: inlined in targets_ok's walk of every instruction, its reads kept
 * the opcode in one more register there, at a cost on every one
 * (jcfg_check, jython: +0.6 M instructions). */
static __attribute__((noinline)) int
switch_ok(const uint8_t *code, uint32_t len, const uint64_t *starts,
	  uint32_t bci)
{
	struct jbc_switch s = jbc_switch_at(code, bci);
	for (uint32_t k = 0; k <= s.ncases; k++)
		if (!starts_at(starts, len, (uint32_t)jbc_switch_succ(&s, k)))
			return 0;
	return 1;
}

/* Does the instruction at BCI, of KIND (jbc_info's), jump only to the
 * starts of instructions?  True of any that is no branch or switch. */
static inline int jump_ok(const uint8_t *code, uint32_t len,
			  const uint64_t *starts, uint32_t bci, unsigned kind)
{
	if (kind == JBC_SWITCH)
		return switch_ok(code, len, starts, bci);
	return !branches(kind) ||
	       starts_at(starts, len, (uint32_t)branch_target(
				 code, bci, jbc_table[code[bci]].length));
}

/* Do the handler table's bcis all start instructions? */
static int handlers_ok(const struct jcf_method *m, const uint64_t *starts)
{
	uint32_t len = m->code_length;
	for (unsigned k = 0; k < m->nexc; k++) {
		const struct jcf_exc *x = &m->exc[k];
		if (!starts_at(starts, len, x->handler_pc) ||
		    !starts_at(starts, len, x->start_pc) ||
		    (x->end_pc < len && !starts_at(starts, len, x->end_pc)))
			return 0;
	}
	return 1;
}

/* Do the branch and switch targets all start instructions?  A second
 * walk of every instruction, for code with more jumps than check
 * lists. */
static int targets_ok(const struct jcf_method *m, const uint64_t *starts)
{
	const uint8_t *code = m->code;
	uint32_t len = m->code_length;
	for (uint32_t bci = 0; bci < len;
	     bci += (uint32_t)jbc_length(code, len, bci))
		if (!jump_ok(code, len, starts, bci, jbc_info(code[bci])->kind))
			return 0;
	return 1;
}

/* The jumps check lists as it walks the code: their targets are
 * checked once every start is known, without a second walk of the
 * code (most methods have a few; jcfg_check is asked of every
 * candidate callee). */
#define CHECK_JUMPS 256

static int check(const struct jcf_method *m, uint64_t *starts)
{
	const uint8_t *code = m->code;
	uint32_t len = m->code_length, njumps = 0;
	uint16_t jumps[CHECK_JUMPS];
	memset(starts, 0, ((len + 63) / 64) * sizeof(*starts));
	for (uint32_t bci = 0; bci < len;) {
		int n = (int)plain_len(code, len, bci);
		/* the last instruction may fall off the end */
		if ((!n || bci + (uint32_t)n == len) && !insn_ok(code, len, bci, &n))
			return java_err_bad_code;
		starts[bci >> 6] |= 1ull << (bci & 63);
		unsigned kind = jbc_table[code[bci]].kind;
		if (kind == JBC_SWITCH || branches(kind)) {
			if (njumps < CHECK_JUMPS)
				jumps[njumps] = (uint16_t)bci;
			njumps++;
		}
		bci += (uint32_t)n;
	}
	int ok = 1;
	if (njumps > CHECK_JUMPS)
		ok = targets_ok(m, starts);
	else
		for (uint32_t k = 0; k < njumps && ok; k++)
			ok = jump_ok(code, len, starts, jumps[k],
				     jbc_info(code[jumps[k]])->kind);
	return ok && handlers_ok(m, starts) ? java_ok : java_err_bad_code;
}

int jcfg_check(const struct jcf_method *m)
{
	if (!m)
		return java_err_invalid;
	if (!m->code || !m->code_length)
		return java_err_no_code;
	if (m->code_length > MAX_CODE)
		return java_err_bad_code;
	uint64_t starts[(MAX_CODE + 64) / 64];
	return check(m, starts);
}

void jcfg_free(struct jcfg *g)
{
	if (!g)
		return;
	free(g->block); /* with bsucc */
	free(g->xsucc.v);
	free(g->bxsucc.v);
	free(g->xfirst);
	free(g->l.insn); /* with the leader bits and succ */
	free(g); /* with at */
}

int32_t jcfg_index_covering(const struct jcfg *g, uint32_t bci)
{
	if (bci >= g->l.code_length)
		return -1;
	uint32_t lo = 0, hi = g->l.ninsn;
	/* The last instruction with insn.bci <= bci. */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (g->l.insn[mid].bci <= bci)
			lo = mid;
		else
			hi = mid;
	}
	return (int32_t)lo;
}

const uint32_t *jcfg_xsuccs(const struct jcfg *g, uint32_t i, uint32_t *n)
{
	*n = i < g->l.ninsn ? g->l.insn[i].nxsucc : 0;
	return *n ? g->xsucc.v + g->xfirst[i] : NULL;
}

uint32_t jcfg_block_count(const struct jcfg *g) { return g->nblock; }

const struct jcfg_block *jcfg_block(const struct jcfg *g, uint32_t b)
{
	return b < g->nblock ? &g->block[b] : NULL;
}

const uint32_t *jcfg_block_succs(const struct jcfg *g, uint32_t b,
				 uint32_t *n)
{
	*n = b < g->nblock ? g->block[b].nsucc : 0;
	return *n ? g->bsucc + g->block[b].succ : NULL;
}

const uint32_t *jcfg_block_xsuccs(const struct jcfg *g, uint32_t b,
				  uint32_t *n)
{
	*n = b < g->nblock ? g->block[b].nxsucc : 0;
	return *n ? g->bxsucc.v + g->block[b].xsucc : NULL;
}

static int is_switch(const struct jcfg *g, uint32_t i)
{
	return i < g->l.ninsn && g->l.insn[i].kind == JBC_SWITCH;
}

int jcfg_switch_default(const struct jcfg *g, uint32_t i, uint32_t *target,
			uint32_t *npairs)
{
	if (!is_switch(g, i))
		return java_err_invalid;
	struct jbc_switch s = jbc_switch_at(g->code, g->l.insn[i].bci);
	*target = (uint32_t)jbc_switch_default(&s);
	*npairs = s.ncases;
	return java_ok;
}

int jcfg_switch_case(const struct jcfg *g, uint32_t i, uint32_t k,
		     int32_t *key, uint32_t *target)
{
	if (!is_switch(g, i))
		return java_err_invalid;
	struct jbc_switch s = jbc_switch_at(g->code, g->l.insn[i].bci);
	if (k >= s.ncases)
		return java_err_invalid;
	*key = jbc_switch_key(&s, k);
	*target = (uint32_t)jbc_switch_target(&s, k);
	return java_ok;
}
