// SPDX-License-Identifier: MIT
/*
 * truth_window DIR: the truth stream's windows as text, for the window
 * tests (tests/integration/agent_truth_window.sh).  One line per record
 * of interest, in stream order:
 *
 *   start nstid=N why=vminit|trigger depth=D frames=CLS.NAME@BCI,...
 *   first nstid=N kind=K at=CLS.NAME@BCI     (the thread's first event)
 *   stop nstid=N why=thread-end|limit|session seq=S events=E bytecodes=B
 *   total bytecodes=B threads=T
 *
 * `events`/`bytecodes` are what the thread's truth_events held when its
 * stop came.
 *
 * truth_window DIR bcis CLS.NAME: instead, the bcis of the bytecode events
 * in that method (e.g. "LTruthSmall;.loop"), in stream order, on one line.
 * Exit 1 on a malformed stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "records.h"
#include "records_truth.h"

#define MAXM (1u << 20)
#define MAXT 4096

static char *names[MAXM];
static struct { uint32_t nstid; uint64_t events, bytecodes; } thr[MAXT];
static size_t nthr;
static const char *only; /* bcis mode: the method */

static size_t thread_ix(uint32_t nstid)
{
	for (size_t i = 0; i < nthr; i++)
		if (thr[i].nstid == nstid)
			return i;
	if (nthr == MAXT) {
		fprintf(stderr, "truth_window: too many threads\n");
		exit(1);
	}
	thr[nthr].nstid = nstid;
	return nthr++;
}

static const char *name(uint32_t id)
{
	return id < MAXM && names[id] ? names[id] : "?";
}

static const char *why(uint32_t r)
{
	static const char *w[] = { "?", "vminit", "trigger", "thread-end",
				   "limit", "session" };
	return r < sizeof(w) / sizeof(w[0]) ? w[r] : "?";
}

static void on_method(const struct jpb_rec_truth_method *m)
{
	if (m->method_id >= MAXM)
		return;
	char *s = malloc(m->class_sig.len + m->name.len + 2);
	if (!s)
		exit(1);
	sprintf(s, "%.*s.%.*s", (int)m->class_sig.len, m->class_sig.ptr,
		(int)m->name.len, m->name.ptr);
	free(names[m->method_id]);
	names[m->method_id] = s;
}

static void on_window(const struct jpb_rec_truth_window *w)
{
	size_t t = thread_ix(w->nstid);
	if (only)
		return;
	if (w->kind == JPB_TRUTH_WINDOW_STOP) {
		printf("stop nstid=%u why=%s seq=%llu events=%llu bytecodes=%llu\n",
		       w->nstid, why(w->reason), (unsigned long long)w->seq,
		       (unsigned long long)thr[t].events,
		       (unsigned long long)thr[t].bytecodes);
		return;
	}
	printf("start nstid=%u why=%s depth=%u frames=", w->nstid, why(w->reason),
	       w->depth);
	for (uint32_t o = 0; o + JPB_TRUTH_FRAME_SIZE <= w->frames.len;
	     o += JPB_TRUTH_FRAME_SIZE) {
		struct jpb_truth_frame f;
		jpb_truth_frame_get(w->frames.ptr + o, &f);
		printf("%s%s@%d", o ? "," : "", name(f.method_id),
		       f.bci == JPB_TRUTH_NO_BCI ? -1 : (int)f.bci);
	}
	printf("\n");
}

static void on_events(const struct jpb_rec_truth_events *e)
{
	size_t t = thread_ix(e->nstid);
	for (uint32_t o = 0; o + JPB_TRUTH_EVENT_SIZE <= e->events.len;
	     o += JPB_TRUTH_EVENT_SIZE) {
		struct jpb_truth_event ev;
		jpb_truth_event_get(e->events.ptr + o, &ev);
		if (only) {
			if (ev.kind == JPB_TRUTH_BYTECODE && !strcmp(name(ev.method_id), only))
				printf("%u ", ev.bci);
			continue;
		}
		if (thr[t].events++ == 0)
			printf("first nstid=%u kind=%u at=%s@%u\n", e->nstid, ev.kind,
			       name(ev.method_id), ev.bci);
		thr[t].bytecodes += ev.kind == JPB_TRUTH_BYTECODE;
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[2], "bcis")) {
		only = argv[3];
	} else if (argc != 2) {
		fprintf(stderr, "usage: truth_window DIR [bcis CLS.NAME]\n");
		return 2;
	}
	struct jpb_bundle *b;
	struct jpb_reader *r;
	if (jpb_bundle_open(&b, argv[1]) || jpb_reader_open(b, "truth", &r)) {
		fprintf(stderr, "truth_window: %s: no truth stream\n", argv[1]);
		return 1;
	}
	struct jpb_record rec;
	int rc;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		const struct jpb_rectype *ty = jpb_rectype_find(rec.type);
		union {
			struct jpb_rec_truth_method m;
			struct jpb_rec_truth_window w;
			struct jpb_rec_truth_events e;
		} u;
		if (!ty || (rec.type != JPB_REC_TRUTH_METHOD &&
			    rec.type != JPB_REC_TRUTH_WINDOW &&
			    rec.type != JPB_REC_TRUTH_EVENTS))
			continue;
		if (jpb_rec_decode(ty, rec.payload, rec.size, &u)) {
			fprintf(stderr, "truth_window: record at offset %llu: bad payload\n",
				(unsigned long long)rec.offset);
			return 1;
		}
		if (rec.type == JPB_REC_TRUTH_METHOD)
			on_method(&u.m);
		else if (rec.type == JPB_REC_TRUTH_WINDOW)
			on_window(&u.w);
		else
			on_events(&u.e);
	}
	uint64_t total = 0;
	for (size_t i = 0; i < nthr; i++)
		total += thr[i].bytecodes;
	if (only)
		printf("\n");
	else
		printf("total bytecodes=%llu threads=%zu\n", (unsigned long long)total, nthr);
	jpb_reader_free(r);
	jpb_bundle_free(b);
	for (size_t i = 0; i < MAXM; i++)
		free(names[i]);
	return rc == jpb_err_eos ? 0 : 1;
}
