// SPDX-License-Identifier: MIT
/*
 * The executor: walks the generated machine code as the simulated JVM
 * would run it for each truth event, and reports every instruction and
 * control transfer to the CPU's packet writer and instruction truth.
 *
 * Each event handler sets the Java-level decisions (which codelet the
 * dispatch jumps to, whether the branch is taken, which entry the call
 * reaches) and runs the code until it needs a decision the next event
 * makes: that is where the thread stops between events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "java/bytecodes.h"
#include "sim.h"
#include "util.h"

struct xctx {
	uint64_t dispatch, invoke, adapt, sw, stop_ip;
	uint64_t block_lo, block_hi; /* if set: stop on leaving [lo, hi) */
	int taken, check_fail, allow_ret, allow_rt, rt_return, fault;
	int fault_armed;
	/* an interpreted entry: locals its loop has yet to zero, -1 unknown */
	int32_t locals;
	uint32_t entry_mid; /* the method entered */
};

enum stop { S_DISPATCH, S_INVOKE, S_RET, S_RT, S_STOPIP, S_OUT };

static const struct cg_region *region_of(struct sim *s, uint64_t ip)
{
	const struct cg_region *r = &s->in.r;
	if (ip >= r->base && ip < r->base + r->bytes.len)
		return r;
	r = &s->in.s;
	if (ip >= r->base && ip < r->base + r->bytes.len)
		return r;
	struct nmethod *nm = jit_find(s->jit, ip);
	return nm ? &nm->r : NULL;
}

const struct cg_insn *sim_insn(struct sim *s, uint64_t ip)
{
	const struct cg_region *r = region_of(s, ip);
	long i = r ? cg_find(r, ip) : -1;
	return i < 0 ? NULL : &r->insns[i];
}

static void mpush(struct sim_thr *th, uint64_t v)
{
	GROW(th->ms, th->msp, th->mcap);
	th->ms[th->msp++] = v;
}

/* An empty machine stack only follows truth the model could not follow:
 * the return then goes back to the call stub. */
static uint64_t mpop(struct sim *s, struct sim_thr *th)
{
	if (!th->msp) {
		s->resyncs++;
		return s->in.call_stub_ret;
	}
	return th->ms[--th->msp];
}

/* The latest simulated time any CPU has reached.  CPUs run slices one at
 * a time, so code loads and frees are stamped with it: no CPU ran the old
 * code after its free, and a load never predates a free. */
static uint64_t horizon(const struct sim *s)
{
	uint64_t h = 0;
	for (unsigned i = 0; i < s->o.cpus; i++)
		if (s->cpus[i].now > h)
			h = s->cpus[i].now;
	return h;
}

static void advance(struct sim_cpu *c, uint64_t ns)
{
	c->now += ns;
	ptenc_time(c->pe, c->base_ns + c->now);
}

static void truth_ip(struct sim *s, struct sim_cpu *c, uint64_t ip)
{
	if (!s->o.itruth)
		return;
	/* a loss that began again before this instruction (a window still
	 * open at a switch-in's OVF) moves the resume to its own OVF */
	int mark = c->mark_resume && !ptenc_dropping(c->pe);
	uint64_t v = ip | (mark ? 1ull << 63 : 0);
	c->mark_resume &= !mark;
	if (jpb_buf_u64(&c->itruth, v))
		die_nomem();
}

/* The oracle's list of interpreted entries per CPU (sim/entries/cpuN). */
static void truth_entry(struct sim *s, struct sim_cpu *c, const struct xctx *x)
{
	if (s->o.itruth && jpb_buf_u32(&c->entries, x->entry_mid))
		die_nomem();
}

static void note_resume(struct sim_cpu *c)
{
	if (ptenc_take_resumed(c->pe))
		c->mark_resume = 1;
}

static void pge(struct sim_cpu *c, struct sim_thr *th, uint64_t ip)
{
	th->ip = ip;
	th->traced = 1;
	ptenc_pge(c->pe, ip);
	note_resume(c);
}

static void async_out(struct sim_cpu *c, struct sim_thr *th)
{
	ptenc_async_pgd(c->pe, th->ip);
	th->traced = 0;
}

static uint64_t take(uint64_t *v)
{
	uint64_t t = *v;
	*v = 0;
	return t;
}

/* The target of an indirect branch, 0 if the truth did not say. */
static uint64_t ind_target(struct xctx *x, const struct cg_insn *in)
{
	switch (in->role) {
	case CR_DISPATCH:
		if (x->fault)
			x->fault_armed = 1;
		return take(&x->dispatch);
	case CR_INVOKE:
		return take(&x->invoke);
	case CR_ADAPT:
		return take(&x->adapt);
	default:
		return take(&x->sw);
	}
}

