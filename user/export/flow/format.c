// SPDX-License-Identifier: MIT
/* One thread's flow as text or JSON Lines, streamed (see format.h). */
#include "export/flow/format.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "export/model/clock.h"
#include "export/model/methods.h"
#include "java/bytecodes.h"

struct range {
	struct jpb_flow_event first, last;
	uint64_t count;
	uint16_t ncand; /* the largest of the range's events */
};

struct xflow {
	FILE *f;
	struct xflow_opts o;
	const struct xmethods *m;
	const struct xclock *c;
	uint32_t tid;
	int have; /* r holds events not yet written */
	struct range r;
	uint64_t lines;
};

int xflow_alloc(struct xflow **out, FILE *f, const struct xflow_opts *o,
		const struct xmethods *m, const struct xclock *c)
{
	struct xflow *x = calloc(1, sizeof(*x));
	if (!x)
		return jpb_err_nomem;
	x->f = f;
	x->o = *o;
	x->m = m;
	x->c = c;
	*out = x;
	return 0;
}

void xflow_free(struct xflow *x)
{
	free(x);
}

uint64_t xflow_lines(const struct xflow *x)
{
	return x->lines;
}

const char *xflow_branch_name(enum xflow_branch b)
{
	static const char *const n[] = { "", "taken", "not_taken", "unknown" };
	return b <= XF_BRANCH_UNKNOWN ? n[b] : "";
}

static const struct jcf_method *code_of(const struct xmethods *m, uint32_t idx)
{
	const struct xm_method *xm = m ? xmethods_get(m, idx) : NULL;
	return xm ? xm->code : NULL;
}

enum xflow_branch xflow_direction(const struct jpb_flow_event *e,
				  const struct jpb_flow_event *next,
				  const struct xmethods *m)
{
	if (jbc_info(e->opcode)->kind != JBC_COND_BRANCH)
		return XF_BRANCH_NONE;
	if (!next || e->bci < 0 || next->bci < 0 || next->method != e->method ||
	    e->method == 0)
		return XF_BRANCH_UNKNOWN;
	const struct jcf_method *code = code_of(m, e->method);
	long target = -1;
	if (code && (uint32_t)e->bci < code->code_length)
		target = jbc_branch_target(code->code, code->code_length,
					   (size_t)e->bci);
	/* every conditional branch is 3 bytes long (JVMS §6.5 if<cond>) */
	if (next->bci == e->bci + 3 && target != next->bci)
		return XF_BRANCH_NOT_TAKEN;
	if (target < 0 || target == next->bci)
		return XF_BRANCH_TAKEN;
	return XF_BRANCH_UNKNOWN;
}

/* Does E continue R's straight line: same method and status, and R's
 * last instruction falls through to E? */
static int joins(const struct xflow *x, const struct range *r,
		 const struct jpb_flow_event *e)
{
	const struct jpb_flow_event *l = &r->last;
	if (x->o.full || e->method == 0 || e->method != l->method ||
	    e->status != l->status || l->bci < 0 || e->bci <= l->bci ||
	    jbc_info(l->opcode)->kind != JBC_OTHER)
		return 0;
	const struct jcf_method *code = code_of(x->m, l->method);
	if (!code || (uint32_t)l->bci >= code->code_length)
		return 1;
	int len = jbc_length(code->code, code->code_length, (size_t)l->bci);
	return len > 0 && e->bci == l->bci + len;
}

static void status_text(const struct jpb_flow_event *e, uint16_t ncand,
			char *buf, size_t size)
{
	if (e->status == JPB_FLOW_CHOSEN)
		snprintf(buf, size, "chosen(%u)", ncand);
	else
		snprintf(buf, size, "%s", jpb_flow_status_name(e->status));
}

