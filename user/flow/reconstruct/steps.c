// SPDX-License-Identifier: MIT
/* The automaton's transitions: one decoded event (an interpreted opcode,
 * a compiled event, a method entry, an exception or deopt continuation)
 * from the states of the previous step to the next. */
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"
#include "java/bytecodes.h"

/* A frame like T but at POS (run when DONE).  Always inline: interp_from
 * adds ~430 k states this way on jython, and the call's register saves
 * were ~20 instructions each. */
static inline __attribute__((always_inline)) int add_at(struct flow *f, const struct frame *t,
							 uint32_t pos, int done, uint32_t from)
{
	struct frame *n = flow_frame_new(f, t->up, t->meth, pos, done);
	if (n)
		n->doubt = t->doubt;
	return n ? flow_add_node(f, n, LOST_NONE, from) : jpb_err_nomem;
}

static int interp_from(struct flow *f, uint32_t i, struct frame *t, uint8_t op,
		       uint32_t from);

/* The outermost frame of compiled frame T's activation (the bottom of
 * the stack where no frame below is marked act). */
static inline const struct frame *activation_outer(const struct frame *t)
{
	while (!t->act && t->up)
		t = t->up;
	return t;
}


/* The callers of join frame J a transition may go on in: f->jalts[*FIRST
 * ..*FIRST + their count); none when the transition already crossed a
 * join (one join per transition: an edge names one caller). */
static uint32_t join_callers(const struct flow *f, const struct frame *j, uint32_t *first)
{
	if (f->cur_link)
		return 0;
	const struct fjoin *jn = flow_join_of(f, j);
	*first = jn->first;
	return jn->n;
}

/* A return to join J's callers: each goes on after its invoke, its new
 * states' edges naming it. */
static int return_through_join(struct flow *f, uint32_t i, const struct frame *j,
			       uint8_t op, uint32_t from)
{
	uint32_t first = 0, n = join_callers(f, j, &first);
	int err = 0;
	for (uint32_t k = first; k < first + n && !err; k++) {
		struct frame *up = f->jalts[k].up;
		f->cur_link = k + 1;
		err = up->comp ? 0 : interp_from(f, i, up, op, from);
	}
	if (n)
		f->cur_link = 0;
	return err;
}

/* The caller UP of a frame that returns. */
static int return_to(struct flow *f, uint32_t i, struct frame *up, uint8_t op,
		     uint32_t from)
{
	if (!up)
		return flow_resync(f, i, op, LOST_AFTER_RET, from, NULL);
	if (flow_is_join(up))
		return return_through_join(f, i, up, op, from);
	return up->comp ? 0 : interp_from(f, i, up, op, from);
}


/* A compiled activation on top of the stack, whose bytecode the
 * interpreter now runs: after its return the caller goes on; otherwise it
 * was deoptimised and the interpreter re-executes or continues it. */
static int interp_over_compiled(struct flow *f, uint32_t i, struct frame *t,
				uint8_t op, uint32_t from)
{
	const struct frame *a = activation_outer(t);
	if (flow_insn(f, t->meth, t->pos)->kind == JBC_RETURN)
		return return_to(f, i, a->up, op, from);
	struct frame *up = a->up, *top = NULL;
	/* Rebuild the activation as interpreted frames, outermost first. */
	const struct frame *chain[JPB_DECODED_MAX_FRAMES];
	size_t nch = 0;
	for (const struct frame *g = t; nch < JPB_DECODED_MAX_FRAMES; g = g->up) {
		chain[nch++] = g;
		if (g == a)
			break;
	}
	for (size_t k = nch; k-- > 0;) {
		top = flow_frame_new(f, up, chain[k]->meth, chain[k]->pos, 1);
		if (!top)
			return jpb_err_nomem;
		top->doubt = chain[k]->doubt;
		up = top;
	}
	return interp_from(f, i, top, op, from);
}

/* T's method at those of the NS instructions S (of HOT, its CFG's
 * instructions) that run OP, run, each a state from FROM.  Inline in
 * interp_from, which saves the registers once for both. */
static inline __attribute__((always_inline)) int add_running(struct flow *f, const struct frame *t, const struct jcfg_hot *hot,
		       const uint32_t *s, uint32_t ns, uint8_t op, uint32_t from)
{
	int err = 0;
	for (uint32_t k = 0; k < ns && !err; k++)
		if (hot[s[k]].op == op)
			err = add_at(f, t, s[k], 1, from);
	return err;
}

/* Add every state in which the interpreter, with T on top of the stack,
 * runs OP next.  T's instruction and its successors are read from the
 * CFG's hot copies (8 bytes an instruction, the successor lists after
 * them, where its 32-byte instructions, its header and T's fmeth missed
 * the cache at every state; the instructions are T's method's, in
 * range), and the fused pair's test is inline (flow_fuses, out of line,
 * was called for ~270 k states on jython). */
