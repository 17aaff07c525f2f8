// SPDX-License-Identifier: MIT
/*
 * decode_entrylocals BUNDLE: checks the entry_locals of the decoded
 * method_entry events (DECODER.md, "Entry locals") against the truth.
 *
 * Truth side, per thread: every interpreted-looking invocation (an entry
 * followed at once by its method's bytecode at bci 0) of a method whose
 * class file gives its max_locals, as n = max_locals - parameter slots,
 * in order.  Decoded side, per thread: the method_entry events at
 * zerolocals codelets, in order; entry_locals 0 is "not known", any other
 * value says n = entry_locals - 1.
 *
 * The known decoded values must be a subsequence of the truth's (a count
 * never disagrees; with compiled invocations or lost trace, entries may be
 * missing or unknown).  Prints one line per thread and
 *   total truth=T decoded=D known=K unknown=U unmatched=M hist_equal=H
 *         n0=A n1=B nmore=C
 * hist_equal: 1 if per thread the known values' histogram equals the
 * truth's (exact when every invocation is interpreted and nothing is
 * lost); n0, n1, nmore: the truth's invocations by n.  A simulated bundle
 * also says which entries ran interpreted (sim/entries/cpuN: the method
 * of each, by CPU): then a second line
 *   sim entries=E entries_hist_equal=H
 * with E its entries of methods with a known n, and H 1 if over all
 * threads the known decoded values' histogram equals theirs (exact with
 * compiled code too, when nothing is lost).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "java/program.h"
#include "records.h"
#include "records_decoded.h"
#include "records_jvm.h"
#include "records_truth.h"

#define MAXN 256 /* histogram bins; larger n in the last */

struct seq {
	int32_t *v;
	size_t n, cap;
};

struct thr {
	uint32_t tid, nstid;
	struct seq truth, dec; /* dec: entry_locals (0 = unknown) */
	uint32_t last_m;       /* truth: the method of a pending entry */
	int pending;
};

static struct thr thr[4096];
static size_t nthr;
static int32_t *nloc; /* per truth method id: n, -1 unknown */
static size_t nnloc;
static uint8_t zl[1u << 16]; /* codelet index -> zerolocals */

static void die(const char *what)
{
	fprintf(stderr, "decode_entrylocals: %s\n", what);
	exit(1);
}

static void push(struct seq *s, int32_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			die("out of memory");
	}
	s->v[s->n++] = v;
}

static struct thr *by_nstid(uint32_t nstid)
{
	for (size_t i = 0; i < nthr; i++)
		if (thr[i].nstid == nstid)
			return &thr[i];
	if (nthr == 4096)
		die("too many threads");
	thr[nthr].nstid = nstid;
	return &thr[nthr++];
}

static void on_method(struct jprog *p, const struct jpb_rec_truth_method *m)
{
	char cls[1024], name[512], sig[1024];
	snprintf(cls, sizeof(cls), "%.*s", (int)m->class_sig.len, m->class_sig.ptr);
	snprintf(name, sizeof(name), "%.*s", (int)m->name.len, m->name.ptr);
	snprintf(sig, sizeof(sig), "%.*s", (int)m->signature.len, m->signature.ptr);
	if (m->method_id >= nnloc) {
		size_t n = m->method_id + 1024;
		nloc = realloc(nloc, n * sizeof(*nloc));
		if (!nloc)
			die("out of memory");
		for (size_t i = nnloc; i < n; i++)
			nloc[i] = -1;
		nnloc = n;
	}
	/* an id of our own, far from the agent's jmethodIDs */
	uint64_t id = 1ull << 62 | m->method_id;
	struct jhier_method hm;
	if (jprog_add_method_id(p, id, cls, name, sig) ||
	    jprog_method_by_id(p, id, &hm) || !hm.m->code)
		return;
	int slots = jcf_param_slots(sig, (hm.m->access_flags & 0x0008) != 0);
	if (slots >= 0 && hm.m->max_locals >= slots)
		nloc[m->method_id] = hm.m->max_locals - slots;
}

