// SPDX-License-Identifier: MIT
/*
 * One chunk of a PT stream (stream.c splits streams at PSBs): libipt's
 * block decoder with each block classified into events, written to the
 * worker's spill file as pieces (one thread's consecutive events on this
 * CPU).  A chunk's decoder syncs one PSB early and decodes silently up to
 * its start: the state that crosses a PSB is rebuilt, not passed on, so
 * chunks decode in any order on any worker with the same result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "decode_int.h"

/* The pc map entries [k, m) inside a block of compiled code, by block: a
 * loop runs the same few blocks again and again (direct-mapped). */
struct span {
	const struct jpd_nmethod *nm; /* NULL: empty slot */
	uint64_t ip, end_ip;
	uint32_t k, m;
};

#define SPAN_SLOTS 1024u

/* A transition's encoded tail, by (what, ip, arg): most transitions enter
 * the same methods, codelets and stubs again and again (direct-mapped). */
struct trtail {
	uint64_t ip, arg;
	uint8_t what, len; /* len 0: empty slot */
	uint8_t tail[22];
};

#define TR_SLOTS 256u

/* What a block in the interpreter starting at ip is: a bytecode's
 * dispatch entry, or the entry of a codelet without bytecode (its
 * transition's tail), or neither (direct-mapped: the dispatch hash and
 * the codelet search once per ip). */
struct iblock {
	uint64_t ip;
	const struct jpd_dispatch *d;
	const struct jpd_codelet *loop; /* an entry with a locals loop */
	uint8_t valid, trlen;
	uint8_t tr[22];
};

/* A zerolocals method entry held back while its locals loop runs: the
 * blocks holding the loop's jcc are counted, and the event goes out with
 * entry_locals = count + 1 (its time and place unchanged) once a block
 * runs past the jcc, or with 0 (not known) if anything else comes first
 * (DECODER.md, "Entry locals"). */
struct held_entry {
	const struct jpd_codelet *c; /* NULL: none held */
	uint64_t tsc;
	uint32_t count;
	uint8_t trlen;
	uint8_t tr[22]; /* its tail with entry_locals 0 */
};

#define IB_SLOTS 512u

struct sdec {
	struct jpd_ctx *ctx;
	struct jpd_worker *w;
	struct pt_image_section_cache *iscache; /* this worker's */
	struct jpd_stream *st;
	struct jpd_chunk *c;
	const struct jpd_run *rn;
	/* counts: the chunk's, or a sink while decoding silently */
	struct jpd_counts *n, sink;
	/* silent until the first item past `begin', done at the first
	 * past `end' (offsets in the gathered bytes) */
	int silent, done;
	uint64_t begin, end;
	uint64_t base; /* where the decoder's buffer starts */
	uint64_t dropped; /* PT pages before this are let go */
	/* switches of this CPU and the tracing gaps they are placed in */
	const struct jpd_switch *sw;
	size_t nsw;
	/* decoding state */
	struct pt_block_decoder *dec;
	size_t nm_added;
	uint64_t now, last_tsc;
	struct jpd_attr_state a; /* a.tid: the thread running now */
	int fixed_tid; /* per-thread ring: no switches */
	int by_time;   /* JPD_ATTR_TIME: cut at switch times, not gaps */
	int prev_isid;
	int gap_open;
	uint32_t gap_tid;  /* the thread running when the trace was lost */
	uint64_t gap_item; /* offset of the item that opened the gap */
	/* an async disable at a bytecode's first instruction reports that
	 * bytecode; the enable at the same ip must not report it again */
	uint64_t skip_ip;
	int skip_armed;
	const struct jpd_nmethod *last_nm;
	/* libipt may cut a straight run of instructions in two (its block
	 * cache); a codelet's vtos entry running into its own cached-TOS entry
	 * is then one dispatch, not two: the previous block's opcode (if it
	 * began at a dispatch entry, else -1) and its end */
	int prev_op, prev_iclass;
	uint64_t prev_end;
	struct jpb_decoded_event gap;
	/* the open piece */
	struct jpd_piece *piece;
	uint64_t piece_prev_tsc;
	struct span spans[SPAN_SLOTS];
	struct trtail trs[TR_SLOTS];
	struct iblock ibs[IB_SLOTS];
	struct jpb_buf scratch; /* a transition's tail, encoded */
	struct held_entry held;
};

static int flush_held(struct sdec *s, int complete);

/* ---- pieces and events ------------------------------------------- */

static int flush_out(struct sdec *s)
{
	struct jpd_worker *w = s->w;
	if (!w->out.len)
		return 0;
	if (fwrite(w->out.data, 1, w->out.len, w->spill) != w->out.len) {
		snprintf(s->c->err, sizeof(s->c->err), "decode: spill file %.200s: %s",
			 w->spillpath, strerror(errno));
		return jpd_errno_code(errno);
	}
	w->spill_pos += w->out.len;
	jpb_buf_reset(&w->out);
	return 0;
}

static uint64_t spill_now(const struct sdec *s)
{
	return s->w->spill_pos + s->w->out.len;
}

