// SPDX-License-Identifier: MIT
/*
 * Test helper for the agent suites: reads a bundle's "jvm" and "truth"
 * streams through the bundle library and checks or prints facts.
 * Compiled by tests/integration/agent_lib.sh at test time.
 *
 *   agent_check summary DIR        JSON facts, checks included
 *   agent_check classes DIR        class names, one a line
 *   agent_check class_flags DIR    "name flags" of each jvm_class
 *   agent_check truth_check DIR    JSON: the truth stream's contract
 *   agent_check blobs DIR          names of generated-code blobs
 *   agent_check missing DIR        signatures of classes without bytes
 *   agent_check method_code DIR    "records bytes" of jvm_method_code
 *   agent_check truth DIR CLASS METHOD
 *                                  each invocation of CLASS.METHOD on
 *                                  one line: "bci:opcode ..." (own frame
 *                                  only), exceptions as THROW@bci/CATCH@bci
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "records.h"
#include "records_jvm.h"
#include "records_truth.h"

#define MAXN 200000

struct span { uint64_t b, e; int32_t bc; };
static struct span codelets[4096];
static size_t ncodelets;
static uint64_t interp_b, interp_e;
static uint64_t methods[MAXN];
static char *method_names[MAXN];
static size_t nmethods;
static int print_inlines;
static uint64_t nm_count, bad_pcs, unresolved, inline_pcs, pcs_total, code_bytes;
static uint64_t coarse, classes, bad_classes, threads, blobs, retrans;
static uint64_t from_resource;
static uint64_t pauses, max_pause, pause_ns[100000], pause_items;
static int late_attach;
static char jdk[64];

struct pending { uint64_t id, addr, size; uint8_t *map; uint32_t len; };
static struct pending *nms;
static size_t nnms, capnms;

static int has_method(uint64_t id)
{
	for (size_t i = 0; i < nmethods; i++)
		if (methods[i] == id)
			return 1;
	return 0;
}

static const char *method_name(uint64_t id)
{
	for (size_t i = 0; i < nmethods; i++)
		if (methods[i] == id && method_names[i])
			return method_names[i];
	return "?";
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->b < y->b ? -1 : x->b > y->b;
}

static void on_jvm(const struct jpb_record *r)
{
	const struct jpb_rectype *t = jpb_rectype_find(r->type);
	union {
		struct jpb_rec_jvm_info info;
		struct jpb_rec_jvm_codelet c;
		struct jpb_rec_jvm_code_blob blob;
		struct jpb_rec_jvm_class cls;
		struct jpb_rec_jvm_method m;
		struct jpb_rec_jvm_nmethod_load nm;
		struct jpb_rec_jvm_pause p;
		struct jpb_rec_note note;
		struct jpb_rec_loss loss;
	} u;
	if (!t || jpb_rec_decode(t, r->payload, r->size, &u) != 0)
		return;
	switch (r->type) {
	case JPB_REC_JVM_INFO:
		late_attach = (int)u.info.late_attach;
		snprintf(jdk, sizeof(jdk), "%.*s", (int)u.info.jdk_version.len,
			 u.info.jdk_version.ptr);
		break;
	case JPB_REC_JVM_CODELET:
		if (ncodelets < 4096)
			codelets[ncodelets++] = (struct span){ u.c.begin, u.c.end,
							       u.c.bytecode };
		break;
	case JPB_REC_JVM_CODE_BLOB:
		if (u.blob.kind == JPB_BLOB_INTERPRETER) {
			interp_b = u.blob.start;
			interp_e = u.blob.start + u.blob.size;
		} else {
			blobs++;
		}
		break;
	case JPB_REC_JVM_CLASS:
		classes++;
		if (u.cls.flags & JPB_CLASS_F_RETRANSFORM)
			retrans++;
		if (u.cls.flags & JPB_CLASS_F_RESOURCE)
			from_resource++;
		if (u.cls.bytes.len < 10 ||
		    jpb_le32(u.cls.bytes.ptr) != 0xbebafecau ||
		    ((u.cls.bytes.ptr[6] << 8) | u.cls.bytes.ptr[7]) < 45)
			bad_classes++;
		break;
	case JPB_REC_JVM_METHOD:
		if (nmethods < MAXN) {
			char *nm = NULL;
			if (asprintf(&nm, "%.*s.%.*s", (int)u.m.class_sig.len,
				     u.m.class_sig.ptr, (int)u.m.name.len,
				     u.m.name.ptr) < 0)
				nm = NULL;
			method_names[nmethods] = nm;
			methods[nmethods++] = u.m.method_id;
		}
		break;
	case JPB_REC_JVM_NMETHOD_LOAD:
		nm_count++;
		code_bytes += u.nm.code_size;
		if (u.nm.flags & JPB_NM_F_COARSE)
			coarse++;
		if (nnms == capnms) {
			capnms = capnms ? capnms * 2 : 1024;
			nms = realloc(nms, capnms * sizeof(*nms));
		}
		nms[nnms].id = u.nm.method_id;
		nms[nnms].addr = u.nm.code_addr;
		nms[nnms].size = u.nm.code_size;
		nms[nnms].len = u.nm.pcmap.len;
		nms[nnms].map = malloc(u.nm.pcmap.len + 1);
		memcpy(nms[nnms].map, u.nm.pcmap.ptr, u.nm.pcmap.len);
		nnms++;
		break;
	case JPB_REC_JVM_PAUSE:
		if (pauses < 100000)
			pause_ns[pauses] = u.p.duration_ns;
		pauses++;
		pause_items += u.p.items;
		if (u.p.duration_ns > max_pause)
			max_pause = u.p.duration_ns;
		break;
	case JPB_REC_THREAD:
		threads++;
		break;
	case JPB_REC_LOSS:
		fprintf(stderr, "loss: %.*s %" PRIu64 "\n", (int)u.loss.what.len,
			u.loss.what.ptr, u.loss.count);
		break;
	case JPB_REC_NOTE:
		fprintf(stderr, "note: %.*s\n", (int)u.note.text.len,
			u.note.text.ptr);
		break;
	}
}

static void check_nmethods(void)
{
	for (size_t i = 0; i < nnms; i++) {
		struct pending *n = &nms[i];
		if (!has_method(n->id))
			unresolved++;
		struct jpb_cur c = jpb_cur_init(n->map, n->len);
		while (jpb_cur_left(&c)) {
			uint64_t pc, mid;
			uint32_t nf, bci;
			if (jpb_cur_u64(&c, &pc) || jpb_cur_u32(&c, &nf)) {
				bad_pcs++;
				break;
			}
			pcs_total++;
			if (pc < n->addr || pc > n->addr + n->size)
				bad_pcs++;
			if (nf > 1)
				inline_pcs++;
			for (uint32_t k = 0; k < nf; k++) {
				if (jpb_cur_u64(&c, &mid) || jpb_cur_u32(&c, &bci)) {
					bad_pcs++;
					break;
				}
				if (!has_method(mid))
					unresolved++;
				if (print_inlines && k == 0 && nf > 1)
					printf("%s inlines %s\n", method_name(n->id),
					       method_name(mid));
			}
		}
	}
}

static int read_stream(const char *dir, const char *name,
		       void (*fn)(const struct jpb_record *))
{
	struct jpb_bundle *b;
	struct jpb_reader *r;
	struct jpb_record rec;
	int err = jpb_bundle_open(&b, dir);
	if (err) {
		fprintf(stderr, "%s: %s\n", dir, jpb_errstr(err));
		return 1;
	}
	if ((err = jpb_reader_open(b, name, &r)) != 0) {
		fprintf(stderr, "%s/%s: %s\n", dir, name, jpb_errstr(err));
		jpb_bundle_free(b);
		return 1;
	}
	while ((err = jpb_reader_next(r, &rec)) == 0)
		fn(&rec);
	if (err != jpb_err_eos)
		fprintf(stderr, "%s\n", jpb_reader_errmsg(r));
	jpb_reader_free(r);
	jpb_bundle_free(b);
	/* A killed writer may leave a partial last record: the prefix
	 * counts, the damage is reported above. */
	return err == jpb_err_eos || err == jpb_err_truncated ? 0 : 1;
}