static int is_return_jump(const struct cg_insn *in)
{
	return in->kind == CK_JMP_IND && in->role == CR_RETURN;
}

static int pending_target(const struct xctx *x, const struct cg_insn *in)
{
	switch (in->role) {
	case CR_DISPATCH: return x->dispatch != 0;
	case CR_INVOKE: return x->invoke != 0;
	case CR_ADAPT: return x->adapt != 0;
	default: return x->sw != 0;
	}
}

/* Whether the thread must stop before IN for want of a decision. */
static int must_stop(const struct xctx *x, const struct cg_insn *in,
		     enum stop *why)
{
	switch (in->role) {
	case CR_DISPATCH:
		*why = S_DISPATCH;
		return !x->dispatch;
	case CR_INVOKE:
		*why = S_INVOKE;
		return !x->invoke;
	case CR_RETURN:
		*why = S_RET;
		return !x->allow_ret;
	case CR_RT:
		*why = S_RT;
		return !x->allow_rt;
	}
	return 0;
}

/* A call into the runtime: tracing stops at the branch (TIP.PGD with its
 * target); with rt_return the runtime returns right away (TIP.PGE). */
static int runtime_call(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
			struct xctx *x, const struct cg_insn *in)
{
	x->allow_rt--;
	ptenc_pgd(c->pe, in->target);
	th->traced = 0;
	th->ip = in->ip + in->size;
	advance(c, in->target == RT_NATIVE ? s->o.cost_native_ns : s->o.cost_rt_ns);
	if (!x->rt_return)
		return 0;
	x->rt_return = 0;
	pge(c, th, th->ip);
	return 1;
}

/* A hardware interrupt before the next instruction: the kernel runs
 * (user-only tracing: FUP + TIP.PGD) and returns to the same instruction
 * (TIP.PGE), in the middle of whatever codelet or block it was. */
static void interrupt(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	if (!s->o.irq_every)
		return;
	if (!c->irq_left)
		c->irq_left = 1 + rng_below(&s->rng, 2 * s->o.irq_every);
	if (--c->irq_left)
		return;
	s->irqs++;
	uint64_t ip = th->ip;
	async_out(c, th);
	advance(c, 2000);
	pge(c, th, ip);
}

/* One event runs a few dozen instructions; far more means the code loops
 * on decisions the truth did not make. */
#define RUN_BUDGET 4096

/* Whether the thread stops before its next instruction (*in), and why. */
static int stop_before(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		       struct xctx *x, unsigned budget,
		       const struct cg_insn **in, enum stop *why)
{
	*why = S_OUT;
	if (!th->traced)
		return 1;
	if (!budget) {
		s->resyncs++;
		async_out(c, th);
		return 1;
	}
	if (x->fault_armed) { /* the codelet's first access faults */
		x->fault_armed = 0;
		x->fault = 0;
		async_out(c, th);
		return 1;
	}
	if ((x->stop_ip && th->ip == x->stop_ip) ||
	    (x->block_hi && (th->ip < x->block_lo || th->ip >= x->block_hi))) {
		*why = S_STOPIP;
		return 1;
	}
	*in = sim_insn(s, th->ip);
	if (!*in)
		die("internal: thread %u at %#llx: no instruction there", th->tid,
		    (unsigned long long)th->ip);
	if (must_stop(x, *in, why))
		return 1;
	if (((*in)->kind == CK_JMP_IND || (*in)->kind == CK_CALL_IND) &&
	    !is_return_jump(*in) && !pending_target(x, *in)) {
		/* the truth goes on elsewhere: leave before the jump */
		s->resyncs++;
		async_out(c, th);
		*why = S_OUT;
		return 1;
	}
	return 0;
}

/* Execute IN: the packets its control transfer produces, the machine
 * stack, the next ip.  0 if it left traced code for good. */