static int interp_from(struct flow *f, uint32_t i, struct frame *t, uint8_t op,
		       uint32_t from)
{
	if (t->comp)
		return interp_over_compiled(f, i, t, op, from);
	const struct jcfg_hot *hot = flow_meth_hot(f, t->meth), in = hot[t->pos];
	if (!t->done)
		return in.op == op ? add_at(f, t, t->pos, 1, from) : 0;
	if (in.kind == JBC_RETURN)
		return return_to(f, i, t->up, op, from);
	uint32_t ns;
	const uint32_t *s = jcfg_hot_succs(hot, t->pos, &ns);
	int err = add_running(f, t, hot, s, ns, op, from);
	/* flow_fuses: t->pos and its successor were one dispatch */
	if (!err && ns == 1 && jbc_fused_pair(in.op, hot[s[0]].op)) {
		s = jcfg_hot_succs(hot, s[0], &ns);
		err = add_running(f, t, hot, s, ns, op, from);
	}
	return err;
}

static int step_interp(struct flow *f, uint32_t i, uint8_t op, int emit)
{
	uint32_t p0 = flow_cur_step(f)->first, pn = flow_cur_step(f)->n;
	int err = flow_step_begin(f, i, emit, op);
	/* a switch's cases times its candidate classes may exceed the cap
	 * (flow_stage_end) */
	flow_stage_begin_added(f);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		struct node *n = &f->nodes[k];
		if (n->lost)
			err = flow_resync(f, i, op, n->lost, k, n->below);
		else
			err = interp_from(f, i, n->top, op, k);
	}
	int end = flow_stage_end(f);
	return err ? err : end;
}

/* Stage the callees of the step's states P0 .. P0 + PN - 1 at a method
 * entry; with WANT >= 0 only those whose method the entry may have
 * entered (flow_entry_fits; a lost state may be anywhere), the others
 * counted in f->nunfit and given no frame; with NOPS > 0 only those whose
 * code can run the next NOPS opcodes (f->stage_ops), the others (that
 * fit) counted in f->nopmiss. */
static int stage_callees(struct flow *f, uint32_t p0, uint32_t pn, int want, size_t nops)
{
	int err = 0;
	f->stage_want = want;
	f->stage_nops = nops;
	f->nunfit = 0;
	f->nopmiss = 0;
	flow_stage_begin(f);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		struct frame *t = f->nodes[k].top;
		if (!t) {
			err = flow_add_node(f, NULL, LOST_AT_ENTRY, k);
			continue;
		}
		if (!flow_is_invoke_at(f, t))
			continue;
		const uint32_t *c;
		uint32_t unfit, opmiss;
		int nc = flow_entry_cands(f, t, &c, &unfit, &opmiss);
		err = nc < 0 ? nc : flow_stage_entries(f, t, c, (uint32_t)nc, k);
		f->nunfit += unfit;
		f->nopmiss += opmiss;
		if (!err && !nc && !unfit && !opmiss)
			/* an unknown callee: found by resynchronisation, on top
			 * of its caller's known frames */
			err = flow_add_node_below(f, NULL, LOST_AT_ENTRY, k, t);
	}
	f->stage_want = -1;
	f->stage_nops = 0;
	return err;
}

static int step_entry(struct flow *f, uint32_t i, unsigned codelet)
{
	/* Native and intrinsic entries run no bytecode of the callee. */
	if (codelet & CODELET_NO_BYTECODE)
		return 0;
	/* the locals the entry zeroed, and its kind, tell callees apart
	 * (RECONSTRUCTION.md, "The locals of a method entry") */
	int want = flow_entry_want(codelet, f->ev[i].locals);
	f->entry_want = want; /* for an unknown callee's resynchronisation */
	uint32_t p0 = flow_cur_step(f)->first, pn = flow_cur_step(f)->n;
	int err = flow_step_begin(f, i, 0, 0);
	/* a virtual call may have hundreds of candidate callees: the cap
	 * is applied once all are known (flow_stage_end), and its room goes
	 * to callees that fit the entry.  A state none of whose callees fits
	 * dies, as any path the trace contradicts; if none fits at all, all
	 * are staged (the trace and the program model disagree: the thread
	 * must not lose its place because of the filter). */
	/* the callee's first opcodes (the lookahead always holds them) */
	size_t nops = flow_lookahead(f, i + 1, f->stage_ops);
	f->stage_oph = flow_ops_hash(LOST_NONE, -1, f->stage_ops, nops);
	int w = want;
	int r = stage_callees(f, p0, err ? 0 : pn, w, nops);
	if (!err && !r && f->nunfit) {
		size_t fit = f->nstage + f->nopmiss;
		f->sum.entries_narrowed += fit > 0;
		f->sum.entries_mismatched += !fit;
		if (!fit)
			r = stage_callees(f, p0, pn, w = -1, nops);
	}
	/* no callee can run the next opcodes: the states are staged as
	 * without the test, and die within the lookahead (which then
	 * resyncs) */
	if (!err && !r && !f->nstage && f->nopmiss)
		r = stage_callees(f, p0, pn, w, 0);
	err = err ? err : r;
	int end = flow_stage_end_entries(f);
	return err ? err : end;
}