static void close_piece(struct sdec *s)
{
	struct jpd_piece *p = s->piece;
	if (!p)
		return;
	/* counted per piece on the hot path, per chunk here */
	s->n->events += p->events;
	s->n->interp += p->interp;
	s->n->compiled += p->compiled;
	s->n->transitions += p->transitions;
	if (!p->tid)
		s->n->unattributed += p->events;
	s->piece->len = spill_now(s) - s->piece->off;
	if (!s->piece->len)
		s->c->npieces--; /* nothing in it */
	s->piece = NULL;
}

/* A piece starting at TSC, unless one is open. */
static int open_piece(struct sdec *s, uint64_t tsc)
{
	struct jpd_chunk *c = s->c;
	if (s->piece)
		return 0;
	if (JPB_GROW(c->pieces, c->npieces, c->cap))
		return jpb_err_nomem;
	s->piece = &c->pieces[c->npieces];
	memset(s->piece, 0, sizeof(*s->piece));
	s->piece->tid = s->a.tid;
	s->piece->cpu = s->st->cpu;
	s->piece->first_tsc = tsc;
	s->piece->ordinal = (uint64_t)c->index << 32 | c->npieces++;
	s->piece->spill = s->w->id;
	s->piece->off = spill_now(s);
	s->piece_prev_tsc = 0;
	return 0;
}

/* An event is written at TSC: a held method entry goes first (its count
 * not known: the event ends the entry's codelet), in an open piece. */
static int open_piece_for_event(struct sdec *s, uint64_t tsc)
{
	int rc = s->held.c ? flush_held(s, 0) : 0;
	return rc ? rc : open_piece(s, tsc);
}

static void count_gap(struct sdec *s, const struct jpb_decoded_event *e)
{
	struct jpd_piece *p = s->piece;
	p->gaps++;
	s->n->gaps++;
	if (e->what < 8)
		s->n->gaps_by_cause[e->what]++;
	p->has_gap = 1;
	p->gap_cause = e->what;
	p->gap_error = -(int32_t)e->arg;
	p->gap_first = e->tsc;
	p->gap_last = e->end_tsc;
	p->gap_offset = e->ip;
}

/* After an event: pieces stay small enough to be one decoded_events
 * record each. */
static int event_written(struct sdec *s)
{
	if (s->piece && spill_now(s) - s->piece->off >= (256u << 10))
		close_piece(s);
	return s->w->out.len >= (1u << 20) ? flush_out(s) : 0;
}

/* A gap event (every other event comes through emit_tail). */
static int emit_gap(struct sdec *s, const struct jpb_decoded_event *e)
{
	if (s->silent)
		return 0;
	int rc = open_piece_for_event(s, e->tsc);
	if (rc)
		return rc;
	if (jpb_decoded_event_put(&s->w->out, e, &s->piece_prev_tsc))
		return jpb_err_nomem;
	count_gap(s, e);
	close_piece(s); /* the merge writes its gap record after it */
	return event_written(s);
}

/* Apply the switches due: placed at or before the last gap passed, or
 * (the time baseline) stamped at or before the decoder's time.  A new
 * thread opens a new piece. */
static int apply_switches(struct sdec *s)
{
	if (s->fixed_tid)
		return 0;
	uint32_t old = s->a.tid;
	uint64_t n = 0;
	jpd_attr_apply(s->st, &s->a, s->by_time, s->now, &n);
	s->n->switches += n;
	if (n && s->held.c) {
		/* the held entry was the thread's that left */
		uint32_t next = s->a.tid;
		s->a.tid = old;
		int rc = flush_held(s, 0);
		s->a.tid = next;
		if (rc)
			return rc;
	}
	/* Out and back in: the thread may have run on another CPU meanwhile,
	 * so its next events are a new piece (merged by time). */
	if (n)
		close_piece(s);
	if (s->a.tid != old)
		s->skip_armed = 0; /* the bytecode reported was another thread's */
	return 0;
}

static uint64_t dec_offset(const struct sdec *s)
{
	uint64_t off = 0;
	pt_blk_get_offset(s->dec, &off);
	return s->base + off;
}

static int open_gap(struct sdec *s, uint8_t cause, int err, uint64_t offset)
{
	if (s->gap_open)
		return 0; /* one gap until trace resumes */
	/* an entry held across lost trace: its loop's count is not known */
	int rc = s->held.c ? flush_held(s, 0) : 0;
	s->gap_open = 1;
	s->gap_tid = s->a.tid;
	s->gap_item = dec_offset(s);
	s->gap.kind = JPB_DEV_GAP;
	s->gap.what = cause;
	s->gap.tsc = s->last_tsc;
	s->gap.end_tsc = s->last_tsc;
	s->gap.ip = offset;
	s->gap.arg = (uint64_t)(err < 0 ? -err : err);
	return rc;
}

/* Emit the gap E as TID's. */
static int emit_gap_of(struct sdec *s, uint32_t tid, const struct jpb_decoded_event *e)
{
	if (tid == s->a.tid)
		return emit_gap(s, e);
	uint32_t cur = s->a.tid;
	close_piece(s);
	s->a.tid = tid;
	int rc = emit_gap(s, e);
	close_piece(s);
	s->a.tid = cur;
	return rc;
}

