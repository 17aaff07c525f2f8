// SPDX-License-Identifier: MIT
/*
 * decode_check BUNDLE: compares `jpbpf decode`'s output (decoded/tidN)
 * with the truth stream (which only tests may read).  Per thread, the
 * decoded bytecode events must be the truth's bytecodes in order:
 * interpreted events by opcode, compiled events by (method, bci) and their
 * inline frames by the truth's call stack.  The walk is a subsequence
 * match: truth events are skipped only after a gap (lost trace); a skip
 * without a gap, a mismatch or an event that matches nothing is counted.
 * A compiled event followed by the interpreter re-executing the same
 * bytecode (deoptimization) counts as `reexec`.
 *
 * Two kinds of bytecodes run but have no truth event, as JVMTI SingleStep
 * posts none for them (docs/RECONSTRUCTION.md, docs/SIMULATOR.md):
 * `fused`, a compiled event at the second instruction of a pair HotSpot's
 * interpreter fused (aload_0+getfield, iload+iload, iload+caload) right
 * after its first, where the truth's next bytecode is not that second one;
 * `restored`, a return the simulator put back where the truth lost it
 * (same-location step: a frame exited right after an invoke whose next
 * bytecode is a return at the location posted last).
 *
 * Prints one line per thread and a total line:
 *   total threads=N truth=T decoded=D matched=M skipped=S unexplained=U
 *         reexec=R fused=Q restored=P frames_bad=F gaps=G unattributed=X
 *         foreign=Y lost_skipped=L gap_missing=Z gap_bounds_bad=B
 * With sim/lost (the simulator's list of bytecodes in dropped trace), those
 * are skipped as lost_skipped (gap_missing if no gap record came first);
 * `skipped` then counts only truth that was neither decoded nor lost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "records.h"
#include "records_decoded.h"
#include "records_truth.h"
#include "java/bytecodes.h"

struct tev { uint32_t m; uint16_t bci; uint8_t op, kind; };

struct thr {
	uint32_t tid, nstid;
	struct tev *t;
	size_t n, cap;
	uint8_t *lost; /* per truth event: in trace the simulator dropped */
};

/* truth_method bytecode by method id (dense from 1) */
struct mcode { uint8_t *code; uint32_t len; };
static struct mcode *mcode;
static size_t nmcode;

static struct thr thr[4096];
static unsigned long gap_bounds_bad;
static size_t nthr;

static struct thr *by_nstid(uint32_t nstid)
{
	for (size_t i = 0; i < nthr; i++)
		if (thr[i].nstid == nstid)
			return &thr[i];
	if (nthr == 4096)
		exit(1);
	thr[nthr].nstid = nstid;
	return &thr[nthr++];
}

static void die(const char *what)
{
	fprintf(stderr, "decode_check: %s\n", what);
	exit(1);
}

static void read_method(const struct jpb_record *rec)
{
	struct jpb_rec_truth_method m;
	if (jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload, rec->size, &m))
		die("bad truth_method");
	if (m.method_id >= nmcode) {
		size_t n = (size_t)m.method_id * 2 + 16;
		mcode = realloc(mcode, n * sizeof(*mcode));
		if (!mcode)
			die("no memory for truth_method code");
		memset(mcode + nmcode, 0, (n - nmcode) * sizeof(*mcode));
		nmcode = n;
	}
	struct mcode *mc = &mcode[m.method_id];
	free(mc->code);
	mc->code = malloc(m.bytecode.len + 1);
	if (!mc->code)
		die("no memory for truth_method code");
	memcpy(mc->code, m.bytecode.ptr, m.bytecode.len);
	mc->len = m.bytecode.len;
}

/* The opcode at (M, BCI), -1 if the truth has no code there. */
static int op_at(uint32_t m, uint32_t bci)
{
	return m < nmcode && bci < mcode[m].len ? mcode[m].code[bci] : -1;
}

