// SPDX-License-Identifier: MIT
/*
 * One thread through the automaton, in bounded memory
 * (docs/RECONSTRUCTION.md, "Windows").
 *
 * Input: events are pushed one by one; an event runs once the lookahead
 * after it is known (LOOKAHEAD_EV events, or the end of the thread).  The
 * buffer keeps only the events of the pending steps and those not yet
 * run, so reconstruction does not depend on how the input is cut.
 *
 * Output: the flow events of one window.  When it reaches
 * flow_opts.window events, the gaps that have enough events after them
 * are recovered over the window, the window is written to the sink, and
 * its last half window before the cut is kept, unfilled, as the context
 * of the gaps still open.  Recovery thus sees a window's history, not
 * the whole thread's.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/flow_int.h"

#define DEFAULT_WINDOW (1u << 19)
/* The default window of a thread without gaps: recovery needs no
 * context there, so the window only gathers output for the sink (786 KB
 * where the default's 14 MB were all touched: ~4 ms of the kernel's page
 * clearing on a thread longer than a window), and a cut keeps none.  A
 * window asked for (flow_opts.window) is kept. */
#define GAPLESS_WINDOW (1u << 15)

/* Whether the thread runs in gapless windows now: a thread said to
 * have no gap that has one anyway (a summary that does not match its
 * stream) gets the default window from that gap on. */
static int gapless_now(const struct flow *f)
{
	return !f->o.window && f->gapless && !f->sum.gaps;
}

static size_t window_of(const struct flow *f)
{
	if (f->o.window)
		return f->o.window;
	return gapless_now(f) ? GAPLESS_WINDOW : DEFAULT_WINDOW;
}

int flow_begin(struct flow *f, const struct flow_sink *sink, int gapless)
{
	clock_gettime(CLOCK_MONOTONIC, &f->t0);
	memset(&f->sum, 0, sizeof(f->sum));
	f->sink = *sink;
	f->nev = f->next = f->nfr = 0;
	f->nev_final = 0;
	f->ctop = NULL;
	f->entry_want = -1;
	f->nout = f->plen = 0;
	f->osplit = 0;
	f->ngaps = 0;
	f->win_trunc = 0;
	f->gapless = gapless;
	/* the input buffer's room for jython's 64 k pending events at once
	 * (flow_states_begin's reasons) */
	if (jpb_grow((void **)&f->ev, &f->capev, (1u << 16) - 1, sizeof(*f->ev)) ||
	    jpb_grow((void **)&f->fr, &f->capfr, (1u << 16) - 1, sizeof(*f->fr)))
		return jpb_err_nomem;
	return flow_states_begin(f);
}

/* Drop the events before the oldest pending step's and the next to run:
 * indices into f->ev shift down, and so do the steps'. */
static void ev_compact(struct flow *f, size_t keep)
{
	uint32_t fr0 = keep < f->nev ? f->ev[keep].fr : (uint32_t)f->nfr;
	f->ctop = NULL; /* its event's index moves */
	if (f->nev > keep)
		memmove(f->ev, f->ev + keep, (f->nev - keep) * sizeof(*f->ev));
	f->nev -= keep;
	for (size_t i = 0; i < f->nev; i++)
		f->ev[i].fr -= fr0;
	if (f->nfr > fr0)
		memmove(f->fr, f->fr + fr0, (f->nfr - fr0) * sizeof(*f->fr));
	f->nfr -= fr0;
	f->next -= keep;
	for (size_t s = 0; s < f->nsteps; s++)
		f->steps[s].ev = f->steps[s].ev > keep ? f->steps[s].ev - (uint32_t)keep : 0;
}

static void out_reverse(struct jpb_flow_event *v, size_t n)
{
	for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
		struct jpb_flow_event t = v[i];
		v[i] = v[j - 1];
		v[j - 1] = t;
	}
}

/* A split window made whole again: the context to the front, the events
 * after it (rotated in place: no second window in memory). */
static void out_join(struct flow *f)
{
	if (!f->osplit)
		return;
	size_t k = f->nout - f->plen;
	if (f->plen)
		memmove(f->out + k, f->out + f->octx, f->plen * sizeof(*f->out));
	out_reverse(f->out, k);
	out_reverse(f->out + k, f->plen);
	out_reverse(f->out, f->nout);
	f->osplit = 0;
}

/* Room for a window's events and those past its size before the cut
 * (a step's flush emits its resolved events at once: up to 21 k on fop
 * with windows of 512 k), reserved at once; a window of more than 2 M
 * events (a whole thread as one) grows as it fills. */
static size_t out_reserve(const struct flow *f)
{
	size_t w = window_of(f);
	return w <= (1u << 21) ? w + w / 8 + 1024 : 0;
}

