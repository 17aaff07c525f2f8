// SPDX-License-Identifier: MIT
/*
 * One PT stream before its chunks are decoded: its AUX bytes gathered into
 * a scratch file and mapped, split into runs at holes, a packet pass that
 * finds the tracing gaps (to place context switches), and the split of
 * each run into chunks at PSBs with the attribution state at each chunk's
 * start, so that chunks decode on any worker in any order.
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

/* ---- gathering ---------------------------------------------------- */

/* Whether trace is missing before data record D, which follows one that
 * ended at NEXT_OFF (UINT64_MAX: none) in snapshot LAST_SNAP (0: none, or
 * full trace).  Full trace: its AUX offset jumped.  Snapshot: a new
 * snapshot (a ring that wrapped may overlap the previous one or have lost
 * trace since it: a new run after a hole, conservatively), or within one a
 * second span that does not start where the first ended or at the ring's
 * start (FORMAT.md: a snapshot split by the ring's end is two records of
 * one number, and they are one contiguous trace, not a hole). */
static int data_gap(const struct jpb_rec_pt_aux_data *d, uint64_t next_off,
		    uint32_t last_snap)
{
	if (!(d->flags & JPB_PT_DATA_SNAPSHOT))
		return next_off != UINT64_MAX && d->offset != next_off;
	if (!last_snap || d->snapshot != last_snap)
		return next_off != UINT64_MAX;
	return d->offset != next_off && d->offset != 0;
}

static int gather(struct jpd_ctx *ctx, struct jpd_stream *st, int fd)
{
	struct jpb_reader *r;
	int rc = jpb_reader_open(ctx->b, st->name, &r);
	if (rc) {
		snprintf(st->err, sizeof(st->err), "decode: %s: %s", st->name,
			 jpb_errstr(rc));
		return rc;
	}
	size_t caprun = 0;
	uint64_t next_off = UINT64_MAX, pos = 0;
	uint32_t last_snap = 0;
	int hole = 0;
	struct jpb_record rec;
	/* A data record whose checksum fails is stepped over: the next one's
	 * offset jumps, which starts a run after a hole (a gap), so one
	 * flipped bit loses that record's trace, not the stream's rest. */
	jpb_reader_skip_damaged(r);
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
		/* full trace starts at AUX offset 0: a first data record
		 * past it after a damaged record follows lost trace */
		if (!st->nruns && jpb_reader_damaged(r) &&
		    !(d.flags & JPB_PT_DATA_SNAPSHOT) && d.offset)
			hole = 1;
		int gap = data_gap(&d, next_off, last_snap);
		if (!st->nruns || gap || hole) {
			if (JPB_GROW(st->runs, st->nruns, caprun)) {
				rc = jpb_err_nomem;
				break;
			}
			st->runs[st->nruns++] = (struct jpd_run){ pos, pos, gap || hole };
			hole = 0;
		}
		last_snap = d.flags & JPB_PT_DATA_SNAPSHOT ? d.snapshot : 0;
		ssize_t k = d.data.len ? write(fd, d.data.ptr, d.data.len) : 0;
		if (k != (ssize_t)d.data.len) {
			int e = k < 0 ? errno : ENOSPC; /* short: the disk filled */
			snprintf(st->err, sizeof(st->err),
				 "decode: %s: PT scratch file in %.200s: %s",
				 st->name, ctx->tmpdir, strerror(e));
			rc = jpd_errno_code(e);
			break;
		}
		pos += d.data.len;
		st->runs[st->nruns - 1].end = pos;
		next_off = d.offset + d.data.len;
	}
	uint64_t damaged = jpb_reader_damaged(r);
	if (rc == jpb_err_truncated || rc == jpb_err_corrupt || (rc == jpb_err_eos && damaged)) {
		/* The intact records decode; each damage is an error. */
		int tail = rc != jpb_err_eos;
		st->errors += damaged + (uint64_t)tail;
		jpb_reader_damage(r, rc, st->err, sizeof(st->err));
		rc = jpb_err_eos;
	}
	jpb_reader_free(r);
	st->size = pos;
	return rc == jpb_err_eos ? 0 : rc;
}

/* ---- memory: the mapped PT in windows ------------------------------ */