/* The bci after (M, BCI)'s instruction, -1 if unparsable. */
static long next_bci(uint32_t m, uint32_t bci)
{
	if (op_at(m, bci) < 0)
		return -1;
	int len = jbc_length(mcode[m].code, mcode[m].len, bci);
	return len > 0 ? (long)bci + len : -1;
}

static void read_truth(struct jpb_bundle *b)
{
	struct jpb_reader *r;
	if (jpb_reader_open(b, "truth", &r))
		die("no truth stream");
	struct jpb_record rec;
	while (!jpb_reader_next(r, &rec)) {
		if (rec.type == JPB_REC_TRUTH_METHOD) {
			read_method(&rec);
			continue;
		}
		if (rec.type != JPB_REC_TRUTH_EVENTS)
			continue;
		struct jpb_rec_truth_events e;
		if (jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &e))
			die("bad truth_events");
		struct thr *t = by_nstid(e.nstid);
		for (uint32_t k = 0; k + 8 <= e.events.len; k += 8) {
			struct jpb_truth_event te;
			jpb_truth_event_get(e.events.ptr + k, &te);
			if (t->n == t->cap) {
				t->cap = t->cap ? t->cap * 2 : 1024;
				t->t = realloc(t->t, t->cap * sizeof(*t->t));
			}
			t->t[t->n++] = (struct tev){ te.method_id, te.bci, te.opcode, te.kind };
		}
	}
	jpb_reader_free(r);
}

/* sim/lost (simulator bundles): u32 tid, u32 nstid, u64 first, u64 count */
static void read_lost(struct jpb_bundle *b)
{
	for (size_t i = 0; i < nthr; i++)
		thr[i].lost = calloc(thr[i].n + 1, 1);
	struct jpb_reader *r;
	if (jpb_reader_open(b, "sim/lost", &r))
		return;
	struct jpb_record rec;
	while (!jpb_reader_next(r, &rec)) {
		if (rec.size < 24)
			continue;
		struct thr *t = by_nstid(jpb_le32(rec.payload + 4));
		uint64_t first = jpb_le64(rec.payload + 8), n = jpb_le64(rec.payload + 16);
		for (uint64_t k = first; k < first + n && k < t->n; k++)
			t->lost[k] = 1;
	}
	jpb_reader_free(r);
}

/* host tid -> nstid from the sched stream's thread records */
static void read_threads(struct jpb_bundle *b)
{
	struct jpb_reader *r;
	if (jpb_reader_open(b, "sched", &r))
		return;
	struct jpb_record rec;
	/* as decode reads it: a damaged record must not hide the threads */
	jpb_reader_skip_damaged(r);
	while (!jpb_reader_next(r, &rec)) {
		if (rec.type != JPB_REC_THREAD)
			continue;
		struct jpb_rec_thread th;
		if (!jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &th))
			by_nstid(th.nstid)->tid = th.tid;
	}
	jpb_reader_free(r);
}

struct cmp {
	struct thr *t;
	size_t i; /* next truth event */
	struct { uint32_t m; int32_t bci; } stack[4096];
	int depth;
	int gap_since_match, prev_compiled;
	int64_t last_match; /* truth index */
	int64_t prev_match; /* truth index the previous decoded event matched, or -1 */
	int64_t last_bc;    /* truth index of the last bytecode walked past, or -1 */
	/* returns the truth lost to same-location steps (restored_return) */
	uint32_t lost_ret_m, lost_ret_bci, lost_rets;
	unsigned long matched, skipped, unexplained, reexec, fused, restored,
		frames_bad, gaps, decoded, lost_skipped, gap_missing;
};

/* JVMTI posts no SingleStep at the location it posted last (HotSpot
 * compares with the thread's last location): when the top frame exits
 * standing at an invoke whose next bytecode is a return at exactly that
 * location (its callee, the same method, returned there), the truth lost
 * the frame's return, which ran; the simulator runs it too
 * (docs/SIMULATOR.md, same-location steps). */
