// SPDX-License-Identifier: MIT
/*
 * One PT stream: its AUX bytes gathered into a scratch file and mapped,
 * split into runs at holes, a packet pass that finds the tracing gaps (to
 * place context switches), then libipt's block decoder with each block
 * classified into events, written to the stream's spill file as pieces
 * (one thread's consecutive events on this CPU).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decode.h"
#include "decode_int.h"
#include "records_pt.h"

struct run {
	uint64_t begin, end; /* in the gathered bytes */
	int after_hole;      /* data before it is missing */
};

struct sdec {
	struct jpd_ctx *ctx;
	struct pt_image_section_cache *iscache; /* this worker's */
	struct jpd_stream *st;
	const uint8_t *buf;
	struct run *runs;
	size_t nruns;
	/* switches of this CPU and the tracing gaps they are placed in */
	struct jpd_switch *sw;
	size_t nsw, swpos;
	uint64_t *dis, *en;
	uint8_t *async;
	size_t ngaps, capgaps;
	/* decoding state */
	struct pt_block_decoder *dec;
	size_t nm_added;
	uint64_t now, last_tsc;
	uint32_t tid;
	int fixed_tid; /* per-thread ring: no switches */
	int by_time;   /* JPD_ATTR_TIME: cut at switch times, not gaps */
	uint64_t window; /* TSC ticks a BPF timestamp may be off */
	/* the last tracing gap passed, named as the packet scan names it:
	 * its enable time and rank among gaps ending then */
	uint64_t gap_tsc;
	uint32_t gap_k;
	int gaps_seen;
	int prev_isid;
	int gap_open;
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
	struct jpb_buf out;
	uint64_t spill_pos;
	struct jpb_decoded_event ev;
};

/* ---- gathering ---------------------------------------------------- */

static int gather(struct sdec *s, int fd, uint64_t *size)
{
	struct jpd_stream *st = s->st;
	struct jpb_reader *r;
	int rc = jpb_reader_open(s->ctx->b, st->name, &r);
	if (rc) {
		snprintf(st->err, sizeof(st->err), "decode: %s: %s", st->name,
			 jpb_errstr(rc));
		return rc;
	}
	size_t caprun = 0;
	uint64_t next_off = UINT64_MAX, pos = 0;
	int hole = 0;
	struct jpb_record rec;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		const struct jpb_rectype *t = jpb_rectype_find(rec.type);
		if (rec.type == JPB_REC_PT_AUX_EVENT) {
			struct jpb_rec_pt_aux_event ae;
			if (!jpb_rec_decode(t, rec.payload, rec.size, &ae) &&
			    (ae.flags & 1))
				st->aux_truncated++; /* its data follows; OVF marks the loss */
			continue;
		}
		if (rec.type != JPB_REC_PT_AUX_DATA)
			continue;
		struct jpb_rec_pt_aux_data d;
		if (jpb_rec_decode(t, rec.payload, rec.size, &d)) {
			hole = 1;
			continue;
		}
		int jump = next_off != UINT64_MAX && d.offset != next_off;
		if (!s->nruns || jump || hole || (d.flags & JPB_PT_DATA_SNAPSHOT)) {
			if (JPB_GROW(s->runs, s->nruns, caprun)) {
				rc = jpb_err_nomem;
				break;
			}
			s->runs[s->nruns++] = (struct run){ pos, pos, jump || hole };
			hole = 0;
		}
		if (d.data.len && write(fd, d.data.ptr, d.data.len) != (ssize_t)d.data.len) {
			rc = jpb_err_io;
			break;
		}
		pos += d.data.len;
		s->runs[s->nruns - 1].end = pos;
		next_off = d.offset + d.data.len;
	}
	if (rc == jpb_err_truncated || rc == jpb_err_corrupt) {
		/* The intact prefix decodes; the damage is an error. */
		st->errors++;
		snprintf(st->err, sizeof(st->err), "%s", jpb_reader_errmsg(r));
		rc = jpb_err_eos;
	}
	jpb_reader_free(r);
	*size = pos;
	return rc == jpb_err_eos ? 0 : rc;
}