void jpd_stream_drop(const struct jpd_stream *st, uint64_t from, uint64_t to)
{
	/* The mapping is private, read-only and never written: dropped pages
	 * come back from the page cache if read again, so any range is safe
	 * to drop; this only bounds what the process holds mapped. */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	from &= ~(page - 1);
	if (to > st->size)
		to = st->size;
	if (!st->buf || from >= to)
		return;
	madvise((uint8_t *)st->buf + from, to - from, MADV_DONTNEED);
}

/* A sequential pass over the mapping drops what it has passed, in steps
 * of JPD_WINDOW_BYTES, keeping the last window: libipt may look back a
 * little, and a page read again after its drop costs a fault. */
void jpd_stream_drop_behind(const struct jpd_stream *st, uint64_t *dropped,
			    uint64_t pos)
{
	if (pos < *dropped + 2 * JPD_WINDOW_BYTES)
		return;
	uint64_t to = pos - JPD_WINDOW_BYTES;
	jpd_stream_drop(st, *dropped, to);
	*dropped = to;
}

/* ---- pass 1: tracing gaps from packets ---------------------------- */

/* The tracing gap table lives in a scratch file, one region per column,
 * each with room for CAP gaps: a gap takes at least a packet byte
 * (TIP.PGE, OVF) besides a run's two edges, so CAP = PT bytes + 2 per run
 * never fills.  The scan appends gaps to a small buffer written out with
 * pwrite() (a shared writable mapping cost a fault, a read of the file's
 * hole and a block allocation per new page); once the scan is done the
 * file is mapped read-only, so the process holds only the pages it reads
 * (jpd_stream_drop_gaps lets them go), not 41 bytes per gap of the trace. */
#define GAPBUF 4096u
struct jpd_gapbuf {
	uint64_t col[5][GAPBUF]; /* dis, en, goff, dis_ip, en_ip */
	uint8_t async[GAPBUF];
	size_t n;       /* buffered */
	size_t written; /* gaps already in the file */
	uint64_t last_en;
	uint64_t en_before_end; /* last_en before the latest run's end */
	int fd;
};

static int gaps_fail(struct jpd_ctx *ctx, struct jpd_stream *st, const char *what)
{
	snprintf(st->err, sizeof(st->err), "decode: %s: gap table in %.200s: %s: %s",
		 st->name, ctx->tmpdir, what, strerror(errno));
	return jpb_err_io;
}

static int gaps_open(struct jpd_ctx *ctx, struct jpd_stream *st)
{
	uint64_t cap = st->size + 2 * st->nruns + 64;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char path[4200];
	snprintf(path, sizeof(path), "%s/gaps-%u.bin", ctx->tmpdir, st->cpu);
	st->gapbuf = calloc(1, sizeof(*st->gapbuf));
	if (!st->gapbuf)
		return jpb_err_nomem;
	st->gapbuf->fd = -1;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return gaps_fail(ctx, st, "open");
	unlink(path);
	st->gapbuf->fd = fd;
	st->capgaps = cap;
	st->gapmap_len = (41 * cap + page - 1) & ~(page - 1);
	if (ftruncate(fd, (off_t)st->gapmap_len))
		return gaps_fail(ctx, st, "ftruncate");
	return 0;
}

static int gaps_flush(struct jpd_stream *st)
{
	struct jpd_gapbuf *g = st->gapbuf;
	int ok = 1;
	for (int c = 0; c < 5 && g->n && ok; c++) {
		size_t len = g->n * sizeof(uint64_t);
		off_t at = (off_t)((c * st->capgaps + g->written) * sizeof(uint64_t));
		ok = pwrite(g->fd, g->col[c], len, at) == (ssize_t)len;
	}
	off_t at = (off_t)(5 * st->capgaps * sizeof(uint64_t) + g->written);
	if (ok && g->n)
		ok = pwrite(g->fd, g->async, g->n, at) == (ssize_t)g->n;
	if (!ok) {
		snprintf(st->err, sizeof(st->err),
			 "decode: %s: gap table: write of %zu gaps at gap %zu: %s",
			 st->name, g->n, g->written, errno ? strerror(errno) : "short write");
		return jpb_err_io;
	}
	g->written += g->n;
	g->n = 0;
	return 0;
}