/* The gap ends where trace resumes: the time known there.  It belongs to
 * the thread that lost it (HERE: it ran when the loss began); if the CPU
 * changed threads meanwhile, each thread it ran lost trace, from its
 * arrival to its departure: one gap per stay, so that none covers what the
 * thread ran on another CPU in between.  FIRST: the first switch stamped
 * in the loss. */
static int gap_for(struct sdec *s, uint32_t tid, int here, size_t first, uint32_t *given,
		   size_t *ngiven)
{
	for (size_t i = 0; i < *ngiven; i++)
		if (given[i] == tid)
			return 0;
	if (*ngiven < 64)
		given[(*ngiven)++] = tid;
	struct jpb_decoded_event e = s->gap;
	int rc = 0, stays = 0;
	for (size_t i = first; !rc && i < s->nsw && s->sw[i].tsc <= s->gap.end_tsc; i++) {
		const struct jpd_switch *w = &s->sw[i];
		if (w->prev_tid == tid && w->next_tid != tid) {
			if (!here) /* here from the start, not known so */
				e.tsc = stays ? e.end_tsc : s->gap.tsc;
			e.end_tsc = w->tsc > e.tsc ? w->tsc : e.tsc;
			rc = emit_gap_of(s, tid, &e);
			stays++;
			here = 0;
		} else if (w->next_tid == tid && !here) {
			e.tsc = w->tsc > s->gap.tsc ? w->tsc : s->gap.tsc;
			here = 1;
		}
	}
	if (rc || (!here && stays))
		return rc;
	if (!here)
		e.tsc = s->gap.tsc;
	e.end_tsc = s->gap.end_tsc > e.tsc ? s->gap.end_tsc : e.tsc;
	return emit_gap_of(s, tid, &e);
}

/* The task that a switch applied since FROM brought back from another
 * CPU in the overflow just closed (jpd_sched_overflow), or NULL. */
static const struct jpd_switch *late_return(const struct sdec *s, size_t from)
{
	const struct jpd_switch *w = s->a.swpos > from ? &s->sw[s->a.swpos - 1] : NULL;
	return w && w->late && w->next_tid == s->a.tid ? w : NULL;
}

/* libipt's time may still be the one before the loss, but the trace resumed
 * after the task came back, and it lost what it ran from then on: that
 * gap and its next events go after what it ran elsewhere. */
static int gap_at_return(struct sdec *s, uint64_t back)
{
	if (back > s->now)
		s->now = back;
	struct jpb_decoded_event g = s->gap;
	g.tsc = back;
	g.end_tsc = s->now;
	return emit_gap(s, &g);
}

static int close_gap(struct sdec *s)
{
	if (!s->gap_open)
		return 0;
	s->gap_open = 0;
	s->gap.end_tsc = s->now > s->gap.tsc ? s->now : s->gap.tsc;
	/* counted where reported: a chunk may open a gap the next reports */
	if (!s->silent && (s->gap.what == JPB_GAP_DECODE_ERROR ||
			   s->gap.what == JPB_GAP_STREAM_END))
		s->n->errors++;
	size_t first = jpd_switch_at(s->sw, s->nsw, s->gap.tsc);
	uint32_t given[64];
	size_t ngiven = 0;
	/* at a run's start, the switches in the hole before it were applied
	 * after it opened (by time, with no gaps walked, none was known) */
	int rc = gap_for(s, s->by_time ? s->a.tid : s->gap_tid, 1, first, given, &ngiven);
	/* Every thread the scheduler ran here during the loss lost trace. */
	for (size_t i = first; !rc && i < s->nsw && s->sw[i].tsc <= s->gap.end_tsc; i++)
		if (s->sw[i].next_tid)
			rc = gap_for(s, s->sw[i].next_tid, 0, first, given, &ngiven);
	size_t from = s->a.swpos;
	if (!rc)
		rc = apply_switches(s);
	const struct jpd_switch *late =
		!rc && s->gap.what == JPB_GAP_OVERFLOW ? late_return(s, from) : NULL;
	if (late)
		return gap_at_return(s, late->tsc);
	return rc ? rc : gap_for(s, s->a.tid, 0, first, given, &ngiven);
}

static void update_time(struct sdec *s)
{
	uint64_t tsc = 0;
	uint32_t lost_mtc, lost_cyc;
	/* Switches do not apply here but at the PGE that ends their gap:
	 * libipt may read the TSC before it while still reporting the
	 * disable. */
	if (pt_blk_time(s->dec, &tsc, &lost_mtc, &lost_cyc) >= 0 && tsc > s->now)
		s->now = tsc;
}

/* Map compiled code loaded by now; reused addresses switch to the new
 * code at its switch time (libipt shrinks or splits the older section). */