/* ---- pass 1: tracing gaps from packets ---------------------------- */

static int add_gap(struct sdec *s, uint64_t d, uint64_t e, int async)
{
	size_t cap = s->capgaps;
	if (JPB_GROW(s->dis, s->ngaps, s->capgaps))
		return jpb_err_nomem;
	if (cap != s->capgaps) {
		uint64_t *p = realloc(s->en, s->capgaps * sizeof(*p));
		if (p)
			s->en = p;
		uint8_t *q = realloc(s->async, s->capgaps);
		if (q)
			s->async = q;
		if (!p || !q)
			return jpb_err_nomem;
	}
	/* in stream order enable times only grow; a TSC glitch must not
	 * unsort them */
	if (s->ngaps && e < s->en[s->ngaps - 1])
		e = s->en[s->ngaps - 1];
	s->dis[s->ngaps] = d;
	s->async[s->ngaps] = (uint8_t)async;
	s->en[s->ngaps++] = e;
	return 0;
}

/* One scan step: the events due now, named by libipt's own time for them
 * (the block decoder sees the same events at the same times: it runs this
 * query decoder inside). */
struct scan {
	uint64_t last, dis;
	int off; /* 0 tracing, 1 async disabled, 2 disabled by a branch */
};

static int scan_events(struct sdec *s, struct pt_query_decoder *q,
		       struct scan *sc, int status)
{
	while (status > 0 && (status & pts_event_pending)) {
		struct pt_event ev;
		status = pt_qry_event(q, &ev, sizeof(ev));
		if (status < 0)
			return status;
		uint64_t t = ev.has_tsc ? ev.tsc : sc->last;
		sc->last = t;
		int rc = 0;
		switch (ev.type) {
		case ptev_async_disabled:
			sc->off = 1;
			sc->dis = t;
			break;
		case ptev_disabled:
			sc->off = 2;
			sc->dis = t;
			break;
		case ptev_enabled:
			/* Any PGE may start a task: the previous one may have
			 * blocked or ended in untraced code, or without a PGD. */
			rc = add_gap(s, sc->off ? sc->dis : t, t, sc->off != 2);
			sc->off = 0;
			break;
		case ptev_overflow: /* switches may hide in lost trace */
			rc = add_gap(s, t, t, 1);
			break;
		default:
			break;
		}
		if (rc)
			return -1000 + rc;
	}
	return status;
}

/* The stream's tracing gaps, where context switches can be: every
 * disable (asynchronous: the kernel took the CPU; synchronous: a branch
 * into untraced code) up to the next enable, every OVF, the run's start
 * and end.  Driven by libipt's query decoder without the image: at each
 * step it asks for a conditional branch, else an indirect one. */
static int scan_run(struct sdec *s, const struct run *rn)
{
	struct pt_config cfg = s->ctx->base_cfg;
	cfg.begin = (uint8_t *)s->buf + rn->begin;
	cfg.end = (uint8_t *)s->buf + rn->end;
	struct pt_query_decoder *q = pt_qry_alloc_decoder(&cfg);
	if (!q)
		return jpb_err_nomem;
	struct scan sc = { 0 };
	uint64_t ip, prev_sync = 0, sync = 0;
	int rc = 0, status = pt_qry_sync_forward(q, &ip);
	if (status >= 0) {
		uint32_t lm, lc;
		pt_qry_time(q, &sc.last, &lm, &lc);
		/* the run's start: tasks switched in before it */
		rc = add_gap(s, sc.last, sc.last, 1);
	}
	while (!rc && status >= 0) {
		status = scan_events(s, q, &sc, status);
		if (status <= -1000) {
			rc = status + 1000;
			break;
		}
		if (status >= 0) {
			int taken;
			status = pt_qry_cond_branch(q, &taken);
			if (status == -pte_bad_query)
				status = pt_qry_indirect_branch(q, &ip);
		}
		if (status >= 0 || status == -pte_eos)
			continue;
		/* damage: on at the next PSB, always forward */
		pt_qry_get_sync_offset(q, &prev_sync);
		status = pt_qry_sync_forward(q, &ip);
		if (status >= 0 && (pt_qry_get_sync_offset(q, &sync) < 0 || sync <= prev_sync))
			break;
	}
	/* The run's end (disabled or not): a switch after the last trace
	 * belongs there, and is never applied within the run. */
	if (!rc)
		rc = add_gap(s, sc.off == 1 ? sc.dis : sc.last, UINT64_MAX - 1, 1);
	pt_qry_free_decoder(q);
	return rc;
}

