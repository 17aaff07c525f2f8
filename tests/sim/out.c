// SPDX-License-Identifier: MIT
#include "out.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "records_jvm.h"
#include "records_pt.h"
#include "records_sched.h"
#include "ptmeta.h"
#include "simrec.h"
#include "util.h"

/* A writer with its scratch buffer and the first error. */
struct w {
	struct jpb_writer *w;
	struct jpb_buf scratch;
	int err;
};

static int w_open(struct jpb_bundle *b, const char *name, struct w *w,
		  char *err, size_t n)
{
	memset(w, 0, sizeof(*w));
	int rc = jpb_writer_open(b, name, &w->w);
	if (rc)
		snprintf(err, n, "%s: %s", name, jpb_bundle_errmsg(b));
	return rc;
}

static void w_put(struct w *w, uint16_t type, uint64_t t, const void *rec)
{
	if (w->err)
		return;
	w->err = jpb_writer_put_rec(w->w, jpb_rectype_find(type), t, rec,
				    &w->scratch);
}

static void w_raw(struct w *w, uint16_t type, uint64_t t, const void *p,
		  uint32_t size)
{
	if (!w->err)
		w->err = jpb_writer_put(w->w, type, t, p, size);
}

static int w_close(struct w *w, const char *name, char *err, size_t n)
{
	int rc = w->err;
	if (rc)
		snprintf(err, n, "%s: %s", name, jpb_writer_errmsg(w->w));
	int rc2 = jpb_writer_close(w->w);
	if (!rc && rc2) {
		rc = rc2;
		snprintf(err, n, "%s: %s", name, jpb_errstr(rc2));
	}
	jpb_buf_fini(&w->scratch);
	return rc;
}

/* ---- jvm ---- */

static void put_blob(struct w *w, uint64_t t, uint32_t kind,
		     const struct cg_region *r, uint64_t start, uint64_t end,
		     const char *name)
{
	struct jpb_rec_jvm_code_blob cb = { 0 };
	cb.kind = kind;
	cb.start = start;
	cb.size = end - start;
	cb.name = jpb_str_c(name);
	cb.code.ptr = r->bytes.data + (start - r->base);
	cb.code.len = (uint32_t)(end - start);
	w_put(w, JPB_REC_JVM_CODE_BLOB, t, &cb);
}

static void put_interp(struct w *w, const struct sim *s, uint64_t t)
{
	const struct interp *in = &s->in;
	put_blob(w, t, JPB_BLOB_INTERPRETER, &in->r, in->r.base,
		 in->r.base + in->r.bytes.len, "Interpreter");
	for (size_t i = 0; i < in->npieces; i++) {
		const struct piece *p = &in->pieces[i];
		if (p->kind == CP_STUB) {
			put_blob(w, t, JPB_BLOB_DYNAMIC, &in->s, p->start, p->end,
				 p->name);
			continue;
		}
		struct jpb_rec_jvm_codelet cl = { 0 };
		cl.begin = p->start;
		cl.end = p->end;
		cl.bytecode = p->kind == CP_CODELET ? p->arg : -1;
		cl.index = (uint32_t)i;
		char desc[96];
		if (p->kind == CP_CODELET)
			snprintf(desc, sizeof(desc), "%s%s", p->name,
				 p->tos ? "" : " (vtos entry)");
		else if (p->kind == CP_METHOD_ENTRY)
			snprintf(desc, sizeof(desc), "method entry point (kind = %s)",
				 p->name);
		else
			snprintf(desc, sizeof(desc), "%s", p->name);
		cl.description = jpb_str_c(desc);
		w_put(w, JPB_REC_JVM_CODELET, t, &cl);
	}
	/* Two dispatch tables: vtos entries and cached-TOS (itos) entries. */
	uint8_t tab[256 * 8];
	for (int k = 0; k < 2; k++) {
		for (int op = 0; op < 256; op++)
			jpb_st64(tab + op * 8, k ? in->tep[op] : in->vep[op]);
		struct jpb_rec_jvm_dispatch d = { jpb_str_c("active"), k ? 4u : 9u,
						  { tab, sizeof(tab) } };
		w_put(w, JPB_REC_JVM_DISPATCH, t, &d);
	}
}

