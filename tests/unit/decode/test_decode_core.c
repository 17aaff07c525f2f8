// SPDX-License-Identifier: MIT
/* The decoder's building blocks: the packed event codec, TSC <-> monotonic
 * conversion, placing context switches in tracing gaps, and the
 * classification lookups (dispatch entries, codelets, pc maps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode/decode_int.h"
#include "records_decoded.h"

static void test_event_roundtrip(void **state)
{
	(void)state;
	struct jpb_decoded_event in[4], out;
	memset(in, 0, sizeof(in));
	in[0] = (struct jpb_decoded_event){ .kind = JPB_DEV_INTERP, .opcode = 0xb6,
					    .tos = 9, .tsc = 1000 };
	in[1] = (struct jpb_decoded_event){ .kind = JPB_DEV_COMPILED, .tsc = 990,
					    .ip = 0x7f3a10400123, .nframes = 2 };
	in[1].frames[0] = (struct jpb_decoded_frame){ 0x7f0000001234, 17 };
	in[1].frames[1] = (struct jpb_decoded_frame){ 42, -1 };
	in[2] = (struct jpb_decoded_event){ .kind = JPB_DEV_TRANSITION,
					    .what = JPB_TR_STUB, .tsc = 5000,
					    .ip = 0x7f3a10100000, .arg = 3 };
	in[3] = (struct jpb_decoded_event){ .kind = JPB_DEV_GAP,
					    .what = JPB_GAP_OVERFLOW, .tsc = 6000,
					    .end_tsc = 9000, .ip = 77, .arg = 5 };
	struct jpb_buf b = { 0 };
	uint64_t prev = 1000;
	for (int i = 0; i < 4; i++)
		assert_int_equal(jpb_decoded_event_put(&b, &in[i], &prev), 0);
	struct jpb_cur c = jpb_cur_init(b.data, b.len);
	prev = 1000;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(jpb_decoded_event_get(&c, &out, &prev), 0);
		assert_int_equal(out.kind, in[i].kind);
		assert_int_equal(out.tsc, in[i].tsc); /* 990 < 1000: negative delta */
		assert_int_equal(out.ip, in[i].ip);
		assert_int_equal(out.nframes, in[i].nframes);
	}
	assert_int_equal(jpb_decoded_event_get(&c, &out, &prev), jpb_err_eos);
	/* every truncation of the encoding is corrupt or a clean end, never
	 * a read past the end (ASan) */
	for (size_t n = 0; n < b.len; n++) {
		struct jpb_cur t = jpb_cur_init(b.data, n);
		uint64_t p = 1000;
		int rc;
		while ((rc = jpb_decoded_event_get(&t, &out, &p)) == 0)
			;
		assert_true(rc == jpb_err_eos || rc == jpb_err_corrupt);
	}
	jpb_buf_fini(&b);
}

static void test_event_frames_decoded(void **state)
{
	(void)state;
	struct jpb_decoded_event e = { .kind = JPB_DEV_COMPILED, .tsc = 7,
				       .ip = 9, .nframes = 2 }, out;
	e.frames[0] = (struct jpb_decoded_frame){ 5, 3 };
	e.frames[1] = (struct jpb_decoded_frame){ 6, 11 };
	struct jpb_buf b = { 0 };
	uint64_t prev = 0;
	assert_int_equal(jpb_decoded_event_put(&b, &e, &prev), 0);
	struct jpb_cur c = jpb_cur_init(b.data, b.len);
	prev = 0;
	assert_int_equal(jpb_decoded_event_get(&c, &out, &prev), 0);
	assert_int_equal(out.frames[0].method_id, 5);
	assert_int_equal(out.frames[0].bci, 3);
	assert_int_equal(out.frames[1].method_id, 6);
	assert_int_equal(out.frames[1].bci, 11);
	/* a bad kind is corrupt */
	b.data[0] = 99;
	c = jpb_cur_init(b.data, b.len);
	assert_int_equal(jpb_decoded_event_get(&c, &out, &prev), jpb_err_corrupt);
	jpb_buf_fini(&b);
}

