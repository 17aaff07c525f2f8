// SPDX-License-Identifier: MIT
/* Resynchronisation: where in the whole program a run of opcodes can
 * execute when the position is lost, through an index by (opcode, next
 * opcode) and a cache of answers. */
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"
#include "java/bytecodes.h"

size_t flow_lookahead_ops(const struct flow *f, uint32_t i, uint8_t *ops, size_t max)
{
	size_t k = 0;
	for (size_t j = i; j < f->nev && k < max; j++) {
		const struct jpb_decoded_slim *e = &f->ev[j];
		if (e->kind != JPB_DEV_INTERP)
			break;
		int fused, op = flow_java_opcode(e->opcode, &fused);
		if (op < 0)
			break;
		ops[k++] = (uint8_t)op;
		if (fused >= 0 && k < max)
			ops[k++] = (uint8_t)fused;
	}
	return k;
}

/* Does HotSpot run the instruction at POS (opcode OP) and the next one as
 * one dispatch (jbc_fused_pair, its only successor)?  The dispatch then
 * shows the first opcode (or the fused one, mapped back), and JVMTI steps
 * report the first instruction only. */
int flow_fuses(uint8_t op, const struct jcfg *g, uint32_t pos)
{
	if (op != 0x2a && op != 0x15)
		return 0;
	uint32_t n;
	const uint32_t *s = jcfg_succs(g, pos, &n);
	return n == 1 && jbc_fused_pair(op, jcfg_insn(g, s[0])->op);
}

/* Can the code from instruction POS (which ran OPS[0]) go on to run
 * OPS[1..N-1] within the method?  Calls, returns and throws end the check
 * successfully: what follows is another method's business. */
static int explains(struct flow *f, uint32_t meth, uint32_t pos,
		    const uint8_t *ops, size_t n, unsigned *budget)
{
	if (n <= 1 || !*budget)
		return 1;
	--*budget;
	const struct jcfg *g = flow_meth_cfg(f, meth);
	unsigned kind = jcfg_insn(g, pos)->kind;
	if (jbc_is_invoke(kind) || kind == JBC_RETURN || kind == JBC_ATHROW)
		return 1;
	uint32_t ns;
	const uint32_t *s = jcfg_succs(g, pos, &ns);
	for (uint32_t k = 0; k < ns; k++)
		if (jcfg_insn(g, s[k])->op == ops[1] &&
		    explains(f, meth, s[k], ops + 1, n - 1, budget))
			return 1;
	if (ns == 1 && flow_fuses(jcfg_insn(g, pos)->op, g, pos)) {
		s = jcfg_succs(g, s[0], &ns);
		for (uint32_t k = 0; k < ns; k++)
			if (jcfg_insn(g, s[k])->op == ops[1] &&
			    explains(f, meth, s[k], ops + 1, n - 1, budget))
				return 1;
	}
	return 0;
}

/* The kinds whose instruction ends flow_raw_explains' walk with a yes. */
#define RAW_STOP                                                              \
	(1u << JBC_INVOKE_VIRTUAL | 1u << JBC_INVOKE_SPECIAL | 1u << JBC_INVOKE_STATIC | \
	 1u << JBC_INVOKE_INTERFACE | 1u << JBC_INVOKE_DYNAMIC | 1u << JBC_RETURN |    \
	 1u << JBC_ATHROW | 1u << JBC_SWITCH | 1u << JBC_JSR | 1u << JBC_RET |         \
	 1u << JBC_INVALID)

/* The instructions flow_raw_explains follows from BCI, in explains' order
 * (the next, then a branch target that differs from it, then after a
 * fused pair the second's next) into S: their count, where one at LEN or
 * beyond (or whose length is bad) ends the walk with a yes; 0 where the
 * walk ends with a yes here (a call, return or throw, or what it leaves
 * to explains: a switch, jsr or ret, bad code). */
static unsigned raw_succs(const uint8_t *code, size_t len, size_t bci, size_t *s)
{
	uint8_t op = code[bci];
	/* an undefined opcode (kind JBC_OTHER in the table) has no length */
	unsigned kind = jbc_table[op].kind;
	if ((1u << kind & RAW_STOP) ||
	    (op == JBC_WIDE && bci + 1 < len && code[bci + 1] == 0xa9))
		return 0;
	int l = jbc_length(code, len, bci);
	if (l <= 0)
		return 0;
	unsigned ns = 0;
	if (kind != JBC_GOTO)
		s[ns++] = bci + (size_t)l;
	if (kind == JBC_COND_BRANCH || kind == JBC_GOTO) {
		long t = jbc_branch_target(code, len, bci);
		if (t < 0)
			return 0;
		if (!ns || s[0] != (size_t)t)
			s[ns++] = (size_t)t;
	}
	/* getfield, iload and caload fall through: one successor */
	if (ns == 1 && s[0] < len && jbc_fused_pair(op, code[s[0]])) {
		int l2 = jbc_length(code, len, s[0]);
		s[ns++] = l2 > 0 ? s[0] + (size_t)l2 : len;
	}
	return ns;
}

/* explains() read from the raw bytecode CODE, before any CFG is built:
 * 0 only where explains() says 0 (or the method's CFG cannot be built),
 * else 1.  The instructions it follows get the CFG's successors in the
 * CFG's order and the same fused pairs (raw_succs), so where it meets no
 * switch, jsr or ret (which it leaves to explains) it walks explains'
 * very tree, budget included.  Most of a resynchronisation's candidates
 * fail here (jython: 98%), and their methods' CFGs are then never built.
 * The last successor is followed in the loop, the others by a call:
 * straight code, most of it, makes no call. */
int flow_raw_explains(const uint8_t *code, size_t len, size_t bci, const uint8_t *ops,
		      size_t n, unsigned *budget)
{
	for (;; ops++, n--) {
		if (n <= 1 || !*budget)
			return 1;
		--*budget;
		/* most instructions have a fixed length and fall through: where
		 * they do not start a fused pair, their one successor, as
		 * raw_succs gives it, without its tests (one that runs past LEN
		 * ends the walk with a yes there too) */
		uint8_t op = code[bci];
		size_t l = jbc_table[op].length;
		if (l && jbc_table[op].kind == JBC_OTHER) {
			if (bci + l >= len)
				return 1;
			if (!jbc_fused_pair(op, code[bci + l])) {
				bci += l;
				if (code[bci] != ops[1])
					return 0;
				continue;
			}
		}
		size_t s[3];
		unsigned ns = raw_succs(code, len, bci, s);
		if (!ns)
			return 1;
		for (unsigned k = 0; k + 1 < ns; k++) {
			if (s[k] >= len)
				return 1;
			if (code[s[k]] == ops[1] &&
			    flow_raw_explains(code, len, s[k], ops + 1, n - 1, budget))
				return 1;
		}
		bci = s[ns - 1];
		if (bci >= len)
			return 1;
		if (code[bci] != ops[1])
			return 0;
	}
}