/* The scan is done: the table, mapped read-only, in the columns' order. */
static int gaps_map(struct jpd_ctx *ctx, struct jpd_stream *st)
{
	struct jpd_gapbuf *g = st->gapbuf;
	int rc = gaps_flush(st);
	if (rc)
		return rc;
	void *m = mmap(NULL, st->gapmap_len, PROT_READ, MAP_SHARED, g->fd, 0);
	if (m == MAP_FAILED)
		return gaps_fail(ctx, st, "mmap");
	uint64_t *col = m, cap = st->capgaps;
	st->gapmap = m;
	st->dis = col;
	st->en = col + cap;
	st->goff = col + 2 * cap;
	st->dis_ip = col + 3 * cap;
	st->en_ip = col + 4 * cap;
	st->async = (uint8_t *)(col + 5 * cap);
	return 0;
}

static void gaps_close(struct jpd_stream *st)
{
	if (!st->gapbuf)
		return;
	if (st->gapbuf->fd >= 0)
		close(st->gapbuf->fd);
	free(st->gapbuf);
	st->gapbuf = NULL;
}

void jpd_stream_drop_gaps(const struct jpd_stream *st)
{
	/* read-only and shared: the pages stay in the page cache */
	if (st->gapmap)
		madvise(st->gapmap, st->gapmap_len, MADV_DONTNEED);
}

int jpd_add_gap(struct jpd_stream *st, uint64_t d, uint64_t e, int async,
		uint64_t off, uint64_t dis_ip, uint64_t en_ip)
{
	struct jpd_gapbuf *g = st->gapbuf;
	if (st->ngaps >= st->capgaps)
		return jpb_err_internal;
	/* in stream order enable times only grow; a TSC glitch must not
	 * unsort them */
	if (st->ngaps && e < g->last_en)
		e = g->last_en;
	if (e == JPD_RUN_END)
		g->en_before_end = g->last_en;
	g->last_en = e;
	g->col[0][g->n] = d;
	g->col[1][g->n] = e;
	g->col[2][g->n] = off;
	g->col[3][g->n] = dis_ip;
	g->col[4][g->n] = en_ip;
	g->async[g->n++] = (uint8_t)async;
	st->ngaps++;
	return g->n == GAPBUF ? gaps_flush(st) : 0;
}

/* Forget the gaps after the first N (a scan that gave up), with the
 * enable time they were kept sorted from. */
static void gaps_truncate(struct jpd_stream *st, size_t n, uint64_t last_en)
{
	struct jpd_gapbuf *g = st->gapbuf;
	if (n >= g->written) {
		g->n = n - g->written;
	} else {
		g->written = n; /* overwritten by the next flush */
		g->n = 0;
	}
	st->ngaps = n;
	g->last_en = last_en;
}

/* One scan step: the events due now, named by libipt's own time for them
 * (the block decoder sees the same events at the same times: it runs this
 * query decoder inside). */
struct scan {
	uint64_t last, dis, base, dis_ip;
	int off; /* 0 tracing, 1 async disabled, 2 disabled by a branch */
};

static uint64_t qry_off(struct pt_query_decoder *q, const struct scan *sc)
{
	uint64_t off = 0;
	pt_qry_get_offset(q, &off);
	return sc->base + off;
}