static void test_clock(void **state)
{
	(void)state;
	uint64_t tsc[] = { 2000, 4000, 8000 }, ns[] = { 1000, 2000, 3000 };
	struct jpd_clock c = { tsc, ns, 3 };
	assert_int_equal(jpd_ns_to_tsc(&c, 1500), 3000);
	assert_int_equal(jpd_ns_to_tsc(&c, 2500), 6000);
	assert_int_equal(jpd_ns_to_tsc(&c, 3500), 10000); /* extrapolated */
	assert_int_equal(jpd_tsc_to_ns(&c, 6000), 2500);
	assert_int_equal(jpd_tsc_to_ns(&c, 1000), 500);
	struct jpd_clock none = { NULL, NULL, 0 };
	assert_int_equal(jpd_ns_to_tsc(&none, 77), 77);
	/* one pair left (the other damaged): the TSC's own rate, not 1 */
	struct jpd_clock one = { tsc + 1, ns + 1, 1, 2.0 };
	assert_int_equal(jpd_ns_to_tsc(&one, 3000), 6000);
	assert_int_equal(jpd_ns_to_tsc(&one, 1500), 3000);
	assert_int_equal(jpd_tsc_to_ns(&one, 8000), 4000);
	assert_int_equal(jpd_tsc_to_ns(&one, 0), 0);
	one.tsc_per_ns = 0; /* rate not known */
	assert_int_equal(jpd_ns_to_tsc(&one, 3000), 5000);
}

static void test_switch_placement(void **state)
{
	(void)state;
	/* gaps [100,200] [500,600] [900,950] */
	uint64_t dis[] = { 100, 500, 900 }, en[] = { 200, 600, 950 };
	uint8_t async[] = { 1, 1, 1 };
	struct jpd_switch sw[] = {
		{ .tsc = 150, .prev_tid = 0, .next_tid = 7 },  /* inside gap 0 */
		{ .tsc = 610, .prev_tid = 7, .next_tid = 8 },  /* jitter past gap 1 */
		{ .tsc = 750, .prev_tid = 8, .next_tid = 0 },  /* tie 1|2: leaving */
		{ .tsc = 750, .prev_tid = 0, .next_tid = 9 },  /* order kept */
	};
	jpd_sched_place(sw, 4, dis, en, async, 3, 1000);
	assert_int_equal(sw[0].apply_tsc, 200);
	assert_int_equal(sw[1].apply_tsc, 600);
	assert_int_equal(sw[2].apply_tsc, 950); /* later gap for a leaving task */
	assert_int_equal(sw[3].apply_tsc, 950); /* never before its predecessor */
	struct jpd_switch in = { .tsc = 750, .prev_tid = 0, .next_tid = 9 };
	jpd_sched_place(&in, 1, dis, en, async, 3, 1000);
	assert_int_equal(in.apply_tsc, 600); /* earlier gap for an arriving one */
	/* a preempted task leaves only where an interrupt could strike: the
	 * nearer gap [500,600] ended in a branch to untraced code */
	uint8_t sync_mid[] = { 1, 0, 1 };
	struct jpd_switch pre = { .tsc = 590, .prev_tid = 7, .next_tid = 8,
				  .preempt = 1 };
	jpd_sched_place(&pre, 1, dis, en, sync_mid, 3, 1000);
	assert_int_equal(pre.apply_tsc, 950);
	struct jpd_switch blk = { .tsc = 590, .prev_tid = 7, .next_tid = 8 };
	jpd_sched_place(&blk, 1, dis, en, sync_mid, 3, 1000);
	assert_int_equal(blk.apply_tsc, 600); /* blocking may be in the runtime */
	/* no interrupt-like gap within the window: the nearest gap after all */
	jpd_sched_place(&pre, 1, dis, en, sync_mid, 3, 100);
	assert_int_equal(pre.apply_tsc, 600);
}

/* A task that leaves while the trace is lost and is back before it
 * resumes: it comes back in the overflow it left in, named by the last
 * time before it, although its return is stamped long after that, nearer
 * the runtime call that follows; marked late if it ran on another CPU
 * meanwhile; not put there if it came back after the trace resumed. */