/* The handlers of T's frames from the top down (DEPTH of them already
 * unwound), for the state FROM; through a join, of each caller's. */
static int unwind(struct flow *f, struct frame *t, int depth, uint32_t from)
{
	int err = 0;
	for (; t && depth < MAX_UNWIND && !err; t = t->up, depth++) {
		if (flow_is_join(t)) {
			uint32_t first = 0, n = join_callers(f, t, &first);
			for (uint32_t k = first; k < first + n && !err; k++) {
				f->cur_link = k + 1;
				err = unwind(f, f->jalts[k].up, depth, from);
			}
			if (n)
				f->cur_link = 0;
			return err;
		}
		if (t->comp)
			continue; /* a compiled handler shows as compiled events */
		uint32_t nx;
		const uint32_t *x = jcfg_xsuccs(flow_meth_cfg(f, t->meth), t->pos, &nx);
		for (uint32_t h = 0; h < nx && !err; h++)
			err = add_at(f, t, x[h], 0, from);
	}
	if (!t && !err)
		err = flow_add_node(f, NULL, LOST_AT_HANDLER, from);
	return err;
}

/* An exception continues at a handler of the top frame or of a caller. */
static int step_exception(struct flow *f, uint32_t i)
{
	uint32_t p0 = flow_cur_step(f)->first, pn = flow_cur_step(f)->n;
	int err = flow_step_begin(f, i, 0, 0);
	for (uint32_t k = p0; k < p0 + pn && !err; k++)
		err = unwind(f, f->nodes[k].top, 0, k);
	return err;
}

/* Deoptimisation: the top compiled activation becomes interpreted frames
 * and its bytecode is re-executed (or, if it completed, continued). */
static int step_deopt(struct flow *f, uint32_t i)
{
	uint32_t p0 = flow_cur_step(f)->first, pn = flow_cur_step(f)->n;
	int err = flow_step_begin(f, i, 0, 0);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		struct frame *t = f->nodes[k].top;
		if (!t || !t->comp) {
			err = flow_add_node(f, t, f->nodes[k].lost, k);
			continue;
		}
		const struct frame *chain[JPB_DECODED_MAX_FRAMES];
		size_t nch = 0;
		const struct frame *g = t;
		for (; nch < JPB_DECODED_MAX_FRAMES; g = g->up) {
			chain[nch++] = g;
			if (g->act || !g->up)
				break;
		}
		for (int redo = 1; redo >= 0 && !err; redo--) {
			struct frame *up = chain[nch - 1]->up, *top = NULL;
			for (size_t j = nch; j-- > 0;) {
				top = flow_frame_new(f, up, chain[j]->meth, chain[j]->pos,
						j ? 1 : !redo);
				if (!top)
					return jpb_err_nomem;
				top->doubt = chain[j]->doubt;
				up = top;
			}
			err = flow_add_node(f, top, LOST_NONE, k);
		}
	}
	return err;
}

/* Frames of compiled event E on BASE: outermost first, all compiled. */
static struct frame *push_compiled(struct flow *f, struct frame *base,
				   const uint32_t *meth, const uint32_t *pos,
				   uint32_t nf)
{
	struct frame *up = base;
	for (uint32_t k = nf; k-- > 0;) {
		struct frame *n = flow_frame_new_comp(f, up, meth[k], pos[k], k == nf - 1);
		if (!n)
			return NULL;
		up = n;
	}
	return up;
}

/* compiled_base's return into an activation of OUTER further down, from
 * G on; a join on the way ends the search in *JOIN (its callers are
 * searched each: compiled_through_join). */
static struct frame *compiled_below(struct frame *g, uint32_t outer, int *ok,
				    struct frame **join)
{
	*ok = 1;
	*join = NULL;
	for (int depth = 0; g && depth < MAX_UNWIND; depth++) {
		if (flow_is_join(g)) {
			*join = g;
			break;
		}
		if (!g->comp) {
			g = g->up;
			continue;
		}
		const struct frame *a = activation_outer(g);
		if (a->meth == outer)
			return a->up;
		g = a->up;
	}
	*ok = 0;
	return NULL;
}

/* Where the stack of state T puts compiled event frames whose outermost
 * method is OUTER at instruction OPOS: a call from the top, the same
 * activation, or a return into an activation further down.  Returns the
 * base to push on, or sets *ok = 0; *JOIN as compiled_below's. */
static struct frame *compiled_base(struct flow *f, struct frame *t,
				   uint32_t outer, uint32_t opos, int *ok,
				   struct frame **join)
{
	*ok = 1;
	*join = NULL;
	if (opos == 0 && flow_is_invoke_at(f, t) && flow_can_call(f, t, outer))
		return t;
	return compiled_below(t, outer, ok, join);
}