static int summary(const char *dir)
{
	if (read_stream(dir, "jvm", on_jvm))
		return 1;
	check_nmethods();
	qsort(codelets, ncodelets, sizeof(codelets[0]), cmp_span);
	uint64_t overlaps = 0, outside = 0, empty = 0, std_missing = 0;
	int covered[256] = { 0 };
	unsigned ncov = 0;
	for (size_t i = 0; i < ncodelets; i++) {
		struct span *s = &codelets[i];
		if (i && s->b < codelets[i - 1].e)
			overlaps++;
		if (s->b < interp_b || s->e > interp_e)
			outside++;
		if (s->e <= s->b)
			empty++;
		if (s->bc >= 0 && s->bc < 256 && !covered[s->bc]++)
			ncov++;
	}
	size_t np = pauses < 100000 ? pauses : 100000;
	qsort(pause_ns, np, sizeof(pause_ns[0]), cmp_u64);
	uint64_t median = np ? pause_ns[np / 2] : 0;
	for (int bc = 0; bc <= 201; bc++)
		std_missing += !covered[bc];
	printf("{\"std_missing\":%" PRIu64 ",\"jdk\":\"%s\",\"late_attach\":%d,\"codelets\":%zu,"
	       "\"bytecodes_covered\":%u,\"overlaps\":%" PRIu64
	       ",\"outside\":%" PRIu64 ",\"empty\":%" PRIu64
	       ",\"nmethods\":%" PRIu64 ",\"code_bytes\":%" PRIu64 ",\"pcs\":%" PRIu64
	       ",\"bad_pcs\":%" PRIu64 ",\"unresolved\":%" PRIu64
	       ",\"inline_pcs\":%" PRIu64 ",\"coarse\":%" PRIu64
	       ",\"classes\":%" PRIu64 ",\"bad_classes\":%" PRIu64
	       ",\"retransformed\":%" PRIu64 ",\"threads\":%" PRIu64
	       ",\"blobs\":%" PRIu64 ",\"pauses\":%" PRIu64
	       ",\"max_pause_ns\":%" PRIu64 ",\"median_pause_ns\":%" PRIu64
	       ",\"retransform_items\":%" PRIu64
	       ",\"from_resource\":%" PRIu64 "}\n",
	       std_missing, jdk, late_attach, ncodelets, ncov, overlaps, outside, empty,
	       nm_count, code_bytes, pcs_total, bad_pcs, unresolved, inline_pcs, coarse,
	       classes, bad_classes, retrans, threads, blobs, pauses,
	       max_pause, median, pause_items, from_resource);
	return 0;
}