static int map_nmethods(struct sdec *s)
{
	const struct jpd_image *im = &s->ctx->img;
	struct pt_image *image = pt_blk_get_image(s->dec);
	while (s->nm_added < im->nnm) {
		const struct jpd_nmethod *nm = &im->nm[s->nm_added];
		if (nm->reuse && nm->switch_tsc > s->now)
			break;
		if (nm->isid > 0 &&
		    pt_image_add_cached(image, s->iscache, nm->isid, NULL) < 0)
			return jpb_err_internal;
		s->nm_added++;
	}
	return 0;
}

/* An event (KIND) from its pre-encoded tail, at TSC: the hot path,
 * without building a jpb_decoded_event. */
static int emit_tail_at(struct sdec *s, uint8_t kind, uint64_t tsc,
			const uint8_t *tail, size_t len)
{
	if (s->silent)
		return 0;
	int rc = open_piece_for_event(s, tsc);
	if (rc)
		return rc;
	if (jpb_decoded_event_put_tail(&s->w->out, kind, tsc, &s->piece_prev_tsc,
				       tail, len))
		return jpb_err_nomem;
	struct jpd_piece *p = s->piece;
	p->events++;
	if (kind == JPB_DEV_COMPILED)
		p->compiled++;
	else if (kind == JPB_DEV_INTERP)
		p->interp++;
	else
		p->transitions++;
	return event_written(s);
}

static int emit_tail(struct sdec *s, uint8_t kind, const uint8_t *tail, size_t len)
{
	return emit_tail_at(s, kind, s->now, tail, len);
}

/* The held entry goes out: with its count if its loop was seen to end
 * (COMPLETE), else as not known. */
static int flush_held(struct sdec *s, int complete)
{
	struct held_entry h = s->held;
	s->held.c = NULL;
	uint32_t locals = complete ? h.count + 1 : 0;
	if (locals < 0x80) {
		/* entry_locals is the tail's last byte, a one-byte LEB128 */
		h.tr[h.trlen - 1] = (uint8_t)locals;
		return emit_tail_at(s, JPB_DEV_TRANSITION, h.tsc, h.tr, h.trlen);
	}
	struct jpb_decoded_event e = { .kind = JPB_DEV_TRANSITION,
				       .what = JPB_TR_METHOD_ENTRY, .ip = h.c->begin,
				       .arg = h.c->index, .entry_locals = locals };
	jpb_buf_reset(&s->scratch);
	if (jpb_decoded_event_tail(&s->scratch, &e))
		return jpb_err_nomem;
	return emit_tail_at(s, JPB_DEV_TRANSITION, h.tsc, s->scratch.data, s->scratch.len);
}

static const struct trtail *trtail(struct sdec *s, uint8_t what, uint64_t ip,
				   uint64_t arg)
{
	uint64_t h = (ip ^ (arg << 5) ^ what) * 0x9e3779b97f4a7c15ull;
	struct trtail *t = &s->trs[(h >> 40) & (TR_SLOTS - 1)];
	if (t->len && t->ip == ip && t->arg == arg && t->what == what)
		return t;
	struct jpb_decoded_event e = { .kind = JPB_DEV_TRANSITION, .what = what,
				       .ip = ip, .arg = arg };
	jpb_buf_reset(&s->scratch);
	if (jpb_decoded_event_tail(&s->scratch, &e) ||
	    s->scratch.len > sizeof(t->tail))
		return NULL;
	*t = (struct trtail){ ip, arg, what, (uint8_t)s->scratch.len, { 0 } };
	memcpy(t->tail, s->scratch.data, t->len);
	return t;
}

static int transition(struct sdec *s, uint8_t what, uint64_t ip, uint64_t arg)
{
	if (s->silent)
		return 0;
	const struct trtail *t = trtail(s, what, ip, arg);
	if (!t)
		return jpb_err_nomem;
	return emit_tail(s, JPB_DEV_TRANSITION, t->tail, t->len);
}

/* A compiled event: its pc's bytes were encoded with the image. */
static int emit_compiled(struct sdec *s, const struct jpd_nmethod *nm, uint32_t k)
{
	uint32_t a = nm->tail_off[k], b = nm->tail_off[k + 1] - 2;
	return emit_tail(s, JPB_DEV_COMPILED, nm->tails + a, b - a);
}

/* The compiled events of pcs [K, M) of NM, all at the current time: the
 * image encoded each tail followed by the next event's kind and zero
 * delta, so they are one copy.  One by one where the piece would fill up
 * inside them: pieces end after the same event as ever. */
static int emit_compiled_run(struct sdec *s, const struct jpd_nmethod *nm,
			     uint32_t k, uint32_t m)
{
	if (s->silent || k == m)
		return 0;
	int rc = open_piece_for_event(s, s->now);
	if (rc)
		return rc;
	uint32_t a = nm->tail_off[k], len = nm->tail_off[m] - 2 - a;
	struct jpd_piece *p = s->piece;
	if (spill_now(s) - p->off + 11 + len >= (256u << 10)) {
		for (; !rc && k < m; k++)
			rc = emit_compiled(s, nm, k);
		return rc;
	}
	if (jpb_decoded_event_put_tail(&s->w->out, JPB_DEV_COMPILED, s->now,
				       &s->piece_prev_tsc, nm->tails + a, len))
		return jpb_err_nomem;
	p->events += m - k;
	p->compiled += m - k;
	return event_written(s);
}