/* ---- pieces and events ------------------------------------------- */

static int flush_out(struct sdec *s)
{
	if (!s->out.len)
		return 0;
	if (fwrite(s->out.data, 1, s->out.len, s->st->spill) != s->out.len)
		return jpb_err_io;
	s->spill_pos += s->out.len;
	jpb_buf_reset(&s->out);
	return 0;
}

static void close_piece(struct sdec *s)
{
	if (!s->piece)
		return;
	s->piece->len = s->spill_pos + s->out.len - s->piece->off;
	if (!s->piece->len)
		s->st->npieces--; /* nothing in it */
	s->piece = NULL;
}

static int open_piece(struct sdec *s)
{
	struct jpd_stream *st = s->st;
	if (JPB_GROW(st->pieces, st->npieces, st->cap))
		return jpb_err_nomem;
	s->piece = &st->pieces[st->npieces];
	memset(s->piece, 0, sizeof(*s->piece));
	s->piece->tid = s->tid;
	s->piece->cpu = st->cpu;
	s->piece->first_tsc = s->now;
	s->piece->ordinal = st->npieces++;
	s->piece->off = s->spill_pos + s->out.len;
	s->piece_prev_tsc = 0;
	return 0;
}

static int emit(struct sdec *s, const struct jpb_decoded_event *e)
{
	if (!s->piece) {
		int rc = open_piece(s);
		if (rc)
			return rc;
		s->piece->first_tsc = e->tsc;
	}
	struct jpd_piece *p = s->piece;
	if (jpb_decoded_event_put(&s->out, e, &s->piece_prev_tsc))
		return jpb_err_nomem;
	if (e->kind == JPB_DEV_GAP) {
		p->gaps++;
		s->st->gaps++;
		if (e->what < 8)
			s->st->gaps_by_cause[e->what]++;
		p->has_gap = 1;
		p->gap_cause = e->what;
		p->gap_error = -(int32_t)e->arg;
		p->gap_first = e->tsc;
		p->gap_last = e->end_tsc;
		p->gap_offset = e->ip;
		close_piece(s); /* the merge writes its gap record after it */
	} else {
		p->events++;
		s->st->events++;
		if (!s->tid)
			s->st->unattributed++;
		if (e->kind == JPB_DEV_INTERP)
			p->interp++, s->st->interp++;
		else if (e->kind == JPB_DEV_COMPILED)
			p->compiled++, s->st->compiled++;
		else
			p->transitions++, s->st->transitions++;
	}
	/* Pieces stay small enough to be one decoded_events record each. */
	if (s->piece && s->spill_pos + s->out.len - s->piece->off >= (256u << 10))
		close_piece(s);
	return s->out.len >= (1u << 20) ? flush_out(s) : 0;
}

/* The decoder passes a tracing gap (run start, PGE, OVF) at TSC. */
static void gap_passed(struct sdec *s, uint64_t tsc)
{
	if (s->gaps_seen && tsc == s->gap_tsc) {
		s->gap_k++;
	} else {
		s->gap_tsc = tsc > s->gap_tsc ? tsc : s->gap_tsc;
		s->gap_k = 0;
	}
	s->gaps_seen = 1;
}

/* Whether the next switch applies now: placed at or before the last gap
 * passed, or (the time baseline) stamped at or before the decoder's time. */