int flow_out_room_slow(struct flow *f, size_t n)
{
	out_join(f);
	if (f->nout + n <= f->capo)
		return 0;
	/* doubling up to a window copied 12 MB on jython (half of what
	 * realloc copied in the flow phase); what a short thread leaves
	 * untouched costs no page */
	size_t want = out_reserve(f);
	if (f->capo >= want || f->nout + n > want)
		return jpb_grow((void **)&f->out, &f->capo, f->nout + n, sizeof(*f->out));
	struct jpb_flow_event *q = realloc(f->out, want * sizeof(*q));
	if (!q)
		return jpb_err_nomem;
	f->out = q;
	f->capo = want;
	return 0;
}

/* Recover the gaps of out[0..cut) and write out[plen..cut) with its
 * fills; the window restarts with the last half window before the cut,
 * unfilled, as the context (its gaps included: they cut segments) of the
 * gaps still open.  The context's gaps were filled with the window
 * before: recovery fills the new part's only, so out[0..plen) is as it
 * was and the fills lie at or after the first new gap. */
static int window_cut_whole(struct flow *f, size_t cut, int last);

/* The cut of a split window (flow_out_at): without gaps (so without
 * recovery) or a tail, the new part is written from where it is, and
 * the new context, its last half window, is already at the front when
 * the window was full (the usual cut); else the window is joined
 * first. */
static int window_cut(struct flow *f, size_t cut)
{
	size_t half = window_of(f) / 2, start = cut > half ? cut - half : 0;
	if (!f->osplit || f->ngaps || cut != f->nout || start != f->plen) {
		out_join(f);
		return window_cut_whole(f, cut, 0);
	}
	int err = cut > f->plen ? f->sink.put(f->sink.arg, f->out, cut - f->plen) : 0;
	f->osplit = 0;
	f->plen = cut - start;
	f->nout = f->plen;
	return err;
}

/* Recover the gaps of out[0..cut) and write out[plen..cut) with its
 * fills; the window restarts with the last half window before the cut,
 * unfilled, as the context (see window_cut), but for the thread's LAST
 * cut, which leaves it empty. */
static int window_cut_whole(struct flow *f, size_t cut, int last)
{
	size_t ng = 0, g0 = 0, start = cut > window_of(f) / 2 ? cut - window_of(f) / 2 : 0;
	while (ng < f->ngaps && f->gaps[ng].at < cut)
		ng++;
	while (g0 < ng && f->gaps[g0].at < f->plen)
		g0++;
	size_t ntail = f->nout - cut, ngall = f->ngaps;
	struct jpb_flow_event *tail = NULL;
	if (ntail && !(tail = malloc(ntail * sizeof(*tail))))
		return jpb_err_nomem;
	if (ntail)
		memcpy(tail, f->out + cut, ntail * sizeof(*tail));
	f->nout = cut;
	f->ngaps = ng;
	/* without a gap in the new part, nothing to recover; the fills go
	 * to the sink between the window's events, not into the window */
	int err = f->no_recover || g0 == ng ? 0 : flow_recover_write(f);
	if (!err && (f->no_recover || g0 == ng) && f->nout > f->plen)
		err = f->sink.put(f->sink.arg, f->out + f->plen, f->nout - f->plen);
	if (last) {
		f->nout = f->plen = f->ngaps = 0;
		free(tail);
		return err;
	}
	/* the new context left where it is, the next events before it:
	 * only without a tail, and without gaps (the window's gaps are
	 * compared with nout as it grows) */
	if (!err && !ntail && start && start >= cut - start && (ngall == 0 || f->gaps[ngall - 1].at < start)) {
		f->osplit = 1;
		f->octx = start;
		f->plen = cut - start;
		f->nout = f->plen;
		f->ngaps = 0;
		free(tail);
		return 0;
	}
	if (!err)
		err = jpb_grow((void **)&f->out, &f->capo, cut - start + ntail, sizeof(*f->out));
	if (!err) {
		if (cut > start)
			memmove(f->out, f->out + start, (cut - start) * sizeof(*f->out));
		if (ntail)
			memcpy(f->out + cut - start, tail, ntail * sizeof(*tail));
		f->nout = cut - start + ntail;
		f->plen = cut - start;
		size_t gk = 0;
		while (gk < ngall && f->gaps[gk].at < start)
			gk++;
		if (gk && ngall > gk)
			memmove(f->gaps, f->gaps + gk, (ngall - gk) * sizeof(*f->gaps));
		f->ngaps = ngall - gk;
		for (size_t i = 0; i < f->ngaps; i++)
			f->gaps[i].at -= start;
	}
	free(tail);
	return err;
}

/* A cut that keeps no context (the thread's last, and a gapless
 * window's every cut): without a gap in the
 * new part (so without recovery) that part is written from where it
 * lies, not joined to the context first (jython: the join's rotation
 * and the context's move read and wrote the whole window, ~0.5 M D1
 * misses); else the window is joined and recovered, and written. */
static int window_cut_last(struct flow *f)
{
	if (f->ngaps && f->gaps[f->ngaps - 1].at >= f->plen) {
		out_join(f);
		return window_cut_whole(f, f->nout, 1);
	}
	size_t n = f->nout - f->plen;
	int err = n ? f->sink.put(f->sink.arg, f->out + (f->osplit ? 0 : f->plen), n) : 0;
	f->osplit = 0;
	f->nout = f->plen = 0;
	f->ngaps = 0;
	return err;
}