/* Can the instruction at BCI follow an invoke?  An invoke is 3 bytes
 * long, or 5 (invokeinterface, invokedynamic): 0 when neither byte
 * before is an invoke's opcode. */
static int maybe_after_invoke(const uint8_t *code, uint32_t bci)
{
	return (bci >= 3 && jbc_is_invoke(jbc_info(code[bci - 3])->kind)) ||
	       (bci >= 5 && jbc_is_invoke(jbc_info(code[bci - 5])->kind));
}

/* The index's lists: 65536 by (opcode, next opcode), 256 by opcode of
 * the instructions no pair lists (the code after them is bad), and again
 * by (opcode, next opcode) those at bci 0, as their methods (a method
 * entry's search reads only them: jython has 45 k methods against 1.2 M
 * pair entries). */
#define PAIR_KEYS 65536u
#define LONE_BASE PAIR_KEYS
#define ENTRY_BASE (PAIR_KEYS + 256u)
#define RESYNC_KEYS (ENTRY_BASE + PAIR_KEYS)

/* The lists while they are gathered: each in blocks of LIST_BLOCK
 * entries, the first of which links to the list's block before (its TAIL
 * value when it filled, 0 for none), then copied list by list into the
 * index (copy_lists).  An entry is written once into its list, not as a
 * key and an offset in program order that a counting sort then scattered
 * (jython: 1.26 M entries in 5.8 MB of blocks, not 7.5 MB, and 7 M
 * instructions less; blocks of 16 entries took 2.5 M more). */
#define LIST_BLOCK 32u

struct lists {
	uint32_t *blk; /* the blocks (no TAIL is 0 but none: entries follow a link) */
	size_t nblk, cap; /* entries used (a multiple of LIST_BLOCK), room */
	/* per key: where its next entry goes, a multiple of LIST_BLOCK when
	 * its block is full (or 0: none yet) */
	uint32_t *tail;
	uint32_t *nb; /* per key, its blocks (f->pairstart + 1) */
	int err;
};

/* A new block for list KEY, whose tail is T (full, or 0): where its first
 * entry goes, or 0 when out of memory (then L->err). */
static uint32_t list_block(struct lists *l, uint32_t key, uint32_t t)
{
	if ((l->nblk + LIST_BLOCK > l->cap &&
	     jpb_grow((void **)&l->blk, &l->cap, l->nblk + LIST_BLOCK, sizeof(*l->blk))) ||
	    l->nblk + LIST_BLOCK > UINT32_MAX) {
		l->err = jpb_err_nomem;
		return 0;
	}
	l->blk[l->nblk] = t;
	l->nblk += LIST_BLOCK;
	l->nb[key]++;
	return (uint32_t)(l->nblk - LIST_BLOCK + 1);
}

/* V at the end of list KEY of L, whose blocks are *BLK (reloaded where a
 * new one moves them) and tails TAIL (L's, held in the caller's locals):
 * 0, or jpb_err_nomem. */
static inline int list_put_at(struct lists *l, uint32_t **blk, uint32_t *tail,
			      uint32_t key, uint32_t v)
{
	uint32_t t = tail[key];
	if (!(t % LIST_BLOCK)) {
		if (!(t = list_block(l, key, t)))
			return l->err;
		*blk = l->blk;
	}
	(*blk)[t] = v;
	tail[key] = t + 1;
	return 0;
}

/* list_put_at for an entry of put_pairs (L->err tells a failure). */
static inline void list_put(struct lists *l, uint32_t key, uint32_t v)
{
	uint32_t *blk = l->blk;
	list_put_at(l, &blk, l->tail, key, v);
}

/* Put the instruction at BCI (opcode OP, code offset OFF) of method M
 * into the pair lists once per distinct next opcode of NX (N of them), at
 * bci 0 also into the entry lists (as M: the scan of an entry needs no
 * meth_at); with none, into the lone lists. */
static void put_pairs(struct lists *l, uint32_t m, uint8_t op, size_t bci, uint32_t off,
		      const uint8_t *nx, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		unsigned j = 0;
		while (j < k && nx[j] != nx[k]) /* N is at most 3 but at a switch */
			j++;
		if (j < k)
			continue;
		list_put(l, (uint32_t)op << 8 | nx[k], off);
		if (!bci)
			list_put(l, ENTRY_BASE + ((uint32_t)op << 8 | nx[k]), m);
	}
	if (!n)
		list_put(l, LONE_BASE + op, off);
}

/* The opcodes a jsr or ret at BCI of method M can go to, from its CFG
 * (rare: a switch's are read from the raw bytecode, switch_next_ops), at
 * most 256 distinct ones kept. */
static unsigned cfg_next_ops(struct flow *f, uint32_t m, size_t bci, uint8_t *nx)
{
	const struct jcfg *g = flow_meth_cfg(f, m);
	int32_t i = g ? jcfg_index_of(g, (uint32_t)bci) : -1;
	uint32_t ns = 0;
	const uint32_t *sc = i >= 0 ? jcfg_succs(g, (uint32_t)i, &ns) : NULL;
	uint8_t seen[32] = { 0 };
	unsigned n = 0;
	for (uint32_t k = 0; k < ns; k++) {
		uint8_t o = jcfg_insn(g, sc[k])->op;
		if (!(seen[o >> 3] & (1u << (o & 7))))
			nx[n++] = o;
		seen[o >> 3] |= (uint8_t)(1u << (o & 7));
	}
	return n;
}

/* The opcodes at the targets of the switch at BCI (its length checked by
 * jbc_length), at most 256 distinct ones, as cfg_next_ops would give them
 * without building the method's CFG (jython: 509 methods, 43 M
 * instructions).  Where a target is not an instruction the CFG fails,
 * and candidate_at rejects every position of the method whatever lists
 * it is in. */