/* The (method, instruction) of event E's frames, innermost first: their
 * count, 0 when some frame is unknown; *OP the innermost's opcode.
 * Inline: asked for every compiled event outside a run's same frames
 * (~200 k on jython), where gcc's out-of-line copy cost a call and its
 * saves. */
static inline uint32_t compiled_frames(struct flow *f, const struct jpb_decoded_slim *e,
				       uint32_t *meth, uint32_t *pos, uint8_t *op)
{
	uint32_t nf = e->nframes < JPB_DECODED_MAX_FRAMES ? e->nframes :
							    JPB_DECODED_MAX_FRAMES;
	const struct jpb_decoded_frame *fr = flow_ev_frames(f, e);
	for (uint32_t k = 0; k < nf; k++) {
		const struct cpos *c = flow_cpos(f, fr[k].method_id, fr[k].bci);
		if (c->pos < 0)
			return 0;
		meth[k] = (uint32_t)c->meth;
		pos[k] = (uint32_t)c->pos;
		if (!k)
			*op = c->op;
	}
	return nf;
}

/* Is T the innermost of NF compiled frames on BASE that differ from the
 * event's frames (METH, POS) in T's position only?  Then, the state being
 * the only one alive, T alone refers to it and can move in place instead
 * of a new activation being built. */
static int same_activation(const struct frame *t, const struct frame *base,
			   const uint32_t *meth, const uint32_t *pos, uint32_t nf)
{
	const struct frame *g = t;
	for (uint32_t k = 0; k < nf; k++, g = g->up) {
		if (!g || !g->comp || g->doubt || g->act != (k == nf - 1) ||
		    g->meth != meth[k] || (k && g->pos != pos[k]))
			return 0;
		if (k == nf - 1)
			return g->up == base;
	}
	return 0;
}

/* From one resolved state, a known compiled event leaves one state (on
 * the stack it fits, else a pin on an unknown one): emitted at once,
 * without the machinery of pending steps.  *DONE = 0: not that case. */
static int compiled_fast(struct flow *f, uint32_t i, int *done)
{
	uint32_t meth[JPB_DECODED_MAX_FRAMES], pos[JPB_DECODED_MAX_FRAMES];
	uint8_t op = 0;
	uint32_t nf = compiled_frames(f, &f->ev[i], meth, pos, &op);
	*done = 0;
	if (!nf)
		return 0;
	struct frame *t = f->nodes[0].top, *base = NULL, *join;
	int ok = 0, err;
	if (t) /* the one resolved state has no join */
		base = compiled_base(f, t, meth[nf - 1], pos[nf - 1], &ok, &join);
	*done = 1;
	if (ok && same_activation(t, base, meth, pos, nf)) {
		flow_frame_move(t, pos[0]);
		err = flow_settle_compiled(f, i, t, op);
	} else {
		struct frame *n = push_compiled(f, ok ? base : NULL, meth, pos, nf);
		err = n ? flow_settle_compiled(f, i, n, op) : jpb_err_nomem;
	}
	f->cprev = i;
	f->ctop = err ? NULL : f->nodes[0].top;
	f->couter0 = pos[nf - 1] == 0;
	return err;
}

/* The next compiled event of the activation compiled_fast left on top
 * (f->ctop, still the single resolved state): when its frames are those
 * of that event (f->cprev) but for the innermost bci, compiled_base finds
 * the same activation and same_activation holds, unless its outermost
 * frame is at instruction 0, where it may be a new call (left to
 * compiled_fast).  Only the innermost frame is looked up.  *DONE = 0:
 * not that case. */
static int compiled_again(struct flow *f, uint32_t i, int *done)
{
	const struct jpb_decoded_slim *e = &f->ev[i], *p = &f->ev[f->cprev];
	*done = 0;
	if (f->nodes[0].top != f->ctop || e->nframes != p->nframes || !e->nframes)
		return 0;
	const struct jpb_decoded_frame *a = flow_ev_frames(f, e), *b = flow_ev_frames(f, p);
	if (a[0].method_id != b[0].method_id)
		return 0;
	for (uint32_t k = 1; k < e->nframes; k++)
		if (a[k].method_id != b[k].method_id || a[k].bci != b[k].bci)
			return 0;
	const struct cpos *c = flow_cpos(f, a[0].method_id, a[0].bci);
	if (c->pos < 0 || (e->nframes == 1 ? c->pos == 0 : f->couter0))
		return 0;
	*done = 1;
	flow_frame_move(f->ctop, (uint32_t)c->pos);
	int err = flow_settle_compiled(f, i, f->ctop, c->op);
	f->cprev = i;
	f->ctop = err ? NULL : f->nodes[0].top;
	return err;
}

/* Does compiled event E (frames A) continue the activation of the one
 * before it (P, frames B): the same frames but for the innermost bci?
 * compiled_again's test, minus the state's. */