/* A full window is cut at the last gap when too few events follow it to
 * recover it (a quarter window), else at its end; a gapless window is
 * written whole and emptied, as no gap will want its context. */
static int window_check(struct flow *f)
{
	size_t w = window_of(f);
	if (f->nout < w)
		return 0;
	if (gapless_now(f))
		return window_cut_last(f);
	size_t cut = f->nout;
	if (f->ngaps) {
		size_t at = f->gaps[f->ngaps - 1].at;
		if (at > f->plen && at + w / 4 > f->nout)
			cut = at;
	}
	return window_cut(f, cut);
}

/* Run every event whose lookahead is known. */
int flow_run_ready(struct flow *f)
{
	int err = 0;
	size_t end = f->nev_final ? f->nev : f->nev > LOOKAHEAD_EV ? f->nev - LOOKAHEAD_EV : 0;
	size_t w = window_of(f);
	while (!err && f->next < end) {
		/* a run emits one event per event: it stops where the window
		 * fills, which is checked after every event, as if they had
		 * come one at a time */
		size_t room = f->nout < w ? w - f->nout : 1;
		/* a run starts at a compiled event after one compiled_fast
		 * left: two in three calls were for nothing without the test */
		if (f->ctop && f->ev[f->next].kind == JPB_DEV_COMPILED)
			err = flow_run_compiled(f, end - f->next > room ? f->next + room : end);
		if (!err && f->next < end && f->nout < w)
			err = flow_event(f, (uint32_t)f->next++);
		if (!err && f->nout >= w)
			err = window_check(f);
	}
	return err ? err : window_check(f);
}

struct jpb_decoded_frame *flow_push_slot_slow(struct flow *f)
{
	/* steps run in event order: the first pending one is the oldest */
	size_t keep = f->nsteps > 1 && f->steps[1].ev < f->next ? f->steps[1].ev : f->next;
	if (f->next >= flow_ev_compact(f) && f->next >= LOOKAHEAD_EV && keep >= f->next / 2)
		ev_compact(f, keep);
	if (JPB_GROW(f->ev, f->nev, f->capev) ||
	    JPB_GROW(f->fr, f->nfr + JPB_DECODED_MAX_FRAMES - 1, f->capfr))
		return NULL;
	return f->fr + f->nfr;
}

int flow_push(struct flow *f, const struct jpb_decoded_event *e)
{
	struct jpb_decoded_frame *fr = flow_push_slot(f);
	if (!fr)
		return jpb_err_nomem;
	uint32_t nf = e->nframes < JPB_DECODED_MAX_FRAMES ? e->nframes :
							   JPB_DECODED_MAX_FRAMES;
	memcpy(fr, e->frames, nf * sizeof(*fr));
	int tr = e->kind == JPB_DEV_TRANSITION, gap = e->kind == JPB_DEV_GAP;
	f->ev[f->nev] = (struct jpb_decoded_slim){
		e->kind, e->kind == JPB_DEV_INTERP ? e->opcode : 0, tr || gap ? e->what : 0,
		(uint8_t)nf, (uint32_t)f->nfr, tr ? e->entry_locals : 0, e->tsc,
		gap ? e->end_tsc : tr ? e->arg : 0
	};
	return flow_pushed(f, 1);
}

int flow_finish(struct flow *f, struct flow_summary *sum)
{
	f->nev_final = 1;
	int err = flow_run_ready(f);
	if (!err)
		err = flow_flush_first(f);
	if (!err)
		err = window_cut_last(f);
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f->sum.threads = 1;
	f->sum.time_ns = (uint64_t)(t1.tv_sec - f->t0.tv_sec) * 1000000000u +
			 (uint64_t)t1.tv_nsec - (uint64_t)f->t0.tv_nsec;
	flow_arena_free(f->arena);
	f->arena = NULL;
	f->arena_frames = 0;
	if (sum)
		*sum = f->sum;
	return err;
}

static int collect(void *arg, const struct jpb_flow_event *v, size_t n)
{
	struct flow *f = arg;
	if (jpb_grow((void **)&f->all, &f->capall, f->nall + n, sizeof(*f->all)))
		return jpb_err_nomem;
	memcpy(f->all + f->nall, v, n * sizeof(*v));
	f->nall += n;
	return 0;
}

int flow_thread(struct flow *f, const struct jpb_decoded_event *ev, size_t n,
		const struct jpb_flow_event **out, size_t *nout,
		struct flow_summary *sum)
{
	struct flow_sink s = { collect, f };
	f->nall = 0;
	int err = flow_begin(f, &s, 0);
	for (size_t i = 0; i < n && !err; i++)
		err = flow_push(f, &ev[i]);
	int ferr = flow_finish(f, sum);
	*out = f->all;
	*nout = f->nall;
	return err ? err : ferr;
}