static unsigned switch_next_ops(const uint8_t *code, size_t len, size_t bci, uint8_t *nx)
{
	struct jbc_switch s = jbc_switch_at(code, bci);
	uint8_t seen[32] = { 0 };
	unsigned n = 0;
	for (uint32_t k = 0; k <= s.ncases; k++) {
		int64_t t = jbc_switch_succ(&s, k); /* the default first */
		if (t < 0 || (uint64_t)t >= len)
			continue;
		uint8_t o = code[t];
		if (!(seen[o >> 3] & (1u << (o & 7))))
			nx[n++] = o;
		seen[o >> 3] |= (uint8_t)(1u << (o & 7));
	}
	return n;
}

/* The distinct opcodes the lookahead can see after the instruction at BCI
 * (opcode OP, L bytes long) of method M into NX: the successors', and
 * after a fused pair the second's successors'; 0xff after an invoke, a
 * return or a throw, which end a lookahead; none where the code after it
 * is bad. */
static unsigned next_ops(struct flow *f, uint32_t m, size_t bci, size_t l, uint8_t *nx)
{
	const uint8_t *code = f->mscan[m].code;
	size_t len = f->mscan[m].len, next = bci + l;
	uint8_t op = code[bci];
	unsigned kind = jbc_table[op].kind, n = 0;
	if (op == JBC_WIDE && bci + 1 < len && code[bci + 1] == 0xa9)
		kind = JBC_RET;
	if (jbc_is_invoke(kind) || kind == JBC_RETURN || kind == JBC_ATHROW) {
		nx[n++] = 0xff;
	} else if (kind == JBC_SWITCH) {
		f->mhard[m] = 1;
		n = switch_next_ops(code, len, bci, nx);
	} else if (kind == JBC_JSR || kind == JBC_RET) {
		f->mhard[m] = 1;
		n = cfg_next_ops(f, m, bci, nx);
	} else {
		if (kind != JBC_GOTO && next < len)
			nx[n++] = code[next];
		long t = kind == JBC_OTHER ? -1 : jbc_branch_target(code, len, bci);
		if (t >= 0 && (size_t)t < len)
			nx[n++] = code[t];
		/* a fused pair: what follows its second instruction */
		if (kind == JBC_OTHER && n == 1 && jbc_fused_pair(op, nx[0])) {
			int l2 = jbc_length(code, len, next);
			if (l2 > 0 && next + (size_t)l2 < len)
				nx[n++] = code[next + (size_t)l2];
		}
	}
	return n;
}

/* plain_kinds: an instruction that ends a lookahead (an invoke, a return,
 * a throw: next opcode 0xff), beside its length. */
#define PLAIN_ENDS 0x80u

/* Per opcode, its length where next_ops needs no more than the next byte
 * (a fixed length, falling through or ending a lookahead: most
 * instructions), with PLAIN_ENDS for the latter; else 0. */
static void plain_kinds(uint8_t *plain)
{
	for (unsigned op = 0; op < 256; op++) {
		unsigned kind = jbc_table[op].kind, l = jbc_table[op].length;
		int ends = jbc_is_invoke(kind) || kind == JBC_RETURN || kind == JBC_ATHROW;
		plain[op] = kind == JBC_OTHER ? (uint8_t)l : ends ? (uint8_t)(l ? l | PLAIN_ENDS : 0) : 0;
	}
}

/* walk_kinds: the first of a fused pair (aload_0, iload), beside its
 * length and PLAIN_ENDS. */
#define PLAIN_FUSES 0x40u
#define PLAIN_LEN 0x07u

/* Per opcode, PLAIN's (plain_kinds') answer where the length fits
 * PLAIN_LEN (else 0), with PLAIN_FUSES for an opcode that can start a fused pair: in
 * plain_run, most instructions (1..PLAIN_LEN) then need no other test
 * than their room in the code. */
static void walk_kinds(const uint8_t *plain, uint8_t *walk)
{
	for (unsigned op = 0; op < 256; op++) {
		unsigned pk = plain[op];
		int fuses = op == 0x2a || op == 0x15; /* jbc_fused_pair's */
		walk[op] = (pk & ~PLAIN_ENDS) > PLAIN_LEN ? 0 :
			   (uint8_t)(pk | (pk && fuses ? PLAIN_FUSES : 0));
	}
}

/* The next opcode that next_ops would give alone for the instruction OP
 * (walk_kinds: WK) at BCI (not 0) of CODE (LEN bytes), whose length is
 * WK's; -1 where next_ops must decide (not plain, the code ends after
 * it, or it is the first of a fused pair). */
static inline int plain_next(const uint8_t *code, size_t len, size_t bci, uint8_t op,
			     unsigned wk)
{
	size_t l = wk & PLAIN_LEN;
	if (wk - 1u < PLAIN_LEN) /* most: falls through, starts no pair */
		return l < len - bci ? code[bci + l] : -1;
	if (wk & PLAIN_ENDS)
		return l <= len - bci ? 0xff : -1;
	if (!wk || l >= len - bci || jbc_fused_pair(op, code[bci + l]))
		return -1;
	return code[bci + l];
}

/* The distinct next opcodes that next_ops gives (into NX, their count)
 * for the instruction at BCI (not 0) of CODE (LEN bytes) where it is a
 * branch of 3 bytes or the first of a fused pair with code after both
 * ways, and its length in *L; 0 where next_ops must tell. */
static inline unsigned two_next(const uint8_t *code, size_t len, size_t bci, uint8_t *nx,
				size_t *l)
{
	uint8_t op = code[bci];
	unsigned kind = jbc_table[op].kind, n = 0;
	if ((kind == JBC_COND_BRANCH || kind == JBC_GOTO) && jbc_table[op].length == 3) {
		if (len - bci <= 3)
			return 0;
		/* jbc_branch_target's */
		long t = (long)bci + (int16_t)(code[bci + 1] << 8 | code[bci + 2]);
		if (kind != JBC_GOTO)
			nx[n++] = code[bci + 3];
		if (t >= 0 && (size_t)t < len)
			nx[n++] = code[t];
		*l = 3;
		return n == 2 && nx[1] == nx[0] ? 1 : n;
	}
	if (op != 0x2a && op != 0x15) /* the first of a fused pair */
		return 0;
	size_t next = bci + jbc_table[op].length;
	if (next >= len || !jbc_fused_pair(op, code[next]))
		return 0;
	size_t after = next + jbc_table[code[next]].length; /* fixed lengths */
	if (after >= len)
		return 0;
	nx[0] = code[next];
	nx[1] = code[after];
	*l = next - bci;
	return nx[1] == nx[0] ? 1 : 2;
}