static int step(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		struct xctx *x, const struct cg_insn *in)
{
	uint64_t next = in->ip + in->size, t;
	int taken;
	switch (in->kind) {
	case CK_PLAIN:
		if (in->role == CR_PUSH_RET)
			mpush(th, in->target);
		break;
	case CK_JCC:
		taken = in->role == CR_BRANCH  ? x->taken
			: in->role == CR_CHECK ? x->check_fail
			: in->role == CR_LOCALS_SKIP ? x->locals == 0
			: in->role == CR_LOCALS_LOOP ? --x->locals > 0
						     : 0;
		if (in->role == CR_CHECK)
			x->check_fail = 0;
		if (in->role == CR_LOCALS_SKIP)
			truth_entry(s, c, x);
		ptenc_tnt(c->pe, taken);
		if (taken)
			next = in->target;
		break;
	case CK_JMP:
		next = in->target;
		break;
	case CK_JMP_IND:
		if (is_return_jump(in)) { /* the return address, popped */
			x->allow_ret = 0;
			next = mpop(s, th);
		} else {
			next = ind_target(x, in);
		}
		ptenc_tip(c->pe, next);
		break;
	case CK_CALL_IND:
		t = ind_target(x, in);
		mpush(th, next);
		ptenc_tip(c->pe, t);
		ptenc_call(c->pe, next);
		next = t;
		break;
	case CK_CALL:
		if (in->role == CR_RT) /* sets th->ip itself */
			return runtime_call(s, c, th, x, in);
		mpush(th, next);
		ptenc_call(c->pe, next);
		next = in->target;
		break;
	case CK_RET:
		x->allow_ret = 0;
		next = mpop(s, th);
		ptenc_ret(c->pe, next);
		break;
	}
	th->ip = next;
	return 1;
}

/* A method whose max_locals no class file gives: the real entry's loop
 * would run a count the model cannot know, so the loop runs untraced
 * (FUP + TIP.PGD at its jle, TIP.PGE after it), as any code the model
 * cannot follow. */
static void unknown_locals(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
			   const struct xctx *x, const struct cg_insn *in)
{
	truth_entry(s, c, x);
	async_out(c, th);
	s->unknown_locals++;
	pge(c, th, in->target);
}

static enum stop run(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		     struct xctx *x)
{
	unsigned loop = x->locals > 0 ? 3u * (unsigned)x->locals : 0;
	for (unsigned budget = RUN_BUDGET + loop;; budget--) {
		const struct cg_insn *in = NULL;
		enum stop why;
		if (stop_before(s, c, th, x, budget, &in, &why))
			return why;
		if (in->role == CR_LOCALS_SKIP && x->locals < 0) {
			unknown_locals(s, c, th, x, in);
			continue;
		}
		interrupt(s, c, th);
		ptenc_insn(c->pe, in->ip);
		note_resume(c);
		truth_ip(s, c, in->ip);
		if (!step(s, c, th, x, in))
			return S_OUT;
	}
}

/* ---- helpers over the truth ---- */

static const struct jpb_truth_event *ev_at(const struct sim_thr *th, size_t i)
{
	return i < th->tt->n ? &th->tt->ev[i] : NULL;
}

static struct frame *top(struct sim_thr *th)
{
	return th->nfr ? &th->fr[th->nfr - 1] : NULL;
}

static struct frame *push_frame(struct sim_thr *th, uint32_t mid, uint8_t mode)
{
	GROW(th->fr, th->nfr, th->cfr);
	struct frame *f = &th->fr[th->nfr++];
	memset(f, 0, sizeof(*f));
	f->mid = mid;
	f->mode = mode;
	f->msp_base = th->msp;
	return f;
}

static int same_frame_next(const struct jpb_truth_event *e,
			   const struct jpb_truth_event *nx)
{
	return nx && nx->kind == JPB_TRUTH_BYTECODE && nx->method_id == e->method_id;
}

static int branch_taken(const struct sim_method *m,
			const struct jpb_truth_event *e,
			const struct jpb_truth_event *nx)
{
	long t = jbc_branch_target(m->code, m->code_len, e->bci);
	int len = jbc_length(m->code, m->code_len, e->bci);
	return same_frame_next(e, nx) && t >= 0 && nx->bci == t &&
	       t != e->bci + len;
}

/* ---- deoptimization ---- */

/* The trap's runtime call has left traced code; the nmethod's frames
 * become interpreter frames and execution resumes in the interpreter,
 * re-executing the current bytecode. */
static void deoptimize(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	struct frame *f = top(th);
	struct nmethod *nm = f->nm;
	size_t root = th->nfr - 1;
	while (th->fr[root].mode == FM_INLINED)
		root--;
	th->msp = th->fr[root].msp_base;
	for (size_t i = root; i < th->nfr; i++) {
		struct frame *g = &th->fr[i];
		if (i > root) {
			const struct sim_method *cm = truth_method(s->t, th->fr[i - 1].mid);
			int len = jbc_length(cm->code, cm->code_len, th->fr[i - 1].bci);
			mpush(th, interp_ret_entry(&s->in, (unsigned)len));
			g->msp_base = th->msp;
		}
		g->mode = FM_INTERP;
		g->nm = NULL;
	}
	jit_deopt(s->jit, nm, horizon(s));
	s->deopts++;
	th->prev_op = -1;
	pge(c, th, s->in.deopt_cont);
}