/* An interpreted bytecode: opcode and TOS state. */
static int emit_interp(struct sdec *s, const struct jpd_dispatch *d)
{
	const uint8_t tail[2] = { d->opcode, d->tos };
	return emit_tail(s, JPB_DEV_INTERP, tail, sizeof(tail));
}

static const struct span *nm_span(struct sdec *s, const struct jpd_nmethod *nm,
				  const struct pt_block *b)
{
	uint64_t h = (b->ip ^ (b->end_ip << 7)) * 0x9e3779b97f4a7c15ull;
	struct span *e = &s->spans[(h >> 40) & (SPAN_SLOTS - 1)];
	if (e->nm == nm && e->ip == b->ip && e->end_ip == b->end_ip)
		return e;
	uint32_t k = jpd_pc_lower(nm, b->ip), m = k;
	while (m < nm->npcs && nm->pcs[m].pc <= b->end_ip)
		m++;
	*e = (struct span){ nm, b->ip, b->end_ip, k, m };
	return e;
}

static const struct iblock *iblock(struct sdec *s, uint64_t ip)
{
	struct iblock *e = &s->ibs[((ip * 0x9e3779b97f4a7c15ull) >> 40) & (IB_SLOTS - 1)];
	if (e->valid && e->ip == ip)
		return e;
	const struct jpd_image *im = &s->ctx->img;
	const struct jpd_dispatch *d = jpd_find_dispatch(im, ip);
	const struct jpd_codelet *c = d ? NULL : jpd_find_codelet(im, ip);
	const struct trtail *t = NULL;
	if (c && c->begin == ip && c->bytecode < 0 &&
	    !(t = trtail(s, c->what, ip, c->index)))
		return NULL;
	*e = (struct iblock){ ip, d, NULL, 1, t ? t->len : 0, { 0 } };
	if (t && c->what == JPB_TR_METHOD_ENTRY && c->loop_jcc)
		e->loop = c;
	if (t)
		memcpy(e->tr, t->tail, t->len);
	return e;
}

/* A block of the held entry's codelet: its loop's jcc ran once more if the
 * block holds it (libipt ends a block at every conditional branch, and the
 * block after a cut starts where the cut one stopped, so each execution of
 * the jcc is in one block: DECODER.md); past the jcc, the loop is over. */
static int held_block(struct sdec *s, const struct pt_block *b)
{
	uint64_t jcc = s->held.c->loop_jcc;
	if (b->ip <= jcc && jcc <= b->end_ip)
		s->held.count++;
	return b->end_ip > jcc ? flush_held(s, 1) : 0;
}

/* An interpreter block at an entry with a locals loop: its event waits
 * for the loop's count. */
static int hold_entry(struct sdec *s, const struct iblock *ib, const struct pt_block *b)
{
	if (s->silent)
		return 0;
	s->held.c = ib->loop;
	s->held.tsc = s->now;
	s->held.count = 0;
	s->held.trlen = ib->trlen;
	memcpy(s->held.tr, ib->tr, ib->trlen);
	return held_block(s, b);
}

static int on_nmethod_block(struct sdec *s, const struct jpd_nmethod *nm,
			    const struct pt_block *b)
{
	int rc = 0;
	if (b->ip == nm->begin)
		rc = transition(s, JPB_TR_NMETHOD_ENTRY, b->ip, nm->method_id);
	const struct span *sp = nm_span(s, nm, b);
	return rc ? rc : emit_compiled_run(s, nm, sp->k, sp->m);
}

/* Whether D, the dispatch entry at IP, is one the previous block (its
 * opcode, end and class) ran straight into: the same bytecode. */
static int same_dispatch(const struct jpd_dispatch *d, int prev_op, uint64_t prev_end,
			 int prev_iclass, uint64_t ip)
{
	int straight = prev_iclass == ptic_other || prev_iclass == ptic_error;
	return d && d->opcode == prev_op && prev_end < ip && ip - prev_end <= 15 &&
	       straight;
}

