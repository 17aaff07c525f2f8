// SPDX-License-Identifier: MIT
/* Draining one ring into a bundle, with a fake perf user page, data area
 * and AUX area standing in for the kernel: AUX chunks with wrap-around,
 * the PERF_RECORD_AUX flags, losses as records, tails handed back,
 * snapshots of an overwrite-mode ring. */
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bundle.h"
#include "info/info.h"
#include "codec.h"
#include "records.h"
#include "records_pt.h"
#include "record/pt/pt.h"
#include "pt_fake.h"

enum { DATA = 4096, AUX = 16384 };

struct fake {
	char dir[256];
	struct jpb_bundle *b;
	struct perf_event_mmap_page pg;
	uint8_t data[DATA];
	uint8_t aux[AUX];
	uint64_t aux_pos; /* what the fake PMU wrote, free-running */
	struct jpb_pt_ring_view v;
};

static uint8_t pat(uint64_t p)
{
	uint8_t v = (uint8_t)(p * 13 + 5);
	return v ? v : 1;
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TESTTMP");
	snprintf(f->dir, sizeof(f->dir), "%s/ptdrain.XXXXXX", tmp ? tmp : "/tmp");
	if (!f || !mkdtemp(f->dir) || jpb_bundle_create(&f->b, f->dir))
		return -1;
	f->pg.time_zero = 111;
	f->pg.time_mult = 222;
	f->pg.time_shift = 10;
	f->pg.cap_user_time_zero = 1;
	f->v.user_page = &f->pg;
	f->v.data = f->data;
	f->v.data_size = DATA;
	f->v.aux = f->aux;
	f->v.aux_size = AUX;
	f->v.cpu = 2;
	f->v.config = 0x2001;
	if (jpb_writer_open(f->b, "pt/cpu2", &f->v.w))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	char cmd[300];
	if (f->v.w)
		jpb_writer_close(f->v.w);
	jpb_buf_fini(&f->v.scratch);
	jpb_bundle_free(f->b);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

/* The fake PMU: N more trace bytes, published in aux_head. */
static void pmu(struct fake *f, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++, f->aux_pos++)
		f->aux[f->aux_pos & (AUX - 1)] = pat(f->aux_pos);
	f->pg.aux_head = f->v.overwrite ? f->aux_pos & (AUX - 1) : f->aux_pos;
}

/* The fake kernel appends a sideband record to the data area. */
static void sideband(struct fake *f, uint32_t type, uint16_t misc,
		     const uint64_t *body, size_t nbody, uint32_t tid,
		     uint64_t time)
{
	uint8_t rec[128];
	size_t len = pt_fake_record(rec, type, misc, body, nbody, 1000, tid,
				    time, 2);
	for (size_t k = 0; k < len; k++)
		f->data[(f->pg.data_head + k) & (DATA - 1)] = rec[k];
	f->pg.data_head += len;
}

/* Read the stream back: counts per type, AUX bytes checked against the
 * pattern at their offsets, and the loss records' `what`. */
struct readback {
	unsigned ring, data, aux_event, itrace, lost, sw, loss;
	uint64_t bytes, next_offset;
	unsigned holes, bad_bytes;
	char losses[256];
	uint32_t last_flags, last_snapshot;
	uint64_t first_snapshot_byte; /* pattern position of data[0] */
};

static void readback(struct fake *f, struct readback *r, int snapshot)
{
	struct jpb_reader *rd;
	struct jpb_record rec;
	memset(r, 0, sizeof(*r));
	assert_int_equal(jpb_writer_flush(f->v.w, 0), 0);
	assert_int_equal(jpb_reader_open(f->b, "pt/cpu2", &rd), 0);
	int have = 0;
	while (jpb_reader_next(rd, &rec) == 0) {
		const struct jpb_rectype *t = jpb_rectype_find(rec.type);
		assert_non_null(t);
		switch (rec.type) {
		case JPB_REC_PT_RING: {
			struct jpb_rec_pt_ring x;
			assert_int_equal(jpb_rec_decode(t, rec.payload, rec.size, &x), 0);
			assert_int_equal(x.time_mult, 222);
			assert_int_equal(x.aux_size, AUX);
			assert_int_equal(x.config, 0x2001);
			r->ring++;
			break;
		}
		case JPB_REC_PT_AUX_DATA: {
			struct jpb_rec_pt_aux_data x;
			assert_int_equal(jpb_rec_decode(t, rec.payload, rec.size, &x), 0);
			assert_int_equal(x.cpu, 2);
			r->data++;
			r->bytes += x.data.len;
			r->last_flags = x.flags;
			r->last_snapshot = x.snapshot;
			if (!snapshot) {
				if (have && x.offset != r->next_offset)
					r->holes++;
				for (uint32_t k = 0; k < x.data.len; k++)
					r->bad_bytes += x.data.ptr[k] != pat(x.offset + k);
				r->next_offset = x.offset + x.data.len;
				have = 1;
			} else {
				assert_true(x.flags & JPB_PT_DATA_SNAPSHOT);
			}
			break;
		}
		case JPB_REC_PT_AUX_EVENT: r->aux_event++; break;
		case JPB_REC_PT_ITRACE_START: r->itrace++; break;
		case JPB_REC_PT_LOST: r->lost++; break;
		case JPB_REC_PT_SWITCH: r->sw++; break;
		case JPB_REC_LOSS: {
			struct jpb_rec_loss x;
			assert_int_equal(jpb_rec_decode(t, rec.payload, rec.size, &x), 0);
			r->loss++;
			size_t l = strlen(r->losses);
			snprintf(r->losses + l, sizeof(r->losses) - l, "%.*s=%llu ",
				 (int)x.what.len, x.what.ptr,
				 (unsigned long long)x.count);
			break;
		}
		}
	}
	jpb_reader_free(rd);
}

