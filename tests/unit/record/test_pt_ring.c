// SPDX-License-Identifier: MIT
/* AUX and data ring arithmetic on fake rings: full-trace copies with
 * wrap-around, PERF_RECORD_AUX flags and loss accounting, sideband
 * parsing, snapshot extraction from an overwritten ring. */
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec.h"
#include "record/pt/pt.h"
#include "pt_fake.h"

/* A "PMU" writing bytes into a ring: byte at stream position p is
 * (p * 7 + 1) & 0xff, never 0, so a copy is checked position by position. */
static uint8_t pat(uint64_t p)
{
	uint8_t v = (uint8_t)(p * 7 + 1);
	return v ? v : 1;
}

static void pmu_write(uint8_t *ring, uint64_t size, uint64_t from, uint64_t to)
{
	for (uint64_t p = from; p < to; p++)
		ring[p & (size - 1)] = pat(p);
}

static void spans(void **state)
{
	(void)state;
	struct jpb_pt_span sp[2];
	assert_int_equal(jpb_pt_ring_spans(64, 10, 10, sp), 0);
	assert_int_equal(jpb_pt_ring_spans(64, 10, 30, sp), 1);
	assert_int_equal(sp[0].off, 10);
	assert_int_equal(sp[0].len, 20);
	/* [60, 70) wraps: 60..63, then 0..5 */
	assert_int_equal(jpb_pt_ring_spans(64, 60, 70, sp), 2);
	assert_int_equal(sp[0].off, 60);
	assert_int_equal(sp[0].len, 4);
	assert_int_equal(sp[1].off, 0);
	assert_int_equal(sp[1].len, 6);
	/* exactly full, ending on the boundary: one span */
	assert_int_equal(jpb_pt_ring_spans(64, 128, 192, sp), 1);
	assert_int_equal(sp[0].off, 0);
	assert_int_equal(sp[0].len, 64);
	/* more than a ring: the kernel never does that; we refuse */
	assert_int_equal(jpb_pt_ring_spans(64, 0, 65, sp), jpb_pt_err_overflow);
	assert_int_equal(jpb_pt_ring_spans(48, 0, 8, sp), jpb_pt_err_overflow);
	/* free-running pointers across 2^64 */
	assert_int_equal(jpb_pt_ring_spans(64, UINT64_MAX - 3, 4, sp), 2);
	assert_int_equal(sp[0].off, 60);
	assert_int_equal(sp[0].len, 4);
	assert_int_equal(sp[1].len, 4);
}

/* Drain a ring the way the recorder does, in several rounds with
 * wrap-around, and check every byte arrives once and in order. */
static void copy_rounds(void **state)
{
	(void)state;
	enum { SIZE = 256 };
	uint8_t ring[SIZE], out[SIZE];
	uint64_t tail = 0, head = 0, total = 0;
	static const uint64_t steps[] = { 100, 156, 1, 255, 200, 56, 256, 3 };
	memset(ring, 0, sizeof(ring));
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		pmu_write(ring, SIZE, head, head + steps[i]);
		head += steps[i];
		int64_t n = jpb_pt_ring_copy(ring, SIZE, tail, head, out);
		assert_int_equal(n, (int64_t)steps[i]);
		for (int64_t k = 0; k < n; k++)
			assert_int_equal(out[k], pat(tail + (uint64_t)k));
		tail = head;
		total += (uint64_t)n;
	}
	assert_int_equal(total, 100 + 156 + 1 + 255 + 200 + 56 + 256 + 3);
	assert_int_equal(jpb_pt_ring_copy(ring, SIZE, 0, SIZE + 1, out),
			 jpb_pt_err_overflow);
}

/* One PERF_RECORD_* from the fake kernel, as pid 4242. */
static size_t mkrec(uint8_t *p, uint32_t type, uint16_t misc,
		    const uint64_t *body, size_t nbody, uint32_t tid,
		    uint64_t time, uint32_t cpu)
{
	return pt_fake_record(p, type, misc, body, nbody, 4242, tid, time, cpu);
}