static void note_lost_return(struct cmp *c)
{
	if (c->depth <= 0 || c->last_bc < 0)
		return;
	const struct tev *last = &c->t->t[c->last_bc];
	uint32_t m = c->stack[c->depth - 1].m;
	int32_t bci = c->stack[c->depth - 1].bci;
	int op = op_at(m, (uint32_t)bci);
	long next = next_bci(m, (uint32_t)bci);
	if (op < 0 || !jbc_is_invoke(jbc_info((uint8_t)op)->kind) || last->m != m ||
	    next != last->bci || op_at(m, last->bci) < 0 ||
	    jbc_info((uint8_t)op_at(m, last->bci))->kind != JBC_RETURN)
		return;
	if (!c->lost_rets || c->lost_ret_m != m || c->lost_ret_bci != last->bci)
		c->lost_rets = 0;
	c->lost_ret_m = m;
	c->lost_ret_bci = last->bci;
	c->lost_rets++;
}

/* Advance the truth over non-bytecode events, keeping the call stack. */
static void step_meta(struct cmp *c)
{
	while (c->i < c->t->n && c->t->t[c->i].kind != JPB_TRUTH_BYTECODE) {
		const struct tev *e = &c->t->t[c->i++];
		if (e->kind == JPB_TRUTH_ENTRY && c->depth < 4096) {
			c->stack[c->depth].m = e->m;
			c->stack[c->depth++].bci = 0;
		} else if ((e->kind == JPB_TRUTH_EXIT || e->kind == JPB_TRUTH_EXIT_EXC) &&
			   c->depth > 0) {
			if (e->kind == JPB_TRUTH_EXIT)
				note_lost_return(c);
			c->depth--;
		}
	}
}

static int matches(const struct tev *t, const struct jpb_decoded_event *e)
{
	if (e->kind == JPB_DEV_INTERP)
		return t->op == e->opcode;
	return e->nframes && t->m == e->frames[0].method_id &&
	       t->bci == e->frames[0].bci;
}

static void check_frames(struct cmp *c, const struct jpb_decoded_event *e)
{
	for (uint32_t k = 1; k < e->nframes; k++) {
		int d = c->depth - 1 - (int)k;
		if (d < 0 || c->stack[d].m != e->frames[k].method_id ||
		    c->stack[d].bci != e->frames[k].bci) {
			c->frames_bad++;
			return;
		}
	}
}

/* Walk the truth up to index k (a bytecode), keeping stack and bcis. */
static void advance_to(struct cmp *c, size_t k)
{
	for (;;) {
		step_meta(c);
		if (c->i >= c->t->n)
			return;
		const struct tev *t = &c->t->t[c->i];
		if (c->depth > 0)
			c->stack[c->depth - 1].bci = t->bci;
		if (c->i == k)
			return;
		c->last_bc = (int64_t)c->i++;
		c->skipped++;
	}
}

/* E is a return the truth lost to a same-location step (note_lost_return). */
static int restored_return(struct cmp *c, const struct jpb_decoded_event *e)
{
	if (!c->lost_rets)
		return 0;
	int ok = e->kind == JPB_DEV_INTERP
		 ? e->opcode == op_at(c->lost_ret_m, c->lost_ret_bci)
		 : e->nframes && e->frames[0].method_id == c->lost_ret_m &&
			   e->frames[0].bci == (int32_t)c->lost_ret_bci;
	c->lost_rets -= (uint32_t)ok;
	return ok;
}

/* E is compiled code's run of the second instruction of a pair whose
 * first the previous decoded event matched at truth index PREV, and the
 * truth's next bytecode is not that second one: HotSpot's interpreter
 * fused the pair (fast_Xaccess_0, fast_iload2, fast_icaload) into one
 * dispatch, and SingleStep posted only its first.  The first never
 * branches nor throws, so nothing else skips the second. */