static void on_class_name(const struct jpb_record *r)
{
	struct jpb_rec_jvm_class c;
	if (r->type != JPB_REC_JVM_CLASS ||
	    jpb_rec_decode(jpb_rectype_find(r->type), r->payload, r->size, &c))
		return;
	printf("%.*s\n", (int)c.name.len, c.name.ptr);
}

static void on_class_flags(const struct jpb_record *r)
{
	struct jpb_rec_jvm_class c;
	if (r->type != JPB_REC_JVM_CLASS ||
	    jpb_rec_decode(jpb_rectype_find(r->type), r->payload, r->size, &c))
		return;
	printf("%.*s %u\n", (int)c.name.len, c.name.ptr, c.flags);
}

static void on_missing(const struct jpb_record *r)
{
	struct jpb_rec_jvm_class_missing c;
	if (r->type != JPB_REC_JVM_CLASS_MISSING ||
	    jpb_rec_decode(jpb_rectype_find(r->type), r->payload, r->size, &c))
		return;
	printf("%.*s\n", (int)c.class_sig.len, c.class_sig.ptr);
}

static uint64_t mcode_records, mcode_bytes;

static void on_mcode(const struct jpb_record *r)
{
	struct jpb_rec_jvm_method_code c;
	if (r->type != JPB_REC_JVM_METHOD_CODE ||
	    jpb_rec_decode(jpb_rectype_find(r->type), r->payload, r->size, &c))
		return;
	mcode_records++;
	mcode_bytes += c.bytecode.len;
}