static int classify(struct sdec *s, const struct pt_block *b)
{
	if (s->skip_armed) {
		s->skip_armed = 0;
		if (b->ip == s->skip_ip) {
			const struct jpd_dispatch *d = jpd_find_dispatch(&s->ctx->img, b->ip);
			if (d) { /* ... which may fall into its next TOS entry */
				s->prev_op = d->opcode;
				s->prev_end = b->ip;
				s->prev_iclass = b->ip == b->end_ip ? b->iclass : ptic_other;
			}
			if (b->ip == b->end_ip)
				return 0;
			struct pt_block rest = *b;
			rest.ip = b->ip + 1; /* past the reported entry */
			return classify(s, &rest);
		}
	}
	const struct jpd_image *im = &s->ctx->img;
	const struct jpd_sect *sec =
		b->isid > 0 && (size_t)b->isid < im->nsects ? &im->sects[b->isid] : NULL;
	int prev = s->prev_isid, rc = 0;
	if (s->held.c) {
		const struct jpd_codelet *c = s->held.c;
		if (sec && sec->kind == SK_INTERP && b->ip > c->begin && b->ip < c->end)
			rc = held_block(s, b);
		else
			rc = flush_held(s, 0);
		if (rc)
			return rc;
	}
	int prev_op = s->prev_op, prev_iclass = s->prev_iclass;
	uint64_t prev_end = s->prev_end;
	s->prev_iclass = b->iclass;
	s->prev_isid = b->isid;
	s->prev_op = -1;
	s->prev_end = b->end_ip;
	switch (sec ? sec->kind : SK_NONE) {
	case SK_INTERP: {
		const struct iblock *ib = iblock(s, b->ip);
		const struct jpd_dispatch *d = ib ? ib->d : NULL;
		if (!ib)
			return jpb_err_nomem;
		if (same_dispatch(d, prev_op, prev_end, prev_iclass, b->ip)) {
			s->prev_op = prev_op;
			return 0;
		}
		if (d) {
			s->prev_op = d->opcode;
			return emit_interp(s, d);
		}
		if (ib->loop)
			return hold_entry(s, ib, b);
		return ib->trlen ? emit_tail(s, JPB_DEV_TRANSITION, ib->tr, ib->trlen) : 0;
	}
	case SK_STUB:
		if (prev != b->isid || b->ip == sec->begin)
			rc = transition(s, JPB_TR_STUB, b->ip, sec->index);
		return rc;
	case SK_NMETHOD:
		s->last_nm = &im->nm[sec->index];
		return on_nmethod_block(s, s->last_nm, b);
	default:
		if (prev != b->isid || !sec)
			rc = prev == b->isid ? 0 : transition(s, JPB_TR_UNKNOWN, b->ip, 0);
		return rc;
	}
}

/* Whether a context switch is placed in the tracing gap that starts now:
 * the one after the last gap passed (by name, not by time: a disable may
 * share its TSC with the enable before it). */
static int switch_follows(const struct sdec *s)
{
	const struct jpd_stream *st = s->st;
	if (s->a.swpos >= s->nsw || s->by_time) /* time: no gaps to tell */
		return 0;
	const struct jpd_switch *w = &s->sw[s->a.swpos];
	size_t g = s->a.gaps_seen ? jpd_gap_lower(st, s->a.gap_tsc) + s->a.gap_k + 1 : 0;
	if (g >= st->ngaps)
		return 0;
	uint32_t k = jpd_gap_rank(st->en, g);
	return w->apply_tsc < st->en[g] || (w->apply_tsc == st->en[g] && w->apply_k <= k);
}

/* The compiled code at IP: the last compiled block's, unless the thread
 * came from elsewhere (another CPU, the interpreter, a stub) and stopped
 * before it ran a block here.  A fault there resumes in its handler, so
 * the disable is the only place that bytecode is seen. */
static const struct jpd_nmethod *nmethod_at(const struct sdec *s, uint64_t ip)
{
	const struct jpd_nmethod *nm = s->last_nm;
	if (nm && ip >= nm->begin && ip < nm->end)
		return nm;
	return jpd_find_nmethod(&s->ctx->img, ip, s->nm_added);
}

/* The instruction at AT did not complete (interrupt, fault, switch).  If
 * it starts a bytecode, that bytecode began: report it now, since a fault
 * never resumes there. */
static int async_disabled(struct sdec *s, uint64_t at, int prev_op)
{
	/* interrupted again before it ran a block: reported once */
	if (s->skip_armed && s->skip_ip == at)
		return transition(s, JPB_TR_ASYNC_DISABLED, at, 0);
	s->skip_armed = 0; /* an older report, its resume ran no block */
	const struct jpd_image *im = &s->ctx->img;
	const struct jpd_dispatch *d = jpd_find_dispatch(im, at);
	int rc = 0;
	if (switch_follows(s)) /* resumes here or on another CPU: it is */
		d = NULL;      /* reported when it runs */
	else if (same_dispatch(d, prev_op, s->prev_end, s->prev_iclass, at))
		s->skip_armed = 1; /* reported at the codelet's first entry */
	else if (d) {
		rc = emit_interp(s, d);
		s->skip_armed = 1;
	} else if ((s->last_nm = nmethod_at(s, at))) {
		uint32_t k = jpd_pc_lower(s->last_nm, at);
		if (k < s->last_nm->npcs && s->last_nm->pcs[k].pc == at) {
			struct pt_block b = { .ip = at, .end_ip = at };
			rc = on_nmethod_block(s, s->last_nm, &b);
			s->skip_armed = 1;
		}
	}
	s->skip_ip = at;
	return rc ? rc : transition(s, JPB_TR_ASYNC_DISABLED, at, 0);
}