/* The plain instructions (WALK, plain_next) of CODE (LEN bytes, at
 * code offset START) from BCI (not 0) on straight into the pair lists of
 * L (list_put), and the branches and fused pairs that two_next tells, up
 * to the first that is neither: where they end.  L's fields are held in
 * locals, not read through L again for each entry (jython: 1.1 M of its
 * 1.2 M entries); 0 when out of memory (then L->err). */
static size_t plain_run(const uint8_t *code, size_t len, size_t bci, uint32_t start,
			const uint8_t *walk, struct lists *l)
{
	uint32_t *blk = l->blk, *tail = l->tail;
	while (bci < len) {
		uint8_t op = code[bci], nx[2];
		size_t sz = walk[op] & PLAIN_LEN;
		int nop = plain_next(code, len, bci, op, walk[op]);
		uint32_t v = start + (uint32_t)bci;
		if (nop >= 0) {
			if (list_put_at(l, &blk, tail, (uint32_t)op << 8 | (uint32_t)nop, v))
				return 0;
			bci += sz;
			continue;
		}
		unsigned nn = two_next(code, len, bci, nx, &sz);
		if (!nn)
			break;
		if (list_put_at(l, &blk, tail, (uint32_t)op << 8 | nx[0], v) ||
		    (nn == 2 && list_put_at(l, &blk, tail, (uint32_t)op << 8 | nx[1], v)))
			return 0;
		bci += sz;
	}
	return bci;
}

/* Every instruction of method M into the pair lists by (opcode, next
 * opcode), once per distinct next opcode (next_ops); one with none into
 * the lone lists, and at bci 0 also into the entry lists (put_pairs).
 * Read from the raw bytecode in one walk, so that no CFG is built for a
 * method no resynchronisation reaches.  Past bci 0, plain instructions,
 * 3-byte branches and fused pairs go straight into the pair lists
 * (plain_run, as next_ops and put_pairs would put them): most are. */
static void method_lists(struct flow *f, uint32_t m, const uint8_t *walk, struct lists *ls)
{
	const uint8_t *code = f->mscan[m].code;
	size_t len = f->mscan[m].len;
	uint32_t start = f->mscan[m].start;
	for (size_t bci = 0; bci < len;) {
		if (bci && (bci = plain_run(code, len, bci, start, walk, ls)) >= len)
			break;
		if (ls->err)
			return;
		uint8_t op = code[bci], nx[256];
		int l = jbc_length(code, len, bci);
		if (l <= 0)
			return; /* undefined code: its CFG fails too */
		put_pairs(ls, m, op, bci, start + (uint32_t)bci, nx, next_ops(f, m, bci, (size_t)l, nx));
		bci += (size_t)l;
	}
}

/* L's lists side by side into f->pairidx, each from its first block on
 * (so in program order), where f->pairstart (which holds their counts)
 * then says they start. */
static int copy_lists(struct flow *f, const struct lists *l)
{
	/* a list's entries: its full blocks' and its last block's */
	uint32_t *st = f->pairstart;
	for (size_t k = 0; k < RESYNC_KEYS; k++) {
		uint32_t t = l->tail[k];
		if (st[k + 1])
			st[k + 1] = (st[k + 1] - 1) * (LIST_BLOCK - 1) +
				    (t - 1 - (t - 1) / LIST_BLOCK * LIST_BLOCK);
		st[k + 1] += st[k];
	}
	if (!(f->pairidx = malloc(((size_t)st[RESYNC_KEYS] + 1) * sizeof(*f->pairidx))))
		return jpb_err_nomem;
	/* from each list's last block back to its first */
	for (size_t k = 0; k < RESYNC_KEYS; k++) {
		uint32_t *end = f->pairidx + st[k + 1], t = l->tail[k];
		for (uint32_t n = st[k + 1] - st[k]; n;) {
			uint32_t b = (t - 1) / LIST_BLOCK * LIST_BLOCK, m = t - b - 1;
			end -= m;
			memcpy(end, l->blk + b + 1, m * sizeof(*end));
			n -= m;
			t = l->blk[b];
		}
	}
	return 0;
}

#define MPAGE_SHIFT 6

/* The code of every method into f->mscan, and f->mpage; 0, or
 * jpb_err_nomem, or jpb_err_invalid when the code exceeds 4 GB. */
static int place_code(struct flow *f)
{
	size_t nm = f->nmeths, total = 0;
	for (size_t m = 0; m < nm; m++)
		if (f->meths[m].hm.m->code && (total += f->meths[m].hm.m->code_length) > UINT32_MAX)
			return jpb_err_invalid;
	size_t npage = (total >> MPAGE_SHIFT) + 1;
	/* one block: methods.c frees mscan */
	if (!(f->mscan = malloc((nm + 1) * sizeof(*f->mscan) + npage * sizeof(*f->mpage) + nm + 1)))
		return jpb_err_nomem;
	f->mpage = (uint32_t *)(f->mscan + nm + 1);
	f->mhard = (uint8_t *)(f->mpage + npage);
	memset(f->mhard, 0, nm + 1);
	uint32_t at = 0;
	size_t page = 0;
	for (size_t m = 0; m <= nm; m++) {
		const struct jcf_method *jm = m < nm ? f->meths[m].hm.m : NULL;
		uint32_t len = jm && jm->code ? jm->code_length : 0;
		f->mscan[m] = (struct flow_mscan){ jm ? jm->code : NULL, len, at };
		/* the pages whose first byte is in this method's code */
		for (; page < npage && ((size_t)page << MPAGE_SHIFT) < (size_t)at + len; page++)
			f->mpage[page] = (uint32_t)m;
		at += len;
	}
	for (; page < npage; page++) /* past the code: no offset reads it */
		f->mpage[page] = nm ? (uint32_t)nm - 1 : 0;
	f->nmscan = (uint32_t)nm;
	return 0;
}