static int switch_due(const struct sdec *s)
{
	const struct jpd_switch *w = &s->sw[s->swpos];
	if (s->by_time)
		return w->tsc <= s->now;
	return w->apply_tsc < s->gap_tsc ||
	       (w->apply_tsc == s->gap_tsc && w->apply_k <= s->gap_k);
}

/* Apply the switches due; a new thread opens a new piece. */
static void apply_switches(struct sdec *s)
{
	uint32_t tid = s->tid;
	if (s->fixed_tid)
		return;
	size_t first = s->swpos;
	/* One task comes in per enable: with coarse timing two gaps may end
	 * at the same TSC, and the second task's switch waits for the
	 * second PGE. */
	while (s->swpos < s->nsw && switch_due(s)) {
		tid = s->sw[s->swpos].next_tid;
		s->swpos++;
		s->st->switches++;
		if (tid && !s->by_time)
			break;
	}
	/* Out and back in: the thread may have run on another CPU meanwhile,
	 * so its next events are a new piece (merged by time). */
	if (s->swpos != first)
		close_piece(s);
	if (tid != s->tid) {
		close_piece(s);
		s->tid = tid;
		s->skip_armed = 0; /* the bytecode reported was another thread's */
	}
}

static int transition(struct sdec *s, uint8_t what, uint64_t ip, uint64_t arg)
{
	struct jpb_decoded_event *e = &s->ev;
	e->kind = JPB_DEV_TRANSITION;
	e->what = what;
	e->tsc = s->now;
	e->ip = ip;
	e->arg = arg;
	e->nframes = 0;
	return emit(s, e);
}

static int open_gap(struct sdec *s, uint8_t cause, int err, uint64_t offset)
{
	if (s->gap_open)
		return 0; /* one gap until trace resumes */
	s->gap_open = 1;
	s->gap.kind = JPB_DEV_GAP;
	s->gap.what = cause;
	s->gap.tsc = s->last_tsc;
	s->gap.end_tsc = s->last_tsc;
	s->gap.ip = offset;
	s->gap.arg = (uint64_t)(err < 0 ? -err : err);
	if (cause == JPB_GAP_DECODE_ERROR)
		s->st->errors++;
	return 0;
}

/* The gap ends where trace resumes: the time known there.  It belongs to
 * the thread that lost it; if the CPU changed threads meanwhile, the next
 * thread lost its start too. */
static int gap_for(struct sdec *s, uint32_t tid, uint32_t *given, size_t *ngiven)
{
	for (size_t i = 0; i < *ngiven; i++)
		if (given[i] == tid)
			return 0;
	if (*ngiven < 64)
		given[(*ngiven)++] = tid;
	if (tid == s->tid)
		return emit(s, &s->gap);
	uint32_t cur = s->tid;
	close_piece(s);
	s->tid = tid;
	int rc = emit(s, &s->gap);
	close_piece(s);
	s->tid = cur;
	return rc;
}

static int close_gap(struct sdec *s)
{
	if (!s->gap_open)
		return 0;
	s->gap_open = 0;
	s->gap.end_tsc = s->now > s->gap.tsc ? s->now : s->gap.tsc;
	uint32_t given[64];
	size_t ngiven = 0;
	int rc = gap_for(s, s->tid, given, &ngiven);
	/* Every thread the scheduler ran here during the loss lost trace. */
	size_t lo = 0, hi = s->nsw;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->sw[mid].tsc < s->gap.tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; !rc && lo < s->nsw && s->sw[lo].tsc <= s->gap.end_tsc; lo++)
		if (s->sw[lo].next_tid)
			rc = gap_for(s, s->sw[lo].next_tid, given, &ngiven);
	apply_switches(s);
	return rc ? rc : gap_for(s, s->tid, given, &ngiven);
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