static int fused_second(const struct cmp *c, const struct jpb_decoded_event *e,
			int64_t prev)
{
	if (e->kind != JPB_DEV_COMPILED || !e->nframes || prev < 0)
		return 0;
	const struct tev *f = &c->t->t[prev];
	if (e->frames[0].method_id != f->m || next_bci(f->m, f->bci) != e->frames[0].bci)
		return 0;
	int op = op_at(f->m, f->bci), next = op_at(f->m, e->frames[0].bci);
	return op >= 0 && next >= 0 && jbc_fused_pair((uint8_t)op, (uint8_t)next);
}

static void on_event(struct cmp *c, const struct jpb_decoded_event *e)
{
	c->decoded++;
	step_meta(c);
	int was_compiled = c->prev_compiled;
	c->prev_compiled = e->kind == JPB_DEV_COMPILED;
	int64_t prev = c->prev_match;
	c->prev_match = -1;
	/* both next to the last match: after a gap, the lost truth explains */
	if (!c->gap_since_match && !(c->i < c->t->n && matches(&c->t->t[c->i], e))) {
		if (restored_return(c, e)) {
			c->restored++;
			return;
		}
		if (fused_second(c, e, prev)) {
			check_frames(c, e);
			c->fused++;
			return;
		}
	}
	size_t l0 = c->i;
	while (l0 < c->t->n && l0 < c->i + 4 && !c->t->lost[l0])
		l0++; /* a boundary event or two may be lost without being listed */
	if (l0 < c->t->n && c->t->lost[l0] && c->gap_since_match) {
		/* after a gap: the whole lost run first */
		size_t k = l0;
		while (k < c->t->n && (c->t->t[k].kind != JPB_TRUTH_BYTECODE || c->t->lost[k]))
			k++;
		/* the run's last events may have been decoded in part */
		size_t j = k > c->i + 8 ? k - 8 : c->i;
		while (j < k && !(c->t->t[j].kind == JPB_TRUTH_BYTECODE &&
				  matches(&c->t->t[j], e)))
			j++;
		k = j;
		if (k < c->t->n && matches(&c->t->t[k], e)) {
			size_t before = c->skipped;
			advance_to(c, k);
			c->lost_skipped += c->skipped - before;
			c->skipped = before;
			goto match;
		}
	}
	if (c->i < c->t->n && matches(&c->t->t[c->i], e))
		goto match;
	if (was_compiled && e->kind == JPB_DEV_INTERP && c->last_match >= 0 &&
	    matches(&c->t->t[c->last_match], e)) {
		if (getenv("DC_DEBUG"))
			fprintf(stderr, "reexec: tid %u #%lu op %u at truth %zu\n", c->t->tid,
				c->decoded, e->opcode, c->i);
		c->reexec++;
		return;
	}
	/* events the simulator dropped: skipped, but only after a gap */
	size_t k = c->i;
	while (k < c->t->n && (c->t->t[k].kind != JPB_TRUTH_BYTECODE || c->t->lost[k]) &&
	       !(c->t->t[k].kind == JPB_TRUTH_BYTECODE && matches(&c->t->t[k], e)))
		k++;
	if (k > c->i && k < c->t->n && c->t->t[k].kind == JPB_TRUTH_BYTECODE &&
	    matches(&c->t->t[k], e)) {
		size_t before = c->skipped;
		advance_to(c, k);
		c->lost_skipped += c->skipped - before;
		c->skipped = before;
		if (!c->gap_since_match) {
			c->gap_missing++;
			if (getenv("DC_DEBUG"))
				fprintf(stderr, "gap missing: tid %u truth %zu..%zu decoded #%lu\n",
					c->t->tid, c->i, k, c->decoded);
		}
		goto match;
	}
	k = c->i;
	while (k < c->t->n && !(c->t->t[k].kind == JPB_TRUTH_BYTECODE &&
				matches(&c->t->t[k], e)))
		k++;
	if (getenv("DC_DEBUG") && c->unexplained < 10)
		fprintf(stderr, "unexpected tid %u #%lu kind %u op %u m %llu bci %d at truth %zu "
			"(m %u bci %u op %u)\n", c->t->tid, c->decoded, e->kind, e->opcode,
			(unsigned long long)(e->nframes ? e->frames[0].method_id : 0),
			e->nframes ? e->frames[0].bci : -1, c->i,
			c->i < c->t->n ? c->t->t[c->i].m : 0,
			c->i < c->t->n ? c->t->t[c->i].bci : 0,
			c->i < c->t->n ? c->t->t[c->i].op : 0);
	if (k >= c->t->n) {
		c->unexplained++; /* matches nothing ahead: invented */
		return;
	}
	if (!c->gap_since_match)
		c->unexplained++;
	advance_to(c, k);
match:
	if (c->depth > 0)
		c->stack[c->depth - 1].bci = c->t->t[c->i].bci;
	if (e->kind == JPB_DEV_COMPILED)
		check_frames(c, e);
	c->last_match = c->prev_match = c->last_bc = (int64_t)c->i;
	c->lost_rets = 0;
	c->i++;
	c->matched++;
	c->gap_since_match = 0;
}