/* ---- events ---- */

/* An invoke the truth shows no callee events for runs an intrinsic entry,
 * which returns at once. */
static void intrinsic_call(struct sim *s, struct xctx *x,
			   const struct jpb_truth_event *e,
			   const struct jpb_truth_event *nx)
{
	if (!jbc_is_invoke(jbc_info(e->opcode)->kind) ||
	    (nx && (nx->kind == JPB_TRUTH_ENTRY || nx->kind == JPB_TRUTH_THROW)))
		return;
	x->invoke = s->in.entry[MK_INTRINSIC];
	x->allow_ret = 1;
	s->intrinsics++;
}

static void interp_bytecode(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
			    const struct jpb_truth_event *e,
			    const struct jpb_truth_event *nx, int taken, int fault)
{
	struct xctx x = { 0 };
	x.dispatch = interp_codelet(&s->in, th->prev_op, e->opcode);
	x.taken = taken;
	x.fault = fault;
	intrinsic_call(s, &x, e, nx);
	th->prev_op = e->opcode;
	run(s, c, th, &x);
	advance(c, s->o.cost_interp_ns);
}

/* On-stack replacement: the taken back edge's counter overflowed and the
 * runtime compiled the method; the branch codelet calls it (TIP.PGD/PGE)
 * and jumps into NM at the target's block, where the frame goes on as a
 * compiled one.  0 if NM has no block there (the frame stays
 * interpreted). */
static int osr_branch(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		      struct frame *f, struct nmethod *nm,
		      const struct jpb_truth_event *e, long target, int taken)
{
	const struct nblock *b = target >= 0 ? nmethod_block(nm, 0, (uint16_t)target)
					     : NULL;
	if (!b)
		return 0;
	struct xctx x = { 0 };
	x.dispatch = interp_codelet(&s->in, th->prev_op, e->opcode);
	x.taken = taken;
	x.check_fail = 1;
	x.allow_rt = 1;
	x.rt_return = 1;
	x.adapt = b->start;
	x.stop_ip = b->start;
	run(s, c, th, &x);
	advance(c, s->o.cost_interp_ns);
	f->mode = FM_COMPILED;
	f->nm = nm;
	f->scope = 0;
	th->prev_op = -1;
	s->osr_entries++;
	return 1;
}

/* Where a return into frame G lands: its interpreter return entry, the
 * instruction after the call in its compiled block, or the call stub. */
static uint64_t return_address(struct sim *s, const struct frame *g)
{
	if (!g || g->mode == FM_NATIVE || g->mode == FM_BLIND)
		return s->in.call_stub_ret;
	const struct sim_method *m = truth_method(s->t, g->mid);
	int len = jbc_length(m->code, m->code_len, g->bci);
	if (g->mode == FM_INTERP)
		return interp_ret_entry(&s->in, len == 5 ? 5u : 3u);
	const struct nblock *b = nmethod_block(g->nm, g->scope, g->bci);
	const struct cg_region *r = &g->nm->r;
	for (long i = b ? cg_find(r, b->start) : -1; i >= 0 && (size_t)i < r->ninsns &&
						     r->insns[i].ip < b->end; i++)
		if (r->insns[i].kind == CK_CALL_IND)
			return r->insns[i].ip + r->insns[i].size;
	return s->in.call_stub_ret;
}

/* The truth does not continue where our model stands (it began inside a
 * method, or a frame is missing): leave traced code and resume in the
 * interpreter at this event's method, as a deoptimization would. */
static void resync(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		   const struct jpb_truth_event *e)
{
	/* Coming back from untraced code is normal; disagreeing while in
	 * traced code means the truth skipped something. */
	int surprise = th->traced;
	if (th->traced)
		async_out(c, th);
	struct frame *f = top(th);
	if (f && f->mid != e->method_id) {
		size_t i = th->nfr;
		while (i > 0 && th->fr[i - 1].mid != e->method_id)
			i--;
		th->nfr = i; /* pop to a frame of this method, if any */
		f = top(th);
	}
	if (!f) {
		f = push_frame(th, e->method_id, FM_INTERP);
		mpush(th, s->in.call_stub_ret); /* unknown caller */
		f->msp_base = th->msp;
		s->resyncs += surprise;
	} else if (f->mode == FM_BLIND) {
		/* bytecodes begin inside the frame: from here on it runs
		 * in the interpreter, returning where its caller expects */
		th->msp = f->msp_base - 1;
		mpush(th, return_address(s, th->nfr > 1 ? &th->fr[th->nfr - 2] : NULL));
		s->blind++;
	} else {
		s->resyncs += surprise;
	}
	f->mode = FM_INTERP;
	f->nm = NULL;
	th->prev_op = -1;
	pge(c, th, s->in.deopt_cont);
	struct xctx x = { 0 };
	run(s, c, th, &x); /* to the dispatch */
}

