// SPDX-License-Identifier: MIT
/* jpb_decoded_events_slim (many events per call, the flow's reader)
 * gives what jpb_decoded_event_next_noip gives event by event: the same
 * heads (slim), the frames one event after the other, the same cursor; it stops
 * at N, where the frame room could not hold a whole event, and at a
 * damaged event with its error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"
#include "records_decoded.h"

enum { N = 500 };

/* Every kind, compiled events with 0 to 6 frames and long method ids. */
static void make_events(struct jpb_decoded_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct jpb_decoded_event *e = &ev[i];
		memset(e, 0, sizeof(*e));
		e->kind = (uint8_t)(1 + i % 4);
		e->tsc = 1000 + i * 37 + (i % 3 ? 0 : 1u << 20);
		e->ip = 0x7f0000000000ull + i * 13;
		if (e->kind == JPB_DEV_INTERP) {
			e->opcode = (uint8_t)i;
			e->tos = (uint8_t)(i >> 2);
		} else if (e->kind == JPB_DEV_COMPILED) {
			e->nframes = (uint32_t)(i % 7);
			for (uint32_t k = 0; k < e->nframes; k++) {
				e->frames[k].method_id = 0x7f1234560000ull + i * 8 + k;
				e->frames[k].bci = (int32_t)(k % 2 ? -(int)k : (int)(i * 3));
			}
		} else if (e->kind == JPB_DEV_TRANSITION) {
			e->what = (uint8_t)(1 + i % 8);
			e->arg = i * 1000;
			/* only a method entry carries it; some need two bytes */
			if (e->what == JPB_TR_METHOD_ENTRY)
				e->entry_locals = (uint32_t)(i % 3 ? i % 5 : i * 7);
		} else {
			e->what = (uint8_t)(1 + i % 5);
			e->end_tsc = e->tsc + i;
			e->arg = i;
		}
	}
}

/* The events' encoding, in its own allocation so ASan sees overreads. */
static uint8_t *encode(const struct jpb_decoded_event *ev, size_t n, size_t *len)
{
	struct jpb_buf b = { 0 };
	uint64_t prev = 500;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(jpb_decoded_event_put(&b, &ev[i], &prev), 0);
	uint8_t *p = malloc(b.len);
	memcpy(p, b.data, b.len);
	*len = b.len;
	jpb_buf_fini(&b);
	return p;
}

/* A is B slim: what its kind carries, zeros for the rest. */
static void same_head(const struct jpb_decoded_slim *a, const struct jpb_decoded_head *b)
{
	int tr = b->kind == JPB_DEV_TRANSITION, gap = b->kind == JPB_DEV_GAP;
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->tsc, b->tsc);
	assert_int_equal(a->nframes, b->nframes);
	assert_int_equal(a->opcode, b->kind == JPB_DEV_INTERP ? b->opcode : 0);
	assert_int_equal(a->what, tr || gap ? b->what : 0);
	assert_int_equal(a->arg, gap ? b->end_tsc : tr ? b->arg : 0);
	assert_int_equal(a->locals, tr ? b->entry_locals : 0);
}