/* Every loaded method a meths index (the index's methods), and their code
 * placed (place_code). */
static int index_methods(struct flow *f)
{
	struct jhier *h = jprog_hier(f->p);
	size_t nc = jhier_class_count(h), nm = f->nmeths;
	/* room for them all at once (jython: 45 k), in meths and the lookup
	 * by method, not a copy or a rehash at each doubling */
	for (size_t i = 0; i < nc; i++)
		nm += jcf_method_count(jhier_class_at(h, i, NULL));
	if (jpb_grow((void **)&f->meths, &f->capm, nm, sizeof(*f->meths)) ||
	    flow_meth_lookup_reserve(f, nc, nm))
		return jpb_err_nomem;
	for (size_t i = 0; i < nc; i++) {
		uint64_t loader;
		const struct jcf *cls = jhier_class_at(h, i, &loader);
		if (flow_meth_index_class(f, cls, loader))
			return jpb_err_nomem;
	}
	return place_code(f);
}

/* The resync index over every loaded method (f->pairstart, f->pairidx). */
static int build_opidx(struct flow *f)
{
	free(f->mscan); /* from a build that failed */
	free(f->pairstart);
	free(f->pairidx);
	free(f->thirds);
	u64map_fini(&f->third_at);
	f->pairidx = NULL;
	f->thirds = NULL;
	f->nthirds = f->capthirds = 0;
	int err = index_methods(f);
	size_t nm = f->nmscan;
	struct lists ls = { 0 };
	f->pairstart = calloc(RESYNC_KEYS + 1, sizeof(*f->pairstart));
	ls.tail = calloc(RESYNC_KEYS, sizeof(*ls.tail));
	/* the lists take about one entry per 2 bytes of code (jython: 1.20 M
	 * in 2.20 MB) and their blocks' links and free ends less: room for
	 * one per byte, untouched beyond what they use, rather than a copy at
	 * each doubling */
	if (!f->pairstart || !ls.tail ||
	    (!err && jpb_grow((void **)&ls.blk, &ls.cap, f->mscan[nm].start, sizeof(*ls.blk))))
		err = jpb_err_nomem;
	else
		ls.nb = f->pairstart + 1; /* key k's blocks counted at start[k + 1] */
	uint8_t walk[256];
	plain_kinds(f->plain);
	walk_kinds(f->plain, walk);
	for (size_t m = 0; m < nm && !err; m++) {
		method_lists(f, (uint32_t)m, walk, &ls);
		err = ls.err;
	}
	if (!err && !(err = copy_lists(f, &ls)))
		f->rindex_built = 1;
	free(ls.tail);
	free(ls.blk);
	return err;
}

static int is_handler(const struct fmeth *fm, uint32_t bci)
{
	for (unsigned k = 0; k < fm->hm.m->nexc; k++)
		if (fm->hm.m->exc[k].handler_pc == bci)
			return 1;
	return 0;
}

uint64_t flow_ops_hash(int lost, int want, const uint8_t *ops, size_t n)
{
	uint64_t h = FLOW_FNV_BASIS ^ (uint64_t)lost ^ (uint64_t)(uint32_t)(want + 1) << 32;
	return (flow_fnv1a(h, ops, n) ^ n) * 1099511628211ull;
}

/* The code offsets of every instruction with opcode OP in program order:
 * *LIST (malloc'd) and *N.  The union of OP's lists, sorted through a bit
 * per byte of code (f->opbits, left clear). */
static int op_list(struct flow *f, uint8_t op, uint32_t **list, size_t *n)
{
	size_t words = f->mscan[f->nmscan].start / 64 + 1, total = 0, k = 0;
	if (!f->opbits && !(f->opbits = calloc(words, sizeof(*f->opbits))))
		return jpb_err_nomem;
	const uint32_t *st = f->pairstart;
	for (uint32_t key = (uint32_t)op << 8; key <= ((uint32_t)op << 8 | 0xff); key++)
		total += st[key + 1] - st[key];
	total += st[LONE_BASE + op + 1] - st[LONE_BASE + op];
	if (!(*list = malloc((total + 1) * sizeof(**list))))
		return jpb_err_nomem;
	for (uint32_t key = (uint32_t)op << 8; key <= ((uint32_t)op << 8 | 0xff); key++)
		for (uint32_t i = st[key]; i < st[key + 1]; i++)
			f->opbits[f->pairidx[i] / 64] |= 1ull << (f->pairidx[i] % 64);
	for (uint32_t i = st[LONE_BASE + op]; i < st[LONE_BASE + op + 1]; i++)
		f->opbits[f->pairidx[i] / 64] |= 1ull << (f->pairidx[i] % 64);
	for (size_t w = 0; w < words; w++) {
		for (uint64_t b = f->opbits[w]; b; b &= b - 1)
			(*list)[k++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b));
		f->opbits[w] = 0;
	}
	*n = k;
	return 0;
}

/* The lists of opcode OP for the scan's merge where they are one pair
 * list at most and the lone list, disjoint, in program order (an invoke,
 * a return or a throw is listed under (OP, 0xff) alone): 1 and *LA, *NA,
 * *LB, *NB; else 0, for op_list to unite them.  A search by one opcode
 * is one of those and stops after max_resync + 1 candidates, where
 * op_list sorted all of them (jython: 11 scans, 10 M instructions). */
static int op_lists_apart(const struct flow *f, uint8_t op, const uint32_t **la, size_t *na,
			  const uint32_t **lb, size_t *nb)
{
	const uint32_t *st = f->pairstart;
	uint32_t key = 0;
	unsigned used = 0;
	for (uint32_t k = (uint32_t)op << 8; k <= ((uint32_t)op << 8 | 0xff); k++)
		if (st[k + 1] != st[k]) {
			key = k;
			used++;
		}
	if (used > 1)
		return 0;
	*la = f->pairidx + st[key];
	*na = used ? st[key + 1] - st[key] : 0;
	*lb = f->pairidx + st[LONE_BASE + op];
	*nb = st[LONE_BASE + op + 1] - st[LONE_BASE + op];
	return 1;
}

/* The method whose code holds offset OFF: M, where a dense list's next
 * entry mostly is, or from OFF's page on. */