static int is_trap_stop(struct sim *s, struct sim_thr *th)
{
	const struct cg_insn *in = sim_insn(s, th->ip);
	return in && in->role == CR_RT && in->target == RT_TRAP;
}

static void compiled_bytecode(struct sim *s, struct sim_cpu *c,
			      struct sim_thr *th, struct frame *f,
			      const struct jpb_truth_event *e,
			      const struct jpb_truth_event *nx, int taken,
			      int fault)
{
	struct nmethod *nm = f->nm;
	const struct nblock *b = nmethod_block(nm, f->scope, e->bci);
	if (!b) {
		resync(s, c, th, e);
		interp_bytecode(s, c, th, e, nx, taken, fault);
		return;
	}
	if (th->ip != b->start) {
		/* the truth skipped code: continue at this bci's block */
		s->resyncs++;
		async_out(c, th);
		pge(c, th, b->start);
	}
	if (fault) {
		async_out(c, th);
		return;
	}
	struct xctx x = { 0 };
	x.taken = taken;
	const struct scope *sc = &nm->scopes[f->scope];
	int32_t child = e->bci < sc->code_len ? sc->child[e->bci] : -1;
	if (child >= 0) {
		/* inlined call: go on into the callee, or trap if another
		 * receiver arrives */
		const struct nblock *cb = nmethod_block(nm, (uint32_t)child, 0);
		if (nx && nx->kind == JPB_TRUTH_ENTRY &&
		    nx->method_id == nm->scopes[child].method_id)
			x.stop_ip = cb->start;
		else
			x.check_fail = 1;
	} else if (sc->parent >= 0 && jbc_info(e->opcode)->kind == JBC_RETURN) {
		const struct sim_method *pm =
			truth_method(s->t, nm->scopes[sc->parent].method_id);
		int len = jbc_length(pm->code, pm->code_len, sc->caller_bci);
		x.stop_ip = nmethod_block(nm, (uint32_t)sc->parent,
					  (uint16_t)(sc->caller_bci + len))->start;
	} else if (same_frame_next(e, nx)) {
		const struct nblock *nb = nmethod_block(nm, f->scope, nx->bci);
		x.stop_ip = nb ? nb->start : 0;
		x.sw = x.stop_ip;
		intrinsic_call(s, &x, e, nx);
	} else if (!nx) {
		/* the truth ends here: no later decision would stop a loop,
		 * which would otherwise run on to RUN_BUDGET instructions of
		 * bytecodes that never ran */
		x.block_lo = b->start;
		x.block_hi = b->end;
	}
	enum stop st = run(s, c, th, &x);
	advance(c, s->o.cost_jit_ns);
	if (st == S_RT && is_trap_stop(s, th)) {
		struct xctx t = { .allow_rt = 1 };
		run(s, c, th, &t);
		s->traps++;
		deoptimize(s, c, th);
		interp_bytecode(s, c, th, e, nx, taken, 0);
	}
}

static void on_bytecode(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
			const struct jpb_truth_event *e,
			const struct jpb_truth_event *nx)
{
	struct frame *f = top(th);
	if (!f || f->mid != e->method_id || !th->traced ||
	    f->mode == FM_NATIVE || f->mode == FM_BLIND)
		resync(s, c, th, e), f = top(th);
	f->bci = e->bci;
	const struct sim_method *m = truth_method(s->t, e->method_id);
	unsigned kind = jbc_info(e->opcode)->kind;
	int taken = branch_taken(m, e, nx);
	int fault = nx && nx->kind == JPB_TRUTH_THROW && kind != JBC_ATHROW;
	if (f->mode == FM_INTERP) {
		if (kind == JBC_COND_BRANCH || kind == JBC_GOTO) {
			long t = jbc_branch_target(m->code, m->code_len, e->bci);
			struct nmethod *osr = jit_on_branch(
				s->jit, e->method_id, e->bci, kind == JBC_GOTO || taken,
				t >= 0 && t <= e->bci, horizon(s));
			if (osr && !fault && same_frame_next(e, nx) && nx->bci == t &&
			    osr_branch(s, c, th, f, osr, e, t, taken))
				return;
		}
		if (jbc_is_invoke(kind) && nx && nx->kind == JPB_TRUTH_ENTRY)
			jit_on_call(s->jit, e->method_id, e->bci, nx->method_id);
		interp_bytecode(s, c, th, e, nx, taken, fault);
	} else {
		compiled_bytecode(s, c, th, f, e, nx, taken, fault);
	}
}