static void test_switch_in_overflow(void **state)
{
	(void)state;
	/* overflow at 100, runtime call [900,950], interrupt [1500,1600] */
	uint64_t dis[] = { 100, 900, 1500 }, en[] = { 100, 950, 1600 };
	uint8_t async[] = { JPD_GAP_OVERFLOW, 0, 1 };
	struct jpd_switch sw0[2], sw1[1] = { { .tsc = 400, .prev_tid = 0, .next_tid = 9 } };
	struct jpd_switch *sw[] = { sw0, sw1 };
	size_t nsw[] = { 2, 1 };
	struct jpd_sched sc = { .sw = sw, .nsw = nsw, .ncpus = 2 };
	uint64_t wake[] = { 700, 1000, 700 }, want[] = { 100, 950, 100 };
	for (int k = 0; k < 3; k++) {
		sw0[0] = (struct jpd_switch){ .tsc = 110, .prev_tid = 7, .next_tid = 0 };
		sw0[1] = (struct jpd_switch){ .tsc = wake[k], .prev_tid = 0, .next_tid = 7 };
		sw1[0].next_tid = k == 2 ? 7 : 9; /* ran on CPU 1 at 400 */
		jpd_sched_place(sw0, 2, dis, en, async, 3, 50);
		assert_int_equal(sw0[0].apply_tsc, 100);
		assert_int_equal(sw0[1].apply_tsc, 950);
		jpd_sched_overflow(&sc, 0, dis, en, async, 3);
		assert_int_equal(sw0[0].apply_tsc, 100);
		assert_int_equal(sw0[1].apply_tsc, want[k]);
		assert_int_equal(sw0[1].late, k == 2);
		assert_int_equal(sw0[0].late, 0);
	}
}

static void test_lookups(void **state)
{
	(void)state;
	struct jpd_dispatch d[] = { { 0x100, 1, 9 }, { 0x101, 1, 4 }, { 0x180, 2, 9 } };
	struct jpd_codelet cl[] = { { 0x80, 0x100, -1, 0, JPB_TR_METHOD_ENTRY },
				    { 0x100, 0x180, 1, 1, 0 },
				    { 0x180, 0x1c0, 2, 2, 0 } };
	struct jpd_image im = { 0 };
	im.dispatch = d;
	im.ndispatch = 3;
	im.codelets = cl;
	im.ncodelets = 3;
	assert_int_equal(jpd_image_hash_dispatch(&im), 0);
	for (size_t i = 0; i < 3; i++)
		assert_ptr_equal(jpd_find_dispatch(&im, d[i].addr), &d[i]);
	assert_non_null(jpd_find_dispatch(&im, 0x101));
	assert_int_equal(jpd_find_dispatch(&im, 0x101)->tos, 4);
	assert_null(jpd_find_dispatch(&im, 0x102));
	assert_null(jpd_find_dispatch(&im, 0x10));
	assert_int_equal(jpd_find_codelet(&im, 0x80)->index, 0);
	assert_int_equal(jpd_find_codelet(&im, 0x17f)->index, 1);
	assert_null(jpd_find_codelet(&im, 0x1c0));
	assert_null(jpd_find_codelet(&im, 0x7f));
	struct jpd_pcentry pcs[] = { { 0x10, 0, 1 }, { 0x14, 1, 1 }, { 0x20, 2, 2 } };
	struct jpd_nmethod nm = { .pcs = pcs, .npcs = 3 };
	assert_int_equal(jpd_pc_lower(&nm, 0x10), 0);
	assert_int_equal(jpd_pc_lower(&nm, 0x11), 1);
	assert_int_equal(jpd_pc_lower(&nm, 0x20), 2);
	assert_int_equal(jpd_pc_lower(&nm, 0x21), 3);
	free(im.dhash);
}

/* The nmethod a decoder runs at an ip: the latest it mapped holding it
 * (code reused over time overlaps; a long method's start lies far back). */
static void test_find_nmethod(void **state)
{
	(void)state;
	struct jpd_nmethod nm[] = { { .begin = 0x1000, .end = 0x1400 },
				    { .begin = 0x1400, .end = 0x1480 },
				    { .begin = 0x1000, .end = 0x1100 }, /* over nm[0] */
				    { .begin = 0x2000, .end = 0x2010 } };
	struct jpd_image im = { .nm = nm, .nnm = 4 };
	assert_int_equal(jpd_image_index_nmethods(&im), 0);
	assert_ptr_equal(jpd_find_nmethod(&im, 0x1050, 4), &nm[2]);
	assert_ptr_equal(jpd_find_nmethod(&im, 0x1050, 2), &nm[0]);
	assert_ptr_equal(jpd_find_nmethod(&im, 0x1200, 4), &nm[0]);
	assert_ptr_equal(jpd_find_nmethod(&im, 0x13ff, 4), &nm[0]);
	assert_ptr_equal(jpd_find_nmethod(&im, 0x1420, 4), &nm[1]);
	assert_null(jpd_find_nmethod(&im, 0x1480, 4));
	assert_null(jpd_find_nmethod(&im, 0x2005, 3)); /* not mapped yet */
	assert_ptr_equal(jpd_find_nmethod(&im, 0x2005, 4), &nm[3]);
	assert_null(jpd_find_nmethod(&im, 0xfff, 4));
	free(im.nm_by_begin);
}

