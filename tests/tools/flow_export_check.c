// SPDX-License-Identifier: MIT
/*
 * Checks `report --format flow` and `--format summary` exports against a
 * simulated bundle's ground truth (stream truth).
 *
 *   flow_export_check seq DIR FLOW.jsonl [MAX_UNALIGNED]
 *       FLOW.jsonl is `report --format flow --full --json`.  Per thread,
 *       its placed events (decoded, certain, chosen) are aligned with the
 *       truth's bytecode events (eval_align); the decoded and certain
 *       ones must all be aligned, and every branch
 *       direction an aligned event shows must be the truth's (the next
 *       truth event of the method).  Times must not decrease.
 *       MAX_UNALIGNED (default 0) tolerates that many unaligned events
 *       (reconstruction errors, which eval measures), not wrong branches.
 *   flow_export_check coverage DIR SUMMARY.json [PREFIX [MAX_DIFF]]
 *       SUMMARY.json is `report --format summary --json`; every method's
 *       (or every method whose name starts with PREFIX) `covered` must
 *       equal the number of distinct bcis the truth ran; MAX_DIFF
 *       (default 0) tolerates that many bcis of difference in all.
 * Prints one line per thread/method that differs and a final verdict;
 * exit 0 on match, 1 on mismatch, 2 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bundle.h"
#include "codec.h"
#include "eval/eval.h"
#include "export/model/threads.h"
#include "java/bytecodes.h"
#include "records.h"
#include "records_truth.h"

struct names { /* interned method names; key = index + 1 */
	char **v;
	size_t n, cap;
};

static uint32_t intern(struct names *nm, const char *s)
{
	for (size_t i = nm->n; i-- > 0;) /* recent names first: few hundred */
		if (!strcmp(nm->v[i], s))
			return (uint32_t)i + 1;
	if (JPB_GROW(nm->v, nm->n, nm->cap))
		exit(2);
	nm->v[nm->n++] = strdup(s);
	return (uint32_t)nm->n;
}

/* (key, bci) of the second instruction of a pair HotSpot may run as one
 * dispatch (aload_0 + getfield, iload + iload, iload + caload): JVMTI
 * single-stepping cannot report it, so the truth may lack an event the
 * flow has there (the same rule as eval's "unjudged"). */
static uint64_t *fused;
static size_t nfused, capfused;

static void add_fused(uint32_t key, struct jpb_bytes code)
{
	int prev = -1;
	for (size_t bci = 0; bci < code.len;) {
		int len = jbc_length(code.ptr, code.len, bci);
		if (len <= 0)
			break;
		uint8_t op = code.ptr[bci];
		if (((prev == 0x2a && op == 0xb4) ||
		     (prev == 0x15 && (op == 0x15 || op == 0x34))) &&
		    !JPB_GROW(fused, nfused, capfused))
			fused[nfused++] = (uint64_t)key << 32 | bci;
		prev = op;
		bci += (size_t)len;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int is_fused(uint64_t v)
{
	return nfused && bsearch(&v, fused, nfused, sizeof(v), cmp_u64);
}

struct seq {
	uint32_t tid;
	uint64_t *v;
	size_t n, cap;
	int *branch; /* flow only: 0 none, 1 taken, 2 not taken, | SURE */
	size_t capb;
	uint64_t last_t;
	int backwards;
};

/* decoded or certain: must align (chosen events only give context) */
#define SURE 4

struct seqs {
	struct seq *v;
	size_t n, cap;
};

static struct seq *seq_for(struct seqs *s, uint32_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].tid == tid)
			return &s->v[i];
	if (JPB_GROW(s->v, s->n, s->cap))
		exit(2);
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	s->v[s->n].tid = tid;
	return &s->v[s->n++];
}

static void seq_add(struct seq *s, uint64_t v, int branch)
{
	if (JPB_GROW(s->v, s->n, s->cap) || JPB_GROW(s->branch, s->n, s->capb))
		exit(2);
	s->branch[s->n] = branch;
	s->v[s->n++] = v;
}