static int on_event(struct sdec *s, const struct pt_event *ev)
{
	/* PSB+ (cbr, exec_mode, ...) may cut a block; only a change of
	 * flow ends a straight run */
	int prev_op = s->prev_op;
	if (ev->type <= ptev_overflow)
		s->prev_op = -1;
	update_time(s);
	uint64_t evt = ev->has_tsc ? ev->tsc : s->now;
	switch (ev->type) {
	case ptev_enabled: {
		jpd_attr_gap(&s->a, evt);
		close_gap(s);
		int rc = apply_switches(s);
		s->prev_isid = -1;
		/* traced at this time: a loss right after it starts no earlier */
		s->last_tsc = s->now;
		return rc ? rc : transition(s, JPB_TR_ENABLED, ev->variant.enabled.ip, 0);
	}
	case ptev_disabled:
		return transition(s, JPB_TR_DISABLED, ev->variant.disabled.ip, 0);
	case ptev_async_disabled:
		return async_disabled(s, ev->variant.async_disabled.at, prev_op);
	case ptev_overflow:
		jpd_attr_gap(&s->a, evt);
		s->prev_isid = -1;
		return open_gap(s, JPB_GAP_OVERFLOW, 0, dec_offset(s));
	default:
		return 0;
	}
}

/* Each item (event, block, error) belongs to the chunk whose range holds
 * the decoder's offset when libipt hands it over; the chunk before and the
 * chunk after see the same items there (both decoders synced at a PSB
 * before it), so the cut is the same in both.  Returns 1 past the end. */
static int past_end(struct sdec *s)
{
	if (!s->silent && s->end == UINT64_MAX)
		return 0;
	uint64_t off = dec_offset(s);
	if (s->silent && off > s->begin) {
		s->silent = 0;
		s->n = &s->c->n;
	}
	if (!s->silent && off > s->end)
		s->done = 1;
	return s->done;
}

static int drain_events(struct sdec *s, int status)
{
	while (status > 0 && (status & pts_event_pending)) {
		struct pt_event ev;
		status = pt_blk_event(s->dec, &ev, sizeof(ev));
		if (status < 0)
			return status;
		if (past_end(s))
			return -pte_eos;
		int rc = on_event(s, &ev);
		if (rc)
			return -1000 + rc; /* below any -pte_* */
	}
	return status;
}

static int on_block(struct sdec *s, const struct pt_block *b)
{
	update_time(s);
	if (s->gap_open)
		close_gap(s);
	int rc = s->by_time ? apply_switches(s) : 0;
	if (rc)
		return rc;
	s->n->blocks++;
	rc = classify(s, b);
	s->last_tsc = s->now;
	return rc;
}

/* A decode error: a gap until the next PSB.  Returns 0 to go on with
 * *STATUS from the resync, 1 to stop (no PSB ahead, or no progress). */
static int resync(struct sdec *s, int *status)
{
	uint64_t off = 0, prev_sync = 0, sync = 0;
	pt_blk_get_offset(s->dec, &off);
	pt_blk_get_sync_offset(s->dec, &prev_sync);
	open_gap(s, JPB_GAP_DECODE_ERROR, *status, s->base + off);
	s->prev_isid = -1;
	/* A damaged PSB fails to sync: try the next one.  Every try starts
	 * past the last sync point, so this ends. */
	int st;
	do
		st = pt_blk_sync_forward(s->dec);
	while (st < 0 && st != -pte_eos && pt_blk_get_offset(s->dec, &sync) >= 0 &&
	       sync > off && (off = sync, 1));
	if (st < 0) {
		s->gap.what = JPB_GAP_STREAM_END;
		s->now = s->last_tsc;
		return 1;
	}
	if (pt_blk_get_sync_offset(s->dec, &sync) < 0 || sync <= prev_sync)
		return 1; /* no progress: stop, never loop */
	update_time(s);
	*status = st;
	return 0;
}

static int decode_loop(struct sdec *s, int status)
{
	for (unsigned steps = 0;; steps++) {
		/* the chunk's PT behind the decoder, less a window libipt
		 * may look back into: a worker holds a window, not a chunk */
		if (!(steps & 4095) && dec_offset(s) > s->dropped + 2 * JPD_WINDOW_BYTES) {
			uint64_t to = dec_offset(s) - JPD_WINDOW_BYTES;
			jpd_stream_drop(s->st, s->dropped, to);
			s->dropped = to;
		}
		status = drain_events(s, status);
		if (status <= -1000)
			return status + 1000;
		if (status >= 0 && s->nm_added < s->ctx->img.nnm) {
			update_time(s); /* code loaded by now */
			if (map_nmethods(s))
				return jpb_err_internal;
		}
		if (status >= 0) {
			struct pt_block b = { 0 };
			status = pt_blk_next(s->dec, &b, sizeof(b));
			if (past_end(s))
				return 0;
			/* On an error the block still holds what was decoded
			 * before it. */
			int rc = b.ninsn ? on_block(s, &b) : 0;
			if (rc)
				return rc;
		}
		if (status >= 0)
			continue;
		if (status == -pte_eos || s->done || resync(s, &status))
			return 0;
	}
}