/* pc map: per block, innermost frame first; COARSE: only the blocks that
 * call out or poll. */
static void pcmap(const struct nmethod *nm, int coarse, struct jpb_buf *b)
{
	for (size_t i = 0; i < nm->nblocks; i++) {
		const struct nblock *bl = &nm->blocks[i];
		if (coarse && !bl->safepoint)
			continue;
		uint32_t depth = 0;
		for (int32_t sc = (int32_t)bl->scope; sc >= 0; sc = nm->scopes[sc].parent)
			depth++;
		jpb_buf_u64(b, bl->start);
		jpb_buf_u32(b, depth);
		int32_t bci = bl->bci;
		for (int32_t sc = (int32_t)bl->scope; sc >= 0; sc = nm->scopes[sc].parent) {
			jpb_buf_u64(b, nm->scopes[sc].method_id);
			jpb_buf_u32(b, (uint32_t)bci);
			bci = nm->scopes[sc].caller_bci;
		}
	}
}

static void put_nmethod(struct w *w, const struct nmethod *nm, int coarse,
			uint64_t start_ns)
{
	struct jpb_buf map = { 0 };
	pcmap(nm, coarse, &map);
	struct jpb_rec_jvm_nmethod_load l = { 0 };
	l.flags = coarse ? JPB_NM_F_COARSE : 0;
	l.method_id = nm->method_id;
	l.code_addr = nm->r.base;
	l.code_size = nm->r.bytes.len;
	l.level = 4;
	l.code.ptr = nm->r.bytes.data;
	l.code.len = (uint32_t)nm->r.bytes.len;
	l.pcmap.ptr = map.data;
	l.pcmap.len = (uint32_t)map.len;
	w_put(w, JPB_REC_JVM_NMETHOD_LOAD, start_ns + nm->load_ns, &l);
	jpb_buf_fini(&map);
}

/* The agent's records the simulation keeps: class files (the decoder's
 * program model needs them) and the JDK version.  Raw records, in order. */
struct kept {
	struct jpb_buf recs;  /* u16 type, u64 time, u32 size, payload */
	struct jpb_buf names; /* "Lpkg/Name;\0" of each kept class file */
	size_t threads;       /* thread records kept */
	char jdk[64];
};

static int keep_agent_records(struct jpb_bundle *b, struct kept *k)
{
	snprintf(k->jdk, sizeof(k->jdk), "simulated");
	struct jpb_reader *r;
	if (jpb_reader_open(b, "jvm", &r))
		return 0; /* no agent stream: nothing to keep */
	struct jpb_record rec;
	int rc;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		if (rec.type == JPB_REC_JVM_INFO) {
			struct jpb_rec_jvm_info in;
			if (!jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					    rec.size, &in))
				snprintf(k->jdk, sizeof(k->jdk), "%.*s",
					 (int)in.jdk_version.len, in.jdk_version.ptr);
		} else if (rec.type == JPB_REC_THREAD) {
			k->threads++;
			if (jpb_buf_u16(&k->recs, rec.type) ||
			    jpb_buf_u64(&k->recs, rec.time_ns) ||
			    jpb_buf_u32(&k->recs, rec.size) ||
			    jpb_buf_put(&k->recs, rec.payload, rec.size))
				die_nomem();
		} else if (rec.type == JPB_REC_JVM_CLASS) {
			struct jpb_rec_jvm_class jc;
			if (!jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					    rec.size, &jc) &&
			    (jpb_buf_u8(&k->names, 'L') ||
			     jpb_buf_put(&k->names, jc.name.ptr, jc.name.len) ||
			     jpb_buf_put(&k->names, ";", 2)))
				die_nomem();
			if (jpb_buf_u16(&k->recs, rec.type) ||
			    jpb_buf_u64(&k->recs, rec.time_ns) ||
			    jpb_buf_u32(&k->recs, rec.size) ||
			    jpb_buf_put(&k->recs, rec.payload, rec.size))
				die_nomem();
		}
	}
	jpb_reader_free(r);
	return rc == jpb_err_eos ? 0 : rc;
}