static inline int same_frames(const struct jpb_decoded_slim *e, const struct jpb_decoded_frame *a,
			      const struct jpb_decoded_slim *p, const struct jpb_decoded_frame *b)
{
	if (e->kind != JPB_DEV_COMPILED || e->nframes != p->nframes || !e->nframes ||
	    a[0].method_id != b[0].method_id)
		return 0;
	for (uint32_t k = 1; k < e->nframes; k++)
		if (a[k].method_id != b[k].method_id || a[k].bci != b[k].bci)
			return 0;
	return 1;
}

/* The activation a run is in: its base, its outermost method (FLOW_JOIN,
 * no method, when the top is not compiled) and that frame's method id in
 * the events, and the frames of the last event that replaced its frames
 * (NF 0: none yet; built at the run's end): METH[CUR], POS[CUR], the
 * other pair filled by the next candidate (no copy when it is taken). */
struct run_act {
	struct frame *base;
	uint64_t outer_id;
	uint32_t outer, nf, cur;
	uint32_t meth[2][JPB_DECODED_MAX_FRAMES], pos[2][JPB_DECODED_MAX_FRAMES];
};

/* The activation of T, made by event P (frames B). */
static void run_act_of(const struct frame *t, const struct jpb_decoded_slim *p,
		       const struct jpb_decoded_frame *b, struct run_act *ra)
{
	const struct frame *a = activation_outer(t);
	ra->base = a->up;
	ra->outer = t->comp ? a->meth : FLOW_JOIN;
	ra->outer_id = p->nframes ? b[p->nframes - 1].method_id : 0;
	ra->nf = ra->cur = 0;
}

/* Does compiled event E, whose frames differ from the run's beyond the
 * innermost bci, stay in the run's activation: all frames known, the
 * same outermost method, not at its instruction 0?  That is where
 * compiled_fast's compiled_base finds the activation's base and pushes
 * E's frames on it; the run keeps them in RA instead (*OP the
 * innermost's opcode), as only the last such frames make the state.
 * Another outermost method id (a call or a return, most of the events
 * refused) is refused before any lookup: compiled_fast takes it. */
static int run_replaces(struct flow *f, const struct jpb_decoded_slim *e,
			struct run_act *ra, uint8_t *op)
{
	uint32_t n = e->nframes < JPB_DECODED_MAX_FRAMES ? e->nframes : JPB_DECODED_MAX_FRAMES;
	if (e->kind != JPB_DEV_COMPILED || !n ||
	    flow_ev_frames(f, e)[n - 1].method_id != ra->outer_id)
		return 0;
	uint32_t *meth = ra->meth[!ra->cur], *pos = ra->pos[!ra->cur];
	uint32_t nf = compiled_frames(f, e, meth, pos, op);
	if (!nf || meth[nf - 1] != ra->outer || pos[nf - 1] == 0)
		return 0;
	ra->cur = !ra->cur;
	ra->nf = nf;
	return 1;
}

/* N events of a run emitted in method M: emit_compiled's evidence. */
static void run_prove(struct flow *f, uint32_t m, size_t n)
{
	if (!n)
		return;
	f->meths[m].used = 1;
	flow_prove_n(f, m, n);
}

/* The run's state at its end: T moved to POS, or RA's frames (the last
 * that replaced the activation's, at POS) pushed on its base. */
static struct frame *run_end_state(struct flow *f, struct frame *t,
				   struct run_act *ra, int32_t pos)
{
	if (!ra->nf) {
		flow_frame_move(t, (uint32_t)pos);
		return t;
	}
	ra->pos[ra->cur][0] = (uint32_t)pos;
	f->couter0 = 0; /* run_replaces took none at instruction 0 */
	return push_compiled(f, ra->base, ra->meth[ra->cur], ra->pos[ra->cur], ra->nf);
}