static void on_blob_name(const struct jpb_record *r)
{
	struct jpb_rec_jvm_code_blob b;
	if (r->type != JPB_REC_JVM_CODE_BLOB ||
	    jpb_rec_decode(jpb_rectype_find(r->type), r->payload, r->size, &b))
		return;
	printf("%.*s\n", (int)b.name.len, b.name.ptr);
}

/* truth_check: the stream's contract (records_truth.h). */
struct tm_info { uint32_t id; uint32_t len; uint8_t *code; };
static struct tm_info *tms;
static size_t ntms;
struct tseq { uint32_t nstid; uint64_t next; };
static struct tseq tseqs[4096];
static size_t ntseqs;
static uint64_t tc_bad_seq, tc_unknown, tc_bad_op, tc_bad_kind, tc_events;

static struct tm_info *tm_find(uint32_t id)
{
	/* ids are dense from 1 and written in order */
	return id >= 1 && id <= ntms && tms[id - 1].id == id ? &tms[id - 1] : NULL;
}

static void on_truth_check(const struct jpb_record *r)
{
	const struct jpb_rectype *t = jpb_rectype_find(r->type);
	if (r->type == JPB_REC_TRUTH_METHOD) {
		struct jpb_rec_truth_method m;
		if (jpb_rec_decode(t, r->payload, r->size, &m))
			return;
		tms = realloc(tms, (ntms + 1) * sizeof(*tms));
		tms[ntms].id = m.method_id;
		tms[ntms].len = m.bytecode.len;
		tms[ntms].code = malloc(m.bytecode.len + 1);
		memcpy(tms[ntms].code, m.bytecode.ptr, m.bytecode.len);
		ntms++;
		return;
	}
	if (r->type != JPB_REC_TRUTH_EVENTS)
		return;
	struct jpb_rec_truth_events e;
	if (jpb_rec_decode(t, r->payload, r->size, &e))
		return;
	size_t i;
	for (i = 0; i < ntseqs && tseqs[i].nstid != e.nstid; i++)
		;
	if (i == ntseqs && ntseqs < 4096)
		tseqs[ntseqs++] = (struct tseq){ e.nstid, 0 };
	if (e.seq != tseqs[i].next)
		tc_bad_seq++;
	tseqs[i].next = e.seq + e.events.len / JPB_TRUTH_EVENT_SIZE;
	for (uint32_t off = 0; off + 8 <= e.events.len; off += 8) {
		struct jpb_truth_event ev;
		jpb_truth_event_get(e.events.ptr + off, &ev);
		tc_events++;
		struct tm_info *m = tm_find(ev.method_id);
		if (!m) {
			tc_unknown++;
			continue;
		}
		if (ev.kind > JPB_TRUTH_CATCH)
			tc_bad_kind++;
		if (ev.kind == JPB_TRUTH_BYTECODE &&
		    (ev.bci >= m->len || m->code[ev.bci] != ev.opcode))
			tc_bad_op++;
	}
}

static int truth_check(const char *dir)
{
	if (read_stream(dir, "truth", on_truth_check))
		return 1;
	printf("{\"events\":%" PRIu64 ",\"threads\":%zu,\"methods\":%zu,"
	       "\"bad_seq\":%" PRIu64 ",\"unknown_method\":%" PRIu64
	       ",\"bad_opcode\":%" PRIu64 ",\"bad_kind\":%" PRIu64 "}\n",
	       tc_events, ntseqs, ntms, tc_bad_seq, tc_unknown, tc_bad_op,
	       tc_bad_kind);
	return 0;
}

