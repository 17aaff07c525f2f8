// SPDX-License-Identifier: MIT
/*
 * Test helper for the simulator's locals-zeroing loop (docs/SIMULATOR.md,
 * "The code model"): does every interpreted method entry in a simulated
 * bundle's PT carry its method's count of non-parameter locals?
 *
 *   sim_locals_check DIR
 *
 * Independently of the simulator's own code: finds the loop in the
 * zerolocals entry codelets by HotSpot's bytes (test %edx,%edx; jle
 * rel32 | jle rel8; push $0; dec %edx; jg -9), decodes each pt/cpuN with
 * libipt's block decoder (end_on_call and end_on_jump, as user/decode
 * sets them) through the code of the jvm stream, and per entry (a block
 * starting at a zerolocals entry) counts the blocks that hold the jg.
 * The method of the k-th entry on a CPU is the k-th id of the oracle's
 * sim/entries/cpuN; its count n = max_locals of its Code attribute in
 * the bundle's class files minus its parameter slots (descriptor, and
 * `this`), computed here.  Every entry must have run the jle and have
 * exactly n jg executions; a method no class file gives must have its
 * loop untraced (no jle).  Needs a bundle without loss.
 *
 * Prints per CPU the entries, mismatches (the first few in detail) and a
 * histogram of n (0, 1, 2, 3+, unknown) as one line "key=value ...";
 * exit 0 if all match, 1 on a mismatch or unreadable input, 2 usage.
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "java/classfile.h"
#include "records.h"
#include "records_jvm.h"
#include "records_pt.h"
#include "tests/sim/simrec.h"

struct sect {
	uint64_t start, size, load_ns, unload_ns;
	uint8_t *bytes;
};

struct meth {
	char *cls, *name, *sig;
	uint32_t access;
	int n; /* -2 not yet computed, -1 unknown */
};

struct klass {
	const char *name;
	struct jcf *cf;
};

struct ctx {
	struct sect *s;
	size_t ns;
	struct meth *m; /* by method id */
	size_t nm;
	struct klass *k;
	size_t nk;
	uint64_t entry[2], jle[2], jg[2], exit[2]; /* 0 if not found */
	struct pt_block_decoder *blk;
	uint32_t mult, shift;
	uint64_t time_zero;
};

static void *xalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p) {
		fprintf(stderr, "sim_locals_check: out of memory\n");
		exit(1);
	}
	return p;
}

static char *dup_str(struct jpb_str s)
{
	char *p = xalloc(s.len + 1u);
	memcpy(p, s.ptr, s.len);
	return p;
}

/* ---- the image, versioned by time as the code cache reuses addresses ---- */

static uint64_t now_ns(const struct ctx *c)
{
	uint64_t tsc = 0;
	pt_blk_time(c->blk, &tsc, NULL, NULL);
	if (!c->mult && !c->shift)
		return tsc;
	return c->time_zero + (uint64_t)(((unsigned __int128)tsc * c->mult) >> c->shift);
}

static int read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid,
		    uint64_t ip, void *arg)
{
	(void)asid;
	const struct ctx *c = arg;
	uint64_t t = c->blk ? now_ns(c) : 0;
	const struct sect *live = NULL, *next = NULL;
	for (size_t i = 0; i < c->ns; i++) {
		const struct sect *s = &c->s[i];
		if (ip < s->start || ip >= s->start + s->size)
			continue;
		if (s->load_ns <= t && t < s->unload_ns)
			live = s;
		else if (s->load_ns > t && (!next || s->load_ns < next->load_ns))
			next = s;
	}
	const struct sect *s = live ? live : next;
	if (!s)
		return -pte_nomap;
	uint64_t n = s->start + s->size - ip;
	if (n > size)
		n = size;
	memcpy(buf, s->bytes + (ip - s->start), n);
	return (int)n;
}

