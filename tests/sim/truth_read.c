// SPDX-License-Identifier: MIT
#include "truth_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static char *dupstr(struct jpb_str s)
{
	char *p = xrealloc(NULL, s.len + 1u);
	memcpy(p, s.ptr, s.len);
	p[s.len] = 0;
	return p;
}

static int add_method(struct truth *t, const struct jpb_rec_truth_method *m)
{
	if (m->method_id == 0 || m->method_id > (1u << 24))
		return jpb_err_corrupt;
	if (m->method_id >= t->nmethods) {
		size_t n = m->method_id + 1u;
		t->methods = xrealloc(t->methods, n * sizeof(*t->methods));
		memset(t->methods + t->nmethods, 0,
		       (n - t->nmethods) * sizeof(*t->methods));
		t->nmethods = n;
	}
	struct sim_method *sm = &t->methods[m->method_id];
	if (sm->id)
		return jpb_err_exists;
	sm->id = m->method_id;
	sm->access = m->access_flags;
	sm->cls = dupstr(m->class_sig);
	sm->name = dupstr(m->name);
	sm->sig = dupstr(m->signature);
	sm->zero_locals = -1; /* locals_load */
	sm->code_len = m->bytecode.len;
	sm->code = xrealloc(NULL, m->bytecode.len + 1u);
	memcpy(sm->code, m->bytecode.ptr, m->bytecode.len);
	return 0;
}

static struct sim_tthread *thread_for(struct truth *t, uint32_t tid,
				      uint32_t nstid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid && t->threads[i].nstid == nstid)
			return &t->threads[i];
	GROW(t->threads, t->nthreads, t->cthreads);
	struct sim_tthread *th = &t->threads[t->nthreads++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->nstid = nstid;
	return th;
}

static int add_events(struct truth *t, const struct jpb_rec_truth_events *e)
{
	if (e->events.len % JPB_TRUTH_EVENT_SIZE)
		return jpb_err_corrupt;
	struct sim_tthread *th = thread_for(t, e->tid, e->nstid);
	if (e->seq != th->n)
		return jpb_err_corrupt; /* a gap or reordering in the truth */
	size_t k = e->events.len / JPB_TRUTH_EVENT_SIZE;
	for (size_t i = 0; i < k; i++) {
		GROW(th->ev, th->n, th->cap);
		jpb_truth_event_get(e->events.ptr + i * JPB_TRUTH_EVENT_SIZE,
				    &th->ev[th->n]);
		if (th->ev[th->n].kind == JPB_TRUTH_BYTECODE)
			t->nbytecodes++;
		th->n++;
	}
	return 0;
}

/* A window start comes before the thread's events, a stop after them. */
static int add_window(struct truth *t, const struct jpb_rec_truth_window *w)
{
	struct sim_tthread *th = thread_for(t, w->tid, w->nstid);
	if (w->kind == JPB_TRUTH_WINDOW_STOP) {
		if (w->seq != th->n || th->stop_why)
			return jpb_err_corrupt;
		th->stop_why = w->reason ? w->reason : JPB_TRUTH_WHY_SESSION;
		return 0;
	}
	if (w->kind != JPB_TRUTH_WINDOW_START || w->seq != 0 || th->n ||
	    th->start_why || w->frames.len % JPB_TRUTH_FRAME_SIZE)
		return jpb_err_corrupt;
	th->start_why = w->reason ? w->reason : JPB_TRUTH_WHY_VMINIT;
	th->depth = w->depth;
	th->ncallers = w->frames.len / JPB_TRUTH_FRAME_SIZE;
	if (th->ncallers > w->depth)
		return jpb_err_corrupt;
	th->callers = xrealloc(NULL, (th->ncallers + 1) * sizeof(*th->callers));
	for (size_t i = 0; i < th->ncallers; i++)
		jpb_truth_frame_get(w->frames.ptr + i * JPB_TRUTH_FRAME_SIZE,
				    &th->callers[i]);
	t->mid_stack += th->ncallers > 0;
	return 0;
}

/* A caller frame: a known method, at a bci inside its code (native
 * methods have none). */