static int have_class(const struct kept *k, const char *sig)
{
	for (size_t off = 0; off < k->names.len;) {
		const char *n = (const char *)k->names.data + off;
		if (!strcmp(n, sig))
			return 1;
		off += strlen(n) + 1;
	}
	return 0;
}

/* Methods by class: a class whose file the bundle holds gets jvm_method
 * records; any other (the hand-made scenario's, hidden classes) is
 * written as the agent writes a missing class: jvm_class_missing, then
 * jvm_method and jvm_method_code for each of its methods. */
static const struct truth *sort_truth;

static int by_class(const void *a, const void *b)
{
	const struct sim_method *x = &sort_truth->methods[*(const uint32_t *)a];
	const struct sim_method *y = &sort_truth->methods[*(const uint32_t *)b];
	int c = strcmp(x->cls, y->cls);
	return c ? c : (x->id > y->id) - (x->id < y->id);
}

static void put_methods(struct w *w, const struct sim *s, const struct kept *k,
			uint64_t t0)
{
	const struct truth *t = s->t;
	uint32_t *ix = xcalloc(t->nmethods, sizeof(uint32_t));
	size_t n = 0;
	for (uint32_t i = 1; i < t->nmethods; i++)
		if (t->methods[i].id)
			ix[n++] = i;
	sort_truth = t; /* qsort has no context argument in C11 */
	qsort(ix, n, sizeof(*ix), by_class);
	sort_truth = NULL;
	int missing = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sim_method *m = &t->methods[ix[i]];
		if (i == 0 || strcmp(m->cls, t->methods[ix[i - 1]].cls)) {
			missing = !have_class(k, m->cls);
			struct jpb_rec_jvm_class_missing cm = {
				0, jpb_str_c(m->cls),
				jpb_str_c("not passed to ClassFileLoadHook (hidden class)")
			};
			if (missing)
				w_put(w, JPB_REC_JVM_CLASS_MISSING, t0, &cm);
		}
		struct jpb_rec_jvm_method jm = { m->id, m->access, 0, jpb_str_c(m->cls),
						 jpb_str_c(m->name), jpb_str_c(m->sig) };
		w_put(w, JPB_REC_JVM_METHOD, t0, &jm);
		if (missing && m->code_len) {
			struct jpb_rec_jvm_method_code mc = { m->id,
							      { m->code, m->code_len } };
			w_put(w, JPB_REC_JVM_METHOD_CODE, t0, &mc);
		}
	}
	free(ix);
}

/* Without an agent stream (hand-made truth): the agent's ThreadStart and
 * ThreadEnd records. */
static void put_jvm_threads(struct w *w, const struct sim *s)
{
	for (size_t i = 0; i < s->nthr; i++) {
		const struct sim_thr *th = &s->thr[i];
		char name[32];
		snprintf(name, sizeof(name), i ? "worker-%zu" : "main", i);
		struct jpb_rec_thread t = { th->tid, th->tt->nstid, s->o.pid,
					    JPB_THREAD_START, jpb_str_c(name) };
		w_put(w, JPB_REC_THREAD, s->o.start_ns + th->start_ns, &t);
		t.event = JPB_THREAD_END;
		w_put(w, JPB_REC_THREAD, s->o.start_ns + th->end_ns, &t);
	}
}

static void put_kept(struct w *w, const struct kept *k)
{
	for (size_t off = 0; off + 14 <= k->recs.len;) {
		const uint8_t *p = k->recs.data + off;
		uint32_t size = jpb_le32(p + 10);
		w_raw(w, jpb_le16(p), jpb_le64(p + 2), p + 14, size);
		off += 14 + (size_t)size;
	}
}

struct code_ev {
	uint64_t ns, seq;
	int load;
	size_t i;
};

