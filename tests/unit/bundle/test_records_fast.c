// SPDX-License-Identifier: MIT
/* The fast paths of the decoded and flow codecs give what the general
 * ones give: jpb_decoded_event_next against jpb_decoded_event_get (every
 * LEB128 length, at every distance from the batch's end),
 * jpb_flow_events_write against jpb_writer_put_rec of packed events, and
 * the writer's unbuffered path for large payloads against its reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "bundle.h"
#include "codec.h"
#include "records.h"
#include "records_decoded.h"
#include "records_flow.h"

/* Values whose LEB128 takes 1 to 10 bytes, and their neighbours. */
static uint64_t value_of(unsigned i)
{
	unsigned bits = i % 65;
	uint64_t v = bits ? (bits == 64 ? ~0ull : (1ull << bits) - 1) : 0;
	return (i / 65) % 2 ? v + 1 : v;
}

static void make_events(struct jpb_decoded_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct jpb_decoded_event *e = &ev[i];
		memset(e, 0, sizeof(*e));
		e->kind = (uint8_t)(1 + i % 4);
		e->tsc = 1000 + value_of((unsigned)i * 7) % 100000 + i;
		e->ip = value_of((unsigned)i * 3);
		switch (e->kind) {
		case JPB_DEV_INTERP:
			e->opcode = (uint8_t)i;
			e->tos = (uint8_t)(i >> 3);
			break;
		case JPB_DEV_COMPILED:
			e->nframes = (uint32_t)(i % 5);
			for (uint32_t k = 0; k < e->nframes; k++) {
				e->frames[k].method_id = value_of((unsigned)(i + k * 11));
				e->frames[k].bci = (int32_t)(k % 2 ? -(int)i : (int)i * 300);
			}
			break;
		case JPB_DEV_TRANSITION:
			e->what = (uint8_t)(1 + i % 8);
			e->arg = value_of((unsigned)i * 5);
			break;
		case JPB_DEV_GAP:
			e->what = (uint8_t)(1 + i % 5);
			e->end_tsc = e->tsc + value_of((unsigned)i) % 5000000;
			e->arg = value_of((unsigned)i + 1);
			break;
		}
	}
}

static void test_next_equals_get(void **state)
{
	(void)state;
	enum { N = 700 };
	struct jpb_decoded_event *ev = calloc(N, sizeof(*ev));
	struct jpb_decoded_event *got = malloc(sizeof(*got));
	struct jpb_decoded_frame fr[JPB_DECODED_MAX_FRAMES];
	struct jpb_buf b = { 0 };
	make_events(ev, N);
	uint64_t prev = 500;
	for (size_t i = 0; i < N; i++)
		assert_int_equal(jpb_decoded_event_put(&b, &ev[i], &prev), 0);
	/* the batch copied to its own allocation so ASan sees any overread */
	uint8_t *p = malloc(b.len);
	memcpy(p, b.data, b.len);
	struct jpb_cur c1 = jpb_cur_init(p, b.len), c2 = c1;
	uint64_t p1 = 500, p2 = 500;
	for (size_t i = 0; i < N; i++) {
		struct jpb_decoded_head h;
		assert_int_equal(jpb_decoded_event_get(&c1, got, &p1), 0);
		assert_int_equal(jpb_decoded_event_next(&c2, &h, fr, &p2), 0);
		assert_int_equal(c1.pos, c2.pos);
		assert_int_equal(h.kind, ev[i].kind);
		assert_int_equal(h.tsc, ev[i].tsc);
		assert_int_equal(h.nframes, ev[i].nframes);
		assert_int_equal(got->tsc, ev[i].tsc);
		if (h.kind == JPB_DEV_INTERP) {
			assert_int_equal(h.opcode, ev[i].opcode);
			assert_int_equal(h.tos, ev[i].tos);
		} else if (h.kind == JPB_DEV_GAP) {
			assert_int_equal(h.end_tsc, ev[i].end_tsc);
			assert_int_equal(got->end_tsc, ev[i].end_tsc);
		}
		if (h.kind != JPB_DEV_INTERP) {
			assert_int_equal(h.ip, ev[i].ip);
			assert_int_equal(got->ip, ev[i].ip);
		}
		if (h.kind == JPB_DEV_TRANSITION || h.kind == JPB_DEV_GAP) {
			assert_int_equal(h.what, ev[i].what);
			assert_int_equal(h.arg, ev[i].arg);
		}
		for (uint32_t k = 0; k < h.nframes; k++) {
			assert_int_equal(fr[k].method_id, ev[i].frames[k].method_id);
			assert_int_equal(fr[k].bci, ev[i].frames[k].bci);
			assert_int_equal(got->frames[k].method_id, ev[i].frames[k].method_id);
		}
	}
	struct jpb_decoded_head h;
	assert_int_equal(jpb_decoded_event_next(&c2, &h, fr, &p2), jpb_err_eos);
	free(p);
	jpb_buf_fini(&b);
	free(got);
	free(ev);
}