static void names_free(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
}

static void seqs_free(struct seqs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].v);
		free(s->v[i].branch);
	}
	free(s->v);
}

static char *method_name(struct jpb_str cls, struct jpb_str name,
			 struct jpb_str sig)
{
	static char buf[4096];
	const char *c = cls.ptr;
	uint32_t n = cls.len;
	if (n >= 2 && c[0] == 'L' && c[n - 1] == ';') {
		c++;
		n -= 2;
	}
	snprintf(buf, sizeof(buf), "%.*s.%.*s%.*s", (int)n, c, (int)name.len,
		 name.ptr, (int)sig.len, sig.ptr);
	for (char *p = buf; p < buf + n; p++)
		if (*p == '/')
			*p = '.';
	return buf;
}

/* The truth's bytecode events per host tid, as (name key, bci). */
static void load_truth(struct jpb_bundle *b, struct names *nm, struct seqs *out)
{
	struct xthreads *th;
	struct jpb_reader *r;
	struct jpb_record rec;
	uint32_t *key = NULL;
	size_t nkey = 0, capkey = 0;
	if (xthreads_load(b, &th) || jpb_reader_open(b, "truth", &r)) {
		fprintf(stderr, "flow_export_check: %s: no truth\n", jpb_bundle_dir(b));
		exit(2);
	}
	while (jpb_reader_next(r, &rec) == 0) {
		const struct jpb_rectype *t = jpb_rectype_find(rec.type);
		if (rec.type == JPB_REC_TRUTH_METHOD) {
			struct jpb_rec_truth_method m;
			if (jpb_rec_decode(t, rec.payload, rec.size, &m))
				continue;
			while (nkey <= m.method_id) {
				if (JPB_GROW(key, nkey, capkey))
					exit(2);
				key[nkey++] = 0;
			}
			key[m.method_id] = intern(nm, method_name(m.class_sig, m.name,
								 m.signature));
			add_fused(key[m.method_id], m.bytecode);
			continue;
		}
		struct jpb_rec_truth_events e;
		if (rec.type != JPB_REC_TRUTH_EVENTS ||
		    jpb_rec_decode(t, rec.payload, rec.size, &e))
			continue;
		uint32_t tid = e.tid;
		for (size_t i = 0; !tid && i < xthreads_count(th); i++)
			if (xthreads_at(th, i)->nstid == e.nstid)
				tid = xthreads_at(th, i)->tid;
		struct seq *s = seq_for(out, tid);
		for (uint32_t o = 0; o + JPB_TRUTH_EVENT_SIZE <= e.events.len;
		     o += JPB_TRUTH_EVENT_SIZE) {
			struct jpb_truth_event te;
			jpb_truth_event_get(e.events.ptr + o, &te);
			if (te.kind == JPB_TRUTH_BYTECODE)
				seq_add(s, (uint64_t)(te.method_id < nkey ?
					key[te.method_id] : 0) << 32 | te.bci, 0);
		}
	}
	jpb_reader_free(r);
	xthreads_free(th);
	free(key);
	if (nfused)
		qsort(fused, nfused, sizeof(*fused), cmp_u64);
}