static int g_is_java(const struct frame *g)
{
	return g && g->mode != FM_NATIVE && g->mode != FM_BLIND;
}

/* Where the caller's code continues after a return into it. */
static void continue_in_caller(struct sim *s, struct xctx *x,
			       struct sim_thr *th,
			       const struct jpb_truth_event *nx)
{
	struct frame *g = top(th);
	if (g && g->mode == FM_COMPILED && nx && nx->kind == JPB_TRUTH_BYTECODE &&
	    nx->method_id == g->mid) {
		const struct nblock *b = nmethod_block(g->nm, g->scope, nx->bci);
		x->stop_ip = b ? b->start : 0;
	}
	if (g && g->mode == FM_INLINED && nx && nx->kind == JPB_TRUTH_BYTECODE &&
	    nx->method_id == g->mid) {
		const struct nblock *b = nmethod_block(g->nm, g->scope, nx->bci);
		x->stop_ip = b ? b->start : 0;
	}
	if (!g || g->mode == FM_NATIVE || g->mode == FM_BLIND)
		x->allow_rt++; /* back in the call stub: leave to the runtime */
	(void)s;
}

/* None of the callee's bytecodes are in the truth: it runs untraced. */
static void enter_blind(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
			uint32_t mid)
{
	const struct cg_insn *at = th->traced ? sim_insn(s, th->ip) : NULL;
	size_t restore = th->msp;
	if (at && at->role == CR_INVOKE && at->kind == CK_JMP_IND && restore)
		restore--; /* the interpreter pushed its return entry */
	if (th->traced)
		async_out(c, th);
	push_frame(th, mid, FM_BLIND)->msp_base = restore + 1;
	th->msp = restore;
	s->blind++;
}

/* An inlined callee: no code runs for the call itself.  1 if so. */
static int enter_inlined(struct sim_thr *th, uint32_t mid)
{
	struct frame *f = top(th);
	if (!f || (f->mode != FM_COMPILED && f->mode != FM_INLINED) || !th->traced)
		return 0;
	const struct scope *sc = &f->nm->scopes[f->scope];
	int32_t child = f->bci < sc->code_len ? sc->child[f->bci] : -1;
	if (child < 0 || f->nm->scopes[child].method_id != mid)
		return 0;
	struct nmethod *nm = f->nm;
	size_t base = f->msp_base;
	struct frame *g = push_frame(th, mid, FM_INLINED);
	g->nm = nm;
	g->scope = (uint32_t)child;
	g->msp_base = base;
	return 1;
}

/* Bring the thread to a call instruction: the caller's invoke, else the
 * call stub (called from the runtime or from native code).  1 if the call
 * is made from compiled code. */
static int reach_call(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	struct frame *f = top(th);
	const struct cg_insn *at = th->traced ? sim_insn(s, th->ip) : NULL;
	if (at && at->role == CR_RT) { /* native code calls back into Java */
		struct xctx xn = { .allow_rt = 1 };
		run(s, c, th, &xn);
		at = NULL;
	}
	if (at && at->role == CR_INVOKE)
		return f && (f->mode == FM_COMPILED || f->mode == FM_INLINED);
	if (th->traced)
		async_out(c, th);
	pge(c, th, s->in.call_stub);
	struct xctx x0 = { 0 };
	run(s, c, th, &x0);
	return 0;
}

/* Where the call goes: compiled entry, i2c or c2i adapter, or the
 * interpreter's entry for the method's kind. */
static void call_targets(struct sim *s, struct xctx *x, struct nmethod *nm,
			 int from_compiled, int kind)
{
	if (nm && from_compiled) {
		x->invoke = nm->entry;
	} else if (nm) {
		x->invoke = s->in.i2c;
		x->adapt = nm->entry;
	} else if (from_compiled) {
		x->invoke = s->in.c2i;
		x->adapt = s->in.entry[kind];
	} else {
		x->invoke = s->in.entry[kind];
	}
	if (nm)
		x->stop_ip = nmethod_block(nm, 0, 0)->start;
}