/* A long LEB128 cut short at the batch's end is corrupt, whatever its
 * distance from the end (the 8-byte load must not look past it). */
static void test_next_truncated_long_leb(void **state)
{
	(void)state;
	struct jpb_decoded_event e = { .kind = JPB_DEV_COMPILED, .tsc = 7,
				       .ip = 0x7fffffffffffull, .nframes = 1 };
	e.frames[0].method_id = 0x7f1234567890ull;
	e.frames[0].bci = 12;
	struct jpb_buf b = { 0 };
	uint64_t prev = 0;
	assert_int_equal(jpb_decoded_event_put(&b, &e, &prev), 0);
	struct jpb_decoded_frame fr[JPB_DECODED_MAX_FRAMES];
	for (size_t cut = 1; cut < b.len; cut++) {
		uint8_t *p = malloc(cut);
		memcpy(p, b.data, cut);
		struct jpb_cur c = jpb_cur_init(p, cut);
		struct jpb_decoded_head h;
		prev = 0;
		assert_int_equal(jpb_decoded_event_next(&c, &h, fr, &prev),
				 jpb_err_corrupt);
		free(p);
	}
	/* an unterminated 8-byte run followed by more bytes is read by the loop */
	uint8_t run[13] = { JPB_DEV_TRANSITION, 0x80, 0x80, 0x80, 0x80, 0x80,
			    0x80, 0x80, 0x80, 0x01, 3, 0, 0 };
	struct jpb_cur c = jpb_cur_init(run, sizeof(run));
	struct jpb_decoded_head h;
	prev = 0;
	assert_int_equal(jpb_decoded_event_next(&c, &h, fr, &prev), 0);
	assert_int_equal(c.pos, sizeof(run));
	assert_int_equal(h.tsc, 1ull << 55); /* zigzag of 1 << 56 */
	assert_int_equal(h.what, 3);
	jpb_buf_fini(&b);
}