static void on_truth_events(const struct jpb_rec_truth_events *e)
{
	struct thr *t = by_nstid(e->nstid);
	for (uint32_t k = 0; k + 8 <= e->events.len; k += 8) {
		struct jpb_truth_event te;
		jpb_truth_event_get(e->events.ptr + k, &te);
		if (t->pending && te.kind == JPB_TRUTH_BYTECODE && te.method_id == t->last_m &&
		    te.bci == 0 && te.method_id < nnloc && nloc[te.method_id] >= 0)
			push(&t->truth, nloc[te.method_id]);
		t->pending = te.kind == JPB_TRUTH_ENTRY;
		t->last_m = te.method_id;
	}
}

static void read_truth(struct jpb_bundle *b, struct jprog *p)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	if (jpb_reader_open(b, "truth", &r))
		die("no truth stream");
	while (!jpb_reader_next(r, &rec)) {
		union {
			struct jpb_rec_truth_method m;
			struct jpb_rec_truth_events e;
		} u;
		if (rec.type != JPB_REC_TRUTH_METHOD && rec.type != JPB_REC_TRUTH_EVENTS)
			continue;
		if (jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &u))
			die("bad truth record");
		if (rec.type == JPB_REC_TRUTH_METHOD)
			on_method(p, &u.m);
		else
			on_truth_events(&u.e);
	}
	jpb_reader_free(r);
}

/* host tids (sched thread records) and the zerolocals codelets (jvm) */
static void read_meta(struct jpb_bundle *b)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	if (!jpb_reader_open(b, "sched", &r)) {
		while (!jpb_reader_next(r, &rec)) {
			struct jpb_rec_thread th;
			if (rec.type == JPB_REC_THREAD &&
			    !jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &th))
				by_nstid(th.nstid)->tid = th.tid;
		}
		jpb_reader_free(r);
	}
	if (jpb_reader_open(b, "jvm", &r))
		die("no jvm stream");
	while (!jpb_reader_next(r, &rec)) {
		struct jpb_rec_jvm_codelet c;
		if (rec.type == JPB_REC_JVM_CODELET &&
		    !jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &c) &&
		    c.index < sizeof(zl) &&
		    memmem(c.description.ptr, c.description.len, "kind = zerolocals", 17))
			zl[c.index] = 1;
	}
	jpb_reader_free(r);
}

static void read_decoded(struct jpb_bundle *b, struct thr *t)
{
	char name[64];
	struct jpb_reader *r;
	struct jpb_record rec;
	snprintf(name, sizeof(name), "decoded/tid%u", t->tid);
	if (!t->tid || jpb_reader_open(b, name, &r))
		return;
	static struct jpb_decoded_event e;
	while (!jpb_reader_next(r, &rec)) {
		struct jpb_rec_decoded_events ev;
		if (rec.type != JPB_REC_DECODED_EVENTS)
			continue;
		if (jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &ev))
			die("bad decoded_events");
		struct jpb_cur cur = jpb_cur_init(ev.events.ptr, ev.events.len);
		uint64_t prev = ev.first_tsc;
		int rc;
		while ((rc = jpb_decoded_event_get(&cur, &e, &prev)) == 0)
			if (e.kind == JPB_DEV_TRANSITION && e.what == JPB_TR_METHOD_ENTRY &&
			    e.arg < sizeof(zl) && zl[e.arg])
				push(&t->dec, (int32_t)e.entry_locals);
		if (rc != jpb_err_eos)
			die("bad packed event");
	}
	jpb_reader_free(r);
}

/* The n of every entry the simulator ran interpreted (simulator bundles
 * only; 0 if there is no such stream). */