static void add_sect(struct ctx *c, uint64_t start, struct jpb_bytes code,
		     uint64_t load_ns)
{
	c->s = realloc(c->s, (c->ns + 1) * sizeof(*c->s));
	if (!c->s)
		exit(1);
	struct sect *s = &c->s[c->ns++];
	s->start = start;
	s->size = code.len;
	s->load_ns = load_ns;
	s->unload_ns = UINT64_MAX;
	s->bytes = xalloc(code.len);
	memcpy(s->bytes, code.ptr, code.len);
}

static void unload(struct ctx *c, uint64_t start, uint64_t ns)
{
	for (size_t i = c->ns; i-- > 0;)
		if (c->s[i].start == start && c->s[i].load_ns && c->s[i].unload_ns == UINT64_MAX) {
			c->s[i].unload_ns = ns;
			return;
		}
}

/* The bytes at [A, A+N) of the interpreter, NULL if not all there. */
static const uint8_t *code_at(const struct ctx *c, uint64_t a, uint64_t n)
{
	for (size_t i = 0; i < c->ns; i++)
		if (!c->s[i].load_ns && a >= c->s[i].start &&
		    a + n <= c->s[i].start + c->s[i].size)
			return c->s[i].bytes + (a - c->s[i].start);
	return NULL;
}

/* HotSpot's loop in the entry codelet [B, E): test; jle exit; push $0;
 * dec; jg loop. */
static void find_loop(struct ctx *c, int k, uint64_t b, uint64_t e)
{
	static const uint8_t body[] = { 0x68, 0, 0, 0, 0, 0xff, 0xca, 0x7f, 0xf7 };
	const uint8_t *p = code_at(c, b, e - b);
	for (uint64_t i = 0; p && i + 2 < e - b; i++) {
		if (p[i] != 0x85 || p[i + 1] != 0xd2)
			continue;
		uint64_t jle = b + i + 2, loop;
		if (i + 8 <= e - b && p[i + 2] == 0x0f && p[i + 3] == 0x8e &&
		    !memcmp(p + i + 4, "\x09\0\0\0", 4))
			loop = jle + 6;
		else if (p[i + 2] == 0x7e && p[i + 3] == 0x09)
			loop = jle + 2;
		else
			continue;
		if (loop + sizeof(body) > e || memcmp(p + (loop - b), body, sizeof(body)))
			continue;
		c->entry[k] = b;
		c->jle[k] = jle;
		c->jg[k] = loop + 7;
		c->exit[k] = loop + 9;
		return;
	}
}

static void add_method(struct ctx *c, const struct jpb_rec_jvm_method *jm)
{
	if (jm->method_id >= (1u << 26))
		return;
	if (jm->method_id >= c->nm) {
		size_t n = jm->method_id + 1;
		c->m = realloc(c->m, n * sizeof(*c->m));
		if (!c->m)
			exit(1);
		memset(c->m + c->nm, 0, (n - c->nm) * sizeof(*c->m));
		c->nm = n;
	}
	struct meth *m = &c->m[jm->method_id];
	free(m->cls), free(m->name), free(m->sig);
	m->cls = dup_str(jm->class_sig);
	m->name = dup_str(jm->name);
	m->sig = dup_str(jm->signature);
	m->access = jm->access_flags;
	m->n = -2;
}

static void add_class(struct ctx *c, const struct jpb_rec_jvm_class *jc)
{
	struct jcf *cf;
	if (jcf_parse(&cf, jc->bytes.ptr, jc->bytes.len, NULL) != java_ok)
		return;
	c->k = realloc(c->k, (c->nk + 1) * sizeof(*c->k));
	if (!c->k)
		exit(1);
	c->k[c->nk++] = (struct klass){ jcf_this_class(cf), cf };
}

static int decode_one(const struct jpb_record *rec, void *out)
{
	return jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload, rec->size, out);
}