static void test_flow_events_write_equals_put_rec(void **state)
{
	(void)state;
	char dir[256];
	const char *tmp = getenv("TESTTMP");
	snprintf(dir, sizeof(dir), "%s/recfast.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	struct jpb_bundle *b;
	assert_int_equal(jpb_bundle_create(&b, dir), 0);
	enum { N = 300 };
	struct jpb_flow_event v[N];
	for (size_t i = 0; i < N; i++) {
		v[i] = (struct jpb_flow_event){ (uint32_t)i * 77, (int32_t)i - 5,
						(uint8_t)i, (uint8_t)(1 + i % 5),
						(uint16_t)(i * 3), 0,
						0x1122334455667788ull + i };
	}
	struct jpb_writer *w1, *w2, *w3;
	struct jpb_buf scratch = { 0 };
	assert_int_equal(jpb_writer_open(b, "flow/a", &w1), 0);
	assert_int_equal(jpb_writer_open(b, "flow/b", &w2), 0);
	assert_int_equal(jpb_writer_open(b, "flow/c", &w3), 0);
	struct jpb_buf pk = { 0 };
	assert_int_equal(jpb_flow_events_pack(&pk, v, N), 0);
	struct jpb_rec_flow_events_packed r = { 9, 0, 40, N,
						{ pk.data, (uint32_t)pk.len } };
	assert_int_equal(jpb_writer_put_rec(w1, jpb_rectype_find(JPB_REC_FLOW_EVENTS_PACKED),
					    0, &r, &scratch), 0);
	jpb_buf_fini(&pk);
	assert_int_equal(jpb_flow_events_write(w2, 9, 40, v, N, &scratch), 0);
	/* in pieces, each after the one before: the same record */
	static const size_t cuts[] = { 0, 1, 8, 108, N };
	assert_int_equal(jpb_flow_events_begin(&scratch, 9, 40), 0);
	for (size_t k = 0; k + 1 < sizeof(cuts) / sizeof(cuts[0]); k++)
		assert_int_equal(jpb_flow_events_add(&scratch, k ? &v[cuts[k] - 1] : NULL,
						     v + cuts[k], cuts[k + 1] - cuts[k]), 0);
	assert_int_equal(jpb_flow_events_end(w3, &scratch, N), 0);
	assert_int_equal(jpb_writer_close(w1), 0);
	assert_int_equal(jpb_writer_close(w2), 0);
	assert_int_equal(jpb_writer_close(w3), 0);
	char p1[300], p2[300];
	snprintf(p1, sizeof(p1), "%s/flow/a.jpb", dir);
	snprintf(p2, sizeof(p2), "%s/flow/b.jpb", dir);
	FILE *f1 = fopen(p1, "rb"), *f2 = fopen(p2, "rb");
	assert_non_null(f1);
	assert_non_null(f2);
	static uint8_t d1[16384], d2[16384];
	size_t n1 = fread(d1, 1, sizeof(d1), f1), n2 = fread(d2, 1, sizeof(d2), f2);
	fclose(f1);
	fclose(f2);
	assert_true(n1 > N * 4);
	assert_int_equal(n1, n2);
	assert_memory_equal(d1, d2, n1);
	char p3[300];
	static uint8_t d3[16384];
	snprintf(p3, sizeof(p3), "%s/flow/c.jpb", dir);
	FILE *f3 = fopen(p3, "rb");
	assert_non_null(f3);
	size_t n3 = fread(d3, 1, sizeof(d3), f3);
	fclose(f3);
	assert_int_equal(n3, n2);
	assert_memory_equal(d3, d2, n3);
	jpb_buf_fini(&scratch);
	jpb_bundle_free(b);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* A large payload of odd size (padded) between small records: read back
 * in order, CRC-checked, at the offsets the framing gives. */
static void test_large_record_unbuffered(void **state)
{
	(void)state;
	char dir[256], path[300];
	const char *tmp = getenv("TESTTMP");
	snprintf(dir, sizeof(dir), "%s/reclarge.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	struct jpb_bundle *b;
	assert_int_equal(jpb_bundle_create(&b, dir), 0);
	enum { BIG = 70001 };
	uint8_t *p = malloc(BIG);
	for (size_t i = 0; i < BIG; i++)
		p[i] = (uint8_t)(i * 13 + 1);
	struct jpb_writer *w;
	assert_int_equal(jpb_writer_open(b, "pt/cpu1", &w), 0);
	assert_int_equal(jpb_writer_put(w, 0x0301, 1, p, 3), 0);
	assert_int_equal(jpb_writer_put(w, 0x0301, 2, p, BIG), 0);
	assert_int_equal(jpb_writer_put(w, 0x0301, 3, p + 5, 9), 0);
	assert_int_equal(jpb_writer_records(w), 3);
	uint64_t bytes = jpb_writer_bytes(w);
	assert_int_equal(jpb_writer_close(w), 0);
	snprintf(path, sizeof(path), "%s/pt/cpu1.jpb", dir);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((uint64_t)st.st_size, bytes);
	assert_int_equal(bytes, JPB_STREAM_HDR_SIZE + 3 * JPB_REC_HDR_SIZE + 8 +
					jpb_padded(BIG) + 16);
	struct jpb_reader *r;
	struct jpb_record rec;
	assert_int_equal(jpb_reader_open(b, "pt/cpu1", &r), 0);
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.size, 3);
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.time_ns, 2);
	assert_int_equal(rec.size, BIG);
	assert_memory_equal(rec.payload, p, BIG);
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.time_ns, 3);
	assert_memory_equal(rec.payload, p + 5, 9);
	assert_int_equal(jpb_reader_next(r, &rec), jpb_err_eos);
	jpb_reader_free(r);
	free(p);
	jpb_bundle_free(b);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_equals_get),
		cmocka_unit_test(test_next_truncated_long_leb),
		cmocka_unit_test(test_flow_events_write_equals_put_rec),
		cmocka_unit_test(test_large_record_unbuffered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