static size_t sim_entries(struct jpb_bundle *b, unsigned long *h)
{
	const char *const *names;
	size_t nn, total = 0;
	memset(h, 0, MAXN * sizeof(*h));
	if (jpb_bundle_list_streams(b, &names, &nn))
		return 0;
	for (size_t i = 0; i < nn; i++) {
		struct jpb_reader *r;
		struct jpb_record rec;
		if (strncmp(names[i], "sim/entries/cpu", 15) || jpb_reader_open(b, names[i], &r))
			continue;
		while (!jpb_reader_next(r, &rec))
			for (uint32_t k = 0; k + 4 <= rec.size; k += 4) {
				uint32_t m = jpb_le32(rec.payload + k);
				if (m < nnloc && nloc[m] >= 0) {
					h[nloc[m] < MAXN ? nloc[m] : MAXN - 1]++;
					total++;
				}
			}
		jpb_reader_free(r);
	}
	return total;
}

static void hist(const struct seq *s, int shift, unsigned long *h)
{
	memset(h, 0, MAXN * sizeof(*h));
	for (size_t i = 0; i < s->n; i++) {
		int v = s->v[i] - shift;
		if (v >= 0)
			h[v < MAXN ? v : MAXN - 1]++;
	}
}

int main(int argc, char **argv)
{
	struct jpb_bundle *b;
	struct jprog *p;
	struct java_diag diag;
	if (argc != 2 || jpb_bundle_open(&b, argv[1])) {
		fprintf(stderr, "usage: decode_entrylocals BUNDLE\n");
		return 2;
	}
	if (jprog_alloc(&p) || jprog_load_bundle(p, b, &diag) < 0)
		die("cannot load the class files");
	read_meta(b);
	read_truth(b, p);
	unsigned long T = 0, D = 0, K = 0, U = 0, M = 0, n0 = 0, n1 = 0, nm = 0;
	int equal = 1;
	static unsigned long hall[MAXN], hsim[MAXN];
	for (size_t i = 0; i < nthr; i++) {
		struct thr *t = &thr[i];
		read_decoded(b, t);
		unsigned long known = 0, unmatched = 0;
		size_t j = 0; /* greedy: the earliest truth entry that fits */
		for (size_t k = 0; k < t->dec.n; k++) {
			if (!t->dec.v[k])
				continue;
			known++;
			while (j < t->truth.n && t->truth.v[j] != t->dec.v[k] - 1)
				j++;
			if (j == t->truth.n)
				unmatched++;
			else
				j++;
		}
		static unsigned long ht[MAXN], hd[MAXN];
		hist(&t->truth, 0, ht);
		hist(&t->dec, 1, hd);
		int eq = !memcmp(ht, hd, sizeof(ht));
		for (size_t k = 0; k < MAXN; k++)
			hall[k] += hd[k];
		for (size_t k = 0; k < t->truth.n; k++) {
			n0 += t->truth.v[k] == 0;
			n1 += t->truth.v[k] == 1;
			nm += t->truth.v[k] > 1;
		}
		if (!t->truth.n && !t->dec.n)
			continue;
		printf("tid %u truth=%zu decoded=%zu known=%lu unknown=%zu unmatched=%lu hist_equal=%d\n",
		       t->tid, t->truth.n, t->dec.n, known, t->dec.n - known, unmatched, eq);
		T += t->truth.n;
		D += t->dec.n;
		K += known;
		U += t->dec.n - known;
		M += unmatched;
		equal &= eq;
	}
	printf("total truth=%lu decoded=%lu known=%lu unknown=%lu unmatched=%lu hist_equal=%d "
	       "n0=%lu n1=%lu nmore=%lu\n", T, D, K, U, M, equal, n0, n1, nm);
	size_t E = sim_entries(b, hsim);
	if (E)
		printf("sim entries=%zu entries_hist_equal=%d\n", E,
		       !memcmp(hall, hsim, sizeof(hall)));
	jprog_free(p);
	jpb_bundle_free(b);
	return 0;
}