static void full_trace(void **state)
{
	struct fake *f = *state;
	struct readback r;
	assert_int_equal(jpb_pt_view_begin(&f->v), 0);
	/* Round 1: 10000 bytes; round 2 wraps: 16384 - 10000 + 5000 */
	pmu(f, 10000);
	uint64_t it = (uint64_t)1001 << 32 | 1000;
	sideband(f, PERF_RECORD_ITRACE_START, 0, &it, 1, 1001, 50);
	uint64_t aux[3] = { 0, 10000, 0 };
	sideband(f, PERF_RECORD_AUX, 0, aux, 3, 1001, 60);
	assert_int_equal(jpb_pt_view_drain(&f->v), 0);
	assert_int_equal(f->pg.aux_tail, 10000);
	assert_int_equal(f->pg.data_tail, f->pg.data_head);

	pmu(f, 11384);
	uint64_t aux2[3] = { 10000, 11384, PERF_AUX_FLAG_TRUNCATED };
	sideband(f, PERF_RECORD_AUX, 0, aux2, 3, 1001, 70);
	uint64_t lost[2] = { 1, 17 };
	sideband(f, PERF_RECORD_LOST, 0, lost, 2, 0, 80);
	sideband(f, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, NULL, 0,
		 1001, 90);
	assert_int_equal(jpb_pt_view_drain(&f->v), 0);
	assert_int_equal(f->pg.aux_tail, 21384);

	/* Nothing new: a drain writes nothing. */
	assert_int_equal(jpb_pt_view_drain(&f->v), 0);

	readback(f, &r, 0);
	assert_int_equal(r.ring, 1);
	assert_int_equal(r.bytes, 21384);
	/* 10000, then the wrap: [10000, 16384) and [16384, 21384) */
	assert_int_equal(r.data, 3);
	assert_int_equal(r.holes, 0);
	assert_int_equal(r.bad_bytes, 0);
	assert_int_equal(r.aux_event, 2);
	assert_int_equal(r.itrace, 1);
	assert_int_equal(r.lost, 1);
	assert_int_equal(r.sw, 1);
	assert_int_equal(r.loss, 2);
	assert_non_null(strstr(r.losses, "pt-aux-truncated=1"));
	assert_non_null(strstr(r.losses, "pt-sideband=17"));
	assert_int_equal(f->v.st.aux_records, 2);
	assert_int_equal(f->v.st.truncated, 1);
	assert_int_equal(f->v.st.lost, 17);
	assert_int_equal(f->v.st.bytes, 21384);

	/* jpbpf info's "pt" section sees the same. */
	json_t *sum;
	char msg[256];
	assert_int_equal(jpb_writer_close(f->v.w), 0);
	f->v.w = NULL;
	assert_int_equal(info_summarize(f->dir, &sum, msg, sizeof(msg)), 0);
	json_t *pt = json_object_get(sum, "pt");
	assert_non_null(pt);
	assert_int_equal(json_integer_value(json_object_get(pt, "bytes")), 21384);
	assert_int_equal(json_integer_value(json_object_get(pt, "aux_records")), 2);
	assert_int_equal(json_integer_value(json_object_get(pt, "truncated")), 1);
	assert_int_equal(json_integer_value(json_object_get(pt, "lost")), 17);
	assert_int_equal(json_integer_value(json_object_get(pt, "streams")), 1);
	assert_int_equal(json_integer_value(json_object_get(pt, "aux_holes")), 0);
	assert_int_equal(json_integer_value(json_object_get(pt, "loss_records")), 2);
	json_decref(sum);
}

static void flags_partial_collision(void **state)
{
	struct fake *f = *state;
	struct readback r;
	uint64_t aux[3] = { 0, 0, PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION };
	sideband(f, PERF_RECORD_AUX, 0, aux, 3, 1001, 60);
	assert_int_equal(jpb_pt_view_drain(&f->v), 0);
	readback(f, &r, 0);
	assert_int_equal(r.aux_event, 1);
	assert_non_null(strstr(r.losses, "pt-aux-partial=1"));
	assert_non_null(strstr(r.losses, "pt-aux-collision=1"));
	assert_int_equal(f->v.st.partial, 1);
	assert_int_equal(f->v.st.collision, 1);
}

/* A ring whose head ran more than a ring ahead (a kernel bug or a
 * mis-set tail): the lost bytes are counted, the rest copied. */
