// SPDX-License-Identifier: MIT
/*
 * The image's pre-encoded compiled events (image.c): the decoder writes a
 * block's compiled events at pcs k..m-1 as one event head and one copy of
 * tails[tail_off[k], tail_off[m] - 2).  Those bytes must be exactly what
 * jpb_decoded_event_put writes for the same events one by one at one time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bundle.h"
#include "decode/decode_int.h"
#include "records.h"
#include "records_jvm.h"

struct pc {
	uint64_t pc;
	uint32_t nframes;
	uint64_t method[3];
	int32_t bci[3];
};

/* Out of order, one without frames, one inlined three deep, bcis that
 * zigzag (negative) and methods that need long LEB128s. */
static const struct pc pcs[] = {
	{ 0x7f0000001040, 1, { 0x7f3a10400123 }, { 17 } },
	{ 0x7f0000001000, 2, { 42, 0x7f3a10400123 }, { 0, 300 } },
	{ 0x7f0000001010, 0, { 0 }, { 0 } },
	{ 0x7f0000001031, 3, { 1, 2, 3 }, { -1, 5, 70000 } },
};
#define NPCS (sizeof(pcs) / sizeof(pcs[0]))

static void put_pcmap(struct jpb_buf *m)
{
	for (size_t i = 0; i < NPCS; i++) {
		assert_int_equal(jpb_buf_u64(m, pcs[i].pc), 0);
		assert_int_equal(jpb_buf_u32(m, pcs[i].nframes), 0);
		for (uint32_t f = 0; f < pcs[i].nframes; f++) {
			assert_int_equal(jpb_buf_u64(m, pcs[i].method[f]), 0);
			assert_int_equal(jpb_buf_u32(m, (uint32_t)pcs[i].bci[f]), 0);
		}
	}
}

static void write_jvm(const char *dir)
{
	struct jpb_bundle *b;
	struct jpb_writer *w;
	struct jpb_buf map = { 0 }, sc = { 0 };
	uint8_t code[0x80];
	memset(code, 0x90, sizeof(code));
	put_pcmap(&map);
	assert_int_equal(jpb_bundle_create(&b, dir), 0);
	assert_int_equal(jpb_writer_open(b, "jvm", &w), 0);
	struct jpb_rec_jvm_nmethod_load n = {
		.method_id = 0x7f3a10400123, .code_addr = 0x7f0000001000,
		.code_size = sizeof(code), .level = 4,
		.code = { code, sizeof(code) },
		.pcmap = { map.data, (uint32_t)map.len },
	};
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_JVM_NMETHOD_LOAD),
					    1000, &n, &sc), 0);
	assert_int_equal(jpb_writer_close(w), 0);
	jpb_bundle_free(b);
	jpb_buf_fini(&map);
	jpb_buf_fini(&sc);
}

/* The events of sorted pcs [k, m) at TSC, one by one. */
static void put_each(struct jpb_buf *out, const struct pc *const *sorted,
		     size_t k, size_t m, uint64_t tsc, uint64_t *prev)
{
	for (size_t i = k; i < m; i++) {
		struct jpb_decoded_event e = { .kind = JPB_DEV_COMPILED, .tsc = tsc,
					       .ip = sorted[i]->pc,
					       .nframes = sorted[i]->nframes };
		for (uint32_t f = 0; f < e.nframes; f++)
			e.frames[f] = (struct jpb_decoded_frame){ sorted[i]->method[f],
								  sorted[i]->bci[f] };
		assert_int_equal(jpb_decoded_event_put(out, &e, prev), 0);
	}
}

static int by_pc(const void *a, const void *b)
{
	const struct pc *x = *(const struct pc *const *)a, *y = *(const struct pc *const *)b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static void test_runs_equal_events(void **state)
{
	(void)state;
	char dir[] = "/tmp/jpbpf-tails-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char bdir[sizeof(dir) + 8];
	snprintf(bdir, sizeof(bdir), "%s/b", dir);
	write_jvm(bdir);

	struct jpb_bundle *b;
	assert_int_equal(jpb_bundle_open(&b, bdir), 0);
	static struct jpd_image im;
	memset(&im, 0, sizeof(im));
	snprintf(im.codefile, sizeof(im.codefile), "%s/code", dir);
	struct jpd_clock clk = { 0 };
	char err[256] = "";
	assert_int_equal(jpd_image_load(&im, b, &clk, err, sizeof(err)), 0);
	assert_int_equal(im.nnm, 1);
	const struct jpd_nmethod *nm = &im.nm[0];
	assert_int_equal(nm->npcs, NPCS);

	const struct pc *sorted[NPCS];
	for (size_t i = 0; i < NPCS; i++)
		sorted[i] = &pcs[i];
	qsort(sorted, NPCS, sizeof(sorted[0]), by_pc);

	/* Every run, at a time after an earlier event (a delta) and as a
	 * piece's first event (delta from 0). */
	for (size_t k = 0; k < NPCS; k++)
		for (size_t m = k + 1; m <= NPCS; m++)
			for (uint64_t before = 0; before <= 1; before++) {
				struct jpb_buf want = { 0 }, got = { 0 };
				uint64_t p1 = before ? 36699894000000 : 0, p2 = p1;
				uint64_t tsc = 36699894006736;
				put_each(&want, sorted, k, m, tsc, &p1);
				uint32_t a = nm->tail_off[k];
				assert_int_equal(jpb_decoded_event_put_tail(
							 &got, JPB_DEV_COMPILED, tsc, &p2,
							 nm->tails + a, nm->tail_off[m] - 2 - a),
						 0);
				assert_int_equal(got.len, want.len);
				assert_memory_equal(got.data, want.data, want.len);
				assert_true(p1 == p2);
				jpb_buf_fini(&want);
				jpb_buf_fini(&got);
			}

	jpd_image_fini(&im);
	jpb_bundle_free(b);
	char cmd[sizeof(dir) + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_equal_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