/* truth: find the method id, then print each invocation. */
static const char *want_class, *want_name;
static uint32_t want_id;
static uint8_t *evs;
static size_t nevs, capevs;
static uint32_t ev_nstid;

static void on_truth(const struct jpb_record *r)
{
	const struct jpb_rectype *t = jpb_rectype_find(r->type);
	if (r->type == JPB_REC_TRUTH_METHOD) {
		struct jpb_rec_truth_method m;
		if (jpb_rec_decode(t, r->payload, r->size, &m))
			return;
		if (m.class_sig.len == strlen(want_class) &&
		    !memcmp(m.class_sig.ptr, want_class, m.class_sig.len) &&
		    m.name.len == strlen(want_name) &&
		    !memcmp(m.name.ptr, want_name, m.name.len))
			want_id = m.method_id;
	} else if (r->type == JPB_REC_TRUTH_EVENTS) {
		struct jpb_rec_truth_events e;
		if (jpb_rec_decode(t, r->payload, r->size, &e))
			return;
		/* Only the main thread's events (the first thread that runs
		 * the method); events of one thread arrive in seq order. */
		if (nevs + e.events.len > capevs) {
			capevs = (nevs + e.events.len) * 2;
			evs = realloc(evs, capevs);
		}
		memcpy(evs + nevs, e.events.ptr, e.events.len);
		nevs += e.events.len;
		/* keep thread ids interleaved: store per record marker */
		(void)ev_nstid;
	}
}

static int truth(const char *dir, const char *cls, const char *name)
{
	want_class = cls;
	want_name = name;
	if (read_stream(dir, "truth", on_truth))
		return 1;
	if (!want_id) {
		fprintf(stderr, "%s.%s not in truth stream\n", cls, name);
		return 1;
	}
	int depth = 0, open = 0;
	for (size_t off = 0; off + 8 <= nevs; off += 8) {
		struct jpb_truth_event ev;
		jpb_truth_event_get(evs + off, &ev);
		if (ev.method_id == want_id && ev.kind == JPB_TRUTH_ENTRY) {
			if (!open) {
				open = 1;
				depth = 0;
			} else {
				depth++;
			}
			continue;
		}
		if (!open || ev.method_id != want_id)
			continue;
		switch (ev.kind) {
		case JPB_TRUTH_BYTECODE:
			if (!depth)
				printf("%u:%u ", ev.bci, ev.opcode);
			break;
		case JPB_TRUTH_THROW:
			if (!depth)
				printf("THROW@%u ", ev.bci);
			break;
		case JPB_TRUTH_CATCH:
			if (!depth)
				printf("CATCH@%u ", ev.bci);
			break;
		case JPB_TRUTH_EXIT:
		case JPB_TRUTH_EXIT_EXC:
			if (depth) {
				depth--;
			} else {
				printf("%s\n", ev.kind == JPB_TRUTH_EXIT ? "EXIT"
									 : "EXIT_EXC");
				open = 0;
			}
			break;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "summary"))
		return summary(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "inlines")) {
		print_inlines = 1;
		if (read_stream(argv[2], "jvm", on_jvm))
			return 1;
		check_nmethods();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "blobs"))
		return read_stream(argv[2], "jvm", on_blob_name);
	if (argc == 3 && !strcmp(argv[1], "truth_check"))
		return truth_check(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "missing"))
		return read_stream(argv[2], "jvm", on_missing);
	if (argc == 3 && !strcmp(argv[1], "method_code")) {
		int rc = read_stream(argv[2], "jvm", on_mcode);
		printf("%" PRIu64 " %" PRIu64 "\n", mcode_records, mcode_bytes);
		return rc;
	}
	if (argc == 3 && !strcmp(argv[1], "classes"))
		return read_stream(argv[2], "jvm", on_class_name);
	if (argc == 3 && !strcmp(argv[1], "class_flags"))
		return read_stream(argv[2], "jvm", on_class_flags);
	if (argc == 5 && !strcmp(argv[1], "truth"))
		return truth(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: agent_check summary|classes DIR | truth DIR CLASS METHOD\n");
	return 2;
}