static void aux_overrun(void **state)
{
	struct fake *f = *state;
	struct readback r;
	pmu(f, AUX + 300);
	assert_int_equal(jpb_pt_view_drain(&f->v), 0);
	readback(f, &r, 0);
	assert_int_equal(r.bytes, AUX);
	assert_int_equal(r.bad_bytes, 0);
	assert_non_null(strstr(r.losses, "pt-aux-bytes=300"));
	assert_int_equal(f->v.st.aux_gap_bytes, 300);
}

/* Garbage in the data area: skipped and counted, never looped on. */
static void sideband_garbage(void **state)
{
	struct fake *f = *state;
	struct readback r;
	memset(f->data, 0xff, 64);
	jpb_st16(f->data + 6, 12); /* size not a multiple of 8 */
	f->pg.data_head = 64;
	assert_int_equal(jpb_pt_view_drain(&f->v), 0);
	assert_int_equal(f->pg.data_tail, 64);
	readback(f, &r, 0);
	assert_non_null(strstr(r.losses, "pt-sideband-bytes=64"));
}

static void snapshots(void **state)
{
	struct fake *f = *state;
	struct readback r;
	f->v.overwrite = 1;
	/* overwrite mode: AUX records with only OVERWRITE are counted, not
	 * written; nothing of the AUX area moves on a drain */
	pmu(f, 5000);
	uint64_t aux[3] = { 0, 5000, PERF_AUX_FLAG_OVERWRITE };
	sideband(f, PERF_RECORD_AUX, 0, aux, 3, 1001, 60);
	assert_int_equal(jpb_pt_view_drain(&f->v), 0);
	readback(f, &r, 1);
	assert_int_equal(r.data, 0);
	assert_int_equal(r.aux_event, 0);
	assert_int_equal(f->v.st.overwrite, 1);

	/* first snapshot: 5000 bytes, not wrapped, want 4096: clipped */
	assert_int_equal(jpb_pt_view_snapshot(&f->v, 4096), 0);
	readback(f, &r, 1);
	assert_int_equal(r.bytes, 4096);
	assert_int_equal(r.last_flags, JPB_PT_DATA_SNAPSHOT | JPB_PT_DATA_CLIPPED);
	assert_int_equal(r.last_snapshot, 1);

	/* second: only the 1000 new bytes */
	pmu(f, 1000);
	assert_int_equal(jpb_pt_view_snapshot(&f->v, 4096), 0);
	readback(f, &r, 1);
	assert_int_equal(r.bytes, 4096 + 1000);
	assert_int_equal(r.last_flags, JPB_PT_DATA_SNAPSHOT);
	assert_int_equal(r.last_snapshot, 2);

	/* third, after wrapping: the newest 8192 of the full ring */
	pmu(f, 3 * AUX);
	assert_int_equal(jpb_pt_view_snapshot(&f->v, 8192), 0);
	assert_true(f->v.wrapped);
	readback(f, &r, 1);
	assert_int_equal(r.bytes, 4096 + 1000 + 8192);
	assert_int_equal(r.last_flags, JPB_PT_DATA_SNAPSHOT | JPB_PT_DATA_WRAPPED |
				       JPB_PT_DATA_CLIPPED);
	assert_int_equal(f->v.st.snapshots, 3);
	/* snapshots need overwrite mode */
	f->v.overwrite = 0;
	assert_int_equal(jpb_pt_view_snapshot(&f->v, 8192), jpb_pt_err_invalid);
}

/* Snapshot content: the newest bytes, oldest first, across the wrap. */
static void snapshot_content(void **state)
{
	struct fake *f = *state;
	struct jpb_reader *rd;
	struct jpb_record rec;
	f->v.overwrite = 1;
	pmu(f, AUX + 1234);
	assert_int_equal(jpb_pt_view_snapshot(&f->v, 3000), 0);
	assert_int_equal(jpb_writer_flush(f->v.w, 0), 0);
	assert_int_equal(jpb_reader_open(f->b, "pt/cpu2", &rd), 0);
	uint64_t pos = f->aux_pos - 3000, n = 0;
	while (jpb_reader_next(rd, &rec) == 0) {
		struct jpb_rec_pt_aux_data x;
		assert_int_equal(rec.type, JPB_REC_PT_AUX_DATA);
		assert_int_equal(jpb_rec_decode(jpb_rectype_find(rec.type),
						rec.payload, rec.size, &x), 0);
		assert_int_equal(x.offset, pos & (AUX - 1));
		for (uint32_t k = 0; k < x.data.len; k++)
			assert_int_equal(x.data.ptr[k], pat(pos + k));
		pos += x.data.len;
		n++;
	}
	jpb_reader_free(rd);
	assert_int_equal(n, 2); /* [AUX-1766, AUX) and [0, 1234) */
	assert_int_equal(pos, f->aux_pos);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(full_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(flags_partial_collision, setup,
						teardown),
		cmocka_unit_test_setup_teardown(aux_overrun, setup, teardown),
		cmocka_unit_test_setup_teardown(sideband_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshots, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_content, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