static void sideband_parse(void **state)
{
	(void)state;
	uint8_t rec[128];
	struct jpb_pt_sb sb;
	uint64_t aux[3] = { 4096, 8192, PERF_AUX_FLAG_TRUNCATED |
					PERF_AUX_FLAG_PARTIAL };
	size_t n = mkrec(rec, PERF_RECORD_AUX, 0, aux, 3, 77, 1000, 3);
	assert_int_equal(jpb_pt_sb_parse(rec, n, &sb), 0);
	assert_int_equal(sb.type, PERF_RECORD_AUX);
	assert_int_equal(sb.aux_offset, 4096);
	assert_int_equal(sb.aux_size, 8192);
	assert_int_equal(sb.aux_flags, JPB_PT_AUX_TRUNCATED | JPB_PT_AUX_PARTIAL);
	assert_int_equal(sb.pid, 4242);
	assert_int_equal(sb.tid, 77);
	assert_int_equal(sb.time, 1000);
	assert_int_equal(sb.cpu, 3);

	uint64_t it = (uint64_t)78 << 32 | 4242; /* pid, tid as two u32 */
	n = mkrec(rec, PERF_RECORD_ITRACE_START, 0, &it, 1, 78, 5, 1);
	assert_int_equal(jpb_pt_sb_parse(rec, n, &sb), 0);
	assert_int_equal(sb.itrace_pid, 4242);
	assert_int_equal(sb.itrace_tid, 78);

	uint64_t lost[2] = { 9, 31 };
	n = mkrec(rec, PERF_RECORD_LOST, 0, lost, 2, 0, 6, 0);
	assert_int_equal(jpb_pt_sb_parse(rec, n, &sb), 0);
	assert_int_equal(sb.lost, 31);
	assert_int_equal(sb.lost_id, 9);

	n = mkrec(rec, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, NULL, 0,
		  78, 7, 1);
	assert_int_equal(jpb_pt_sb_parse(rec, n, &sb), 0);
	assert_int_equal(sb.misc, PERF_RECORD_MISC_SWITCH_OUT);
	assert_int_equal(sb.tid, 78);

	/* too short for its type */
	jpb_st16(rec + 6, 16);
	assert_int_equal(jpb_pt_sb_parse(rec, 16, &sb), jpb_pt_err_overflow);
	/* length field disagrees with the buffer */
	assert_int_equal(jpb_pt_sb_parse(rec, 24, &sb), jpb_pt_err_overflow);
}

/* A data ring whose records straddle the end get reassembled. */
static void sideband_ring(void **state)
{
	(void)state;
	enum { SIZE = 128 };
	uint8_t ring[SIZE], rec[128], tmp[256];
	uint64_t head = 96, tail = 96; /* start near the end */
	struct jpb_pt_sb sb;
	uint64_t aux[3] = { 0, 4096, 0 };
	for (int i = 0; i < 2; i++) {
		aux[0] = 4096u * (unsigned)i;
		size_t n = mkrec(rec, PERF_RECORD_AUX, 0, aux, 3, 5, 10 + i, 0);
		for (size_t k = 0; k < n; k++)
			ring[(head + k) & (SIZE - 1)] = rec[k];
		head += n;
	}
	assert_int_equal(jpb_pt_sb_next(ring, SIZE, &tail, head, tmp, sizeof(tmp),
				    &sb), 1);
	assert_int_equal(sb.aux_offset, 0);
	assert_int_equal(sb.time, 10);
	assert_int_equal(jpb_pt_sb_next(ring, SIZE, &tail, head, tmp, sizeof(tmp),
				    &sb), 1);
	assert_int_equal(sb.aux_offset, 4096);
	assert_int_equal(sb.time, 11);
	assert_int_equal(tail, head);
	assert_int_equal(jpb_pt_sb_next(ring, SIZE, &tail, head, tmp, sizeof(tmp),
				    &sb), 0);
	/* a zero-size header would loop forever: refused */
	memset(ring, 0, sizeof(ring));
	tail = 0;
	assert_int_equal(jpb_pt_sb_next(ring, SIZE, &tail, 64, tmp, sizeof(tmp), &sb),
			 jpb_pt_err_overflow);
	assert_int_equal(tail, 0);
}

static void aux_flags_and_loss(void **state)
{
	(void)state;
	struct jpb_pt_stats a = { 0 }, b = { 0 }, sum = { 0 };
	jpb_pt_stats_aux(&a, 4096, 0);
	jpb_pt_stats_aux(&a, 4096, JPB_PT_AUX_TRUNCATED);
	jpb_pt_stats_aux(&a, 0, JPB_PT_AUX_TRUNCATED | JPB_PT_AUX_COLLISION);
	jpb_pt_stats_aux(&b, 100, JPB_PT_AUX_PARTIAL | JPB_PT_AUX_OVERWRITE);
	a.lost = 3;
	b.lost = 4;
	a.bytes = 8192;
	b.bytes = 100;
	b.aux_gap_bytes = 50;
	jpb_pt_stats_add(&sum, &a);
	jpb_pt_stats_add(&sum, &b);
	assert_int_equal(sum.aux_records, 4);
	assert_int_equal(sum.truncated, 2);
	assert_int_equal(sum.collision, 1);
	assert_int_equal(sum.partial, 1);
	assert_int_equal(sum.overwrite, 1);
	assert_int_equal(sum.lost, 7);
	assert_int_equal(sum.bytes, 8292);
	assert_int_equal(sum.aux_gap_bytes, 50);
}