int flow_run_compiled(struct flow *f, size_t end)
{
	if (!f->ctop || f->nsteps != 1 || f->steps[0].n != 1 || f->nodes[0].top != f->ctop ||
	    (f->ngaps && f->gaps[f->ngaps - 1].at == f->nout))
		return 0;
	/* compiled_again event by event, with what does not change within
	 * the run (the state, the method, its evidence, the counters) done
	 * once: a run of compiled events in one activation, most of a hot
	 * program, costs a frame compare, a cache lookup and a store each.
	 * An event that changes the activation's inlined frames (what
	 * compiled_fast would rebuild the activation for, on the same
	 * base) stays in the run: only the run's last frames are built. */
	struct frame *t = f->ctop;
	const struct jpb_decoded_slim *p = &f->ev[f->cprev];
	const struct jpb_decoded_frame *b = flow_ev_frames(f, p);
	int one = p->nframes == 1;
	size_t i = f->next;
	if (!one && f->couter0)
		return 0; /* its outermost frame at instruction 0: compiled_fast */
	if (flow_out_room(f, end - i))
		return jpb_err_nomem;
	struct run_act ra;
	run_act_of(t, p, b, &ra);
	/* the arrays in locals: the stores into out[] may alias f's fields,
	 * which would be reloaded at every event (flow_cpos_fill
	 * moves none of them) */
	const struct jpb_decoded_slim *ev = f->ev;
	const struct jpb_decoded_frame *fr = f->fr;
	size_t at0 = flow_out_at(f);
	struct jpb_flow_event *out = f->out + at0, *seg = out;
	uint32_t meth = t->meth;
	const struct jcfg *g = flow_meth_cfg(f, meth);
	int32_t pos = -1;
	for (; i < end; i++) {
		const struct jpb_decoded_slim *e = &ev[i];
		const struct jpb_decoded_frame *a = fr + e->fr;
		uint8_t op = 0;
		if (!same_frames(e, a, p, b)) {
			if (!run_replaces(f, e, &ra, &op))
				break;
			run_prove(f, meth, (size_t)(out - seg));
			seg = out;
			meth = ra.meth[ra.cur][0];
			g = flow_meth_cfg(f, meth);
			pos = (int32_t)ra.pos[ra.cur][0];
			one = ra.nf == 1;
		} else {
			/* same_frames keeps the run in b's method, METH: its
			 * CFG gives the position, where flow_cpos missed 113 k
			 * times on jython (another method's pairs in the slot) */
			int32_t at = g && a[0].bci >= 0 ? jcfg_index_of(g, (uint32_t)a[0].bci) : -1;
			/* at instruction 0 a new call may start: compiled_fast */
			if (at < 0 || (one && at == 0))
				break;
			pos = at;
			op = jcfg_insn(g, (uint32_t)at)->op;
		}
		flow_out_set(out++, meth + 1, a[0].bci, op, JPB_FLOW_DECODED, 1, e->tsc);
		p = e;
		b = a;
	}
	size_t n = (size_t)(out - (f->out + at0));
	f->nout += n;
	if (!n)
		return 0;
	run_prove(f, meth, (size_t)(out - seg));
	t = run_end_state(f, t, &ra, pos);
	if (!t)
		return jpb_err_nomem;
	f->cprev = (uint32_t)(i - 1);
	f->next = i;
	f->sum.by_status[JPB_FLOW_DECODED] += n;
	f->sum.events += n;
	flow_settle_state(f, t);
	f->ctop = f->nodes[0].top;
	return 0;
}

/* Compiled event frames (METH, POS, NF) on BASE, a state from FROM. */
static int add_compiled(struct flow *f, struct frame *base, const uint32_t *meth,
			const uint32_t *pos, uint32_t nf, uint32_t from)
{
	struct frame *n = push_compiled(f, base, meth, pos, nf);
	return n ? flow_add_node(f, n, LOST_NONE, from) : jpb_err_nomem;
}

/* compiled_below for each caller of join J. */
static int compiled_through_join(struct flow *f, const struct frame *j, const uint32_t *meth,
				 const uint32_t *pos, uint32_t nf, uint32_t from)
{
	uint32_t first = 0, n = join_callers(f, j, &first);
	int err = 0;
	for (uint32_t k = first; k < first + n && !err; k++) {
		int ok;
		struct frame *join;
		struct frame *base = compiled_below(f->jalts[k].up, meth[nf - 1], &ok, &join);
		f->cur_link = k + 1;
		if (ok && !join) /* a second join: not this transition's */
			err = add_compiled(f, base, meth, pos, nf, from);
	}
	if (n)
		f->cur_link = 0;
	return err;
}

static int step_compiled(struct flow *f, uint32_t i)
{
	uint32_t meth[JPB_DECODED_MAX_FRAMES], pos[JPB_DECODED_MAX_FRAMES];
	uint8_t op;
	uint32_t nf = compiled_frames(f, &f->ev[i], meth, pos, &op);
	int known = nf > 0;
	uint32_t p0 = flow_cur_step(f)->first, pn = flow_cur_step(f)->n;
	int err = flow_step_begin(f, i, 1, 0);
	if (!known)
		return err ? err : flow_add_node(f, NULL, LOST_ANY, p0);
	for (uint32_t k = p0; k < p0 + pn && !err; k++) {
		int ok;
		struct frame *t = f->nodes[k].top, *join = NULL;
		struct frame *base = t ? compiled_base(f, t, meth[nf - 1], pos[nf - 1], &ok, &join) :
					 NULL;
		if (join)
			err = compiled_through_join(f, join, meth, pos, nf, k);
		else if (t && ok)
			err = add_compiled(f, base, meth, pos, nf, k);
	}
	if (!err && !flow_cur_step(f)->n) { /* a pin: the stack below is unknown */
		struct frame *n = push_compiled(f, NULL, meth, pos, nf);
		err = n ? flow_add_node(f, n, LOST_NONE, p0) : jpb_err_nomem;
	}
	/* a pin: the position is exact again (resynchronised frames below
	 * keep their own doubt) */
	for (uint32_t k = flow_cur_step(f)->first; k < flow_cur_step(f)->first + flow_cur_step(f)->n; k++)
		f->nodes[k].doubt = 0;
	return err;
}

