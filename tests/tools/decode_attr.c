// SPDX-License-Identifier: MIT
/*
 * decode_attr REF TEST: how many of TEST's decoded events are on the same
 * thread as in REF, where REF and TEST are decodings of the same PT (e.g.
 * a simulated bundle synthesised with and without BPF clock jitter, which
 * changes only the sched stream's timestamps).  decode_check's walk of the
 * truth can derail after a misattributed slice; this counts each event
 * once: an event is (tid, cpu, tsc, kind, opcode/what, ip, frame 0), and
 * the score is the size of the multiset intersection of REF's and TEST's.
 *
 * Prints: attr ref=N test=M same=S unattributed=U pct=P
 * With DECODE_ATTR_PIECES set, lists every decoded_events record on stderr.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "records.h"
#include "records_decoded.h"

struct key {
	uint64_t tsc, ip, m;
	uint32_t tid, cpu;
	uint16_t what;
	uint8_t kind;
};

struct keys {
	struct key *k;
	size_t n, cap;
	size_t unattributed;
};

static void die(const char *a, const char *b)
{
	fprintf(stderr, "decode_attr: %s%s\n", a, b);
	exit(1);
}

static void add(struct keys *ks, const struct jpb_rec_decoded_events *r,
		const struct jpb_decoded_event *e)
{
	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? 2 * ks->cap : 4096;
		ks->k = realloc(ks->k, ks->cap * sizeof(*ks->k));
		if (!ks->k)
			die("out of memory", "");
	}
	struct key *k = &ks->k[ks->n++];
	memset(k, 0, sizeof(*k));
	k->tid = r->tid;
	k->cpu = r->cpu;
	k->tsc = e->tsc;
	k->kind = e->kind;
	k->what = e->kind == JPB_DEV_INTERP ? e->opcode : e->what;
	k->ip = e->ip;
	k->m = e->nframes ? e->frames[0].method_id << 16 ^ (uint32_t)e->frames[0].bci : 0;
	if (!r->tid)
		ks->unattributed++;
}

static void read_stream(struct jpb_bundle *b, const char *name, struct keys *ks)
{
	struct jpb_reader *r;
	if (jpb_reader_open(b, name, &r))
		die("cannot open ", name);
	struct jpb_record rec;
	static struct jpb_decoded_event e;
	while (!jpb_reader_next(r, &rec)) {
		if (rec.type != JPB_REC_DECODED_EVENTS)
			continue;
		struct jpb_rec_decoded_events d;
		if (jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &d))
			die("bad decoded_events in ", name);
		struct jpb_cur c = jpb_cur_init(d.events.ptr, d.events.len);
		uint64_t prev = d.first_tsc, first = UINT64_MAX, last = 0;
		while (!jpb_decoded_event_get(&c, &e, &prev))
			if (e.kind != JPB_DEV_GAP) {
				add(ks, &d, &e);
				first = first < e.tsc ? first : e.tsc;
				last = last > e.tsc ? last : e.tsc;
			}
		if (getenv("DECODE_ATTR_PIECES"))
			fprintf(stderr, "%s tid=%u cpu=%u seq=%" PRIu64 " count=%u tsc=%" PRIu64
				"..%" PRIu64 "\n", name, d.tid, d.cpu, d.seq, d.count,
				first, last);
	}
	jpb_reader_free(r);
}

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
	CMP(tid); CMP(cpu); CMP(tsc); CMP(kind); CMP(what); CMP(ip); CMP(m);
#undef CMP
	return 0;
}

static void load(const char *dir, struct keys *ks)
{
	struct jpb_bundle *b;
	if (jpb_bundle_open(&b, dir))
		die("cannot open bundle ", dir);
	const char *const *names;
	size_t n;
	if (jpb_bundle_list_streams(b, &names, &n))
		die("cannot list ", dir);
	for (size_t i = 0; i < n; i++)
		if (!strncmp(names[i], "decoded/tid", 11))
			read_stream(b, names[i], ks);
	jpb_bundle_free(b);
	qsort(ks->k, ks->n, sizeof(*ks->k), cmp_key);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: decode_attr REF_BUNDLE TEST_BUNDLE\n");
		return 2;
	}
	struct keys ref = { 0 }, test = { 0 };
	load(argv[1], &ref);
	load(argv[2], &test);
	size_t i = 0, j = 0, same = 0;
	while (i < ref.n && j < test.n) {
		int c = cmp_key(&ref.k[i], &test.k[j]);
		if (!c)
			same++;
		i += c <= 0;
		j += c >= 0;
	}
	printf("attr ref=%zu test=%zu same=%zu unattributed=%zu pct=%.3f\n", ref.n,
	       test.n, same, test.unattributed,
	       ref.n ? 100.0 * (double)same / (double)ref.n : 0.0);
	free(ref.k);
	free(test.k);
	return 0;
}