static int jvm_record(struct ctx *c, const struct jpb_record *rec)
{
	union {
		struct jpb_rec_jvm_code_blob cb;
		struct jpb_rec_jvm_nmethod_load nl;
		struct jpb_rec_jvm_nmethod_unload nu;
		struct jpb_rec_jvm_codelet cl;
		struct jpb_rec_jvm_method jm;
		struct jpb_rec_jvm_class jc;
	} u;
	int rc = 0;
	switch (rec->type) {
	case JPB_REC_JVM_CODE_BLOB:
		if (!(rc = decode_one(rec, &u.cb)))
			add_sect(c, u.cb.start, u.cb.code, 0);
		break;
	case JPB_REC_JVM_NMETHOD_LOAD:
		if (!(rc = decode_one(rec, &u.nl)))
			add_sect(c, u.nl.code_addr, u.nl.code, rec->time_ns);
		break;
	case JPB_REC_JVM_NMETHOD_UNLOAD:
		if (!(rc = decode_one(rec, &u.nu)))
			unload(c, u.nu.code_addr, rec->time_ns);
		break;
	case JPB_REC_JVM_METHOD:
		if (!(rc = decode_one(rec, &u.jm)))
			add_method(c, &u.jm);
		break;
	case JPB_REC_JVM_CLASS:
		if (!(rc = decode_one(rec, &u.jc)))
			add_class(c, &u.jc);
		break;
	}
	return rc;
}

/* Codelets come after the code blobs they lie in. */
static void codelet(struct ctx *c, const struct jpb_record *rec)
{
	struct jpb_rec_jvm_codelet cl;
	if (rec->type != JPB_REC_JVM_CODELET || decode_one(rec, &cl))
		return;
	static const char *const kinds[2] = {
		"method entry point (kind = zerolocals)",
		"method entry point (kind = zerolocals_synchronized)",
	};
	for (int k = 0; k < 2; k++)
		if (cl.description.len == strlen(kinds[k]) &&
		    !memcmp(cl.description.ptr, kinds[k], cl.description.len))
			find_loop(c, k, cl.begin, cl.end);
}

static int load_jvm(struct jpb_bundle *b, struct ctx *c)
{
	for (int pass = 0; pass < 2; pass++) {
		struct jpb_reader *r;
		int rc = jpb_reader_open(b, "jvm", &r);
		if (rc)
			return rc;
		struct jpb_record rec;
		while ((rc = jpb_reader_next(r, &rec)) == 0) {
			if (pass)
				codelet(c, &rec);
			else if ((rc = jvm_record(c, &rec)))
				break;
		}
		jpb_reader_free(r);
		if (rc != jpb_err_eos)
			return rc;
	}
	return 0;
}

/* ---- each method's count ---- */

/* n of method ID: from every class file of its class that declares it
 * with code; -1 if none does or they disagree. */
static int count_of(struct ctx *c, uint32_t id)
{
	if (id >= c->nm || !c->m[id].cls)
		return -1;
	struct meth *m = &c->m[id];
	if (m->n != -2)
		return m->n;
	m->n = -1;
	size_t len = strlen(m->cls);
	if (len < 3 || m->cls[0] != 'L')
		return -1;
	int params = jcf_param_slots(m->sig, m->access & JCF_ACC_STATIC);
	int found = -1;
	for (size_t i = 0; i < c->nk && params >= 0; i++) {
		if (strlen(c->k[i].name) != len - 2 || strncmp(c->k[i].name, m->cls + 1, len - 2))
			continue;
		const struct jcf_method *jm = jcf_method_find(c->k[i].cf, m->name, m->sig);
		if (!jm || !jm->code)
			continue;
		int n = jm->max_locals - params;
		if (found >= 0 && n != found)
			return -1;
		found = n;
	}
	return m->n = found;
}

/* ---- decoding ---- */

struct tally {
	size_t entries, bad, unmatched, hist[5];
};