/* After a step: nothing consistent left means the event is unexplained:
 * the previous step is resolved and *DIED tells the caller to retry the
 * event from a lost state.  One state left resolves everything before it.
 * The step is read once (flow_drop_lost keeps it where it is; the
 * stores to nodes made the loop reload it). */
static int settle(struct flow *f, int *died)
{
	*died = 0;
	struct step *s = flow_cur_step(f);
	if (s->kinds == (STEP_LOST | STEP_KNOWN)) /* flow_drop_lost's test */
		flow_drop_lost(f);
	uint32_t first = s->first, n = s->n;
	for (uint32_t k = 0; s->trunc && k < n; k++)
		f->nodes[first + k].doubt = 1;
	if (!n) {
		f->nemit -= s->emit != 0;
		f->nsteps--;
		*died = 1;
		return flow_reset_lost(f, LOST_ANY);
	}
	/* one state still in a shared callee is its callers' states:
	 * resolved when it returns (or by the window's end) */
	if (n == 1 && !flow_node_joined(&f->nodes[first]))
		return flow_flush_some(f, first, 0);
	return f->nsteps > MAX_PENDING_STEPS ? flow_flush_first(f) : 0;
}

enum step_kind { S_INTERP, S_FUSED, S_COMPILED, S_ENTRY, S_EXCEPTION, S_DEOPT };

static int run_step(struct flow *f, uint32_t i, enum step_kind k, uint8_t op)
{
	switch (k) {
	case S_INTERP:
		return step_interp(f, i, op, 1);
	case S_FUSED: /* the second half of a dispatch: no event of its own */
		return step_interp(f, i, op, 0);
	case S_COMPILED:
		return step_compiled(f, i);
	case S_ENTRY:
		return step_entry(f, i, flow_codelet_kind(f, f->ev[i].arg));
	case S_EXCEPTION:
		return step_exception(f, i);
	case S_DEOPT:
		return step_deopt(f, i);
	}
	return jpb_err_internal;
}

/* One step, retried from a lost state if no state explains it (a lost
 * state always goes on, so the retry cannot die). */
static int step(struct flow *f, uint32_t i, enum step_kind k, uint8_t op)
{
	/* one call of each (inline), not one per try */
	for (int tries = 0; tries < 2; tries++) {
		int died = 0, err = run_step(f, i, k, op);
		if (!err)
			err = settle(f, &died);
		if (err || !died)
			return err;
	}
	return jpb_err_internal;
}

/* How many of the NS instructions S (of HOT) run OP; the last in *AT. */
static inline uint32_t count_running(const struct jcfg_hot *hot, const uint32_t *s, uint32_t ns,
				     uint8_t op, uint32_t *at)
{
	uint32_t nmatch = 0;
	for (uint32_t k = 0; k < ns; k++) {
		if (hot[s[k]].op == op) {
			*at = s[k];
			nmatch++;
		}
	}
	return nmatch;
}

/* Does interpreted frame T go on to exactly one instruction of its method
 * that runs OP (*AT): interp_from's states, when they are one and no
 * return is in the way?  Not run yet, T's own instruction; run, its
 * successors, and after a fused pair's first also the second's. */
static int one_successor(struct flow *f, const struct frame *t, uint8_t op, uint32_t *at)
{
	const struct jcfg_hot *hot = flow_meth_hot(f, t->meth), in = hot[t->pos];
	if (!t->done) {
		*at = t->pos;
		return in.op == op;
	}
	if (in.kind == JBC_RETURN)
		return 0;
	uint32_t ns;
	const uint32_t *sc = jcfg_hot_succs(hot, t->pos, &ns);
	uint32_t nmatch = count_running(hot, sc, ns, op, at);
	/* flow_fuses, inline: the pair's two ways to match */
	if (ns == 1 && jbc_fused_pair(in.op, hot[sc[0]].op)) {
		sc = jcfg_hot_succs(hot, sc[0], &ns);
		nmatch += count_running(hot, sc, ns, op, at);
	}
	return nmatch == 1;
}

/* The frame that state T's next opcode OP runs in, when interp_from
 * would leave exactly one state: T itself, or, where T returns (from
 * interpreted code or a compiled activation), its caller when that is an
 * interpreted frame and no join; at instruction *AT, run.  NULL: not
 * that case (the general step decides).  Returns were ~14 k of jython's
 * 56 k one-state steps that went the general way, instructions not yet
 * run (a callee's first) ~14 k, fused pairs ~13 k. */