/* Batches of BATCH events with ROOM frames against one event at a time. */
static void check_batches(size_t batch, size_t room)
{
	struct jpb_decoded_event *ev = calloc(N, sizeof(*ev));
	make_events(ev, N);
	size_t len;
	uint8_t *p = encode(ev, N, &len);
	struct jpb_cur c1 = jpb_cur_init(p, len), c2 = c1;
	uint64_t p1 = 500, p2 = 500;
	struct jpb_decoded_slim *h = calloc(batch, sizeof(*h));
	struct jpb_decoded_frame *fr = calloc(room, sizeof(*fr));
	struct jpb_decoded_frame one[JPB_DECODED_MAX_FRAMES];
	size_t done = 0;
	while (done < N) {
		int err = -1;
		size_t n = jpb_decoded_events_slim(&c2, h, batch, fr, 7, room, &p2, &err);
		assert_true(n >= 1 && n <= batch);
		size_t used = 0;
		for (size_t k = 0; k < n; k++) {
			struct jpb_decoded_head e;
			assert_int_equal(jpb_decoded_event_next_noip(&c1, &e, one, &p1), 0);
			same_head(&h[k], &e);
			assert_int_equal(h[k].nframes, ev[done + k].nframes);
			assert_int_equal(h[k].fr, 7 + used);
			if (h[k].kind == JPB_DEV_TRANSITION)
				assert_int_equal(h[k].locals, ev[done + k].entry_locals);
			for (uint32_t f = 0; f < e.nframes; f++) {
				assert_int_equal(fr[used + f].method_id, one[f].method_id);
				assert_int_equal(fr[used + f].bci, one[f].bci);
			}
			used += h[k].nframes;
		}
		assert_int_equal(c1.pos, c2.pos);
		assert_int_equal(p1, p2);
		done += n;
		/* it stopped at N, at the room, or at the end of the events */
		assert_true(n == batch || room - used < JPB_DECODED_MAX_FRAMES ||
			    (done == N && err == jpb_err_eos));
		if (done < N)
			assert_int_equal(err, 0);
	}
	int err = 0;
	assert_int_equal(jpb_decoded_events_slim(&c2, h, batch, fr, 7, room, &p2, &err), 0);
	assert_int_equal(err, jpb_err_eos);
	free(fr);
	free(h);
	free(p);
	free(ev);
}

static void test_batches_equal_events(void **state)
{
	(void)state;
	check_batches(64, 64 * JPB_DECODED_MAX_FRAMES);
	check_batches(1, JPB_DECODED_MAX_FRAMES);
	check_batches(7, 3 * JPB_DECODED_MAX_FRAMES);
}

/* Room for one event's worst case and one frame more: events go on
 * while at most one frame is used (events 0-4 use 1, event 5 five). */
static void test_room_limits(void **state)
{
	(void)state;
	struct jpb_decoded_event *ev = calloc(N, sizeof(*ev));
	make_events(ev, N);
	size_t len;
	uint8_t *p = encode(ev, N, &len);
	struct jpb_cur c = jpb_cur_init(p, len);
	uint64_t prev = 500;
	struct jpb_decoded_slim h[8];
	struct jpb_decoded_frame fr[JPB_DECODED_MAX_FRAMES + 1];
	int err = -1;
	assert_int_equal(ev[1].nframes + ev[5].nframes, 6);
	assert_int_equal(jpb_decoded_events_slim(&c, h, 8, fr, 0, JPB_DECODED_MAX_FRAMES + 1,
						 &prev, &err), 6);
	assert_int_equal(err, 0);
	assert_int_equal(h[5].nframes, 5);
	assert_int_equal(fr[1].method_id, ev[5].frames[0].method_id);
	/* too little room for any event: nothing parsed, the cursor kept */
	size_t at = c.pos;
	assert_int_equal(jpb_decoded_events_slim(&c, h, 8, fr, 0, JPB_DECODED_MAX_FRAMES - 1,
						 &prev, &err), 0);
	assert_int_equal(err, 0);
	assert_int_equal(c.pos, at);
	free(p);
	free(ev);
}

/* A damaged event stops the batch with the events before it kept. */
static void test_damaged_event(void **state)
{
	(void)state;
	struct jpb_decoded_event *ev = calloc(N, sizeof(*ev));
	make_events(ev, N);
	size_t len1, len;
	uint8_t *p1 = encode(ev, 10, &len1);
	uint8_t *p = encode(ev, N, &len);
	assert_memory_equal(p, p1, len1);
	p[len1] = 0x77; /* event 10's kind: none */
	struct jpb_cur c = jpb_cur_init(p, len);
	uint64_t prev = 500;
	struct jpb_decoded_slim h[64];
	struct jpb_decoded_frame *fr = calloc(64 * JPB_DECODED_MAX_FRAMES, sizeof(*fr));
	int err = 0;
	size_t n = jpb_decoded_events_slim(&c, h, 64, fr, 0, 64 * JPB_DECODED_MAX_FRAMES,
					   &prev, &err);
	assert_int_equal(n, 10);
	assert_int_equal(err, jpb_err_corrupt);
	assert_int_equal(h[9].tsc, ev[9].tsc);
	free(fr);
	free(p1);
	free(p);
	free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batches_equal_events),
		cmocka_unit_test(test_room_limits),
		cmocka_unit_test(test_damaged_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