/* Snapshot mode: the PMU writes around a ring; the head is an offset. */
static void snapshot_extract(void **state)
{
	(void)state;
	enum { SIZE = 8192 };
	uint8_t *ring = calloc(1, SIZE), out[SIZE];
	struct jpb_pt_span sp[2];
	assert_non_null(ring);

	/* Not yet wrapped: only [0, 3000) is trace. */
	pmu_write(ring, SIZE, 0, 3000);
	assert_false(jpb_pt_snapshot_wrapped(ring, SIZE, 3000));
	assert_int_equal(jpb_pt_snapshot_spans(SIZE, 3000, 0, 0, 4096, sp), 1);
	assert_int_equal(sp[0].off, 0);
	assert_int_equal(sp[0].len, 3000);
	/* want less than there is: the newest bytes */
	assert_int_equal(jpb_pt_snapshot_spans(SIZE, 3000, 0, 0, 1000, sp), 1);
	assert_int_equal(sp[0].off, 2000);
	assert_int_equal(sp[0].len, 1000);
	/* a second snapshot only takes what is new since the first */
	pmu_write(ring, SIZE, 3000, 5000);
	assert_int_equal(jpb_pt_snapshot_spans(SIZE, 5000, 3000, 0, 4096, sp), 1);
	assert_int_equal(sp[0].off, 3000);
	assert_int_equal(sp[0].len, 2000);

	/* Wrapped: stream position 20000 → head offset 20000 % 8192 = 3616. */
	pmu_write(ring, SIZE, 5000, 20000);
	uint64_t head = 20000 % SIZE;
	assert_true(jpb_pt_snapshot_wrapped(ring, SIZE, head));
	int n = jpb_pt_snapshot_spans(SIZE, head, 5000, 1, 6000, sp);
	assert_int_equal(n, 2);
	size_t got = 0;
	for (int i = 0; i < n; i++) {
		memcpy(out + got, ring + sp[i].off, sp[i].len);
		got += sp[i].len;
	}
	assert_int_equal(got, 6000);
	for (size_t k = 0; k < got; k++)
		assert_int_equal(out[k], pat(20000 - 6000 + k));
	/* wanting all of it gives the whole ring, oldest first */
	n = jpb_pt_snapshot_spans(SIZE, head, 0, 1, SIZE, sp);
	assert_int_equal(n, 2);
	assert_int_equal(sp[0].off, head);
	assert_int_equal(sp[0].len, SIZE - head);
	assert_int_equal(sp[1].len, head);

	/* The head within the last 4 KiB, before the first wrap: the bytes
	 * after it are still zero, so not wrapped (perf's check would say
	 * wrapped and hand out zeros). */
	memset(ring, 0, SIZE);
	pmu_write(ring, SIZE, 0, SIZE - 100);
	assert_false(jpb_pt_snapshot_wrapped(ring, SIZE, SIZE - 100));
	pmu_write(ring, SIZE, SIZE - 100, SIZE + 10);
	assert_true(jpb_pt_snapshot_wrapped(ring, SIZE, 10));
	assert_int_equal(jpb_pt_snapshot_spans(SIZE, 0, 0, 0, 100, sp), 0);
	assert_int_equal(jpb_pt_snapshot_spans(6000, 0, 0, 0, 100, sp), jpb_pt_err_invalid);
	free(ring);
}

static void psb_search(void **state)
{
	(void)state;
	uint8_t buf[100];
	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < 16; i += 2) {
		buf[37 + i] = 0x02;
		buf[38 + i] = 0x82;
	}
	buf[10] = 0x02; /* a lone 0x02 (e.g. a TNT) is no PSB */
	buf[11] = 0x82;
	assert_int_equal(jpb_pt_find_psb(buf, sizeof(buf), 0), 37);
	assert_int_equal(jpb_pt_find_psb(buf, sizeof(buf), 38), -1);
	assert_int_equal(jpb_pt_find_psb(buf, 52, 0), -1); /* cut short */
	assert_int_equal(jpb_pt_find_psb(buf, 53, 0), 37);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spans),
		cmocka_unit_test(copy_rounds),
		cmocka_unit_test(sideband_parse),
		cmocka_unit_test(sideband_ring),
		cmocka_unit_test(aux_flags_and_loss),
		cmocka_unit_test(snapshot_extract),
		cmocka_unit_test(psb_search),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