static uint32_t meth_at(const struct flow *f, uint32_t m, uint32_t off)
{
	const struct flow_mscan *ms = f->mscan;
	if (off >= ms[m].start && off < ms[m + 1].start)
		return m;
	for (m = f->mpage[off >> MPAGE_SHIFT]; ms[m + 1].start <= off; m++)
		;
	return m;
}

/* An entry's third opcode where flow_raw_explains' walk from it has no
 * test of one (no opcode of a lookahead is 0xff: flow_java_opcode maps
 * none to it). */
#define NO_THIRD 0xffu

/* The third opcode of the instruction at BCI of CODE (LEN bytes; PLAIN
 * from plain_kinds) in the list of next opcode O1, or NO_THIRD: where the
 * instruction runs OPS[0] and the next OPS[1] (O1), the opcode that
 * flow_raw_explains requires the instruction after that one to run, as
 * OPS[2].  Its walk goes on only from a successor (raw_succs) of opcode
 * O1; where that is one instruction, and a plain one that the walk
 * passes without a test, its own successor must run OPS[2].  Where two
 * successors run O1 (a fused pair's second instruction and the one after
 * the pair, a branch's two ways), the first may use up the walk's budget
 * before the second is tested: no third opcode. */
static uint8_t entry_third(const uint8_t *code, size_t len, size_t bci, uint8_t o1,
			   const uint8_t *plain)
{
	size_t s[3], at = len;
	unsigned l = plain[code[bci]], ns = 1;
	if (l & PLAIN_ENDS)
		return NO_THIRD;
	/* most fall through: raw_succs' answer without its calls */
	if (l && l < len - bci && !jbc_fused_pair(code[bci], code[bci + l]))
		s[0] = bci + l;
	else
		ns = raw_succs(code, len, bci, s);
	for (unsigned k = 0; k < ns; k++) {
		if (s[k] >= len || (code[s[k]] == o1 && at < len))
			return NO_THIRD;
		if (code[s[k]] == o1)
			at = s[k];
	}
	if (at >= len)
		return NO_THIRD;
	l = plain[code[at]];
	if (!l || (l & PLAIN_ENDS) || l >= len - at || jbc_fused_pair(code[at], code[at + l]))
		return NO_THIRD;
	return code[at + l];
}

/* The third opcodes (entry_third) of list KEY (a pair list, or one of
 * methods' first instructions) in f->thirds, made as the scans by three
 * opcodes or more reach them (thirds_more; jython: 0.11 M of the 0.16 M
 * entries of the lists they read, fop 0.14 of 0.16 M), once each: at the
 * offset third_at says (key + 1), how many are made (4 bytes), then
 * the list's.  *AT; 0, or jpb_err_nomem.  Made for all in
 * the index's walk they cost more than the scans saved (jython: 18 M
 * instructions against 10 M), and so did a fourth opcode beside each
 * third; a byte per entry of the index, touched a list here and there,
 * took 2 MB more memory (a huge page). */
static int list_thirds(struct flow *f, uint32_t key, uint32_t *at)
{
	if (u64map_get(&f->third_at, (uint64_t)key + 1, at))
		return 0;
	uint32_t n = f->pairstart[key + 1] - f->pairstart[key], none = 0;
	if (jpb_grow((void **)&f->thirds, &f->capthirds, f->nthirds + sizeof(none) + n, 1) ||
	    f->nthirds > UINT32_MAX ||
	    u64map_put(&f->third_at, (uint64_t)key + 1, (uint32_t)f->nthirds))
		return jpb_err_nomem;
	*at = (uint32_t)f->nthirds;
	memcpy(f->thirds + *at, &none, sizeof(none));
	f->nthirds += sizeof(none) + n;
	return 0;
}

/* The third opcodes of list KEY's entries from I on (list_thirds, at AT)
 * where a scan reached the last one made: a further 256 at most, so that
 * a scan that stops early (at max_resync) makes no more.  How many are
 * made now. */
static uint32_t thirds_more(struct flow *f, uint32_t key, uint32_t at, uint32_t i)
{
	uint32_t first = f->pairstart[key], n = f->pairstart[key + 1] - first;
	uint32_t end = n - i > 256 ? i + 256 : n;
	uint8_t *t = f->thirds + at + sizeof(end);
	const uint8_t *plain = f->plain;
	int methods = key >= ENTRY_BASE;
	uint32_t m = 0;
	for (; i < end; i++) {
		uint32_t v = f->pairidx[first + i];
		m = methods ? v : meth_at(f, m, v);
		const struct flow_mscan *ms = &f->mscan[m];
		t[i] = entry_third(ms->code, ms->len, methods ? 0 : v - ms->start, (uint8_t)key,
				   plain);
	}
	memcpy(f->thirds + at, &end, sizeof(end));
	return end;
}

/* Is the instruction before BCI (an instruction of CODE) an invoke?
 * Exact where maybe_after_invoke guesses: a walk of the instructions. */
static int after_invoke(const uint8_t *code, size_t len, size_t bci)
{
	size_t at = 0, prev = 0;
	while (at < bci) {
		int l = jbc_length(code, len, at);
		if (l <= 0)
			return 0;
		prev = at;
		at += (size_t)l;
	}
	return at == bci && bci && jbc_is_invoke(jbc_table[code[prev]].kind);
}

/* A candidate whose position is known to pass without the method's CFG:
 * its bci (below 65536) with this bit, resolved by resolve_deferred. */
#define DEFERRED 0x80000000u

/* Can the candidate at BCI of method M, which passed flow_raw_explains,
 * skip candidate_at's checks on the CFG, not yet built?  Where the code
 * has no switch, jsr or ret and its CFG builds (jprog_has_cfg checks
 * without building it), flow_raw_explains walked explains' very tree,
 * and after a return the instruction before must be an invoke.  Then
 * the CFG is built only if the search stays under max_resync: searches
 * that find too many had built most of the CFGs a search builds, for
 * nothing (jython: 1411 of 1968). */
static int sure_without_cfg(struct flow *f, uint32_t m, uint32_t bci, int lost)
{
	const struct fmeth *fm = &f->meths[m];
	const struct flow_mscan *ms = &f->mscan[m];
	return !fm->cfg_tried && !f->mhard[m] && jprog_has_cfg(f->p, fm->hm.m) == 1 &&
	       (lost != LOST_AFTER_RET || after_invoke(ms->code, ms->len, bci));
}