static int on_nmethod_block(struct sdec *s, const struct jpd_nmethod *nm,
			    const struct pt_block *b)
{
	int rc = 0;
	if (b->ip == nm->begin)
		rc = transition(s, JPB_TR_NMETHOD_ENTRY, b->ip, nm->method_id);
	struct jpb_decoded_event *e = &s->ev;
	for (uint32_t k = jpd_pc_lower(nm, b->ip);
	     !rc && k < nm->npcs && nm->pcs[k].pc <= b->end_ip; k++) {
		const struct jpd_pcentry *pe = &nm->pcs[k];
		e->kind = JPB_DEV_COMPILED;
		e->tsc = s->now;
		e->ip = pe->pc;
		e->nframes = pe->nframes;
		memcpy(e->frames, nm->frames + pe->frame0,
		       pe->nframes * sizeof(*e->frames));
		rc = emit(s, e);
	}
	return rc;
}

static int classify(struct sdec *s, const struct pt_block *b)
{
	if (s->skip_armed) {
		s->skip_armed = 0;
		if (b->ip == s->skip_ip) {
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
	int prev_op = s->prev_op;
	uint64_t prev_end = s->prev_end;
	int straight = s->prev_iclass == ptic_other || s->prev_iclass == ptic_error;
	s->prev_iclass = b->iclass;
	s->prev_isid = b->isid;
	s->prev_op = -1;
	s->prev_end = b->end_ip;
	switch (sec ? sec->kind : SK_NONE) {
	case SK_INTERP: {
		const struct jpd_dispatch *d = jpd_find_dispatch(im, b->ip);
		if (d && d->opcode == prev_op && prev_end < b->ip &&
		    b->ip - prev_end <= 15 && straight) {
			s->prev_op = prev_op;
			return 0;
		}
		if (d) {
			s->prev_op = d->opcode;
			struct jpb_decoded_event *e = &s->ev;
			e->kind = JPB_DEV_INTERP;
			e->tsc = s->now;
			e->opcode = d->opcode;
			e->tos = d->tos;
			e->nframes = 0;
			return emit(s, e);
		}
		const struct jpd_codelet *c = jpd_find_codelet(im, b->ip);
		if (c && c->begin == b->ip && c->bytecode < 0)
			rc = transition(s, c->what, b->ip, c->index);
		return rc;
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

/* First tracing gap ending at or after T. */
static size_t gap_lower(const struct sdec *s, uint64_t t)
{
	size_t lo = 0, hi = s->ngaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->en[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether a context switch is placed in the tracing gap that starts now:
 * the one after the last gap passed (by name, not by time: a disable may
 * share its TSC with the enable before it). */
static int switch_follows(const struct sdec *s)
{
	if (s->swpos >= s->nsw)
		return 0;
	const struct jpd_switch *w = &s->sw[s->swpos];
	if (s->by_time) /* no gaps to place switches in */
		return 0;
	size_t g = s->gaps_seen ? gap_lower(s, s->gap_tsc) + s->gap_k + 1 : 0;
	if (g >= s->ngaps)
		return 0;
	uint32_t k = (uint32_t)(g - gap_lower(s, s->en[g]));
	return w->apply_tsc < s->en[g] || (w->apply_tsc == s->en[g] && w->apply_k <= k);
}

/* The instruction at AT did not complete (interrupt, fault, switch).  If
 * it starts a bytecode, that bytecode began: report it now, since a fault
 * never resumes there. */
static int async_disabled(struct sdec *s, uint64_t at)
{
	const struct jpd_image *im = &s->ctx->img;
	const struct jpd_dispatch *d = jpd_find_dispatch(im, at);
	int rc = 0;
	if (switch_follows(s)) /* resumes here or on another CPU: it is */
		d = NULL;      /* reported when it runs */
	else if (d) {
		struct jpb_decoded_event *e = &s->ev;
		e->kind = JPB_DEV_INTERP;
		e->tsc = s->now;
		e->opcode = d->opcode;
		e->tos = d->tos;
		e->nframes = 0;
		rc = emit(s, e);
		s->skip_armed = 1;
	} else if (!switch_follows(s) && s->last_nm && at >= s->last_nm->begin &&
		   at < s->last_nm->end) {
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
	if (ev->type <= ptev_overflow)
		s->prev_op = -1;
	update_time(s);
	uint64_t evt = ev->has_tsc ? ev->tsc : s->now;
	switch (ev->type) {
	case ptev_enabled:
		gap_passed(s, evt);
		close_gap(s);
		apply_switches(s);
		s->prev_isid = -1;
		return transition(s, JPB_TR_ENABLED, ev->variant.enabled.ip, 0);
	case ptev_disabled:
		return transition(s, JPB_TR_DISABLED, ev->variant.disabled.ip, 0);
	case ptev_async_disabled:
		return async_disabled(s, ev->variant.async_disabled.at);
	case ptev_overflow: {
		gap_passed(s, evt);
		uint64_t off = 0;
		pt_blk_get_offset(s->dec, &off);
		s->prev_isid = -1;
		return open_gap(s, JPB_GAP_OVERFLOW, 0, off);
	}
	default:
		return 0;
	}
}

static int drain_events(struct sdec *s, int status)
{
	while (status > 0 && (status & pts_event_pending)) {
		struct pt_event ev;
		status = pt_blk_event(s->dec, &ev, sizeof(ev));
		if (status < 0)
			return status;
		int rc = on_event(s, &ev);
		if (rc)
			return -1000 + rc; /* below any -pte_* */
	}
	return status;
}

static int decode_loop(struct sdec *s, const struct run *rn, int status)
{
	for (;;) {
		status = drain_events(s, status);
		if (status <= -1000)
			return status + 1000;
		if (status >= 0) {
			update_time(s);
			if (map_nmethods(s))
				return jpb_err_internal;
			struct pt_block b = { 0 };
			status = pt_blk_next(s->dec, &b, sizeof(b));
			/* On an error the block still holds what was decoded
			 * before it. */
			if (b.ninsn) {
				update_time(s);
				if (s->gap_open)
					close_gap(s);
				if (s->by_time)
					apply_switches(s);
				s->st->blocks++;
				int rc = classify(s, &b);
				if (rc)
					return rc;
				s->last_tsc = s->now;
			}
		}
		if (status >= 0)
			continue;
		if (status == -pte_eos)
			return 0;
		/* A decode error: a gap until the next PSB. */
		uint64_t off = 0, prev_sync = 0, sync = 0;
		pt_blk_get_offset(s->dec, &off);
		pt_blk_get_sync_offset(s->dec, &prev_sync);
		open_gap(s, JPB_GAP_DECODE_ERROR, status, rn->begin + off);
		s->prev_isid = -1;
		/* A damaged PSB fails to sync: try the next one.  Every try
		 * starts past the last sync point, so this ends. */
		do
			status = pt_blk_sync_forward(s->dec);
		while (status < 0 && status != -pte_eos &&
		       pt_blk_get_offset(s->dec, &sync) >= 0 && sync > off &&
		       (off = sync, 1));
		if (status < 0) {
			s->gap.what = JPB_GAP_STREAM_END;
			s->now = s->last_tsc;
			return close_gap(s);
		}
		if (pt_blk_get_sync_offset(s->dec, &sync) < 0 || sync <= prev_sync)
			return close_gap(s); /* no progress: stop, never loop */
		update_time(s);
	}
}

static int decode_run(struct sdec *s, const struct run *rn)
{
	struct pt_config cfg = s->ctx->base_cfg;
	cfg.begin = (uint8_t *)s->buf + rn->begin;
	cfg.end = (uint8_t *)s->buf + rn->end;
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
	s->nm_added = 0;
	s->prev_isid = -1;
	/* A damaged PSB fails to sync: count it and try the next one (each
	 * try starts past the previous position, so this ends). */
	uint64_t pos = 0, prev = 0;
	int status = pt_blk_sync_forward(s->dec);
	while (status < 0 && status != -pte_eos &&
	       pt_blk_get_offset(s->dec, &pos) >= 0 && (pos > prev || !prev)) {
		s->st->errors++;
		prev = pos ? pos : 1;
		status = pt_blk_sync_forward(s->dec);
	}
	if (!rc && status >= 0) {
		update_time(s);
		/* the run's start gap, at the time the scan named it */
		uint64_t t0 = 0;
		uint32_t lm, lc;
		pt_blk_time(s->dec, &t0, &lm, &lc);
		gap_passed(s, t0);
		if (rn->after_hole) {
			s->gap_open = 0;
			open_gap(s, JPB_GAP_AUX_HOLE, 0, rn->begin);
		}
		if (!s->last_tsc)
			s->last_tsc = s->now;
		apply_switches(s);
		rc = decode_loop(s, rn, status);
	} else if (!rc && rn->end > rn->begin) {
		s->st->gaps_by_cause[JPB_GAP_NO_SYNC]++; /* no PSB in the run */
	}
	close_gap(s);
	pt_blk_free_decoder(s->dec);
	s->dec = NULL;
	return rc;
}

static int decode_all(struct sdec *s)
{
	/* BPF timestamps against PT: trust them to a few microseconds */
	const struct jpd_clock *clk = &s->ctx->sched.clock;
	uint64_t t0 = clk->n ? clk->ns[0] : 0;
	s->window = jpd_ns_to_tsc(clk, t0 + 5000) - jpd_ns_to_tsc(clk, t0);
	int rc = 0;
	/* the time baseline cuts at switch times: no gaps to place them in */
	for (size_t i = 0; i < s->nruns && !rc && !s->by_time; i++)
		rc = scan_run(s, &s->runs[i]);
	if (rc)
		return rc;
	if (!s->by_time)
		jpd_sched_place(s->sw, s->nsw, s->dis, s->en, s->async, s->ngaps,
				s->window);
	for (size_t i = 0; i < s->nruns && !rc; i++)
		rc = decode_run(s, &s->runs[i]);
	close_piece(s);
	return rc ? rc : flush_out(s);
}

int jpd_stream_decode(struct jpd_ctx *ctx, struct jpd_stream *st)
{
	struct sdec s = { .ctx = ctx, .st = st };
	char ptpath[4200];
	snprintf(ptpath, sizeof(ptpath), "%s/pt-%u.bin", ctx->tmpdir, st->cpu);
	snprintf(st->spillpath, sizeof(st->spillpath), "%s/ev-%u.bin", ctx->tmpdir,
		 st->cpu);
	int fd = open(ptpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	st->spill = fopen(st->spillpath, "w+");
	if (fd < 0 || !st->spill) {
		snprintf(st->err, sizeof(st->err), "decode: %s: scratch file: %s",
			 st->name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return st->rc = jpb_err_io;
	}
	unlink(ptpath);
	uint64_t size = 0;
	int rc = gather(&s, fd, &size);
	st->pt_bytes = size;
	void *map = MAP_FAILED;
	if (!rc && size) {
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			rc = jpb_err_io;
	}
	if (!rc && size && !(s.iscache = jpd_image_iscache(&ctx->img)))
		rc = jpb_err_nomem;
	if (!rc && size) {
		s.buf = map;
		s.tid = st->tid;
		s.fixed_tid = st->tid != 0;
		s.by_time = ctx->attribution == JPD_ATTR_TIME;
		if (st->cpu < ctx->sched.ncpus) {
			s.sw = ctx->sched.sw[st->cpu];
			s.nsw = ctx->sched.nsw[st->cpu];
		}
		rc = decode_all(&s);
	}
	if (map != MAP_FAILED)
		munmap(map, size);
	close(fd);
	if (fflush(st->spill) && !rc)
		rc = jpb_err_io;
	if (rc && !st->err[0])
		snprintf(st->err, sizeof(st->err), "decode: %s: %s", st->name,
			 jpb_errstr(rc));
	if (s.iscache)
		pt_iscache_free(s.iscache);
	free(s.runs);
	free(s.dis);
	free(s.en);
	free(s.async);
	jpb_buf_fini(&s.out);
	return st->rc = rc;
}