static void on_entry(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		     const struct jpb_truth_event *e,
		     const struct jpb_truth_event *nx)
{
	const struct sim_method *m = truth_method(s->t, e->method_id);
	if (!(m->access & ACC_NATIVE) &&
	    !(nx && nx->kind == JPB_TRUTH_BYTECODE && nx->method_id == m->id)) {
		enter_blind(s, c, th, m->id);
		return;
	}
	if (enter_inlined(th, m->id))
		return;
	int from_compiled = reach_call(s, c, th);
	int kind = interp_method_kind(m);
	int compile_now = kind != MK_NATIVE && jit_on_invoke(s->jit, m->id, horizon(s));
	/* a method compiled by this call's counter overflow runs compiled
	 * from the next call on */
	struct nmethod *nm = kind == MK_NATIVE || compile_now ? NULL
							       : jit_code(s->jit, m->id);
	struct xctx x = { 0 };
	call_targets(s, &x, nm, from_compiled, kind);
	x.locals = m->zero_locals; /* the zerolocals entries' loop */
	x.entry_mid = m->id;
	if (compile_now) { /* the entry's counter check calls the runtime */
		x.check_fail = 1;
		x.allow_rt = 1;
		x.rt_return = 1;
	}
	run(s, c, th, &x);
	struct frame *g = push_frame(th, m->id,
				     nm ? FM_COMPILED : kind == MK_NATIVE ? FM_NATIVE
									: FM_INTERP);
	g->nm = nm;
	th->prev_op = -1;
	advance(c, s->o.cost_interp_ns);
}

static void on_return(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		    const struct jpb_truth_event *e,
		    const struct jpb_truth_event *nx)
{
	struct frame *f = top(th);
	if (!f || f->mid != e->method_id) {
		s->resyncs++;
		if (th->traced)
			async_out(c, th);
		if (f)
			th->nfr--;
		return;
	}
	uint8_t mode = f->mode;
	th->nfr--;
	if (mode == FM_INLINED)
		return;
	if (mode == FM_BLIND) {
		th->msp = f->msp_base - 1;
		return;
	}
	struct xctx x = { .allow_ret = 1 };
	const struct cg_insn *at = th->traced ? sim_insn(s, th->ip) : NULL;
	int ok;
	if (mode == FM_NATIVE && !th->traced) {
		pge(c, th, s->in.native_after);
		ok = 1;
	} else if (mode == FM_NATIVE) {
		x.allow_rt = 1;
		x.rt_return = 1;
		ok = at && at->role == CR_RT;
	} else {
		ok = at && at->role == CR_RETURN;
	}
	if (!ok || th->msp != f->msp_base) {
		/* The truth returns from a frame whose code did not run to its
		 * return (events before SingleStep was on, or missing events):
		 * leave traced code and drop the frame. */
		s->resyncs++;
		if (th->traced)
			async_out(c, th);
		th->msp = f->msp_base ? f->msp_base - 1 : 0;
		return;
	}
	continue_in_caller(s, &x, th, nx);
	if (th->msp && th->ms[th->msp - 1] == s->in.call_stub_ret &&
	    g_is_java(top(th)))
		x.allow_rt++; /* returning into the call stub: leave */
	run(s, c, th, &x); /* (the native call,) the return, the caller */
	th->prev_op = -1;
}

static void on_throw(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	if (!th->traced)
		return; /* already left at the faulting instruction */
	const struct cg_insn *in = sim_insn(s, th->ip);
	if (in && in->role == CR_RT) {
		struct xctx x = { .allow_rt = 1 };
		run(s, c, th, &x);
	} else {
		async_out(c, th); /* thrown by the runtime (e.g. a callee's link error) */
	}
	advance(c, s->o.cost_rt_ns);
}

static void on_exit_exc(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
			const struct jpb_truth_event *e)
{
	struct frame *f = top(th);
	if (th->traced)
		async_out(c, th);
	if (!f || f->mid != e->method_id) {
		s->resyncs++;
		return;
	}
	if (f->mode != FM_INLINED)
		th->msp = f->msp_base ? f->msp_base - 1 : 0;
	th->nfr--;
}

static void on_catch(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		     const struct jpb_truth_event *e)
{
	struct frame *f = top(th);
	if (th->traced)
		async_out(c, th);
	if (!f || f->mid != e->method_id || f->mode == FM_NATIVE ||
	    f->mode == FM_BLIND)
		return; /* the next bytecode resyncs */
	f->bci = e->bci;
	size_t root = th->nfr - 1;
	while (th->fr[root].mode == FM_INLINED)
		root--;
	th->msp = th->fr[root].msp_base;
	advance(c, s->o.cost_rt_ns);
	if (f->mode == FM_INTERP) {
		th->prev_op = -1;
		pge(c, th, s->in.exc_cont);
		struct xctx x = { 0 };
		run(s, c, th, &x);
		return;
	}
	const struct nblock *b = nmethod_block(f->nm, f->scope, e->bci);
	if (!b) { /* a handler bci the compiled code has no block for */
		f->mode = FM_INTERP;
		f->nm = NULL;
		s->resyncs++;
		return;
	}
	pge(c, th, b->start);
}