/* The position (instruction index) in method M at BCI where OPS can run
 * given LOST and WANT (resync_candidates), DEFERRED | BCI where it can
 * and the method's CFG is not needed to tell (sure_without_cfg), or -1. */
static int64_t candidate_at(struct flow *f, uint32_t m, uint32_t bci, int lost,
			    int want, const uint8_t *ops, size_t n)
{
	/* first what the raw bytecode can tell (each a necessary condition
	 * of the checks below, which are made again) */
	if (lost == LOST_AT_ENTRY && bci != 0)
		return -1;
	const struct flow_mscan *ms = &f->mscan[m];
	unsigned rb = 4096;
	if (!flow_entry_fits(f, m, want) ||
	    (lost == LOST_AFTER_RET && !maybe_after_invoke(ms->code, bci)) ||
	    (lost == LOST_AT_HANDLER && !is_handler(&f->meths[m], bci)) ||
	    !flow_raw_explains(ms->code, ms->len, bci, ops, n, &rb))
		return -1;
	if (sure_without_cfg(f, m, bci, lost))
		return DEFERRED | bci;
	/* the index holds bcis: the CFG is built for candidates only */
	const struct jcfg *g = flow_meth_cfg(f, m);
	int32_t pos = g ? jcfg_index_of(g, bci) : -1;
	if (pos < 0 || (lost == LOST_AT_ENTRY && pos != 0) || !flow_entry_fits(f, m, want))
		return -1;
	if (lost == LOST_AFTER_RET &&
	    (pos == 0 || !jbc_is_invoke(jcfg_insn(g, (uint32_t)pos - 1)->kind)))
		return -1;
	if (lost == LOST_AT_HANDLER &&
	    !is_handler(&f->meths[m], jcfg_insn(g, (uint32_t)pos)->bci))
		return -1;
	unsigned budget = 4096;
	return explains(f, m, (uint32_t)pos, ops, n, &budget) ? pos : -1;
}

/* The DEFERRED candidates of OUT (N) at their positions, their CFGs
 * built now; jpb_err_nomem where a CFG that checked out fails. */
static int resolve_deferred(struct flow *f, uint64_t *out, uint32_t n)
{
	for (uint32_t c = 0; c < n; c++) {
		if (!(out[c] & DEFERRED))
			continue;
		uint32_t m = (uint32_t)(out[c] >> 32);
		const struct jcfg *g = flow_meth_cfg(f, m);
		int32_t pos = g ? jcfg_index_of(g, (uint32_t)out[c] & 0xffff) : -1;
		if (pos < 0)
			return jpb_err_nomem;
		out[c] = (uint64_t)m << 32 | (uint32_t)pos;
	}
	return 0;
}

/* The cache slot of the search whose flow_ops_hash is H, after LOST.
 * Not H's low bits: WANT enters H above them and LOST beside the first
 * opcode, so searches by one opcode at an entry that says 2 and after a
 * return (ireturn, areturn) took one slot and each emptied the other
 * (fop: 41 of 304 scans). */
static uint32_t rcache_slot(uint64_t h, int lost)
{
	h = (h ^ h >> 32 ^ (uint64_t)lost << 24) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (RCACHE_SIZE - 1);
}

/* The instructions where OPS (OPS[0] == OP) can run given LOST (at an
 * entry that says WANT, unless -1: only methods that fit,
 * flow_entry_fits), from the cache or a scan of the opcode index: *CAND (into f->rpool) and *NC, or *NC = RCACHE_TOO_MANY
 * when more than max_resync fit. */
static int resync_candidates(struct flow *f, uint8_t op, int lost, int want,
			     const uint8_t *ops, size_t n, const uint64_t **cand,
			     uint32_t *nc)
{
	if (!f->rc && !(f->rc = calloc(RCACHE_SIZE, sizeof(*f->rc))))
		return jpb_err_nomem;
	uint64_t h = flow_ops_hash(lost, want, ops, n);
	struct rcache *e = &f->rc[rcache_slot(h, lost)];
	if (e->used && e->h == h && e->lost == lost && e->want == want && e->n == n &&
	    !memcmp(e->ops, ops, n)) {
		*cand = f->rpool + e->off;
		*nc = e->cnt;
		return 0;
	}
	if (f->nrpool > (1u << 22)) { /* the pool only grows: start over */
		f->nrpool = 0;
		memset(f->rc, 0, RCACHE_SIZE * sizeof(*f->rc));
	}
	/* room for max_resync + 1 entries from nrpool on */
	if (jpb_grow((void **)&f->rpool, &f->caprpool, f->nrpool + f->o.max_resync,
		     sizeof(*f->rpool)))
		return jpb_err_nomem;
	uint64_t *out = f->rpool + f->nrpool;
	uint32_t cnt = 0, *own = NULL;
	/* Candidates in program order: with a next opcode the merge of its
	 * (op, next) and (op, end) lists (at an entry, of their bci 0 ones),
	 * else all of the opcode's: its lists as they are where they are
	 * apart (op_lists_apart), else united (op_list). */
	const uint32_t *la, *lb = NULL;
	size_t na, nb = 0, ia = 0, ib = 0;
	/* by three opcodes or more, la's third opcodes (entry_third): the
	 * first DONE made, at TAT in f->thirds (list_thirds) */
	const uint8_t *ta = NULL;
	uint32_t ka = 0, tat = 0, done = 0;
	if (n >= 2) {
		uint32_t base = lost == LOST_AT_ENTRY ? ENTRY_BASE : 0;
		uint32_t kb = base + ((uint32_t)op << 8 | 0xff);
		ka = base + ((uint32_t)op << 8 | ops[1]);
		if (n >= 3) {
			if (list_thirds(f, ka, &tat))
				return jpb_err_nomem;
			memcpy(&done, f->thirds + tat, sizeof(done));
			ta = f->thirds + tat + sizeof(done);
		}
		la = f->pairidx + f->pairstart[ka];
		na = f->pairstart[ka + 1] - f->pairstart[ka];
		lb = f->pairidx + f->pairstart[kb];
		nb = f->pairstart[kb + 1] - f->pairstart[kb];
	} else if (!op_lists_apart(f, op, &la, &na, &lb, &nb)) {
		if (op_list(f, op, &own, &na))
			return jpb_err_nomem;
		la = own;
	}
	/* the entry lists hold methods, in the same order as their code */
	int methods = n >= 2 && lost == LOST_AT_ENTRY;
	uint32_t m = 0;
	for (;;) {
		/* lb's entries end the lookahead: no third opcode */
		while (ta) {
			while (ia < done && ta[ia] != ops[2] && ta[ia] != NO_THIRD)
				ia++;
			if (ia < done || ia >= na)
				break;
			done = thirds_more(f, ka, tat, done);
		}
		if (ia >= na && ib >= nb)
			break;
		uint32_t v = ib >= nb || (ia < na && la[ia] < lb[ib]) ? la[ia++] : lb[ib++];
		m = methods ? v : meth_at(f, m, v);
		uint32_t bci = methods ? 0 : v - f->mscan[m].start;
		int64_t pos = candidate_at(f, m, bci, lost, want, ops, n);
		if (pos < 0)
			continue;
		if (cnt == f->o.max_resync) {
			cnt = RCACHE_TOO_MANY;
			break;
		}
		out[cnt++] = (uint64_t)m << 32 | (uint64_t)pos;
	}
	free(own);
	if (cnt != RCACHE_TOO_MANY && resolve_deferred(f, out, cnt))
		return jpb_err_nomem;
	*e = (struct rcache){ h, 1, (uint8_t)lost, (uint8_t)n, { 0 }, want,
			      (uint32_t)f->nrpool, cnt };
	memcpy(e->ops, ops, n);
	if (cnt != RCACHE_TOO_MANY)
		f->nrpool += cnt;
	*cand = f->rpool + e->off;
	*nc = cnt;
	return 0;
}