/* The export's placed events per tid, decoded and certain ones SURE. */
static void load_flow(const char *path, struct names *nm, struct seqs *out,
		      size_t *lines)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	if (!f) {
		perror(path);
		exit(2);
	}
	*lines = 0;
	while (getline(&line, &cap, f) > 0) {
		json_error_t je;
		json_t *j = json_loads(line, 0, &je);
		if (!j) {
			fprintf(stderr, "%s:%zu: not JSON: %s\n", path, *lines + 1, je.text);
			exit(1);
		}
		(*lines)++;
		const char *st = json_string_value(json_object_get(j, "status"));
		const char *m = json_string_value(json_object_get(j, "method"));
		const char *br = json_string_value(json_object_get(j, "branch"));
		struct seq *s = seq_for(out, (uint32_t)json_integer_value(
						     json_object_get(j, "tid")));
		uint64_t t = (uint64_t)json_integer_value(json_object_get(j, "t"));
		s->backwards += t < s->last_t;
		s->last_t = t;
		uint64_t v = m ? (uint64_t)intern(nm, m) << 32 |
			(uint32_t)json_integer_value(json_object_get(j, "bci")) : 0;
		int sure = st && (!strcmp(st, "decoded") || !strcmp(st, "certain"));
		if (st && m && (sure || !strcmp(st, "chosen")))
			seq_add(s, v, (sure ? SURE : 0) |
				(!br ? 0 : !strcmp(br, "taken") ? 1 :
				 !strcmp(br, "not_taken") ? 2 : 0));
		json_decref(j);
	}
	free(line);
	fclose(f);
}

/* Directions of F's aligned branches against the truth's next event. */
static void branches(const struct seq *t, const struct seq *f,
		     const size_t *t_of_f, uint64_t *checked, uint64_t *wrong)
{
	for (size_t i = 0; i < f->n; i++) {
		size_t k = t_of_f[i];
		int br = f->branch[i] & 3;
		if (!(f->branch[i] & SURE) || !br || k == SIZE_MAX || k + 1 >= t->n ||
		    t->v[k + 1] >> 32 != t->v[k] >> 32)
			continue;
		int fall = (t->v[k + 1] & 0xffffffffu) == (t->v[k] & 0xffffffffu) + 3;
		(*checked)++;
		*wrong += br != (fall ? 2 : 1);
	}
}

static int check_seq(struct jpb_bundle *b, const char *path, uint64_t tolerance)
{
	struct names nm = { 0 };
	struct seqs t = { 0 }, f = { 0 };
	size_t lines;
	uint64_t checked = 0, wrong = 0, unaligned = 0;
	int bad = 0;
	load_truth(b, &nm, &t);
	load_flow(path, &nm, &f, &lines);
	for (size_t i = 0; i < f.n; i++) {
		struct seq *fs = &f.v[i], *ts = seq_for(&t, fs->tid);
		size_t *t_of_f = malloc((fs->n + 1) * sizeof(*t_of_f));
		uint8_t *hit = calloc(fs->n + 1, 1);
		uint64_t a = 0, nsure = 0, unjudged = 0;
		eval_align(ts->v, ts->n, fs->v, fs->n, hit);
		for (size_t k = 0, shown = 0; k < fs->n; k++) {
			if (!(fs->branch[k] & SURE))
				continue;
			nsure++;
			a += hit[k] != 0;
			if (hit[k])
				continue;
			if (is_fused(fs->v[k])) {
				unjudged++;
				continue;
			}
			if (shown++ < 5)
				printf("# unaligned: event %zu %s @%u\n", k,
				       nm.v[(fs->v[k] >> 32) - 1],
				       (unsigned)(fs->v[k] & 0xffffffffu));
		}
		/* branch directions: from the truth index of each aligned
		 * event, found by walking both sequences in step */
		for (size_t k = 0, j = 0; k < fs->n; k++) {
			if (!hit[k]) {
				t_of_f[k] = SIZE_MAX;
				continue;
			}
			while (j < ts->n && ts->v[j] != fs->v[k])
				j++;
			t_of_f[k] = j < ts->n ? j++ : SIZE_MAX;
		}
		free(hit);
		branches(ts, fs, t_of_f, &checked, &wrong);
		printf("thread %u: truth %zu, decoded+certain %zu, aligned %llu, "
		       "unjudged (fused dispatch) %llu, time going back %d\n",
		       fs->tid, ts->n, (size_t)nsure, (unsigned long long)a,
		       (unsigned long long)unjudged, fs->backwards);
		unaligned += nsure - a - unjudged;
		bad |= fs->backwards || (fs->n && !ts->n);
		free(t_of_f);
	}
	bad = bad || wrong || !f.n || unaligned > tolerance;
	printf("seq: %zu lines, %zu threads, %llu unaligned (%llu tolerated), "
	       "%llu branch directions checked, %llu wrong: %s\n", lines, f.n,
	       (unsigned long long)unaligned, (unsigned long long)tolerance,
	       (unsigned long long)checked, (unsigned long long)wrong,
	       bad ? "MISMATCH" : "match");
	seqs_free(&t);
	seqs_free(&f);
	names_free(&nm);
	free(fused);
	return bad;
}

