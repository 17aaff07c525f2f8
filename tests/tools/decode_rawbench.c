// SPDX-License-Identifier: MIT
/*
 * decode_rawbench BUNDLE: the floor for `jpbpf decode` (docs/DECODER.md,
 * "Throughput"): libipt's block decoder alone over the bundle's pt streams
 * and the same image (sections loaded by the decoder's own image loader),
 * draining events, no classification and no output.  Not a test; build:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Iuser -Iuser/bundle \
 *      tests/integration/decode_rawbench.c build/libjpbpf.a \
 *      build/libjpbpf-bundle.a -lipt -ljansson -lz -lpthread -o rawbench
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "decode/decode_int.h"
#include "records_pt.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int gather(struct jpb_bundle *b, const char *name, struct jpb_buf *buf)
{
	struct jpb_reader *r;
	if (jpb_reader_open(b, name, &r))
		return -1;
	struct jpb_record rec;
	while (!jpb_reader_next(r, &rec)) {
		struct jpb_rec_pt_aux_data d;
		if (rec.type == JPB_REC_PT_AUX_DATA &&
		    !jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &d))
			jpb_buf_put(buf, d.data.ptr, d.data.len);
	}
	jpb_reader_free(r);
	return 0;
}

static uint64_t blocks_of(const struct jpd_image *im, struct jpb_buf *buf)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = buf->data;
	cfg.end = buf->data + buf->len;
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	struct pt_block_decoder *d = pt_blk_alloc_decoder(&cfg);
	if (!d)
		return 0;
	struct pt_image *img = pt_blk_get_image(d);
	for (size_t k = 0; k < im->nstatic; k++)
		pt_image_add_cached(img, im->iscache, im->static_isids[k], NULL);
	for (size_t k = 0; k < im->nnm; k++)
		if (im->nm[k].isid > 0)
			pt_image_add_cached(img, im->iscache, im->nm[k].isid, NULL);
	uint64_t blocks = 0;
	int st;
	while ((st = pt_blk_sync_forward(d)) >= 0) {
		for (;;) {
			while (st > 0 && (st & pts_event_pending)) {
				struct pt_event ev;
				st = pt_blk_event(d, &ev, sizeof(ev));
			}
			if (st < 0)
				break;
			struct pt_block blk;
			st = pt_blk_next(d, &blk, sizeof(blk));
			blocks += blk.ninsn > 0;
			if (st < 0)
				break;
		}
		if (st == -pte_eos)
			break;
	}
	pt_blk_free_decoder(d);
	return blocks;
}

int main(int argc, char **argv)
{
	struct jpb_bundle *b;
	if (argc != 2 || jpb_bundle_open(&b, argv[1])) {
		fprintf(stderr, "usage: decode_rawbench BUNDLE\n");
		return 2;
	}
	static struct jpd_image im;
	struct jpd_clock clk = { 0 };
	char err[512];
	snprintf(im.codefile, sizeof(im.codefile), "/tmp/rawbench-%d.code", (int)getpid());
	if (jpd_image_load(&im, b, &clk, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	const char *const *names;
	size_t n;
	jpb_bundle_list_streams(b, &names, &n);
	double secs = 0;
	uint64_t bytes = 0, blocks = 0;
	for (size_t i = 0; i < n; i++) {
		struct jpb_buf buf = { 0 };
		if (strncmp(names[i], "pt/", 3) || gather(b, names[i], &buf))
			continue;
		double t0 = now();
		blocks += blocks_of(&im, &buf);
		secs += now() - t0;
		bytes += buf.len;
		jpb_buf_fini(&buf);
	}
	printf("libipt raw block decoding: %.2f MB in %.3f s = %.1f MB/s, %llu blocks\n",
	       (double)bytes / 1e6, secs, secs > 0 ? (double)bytes / 1e6 / secs : 0,
	       (unsigned long long)blocks);
	unlink(im.codefile);
	jpd_image_fini(&im);
	jpb_bundle_free(b);
	return 0;
}