/* The method whose return left the state FROM with an unknown caller: its
 * top frame, outermost and at a return instruction; -1 otherwise. */
static int64_t returning_meth(struct flow *f, uint32_t from)
{
	const struct frame *t = from < f->nnodes ? f->nodes[from].top : NULL;
	if (!t || t->up || !flow_meth_cfg(f, t->meth) ||
	    flow_insn(f, t->meth, t->pos)->kind != JBC_RETURN)
		return -1;
	return t->meth;
}

/* Can the invoke before instruction POS of method M have called CALLEE?
 * Only an ordinary call whose candidates the class hierarchy lists can
 * say no: invokedynamic, MethodHandle's signature-polymorphic methods
 * (linkage runs callees the hierarchy does not list) and code of hidden
 * classes (no call resolution) may have called anything. */
static int may_have_called(struct flow *f, uint32_t m, uint32_t pos, uint32_t callee)
{
	const struct fmeth *fm = &f->meths[m];
	struct frame at = { .meth = m, .pos = pos - 1, .done = 1 };
	const struct jcfg_insn *in = flow_insn(f, m, pos - 1);
	struct jcf_ref ref;
	if (!fm->hm.cls || !f->meths[callee].hm.cls || in->kind == JBC_INVOKE_DYNAMIC ||
	    jcf_cp_ref(fm->hm.cls, in->cp_index, &ref) ||
	    (ref.class_name && !strcmp(ref.class_name, "java/lang/invoke/MethodHandle")))
		return 1;
	const struct jhier_method *c;
	int n = flow_call_targets(f, &at, &c);
	if (n <= 0)
		return 1;
	for (int k = 0; k < n; k++) {
		uint32_t idx;
		if (!flow_meth_index(f, &c[k], &idx) && idx == callee)
			return 1;
	}
	return 0;
}

/* After a return to an unknown caller, the candidates whose invoke may
 * have called the returning method: calls and returns must match.  Where
 * a resynchronisation placed a twin (the same code in another class, e.g.
 * IntPipeline.map for ReferencePipeline.map), the twin's return finds no
 * caller and only the right one goes on.  Moves them to the front of
 * CAND (N entries); returns their count. */
static uint32_t callers_of(struct flow *f, uint32_t ret, uint64_t *cand, uint32_t n)
{
	uint32_t k = 0;
	for (uint32_t c = 0; c < n; c++)
		if (may_have_called(f, (uint32_t)(cand[c] >> 32), (uint32_t)cand[c], ret))
			cand[k++] = cand[c];
	return k;
}

/* Search the whole program for where the opcode of event I (first of the
 * step's opcodes OP) can run, given what LOST says; add the candidates
 * that explain the next opcodes, or a lost node when there are none or
 * too many. */
int flow_resync(struct flow *f, uint32_t i, uint8_t op, int lost, uint32_t from,
		  struct frame *below)
{
	if (!f->rindex_built && build_opidx(f))
		return jpb_err_nomem;
	uint8_t ops[64];
	size_t n = flow_lookahead(f, i, ops);
	if (!n || ops[0] != op) { /* the second half of a fused dispatch */
		ops[0] = op;
		n = 1;
	}
	const uint64_t *cand;
	uint32_t nc;
	/* an unknown callee: the methods its entry fits (RECONSTRUCTION.md,
	 * "The locals of a method entry"), or, if none, all as without */
	int want = lost == LOST_AT_ENTRY ? f->entry_want : -1;
	int err = resync_candidates(f, op, lost, want, ops, n, &cand, &nc);
	if (!err && want >= 0 && !nc) {
		f->sum.entries_mismatched++;
		err = resync_candidates(f, op, lost, -1, ops, n, &cand, &nc);
	}
	f->sum.resyncs++;
	if (err)
		return err;
	if (nc == RCACHE_TOO_MANY || !nc)
		return flow_add_node_below(f, NULL, LOST_ANY, from, below);
	int64_t ret = lost == LOST_AFTER_RET ? returning_meth(f, from) : -1;
	uint64_t mine[64];
	if (ret >= 0 && nc <= 64) {
		memcpy(mine, cand, nc * sizeof(*cand)); /* the cache keeps all */
		cand = mine;
		if (!(nc = callers_of(f, (uint32_t)ret, mine, nc)))
			return flow_add_node_below(f, NULL, LOST_ANY, from, below);
	}
	for (uint32_t c = 0; c < nc && !err; c++) {
		struct frame *t = flow_frame_new(f, below, (uint32_t)(cand[c] >> 32),
					    (uint32_t)cand[c], 1);
		if (t)
			t->doubt = nc > 1; /* the trace left one position: certain */
		err = t ? flow_add_node(f, t, LOST_NONE, from) : jpb_err_nomem;
	}
	return err;
}