static int scan_events(struct jpd_stream *st, struct pt_query_decoder *q,
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
			sc->dis_ip = ev.variant.async_disabled.at;
			break;
		case ptev_disabled:
			sc->off = 2;
			sc->dis = t;
			break;
		case ptev_enabled:
			/* Any PGE may start a task: the previous one may have
			 * blocked or ended in untraced code, or without a PGD. */
			/* where it stopped and resumed: a thread resumes
			 * where it stopped (see continuity.c) */
			rc = jpd_add_gap(st, sc->off ? sc->dis : t, t, sc->off != 2,
				     qry_off(q, sc), sc->off == 1 ? sc->dis_ip : 0,
				     ev.ip_suppressed ? 0 : ev.variant.enabled.ip);
			sc->off = 0;
			break;
		case ptev_overflow: /* switches may hide in lost trace */
			rc = jpd_add_gap(st, t, t, JPD_GAP_OVERFLOW, qry_off(q, sc), 0, 0);
			/* resolved with tracing off (no FUP): the CPU ran
			 * untraced code from somewhere in the loss to the
			 * next enable, and the switches there lie in it */
			if (ev.ip_suppressed) {
				sc->off = 1;
				sc->dis = t;
				sc->dis_ip = 0;
			}
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
static int scan_run_query(struct jpd_ctx *ctx, struct jpd_stream *st,
			  const struct jpd_run *rn)
{
	struct pt_config cfg = jpd_stream_config(ctx, st, rn->begin, rn->end);
	struct pt_query_decoder *q = pt_qry_alloc_decoder(&cfg);
	if (!q)
		return jpb_err_nomem;
	struct scan sc = { .base = rn->begin };
	uint64_t ip, prev_sync = 0, sync = 0, dropped = rn->begin;
	unsigned steps = 0;
	int rc = 0, tip = 0, status = pt_qry_sync_forward(q, &ip);
	if (status >= 0) {
		uint32_t lm, lc;
		pt_qry_time(q, &sc.last, &lm, &lc);
		/* the run's start: tasks switched in before it */
		rc = jpd_add_gap(st, sc.last, sc.last, 1, rn->begin, 0, 0);
	}
	while (!rc && status >= 0) {
		status = scan_events(st, q, &sc, status);
		if (status <= -1000) {
			rc = status + 1000;
			break;
		}
		if (status >= 0) {
			/* Ask first for the kind the last step found: TNT
			 * bits come in runs, and a query of the wrong kind
			 * costs a packet lookup. */
			int taken, again = 0;
			status = tip ? pt_qry_indirect_branch(q, &ip)
				     : pt_qry_cond_branch(q, &taken);
			if (status == -pte_bad_query) {
				tip = !tip;
				again = 1;
			}
			if (again)
				status = tip ? pt_qry_indirect_branch(q, &ip)
					     : pt_qry_cond_branch(q, &taken);
		}
		if (!(++steps & 4095))
			jpd_stream_drop_behind(st, &dropped, qry_off(q, &sc));
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
		rc = jpd_add_gap(st, sc.off == 1 ? sc.dis : sc.last, JPD_RUN_END, 1,
			     rn->end, sc.off == 1 ? sc.dis_ip : 0, 0);
	pt_qry_free_decoder(q);
	jpd_stream_drop(st, dropped, rn->end);
	return rc;
}

/* The run's gaps from its packets (gapscan.c), or with the query decoder
 * where that scan cannot be sure of giving the same. */
static int scan_run(struct jpd_ctx *ctx, struct jpd_stream *st,
		    const struct jpd_run *rn)
{
	if (ctx->scan == JPD_SCAN_QUERY)
		return scan_run_query(ctx, st, rn);
	size_t n = st->ngaps;
	uint64_t last_en = st->gapbuf->last_en;
	int rc = jpd_scan_packets(ctx, st, rn);
	if (rc != JPD_SCAN_UNSURE)
		return rc;
	st->scan_fallbacks++;
	gaps_truncate(st, n, last_en);
	return scan_run_query(ctx, st, rn);
}

/* ---- chunks ---------------------------------------------------------- */

static int add_chunk(struct jpd_stream *st, size_t *cap, uint32_t run,
		     uint64_t warm, uint64_t begin)
{
	if (st->nchunks) { /* the previous chunk ends here */
		struct jpd_chunk *p = &st->chunks[st->nchunks - 1];
		if (p->run == run) {
			p->end = begin;
			p->next_warm = warm;
		}
	}
	if (JPB_GROW(st->chunks, st->nchunks, *cap))
		return jpb_err_nomem;
	struct jpd_chunk *c = &st->chunks[st->nchunks];
	memset(c, 0, sizeof(*c));
	c->st = st;
	c->index = (uint32_t)st->nchunks++;
	c->run = run;
	c->warm = warm;
	c->begin = begin;
	c->end = st->runs[run].end;
	c->next_warm = c->end;
	c->first_in_run = warm == begin;
	return 0;
}

/* Chunks of about chunk_bytes, cut at PSBs (found by libipt's packet
 * decoder); each but a run's first starts decoding at the PSB before its
 * own. */
static int split_run(struct jpd_ctx *ctx, struct jpd_stream *st, uint32_t run,
		     size_t *cap)
{
	const struct jpd_run *rn = &st->runs[run];
	int rc = add_chunk(st, cap, run, rn->begin, rn->begin);
	if (rc || !ctx->chunk_bytes)
		return rc;
	struct pt_config cfg = jpd_stream_config(ctx, st, rn->begin, rn->end);
	struct pt_packet_decoder *pk = pt_pkt_alloc_decoder(&cfg);
	if (!pk)
		return jpb_err_nomem;
	uint64_t last = rn->begin, prev = UINT64_MAX, off = 0, dropped = rn->begin;
	while (!rc && pt_pkt_sync_forward(pk) >= 0 &&
	       pt_pkt_get_sync_offset(pk, &off) >= 0) {
		off += rn->begin;
		jpd_stream_drop_behind(st, &dropped, off);
		if (prev != UINT64_MAX && off >= last + ctx->chunk_bytes) {
			rc = add_chunk(st, cap, run, prev, off);
			last = off;
		}
		prev = off;
	}
	pt_pkt_free_decoder(pk);
	jpd_stream_drop(st, dropped, rn->end);
	if (st->nchunks)
		st->chunks[st->nchunks - 1].last_in_run = 1;
	return rc;
}

/* ---- attribution state at chunk starts -------------------------------- */

int jpd_attr_apply(const struct jpd_stream *st, struct jpd_attr_state *a,
		   int by_time, uint64_t now, uint64_t *napplied)
{
	size_t first = a->swpos;
	uint32_t tid = a->tid;
	/* One task comes in per enable: with coarse timing two gaps may end
	 * at the same TSC, and the second task's switch waits for the
	 * second PGE. */
	while (a->swpos < st->nsw) {
		const struct jpd_switch *w = &st->sw[a->swpos];
		int due = by_time ? w->tsc <= now
				  : w->apply_tsc < a->gap_tsc ||
					    (w->apply_tsc == a->gap_tsc &&
					     w->apply_k <= a->gap_k);
		if (!due)
			break;
		tid = w->next_tid;
		a->swpos++;
		/* a hole hides any number of enables */
		int hole_goes_on = w->hole && a->swpos < st->nsw && st->sw[a->swpos].hole;
		if (tid && !by_time && !hole_goes_on)
			break;
	}
	*napplied = a->swpos - first;
	int changed = tid != a->tid;
	a->tid = tid;
	return changed;
}

size_t jpd_gap_lower(const struct jpd_stream *st, uint64_t t)
{
	return jpd_gaps_ending_at(st->en, st->ngaps, t);
}

void jpd_attr_gap(struct jpd_attr_state *a, uint64_t tsc)
{
	if (a->gaps_seen && tsc == a->gap_tsc) {
		a->gap_k++;
	} else {
		a->gap_tsc = tsc > a->gap_tsc ? tsc : a->gap_tsc;
		a->gap_k = 0;
	}
	a->gaps_seen = 1;
}

void jpd_attr_walk(const struct jpd_ctx *ctx, const struct jpd_stream *st,
		   struct jpd_attr_state *a, size_t *gpos, uint64_t off)
{
	if (ctx->attribution == JPD_ATTR_TIME || st->tid)
		return; /* applied by time, or no switches */
	for (; *gpos < st->ngaps && st->goff[*gpos] < off; (*gpos)++) {
		if (st->en[*gpos] == JPD_RUN_END)
			continue; /* a run's end: never passed */
		uint64_t n;
		jpd_attr_gap(a, st->en[*gpos]);
		jpd_attr_apply(st, a, 0, 0, &n);
	}
}

/* The attribution state at each chunk's start, once switches are placed. */
void jpd_stream_chunk_states(const struct jpd_ctx *ctx, struct jpd_stream *st)
{
	struct jpd_attr_state a = { .tid = st->tid };
	size_t gpos = 0;
	for (size_t i = 0; i < st->nchunks; i++) {
		jpd_attr_walk(ctx, st, &a, &gpos, st->chunks[i].warm);
		st->chunks[i].init = a;
	}
}

/* Another run follows the previous one's end gap, which said "never
 * passed" (JPD_RUN_END) while that run could be the last.  Between runs it is
 * passed: it ends where the run's trace ended, so the switches placed in
 * the hole apply at the next run's start.  Left at JPD_RUN_END, it made every
 * later gap's enable time JPD_RUN_END too (they are kept sorted), and no
 * switch after a hole was ever applied: the thread before the hole took
 * the whole rest of the CPU's trace. */
static int gaps_pass_run_end(struct jpd_stream *st, struct jpd_run *next)
{
	struct jpd_gapbuf *g = st->gapbuf;
	if (!st->ngaps || g->last_en != JPD_RUN_END)
		return 0;
	size_t last = st->ngaps - 1;
	uint64_t dis = g->n ? g->col[0][g->n - 1] : 0;
	if (!g->n && pread(g->fd, &dis, sizeof(dis), (off_t)(last * sizeof(uint64_t))) !=
			     (ssize_t)sizeof(dis))
		return jpb_err_io;
	uint64_t en = dis > g->en_before_end ? dis : g->en_before_end;
	g->last_en = en;
	next->hole_tsc = en;
	if (g->n) {
		g->col[1][g->n - 1] = en;
		return 0;
	}
	off_t at = (off_t)((st->capgaps + last) * sizeof(uint64_t));
	return pwrite(g->fd, &en, sizeof(en), at) == (ssize_t)sizeof(en) ? 0 : jpb_err_io;
}

int jpd_stream_scan(struct jpd_ctx *ctx, struct jpd_stream *st)
{
	int rc = gaps_open(ctx, st);
	for (size_t i = 0; i < st->nruns && !rc; i++)
		if (!(rc = gaps_pass_run_end(st, &st->runs[i])))
			rc = scan_run(ctx, st, &st->runs[i]);
	if (!rc)
		rc = gaps_map(ctx, st);
	gaps_close(st);
	return rc;
}

/* ---- the stream ------------------------------------------------------ */

/* Each run after an AUX hole: the switches in the hole go to its first
 * gap, the last of those at the run's start offset (the previous run's
 * end gap has that offset too). */
static void place_in_holes(struct jpd_stream *st)
{
	for (size_t r = 1; r < st->nruns; r++) {
		if (!st->runs[r].after_hole)
			continue;
		size_t lo = 0, hi = st->ngaps;
		while (lo < hi) { /* the first gap past the run's start */
			size_t mid = (lo + hi) / 2;
			if (st->goff[mid] <= st->runs[r].begin)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0)
			jpd_sched_hole(st->sw, st->nsw, st->dis, st->en, st->ngaps, lo - 1);
	}
}

int jpd_stream_prepare(struct jpd_ctx *ctx, struct jpd_stream *st)
{
	char ptpath[4200];
	snprintf(ptpath, sizeof(ptpath), "%s/pt-%u.bin", ctx->tmpdir, st->cpu);
	int fd = open(ptpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		snprintf(st->err, sizeof(st->err), "decode: %s: scratch file: %s",
			 st->name, strerror(errno));
		return st->rc = jpb_err_io;
	}
	unlink(ptpath);
	int rc = gather(ctx, st, fd);
	st->pt_bytes = st->size;
	if (!rc && st->size) {
		void *map = mmap(NULL, st->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			rc = jpb_err_io;
		else
			st->buf = map;
	}
	close(fd);
	if (!st->tid && st->cpu < ctx->sched.ncpus) {
		st->sw = ctx->sched.sw[st->cpu];
		st->nsw = ctx->sched.nsw[st->cpu];
	}
	/* the time baseline cuts at switch times: no gaps to place them in */
	int by_time = ctx->attribution == JPD_ATTR_TIME;
	if (!rc && st->buf && !by_time)
		rc = jpd_stream_scan(ctx, st);
	if (!rc && !by_time && st->nsw) {
		jpd_sched_place(st->sw, st->nsw, st->dis, st->en, st->async,
				st->ngaps, ctx->window);
		jpd_sched_overflow(&ctx->sched, st->cpu, st->dis, st->en, st->async,
				   st->ngaps);
		place_in_holes(st);
	}
	for (uint32_t r = 0; r < st->nruns && !rc && st->buf; r++)
		rc = split_run(ctx, st, r, &st->capchunks);
	jpd_stream_drop_gaps(st);
	if (rc && !st->err[0])
		snprintf(st->err, sizeof(st->err), "decode: %s: %s", st->name,
			 jpb_errstr(rc));
	return st->rc = rc;
}

void jpd_stream_fini(struct jpd_stream *st)
{
	if (st->buf)
		munmap((void *)st->buf, st->size);
	for (size_t i = 0; i < st->nchunks; i++)
		free(st->chunks[i].pieces);
	free(st->chunks);
	free(st->runs);
	if (st->gapmap)
		munmap(st->gapmap, st->gapmap_len);
}
