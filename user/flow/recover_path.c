// SPDX-License-Identifier: MIT
/*
 * Recovery's last resort (docs/RECONSTRUCTION.md, "Recovery"): when no
 * complete segment connects the events around a gap, the shortest
 * feasible ICFG path between them, found by breadth-first search over the
 * CFG of the method the gap starts in (normal successors first, then
 * exception handlers).  Three connections are feasible without knowing
 * the stack:
 *  - the same method: a path to the instruction after the gap;
 *  - a call: the event after the gap is a method's first instruction; a
 *    path to an invoke that may call it;
 *  - a return: the event after the gap follows an invoke that may call
 *    the gap's method; a path to a return instruction.
 * Invokes on the path fall through: a callee run inside the gap is not
 * filled in (the path is the caller's part only).
 */
#include <stdlib.h>

#include "flow/flow_int.h"
#include "java/bytecodes.h"

#define NONE UINT32_MAX

enum conn { CONN_SAME, CONN_CALL, CONN_RETURN };

/* Can the invoke at POS of method M call method CALLEE? */
static int calls(struct flow *f, uint32_t m, uint32_t pos, uint32_t callee)
{
	const struct fmeth *fm = &f->meths[m];
	const struct jhier_method *c;
	if (!fm->hm.cls)
		return 0;
	int n = jprog_call_targets(f->p, fm->hm.cls, fm->hm.loader, fm->hm.m, pos, &c);
	for (int i = 0; i < n; i++) {
		uint32_t idx;
		if (!flow_meth_index(f, &c[i], &idx) && idx == callee)
			return 1;
	}
	return 0;
}

static int is_goal(struct flow *f, enum conn k, uint32_t m, uint32_t pos,
		   uint32_t target)
{
	const struct jcfg_insn *in = jcfg_insn(flow_meth_cfg(f, m), pos);
	switch (k) {
	case CONN_SAME:
		return pos == target;
	case CONN_CALL:
		return jbc_is_invoke(in->kind) && calls(f, m, pos, target);
	case CONN_RETURN:
		return in->kind == JBC_RETURN;
	}
	return 0;
}

/* Breadth-first from the successors of FROM to the nearest goal; PREV
 * gets each reached instruction's predecessor.  Returns the goal or NONE. */
static uint32_t bfs(struct flow *f, enum conn k, uint32_t m, uint32_t from,
		    uint32_t target, uint32_t *prev, uint32_t *queue)
{
	const struct jcfg *g = flow_meth_cfg(f, m);
	uint32_t n = jcfg_insn_count(g), head = 0, tail = 0;
	for (uint32_t i = 0; i < n; i++)
		prev[i] = NONE;
	queue[tail++] = from;
	while (head < tail) {
		uint32_t at = queue[head++];
		for (int x = 0; x < 2; x++) {
			uint32_t ns;
			const uint32_t *s = x ? jcfg_xsuccs(g, at, &ns) : jcfg_succs(g, at, &ns);
			for (uint32_t i = 0; i < ns; i++) {
				if (prev[s[i]] != NONE)
					continue;
				prev[s[i]] = at;
				if (is_goal(f, k, m, s[i], target))
					return s[i];
				queue[tail++] = s[i];
			}
		}
	}
	return NONE;
}

/* HotSpot runs aload_0+getfield, iload+iload and iload+caload as one
 * dispatch reported once (reconstruct.c): the second gives no event. */
static int fused_second(uint8_t prev_op, uint8_t op)
{
	return (prev_op == 0x2a && op == 0xb4) ||
	       (prev_op == 0x15 && (op == 0x15 || op == 0x34));
}

/* The connection from PRE (method M, instruction P) to POST, and its
 * target, or -1 when none is feasible. */
static int connection(struct flow *f, const struct jpb_flow_event *post,
		      uint32_t m, uint32_t *target)
{
	uint32_t m2 = post->method - 1;
	const struct jcfg *g2 = flow_meth_cfg(f, m2);
	int32_t q = g2 ? jcfg_index_of(g2, (uint32_t)post->bci) : -1;
	if (q < 0)
		return -1;
	if (m2 == m) {
		*target = (uint32_t)q;
		return CONN_SAME;
	}
	if (q == 0) {
		*target = m2;
		return CONN_CALL;
	}
	const struct jcfg_insn *before = jcfg_insn(g2, (uint32_t)q - 1);
	if (jbc_is_invoke(before->kind) && calls(f, m2, (uint32_t)q - 1, m))
		return CONN_RETURN;
	return -1;
}

int flow_path(struct flow *f, const struct jpb_flow_event *pre,
	      const struct jpb_flow_event *post, struct jpb_flow_event **out,
	      size_t *nout)
{
	*out = NULL;
	*nout = 0;
	if (!pre->method || !post->method || pre->bci < 0 || post->bci < 0 ||
	    pre->method > f->nmeths || post->method > f->nmeths)
		return 0;
	uint32_t m = pre->method - 1, target = 0;
	const struct jcfg *g = flow_meth_cfg(f, m);
	int32_t p = g ? jcfg_index_of(g, (uint32_t)pre->bci) : -1;
	int k = p < 0 ? -1 : connection(f, post, m, &target);
	if (k < 0)
		return 0;
	uint32_t n = jcfg_insn_count(g);
	/* Every instruction enters the queue once, but P may enter twice: it
	 * starts the search unvisited, so a loop back to it queues it again
	 * (h2 at 40% loss overflowed by one). */
	uint32_t *prev = malloc(n * sizeof(*prev)),
		 *queue = malloc((n + 1) * sizeof(*queue));
	if (!prev || !queue) {
		free(prev);
		free(queue);
		return jpb_err_nomem;
	}
	uint32_t goal = bfs(f, (enum conn)k, m, (uint32_t)p, target, prev, queue);
	size_t len = 0;
	/* queue holds the path backwards: goal (unless it is POST) to P */
	for (uint32_t at = goal; goal != NONE && at != (uint32_t)p; at = prev[at])
		if (k != CONN_SAME || at != goal)
			queue[len++] = at;
	int err = 0;
	struct jpb_flow_event *v = len ? malloc(len * sizeof(*v)) : NULL;
	if (len && !v)
		err = jpb_err_nomem;
	uint8_t prev_op = jcfg_insn(g, (uint32_t)p)->op;
	for (size_t i = len; v && i-- > 0;) {
		const struct jcfg_insn *in = jcfg_insn(g, queue[i]);
		if (!fused_second(prev_op, in->op))
			v[(*nout)++] = (struct jpb_flow_event){ pre->method, (int32_t)in->bci,
								in->op, JPB_FLOW_RECOVERED,
								0, 0, 0 };
		prev_op = fused_second(prev_op, in->op) ? 0 : in->op;
	}
	free(prev);
	free(queue);
	*out = v;
	return err ? err : goal != NONE;
}