static struct frame *one_next(struct flow *f, struct frame *t, uint8_t op, uint32_t *at)
{
	if (!t)
		return NULL;
	if (t->comp || (t->done && flow_meth_hot(f, t->meth)[t->pos].kind == JBC_RETURN)) {
		/* interp_over_compiled: a compiled frame that does not return
		 * was deoptimised */
		if (t->comp && flow_insn(f, t->meth, t->pos)->kind != JBC_RETURN)
			return NULL;
		/* return_to's caller */
		t = t->comp ? activation_outer(t)->up : t->up;
		if (!t || t->comp || flow_is_join(t))
			return NULL;
	}
	return one_successor(f, t, op, at) ? t : NULL;
}

/* From one resolved state, an opcode OP that leaves exactly one state
 * (one_next) moves that state's frame there, in place (the state being
 * the only one alive, its top frames are referred to by nothing else),
 * and emits it at once.  *DONE = 0: not that case. */
static int interp_fast(struct flow *f, uint32_t i, uint8_t op, int emit, int *done)
{
	uint32_t at;
	struct frame *g = one_next(f, f->nodes[0].top, op, &at);
	*done = 0;
	if (!g)
		return 0;
	flow_frame_move(g, at);
	g->done = 1;
	*done = 1;
	return flow_settle_interp(f, i, op, emit, g);
}

/* One state pending (in a shared callee, not resolved until it returns)
 * that leaves exactly one state (one_next): the step step_interp would
 * make, without its staging (one state cannot pass the cap) and its
 * general successor search.  *DONE = 0: not that case. */
static int interp_one(struct flow *f, uint32_t i, uint8_t op, int emit, int *done)
{
	uint32_t from = flow_cur_step(f)->first, at;
	struct frame *g = one_next(f, f->nodes[from].top, op, &at);
	*done = 0;
	if (!g)
		return 0;
	*done = 1;
	int err = flow_step_begin(f, i, emit, op);
	if (!err)
		err = add_at(f, g, at, 1, from);
	int died; /* a state was added: it cannot */
	return err ? err : settle(f, &died);
}

static int interp_step(struct flow *f, uint32_t i, uint8_t op, int emit)
{
	int done = 0, err = 0;
	if (f->nsteps == 1 && f->steps[0].n == 1)
		err = interp_fast(f, i, op, emit, &done);
	else if (flow_cur_step(f)->n == 1)
		err = interp_one(f, i, op, emit, &done);
	if (err || done)
		return err;
	return step(f, i, emit ? S_INTERP : S_FUSED, op);
}

int flow_event(struct flow *f, uint32_t i)
{
	const struct jpb_decoded_slim *e = &f->ev[i];
	int fused, op, err;
	/* A gap's end: its own bound when the decoder knew it, else the time
	 * of the first event after it. */
	if (f->ngaps && f->gaps[f->ngaps - 1].at == f->nout && e->kind != JPB_DEV_GAP &&
	    f->gaps[f->ngaps - 1].t1 == f->gaps[f->ngaps - 1].t0 && e->tsc > f->gaps[f->ngaps - 1].t0)
		f->gaps[f->ngaps - 1].t1 = e->tsc;
	switch (e->kind) {
	case JPB_DEV_INTERP:
		op = flow_java_opcode(e->opcode, &fused);
		if (op < 0) { /* not a bytecode we know: position lost */
			err = flow_reset_lost(f, LOST_ANY);
			if (!err)
				err = flow_step_begin(f, i, 1, e->opcode);
			return err ? err : flow_add_node(f, NULL, LOST_ANY, 0);
		}
		err = interp_step(f, i, (uint8_t)op, 1);
		if (!err && fused >= 0)
			err = interp_step(f, i, (uint8_t)fused, 0);
		return err;
	case JPB_DEV_COMPILED:
		if (f->nsteps == 1 && f->steps[0].n == 1) {
			int done = 0;
			err = f->ctop ? compiled_again(f, i, &done) : 0;
			if (err || done)
				return err;
			err = compiled_fast(f, i, &done);
			if (err || done)
				return err;
		}
		return step(f, i, S_COMPILED, 0);
	case JPB_DEV_GAP:
		f->sum.gaps++;
		err = flow_reset_lost(f, LOST_ANY);
		if (!err)
			err = JPB_GROW(f->gaps, f->ngaps, f->capg);
		if (!err)
			f->gaps[f->ngaps++] = (struct gapmark){ f->nout, e->tsc,
								e->arg > e->tsc ? e->arg : e->tsc };
		return err;
	case JPB_DEV_TRANSITION:
		break;
	default:
		return 0;
	}
	if (e->what == JPB_TR_METHOD_ENTRY)
		return step(f, i, S_ENTRY, 0);
	unsigned k = e->what == JPB_TR_INTERP_STUB ? flow_codelet_kind(f, e->arg) : 0;
	if (k & CODELET_EXCEPTION)
		return step(f, i, S_EXCEPTION, 0);
	if (k & CODELET_DEOPT)
		return step(f, i, S_DEOPT, 0);
	return 0;
}