static int cmp_code_ev(const void *a, const void *b)
{
	const struct code_ev *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Loads and unloads in time order (an address may be reused). */
static void put_code_events(struct w *w, const struct sim *s, uint64_t t0)
{
	size_t nn, k = 0;
	struct nmethod *const *nms = jit_nmethods(s->jit, &nn);
	struct code_ev *ev = xcalloc(2 * nn, sizeof(*ev));
	for (size_t i = 0; i < nn; i++) {
		ev[k++] = (struct code_ev){ nms[i]->load_ns, nms[i]->load_seq, 1, i };
		if (nms[i]->freed)
			ev[k++] = (struct code_ev){ nms[i]->unload_ns, nms[i]->unload_seq,
						    0, i };
	}
	qsort(ev, k, sizeof(*ev), cmp_code_ev);
	for (size_t e = 0; e < k; e++) {
		const struct nmethod *nm = nms[ev[e].i];
		if (ev[e].load) {
			put_nmethod(w, nm, s->o.coarse_pcmaps, t0);
		} else {
			struct jpb_rec_jvm_nmethod_unload u = { nm->method_id,
								nm->r.base };
			w_put(w, JPB_REC_JVM_NMETHOD_UNLOAD, t0 + nm->unload_ns, &u);
		}
	}
	free(ev);
}

int out_jvm(struct jpb_bundle *b, const struct sim *s, char *err, size_t n)
{
	struct kept k = { 0 };
	int rc = keep_agent_records(b, &k);
	if (rc) {
		snprintf(err, n, "jvm: %s", jpb_errstr(rc));
		jpb_buf_fini(&k.recs);
		jpb_buf_fini(&k.names);
		return rc;
	}
	struct w w;
	rc = w_open(b, "jvm", &w, err, n);
	if (rc) {
		jpb_buf_fini(&k.recs);
		jpb_buf_fini(&k.names);
		return rc;
	}
	uint64_t t0 = s->o.start_ns;
	struct jpb_rec_jvm_info info = { 0 };
	info.pid = info.nspid = s->o.pid;
	info.jdk_version = jpb_str_c(k.jdk);
	info.vm_name = jpb_str_c("jpbpf-sim HotSpot model");
	info.vm_version = jpb_str_c(JPBPF_VERSION);
	info.libjvm = jpb_str_c("/usr/lib/jvm/sim/lib/server/libjvm.so");
	info.libjvm_base = CG_RUNTIME_BASE;
	info.flags = s->o.coarse_pcmaps ? JPB_JVM_F_COARSE_PCMAPS : 0;
	w_put(&w, JPB_REC_JVM_INFO, t0, &info);
	put_kept(&w, &k);
	if (!k.threads)
		put_jvm_threads(&w, s);
	put_methods(&w, s, &k, t0);
	jpb_buf_fini(&k.recs);
	jpb_buf_fini(&k.names);
	put_interp(&w, s, t0);
	put_code_events(&w, s, t0);
	return w_close(&w, "jvm", err, n);
}

/* ---- pt/cpuN ---- */

static int out_pt_cpu(struct jpb_bundle *b, const struct sim *s, unsigned cpu,
		      char *err, size_t n)
{
	char name[32];
	snprintf(name, sizeof(name), "pt/cpu%u", cpu);
	struct w w;
	int rc = w_open(b, name, &w, err, n);
	if (rc)
		return rc;
	const struct ptenc *pe = s->cpus[cpu].pe;
	struct jpb_rec_pt_ring ring = { 0 };
	ring.cpu = cpu;
	ring.aux_size = s->o.pt.buf_size ? s->o.pt.buf_size : 4u << 20;
	ring.data_size = 512u << 10;
	ring.cap_user_time_zero = 1;
	ring.time_zero = 0; /* TSC = 2 x CLOCK_MONOTONIC ns */
	ring.time_mult = 1u << 31;
	ring.time_shift = 32;
	json_decref(ptmeta_json(&s->o, &ring.config));
	w_put(&w, JPB_REC_PT_RING, s->o.start_ns, &ring);
	size_t nc;
	const struct ptenc_chunk *ch = ptenc_chunks(pe, &nc);
	const struct jpb_buf *data = ptenc_data(pe);
	for (size_t i = 0; i < nc; i++) {
		struct jpb_rec_pt_aux_data d = { 0 };
		d.cpu = cpu;
		d.offset = ch[i].offset;
		d.data.ptr = data->data + ch[i].offset;
		d.data.len = (uint32_t)ch[i].size;
		if (ch[i].size)
			w_put(&w, JPB_REC_PT_AUX_DATA, ch[i].time_ns, &d);
		struct jpb_rec_pt_aux_event ev = { 0 };
		ev.cpu = cpu;
		ev.pid = s->o.pid;
		ev.aux_offset = ch[i].offset;
		ev.aux_size = ch[i].size;
		ev.flags = (ch[i].flags & PTENC_TRUNCATED) ? 1 : 0;
		w_put(&w, JPB_REC_PT_AUX_EVENT, ch[i].time_ns, &ev);
		if (ch[i].flags & PTENC_TRUNCATED) {
			struct jpb_rec_loss l = { jpb_str_c("pt-aux-truncated"), cpu,
						  0, ch[i].time_ns, ch[i].time_ns };
			w_put(&w, JPB_REC_LOSS, ch[i].time_ns, &l);
		}
	}
	return w_close(&w, name, err, n);
}

/* A second synth with fewer CPUs must not leave the first one's streams. */
static int remove_stale(struct jpb_bundle *b, unsigned cpus, int itruth,
			char *err, size_t n)
{
	const char *const *names;
	size_t count;
	int rc = jpb_bundle_list_streams(b, &names, &count);
	if (rc) {
		snprintf(err, n, "listing streams: %s", jpb_bundle_errmsg(b));
		return rc;
	}
	char (*stale)[64] = xcalloc(count ? count : 1, sizeof(*stale));
	size_t k = 0;
	for (size_t i = 0; i < count; i++) {
		unsigned cpu;
		char tail;
		int pt = sscanf(names[i], "pt/cpu%u%c", &cpu, &tail) == 1;
		int it = !pt && (sscanf(names[i], "sim/itruth/cpu%u%c", &cpu, &tail) == 1 ||
				 sscanf(names[i], "sim/entries/cpu%u%c", &cpu, &tail) == 1);
		if ((pt && cpu >= cpus) || (it && (cpu >= cpus || !itruth)))
			snprintf(stale[k++], sizeof(stale[0]), "%s.jpb", names[i]);
	}
	for (size_t i = 0; i < k && !rc; i++) {
		char path[4096];
		if (jpb_bundle_path(b, stale[i], path, sizeof(path)) ||
		    unlink(path)) {
			snprintf(err, n, "%s: cannot remove a stale stream", stale[i]);
			rc = jpb_err_io;
		}
	}
	free(stale);
	return rc;
}

int out_pt(struct jpb_bundle *b, const struct sim *s, char *err, size_t n)
{
	int rc0 = remove_stale(b, s->o.cpus, s->o.itruth, err, n);
	if (rc0)
		return rc0;
	for (unsigned c = 0; c < s->o.cpus; c++) {
		int rc = out_pt_cpu(b, s, c, err, n);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- sched ---- */


/* One sched-stream record before sorting by (jittered) time. */
struct sitem {
	uint64_t t;  /* when it happened (PT clock): the ring buffer's order */
	uint64_t jt; /* the BPF clock's stamp */
	uint16_t type;
	size_t i; /* sched_ev index or nmethod index */
};

static int cmp_sitem(const void *a, const void *b)
{
	const struct sitem *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

static uint64_t jitter(const struct sim *s, struct rng *r, uint64_t t)
{
	if (!s->o.jitter_ns)
		return t;
	int64_t j = (int64_t)rng_below(r, 2 * (uint64_t)s->o.jitter_ns + 1) -
		    s->o.jitter_ns;
	return (uint64_t)((int64_t)t + j);
}

/* hotspot:compiled__method__load/unload as the BPF recorder sees them:
 * names in internal form, no address on unload. */
static void put_usdt(struct w *w, const struct sim *s, const struct nmethod *nm,
		     int unload, uint64_t t)
{
	const struct sim_method *m = truth_method(s->t, nm->method_id);
	char cls[512];
	size_t len = strlen(m->cls);
	if (len >= 2 && m->cls[0] == 'L' && m->cls[len - 1] == ';')
		snprintf(cls, sizeof(cls), "%.*s", (int)(len - 2), m->cls + 1);
	else
		snprintf(cls, sizeof(cls), "%s", m->cls);
	struct jpb_rec_usdt_method u = { 0 };
	u.tid = s->o.pid + 1; /* the compiler thread */
	u.tgid = s->o.pid;
	u.code_addr = unload ? 0 : nm->r.base;
	u.code_size = unload ? 0 : (uint32_t)nm->r.bytes.len;
	u.class_name = jpb_str_c(cls);
	u.method_name = jpb_str_c(m->name);
	u.signature = jpb_str_c(m->sig);
	w_put(w, unload ? JPB_REC_USDT_METHOD_UNLOAD : JPB_REC_USDT_METHOD_LOAD, t, &u);
}

/* A thread's fork (or exit) as the BPF recorder writes it: the sched
 * record, then the core thread record. */
static void put_lifecycle(struct w *w, const struct sim *s, size_t i,
			  uint16_t type, uint64_t t)
{
	const struct sim_thr *th = &s->thr[i];
	char comm[16];
	snprintf(comm, sizeof(comm), "java-t%zu", i);
	if (type == JPB_REC_SCHED_FORK) {
		struct jpb_rec_sched_fork f = { 0, s->thr[0].tid, s->o.pid, th->tid,
						s->o.pid, th->tt->nstid,
						jpb_str_c(comm) };
		w_put(w, type, t, &f);
	} else {
		struct jpb_rec_sched_exit x = { 0, th->tid, s->o.pid, th->tt->nstid,
						0, jpb_str_c(comm) };
		w_put(w, type, t, &x);
	}
	struct jpb_rec_thread rt = { th->tid, th->tt->nstid, s->o.pid,
				     type == JPB_REC_SCHED_FORK ? JPB_THREAD_START
								: JPB_THREAD_END,
				     jpb_str_c(comm) };
	w_put(w, JPB_REC_THREAD, t, &rt);
}

int out_sched(struct jpb_bundle *b, const struct sim *s, char *err, size_t n)
{
	struct w w;
	int rc = w_open(b, "sched", &w, err, n);
	if (rc)
		return rc;
	/* The BPF clock reads CLOCK_MONOTONIC with its own jitter. */
	struct rng r = { s->o.seed ^ 0x27d4eb2f165667c5ull };
	struct jpb_rec_clock_pair cp = { 2 * s->o.start_ns, s->o.start_ns, 40, 0 };
	w_put(&w, JPB_REC_CLOCK_PAIR, cp.mono_ns, &cp);
	/* the first thread was running when recording began */
	if (s->nthr) {
		struct jpb_rec_thread t = { s->thr[0].tid, s->thr[0].tt->nstid,
					    s->o.pid, JPB_THREAD_SEEN,
					    jpb_str_c("java") };
		w_put(&w, JPB_REC_THREAD, s->o.start_ns, &t);
	}
	size_t nn;
	struct nmethod *const *nms = jit_nmethods(s->jit, &nn);
	struct sitem *it = xcalloc(s->nsev + 2 * nn + 2 * s->nthr, sizeof(*it));
	size_t k = 0;
	for (size_t i = 0; i < s->nthr; i++) {
		uint64_t t0 = s->o.start_ns + s->thr[i].start_ns;
		uint64_t t1 = s->o.start_ns + s->thr[i].end_ns;
		if (i)
			it[k++] = (struct sitem){ t0, jitter(s, &r, t0),
						  JPB_REC_SCHED_FORK, i };
		it[k++] = (struct sitem){ t1, jitter(s, &r, t1), JPB_REC_SCHED_EXIT, i };
	}
	for (size_t i = 0; i < s->nsev; i++)
		it[k++] = (struct sitem){ s->sev[i].ns, jitter(s, &r, s->sev[i].ns),
					  JPB_REC_SCHED_SWITCH, i };
	for (size_t i = 0; i < nn; i++) {
		uint64_t t = s->o.start_ns + nms[i]->load_ns;
		it[k++] = (struct sitem){ t, jitter(s, &r, t), JPB_REC_USDT_METHOD_LOAD, i };
		if (nms[i]->freed) {
			t = s->o.start_ns + nms[i]->unload_ns;
			it[k++] = (struct sitem){ t, jitter(s, &r, t),
						  JPB_REC_USDT_METHOD_UNLOAD, i };
		}
	}
	qsort(it, k, sizeof(*it), cmp_sitem);
	for (size_t i = 0; i < k; i++) {
		if (it[i].type == JPB_REC_SCHED_FORK || it[i].type == JPB_REC_SCHED_EXIT) {
			put_lifecycle(&w, s, it[i].i, it[i].type, it[i].jt);
			continue;
		}
		if (it[i].type != JPB_REC_SCHED_SWITCH) {
			put_usdt(&w, s, nms[it[i].i],
				 it[i].type == JPB_REC_USDT_METHOD_UNLOAD, it[i].jt);
			continue;
		}
		const struct sched_ev *e = &s->sev[it[i].i];
		struct jpb_rec_sched_switch sw = {
			.cpu = e->cpu,
			.preempt = e->preempt,
			.prev_tid = e->prev_tid,
			.prev_tgid = e->prev_tid ? s->o.pid : 0,
			.next_tid = e->next_tid,
			.next_tgid = e->next_tid ? s->o.pid : 0,
			.prev_state = e->prev_state,
			.traced = (e->prev_tid ? 1u : 0u) | (e->next_tid ? 2u : 0u),
		};
		w_put(&w, JPB_REC_SCHED_SWITCH, it[i].jt, &sw);
	}
	free(it);
	uint64_t end = s->o.start_ns;
	for (unsigned c = 0; c < s->o.cpus; c++)
		if (s->o.start_ns + s->cpus[c].now > end)
			end = s->o.start_ns + s->cpus[c].now;
	cp = (struct jpb_rec_clock_pair){ 2 * end, end, 40, 0 };
	w_put(&w, JPB_REC_CLOCK_PAIR, end, &cp);
	return w_close(&w, "sched", err, n);
}

/* ---- sim/ (oracle only) ---- */

/* A packed array in records of at most 1 MiB. */
static void put_chunks(struct w *w, uint16_t type, const struct jpb_buf *a)
{
	for (size_t off = 0; off < a->len; off += 1u << 20) {
		size_t len = a->len - off < (1u << 20) ? a->len - off : 1u << 20;
		w_raw(w, type, 0, a->data + off, (uint32_t)len);
	}
}

int out_sim(struct jpb_bundle *b, const struct sim *s, char *err, size_t n)
{
	struct w w;
	int rc = w_open(b, "sim/lost", &w, err, n);
	if (rc)
		return rc;
	for (size_t i = 0; i < s->nthr; i++) {
		const struct sim_thr *th = &s->thr[i];
		for (size_t k = 0; k < th->nlost; k++) {
			uint8_t p[24];
			jpb_st32(p, th->tid);
			jpb_st32(p + 4, th->tt->nstid);
			jpb_st64(p + 8, th->lost[k][0]);
			jpb_st64(p + 16, th->lost[k][1]);
			w_raw(&w, SIM_REC_LOST, 0, p, sizeof(p));
		}
	}
	if ((rc = w_close(&w, "sim/lost", err, n)))
		return rc;
	if (!s->o.itruth)
		return 0;
	for (unsigned c = 0; c < s->o.cpus; c++) {
		char name[40];
		snprintf(name, sizeof(name), "sim/itruth/cpu%u", c);
		if ((rc = w_open(b, name, &w, err, n)))
			return rc;
		put_chunks(&w, SIM_REC_ITRUTH, &s->cpus[c].itruth);
		if ((rc = w_close(&w, name, err, n)))
			return rc;
		snprintf(name, sizeof(name), "sim/entries/cpu%u", c);
		if ((rc = w_open(b, name, &w, err, n)))
			return rc;
		put_chunks(&w, SIM_REC_ENTRIES, &s->cpus[c].entries);
		if ((rc = w_close(&w, name, err, n)))
			return rc;
	}
	return 0;
}

int out_meta(struct jpb_bundle *b, const struct sim *s, char *err, size_t n)
{
	void *old = NULL;
	json_t *meta;
	if (jpb_meta_load(b, &old) == 0 && old)
		meta = json_deep_copy(old);
	else
		meta = jpb_meta_new_base();
	if (!meta)
		die_nomem();
	json_object_set_new(meta, "simulated", json_true());
	uint64_t config;
	json_object_set_new(meta, "pt", ptmeta_json(&s->o, &config));
	uint64_t lost = 0, total = s->t->nbytecodes;
	for (size_t i = 0; i < s->nthr; i++)
		lost += s->thr[i].lost_bytecodes;
	json_t *sim = json_pack(
		"{s:I, s:i, s:b, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I}",
		"seed", (json_int_t)s->o.seed, "cpus", (int)s->o.cpus, "retcomp",
		s->o.pt.retcomp, "psb_period", (json_int_t)s->o.pt.psb_period,
		"loss_target_pct", s->o.loss_pct, "bytecodes", (json_int_t)total,
		"lost_bytecodes", (json_int_t)lost, "deopts", (json_int_t)s->deopts,
		"resyncs", (json_int_t)s->resyncs, "blind_frames", (json_int_t)s->blind, "jitter_ns", (json_int_t)s->o.jitter_ns,
		"lost_pct", total ? 100.0 * (double)lost / (double)total : 0.0,
		"nmethods", (json_int_t)0);
	size_t nn;
	jit_nmethods(s->jit, &nn);
	json_object_set_new(sim, "nmethods", json_integer((json_int_t)nn));
	json_object_set_new(sim, "code_reuses", json_integer((json_int_t)jit_reuses(s->jit)));
	uint64_t rc_n = 0, rt_n = 0, dropped = 0;
	for (unsigned c = 0; c < s->o.cpus; c++) {
		uint64_t a, b2;
		ptenc_ret_stats(s->cpus[c].pe, &a, &b2);
		rc_n += a;
		rt_n += b2;
		dropped += ptenc_dropped_bytes(s->cpus[c].pe);
	}
	json_object_set_new(sim, "intrinsic_calls", json_integer((json_int_t)s->intrinsics));
	json_object_set_new(sim, "restored_steps", json_integer((json_int_t)s->restored));
	json_object_set_new(sim, "window_frames", json_integer((json_int_t)s->window_frames));
	json_object_set_new(sim, "osr_entries", json_integer((json_int_t)s->osr_entries));
	json_object_set_new(sim, "unknown_locals", json_integer((json_int_t)s->unknown_locals));
	json_object_set_new(sim, "unknown_locals_methods",
			    json_integer((json_int_t)s->t->unknown_locals));
	json_object_set_new(sim, "mid_stack_threads", json_integer((json_int_t)s->t->mid_stack));
	json_object_set_new(sim, "interrupts", json_integer((json_int_t)s->irqs));
	json_object_set_new(sim, "compressed_returns", json_integer((json_int_t)rc_n));
	json_object_set_new(sim, "tip_returns", json_integer((json_int_t)rt_n));
	json_object_set_new(sim, "dropped_bytes", json_integer((json_int_t)dropped));
	json_object_set_new(meta, "sim", sim);
	int rc = jpb_meta_save(b, meta);
	json_decref(meta);
	if (rc)
		snprintf(err, n, "meta.json: %s", jpb_bundle_errmsg(b));
	return rc;
}