static unsigned long count_bytecodes(const struct thr *t)
{
	unsigned long n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += t->t[i].kind == JPB_TRUTH_BYTECODE;
	return n;
}

/* Events of decoded/tidN; returns the number of bytecode events. */
static unsigned long walk_stream(struct jpb_bundle *b, uint32_t tid, struct cmp *c)
{
	char name[64];
	snprintf(name, sizeof(name), "decoded/tid%u", tid);
	struct jpb_reader *r;
	if (jpb_reader_open(b, name, &r))
		return 0;
	unsigned long n = 0;
	struct jpb_record rec;
	static struct jpb_decoded_event e;
	uint64_t last_tsc = 0, gap_end = 0;
	while (!jpb_reader_next(r, &rec)) {
		if (rec.type == JPB_REC_DECODED_GAP) {
			if (c && getenv("DC_DEBUG"))
				fprintf(stderr, "gap record: tid %u after decoded #%lu truth %zu\n",
					tid, c->decoded, c->i);
			struct jpb_rec_decoded_gap g;
			if (jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &g))
				die("bad decoded_gap");
			/* no event inside a gap: the one before it ends by its
			 * start, the one after it starts at its end or later */
			if (g.first_tsc > g.last_tsc || last_tsc > g.first_tsc) {
				gap_bounds_bad++;
				if (getenv("DC_DEBUG"))
					fprintf(stderr, "gap bounds: tid %u gap %llu..%llu after an event at %llu\n",
						tid, (unsigned long long)g.first_tsc,
						(unsigned long long)g.last_tsc, (unsigned long long)last_tsc);
			}
			gap_end = g.last_tsc;
			if (c) {
				c->gaps++;
				c->gap_since_match = 1;
			}
			continue;
		}
		if (rec.type != JPB_REC_DECODED_EVENTS)
			continue;
		struct jpb_rec_decoded_events ev;
		if (jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &ev))
			die("bad decoded_events");
		struct jpb_cur cur = jpb_cur_init(ev.events.ptr, ev.events.len);
		uint64_t prev = ev.first_tsc;
		int rc;
		while ((rc = jpb_decoded_event_get(&cur, &e, &prev)) == 0) {
			if (getenv("DC_DUMP"))
				fprintf(stderr, "ev %u k%u op%u what%u ip %llx m %llu bci %d tsc %llu\n",
					tid, e.kind, e.opcode, e.what,
					/* an interpreted event has none: the field is the last one's */
					e.kind == JPB_DEV_INTERP ? 0ull : (unsigned long long)e.ip,
					(unsigned long long)(e.nframes ? e.frames[0].method_id : 0),
					e.nframes ? e.frames[0].bci : -1, (unsigned long long)e.tsc);
			if (e.tsc < gap_end) {
				gap_bounds_bad++;
				if (getenv("DC_DEBUG"))
					fprintf(stderr, "gap bounds: tid %u event at %llu before its gap's end %llu\n",
						tid, (unsigned long long)e.tsc, (unsigned long long)gap_end);
			}
			gap_end = 0;
			last_tsc = e.tsc;
			if (e.kind != JPB_DEV_INTERP && e.kind != JPB_DEV_COMPILED)
				continue;
			n++;
			if (c)
				on_event(c, &e);
		}
		if (rc != jpb_err_eos)
			die("bad packed event");
	}
	jpb_reader_free(r);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: decode_check BUNDLE");
	struct jpb_bundle *b;
	if (jpb_bundle_open(&b, argv[1]))
		die("cannot open bundle");
	read_truth(b);
	read_threads(b);
	read_lost(b);
	unsigned long tot[11] = { 0 }, truth_total = 0;
	static struct cmp c;
	for (size_t i = 0; i < nthr; i++) {
		memset(&c, 0, sizeof(c));
		c.t = &thr[i];
		c.last_match = c.prev_match = c.last_bc = -1;
		unsigned long nb = count_bytecodes(&thr[i]);
		truth_total += nb;
		walk_stream(b, thr[i].tid, &c);
		/* truth left after the last decoded event */
		unsigned long rest = 0;
		for (size_t k = c.i; k < c.t->n; k++) {
			if (c.t->t[k].kind != JPB_TRUTH_BYTECODE)
				continue;
			if (c.t->lost[k])
				c.lost_skipped++;
			else
				rest++;
		}
		c.skipped += rest;
		if (rest && !c.gap_since_match)
			c.unexplained++;
		printf("tid=%u nstid=%u truth=%lu decoded=%lu matched=%lu skipped=%lu "
		       "unexplained=%lu reexec=%lu fused=%lu restored=%lu frames_bad=%lu "
		       "gaps=%lu lost_skipped=%lu gap_missing=%lu\n",
		       thr[i].tid, thr[i].nstid, nb, c.decoded, c.matched, c.skipped,
		       c.unexplained, c.reexec, c.fused, c.restored, c.frames_bad, c.gaps,
		       c.lost_skipped, c.gap_missing);
		unsigned long v[] = { c.decoded, c.matched, c.skipped, c.unexplained,
				      c.reexec, c.frames_bad, c.gaps, c.lost_skipped,
				      c.gap_missing, c.fused, c.restored };
		for (int k = 0; k < 11; k++)
			tot[k] += v[k];
	}
	unsigned long unattr = walk_stream(b, 0, NULL);
	/* events in decoded/tidN for a tid the truth does not know */
	unsigned long foreign = 0;
	const char *const *names;
	size_t count;
	if (!jpb_bundle_list_streams(b, &names, &count))
		for (size_t i = 0; i < count; i++) {
			unsigned tid;
			if (sscanf(names[i], "decoded/tid%u", &tid) != 1 || !tid)
				continue;
			int known = 0;
			for (size_t k = 0; k < nthr; k++)
				known |= thr[k].tid == tid;
			if (!known)
				foreign += walk_stream(b, tid, NULL);
		}
	printf("total threads=%zu truth=%lu decoded=%lu matched=%lu skipped=%lu "
	       "unexplained=%lu reexec=%lu fused=%lu restored=%lu frames_bad=%lu "
	       "gaps=%lu unattributed=%lu foreign=%lu lost_skipped=%lu gap_missing=%lu "
	       "gap_bounds_bad=%lu\n",
	       nthr, truth_total, tot[0], tot[1], tot[2], tot[3], tot[4], tot[9],
	       tot[10], tot[5], tot[6], unattr, foreign, tot[7], tot[8], gap_bounds_bad);
	jpb_bundle_free(b);
	return 0;
}