/* The decoder encodes each pc's compiled-event tail once and copies it:
 * the bytes must be those jpb_decoded_event_put writes. */
static void test_event_tail(void **state)
{
	(void)state;
	struct jpb_decoded_event e = { .kind = JPB_DEV_COMPILED, .tsc = 5000,
				       .ip = 0x7f3a10400123, .nframes = 2 };
	e.frames[0] = (struct jpb_decoded_frame){ 0x7f0000001234, 17 };
	e.frames[1] = (struct jpb_decoded_frame){ 42, -1 };
	struct jpb_buf a = { 0 }, b = { 0 }, tail = { 0 };
	uint64_t pa = 4000, pb = 4000;
	assert_int_equal(jpb_decoded_event_put(&a, &e, &pa), 0);
	assert_int_equal(jpb_decoded_event_tail(&tail, &e), 0);
	assert_int_equal(jpb_decoded_event_put_tail(&b, e.kind, e.tsc, &pb, tail.data,
						    tail.len), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	assert_int_equal(pa, pb);
	jpb_buf_fini(&a);
	jpb_buf_fini(&b);
	jpb_buf_fini(&tail);
}

/* IP continuity with a jittered clock: thread B stopped at 0xb1 on CPU 1;
 * its arrival on CPU 0 is stamped 85 ticks late, nearest to a gap where
 * the trace resumes at 0xb2 (the same thread after an interrupt), and
 * moves to the gap that resumes at 0xb1.  A fault's gap (0xa1 -> 0xf0)
 * changes the IP too, but not to B's. */
static void test_continuity(void **state)
{
	(void)state;
	uint32_t tids[] = { 1, 2 };
	struct jpd_ctx ctx = { .window = 10 };
	ctx.sched.tids = tids;
	ctx.sched.ntids = 2;
	uint64_t dis0[] = { 0, 100, 200, 300, 400 },
		 en0[] = { 0, 110, 210, 310, UINT64_MAX - 1 },
		 dip0[] = { 0, 0xa1, 0xa2, 0xb2, 0xb3 },
		 eip0[] = { 0, 0xf0, 0xb1, 0xb2, 0 };
	uint64_t dis1[] = { 0, 50 }, en1[] = { 0, UINT64_MAX - 1 },
		 dip1[] = { 0, 0xb1 }, eip1[] = { 0, 0 };
	uint8_t async0[] = { 1, 1, 1, 1, 1 }, async1[] = { 1, 1 };
	struct jpd_switch sw0[] = { { .tsc = 0, .next_tid = 1 },
				    { .tsc = 290, .prev_tid = 1, .next_tid = 2, .preempt = 1 },
				    { .tsc = 405, .prev_tid = 2 } };
	struct jpd_switch sw1[] = { { .tsc = 0, .next_tid = 2 },
				    { .tsc = 55, .prev_tid = 2 } };
	struct jpd_stream st[2] = {
		{ .sw = sw0, .nsw = 3, .dis = dis0, .en = en0, .dis_ip = dip0,
		  .en_ip = eip0, .async = async0, .ngaps = 5 },
		{ .sw = sw1, .nsw = 2, .dis = dis1, .en = en1, .dis_ip = dip1,
		  .en_ip = eip1, .async = async1, .ngaps = 2 },
	};
	for (int k = 0; k < 2; k++)
		jpd_sched_place(st[k].sw, st[k].nsw, st[k].dis, st[k].en, st[k].async,
				st[k].ngaps, ctx.window);
	assert_int_equal(sw0[1].apply_tsc, 310); /* nearest: the wrong gap */
	jpd_continuity(&ctx, st, 2);
	assert_int_equal(sw0[1].apply_tsc, 210); /* where B resumes */
	assert_int_equal(sw0[0].apply_tsc, 0);
	assert_int_equal(sw0[2].apply_tsc, UINT64_MAX - 1);
	/* a right clock (every stamp inside a gap): nothing moves */
	sw0[1].tsc = 205;
	jpd_sched_place(sw0, 3, dis0, en0, async0, 5, ctx.window);
	assert_int_equal(sw0[1].apply_tsc, 210);
	eip0[2] = 0xc0; /* and the IPs are not consulted */
	jpd_continuity(&ctx, st, 2);
	assert_int_equal(sw0[1].apply_tsc, 210);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_roundtrip),
		cmocka_unit_test(test_event_frames_decoded),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_switch_placement),
		cmocka_unit_test(test_switch_in_overflow),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_find_nmethod),
		cmocka_unit_test(test_event_tail),
		cmocka_unit_test(test_continuity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