/* One decoded entry against the oracle's method ID. */
static void judge(struct ctx *c, unsigned cpu, size_t k, uint32_t id, int ran_jle,
		  long jg, struct tally *t)
{
	int n = count_of(c, id);
	t->hist[n < 0 ? 4 : n > 3 ? 3 : n]++;
	int ok = n < 0 ? !ran_jle && jg == 0 : ran_jle && jg == n;
	if (ok)
		return;
	if (t->bad++ < 5)
		printf("# cpu%u entry %zu: method %u %s.%s%s: n %d, decoded %s%ld jg\n",
		       cpu, k, id, id < c->nm && c->m[id].cls ? c->m[id].cls : "?",
		       id < c->nm && c->m[id].name ? c->m[id].name : "?",
		       id < c->nm && c->m[id].sig ? c->m[id].sig : "", n,
		       ran_jle ? "" : "no jle, ", jg);
}

static int holds(const struct pt_block *b, uint64_t a)
{
	return a && b->ip <= a && a <= b->end_ip;
}

struct walk {
	const uint8_t *ids;
	size_t nids, k;
	int open, ran_jle;
	long jg;
};

static void close_entry(struct ctx *c, unsigned cpu, struct walk *w, struct tally *t)
{
	if (!w->open)
		return;
	w->open = 0;
	if (w->k >= w->nids) {
		t->unmatched++;
		return;
	}
	uint32_t id = (uint32_t)w->ids[4 * w->k] | (uint32_t)w->ids[4 * w->k + 1] << 8 |
		      (uint32_t)w->ids[4 * w->k + 2] << 16 | (uint32_t)w->ids[4 * w->k + 3] << 24;
	judge(c, cpu, w->k, id, w->ran_jle, w->jg, t);
	w->k++;
	t->entries++;
}

static void on_block(struct ctx *c, unsigned cpu, const struct pt_block *b,
		     struct walk *w, struct tally *t)
{
	for (int k = 0; k < 2; k++) {
		if (b->ip == c->entry[k]) {
			close_entry(c, cpu, w, t);
			w->open = 1;
			w->ran_jle = 0;
			w->jg = 0;
		}
		if (!w->open)
			continue;
		w->ran_jle |= holds(b, c->jle[k]);
		w->jg += holds(b, c->jg[k]);
	}
}

static int decode_cpu(struct ctx *c, const struct pt_config *cfg, unsigned cpu,
		      struct walk *w, struct tally *t)
{
	struct pt_image *im = pt_image_alloc("sim");
	pt_image_set_callback(im, read_mem, c);
	c->blk = pt_blk_alloc_decoder(cfg);
	pt_blk_set_image(c->blk, im);
	int status = pt_blk_sync_forward(c->blk), err = 0;
	while (status >= 0) {
		while (status >= 0 && (status & pts_event_pending)) {
			struct pt_event ev;
			status = pt_blk_event(c->blk, &ev, sizeof(ev));
			if (status >= 0 && ev.type == ptev_overflow)
				err = -pte_overflow;
		}
		if (status < 0)
			break;
		struct pt_block b = { 0 };
		status = pt_blk_next(c->blk, &b, sizeof(b));
		if (b.ninsn)
			on_block(c, cpu, &b, w, t);
	}
	close_entry(c, cpu, w, t);
	if (status != -pte_eos)
		err = status;
	pt_blk_free_decoder(c->blk);
	c->blk = NULL;
	pt_image_free(im);
	return err;
}

static int read_stream(struct jpb_bundle *b, const char *name, uint16_t type,
		       struct jpb_buf *out, struct ctx *c)
{
	struct jpb_reader *r;
	int rc = jpb_reader_open(b, name, &r);
	if (rc)
		return rc;
	struct jpb_record rec;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		if (rec.type == JPB_REC_PT_RING && c) {
			struct jpb_rec_pt_ring ring;
			if ((rc = decode_one(&rec, &ring)))
				break;
			c->mult = ring.time_mult;
			c->shift = ring.time_shift;
			c->time_zero = ring.time_zero;
		}
		if (rec.type != type)
			continue;
		struct jpb_bytes d = { rec.payload, rec.size };
		if (type == JPB_REC_PT_AUX_DATA) {
			struct jpb_rec_pt_aux_data a;
			if ((rc = decode_one(&rec, &a)))
				break;
			d = a.data;
		}
		if (jpb_buf_put(out, d.ptr, d.len))
			return jpb_err_nomem;
	}
	jpb_reader_free(r);
	return rc == jpb_err_eos ? 0 : rc;
}