static int check_coverage(struct jpb_bundle *b, const char *path,
			  const char *prefix, uint64_t tolerance)
{
	struct names nm = { 0 };
	struct seqs t = { 0 };
	json_error_t je;
	json_t *s = json_load_file(path, 0, &je);
	if (!s) {
		fprintf(stderr, "%s: %s\n", path, je.text);
		return 2;
	}
	load_truth(b, &nm, &t);
	size_t total = 0, at = 0;
	for (size_t i = 0; i < t.n; i++)
		total += t.v[i].n;
	uint64_t *all = malloc((total + 1) * sizeof(*all));
	for (size_t i = 0; i < t.n; i++, at += t.v[i - 1].n)
		memcpy(all + at, t.v[i].v, t.v[i].n * sizeof(*all));
	qsort(all, total, sizeof(*all), cmp_u64);
	/* distinct bcis per method key */
	size_t nkeys = nm.n;
	uint64_t *cov = calloc(nkeys + 1, sizeof(*cov));
	for (size_t i = 0; i < total; i++)
		if (i == 0 || all[i] != all[i - 1])
			cov[all[i] >> 32]++;
	size_t i, n = 0, diff = 0;
	uint64_t bcis = 0;
	json_t *m;
	json_array_foreach(json_object_get(json_object_get(s, "coverage"), "methods"), i, m) {
		const char *name = json_string_value(json_object_get(m, "method"));
		if (!name || strncmp(name, prefix, strlen(prefix)))
			continue;
		uint32_t k = intern(&nm, name);
		uint64_t want = k <= nkeys ? cov[k] : 0;
		uint64_t got = (uint64_t)json_integer_value(json_object_get(m, "covered"));
		n++;
		bcis += want > got ? want - got : got - want;
		if (want != got && diff++ < 10)
			printf("differs: %s: covered %llu, truth %llu\n", nm.v[k - 1],
			       (unsigned long long)got, (unsigned long long)want);
	}
	int bad = bcis > tolerance || !n;
	printf("coverage: %zu methods, %zu differ by %llu bcis (%llu tolerated): %s\n",
	       n, diff, (unsigned long long)bcis, (unsigned long long)tolerance,
	       bad ? "MISMATCH" : "match");
	free(all);
	free(cov);
	json_decref(s);
	seqs_free(&t);
	names_free(&nm);
	free(fused);
	return bad;
}

int main(int argc, char **argv)
{
	struct jpb_bundle *b;
	if (argc < 4 || argc > 6 || (argc == 6 && argv[1][0] == 's') ||
	    (strcmp(argv[1], "seq") && strcmp(argv[1], "coverage"))) {
		fprintf(stderr, "usage: flow_export_check seq DIR FILE [MAX_UNALIGNED]\n"
			"       flow_export_check coverage DIR FILE [PREFIX [MAX_DIFF]]\n");
		return 2;
	}
	if (jpb_bundle_open(&b, argv[2])) {
		fprintf(stderr, "%s: not a bundle\n", argv[2]);
		return 2;
	}
	int rc = argv[1][0] == 's' ?
		check_seq(b, argv[3], argc == 5 ? strtoull(argv[4], NULL, 10) : 0) :
		check_coverage(b, argv[3], argc >= 5 ? argv[4] : "",
			       argc == 6 ? strtoull(argv[5], NULL, 10) : 0);
	jpb_bundle_free(b);
	return rc;
}