static int bad_caller(const struct truth *t, const struct jpb_truth_frame *f)
{
	const struct sim_method *m = truth_method(t, f->method_id);
	if (!m)
		return 1;
	if (f->bci == JPB_TRUTH_NO_BCI)
		return !(m->access & ACC_NATIVE);
	return f->bci >= m->code_len;
}

/* Every event must name a known method and a bci inside its code. */
static int check_events(const struct truth *t, char *err, size_t n)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct sim_tthread *th = &t->threads[i];
		for (size_t j = 0; j < th->ncallers; j++) {
			if (bad_caller(t, &th->callers[j])) {
				snprintf(err, n,
					 "truth: thread %u window start frame %zu "
					 "(method %u bci %u) does not match the method table",
					 th->nstid, j, th->callers[j].method_id,
					 th->callers[j].bci);
				return jpb_err_corrupt;
			}
		}
		for (size_t j = 0; j < th->n; j++) {
			const struct jpb_truth_event *e = &th->ev[j];
			const struct sim_method *m = truth_method(t, e->method_id);
			int bad = !m || e->kind > JPB_TRUTH_CATCH;
			if (!bad && e->kind == JPB_TRUTH_BYTECODE)
				bad = e->bci >= m->code_len ||
				      m->code[e->bci] != e->opcode;
			if (bad) {
				snprintf(err, n,
					 "truth: thread %u event %zu (method %u bci %u kind %u) "
					 "does not match the method table",
					 th->nstid, j, e->method_id, e->bci, e->kind);
				return jpb_err_corrupt;
			}
		}
	}
	return 0;
}

int truth_load(struct jpb_bundle *b, struct truth *t, char *err, size_t n)
{
	memset(t, 0, sizeof(*t));
	if (n)
		err[0] = 0;
	struct jpb_reader *r;
	int rc = jpb_reader_open(b, "truth", &r);
	if (rc) {
		snprintf(err, n, "truth: %s", jpb_bundle_errmsg(b));
		return rc;
	}
	struct jpb_record rec;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		const struct jpb_rectype *ty = jpb_rectype_find(rec.type);
		if (rec.type == JPB_REC_TRUTH_METHOD) {
			struct jpb_rec_truth_method m;
			rc = jpb_rec_decode(ty, rec.payload, rec.size, &m);
			if (!rc)
				rc = add_method(t, &m);
		} else if (rec.type == JPB_REC_TRUTH_EVENTS) {
			struct jpb_rec_truth_events e;
			rc = jpb_rec_decode(ty, rec.payload, rec.size, &e);
			if (!rc)
				rc = add_events(t, &e);
		} else if (rec.type == JPB_REC_TRUTH_WINDOW) {
			struct jpb_rec_truth_window w;
			rc = jpb_rec_decode(ty, rec.payload, rec.size, &w);
			if (!rc)
				rc = add_window(t, &w);
		}
		if (rc) {
			snprintf(err, n, "truth: record at offset %llu: %s",
				 (unsigned long long)rec.offset, jpb_errstr(rc));
			break;
		}
	}
	if (rc == jpb_err_eos)
		rc = 0;
	else if (rc && !err[0])
		snprintf(err, n, "%s", jpb_reader_errmsg(r));
	jpb_reader_free(r);
	if (!rc)
		rc = check_events(t, err, n);
	if (rc)
		truth_fini(t);
	return rc;
}

void truth_fini(struct truth *t)
{
	for (size_t i = 0; i < t->nmethods; i++) {
		free(t->methods[i].cls);
		free(t->methods[i].name);
		free(t->methods[i].sig);
		free(t->methods[i].code);
	}
	for (size_t i = 0; i < t->nthreads; i++) {
		free(t->threads[i].ev);
		free(t->threads[i].callers);
	}
	free(t->methods);
	free(t->threads);
	memset(t, 0, sizeof(*t));
}

const struct sim_method *truth_method(const struct truth *t, uint32_t id)
{
	if (id == 0 || id >= t->nmethods || !t->methods[id].id)
		return NULL;
	return &t->methods[id];
}