static int check_cpu(struct jpb_bundle *b, struct ctx *c, unsigned cpu, struct tally *t)
{
	char pt[32], en[40];
	snprintf(pt, sizeof(pt), "pt/cpu%u", cpu);
	snprintf(en, sizeof(en), "sim/entries/cpu%u", cpu);
	struct jpb_buf trace = { 0 }, ids = { 0 };
	int rc = read_stream(b, pt, JPB_REC_PT_AUX_DATA, &trace, c);
	if (!rc)
		rc = read_stream(b, en, SIM_REC_ENTRIES, &ids, c);
	if (rc) {
		fprintf(stderr, "sim_locals_check: %s or %s: %s\n", pt, en, jpb_errstr(rc));
		goto out;
	}
	struct walk w = { ids.data, ids.len / 4, 0, 0, 0, 0 };
	if (trace.len) {
		struct pt_config cfg;
		pt_config_init(&cfg);
		cfg.begin = trace.data;
		cfg.end = trace.data + trace.len;
		cfg.flags.variant.block.end_on_call = 1;
		cfg.flags.variant.block.end_on_jump = 1;
		rc = decode_cpu(c, &cfg, cpu, &w, t);
		if (rc)
			fprintf(stderr, "sim_locals_check: %s: %s\n", pt,
				pt_errstr(pt_errcode(rc)));
	}
	if (w.k != w.nids) {
		printf("# cpu%u: %zu entries decoded, %zu in sim/entries\n", cpu, w.k, w.nids);
		t->bad++;
	}
out:
	jpb_buf_fini(&trace);
	jpb_buf_fini(&ids);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sim_locals_check DIR\n");
		return 2;
	}
	struct jpb_bundle *b;
	int rc = jpb_bundle_open(&b, argv[1]);
	if (rc) {
		fprintf(stderr, "sim_locals_check: %s: %s\n", argv[1], jpb_errstr(rc));
		return 1;
	}
	struct ctx c = { 0 };
	rc = load_jvm(b, &c);
	if (rc || !c.entry[0] || !c.entry[1]) {
		fprintf(stderr, "sim_locals_check: %s: %s\n", argv[1],
			rc ? jpb_errstr(rc) : "no locals loop in the zerolocals entries");
		jpb_bundle_free(b);
		return 1;
	}
	struct tally t = { 0 };
	unsigned cpus = 0;
	char name[32];
	int bad = 0;
	for (;; cpus++) {
		snprintf(name, sizeof(name), "pt/cpu%u", cpus);
		struct jpb_reader *r;
		if (jpb_reader_open(b, name, &r))
			break;
		jpb_reader_free(r);
		bad |= check_cpu(b, &c, cpus, &t);
	}
	printf("cpus=%u entries=%zu mismatches=%zu unmatched=%zu n0=%zu n1=%zu n2=%zu "
	       "n3plus=%zu unknown=%zu\n",
	       cpus, t.entries, t.bad, t.unmatched, t.hist[0], t.hist[1], t.hist[2],
	       t.hist[3], t.hist[4]);
	for (size_t i = 0; i < c.ns; i++)
		free(c.s[i].bytes);
	for (size_t i = 0; i < c.nm; i++)
		free(c.m[i].cls), free(c.m[i].name), free(c.m[i].sig);
	for (size_t i = 0; i < c.nk; i++)
		jcf_free(c.k[i].cf);
	free(c.s), free(c.m), free(c.k);
	jpb_bundle_free(b);
	return bad || t.bad || t.unmatched || !cpus ? 1 : 0;
}