/* A JSON string of S (file names are the class file's to choose). */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void emit_json(struct xflow *x, const struct range *r,
		      const struct xm_method *xm, enum xflow_branch br)
{
	FILE *f = x->f;
	const struct jpb_flow_event *a = &r->first, *z = &r->last;
	int ranged = !x->o.full;
	fprintf(f, "{\"tid\":%u,\"t\":%" PRIu64, x->tid, xclock_ns(x->c, a->tsc));
	if (ranged)
		fprintf(f, ",\"t_end\":%" PRIu64, xclock_ns(x->c, z->tsc));
	fprintf(f, ",\"status\":\"%s\"", jpb_flow_status_name(a->status));
	if (a->status == JPB_FLOW_CHOSEN)
		fprintf(f, ",\"ncand\":%u", r->ncand);
	fprintf(f, ",\"method\":%s", xm ? xm->json_name : "null");
	if (a->bci >= 0)
		fprintf(f, ",\"bci\":%d", a->bci);
	else
		fputs(",\"bci\":null", f);
	if (ranged)
		fprintf(f, ",\"bci_end\":%d,\"count\":%" PRIu64, z->bci, r->count);
	fprintf(f, ",\"op\":\"%s\"", jbc_name(a->opcode));
	if (ranged)
		fprintf(f, ",\"op_end\":\"%s\"", jbc_name(z->opcode));
	if (xm && xm->file) {
		fputs(",\"file\":", f);
		json_str(f, xm->file);
	}
	int l0 = xm_line(xm, a->bci), l1 = xm_line(xm, z->bci);
	if (l0 >= 0)
		fprintf(f, ",\"line\":%d", l0);
	if (ranged && l1 >= 0)
		fprintf(f, ",\"line_end\":%d", l1);
	if (br != XF_BRANCH_NONE)
		fprintf(f, ",\"branch\":\"%s\"", xflow_branch_name(br));
	fputs("}\n", f);
}

static void emit_text(struct xflow *x, const struct range *r,
		      const struct xm_method *xm, enum xflow_branch br)
{
	FILE *f = x->f;
	const struct jpb_flow_event *a = &r->first, *z = &r->last;
	char st[32];
	status_text(a, r->ncand, st, sizeof(st));
	fprintf(f, "%14" PRIu64 "  %-11s %s", xclock_ns(x->c, a->tsc), st,
		xm ? xm->name : "?");
	if (a->bci < 0)
		fprintf(f, " @? %s", jbc_name(a->opcode));
	else if (r->count == 1)
		fprintf(f, " @%d %s", a->bci, jbc_name(a->opcode));
	else
		fprintf(f, " @%d..%d %s..%s (%" PRIu64 ")", a->bci, z->bci,
			jbc_name(a->opcode), jbc_name(z->opcode), r->count);
	int l0 = xm_line(xm, a->bci), l1 = xm_line(xm, z->bci);
	if (l0 >= 0) {
		fprintf(f, " %s:%d", xm->file ? xm->file : "?", l0);
		if (l1 >= 0 && l1 != l0)
			fprintf(f, "-%d", l1);
	}
	if (br != XF_BRANCH_NONE)
		fprintf(f, " %s", br == XF_BRANCH_NOT_TAKEN ? "not taken" :
			xflow_branch_name(br));
	fputc('\n', f);
}

static void emit(struct xflow *x, const struct jpb_flow_event *next)
{
	const struct range *r = &x->r;
	const struct xm_method *xm = xmethods_get(x->m, r->first.method);
	enum xflow_branch br = xflow_direction(&r->last, next, x->m);
	if (x->o.json)
		emit_json(x, r, xm, br);
	else
		emit_text(x, r, xm, br);
	x->lines++;
}

static void start(struct xflow *x, const struct jpb_flow_event *e)
{
	x->r = (struct range){ *e, *e, 1, e->ncand };
	x->have = 1;
}

int xflow_begin(struct xflow *x, uint32_t tid, const char *name)
{
	int err = xflow_end(x);
	x->tid = tid;
	if (!x->o.json)
		fprintf(x->f, "thread %u%s%s%s\n", tid, name && *name ? " \"" : "",
			name && *name ? name : "", name && *name ? "\"" : "");
	return err;
}

int xflow_event(struct xflow *x, const struct jpb_flow_event *e)
{
	if (x->have && joins(x, &x->r, e)) {
		x->r.last = *e;
		x->r.count++;
		if (e->ncand > x->r.ncand)
			x->r.ncand = e->ncand;
		return 0;
	}
	if (x->have)
		emit(x, e);
	start(x, e);
	return 0;
}

int xflow_end(struct xflow *x)
{
	if (x->have)
		emit(x, NULL);
	x->have = 0;
	return ferror(x->f) ? jpb_err_io : 0;
}