/* JVMTI does not post a SingleStep at the location it posted last (HotSpot
 * compares with the thread's last location): a recursive call followed
 * directly by `return` loses the outer frame's return.  Before an exit
 * from an interpreted frame standing after its invoke, put the return
 * back when it sits at exactly the location posted last. */
static void restore_same_location_step(struct sim *s, struct sim_cpu *c,
				       struct sim_thr *th,
				       const struct jpb_truth_event *e)
{
	struct frame *f = top(th);
	if (!f || f->mid != e->method_id || f->mode != FM_INTERP || !th->traced)
		return;
	const struct cg_insn *at = sim_insn(s, th->ip);
	if (!at || at->role != CR_DISPATCH)
		return;
	const struct sim_method *m = truth_method(s->t, f->mid);
	int len = jbc_length(m->code, m->code_len, f->bci);
	if (len <= 0 || !jbc_is_invoke(jbc_info(m->code[f->bci])->kind))
		return;
	uint32_t next = f->bci + (uint32_t)len;
	if (next >= m->code_len || jbc_info(m->code[next])->kind != JBC_RETURN ||
	    th->last_mid != f->mid || th->last_bci != next)
		return;
	struct jpb_truth_event step = { f->mid, (uint16_t)next, m->code[next],
					JPB_TRUTH_BYTECODE };
	s->restored++;
	on_bytecode(s, c, th, &step, e);
}

void exec_event(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	const struct jpb_truth_event *e = ev_at(th, th->pos);
	const struct jpb_truth_event *nx = ev_at(th, th->pos + 1);
	if (e->kind == JPB_TRUTH_EXIT)
		restore_same_location_step(s, c, th, e);
	if (e->kind == JPB_TRUTH_BYTECODE) {
		th->last_mid = e->method_id;
		th->last_bci = e->bci;
	}
	switch (e->kind) {
	case JPB_TRUTH_BYTECODE:
		on_bytecode(s, c, th, e, nx);
		break;
	case JPB_TRUTH_ENTRY:
		on_entry(s, c, th, e, nx);
		break;
	case JPB_TRUTH_EXIT:
		on_return(s, c, th, e, nx);
		break;
	case JPB_TRUTH_THROW:
		on_throw(s, c, th);
		break;
	case JPB_TRUTH_EXIT_EXC:
		on_exit_exc(s, c, th, e);
		break;
	case JPB_TRUTH_CATCH:
		on_catch(s, c, th, e);
		break;
	}
	th->pos++;
}

/* A truth that starts mid-stack (a bounded window, a thread running
 * before VMInit): the frames under the first event's are interpreter
 * frames, each waiting at its invoke (SingleStep keeps the thread in the
 * interpreter), so returns into them go to the interpreter's return
 * entries as they would have.  The first event's own frame, unless the
 * event enters it, has run untraced so far: a blind frame, which the
 * first bytecode turns into an interpreted one. */
void exec_thread_begin(struct sim *s, struct sim_thr *th)
{
	const struct sim_tthread *tt = th->tt;
	const struct jpb_truth_event *e = ev_at(th, 0);
	if (!tt->ncallers || !e)
		return;
	const struct frame *below = NULL;
	for (size_t i = tt->ncallers; i-- > 0;) {
		const struct jpb_truth_frame *cf = &tt->callers[i];
		mpush(th, return_address(s, below));
		int native = cf->bci == JPB_TRUTH_NO_BCI;
		struct frame *f = push_frame(th, cf->method_id,
					     native ? FM_NATIVE : FM_INTERP);
		f->bci = native ? 0 : (uint16_t)cf->bci;
		below = f;
	}
	if (e->kind != JPB_TRUTH_ENTRY) {
		mpush(th, return_address(s, below));
		push_frame(th, e->method_id, FM_BLIND);
	}
	s->window_frames += tt->ncallers;
}

void exec_switch_out(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	(void)s;
	if (th->traced) {
		ptenc_async_pgd(c->pe, th->ip);
	}
}

void exec_switch_in(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	(void)s;
	ptenc_switch_in(c->pe);
	if (th->traced) {
		ptenc_pge(c->pe, th->ip);
		note_resume(c);
	}
}

void exec_thread_end(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	(void)s;
	if (th->traced)
		async_out(c, th);
}