/* Sync at the chunk's first PSB (a run's first chunk: the first PSB that
 * syncs; a damaged one is counted and skipped, always forward). */
static int sync_start(struct sdec *s)
{
	uint64_t pos = 0, prev = 0;
	int status = pt_blk_sync_forward(s->dec);
	while (status < 0 && status != -pte_eos &&
	       pt_blk_get_offset(s->dec, &pos) >= 0 && (pos > prev || !prev)) {
		if (!s->silent)
			s->n->errors++;
		prev = pos ? pos : 1;
		status = pt_blk_sync_forward(s->dec);
	}
	return status;
}

/* A run's start: the gap the scan named there, the hole before it. */
static int run_start(struct sdec *s)
{
	uint64_t t0 = 0;
	uint32_t lm, lc;
	pt_blk_time(s->dec, &t0, &lm, &lc);
	jpd_attr_gap(&s->a, t0);
	if (s->rn->after_hole) {
		s->gap_open = 0;
		open_gap(s, JPB_GAP_AUX_HOLE, 0, s->rn->begin);
		/* the hole began where the previous run's trace ended: this
		 * chunk's decoder has no time before its own start */
		if (s->rn->hole_tsc && s->rn->hole_tsc <= t0)
			s->gap.tsc = s->rn->hole_tsc;
		/* not scanned (--attribution=time): the hole's start is not
		 * known, and time 0 would sort the gap first in its thread
		 * and give it to every thread the CPU ran before the hole */
		else if (s->gap.tsc < t0)
			s->gap.tsc = t0;
		/* the time baseline applies the switches due by then, so the
		 * gap goes to the thread running there */
		if (s->by_time && t0 > s->now)
			s->now = t0;
	}
	return apply_switches(s);
}

/* Past the chunk's end, a gap still open was opened either where the
 * next chunk decodes too (it reports it) or before (this chunk does,
 * ending it now). */
static int finish(struct sdec *s)
{
	/* the chunk ends: what follows is the next chunk's */
	int rc = s->held.c ? flush_held(s, 0) : 0;
	if (rc)
		return rc;
	if (!s->done || !s->gap_open)
		return close_gap(s);
	if (s->gap_item > s->c->next_warm)
		return 0;
	return close_gap(s);
}

struct pt_config jpd_stream_config(const struct jpd_ctx *ctx,
				   const struct jpd_stream *st, uint64_t begin,
				   uint64_t end)
{
	struct pt_config cfg = ctx->base_cfg;
	cfg.begin = (uint8_t *)st->buf + begin;
	cfg.end = (uint8_t *)st->buf + end;
	return cfg;
}

static int decode_chunk(struct sdec *s)
{
	struct pt_config cfg = jpd_stream_config(s->ctx, s->st, s->base, s->rn->end);
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	s->dec = pt_blk_alloc_decoder(&cfg);
	if (!s->dec)
		return jpb_err_nomem;
	const struct jpd_image *im = &s->ctx->img;
	struct pt_image *image = pt_blk_get_image(s->dec);
	int rc = 0;
	for (size_t i = 0; i < im->nstatic && !rc; i++)
		if (pt_image_add_cached(image, s->iscache, im->static_isids[i], NULL) < 0)
			rc = jpb_err_internal;
	s->prev_isid = -1;
	int status = sync_start(s);
	if (!rc && status >= 0) {
		update_time(s);
		if (s->c->first_in_run)
			rc = run_start(s);
		s->last_tsc = s->now;
		if (!rc)
			rc = decode_loop(s, status);
	} else if (!rc && s->c->first_in_run && s->rn->end > s->rn->begin) {
		s->n->gaps_by_cause[JPB_GAP_NO_SYNC]++; /* no PSB in the run */
	}
	if (!rc)
		rc = finish(s);
	pt_blk_free_decoder(s->dec);
	s->dec = NULL;
	return rc;
}

int jpd_chunk_decode(struct jpd_ctx *ctx, struct jpd_worker *w,
		     struct jpd_chunk *c)
{
	struct jpd_stream *st = c->st;
	struct sdec s = { .ctx = ctx, .w = w, .iscache = w->iscache, .st = st,
			  .c = c, .rn = &st->runs[c->run] };
	s.silent = !c->first_in_run;
	s.n = s.silent ? &s.sink : &c->n;
	s.begin = c->begin;
	s.end = c->last_in_run ? UINT64_MAX : c->end;
	s.base = c->first_in_run ? s.rn->begin : c->warm;
	s.dropped = s.base;
	s.a = c->init;
	s.fixed_tid = st->tid != 0;
	s.by_time = ctx->attribution == JPD_ATTR_TIME;
	s.sw = st->sw;
	s.nsw = st->nsw;
	int rc = decode_chunk(&s);
	jpb_buf_fini(&s.scratch);
	close_piece(&s);
	if (!rc)
		rc = flush_out(&s);
	if (rc && !c->err[0])
		snprintf(c->err, sizeof(c->err), "decode: %s: chunk at offset %llu: %s",
			 st->name, (unsigned long long)c->begin, jpb_errstr(rc));
	return c->rc = rc;
}
